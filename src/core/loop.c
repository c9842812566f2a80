/* SPDX-License-Identifier: MIT */
/*
 * The loop: picks the wait for the policy, calls the backend to gather, then
 * dispatches, runs timers and frees what died. Every mode is timed and counted
 * here, in one place.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "core/internal.h"

uint64_t bp_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int bp_loop_create(struct bp_loop **loopp, const struct bp_mode *mode)
{
	struct bp_loop *loop;
	char why[200];
	int ret;

	ret = bp_mode_check(mode, why, sizeof(why));
	if (ret)
		return bp_err_set(ret, "%s", why);

	loop = calloc(1, sizeof(*loop));
	if (!loop)
		return bp_err_set(-ENOMEM, "bp_loop_create: out of memory");
	loop->bl.mode = *mode;
	loop->be = bp_backend_of(mode->backend); /* bp_mode_check made sure there is one */
	loop->now_ns = bp_now_ns();
	pthread_mutex_init(&loop->post_lock, NULL);

	loop->wake.fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	loop->wake.kind = BP_IO_WAKE;
	if (loop->wake.fd < 0) {
		ret = bp_err_sys("eventfd", -errno);
		goto err_free;
	}
	ret = loop->be->init(&loop->bl);
	if (ret)
		goto err_close;
	ret = loop->be->add(&loop->bl, &loop->wake);
	if (ret)
		goto err_fini;
	*loopp = loop;
	return 0;

err_fini:
	loop->be->fini(&loop->bl);
err_close:
	close(loop->wake.fd);
err_free:
	pthread_mutex_destroy(&loop->post_lock);
	free(loop);
	return ret;
}

void bp_loop_destroy(struct bp_loop *loop)
{
	if (!loop)
		return;
	while (loop->conns)
		bp_conn_discard(loop->conns);
	while (loop->listeners)
		bp_listener_discard(loop->listeners);
	/* Storage I/O first: the kernel must be done with its buffers before we return. */
	bp_aio_loop_fini(loop);
	/* Tearing the backend down ends every op in flight, so nothing is left to wait for. */
	loop->be->fini(&loop->bl);
	bp_loop_reap(loop, true);
	close(loop->wake.fd);
	bp_timer_heap_free(&loop->timers);
	pthread_mutex_destroy(&loop->post_lock);
	free(loop->posts);
	free(loop);
}

/* How long the next wait may block, in ns (-1 = until woken). */
static int64_t loop_wait_timeout(struct bp_loop *loop, int64_t cap_ns)
{
	const struct bp_mode *m = &loop->bl.mode;
	struct bp_timer *t = bp_timer_heap_top(&loop->timers);
	int64_t timeout = -1;

	if (atomic_load_explicit(&loop->stop, memory_order_relaxed))
		return 0;
	/* uring:sqpoll,spin: the SQ thread submits, the loop reaps the CQ ring: never enter. */
	if (m->policy == BP_POLICY_SPIN || (m->policy == BP_POLICY_SQPOLL && m->spin))
		return 0;
	if (loop->poll_next) {
		loop->poll_next = false;
		return 0;
	}
	/* Hybrid: keep polling while work came within the period, then block. */
	if (m->policy == BP_POLICY_HYBRID &&
	    loop->now_ns - loop->last_activity_ns < (uint64_t)m->period_us * 1000)
		return 0;
	if (t)
		timeout = t->deadline_ns > loop->now_ns ? (int64_t)(t->deadline_ns - loop->now_ns) : 0;
	/*
	 * Hybrid: nor sleep when a timer is due within the period: waking up would cost
	 * more than polling until then (an open loop's next send keeps its time).
	 */
	if (m->policy == BP_POLICY_HYBRID && timeout >= 0 && timeout < (int64_t)m->period_us * 1000)
		return 0;
	if (cap_ns >= 0 && (timeout < 0 || cap_ns < timeout))
		timeout = cap_ns;
	return timeout;
}

static void loop_dispatch(struct bp_loop *loop)
{
	for (int i = 0; i < loop->bl.nev; i++) {
		const struct bp_event *ev = &loop->bl.ev[i];
		struct bp_io *io = ev->io;

		if (ev->kind == BP_EV_AIO) { /* storage I/O on the loop's own ring: no io */
			bp_aio_complete(loop, (struct bp_aio *)(uintptr_t)ev->data, ev->res);
			continue;
		}
		if (io->dead)
			continue;
		loop->bl.ctr.completions++;
		switch (io->kind) {
		case BP_IO_CONN:
			bp_conn_on_event((struct bp_conn *)io, ev);
			break;
		case BP_IO_LISTENER:
			bp_listener_on_event((struct bp_listener *)io, ev);
			break;
		case BP_IO_WAKE: {
			uint64_t v;

			loop->bl.ctr.syscalls++;
			if (read(loop->wake.fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
				bp_err_sys("read(eventfd)", -errno);
			atomic_store(&loop->wake_pending, false);
			bp_loop_run_posts(loop);
			break;
		}
		case BP_IO_AIO:
			bp_aio_ring_event(loop);
			break;
		}
	}
	loop->bl.nev = 0;
}

/*
 * Direct reads (mode key direct, on by default for epoll:spin and epoll:hybrid): with at
 * most DIRECT_MAX_CONNS live connections, the loop reads those expected to have bytes
 * (core/internal.h: bp_conn_direct_candidate; MSG_DONTWAIT; napi: with SO_BUSY_POLL, so
 * the read busy-polls once) before asking epoll, which takes the epoll_wait off the
 * critical path. Where the wait would not sleep (spin, hybrid's poll window) a pass of
 * reads that finds nothing is the pass's poll, as the floor's recv spin is; under napi
 * it is followed by the wait, which busy polls and sleeps. Bounds: a connection whose
 * reads missed its policy's bound in a row is read only through epoll until bytes come
 * or it sends (an idle connection is never read directly, so it costs nothing); never
 * more than DIRECT_MAX_RUN passes in a row without asking epoll, so listeners, the wake
 * fd, writable events and every other connection are still served; and never
 * epoll:suspend, whose IRQ suspension lives on epoll_wait finding the events (napi.rst).
 * Timers run on every iteration either way.
 */
#define DIRECT_MAX_CONNS 4
#define DIRECT_MAX_RUN 16

/* What a pass of direct reads did. */
enum direct_pass { DIRECT_OFF, DIRECT_SERVED, DIRECT_MISSED_POLL, DIRECT_MISSED_WAIT };

/*
 * loop_read_direct - one pass of direct reads before a wait of timeout_ns. DIRECT_SERVED:
 * bytes came, skip the backend's wait; DIRECT_MISSED_POLL: nothing came and the pass
 * stands for a poll (skip the wait, count it as one); DIRECT_MISSED_WAIT: nothing came,
 * wait now; DIRECT_OFF: nothing was read (off, not paying, or the run is over).
 */
static enum direct_pass loop_read_direct(struct bp_loop *loop, int64_t timeout_ns)
{
	const struct bp_mode *m = &loop->bl.mode;
	struct bp_conn *cand[DIRECT_MAX_CONNS];
	bool hit = false, flush = false, polls;
	uint32_t max;
	size_t n = 0, live = 0;

	if (m->direct_off || loop->be->completion || m->backend != BP_BACKEND_EPOLL)
		return DIRECT_OFF;
	switch (m->policy) {
	case BP_POLICY_SPIN:
		polls = true;
		break;
	case BP_POLICY_HYBRID: /* only in its poll window: a miss before a sleep is a syscall more */
		if (timeout_ns != 0)
			return DIRECT_OFF;
		polls = true;
		break;
	case BP_POLICY_NAPI:
		polls = false;
		break;
	default:
		return DIRECT_OFF;
	}
	if (loop->direct_run >= DIRECT_MAX_RUN) {
		loop->direct_run = 0;
		return DIRECT_OFF;
	}
	max = polls ? BP_DIRECT_MISSES_SPIN : BP_DIRECT_MISSES_NAPI;
	for (struct bp_conn *c = loop->conns; c; c = c->next) {
		if (++live > DIRECT_MAX_CONNS)
			return DIRECT_OFF; /* many connections: epoll's one call beats n reads */
		if (bp_conn_direct_candidate(c, max))
			cand[n++] = c;
	}
	if (!n)
		return DIRECT_OFF;
	/* the callbacks may close or open connections: the dead stay allocated until reaping */
	for (size_t i = 0; i < n; i++) {
		if (bp_conn_read_direct(cand[i], m->policy == BP_POLICY_NAPI ? m->busy_usecs : 0))
			hit = true;
		if (!cand[i]->io.dead && bp_sendq_len(&cand[i]->sq))
			flush = true;
	}
	if (!hit && !polls)
		return DIRECT_MISSED_WAIT;
	loop->direct_run++;
	/* bytes waiting for EPOLLOUT need the backend's wait */
	if (flush)
		return hit ? DIRECT_OFF : DIRECT_MISSED_WAIT;
	return hit ? DIRECT_SERVED : DIRECT_MISSED_POLL;
}

int bp_loop_run_once(struct bp_loop *loop, int64_t timeout_us)
{
	return bp_loop_iterate(loop, loop_wait_timeout(loop, timeout_us < 0 ? -1 : timeout_us * 1000));
}

int bp_loop_iterate(struct bp_loop *loop, int64_t timeout_ns)
{
	uint64_t t0, t1;
	int n;

	/* Storage I/O queued since the last wait goes now; finished I/O must not wait for a sleep. */
	if (loop->aio && bp_aio_before_wait(loop))
		timeout_ns = 0;
	loop->bl.nev = 0;
	t0 = loop->now_ns = bp_now_ns();
	if (loop->direct_miss_ns) { /* the last pass's reads stood for a poll that found nothing */
		loop->bl.ctr.poll_ns += t0 - loop->direct_miss_ns;
		loop->direct_miss_ns = 0;
	}
	/* a direct read's callbacks see the time of this pass, as after a wait */
	switch (loop_read_direct(loop, timeout_ns)) {
	case DIRECT_SERVED:
		loop->last_activity_ns = t0;
		n = 1;
		goto after_dispatch;
	case DIRECT_MISSED_POLL:
		loop->bl.ctr.waits++;
		loop->bl.ctr.empty_polls++;
		loop->direct_miss_ns = t0;
		n = 0;
		goto after_dispatch;
	case DIRECT_MISSED_WAIT:
		/* the reads were a poll, not part of what the wait may sleep */
		t1 = loop->now_ns = bp_now_ns();
		loop->bl.ctr.poll_ns += t1 - t0;
		t0 = t1;
		break;
	case DIRECT_OFF:
		break;
	}
	n = loop->be->wait(&loop->bl, timeout_ns);
	t1 = loop->now_ns = bp_now_ns();
	loop->bl.ctr.waits++;
	if (timeout_ns == 0)
		loop->bl.ctr.poll_ns += t1 - t0;
	else
		loop->bl.ctr.sleep_ns += t1 - t0;
	if (n < 0)
		return n;
	if (loop->aio)
		n += bp_aio_collect(loop);
	if (n == 0) {
		loop->bl.ctr.empty_polls++;
	} else {
		if (timeout_ns != 0)
			loop->bl.ctr.wakeups++;
		loop->last_activity_ns = t1;
		loop_dispatch(loop);
	}
after_dispatch:
	if (loop->aio) {
		bp_aio_collect(loop);
		if (loop->aio->done_head)
			bp_aio_run_done(loop);
	}
	/* a timer that ran is work too: the hybrid window starts again (an open loop's send) */
	if (loop->timers.len && bp_timers_run(loop, loop->now_ns))
		loop->last_activity_ns = loop->now_ns;
	if (loop->dead_conns || loop->dead_listeners)
		bp_loop_reap(loop, false);
	return n;
}

int bp_loop_run(struct bp_loop *loop)
{
	while (!atomic_load_explicit(&loop->stop, memory_order_relaxed)) {
		int ret = bp_loop_run_once(loop, -1);

		if (ret < 0)
			return ret;
	}
	return 0;
}

void bp_loop_poll_next(struct bp_loop *loop)
{
	loop->poll_next = true;
}

void bp_loop_stop(struct bp_loop *loop)
{
	uint64_t one = 1;

	atomic_store(&loop->stop, true);
	/* write(2) is async-signal-safe; EAGAIN means a wake-up is already pending. */
	if (write(loop->wake.fd, &one, sizeof(one)) < 0) {
		/* nothing to do: the flag is set and the loop checks it every pass */
	}
}

bool bp_loop_stopping(const struct bp_loop *loop)
{
	return atomic_load(&((struct bp_loop *)loop)->stop);
}

const struct bp_mode *bp_loop_mode(const struct bp_loop *loop) { return &loop->bl.mode; }
const struct bp_loop_counters *bp_loop_counters(const struct bp_loop *loop) { return &loop->bl.ctr; }

int bp_loop_xsk_info(const struct bp_loop *loop, struct bp_xsk_info *out)
{
	memset(out, 0, sizeof(*out));
	return loop->be->pkt_info ? loop->be->pkt_info(&loop->bl, out) : -ENOENT;
}
void *bp_loop_data(const struct bp_loop *loop) { return loop->user; }
void bp_loop_set_data(struct bp_loop *loop, void *data) { loop->user = data; }
uint64_t bp_loop_now_ns(const struct bp_loop *loop) { return loop->now_ns; }

int bp_loop_kthreads(const struct bp_loop *loop, struct bp_loop_kthread *out, size_t max)
{
	if (!loop->be->kthreads)
		return 0;
	return loop->be->kthreads(&loop->bl, out, max);
}

size_t bp_loop_napi_ids(const struct bp_loop *loop, uint32_t *ids, size_t max)
{
	size_t n = loop->n_napi_ids < max ? loop->n_napi_ids : max;

	memcpy(ids, loop->napi_ids, n * sizeof(*ids));
	return n;
}

void bp_loop_note_napi(struct bp_loop *loop, uint32_t napi_id)
{
	if (napi_id < BP_MIN_NAPI_ID)
		return;
	for (uint32_t i = 0; i < loop->n_napi_ids; i++)
		if (loop->napi_ids[i] == napi_id)
			return;
	if (loop->n_napi_ids < BP_MAX_NAPI_IDS)
		loop->napi_ids[loop->n_napi_ids++] = napi_id;
	if (loop->be->napi_seen)
		loop->be->napi_seen(&loop->bl, napi_id);
}

void bp_loop_reap(struct bp_loop *loop, bool force)
{
	struct bp_conn **cp = &loop->dead_conns;
	struct bp_listener **lp = &loop->dead_listeners;

	while (*cp) {
		struct bp_conn *c = *cp;

		if (c->io.inflight && !force) {
			cp = &c->next_dead;
			continue;
		}
		*cp = c->next_dead;
		if (c->io.fd >= 0) { /* kept open while ops named it (conn_teardown) */
			close(c->io.fd);
			loop->bl.ctr.syscalls++;
		}
		bp_sendq_free(&c->sq);
		free(c->rbuf);
		free(c);
	}
	while (*lp) {
		struct bp_listener *l = *lp;

		if (l->io.inflight && !force) {
			lp = &l->next_dead;
			continue;
		}
		*lp = l->next_dead;
		free(l);
	}
}

void bp_loop_snapshot_take(const struct bp_loop *loop, struct bp_loop_snapshot *s)
{
	struct rusage ru;

	memset(s, 0, sizeof(*s));
	s->ns = bp_now_ns();
	if (getrusage(RUSAGE_THREAD, &ru) == 0) {
		s->utime_us = (uint64_t)ru.ru_utime.tv_sec * 1000000 + (uint64_t)ru.ru_utime.tv_usec;
		s->stime_us = (uint64_t)ru.ru_stime.tv_sec * 1000000 + (uint64_t)ru.ru_stime.tv_usec;
		s->nvcsw = (uint64_t)ru.ru_nvcsw;
		s->nivcsw = (uint64_t)ru.ru_nivcsw;
	}
	s->ctr = loop->bl.ctr;
	if (loop->be->pkt_counters)
		loop->be->pkt_counters(&loop->bl, &s->ctr);
}
