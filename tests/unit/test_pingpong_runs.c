/* SPDX-License-Identifier: MIT */
/*
 * pingpong's arithmetic on synthetic samples: a run's figures, the averages and
 * spread over runs (every figure the mean of the runs' figures, the spread the
 * sample standard deviation of the run means), per-round-trip counters, and the
 * breakdown: components that sum to the RTT exactly, and every reason a round
 * trip has none.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tools/pingpong/pingpong.h"

static struct bp_hist hist;

/* A run whose samples are v[0..n) ns. */
static struct pp_run run_of(const uint64_t *v, int n)
{
	struct pp_run r;

	memset(&r, 0, sizeof(r));
	bp_hist_init(&hist);
	for (int i = 0; i < n; i++)
		bp_hist_record(&hist, v[i]);
	pp_run_figures(&hist, &r);
	return r;
}

static void test_run_figures(void **state)
{
	/* 1..100 us: min, max and mean exact; percentiles within the histogram's 1% */
	uint64_t v[100];
	struct pp_run r;

	for (int i = 0; i < 100; i++)
		v[i] = (uint64_t)(i + 1) * 1000;
	r = run_of(v, 100);
	assert_int_equal(r.n, 100);
	assert_float_equal(r.min_us, 1.0, 1e-9);
	assert_float_equal(r.max_us, 100.0, 1e-9);
	assert_float_equal(r.mean_us, 50.5, 1e-9);
	assert_float_equal(r.p50_us, 50.0, 0.5);
	assert_float_equal(r.p99_us, 99.0, 1.0);
	assert_float_equal(r.p999_us, 100.0, 1.0);

	/* no samples: every figure absent, not zero */
	r = run_of(v, 0);
	assert_int_equal(r.n, 0);
	assert_true(isnan(r.mean_us) && isnan(r.min_us) && isnan(r.p99_us));
}

static void test_aggregate(void **state)
{
	/* three runs with means 10, 20, 60 us (one sample each, so every figure = the mean) */
	uint64_t a = 10000, b = 20000, c = 60000;
	struct pp_run runs[4];
	struct pp_agg g;

	runs[0] = run_of(&a, 1);
	runs[1] = run_of(&b, 1);
	runs[2] = run_of(&c, 1);
	pp_runs_aggregate(runs, 3, &g);
	assert_int_equal(g.runs, 3);
	assert_float_equal(g.mean_us, 30.0, 1e-9);      /* (10 + 20 + 60) / 3 */
	assert_float_equal(g.min_us, 30.0, 1e-9);       /* the mean of the mins */
	assert_float_equal(g.mean_lo_us, 10.0, 1e-9);
	assert_float_equal(g.mean_hi_us, 60.0, 1e-9);
	/* sample sd: sqrt(((-20)^2 + (-10)^2 + 30^2) / 2) = sqrt(700) */
	assert_float_equal(g.sd_us, sqrt(700.0), 1e-9);

	/* the mean of run means, not of all samples pooled: a long run weighs as much as a short one */
	{
		uint64_t many[9] = { 10000, 10000, 10000, 10000, 10000, 10000, 10000, 10000, 10000 };
		uint64_t one = 100000;

		runs[0] = run_of(many, 9);
		runs[1] = run_of(&one, 1);
		pp_runs_aggregate(runs, 2, &g);
		assert_float_equal(g.mean_us, 55.0, 1e-9); /* pooled would say 19 */
		assert_float_equal(g.sd_us, sqrt(2 * 45.0 * 45.0), 1e-9);
	}

	/* a run without samples (interrupted before any) is left out, not counted as 0 */
	runs[0] = run_of(&a, 1);
	runs[1] = run_of(&a, 0);
	runs[2] = run_of(&b, 1);
	pp_runs_aggregate(runs, 3, &g);
	assert_int_equal(g.runs, 2);
	assert_float_equal(g.mean_us, 15.0, 1e-9);

	/* one run: no spread yet */
	pp_runs_aggregate(runs, 1, &g);
	assert_int_equal(g.runs, 1);
	assert_float_equal(g.sd_us, 0.0, 0);
	assert_float_equal(g.mean_us, 10.0, 1e-9);

	/* none */
	pp_runs_aggregate(runs + 1, 1, &g);
	assert_int_equal(g.runs, 0);
	assert_true(isnan(g.mean_us) && isnan(g.sd_us));
}

static void test_sides(void **state)
{
	struct evidence a = { .valid = true, .transactions = 100, .syscalls = 400, .busy_poll_rx = 99 };
	struct evidence b = { .valid = true, .transactions = 300, .syscalls = 600, .busy_poll_rx = 1 };
	struct evidence none = { 0 };

	ev_add(&a, &b);
	assert_int_equal(a.transactions, 400);
	assert_float_equal(pp_per_tx(a.syscalls, &a), 2.5, 1e-12);
	assert_float_equal(pp_per_tx(a.busy_poll_rx, &a), 0.25, 1e-12);
	/* a side nobody reported is absent, not zero */
	assert_true(isnan(pp_per_tx(5, &none)));
	none.valid = true;
	assert_true(isnan(pp_per_tx(5, &none))); /* valid but no round trips */
}

/* A complete sample: send at 1000, tx at 1100, rx at 9000, in hand at 9300 (ns). */
static struct pp_bd_sample sample(void)
{
	struct pp_bd_sample s = {
		.seq = 1, .measured = true,
		.have = PP_HAVE_SENT | PP_HAVE_TX | PP_HAVE_REPLY | PP_HAVE_RX | PP_HAVE_SRV |
			PP_HAVE_SRV_SEND,
		.t_send = 1000, .tx_ts = 1100, .rx_ts = 9000, .t_app = 9300,
		.srv_rx = 2000, .srv_proc = 500, .srv_send = 300, .rtt_mono = 8300,
	};
	return s;
}

static void test_components(void **state)
{
	struct pp_bd_sample s = sample();
	uint64_t c[PP_NCOMP], rtt = 0, sum = 0;

	assert_int_equal(pp_bd_components(&s, c, &rtt), -1);
	assert_int_equal(rtt, 8300);
	assert_int_equal(c[PP_C_CLIENT_SEND], 100);
	assert_int_equal(c[PP_C_SERVER_RX], 2000);
	assert_int_equal(c[PP_C_SERVER_PROC], 500);
	assert_int_equal(c[PP_C_SERVER_SEND], 300);
	assert_int_equal(c[PP_C_CLIENT_RX], 300);
	assert_int_equal(c[PP_C_REMAINDER], 8300 - 100 - 2000 - 500 - 300 - 300);
	for (int i = 0; i < PP_NCOMP; i++)
		sum += c[i];
	assert_int_equal(sum, rtt); /* exactly, by construction */

	/* a zero remainder is a remainder, not a missing one */
	s.srv_rx = 2000 + 5100;
	assert_int_equal(pp_bd_components(&s, c, &rtt), -1);
	assert_int_equal(c[PP_C_REMAINDER], 0);
}

static void test_component_refusals(void **state)
{
	struct pp_bd_sample s;
	uint64_t c[PP_NCOMP], rtt;

#define EXPECT(mutate, want)                                              \
	do {                                                              \
		s = sample();                                             \
		mutate;                                                   \
		assert_int_equal(pp_bd_components(&s, c, &rtt), (want)); \
	} while (0)

	EXPECT(s.have &= ~PP_HAVE_TX, PP_MISS_CLIENT_TX);
	EXPECT(s.have &= ~PP_HAVE_RX, PP_MISS_CLIENT_RX);
	EXPECT(s.have &= ~PP_HAVE_SRV, PP_MISS_SERVER_RX);
	EXPECT(s.have |= PP_HAVE_SRV_RX_MISSING, PP_MISS_SERVER_RX);
	EXPECT(s.have &= ~PP_HAVE_SRV_SEND, PP_MISS_SERVER_TX);
	EXPECT(s.have &= ~PP_HAVE_REPLY, PP_MISS_ORDER);
	/* the clock went backwards somewhere */
	EXPECT(s.tx_ts = 900, PP_MISS_ORDER);
	EXPECT(s.rx_ts = 1050, PP_MISS_ORDER);
	EXPECT(s.t_app = 8999, PP_MISS_ORDER);
	/* the measured parts do not fit in the RTT: refused, never clamped to 0 */
	EXPECT(s.srv_rx = 7201, PP_MISS_ORDER);
#undef EXPECT
}

static void test_accumulate(void **state)
{
	struct pp_bd_acc *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	struct pp_bd_sample s = sample();
	double sum_means = 0;

	assert_non_null(a);
	assert_non_null(b);
	pp_bd_init(a);
	pp_bd_init(b);
	pp_bd_add(a, &s);
	s.t_app = 19300; /* another RTT: 18300 */
	s.rtt_mono = 18300;
	pp_bd_add(a, &s);
	s.have &= ~PP_HAVE_TX;
	pp_bd_add(a, &s);
	s.measured = false; /* warm-up: not offered at all */
	pp_bd_add(a, &s);
	assert_int_equal(a->samples, 3);
	assert_int_equal(a->complete, 2);
	assert_int_equal(a->miss[PP_MISS_CLIENT_TX], 1);
	/* the means of the components sum to the mean RTT (the histograms' sums are exact) */
	for (int i = 0; i < PP_NCOMP; i++)
		sum_means += bp_hist_mean(&a->comp[i]);
	assert_float_equal(sum_means, bp_hist_mean(&a->rtt), 1e-6);
	assert_float_equal(bp_hist_mean(&a->rtt), 13300.0, 1e-9);
	assert_int_equal(a->rtt_mono_sum, 8300 + 18300);

	pp_bd_merge(b, a);
	pp_bd_merge(b, a);
	assert_int_equal(b->samples, 6);
	assert_int_equal(b->complete, 4);
	assert_int_equal(b->miss[PP_MISS_CLIENT_TX], 2);
	assert_int_equal(b->rtt.count, 4);
	for (int i = 0; i < PP_NCOMP; i++) {
		assert_non_null(pp_comp_name(i));
		assert_non_null(pp_comp_key(i));
	}
	for (int i = 0; i < PP_NMISS; i++)
		assert_non_null(pp_miss_text(i));
	free(a);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_run_figures),
		cmocka_unit_test(test_aggregate),
		cmocka_unit_test(test_sides),
		cmocka_unit_test(test_components),
		cmocka_unit_test(test_component_refusals),
		cmocka_unit_test(test_accumulate),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
