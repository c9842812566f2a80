/* SPDX-License-Identifier: MIT */
/*
 * Once per process: what the kernel and this process can do (the backends'
 * capability probes, the netdev family) is asked once and cached, but a fork
 * child asks again, because it may run with fewer privileges than its parent.
 * The base layer: includes nothing of ours.
 */
#ifndef BP_BASE_ONCE_H
#define BP_BASE_ONCE_H

#include <sys/types.h>

/* One cached result's key: the pid it was computed in (0 = never). Zero-initialise. */
struct bp_once {
	pid_t pid;
};

/*
 * bp_once_per_process - run fn(arg) unless it already ran for *o in this process.
 * Thread-safe: callers of every bp_once share one recursive lock, so fn may itself
 * call bp_once_per_process for another result, and a second caller waits until
 * the first one's fn returned. A fork child (or a raw clone: the pid is the key)
 * runs fn again, with a fresh lock in case a parent thread held it across fork.
 */
void bp_once_per_process(struct bp_once *o, void (*fn)(void *arg), void *arg);

#endif
