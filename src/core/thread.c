/* SPDX-License-Identifier: MIT */
/* Loop threads: each loop is created, run and destroyed on its own thread. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <busypoll/net.h>

#include "core/internal.h"

struct bp_loop_thread {
	pthread_t tid;
	struct bp_mode mode;
	int cpu;
	bp_loop_setup_fn setup;
	void *setup_arg;
	struct bp_loop *loop;
	/* start handshake */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool started;
	int start_err;
	char start_msg[256];
	/* end */
	bool join_requested;      /* under lock: bp_loop_thread_join was called */
	void (*teardown)(struct bp_loop *, void *);
	void *teardown_arg;
	int run_err;
};

static void thread_report_start(struct bp_loop_thread *t, int err)
{
	pthread_mutex_lock(&t->lock);
	t->start_err = err;
	if (err)
		snprintf(t->start_msg, sizeof(t->start_msg), "%s", bp_last_error());
	t->started = true;
	pthread_cond_signal(&t->cond);
	pthread_mutex_unlock(&t->lock);
}

static void *loop_thread_main(void *arg)
{
	struct bp_loop_thread *t = arg;
	int err = 0;

	if (t->cpu >= 0)
		err = bp_pin_thread(t->cpu);
	if (!err)
		err = bp_loop_create(&t->loop, &t->mode);
	if (!err && t->setup) {
		err = t->setup(t->loop, t->setup_arg);
		if (err) {
			bp_loop_destroy(t->loop);
			t->loop = NULL;
		}
	}
	thread_report_start(t, err);
	if (err)
		return NULL;
	t->run_err = bp_loop_run(t->loop);
	/*
	 * A run that failed (the backend's wait) ends before anyone asked it to: the loop
	 * must live on until the join, which stops it, and other threads may still post
	 * to it meanwhile. Freeing it here was a use after free in the join.
	 */
	pthread_mutex_lock(&t->lock);
	while (!t->join_requested)
		pthread_cond_wait(&t->cond, &t->lock);
	pthread_mutex_unlock(&t->lock);
	if (t->teardown)
		t->teardown(t->loop, t->teardown_arg);
	bp_loop_destroy(t->loop);
	return NULL;
}

int bp_loop_thread_start(struct bp_loop_thread **tp, const struct bp_mode *mode, int cpu,
			 bp_loop_setup_fn setup, void *arg)
{
	struct bp_loop_thread *t = calloc(1, sizeof(*t));
	int err;

	if (!t)
		return bp_err_set(-ENOMEM, "loop thread: out of memory");
	t->mode = *mode;
	t->cpu = cpu;
	t->setup = setup;
	t->setup_arg = arg;
	pthread_mutex_init(&t->lock, NULL);
	pthread_cond_init(&t->cond, NULL);
	err = pthread_create(&t->tid, NULL, loop_thread_main, t);
	if (err) {
		free(t);
		return bp_err_sys("pthread_create", -err);
	}
	pthread_mutex_lock(&t->lock);
	while (!t->started)
		pthread_cond_wait(&t->cond, &t->lock);
	pthread_mutex_unlock(&t->lock);
	if (t->start_err) {
		err = t->start_err;
		pthread_join(t->tid, NULL);
		bp_err_set(err, "%s", t->start_msg);
		pthread_mutex_destroy(&t->lock);
		pthread_cond_destroy(&t->cond);
		free(t);
		return err;
	}
	*tp = t;
	return 0;
}

struct bp_loop *bp_loop_thread_loop(const struct bp_loop_thread *t)
{
	return t->loop;
}

int bp_loop_thread_join(struct bp_loop_thread *t, void (*teardown)(struct bp_loop *, void *),
			void *arg)
{
	int ret;

	/* Set before the stop: the thread reads them only after bp_loop_run returns. */
	t->teardown = teardown;
	t->teardown_arg = arg;
	atomic_thread_fence(memory_order_release);
	bp_loop_stop(t->loop);
	pthread_mutex_lock(&t->lock);
	t->join_requested = true;
	pthread_cond_signal(&t->cond);
	pthread_mutex_unlock(&t->lock);
	pthread_join(t->tid, NULL);
	ret = t->run_err;
	pthread_mutex_destroy(&t->lock);
	pthread_cond_destroy(&t->cond);
	free(t);
	return ret;
}
