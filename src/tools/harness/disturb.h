/* SPDX-License-Identifier: MIT */
/*
 * Was the machine disturbing a run? Pure rules over facts one side's evidence
 * holds (tools/harness/evidence.h) and the closed loop's own figures, so that each
 * rule is tested on facts made by hand (tests/unit/test_disturb.c). The caller
 * gathers the facts per run and side (local, test bed, agent) and marks the cell.
 *
 * The rules, first match wins (docs/cli.md "When the machine disturbed a run"):
 * a spinning mode (one that never sleeps) whose least-served loop thread got under
 * DIST_SPIN_MIN_PCT of its CPU; other tasks that took DIST_OTHER_MAX_PCT or more
 * of the loop threads' pinned CPUs (their CPUs' task time less the loop's own);
 * loop threads that waited on a run queue for
 * DIST_RUNQ_MAX_PCT or more of the interval; steal time of DIST_STEAL_MAX_PCT or
 * more of the interval on the loop threads' CPUs; a closed loop whose transactions
 * per second times mean latency is under DIST_LITTLE_MIN of its flows (Little's
 * law: the loop was descheduled between transactions). A fact not known (NaN)
 * fires nothing.
 */
#ifndef BP_TOOLS_HARNESS_DISTURB_H
#define BP_TOOLS_HARNESS_DISTURB_H

#include <stdbool.h>
#include <stddef.h>

#include <busypoll/mode.h>

#define DIST_SPIN_MIN_PCT 90.0    /* a spinning loop thread's CPU, percent of the interval */
#define DIST_OTHER_MAX_PCT 20.0   /* other tasks on a loop thread's pinned CPU, percent of the interval */
#define DIST_RUNQ_MAX_PCT 10.0    /* run-queue wait per loop thread, percent of the interval */
#define DIST_STEAL_MAX_PCT 5.0    /* steal per loop thread's CPU, percent of the interval */
#define DIST_LITTLE_MIN 0.5       /* tps x mean latency over flows, closed loop */

/* One side of one run, as its evidence says. */
struct dist_side {
	const char *side;         /* "client", "server" */
	bool spins;               /* its mode never sleeps (dist_mode_spins) */
	double cpu_pct;           /* the least CPU one of its loop threads got, percent of the interval */
	double other_pct;         /* other tasks' CPU on its loop threads' pinned CPUs per thread, percent of the interval */
	double runq_pct;          /* run-queue wait per loop thread, percent of the interval */
	double steal_pct;         /* steal on its loop threads' CPUs per thread, percent of the interval */
};

/* The closed loop of one run, as the client measured it. */
struct dist_loop {
	bool closed;              /* a closed loop (an open loop's rate is offered: no rule) */
	double tps;               /* transactions per second, all flows */
	double mean_us;           /* mean latency */
	int flows;
};

/* dist_mode_spins - the mode never sleeps: epoll:spin, uring:spin, uring:sqpoll,spin. */
bool dist_mode_spins(const struct bp_mode *m);

/* dist_little - tps x mean latency over flows (1 for a loop never descheduled); NaN when not known. */
double dist_little(const struct dist_loop *l);

/*
 * dist_side_explain - when side s was disturbed, write into buf (len bytes, always
 * terminated) one line without a newline naming the side, what it got and the
 * bound: "server: a spinning loop thread got 48% of its CPU (under 90%)". Returns
 * true when a line was written, false (buf "") when nothing says it was disturbed.
 */
bool dist_side_explain(const struct dist_side *s, char *buf, size_t len);

/* dist_loop_explain - the same for the closed loop's consistency ("client: ..."). */
bool dist_loop_explain(const struct dist_loop *l, char *buf, size_t len);

#endif
