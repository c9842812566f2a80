/* SPDX-License-Identifier: MIT */
/*
 * An open loop's arrival clock: when each request of a schedule is due, the one
 * piece `busypoll rr --rate` (a transaction) and `busypoll perf --rate_iops` (an
 * I/O, per direction) share. What waits for what (rr's flows, perf's iodepth
 * slots) is the caller's; this only says when.
 *
 * Times: the k-th request (from 0) is due at start + first + the gaps before it.
 * Fixed gaps (fio's rate_process=linear) are exact: start + first + k x gap,
 * computed afresh each time, so rounding never drifts the rate. Poisson gaps
 * (rate_process=poisson) are exponential with the mean gap, drawn with erand48
 * from the clock's own state (a seed per thread, so a test is reproducible).
 *
 * Pure arithmetic, no clock read: callers pass times in, so tests need no timing.
 */
#ifndef BP_TOOLS_HARNESS_ARRIVALS_H
#define BP_TOOLS_HARNESS_ARRIVALS_H

#include <stdbool.h>
#include <stdint.h>

/* A request that went out this long after it was due, with nothing else holding it, was late (the sender's own lag). */
#define ARRIVALS_LATE_NS 10000

struct arrivals {
	double gap_ns;            /* mean gap between requests */
	bool poisson;
	uint64_t start_ns;        /* the schedule's start */
	double first_ns;          /* the first request's distance from the start */
	uint64_t k;               /* requests taken */
	double offset_ns;         /* poisson: the next request's distance from the start */
	uint64_t next_ns;         /* when the next request is due */
	unsigned short xsubi[3];  /* erand48's state */
};

/*
 * arrivals_init - a clock of rate requests/s, fixed or Poisson gaps, its random
 * numbers from seed. Not started. Returns 0, or -EINVAL (rate not above 0).
 */
int arrivals_init(struct arrivals *a, double rate, bool poisson, uint64_t seed);
/* arrivals_start - the first request due at start_ns + first_ns (threads stagger their starts). */
void arrivals_start(struct arrivals *a, uint64_t start_ns, double first_ns);
/* arrivals_take - take the request due at next_ns: returns that due time; next_ns moves on to the one after. */
uint64_t arrivals_take(struct arrivals *a);
/* arrivals_uniform - a number in [0, 1) from the clock's own random state (rr: which flow a Poisson request takes). */
double arrivals_uniform(struct arrivals *a);
/*
 * arrivals_behind - how many requests were due by now_ns and not taken, counted by
 * taking them (so the clock ends past now_ns): what an open loop left undone at its end.
 */
uint64_t arrivals_behind(struct arrivals *a, uint64_t now_ns);

#endif
