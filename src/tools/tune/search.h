/* SPDX-License-Identifier: MIT */
/*
 * tune's search rules, pure (no I/O, no clock, no allocation): each run's P99 with an
 * order-statistic confidence interval from its own samples, a candidate's the median of
 * its runs' (tune_runs_p99), successive
 * halving with ties kept together, the proof rule (a busy-poll candidate without
 * BusyPollRxPackets is never kept nor recommended) and the pick for a goal.
 *
 * The halving rule, stated: at each rung every live candidate runs for the rung's
 * time (twice the previous rung's). Then the unproven are dropped; for a P99 goal,
 * a candidate whose interval lies wholly above the goal is dropped (unless none
 * would remain: then the lowest P99s are ranked instead); the rest are ranked by the
 * goal's order and the better half (rounded up) is kept, together with every
 * candidate tied with the last one kept (P99 intervals that overlap, or CPU or TPS
 * within TUNE_TIE_FRAC of it). The search ends when one candidate (or one tied
 * group) remains or the rungs are spent.
 */
#ifndef BP_TOOLS_TUNE_SEARCH_H
#define BP_TOOLS_TUNE_SEARCH_H

#include <stdbool.h>
#include <stddef.h>

#include "tools/harness/evidence.h" /* EV_PROOF_MIN: a busy-poll side below it is unproven */

/* Relative CPU (or TPS) difference within which two candidates are tied. */
#define TUNE_TIE_FRAC 0.05
/* z for the two-sided 95% interval of the order-statistic CI. */
#define TUNE_CI_Z 1.96

enum tune_goal_kind { TUNE_GOAL_P99, TUNE_GOAL_MAX_TPS };

/* A goal: at most p99_us at the least CPU (both ends), or the most TPS within
 * cpu_budget CPUs (both ends). */
struct tune_goal {
	enum tune_goal_kind kind;
	double p99_us;
	double cpu_budget;
};

/* One point of the space and its latest measurement. samples (latencies in us) is
 * the caller's buffer; tune_measure sorts it in place. */
struct tune_cand {
	const char *name;        /* caller-owned label */
	bool busy_poll;          /* either side runs a busy-poll mode */
	double bprx_per_tx;      /* least of the busy-poll sides' BusyPollRxPackets/tx */
	double cpu;              /* CPUs used, both ends */
	double tps;              /* transactions per second achieved */
	double *samples;         /* latency samples, us (caller-owned) */
	size_t nsamples;
	double p99, p99_lo, p99_hi; /* set by tune_measure; p99_hi is INFINITY when the
	                               samples are too few to bound it */
	bool alive;              /* still in the search */
};

/*
 * tune_quantile_ci - the q-quantile of v[0..n) and its ~95% order-statistic interval:
 * ranks n*q -/+ TUNE_CI_Z*sqrt(n*q*(1-q)), the lower clamped to the least sample, an
 * upper rank past n giving INFINITY. Sorts v in place. Returns false (outputs untouched)
 * for n == 0 or q outside (0,1).
 */
bool tune_quantile_ci(double *v, size_t n, double q, double *est, double *lo, double *hi);

struct bp_hist;
/*
 * tune_hist_ci - tune_quantile_ci's ranks over a histogram's count, each rank's value
 * its bucket's (bp_hist_percentile): for runs too long to keep every sample. Returns
 * false (outputs untouched) for an empty histogram or q outside (0,1).
 */
bool tune_hist_ci(const struct bp_hist *h, double q, double *est, double *lo, double *hi);

/*
 * tune_runs_p99 - a phase's P99 from its n runs, each run's own P99 est[k] and interval
 * [lo[k], hi[k]]: the median of the runs' P99s (compare's statistic: a run the machine
 * disturbed moves it by one rank at most, where pooling that run's latencies with the
 * others' lets its stall alone set the P99), the interval from the lower middle of the
 * runs' lower bounds to the upper middle of their upper bounds (so it holds the median
 * and, with an even n, both middle runs). Sorts the three arrays in place. Returns false
 * (outputs untouched) for n == 0.
 */
bool tune_runs_p99(double *est, double *lo, double *hi, size_t n, double *p99, double *p99_lo, double *p99_hi);

/* tune_measure - sets c's p99 and interval from its samples (NaN when it has none). */
void tune_measure(struct tune_cand *c);

/* tune_proven - c may be recommended: not busy-polling, or BusyPollRxPackets/tx at
 * least EV_PROOF_MIN. */
bool tune_proven(const struct tune_cand *c);

/* tune_better - a ranks strictly before b for goal g (no tie rule applied). */
bool tune_better(const struct tune_cand *a, const struct tune_cand *b, const struct tune_goal *g);

/* tune_tied - a and b cannot be told apart for goal g (overlapping P99 intervals, or
 * CPU/TPS within TUNE_TIE_FRAC, whichever the goal ranks by). */
bool tune_tied(const struct tune_cand *a, const struct tune_cand *b, const struct tune_goal *g);

/*
 * tune_halve - one rung's cut over c[0..n) by the rule at the top; clears alive on the
 * dropped. Returns how many remain alive.
 */
size_t tune_halve(struct tune_cand *c, size_t n, const struct tune_goal *g);

/*
 * tune_pick - the best live proven candidate for g into *best and the next into
 * *runner (-1 when none). Returns true when *best meets g (P99 at most the goal;
 * for max-tps, CPU within the budget); false with *best the closest candidate
 * (lowest P99, or least CPU) otherwise.
 */
bool tune_pick(const struct tune_cand *c, size_t n, const struct tune_goal *g, int *best,
	       int *runner);

/*
 * tune_pareto - marks on_front[i] for each point c[i] that no other point beats on
 * both P99 and CPU (another with P99 and CPU each at most c[i]'s and one of them
 * below). A point with a P99 or CPU that is not a number (never measured) is never
 * on the front and beats none. Returns how many are on it.
 */
size_t tune_pareto(const struct tune_cand *c, size_t n, bool *on_front);

/*
 * tune_plan - the rung schedule for n candidates in budget_s seconds: *rungs rungs,
 * the first of *first_s seconds per candidate, each next one twice as long with half
 * the candidates, so each rung costs about n * first_s. Returns false when the budget
 * leaves under min_s per candidate in the first rung.
 */
bool tune_plan(size_t n, double budget_s, double min_s, unsigned *rungs, double *first_s);

#endif
