/* SPDX-License-Identifier: MIT */
/* The measured-run driver (contract in tools/harness/run_driver.h). */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "tools/harness/run_driver.h"

#define WAIT_MAX_US 50000          /* the run's thread looks around at least this often */

int run_init(struct run *r, const struct run_ops *ops, void *tool, int n)
{
	struct run_worker *w[RUN_MAX_WORKERS];

	if (n < 1 || n > RUN_MAX_WORKERS)
		return -EINVAL;
	memcpy(w, r->w, sizeof(w)); /* the caller filled them in first */
	memset(r, 0, sizeof(*r));
	memcpy(r->w, w, sizeof(w));
	r->ops = ops;
	r->tool = tool;
	r->n = n;
	r->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (r->wake_fd < 0)
		return -errno; /* errno stays set for the caller's message */
	for (int i = 0; i < n; i++)
		r->w[i]->run = r;
	return 0;
}

void run_free(struct run *r)
{
	if (r->wake_fd >= 0)
		close(r->wake_fd);
	r->wake_fd = -1;
}

/* ---- on a worker's thread ---- */

static void wake(struct run *r)
{
	uint64_t one = 1;

	if (write(r->wake_fd, &one, sizeof(one)) < 0) {
		/* the run's thread looks around every WAIT_MAX_US anyway */
	}
}

static void stop_timers(struct run_worker *w)
{
	bp_timer_stop(w->loop, &w->t_measure);
	bp_timer_stop(w->loop, &w->t_end);
}

/* finish - the worker is through (done or failed): counted once, the run told. */
static void finish(struct run_worker *w, enum run_phase phase)
{
	if (w->run->flags & RUN_F_ALL_PHASES && w->measured && w->phase != RUN_READY)
		ev_snap_take(w->loop, &w->end);
	w->phase = phase;
	atomic_fetch_add(&w->run->done, 1);
	wake(w->run);
}

void run_worker_ready(struct run_worker *w)
{
	if (w->phase != RUN_SETUP)
		return;
	w->phase = RUN_READY;
	atomic_fetch_add(&w->run->ready, 1);
	wake(w->run);
}

void run_worker_measure(struct run_worker *w)
{
	if (w->phase != RUN_WARMUP)
		return;
	w->phase = RUN_MEASURE;
	if (!(w->run->flags & RUN_F_ALL_PHASES)) {
		ev_snap_take(w->loop, &w->start);
		w->measured = true;
	}
}

void run_worker_end(struct run_worker *w)
{
	bool all = w->run->flags & RUN_F_ALL_PHASES;

	switch (w->phase) {
	case RUN_MEASURE:
		if (!all)
			ev_snap_take(w->loop, &w->end);
		break;
	case RUN_WARMUP:
		/* Ended before measuring began: an empty interval. */
		if (!all) {
			ev_snap_take(w->loop, &w->start);
			w->end = w->start;
			w->measured = true;
		}
		break;
	case RUN_SETUP:
	case RUN_READY:
		finish(w, RUN_DONE); /* never started: nothing to drain */
		return;
	default:
		return;
	}
	stop_timers(w);
	w->phase = RUN_DRAIN;
	run_worker_drained(w);
}

void run_worker_drained(struct run_worker *w)
{
	if (w->phase == RUN_DRAIN && w->run->ops->idle(w))
		finish(w, RUN_DONE);
}

void run_worker_fail(struct run_worker *w, int err, const char *fmt, ...)
{
	va_list ap;

	if (w->phase == RUN_DONE || w->phase == RUN_FAILED)
		return;
	w->err = err ? err : -EIO;
	va_start(ap, fmt);
	vsnprintf(w->errmsg, sizeof(w->errmsg), fmt, ap);
	va_end(ap);
	/* What was measured stays: the interval closes here. */
	if (w->phase == RUN_MEASURE && !(w->run->flags & RUN_F_ALL_PHASES))
		ev_snap_take(w->loop, &w->end);
	if (w->phase == RUN_WARMUP && !(w->run->flags & RUN_F_ALL_PHASES)) {
		ev_snap_take(w->loop, &w->start);
		w->end = w->start;
		w->measured = true;
	}
	if (w->loop)
		stop_timers(w);
	atomic_store(&w->run->failed, 1);
	finish(w, RUN_FAILED);
}

bool run_worker_active(const struct run_worker *w)
{
	return w->phase == RUN_WARMUP || w->phase == RUN_MEASURE;
}

void run_worker_add(struct run_worker *w, uint64_t units)
{
	atomic_store_explicit(&w->units, atomic_load_explicit(&w->units, memory_order_relaxed) + units,
			      memory_order_relaxed);
}

static void on_measure_timer(struct bp_loop *loop, void *arg)
{
	run_worker_measure(arg);
}

static void on_end_timer(struct bp_loop *loop, void *arg)
{
	run_worker_end(arg);
}

/* worker_go - posted: the warm-up starts now, the interval at measure_at_ns, ends at end_at_ns. */
static void worker_go(struct bp_loop *loop, void *arg)
{
	struct run_worker *w = arg;
	struct run *r = w->run;
	uint64_t now = bp_now_ns();

	if (w->phase != RUN_READY)
		return;
	/*
	 * A thread starved past the planned start (a loaded machine, spinning peers)
	 * still measures its whole duration, from when it really starts: otherwise its
	 * start and end timers fire back to back and it measures nothing.
	 */
	if (w->measure_at_ns < now) {
		if (w->end_at_ns)
			w->end_at_ns += now - w->measure_at_ns;
		w->measure_at_ns = now;
	}
	w->phase = RUN_WARMUP;
	if (r->flags & RUN_F_ALL_PHASES) {
		ev_snap_take(loop, &w->start);
		w->measured = true;
	}
	if (r->warmup_s > 0 && w->measure_at_ns > now)
		bp_timer_start(loop, &w->t_measure, (w->measure_at_ns - now) / 1000, on_measure_timer, w);
	else if (!(r->flags & RUN_F_TOOL_WARMUP))
		run_worker_measure(w);
	if (w->end_at_ns)
		bp_timer_start(loop, &w->t_end, (w->end_at_ns - now) / 1000, on_end_timer, w);
	r->ops->start(w);
}

static void worker_stop(struct bp_loop *loop, void *arg)
{
	struct run_worker *w = arg;

	if (w->phase == RUN_DONE || w->phase == RUN_FAILED)
		return;
	w->interrupted = true;
	run_worker_end(w);
}

/* ---- on the run's thread ---- */

void run_stop_all(struct run *r)
{
	for (int i = 0; i < r->n; i++)
		if (r->w[i]->loop)
			bp_loop_post(r->w[i]->loop, worker_stop, r->w[i]);
}

uint64_t run_units(const struct run *r)
{
	uint64_t u = 0;

	for (int i = 0; i < r->n; i++)
		u += atomic_load_explicit(&r->w[i]->units, memory_order_relaxed);
	return u;
}

int run_first_error(const struct run *r, char *err, size_t errlen)
{
	for (int i = 0; i < r->n; i++)
		if (r->w[i]->err) {
			snprintf(err, errlen, "%s", r->w[i]->errmsg);
			return r->w[i]->err;
		}
	return 0;
}

/* wait - up to us, on the tool's tick or on the eventfd. 0 or the tick's -errno. */
static int wait_us(struct run *r, int64_t us)
{
	struct pollfd p = { .fd = r->wake_fd, .events = POLLIN };
	uint64_t v;

	if (us < 0)
		us = 0;
	if (us > WAIT_MAX_US)
		us = WAIT_MAX_US;
	if (r->ops->tick)
		return r->ops->tick(r, us);
	if (poll(&p, 1, (int)((us + 999) / 1000)) > 0 && read(r->wake_fd, &v, sizeof(v)) < 0) {
		/* drained by the next read */
	}
	return 0;
}

static bool stop_asked(const struct run *r)
{
	return r->stop && *r->stop;
}

/* earliest - the sooner of a and (when set) b, as a wait from now. */
static int64_t until(uint64_t at, uint64_t now, int64_t cur)
{
	int64_t d;

	if (!at)
		return cur;
	d = at > now ? (int64_t)((at - now) / 1000) : 0;
	return d < cur ? d : cur;
}

/* phase_text - what the run is doing, for a progress line. */
static void phase_text(const struct run *r, uint64_t now, char *buf, size_t len)
{
	if (r->interrupted || atomic_load(&r->failed))
		snprintf(buf, len, "stopping");
	else if (now < r->measure_at_ns)
		snprintf(buf, len, "warm-up %.1f/%.1f s", r->warmup_s - (double)(r->measure_at_ns - now) / 1e9,
			 r->warmup_s);
	else if (!r->end_at_ns)
		snprintf(buf, len, "run %.1f s", (double)(now - r->measure_at_ns) / 1e9);
	else if (now < r->end_at_ns)
		snprintf(buf, len, "run %.1f/%.1f s", (double)(now - r->measure_at_ns) / 1e9, r->duration_s);
	else
		snprintf(buf, len, "draining");
}

/* mark_edges - the interval's start when it comes, its end when it is over. */
static void mark_edges(struct run *r, uint64_t now, bool all_done)
{
	bool over = all_done || r->interrupted || atomic_load(&r->failed) ||
		    (r->end_at_ns && now >= r->end_at_ns && !(r->flags & RUN_F_END_AFTER_DRAIN));

	if (!r->edge_start && now >= r->measure_at_ns) {
		r->edge_start = true;
		if (r->ops->edge)
			r->ops->edge(r, false);
	}
	if (r->edge_start && !r->edge_end && over) {
		r->edge_end = true;
		if (r->ops->edge)
			r->ops->edge(r, true);
	}
}

/* wait_ready - every worker ready. 0, -EIO (one failed), -ETIMEDOUT, 1 (stopped first). */
static int wait_ready(struct run *r)
{
	uint64_t deadline = r->ready_timeout_ns ? bp_now_ns() + r->ready_timeout_ns : 0;

	while (atomic_load(&r->ready) < r->n) {
		int ret;

		if (atomic_load(&r->failed))
			return -EIO;
		if (stop_asked(r))
			return 1;
		if (deadline && bp_now_ns() > deadline)
			return -ETIMEDOUT;
		ret = wait_us(r, WAIT_MAX_US);
		if (ret)
			return ret;
	}
	return 0;
}

int run_drive(struct run *r)
{
	uint64_t now, next_progress = 0, next_watch = 0, last_units = 0, last_change, last_ns;
	uint64_t progress_units = 0;
	int ret = wait_ready(r);

	if (ret == 1) {
		/* Stopped before the go: nothing measured, nothing to drain. */
		r->interrupted = true;
		return 0;
	}
	if (ret)
		return ret;
	now = bp_now_ns();
	r->measure_at_ns = now + (uint64_t)(r->warmup_s * 1e9);
	r->end_at_ns = r->duration_s > 0 ? r->measure_at_ns + (uint64_t)(r->duration_s * 1e9) : 0;
	for (int i = 0; i < r->n; i++) {
		r->w[i]->measure_at_ns = r->measure_at_ns;
		r->w[i]->end_at_ns = r->end_at_ns;
		bp_loop_post(r->w[i]->loop, worker_go, r->w[i]);
	}
	r->started = true;
	last_change = last_ns = now;
	if (r->interval_s > 0)
		next_progress = now + (uint64_t)(r->interval_s * 1e9);
	if (r->watch_ms > 0)
		next_watch = now + (uint64_t)r->watch_ms * 1000000;
	for (;;) {
		bool all_done = atomic_load(&r->done) >= r->n;
		uint64_t units;
		int64_t w = WAIT_MAX_US;

		now = bp_now_ns();
		mark_edges(r, now, all_done);
		if (all_done)
			break;
		if (stop_asked(r) && !r->interrupted) {
			r->interrupted = true;
			run_stop_all(r);
		}
		if (atomic_load(&r->failed) && ret != -EIO) {
			ret = -EIO; /* the others stop, what they measured stays */
			run_stop_all(r);
		}
		units = run_units(r);
		if (units != last_units) {
			last_units = units;
			last_change = now;
		} else if (r->stall_ns && now - last_change > r->stall_ns) {
			/* The peer stopped answering: what was measured stays, the drain is given up. */
			if (!r->interrupted && ret != -EIO)
				ret = -ETIMEDOUT;
			break;
		}
		if (next_watch && now >= next_watch) {
			r->ops->watch(r);
			next_watch = now + (uint64_t)r->watch_ms * 1000000;
		}
		if (next_progress && now >= next_progress && r->ops->progress) {
			char when[64];

			phase_text(r, now, when, sizeof(when));
			r->ops->progress(r, when, units - progress_units, (double)(now - last_ns) / 1e9);
			progress_units = units;
			last_ns = now;
			next_progress += (uint64_t)(r->interval_s * 1e9);
			if (next_progress < now)
				next_progress = now + (uint64_t)(r->interval_s * 1e9);
		}
		if (!r->edge_start)
			w = until(r->measure_at_ns, now, w);
		else if (!r->edge_end && !(r->flags & RUN_F_END_AFTER_DRAIN))
			w = until(r->end_at_ns, now, w);
		w = until(next_progress, now, w);
		w = until(next_watch, now, w);
		{
			int t = wait_us(r, w);

			if (t < 0) {
				if (!ret)
					ret = t;
				break;
			}
		}
	}
	mark_edges(r, bp_now_ns(), true);
	return ret;
}

void run_add_evidence(struct run *r, struct evidence *ev)
{
	r->first_ns = UINT64_MAX;
	r->last_ns = 0;
	for (int i = 0; i < r->n; i++) {
		const struct run_worker *w = r->w[i];

		if (!w->measured)
			continue;
		if (w->start.loop.ns < r->first_ns)
			r->first_ns = w->start.loop.ns;
		if (w->end.loop.ns > r->last_ns)
			r->last_ns = w->end.loop.ns;
		ev_add_interval(ev, &w->start, &w->end);
	}
	if (r->first_ns > r->last_ns)
		r->first_ns = r->last_ns = 0;
	ev->interval_ns = r->last_ns - r->first_ns;
}
