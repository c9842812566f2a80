/* SPDX-License-Identifier: MIT */
/* Once per process (base/once.h): a pid key under one recursive lock. */
#include <pthread.h>
#include <unistd.h>

#include "base/once.h"

static pthread_mutex_t once_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

/* The child's only thread holds nothing: a lock taken by another parent thread
 * at the fork would never be released, so start with a fresh one. */
static void once_atfork_child(void)
{
	pthread_mutex_t fresh = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;

	once_lock = fresh;
}

static void once_register_atfork(void)
{
	pthread_atfork(NULL, NULL, once_atfork_child);
}

void bp_once_per_process(struct bp_once *o, void (*fn)(void *arg), void *arg)
{
	pid_t me;

	pthread_once(&atfork_once, once_register_atfork);
	pthread_mutex_lock(&once_lock);
	me = getpid();
	if (o->pid != me) {
		fn(arg);
		o->pid = me;
	}
	pthread_mutex_unlock(&once_lock);
}
