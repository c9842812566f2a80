/* SPDX-License-Identifier: MIT */
/*
 * tune's search rules on synthetic candidates: latencies drawn with a fixed seed around
 * each candidate's true P99, halved rung by rung with more samples each time. The true
 * best survives the noise, tied candidates are kept together, and an unproven busy-poll
 * candidate is never kept nor picked however good its figures.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "tools/tune/search.h"

#define NC 16
#define MAXS 8192

static double buf[NC][MAXS];
static uint64_t rng = 0x9e3779b97f4a7c15ull;

static double uniform(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return ((rng >> 11) + 0.5) / 9007199254740992.0;
}

/* fill - n exponential latencies whose true P99 is p99 (plus a 2us floor). */
static void fill(struct tune_cand *c, size_t n, double p99)
{
	double mean = (p99 - 2) / log(100.0);
	for (size_t i = 0; i < n; i++)
		c->samples[i] = 2 - mean * log(uniform());
	c->nsamples = n;
	tune_measure(c);
}

static void setup(struct tune_cand *c, const double *p99, const double *cpu)
{
	for (int i = 0; i < NC; i++) {
		c[i] = (struct tune_cand){ .name = "c", .busy_poll = true, .bprx_per_tx = 1.0,
					   .cpu = cpu[i], .tps = 1000, .samples = buf[i], .alive = true };
		(void)p99;
	}
}

static void test_ci(void **state)
{
	(void)state;
	double v[1000];
	for (int i = 0; i < 1000; i++)
		v[i] = 1000 - i;
	double est, lo, hi;
	assert_true(tune_quantile_ci(v, 1000, 0.99, &est, &lo, &hi));
	assert_true(est == 990.0);  /* rank 990 of 1..1000 is the P99 */
	assert_true(lo < est && est < hi); /* the interval must bracket the estimate */
	assert_true(hi <= 1000.0); /* 1000 samples bound the P99 from above */
	double w[10] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };
	assert_true(tune_quantile_ci(w, 10, 0.99, &est, &lo, &hi));
	assert_true(isinf(hi)); /* ten samples cannot bound a P99 from above */
	assert_false(tune_quantile_ci(w, 0, 0.99, &est, &lo, &hi)); /* no samples, no estimate */
}

/* The true best (least CPU that meets 50us) survives every rung under the noise. */
/* A phase's P99 is its runs' median: one run with a stall moves it by one rank, and
 * the interval holds the median (both middle runs when they are even). */
static void test_runs_median(void **state)
{
	double est[3] = { 150, 4000, 160 }, lo[3] = { 140, 3500, 150 }, hi[3] = { 170, 4500, 180 };
	double p99 = 0, plo = 0, phi = 0;

	(void)state;
	assert_true(tune_runs_p99(est, lo, hi, 3, &p99, &plo, &phi));
	assert_true(p99 == 160);    /* not 4000, nor a mean the stall drags up */
	assert_true(plo == 150 && phi == 180);
	double e2[2] = { 150, 4000 }, l2[2] = { 140, 3500 }, h2[2] = { 170, INFINITY };
	assert_true(tune_runs_p99(e2, l2, h2, 2, &p99, &plo, &phi));
	assert_true(p99 == 2075);   /* two runs: their mean */
	assert_true(plo == 140);    /* the lower run's lower end: it may still meet a goal */
	assert_true(isinf(phi));    /* the upper run's upper end: unbounded */
	double e1[1] = { 150 }, l1[1] = { 140 }, h1[1] = { 170 };
	assert_true(tune_runs_p99(e1, l1, h1, 1, &p99, &plo, &phi));
	assert_true(p99 == 150 && plo == 140 && phi == 170);
	p99 = 7;
	assert_false(tune_runs_p99(e1, l1, h1, 0, &p99, &plo, &phi));
	assert_true(p99 == 7);      /* untouched */
}

static void test_halving_keeps_best(void **state)
{
	(void)state;
	struct tune_cand c[NC];
	double p99[NC], cpu[NC];
	for (int i = 0; i < NC; i++) {
		cpu[i] = 0.3 + 0.1 * i;
		p99[i] = i < 5 ? 80 + 10 * i : 40 - i; /* 0..4 miss; 5 is the cheapest that meets */
	}
	setup(c, p99, cpu);
	struct tune_goal g = { .kind = TUNE_GOAL_P99, .p99_us = 50 };
	size_t n = 500, live = NC;
	for (int rung = 0; rung < 6 && live > 1; rung++, n *= 2) {
		for (int i = 0; i < NC; i++)
			if (c[i].alive)
				fill(&c[i], n, p99[i]);
		live = tune_halve(c, NC, &g);
		assert_true(c[5].alive); /* the true best must never be dropped */
		for (int i = 0; i < 5; i++)
			assert_false(c[i].alive); /* a candidate surely over the goal goes first */
	}
	int best, runner;
	assert_true(tune_pick(c, NC, &g, &best, &runner)); /* the best meets the goal */
	assert_int_equal(best, 5);
}

/* Two candidates that cannot be told apart are kept together across the cut. */
static void test_ties_kept(void **state)
{
	(void)state;
	struct tune_cand c[4];
	double s[4][10];
	struct tune_goal g = { .kind = TUNE_GOAL_P99, .p99_us = 50 };
	for (int i = 0; i < 4; i++)
		c[i] = (struct tune_cand){ .busy_poll = false, .cpu = 1.0 + i, .samples = s[i],
					   .alive = true, .p99 = 10, .p99_lo = 5, .p99_hi = 20 };
	c[1].cpu = 1.02; /* within TUNE_TIE_FRAC of c[0]... */
	c[2].cpu = 1.04; /* ...and of c[1]: the cut after two keeps all three */
	size_t left = tune_halve(c, 4, &g);
	assert_int_equal(left, 3); /* the half is two, the third is tied with the second */
	assert_false(c[3].alive); /* a clearly costlier candidate is dropped */
	/* Over the goal: overlapping intervals are tied, a separate one is not. */
	struct tune_cand d[4];
	for (int i = 0; i < 4; i++)
		d[i] = (struct tune_cand){ .cpu = 1, .alive = true, .p99 = 100 + 50 * i,
					   .p99_lo = 90 + 50 * i, .p99_hi = 145 + 50 * i };
	left = tune_halve(d, 4, &g);
	assert_int_equal(left, 3); /* d[2]'s interval overlaps d[1]'s: kept with it */
	assert_false(d[3].alive); /* d[3] lies clear of d[1] */
}

/* An unproven busy-poll candidate is dropped and never picked, even the best. */
static void test_unproven_excluded(void **state)
{
	(void)state;
	struct tune_cand c[3];
	double s[3][1];
	for (int i = 0; i < 3; i++)
		c[i] = (struct tune_cand){ .busy_poll = true, .bprx_per_tx = 1, .cpu = 1 + i,
					   .samples = s[i], .alive = true, .p99 = 30,
					   .p99_lo = 20, .p99_hi = 40 };
	c[0].bprx_per_tx = EV_PROOF_MIN / 2; /* the cheapest, without the kernel's proof */
	struct tune_goal g = { .kind = TUNE_GOAL_P99, .p99_us = 50 };
	int best, runner;
	assert_true(tune_pick(c, 3, &g, &best, &runner));
	assert_int_not_equal(best, 0); /* unproven: never recommended */
	assert_int_not_equal(runner, 0); /* nor offered as the runner-up */
	tune_halve(c, 3, &g);
	assert_false(c[0].alive); /* and no search time is spent on it */
}

/* A goal no candidate meets: false, and the closest candidate. */
static void test_impossible(void **state)
{
	(void)state;
	struct tune_cand c[2] = {
		{ .cpu = 1, .alive = true, .p99 = 90, .p99_lo = 80, .p99_hi = 100 },
		{ .cpu = 2, .alive = true, .p99 = 60, .p99_lo = 55, .p99_hi = 70 },
	};
	struct tune_goal g = { .kind = TUNE_GOAL_P99, .p99_us = 10 };
	int best, runner;
	assert_false(tune_pick(c, 2, &g, &best, &runner)); /* nothing meets 10us */
	assert_int_equal(best, 1); /* the closest is the one with the lowest P99 */
	struct tune_goal t = { .kind = TUNE_GOAL_MAX_TPS, .cpu_budget = 1.5 };
	c[0].tps = 10;
	c[1].tps = 100;
	assert_true(tune_pick(c, 2, &t, &best, &runner)); /* one fits the CPU budget */
	assert_int_equal(best, 0); /* the faster one is over the budget */
}

static void test_plan(void **state)
{
	(void)state;
	unsigned rungs;
	double first;
	assert_true(tune_plan(16, 600, 1, &rungs, &first));
	assert_int_equal(rungs, 5); /* 16, 8, 4, 2, 1 */
	assert_true(fabs(first - 600.0 / 80) < 1e-9); /* each rung costs n * first */
	assert_false(tune_plan(16, 10, 1, &rungs, &first)); /* 10 s is too little for 16 */
}

/* The Pareto front: no point on it is beaten on both P99 and CPU, every point off it is;
 * equal points both stay, and an unmeasured point is neither on it nor beats one. */
static void test_pareto(void **state)
{
	(void)state;
	struct tune_cand c[6] = {
		{ .cpu = 0.5, .p99 = 90 },  /* cheapest: on the front */
		{ .cpu = 1.0, .p99 = 40 },  /* on it */
		{ .cpu = 1.2, .p99 = 50 },  /* beaten by [1] on both */
		{ .cpu = 2.0, .p99 = 20 },  /* fastest: on it */
		{ .cpu = 1.0, .p99 = 40 },  /* equal to [1]: neither beats the other */
		{ .cpu = 0.1, .p99 = NAN }, /* never measured: off, and beats nothing */
	};
	bool on[6];
	assert_int_equal(tune_pareto(c, 6, on), 4);
	assert_true(on[0] && on[1] && on[3] && on[4]);
	assert_false(on[2]); /* 1.2 CPUs for 50 us where 1.0 gives 40 us */
	assert_false(on[5]);
	c[2].cpu = 1.0; /* same CPU as [1], higher P99: still beaten */
	tune_pareto(c, 6, on);
	assert_false(on[2]);
	c[2].p99 = 40; /* now equal to [1] on both: on the front beside it */
	tune_pareto(c, 6, on);
	assert_true(on[2]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ci),
		cmocka_unit_test(test_runs_median),
		cmocka_unit_test(test_halving_keeps_best),
		cmocka_unit_test(test_ties_kept),
		cmocka_unit_test(test_unproven_excluded),
		cmocka_unit_test(test_impossible),
		cmocka_unit_test(test_plan),
		cmocka_unit_test(test_pareto),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
