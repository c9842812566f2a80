/* SPDX-License-Identifier: MIT */
/*
 * The measured-run driver every client tool shares (rr's client, pingpong's
 * client, perf): workers on loop threads move through the phases
 *
 *   SETUP -> READY -> WARMUP -> MEASURE -> DRAIN -> DONE      (or FAILED)
 *
 * and the run's own thread waits for them all to be ready, gives them one start
 * time, marks the edges of the measured interval (where the tool reads the
 * kernel's counters, starts and stops its server's snapshot, samples its target),
 * prints progress lines, passes a stop signal on, and gives up on a peer that
 * stopped answering. Whatever happens, what was measured stays: a stop or a
 * failure ends the phases the same way (the interval closed where it was), so
 * the tool can print the partial result with the reason.
 *
 * Time or count: with a duration the workers' own timers end the interval (their
 * hot path shares nothing); without one the tool ends it (run_worker_end, rr -n,
 * pingpong's round trips). Warm-up likewise: seconds, or the tool moves on itself
 * (run_worker_measure).
 *
 * Threading: run_worker_* are for the worker's loop thread; run_drive and the
 * run_* reads for the run's thread; workers tell the run's thread through atomics
 * and an eventfd, and are told through bp_loop_post.
 */
#ifndef BP_TOOLS_HARNESS_RUN_DRIVER_H
#define BP_TOOLS_HARNESS_RUN_DRIVER_H

#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "tools/harness/evidence.h"

#define RUN_MAX_WORKERS 64

enum run_phase { RUN_SETUP, RUN_READY, RUN_WARMUP, RUN_MEASURE, RUN_DRAIN, RUN_DONE, RUN_FAILED };

struct run;

/* One worker: embedded in the tool's per-thread state, its loop set in the thread's setup. */
struct run_worker {
	struct run *run;
	struct bp_loop *loop;
	enum run_phase phase;
	struct ev_snap start, end;    /* the measured interval (all phases: RUN_F_ALL_PHASES) */
	bool measured;                /* start and end are an interval (it was measured, or cut empty) */
	bool interrupted;             /* a stop ended it */
	struct bp_timer t_measure, t_end;
	uint64_t measure_at_ns, end_at_ns;
	atomic_uint_fast64_t units;   /* work done, every phase after the go: progress and stall checks */
	int err;
	char errmsg[600];
};

struct run_ops {
	/* On the worker's thread: the go; start the traffic (the warm-up begins). */
	void (*start)(struct run_worker *w);
	/* On the worker's thread: nothing in flight any more (so the drain is over). */
	bool (*idle)(struct run_worker *w);
	/* On the run's thread: the measured interval starts (end false) or ends (end true). May be NULL. */
	void (*edge)(struct run *r, bool end);
	/*
	 * On the run's thread: wait up to wait_us doing the tool's own work (perf runs
	 * its admin queue's loop here). 0, or -errno: the run fails. NULL: the driver
	 * sleeps on its eventfd.
	 */
	int (*tick)(struct run *r, int64_t wait_us);
	/* On the run's thread, every watch_ms: the tool's own look (pingpong's lost-request scan). May be NULL. */
	void (*watch)(struct run *r);
	/* On the run's thread: one progress line, "when" says the phase ("run 2.0/10.0 s"). May be NULL. */
	void (*progress)(struct run *r, const char *when, uint64_t units, double seconds);
};

enum {
	RUN_F_ALL_PHASES = 1u << 0,   /* the snapshots cover the whole run, warm-up and drain included */
	RUN_F_END_AFTER_DRAIN = 1u << 1, /* the end edge waits for every worker to drain (server counts match) */
	RUN_F_TOOL_WARMUP = 1u << 2,  /* no timed warm-up: the tool calls run_worker_measure (a count) */
};

struct run {
	const struct run_ops *ops;
	void *tool;                   /* the tool's own context, for its hooks */
	int n;
	struct run_worker *w[RUN_MAX_WORKERS];
	unsigned flags;               /* RUN_F_* */
	double warmup_s;              /* seconds of warm-up (0: none, or the tool's count) */
	double duration_s;            /* seconds measured (0: the tool ends the interval) */
	double interval_s;            /* progress lines (0: none) */
	uint64_t ready_timeout_ns;    /* every worker ready by then, or the run fails */
	uint64_t stall_ns;            /* after the go: no work done for this long = the peer is gone (0: never) */
	int watch_ms;                 /* ops->watch period (0: never) */
	volatile sig_atomic_t *stop;  /* set by a signal: the run stops, partial results kept */
	/* state */
	int wake_fd;                  /* eventfd: a worker became ready, done or failed */
	atomic_int ready, done, failed;
	bool interrupted;             /* the stop flag ended it */
	bool started;                 /* the workers got their go */
	bool edge_start, edge_end;    /* the interval's edges were marked */
	uint64_t measure_at_ns, end_at_ns;
	uint64_t first_ns, last_ns;   /* the measured interval over every worker (after run_drive) */
};

/* run_init - a run of n workers (w[] filled by the caller), wake_fd made. 0 or -errno. */
int run_init(struct run *r, const struct run_ops *ops, void *tool, int n);
/* run_free - the eventfd closed. */
void run_free(struct run *r);

/*
 * run_drive - the run, on the calling thread, once every worker's thread was
 * started: ready (or ready_timeout_ns), the go, the interval, progress, the
 * drain, the edges. Returns 0 (also when a stop ended it: r->interrupted),
 * -ETIMEDOUT (not ready in time: err says; or stalled after the interval),
 * -EIO (a worker failed: run_first_error says why), or a tick's -errno.
 * The workers are left as they are (DONE, or stopped and draining): the caller
 * joins their threads, then reads the result.
 */
int run_drive(struct run *r);
/* run_first_error - the first failed worker's error (its message into err), 0 if none. */
int run_first_error(const struct run *r, char *err, size_t errlen);
/* run_stop_all - tell every started worker to stop (posted). */
void run_stop_all(struct run *r);
/* run_units - the work every worker has done (progress counters). */
uint64_t run_units(const struct run *r);
/*
 * run_add_evidence - every worker's interval into ev (ev_add_interval), and
 * first_ns/last_ns: the interval they cover together. After the threads joined.
 */
void run_add_evidence(struct run *r, struct evidence *ev);

/* ---- on a worker's thread ---- */
/* run_worker_ready - setup is done (connected, pre-filled): count it. */
void run_worker_ready(struct run_worker *w);
/* run_worker_measure - warm-up over (the tool's count, or the timer): the interval starts. */
void run_worker_measure(struct run_worker *w);
/* run_worker_end - the interval is over (the tool's count, the timer, a stop): drain. */
void run_worker_end(struct run_worker *w);
/* run_worker_drained - in DRAIN, the tool's last answer came: done (when ops->idle agrees). */
void run_worker_drained(struct run_worker *w);
/* run_worker_fail - the worker cannot go on: its error (the first one kept), the run told. */
void run_worker_fail(struct run_worker *w, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* run_worker_active - may it start another request now (WARMUP or MEASURE)? */
bool run_worker_active(const struct run_worker *w);
/* run_worker_add - units more done (progress). */
void run_worker_add(struct run_worker *w, uint64_t units);

#endif
