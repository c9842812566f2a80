/* SPDX-License-Identifier: MIT */
/*
 * Asynchronous storage I/O (contract in include/busypoll/aio.h).
 *
 * Two ways to the kernel, one bookkeeping:
 *   - a backend with ->aio_submit (uring) takes each I/O on the loop's own ring and
 *     hands its completion back as a BP_EV_AIO event, which the dispatch gives to
 *     bp_aio_complete;
 *   - otherwise (epoll) the loop gets a storage ring of its own, made at the first
 *     submission: a plain io_uring whose SQEs are submitted once per iteration just
 *     before the wait (bp_aio_before_wait), with an eventfd registered on it that
 *     the backend watches like any fd (BP_IO_AIO), so a completion wakes a loop
 *     asleep in epoll_wait. Its CQ is looked at after every wait (bp_aio_collect),
 *     whether or not the eventfd said so: a completion posted by task work while
 *     the loop slept is there as soon as the wait returns.
 *
 * The queues (one per device per loop) bound what is in flight; what is beyond the
 * depth waits in a FIFO and starts as earlier I/O completes, before the completed
 * one's callback runs, so a callback that submits again goes behind the waiters.
 * Completed I/O collects on the loop's done list as it is reaped or dispatched, and
 * the callbacks run after the iteration's socket events (bp_aio_run_done), then each
 * queue's batch hook once. The SQE itself is backends/aio_sqe.c's, for both rings.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <liburing.h>

#include "core/internal.h"

#define RING_SQ_ENTRIES 256
#define RING_CQ_ENTRIES 4096
#define FINI_WAIT_MS 30000      /* bp_loop_destroy waits at most this for the kernel's I/O */

struct bp_aio_ring {
	struct io_uring ring;
	struct bp_io io;        /* the eventfd registered on the ring, watched by the backend */
	unsigned queued;        /* SQEs prepared and not yet submitted */
};

static bool is_transfer(const struct bp_aio *a)
{
	return a->op == BP_AIO_READ || a->op == BP_AIO_WRITE;
}

/* ---- the loop's state ---- */

static struct bp_aio_loop *loop_state(struct bp_loop *loop)
{
	if (!loop->aio)
		loop->aio = calloc(1, sizeof(*loop->aio));
	return loop->aio;
}

/* ---- the epoll storage ring ---- */

static void ring_free(struct bp_loop *loop, struct bp_aio_ring *r)
{
	if (r->io.fd >= 0) {
		loop->be->del(&loop->bl, &r->io);
		close(r->io.fd);
		loop->bl.ctr.syscalls++;
	}
	io_uring_queue_exit(&r->ring);
	free(r);
}

/* ring_create - the storage ring and its eventfd, watched by the loop's backend. */
static int ring_create(struct bp_loop *loop, struct bp_aio_loop *s)
{
	struct io_uring_params p;
	struct bp_aio_ring *r = calloc(1, sizeof(*r));
	int ret;

	if (!r)
		return bp_err_set(-ENOMEM, "storage I/O: out of memory");
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_CQSIZE;
	p.cq_entries = RING_CQ_ENTRIES;
	loop->bl.ctr.syscalls++;
	ret = io_uring_queue_init_params(RING_SQ_ENTRIES, &r->ring, &p);
	if (ret < 0) {
		free(r);
		if (ret == -EPERM)
			return bp_err_set(ret, "storage I/O: io_uring_setup: not permitted "
					  "(kernel.io_uring_disabled?); storage I/O needs io_uring");
		return bp_err_sys("io_uring_setup (storage ring)", ret);
	}
	r->io.kind = BP_IO_AIO;
	r->io.fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	loop->bl.ctr.syscalls++;
	if (r->io.fd < 0) {
		ret = bp_err_sys("eventfd (storage ring)", -errno);
		io_uring_queue_exit(&r->ring);
		free(r);
		return ret;
	}
	loop->bl.ctr.syscalls++;
	ret = io_uring_register_eventfd(&r->ring, r->io.fd);
	if (ret < 0) {
		ret = bp_err_sys("io_uring_register(EVENTFD)", ret);
		close(r->io.fd);
		io_uring_queue_exit(&r->ring);
		free(r);
		return ret;
	}
	ret = loop->be->add(&loop->bl, &r->io);
	if (ret < 0) {
		close(r->io.fd);
		io_uring_queue_exit(&r->ring);
		free(r);
		return ret;
	}
	s->ring = r;
	return 0;
}

/*
 * ring_submit - hand the queued SQEs to the kernel; what it does not take stays
 * queued. Also enters when completions overflowed the CQ (more I/O in flight than
 * RING_CQ_ENTRIES), which brings them back into it.
 */
static int ring_submit(struct bp_loop *loop, struct bp_aio_ring *r)
{
	int ret;

	if (!r->queued && !io_uring_cq_has_overflow(&r->ring))
		return 0;
	loop->bl.ctr.syscalls++;
	ret = io_uring_submit(&r->ring);
	r->queued = io_uring_sq_ready(&r->ring);
	if (ret < 0 && ret != -EAGAIN && ret != -EBUSY && ret != -EINTR)
		return bp_err_sys("io_uring_enter (storage ring)", ret);
	return 0;
}

/* ring_issue - queue what is left of a on the storage ring (submitted before the next wait). */
static int ring_issue(struct bp_loop *loop, struct bp_aio_ring *r, struct bp_aio *a)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&r->ring);

	if (!sqe) { /* a full SQ: more than RING_SQ_ENTRIES queued in one iteration */
		int ret = ring_submit(loop, r);

		if (ret < 0)
			return ret;
		sqe = io_uring_get_sqe(&r->ring);
		if (!sqe)
			return bp_err_set(-EBUSY, "storage I/O: submission queue full");
	}
	bp_aio_prep_sqe(sqe, a);
	io_uring_sqe_set_data(sqe, a);
	r->queued++;
	return 0;
}

/* ring_reap - every CQE of the storage ring to bp_aio_complete. */
static void ring_reap(struct bp_loop *loop, struct bp_aio_ring *r)
{
	struct io_uring_cqe *cqe;
	unsigned head, seen = 0;

	io_uring_for_each_cqe(&r->ring, head, cqe) {
		bp_aio_complete(loop, io_uring_cqe_get_data(cqe), cqe->res);
		seen++;
	}
	io_uring_cq_advance(&r->ring, seen);
}

/* ---- issuing, completing ---- */

/* issue - hand what is left of a to the kernel, by the backend's ring or the storage ring. */
static int issue(struct bp_loop *loop, struct bp_aio *a)
{
	if (loop->be->aio_submit)
		return loop->be->aio_submit(&loop->bl, a);
	return ring_issue(loop, loop->aio->ring, a);
}

/* finish - a is over (res final): out of flight, onto the done list. Starts no waiter. */
static void finish(struct bp_loop *loop, struct bp_aio *a, int res)
{
	struct bp_aio_loop *s = loop->aio;

	a->res = res;
	a->q->st.inflight--;
	s->inflight--;
	a->next = NULL;
	if (s->done_tail)
		s->done_tail->next = a;
	else
		s->done_head = a;
	s->done_tail = a;
	s->fresh++;
}

/* start - a takes a slot of its queue and goes to the kernel (a failure completes it). */
static void start(struct bp_loop *loop, struct bp_aio_queue *q, struct bp_aio *a)
{
	int ret;

	q->st.inflight++;
	if (q->st.inflight > q->st.max_inflight)
		q->st.max_inflight = q->st.inflight;
	loop->aio->inflight++;
	ret = issue(loop, a);
	if (ret < 0)
		finish(loop, a, ret);
}

/* start_waiting - the queue's waiters, in order, into the slots that are free. */
static void start_waiting(struct bp_loop *loop, struct bp_aio_queue *q)
{
	while (q->wait_head && q->st.inflight < q->st.depth) {
		struct bp_aio *a = q->wait_head;

		q->wait_head = a->next;
		if (!q->wait_head)
			q->wait_tail = NULL;
		q->st.waiting--;
		start(loop, q, a);
	}
}

void bp_aio_complete(struct bp_loop *loop, struct bp_aio *a, int res)
{
	struct bp_aio_queue *q = a->q;

	if (is_transfer(a) && res > 0) {
		a->xfer += (uint64_t)res;
		if (a->xfer < a->len) {
			int ret;

			/* The kernel did part of it: the rest from where it stopped. */
			q->st.continued++;
			ret = issue(loop, a);
			if (!ret)
				return;
			res = ret;
		} else {
			res = (int)a->xfer;
		}
	} else if (is_transfer(a) && res == 0) {
		res = (int)a->xfer; /* the end of the file */
	}
	finish(loop, a, res);
	start_waiting(loop, q);
}

/* ---- the API ---- */

int bp_aio_queue_init(struct bp_aio_queue *q, struct bp_loop *loop, uint32_t depth)
{
	memset(q, 0, sizeof(*q));
	if (!depth || depth > BP_AIO_MAX_DEPTH)
		return bp_err_set(-EINVAL, "storage I/O: queue depth %u is outside 1..%u", depth, BP_AIO_MAX_DEPTH);
	if (!loop_state(loop))
		return bp_err_set(-ENOMEM, "storage I/O: out of memory");
	q->loop = loop;
	q->st.depth = depth;
	return 0;
}

void bp_aio_queue_on_batch(struct bp_aio_queue *q, bp_aio_batch_fn fn, void *arg)
{
	q->batch_fn = fn;
	q->batch_arg = arg;
}

void bp_aio_queue_stats(const struct bp_aio_queue *q, struct bp_aio_stats *st)
{
	*st = q->st;
}

bool bp_aio_queue_idle(const struct bp_aio_queue *q)
{
	return q->st.submitted == q->st.completed;
}

int bp_aio_submit(struct bp_aio_queue *q, struct bp_aio *a)
{
	struct bp_loop *loop = q->loop;
	struct bp_aio_loop *s;
	int ret;

	if (!loop || !(s = loop->aio))
		return bp_err_set(-EINVAL, "storage I/O: queue not initialised (bp_aio_queue_init)");
	if (!a->done)
		return bp_err_set(-EINVAL, "storage I/O: no completion callback");
	switch (a->op) {
	case BP_AIO_READ:
	case BP_AIO_WRITE:
		if (!a->len || a->len > BP_AIO_MAX_LEN || !a->buf)
			return bp_err_set(-EINVAL, "storage I/O: %s of %llu bytes (1..%u, with a buffer)",
					  a->op == BP_AIO_READ ? "read" : "write", (unsigned long long)a->len,
					  BP_AIO_MAX_LEN);
		break;
	case BP_AIO_FALLOCATE:
		if (!a->len)
			return bp_err_set(-EINVAL, "storage I/O: fallocate of 0 bytes");
		break;
	case BP_AIO_FSYNC:
	case BP_AIO_FDATASYNC:
		break;
	default:
		return bp_err_set(-EINVAL, "storage I/O: unknown operation %u", a->op);
	}
	if (!loop->be->aio_submit && !s->ring) {
		ret = ring_create(loop, s);
		if (ret < 0)
			return ret;
	}
	a->q = q;
	a->next = NULL;
	a->xfer = 0;
	a->res = 0;
	q->st.submitted++;
	s->pending++;
	if (q->st.inflight < q->st.depth && !q->wait_head) {
		start(loop, q, a);
		return 0;
	}
	/* Beyond the depth: wait in order for a slot. */
	q->st.waited++;
	q->st.waiting++;
	if (q->wait_tail)
		q->wait_tail->next = a;
	else
		q->wait_head = a;
	q->wait_tail = a;
	return 0;
}

uint32_t bp_aio_pending(const struct bp_loop *loop)
{
	return loop->aio ? loop->aio->pending : 0;
}

int bp_aio_drain(struct bp_loop *loop, uint32_t timeout_ms)
{
	uint64_t end = bp_now_ns() + (uint64_t)timeout_ms * 1000000ull;

	while (loop->aio && loop->aio->pending) {
		uint64_t now = bp_now_ns();
		int64_t wait_ns = 10 * 1000 * 1000;
		int ret;

		if (now >= end)
			return bp_err_set(-ETIMEDOUT, "storage I/O: %u still pending after %u ms", loop->aio->pending,
					  timeout_ms);
		if ((int64_t)(end - now) < wait_ns)
			wait_ns = (int64_t)(end - now);
		ret = bp_loop_iterate(loop, wait_ns);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* ---- the loop's hooks (core/loop.c) ---- */

bool bp_aio_before_wait(struct bp_loop *loop)
{
	struct bp_aio_loop *s = loop->aio;

	if (s->ring) {
		ring_submit(loop, s->ring);
		if (io_uring_cq_ready(&s->ring->ring))
			return true;
	}
	return s->done_head != NULL;
}

int bp_aio_collect(struct bp_loop *loop)
{
	struct bp_aio_loop *s = loop->aio;
	int n;

	if (s->ring)
		ring_reap(loop, s->ring);
	n = (int)s->fresh;
	s->fresh = 0;
	return n;
}

void bp_aio_ring_event(struct bp_loop *loop)
{
	struct bp_aio_loop *s = loop->aio;
	uint64_t v;

	if (!s || !s->ring)
		return;
	loop->bl.ctr.syscalls++;
	if (read(s->ring->io.fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		bp_err_sys("read(storage eventfd)", -errno);
}

void bp_aio_run_done(struct bp_loop *loop)
{
	struct bp_aio_loop *s = loop->aio;
	struct bp_aio *a;
	struct bp_aio_queue *q;

	while ((a = s->done_head)) {
		s->done_head = a->next;
		if (!s->done_head)
			s->done_tail = NULL;
		q = a->q;
		s->pending--;
		q->st.completed++;
		if (a->res < 0)
			q->st.errors++;
		loop->bl.ctr.completions++;
		if (q->batch_fn && !q->batch_marked) {
			q->batch_marked = true;
			q->batch_next = s->batch_head;
			s->batch_head = q;
		}
		if (!s->dropping)
			a->done(a, a->res);
	}
	while ((q = s->batch_head)) {
		s->batch_head = q->batch_next;
		q->batch_marked = false;
		if (!s->dropping)
			q->batch_fn(q, q->batch_arg);
	}
}

/* fini_wait - one wait for storage completions only: no dispatch, no timers, no callbacks. */
static void fini_wait(struct bp_loop *loop, struct bp_aio_loop *s)
{
	if (s->ring) {
		struct __kernel_timespec ts = { .tv_sec = 0, .tv_nsec = 10 * 1000 * 1000 };
		struct io_uring_cqe *cqe;

		ring_submit(loop, s->ring);
		loop->bl.ctr.syscalls++;
		io_uring_wait_cqe_timeout(&s->ring->ring, &cqe, &ts);
		ring_reap(loop, s->ring);
	} else {
		loop->bl.nev = 0;
		loop->be->wait(&loop->bl, 10 * 1000 * 1000);
		/* storage completions come back as events here; the loop's others are nobody's now */
		for (int i = 0; i < loop->bl.nev; i++)
			if (loop->bl.ev[i].kind == BP_EV_AIO)
				bp_aio_complete(loop, (struct bp_aio *)(uintptr_t)loop->bl.ev[i].data, loop->bl.ev[i].res);
	}
	loop->bl.nev = 0;
}

void bp_aio_loop_fini(struct bp_loop *loop)
{
	struct bp_aio_loop *s = loop->aio;
	uint64_t end = bp_now_ns() + (uint64_t)FINI_WAIT_MS * 1000000ull;

	if (!s)
		return;
	s->dropping = true;
	/* Until the kernel is done with every buffer it was given; then nothing runs. */
	while (s->inflight && bp_now_ns() < end)
		fini_wait(loop, s);
	if (s->inflight)
		bp_err_set(-ETIMEDOUT, "storage I/O: %u still in the kernel %u ms into bp_loop_destroy", s->inflight,
			   FINI_WAIT_MS);
	s->done_head = s->done_tail = NULL;
	if (s->ring)
		ring_free(loop, s->ring);
	free(s);
	loop->aio = NULL;
}
