/* SPDX-License-Identifier: MIT */
/*
 * busypoll pingpong: what one look into the kernel costs on this machine
 * (contract in tools/pingpong/pingpong.h), so "why is timeout=0 not as fast as looping
 * inside the kernel, is it pure syscall overhead?" gets a number.
 *
 * A userspace spin (epoll:spin, uring:spin) pays one of these per look and sees a
 * packet only once a softirq somewhere has put it on the socket; the kernel's own
 * busy-poll loop (napi modes) pays none per look and runs the NAPI poll itself, on
 * the waiting CPU. The table prints these costs next to the rx wake-up component
 * of each mode, so the two effects can be told apart.
 *
 * Each figure is the median of several batches of back-to-back calls, on a thread
 * pinned where the client's loop runs (the cost depends on the CPU's mitigations
 * and frequency, which is why it is measured, not assumed).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <liburing.h>

#include "tools/common/values.h"
#include "tools/pingpong/pingpong.h"

#define BATCHES 7
#define CALLS 20000

struct calib_job {
	int cpu;
	struct pp_calib *c;
	int err;
	char msg[200];
};

/* median_ns - run fn(arg) CALLS times per batch; the median batch's ns per call. */
static double median_ns(void (*fn)(void *), void *arg)
{
	double per[BATCHES];

	fn(arg); /* warm the path and the caches once */
	for (int b = 0; b < BATCHES; b++) {
		uint64_t t0 = bp_now_ns();

		for (int i = 0; i < CALLS; i++)
			fn(arg);
		per[b] = (double)(bp_now_ns() - t0) / CALLS;
	}
	tool_sort_doubles(per, BATCHES);
	return per[BATCHES / 2];
}

static void call_getppid(void *arg)
{
	(void)arg;
	syscall(SYS_getppid); /* not getppid(): glibc might answer without the kernel */
}

static void call_epoll_wait0(void *arg)
{
	struct epoll_event ev;

	epoll_wait(*(int *)arg, &ev, 1, 0);
}

static void call_uring_enter(void *arg)
{
	io_uring_get_events(arg);
}

static void call_uring_nop(void *arg)
{
	struct io_uring *ring = arg;
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	struct io_uring_cqe *cqe;

	if (!sqe)
		return;
	io_uring_prep_nop(sqe);
	if (io_uring_submit_and_wait(ring, 1) >= 1 && io_uring_peek_cqe(ring, &cqe) == 0)
		io_uring_cqe_seen(ring, cqe);
}

static void *calib_thread(void *arg)
{
	struct calib_job *j = arg;
	struct pp_calib *c = j->c;
	struct epoll_event ev = { .events = EPOLLIN };
	struct io_uring ring;
	int ep = -1, sock = -1, ret;

	if (j->cpu >= 0 && (ret = bp_pin_thread(j->cpu)) != 0) {
		j->err = ret;
		snprintf(j->msg, sizeof(j->msg), "calibration: pin to CPU %d: %s", j->cpu, bp_last_error());
		return NULL;
	}
	c->syscall_ns = median_ns(call_getppid, NULL);

	/* An epoll instance watching one idle socket, as a loop with one conn has. */
	ep = epoll_create1(EPOLL_CLOEXEC);
	sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (ep < 0 || sock < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, sock, &ev) < 0) {
		j->err = -errno;
		snprintf(j->msg, sizeof(j->msg), "calibration: epoll set-up: %s", strerror(errno));
		goto out;
	}
	c->epoll_wait0_ns = median_ns(call_epoll_wait0, &ep);

	ret = io_uring_queue_init(8, &ring, 0);
	if (ret < 0) {
		j->err = ret;
		snprintf(j->msg, sizeof(j->msg), "calibration: io_uring_queue_init: %s", strerror(-ret));
		goto out;
	}
	c->uring_enter_ns = median_ns(call_uring_enter, &ring);
	c->uring_nop_ns = median_ns(call_uring_nop, &ring);
	io_uring_queue_exit(&ring);
	c->valid = true;
out:
	if (sock >= 0)
		close(sock);
	if (ep >= 0)
		close(ep);
	return NULL;
}

int pp_calibrate(int cpu, struct pp_calib *c, char *err, size_t errlen)
{
	struct calib_job j = { .cpu = cpu, .c = c };
	pthread_t tid;
	int ret;

	memset(c, 0, sizeof(*c));
	c->cpu = cpu;
	/* A thread of its own: pinning it leaves the caller's affinity alone. */
	ret = pthread_create(&tid, NULL, calib_thread, &j);
	if (ret) {
		snprintf(err, errlen, "calibration: pthread_create: %s", strerror(ret));
		return -ret;
	}
	pthread_join(tid, NULL);
	if (j.err) {
		snprintf(err, errlen, "%s", j.msg);
		c->valid = false;
		return j.err;
	}
	return 0;
}
