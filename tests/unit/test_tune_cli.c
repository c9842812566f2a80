/* SPDX-License-Identifier: MIT */
/*
 * busypoll tune's pure parts: the P99 interval from a histogram agrees with the one
 * from the samples themselves; a candidate's figures from its runs, a stalled run not
 * setting its P99; --goal, the option rules and --fix; the space (the
 * baselines first, out of the search with --modes); the one line for a goal no
 * candidate meets; the journal's sysctl line read back as written.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <busypoll/hist.h>

#include "tools/agent/journal.h"
#include "tools/tune/tune.h"

#define N 5000

static uint64_t rng = 0x2545f4914f6cdd1dull;

static double uniform(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return ((rng >> 11) + 0.5) / 9007199254740992.0;
}

static void near(double a, double b)
{
	if (fabs(a - b) > 0.02 * fabs(b) + 0.01)
		fail_msg("%f is not within 2%% of %f", a, b);
}

/* The histogram's interval is the samples' own, within the histogram's bucket error. */
static void test_hist_ci(void **state)
{
	static double v[N];
	struct bp_hist *h = calloc(1, sizeof(*h));
	double est, lo, hi, e2, l2, h2;

	(void)state;
	assert_non_null(h);
	bp_hist_init(h);
	for (int i = 0; i < N; i++) {
		v[i] = 10 - 40 * log(uniform()); /* us */
		bp_hist_record(h, (uint64_t)(v[i] * 1000));
	}
	assert_true(tune_quantile_ci(v, N, 0.99, &est, &lo, &hi));
	assert_true(tune_hist_ci(h, 0.99, &e2, &l2, &h2));
	near(e2, est);
	near(l2, lo);
	near(h2, hi);
	assert_true(l2 < e2 && e2 < h2);
	/* too few to bound the P99 from above */
	bp_hist_init(h);
	for (int i = 0; i < 50; i++)
		bp_hist_record(h, 1000 + i);
	assert_true(tune_hist_ci(h, 0.99, &e2, &l2, &h2));
	assert_true(isinf(h2));
	bp_hist_init(h);
	assert_false(tune_hist_ci(h, 0.99, &e2, &l2, &h2));
	free(h);
}

/*
 * A candidate's figures from three runs, one of them with a stall that held up 5% of
 * its requests for 4 ms: the P99 is the median run's, where the three runs' latencies
 * pooled would put it in the stall; CPU and tx/s are over the runs' time.
 */
static void test_figs_stall(void **state)
{
	struct bp_hist *h = calloc(1, sizeof(*h)), *pool = calloc(1, sizeof(*pool));
	struct tune_figs *f = calloc(1, sizeof(*f));
	double est, lo, hi;

	(void)state;
	assert_non_null(h);
	assert_non_null(pool);
	assert_non_null(f);
	bp_hist_init(pool);
	for (int run = 0; run < 3; run++) {
		bp_hist_init(h);
		for (int i = 0; i < 10000; i++) {
			double us = run == 1 && i % 20 == 0 ? 4000 : 10 - 30 * log(uniform());
			bp_hist_record(h, (uint64_t)(us * 1000));
		}
		bp_hist_merge(pool, h);
		assert_true(tune_figs_add(f, h, 1.0, run == 1 ? 1.0 : 0.5, 10000, 2.0, 3.0));
	}
	tune_figs_view(f, true, "epoll:napi");
	assert_int_equal(f->nruns, 3);
	assert_true(f->run_p99[1] > 3000);  /* the stalled run's own P99 is the stall's */
	assert_true(tune_hist_ci(pool, 0.99, &est, &lo, &hi));
	assert_true(est > 3000);            /* pooled, the stall would be the P99 */
	assert_true(f->c.p99 > 100 && f->c.p99 < 300);
	assert_true(f->c.p99_lo <= f->c.p99 && f->c.p99 <= f->c.p99_hi && f->c.p99_hi < 300);
	near(f->c.cpu, 2.0 / 3.0);
	near(f->c.tps, 10000);
	near(f->c.bprx_per_tx, 2.0);        /* the lesser end's */
	assert_true(f->latencies == 30000 && f->c.nsamples == 30000);
	/* an empty run adds nothing */
	bp_hist_init(h);
	assert_false(tune_figs_add(f, h, 1.0, 1.0, 0, 0, 0));
	assert_int_equal(f->nruns, 3);
	free(h);
	free(pool);
	free(f);
}

static void test_goal(void **state)
{
	struct tune_goal g = { 0 };
	char err[200];

	(void)state;
	assert_int_equal(tune_parse_goal("--goal", "p99=50us", &g, err, sizeof(err)), 0);
	assert_int_equal(g.kind, TUNE_GOAL_P99);
	assert_true(g.p99_us == 50);
	assert_int_equal(tune_parse_goal("--goal", "p99=0.2ms", &g, err, sizeof(err)), 0);
	assert_true(fabs(g.p99_us - 200) < 1e-9);
	assert_int_equal(tune_parse_goal("--goal", "p99=75", &g, err, sizeof(err)), 0);
	assert_true(g.p99_us == 75);
	assert_int_equal(tune_parse_goal("--goal", "max-tps", &g, err, sizeof(err)), 0);
	assert_int_equal(g.kind, TUNE_GOAL_MAX_TPS);
	assert_int_not_equal(tune_parse_goal("--goal", "p99=", &g, err, sizeof(err)), 0);
	assert_int_not_equal(tune_parse_goal("--goal", "p99=fast", &g, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "--goal p99=fast"));
	assert_int_not_equal(tune_parse_goal("--goal", "p99=0us", &g, err, sizeof(err)), 0);
	assert_int_not_equal(tune_parse_goal("--goal", "p50=1us", &g, err, sizeof(err)), 0);
}

static int parse(struct tune_opts *o, char *err, size_t len, const char *a1, const char *a2, const char *a3,
		 const char *a4)
{
	char *argv[] = { "tune", (char *)a1, (char *)a2, (char *)a3, (char *)a4, NULL };
	int argc = 1;

	while (argv[argc])
		argc++;
	return tune_parse_opts(argc, argv, o, err, len);
}

static void test_opts(void **state)
{
	static struct tune_opts o;
	char err[300];

	(void)state;
	assert_int_not_equal(parse(&o, err, sizeof(err), "--rate", "1000", NULL, NULL), 0);
	assert_non_null(strstr(err, "--goal is missing"));
	assert_int_not_equal(parse(&o, err, sizeof(err), "--goal", "max-tps", NULL, NULL), 0);
	assert_non_null(strstr(err, "needs --cpu-budget"));
	assert_int_not_equal(parse(&o, err, sizeof(err), "--goal", "p99=5us", "--cpu-budget", "1"), 0);
	assert_int_equal(parse(&o, err, sizeof(err), "--goal", "max-tps", "--cpu-budget", "1.5"), 0);
	assert_true(o.goal.cpu_budget == 1.5);
	assert_int_not_equal(parse(&o, err, sizeof(err), "--goal", "p99=5us", "--fix", "usecs"), 0);
	assert_int_equal(parse(&o, err, sizeof(err), "--goal", "p99=5us", "--rate", "20k"), 0);
	assert_true(o.rate == 20000 && o.budget_s == 120);
	/* --remote: compare's rules, the data path's address resolved before any work */
	assert_int_not_equal(parse(&o, err, sizeof(err), "--goal", "p99=5us", "--server-addr", "127.0.0.1"), 0);
	assert_non_null(strstr(err, "--server-addr goes with --remote HOST"));
	assert_int_not_equal(parse(&o, err, sizeof(err), "--goal", "p99=5us", "--remote", "127.0.0.1:1"), 0);
	assert_non_null(strstr(err, "--key-file"));
	assert_int_equal(parse(&o, err, sizeof(err), "--goal", "p99=5us", "--remote", "user@127.0.0.1"), 0);
	assert_string_equal(o.server_ip, "127.0.0.1");
	assert_int_not_equal(parse(&o, err, sizeof(err), "--goal", "p99=5us", "--remote", "bp-no-such-host.invalid"), 0);
	assert_non_null(strstr(err, "does not resolve here"));
}

static void test_fix(void **state)
{
	(void)state;
	assert_true(tune_has_fix("epoll:napi,usecs=64,budget=8", -1, "usecs=64"));
	assert_false(tune_has_fix("epoll:napi,usecs=64,budget=8", -1, "usecs=16"));
	assert_false(tune_has_fix("epoll:block", -1, "usecs=64"));
	assert_true(tune_has_fix("epoll:napi,usecs=64,budget=8,prefer", -1, "prefer=1"));
	assert_true(tune_has_fix("epoll:block", 50, "busy_read=50"));
	assert_false(tune_has_fix("epoll:block", -1, "busy_read=50"));
	assert_false(tune_has_fix("epoll:block", 50, "busy_poll=20"));
}

/* --keys: the space narrowed to the candidates that set a named key, whatever its value. */
static void test_keys(void **state)
{
	static struct tune_report r;
	char err[300];

	(void)state;
	assert_true(tune_has_key("epoll:napi,usecs=64,budget=8", -1, "usecs"));
	assert_true(tune_has_key("epoll:napi,usecs=64,budget=8,prefer", -1, "prefer"));
	assert_false(tune_has_key("epoll:napi,usecs=64,budget=8", -1, "prefer"));
	assert_false(tune_has_key("epoll:napi,usecs=64,budget=8", -1, "use"));
	assert_false(tune_has_key("epoll:spin", -1, "spin")); /* the policy is no key */
	assert_true(tune_has_key("epoll:block", 50, "busy_read"));
	assert_false(tune_has_key("epoll:block", -1, "busy_poll"));
	assert_true(tune_key_known("usecs") && tune_key_known("gro-flush") && tune_key_known("busy_poll"));
	assert_false(tune_key_known("usec") || tune_key_known("") || tune_key_known("usecs=64"));
	memset(&r, 0, sizeof(r));
	assert_int_not_equal(parse(&r.opts, err, sizeof(err), "--goal", "p99=5us", "--keys", "usecs,rx-frames"), 0);
	assert_non_null(strstr(err, "--keys usecs,rx-frames: rx-frames is not a key of any mode"));
	memset(&r, 0, sizeof(r));
	{
		char *argv[] = { "tune", "--goal", "p99=5us", "--modes", "epoll:napi,usecs=64,budget=8;epoll:spin;epoll:block",
				 "--keys", "usecs", NULL };

		assert_int_equal(tune_parse_opts(7, argv, &r.opts, err, sizeof(err)), 0);
	}
	assert_int_equal(tune_space(&r), 1); /* epoll:napi alone sets usecs */
	for (int i = 0; i < r.n; i++)
		assert_true(r.pt[i].in_search == !strcmp(r.pt[i].mode_text, "epoll:napi,usecs=64,budget=8"));
	memset(&r, 0, sizeof(r));
	assert_int_equal(parse(&r.opts, err, sizeof(err), "--goal", "p99=5us", "--keys", "busy_read"), 0);
	assert_int_equal(tune_space(&r), 1); /* the recipe alone */
	assert_true(r.pt[1].role == TUNE_RECIPE && r.pt[1].in_search && !r.pt[0].in_search);
}

static void test_space(void **state)
{
	static struct tune_report r;
	char err[300];

	(void)state;
	memset(&r, 0, sizeof(r));
	assert_int_equal(parse(&r.opts, err, sizeof(err), "--goal", "p99=5us", "--modes",
			       "epoll:napi,usecs=64,budget=8;epoll:block"), 0);
	assert_int_equal(tune_space(&r), 2); /* the napi mode, and epoll:block named by --modes */
	assert_int_equal(r.n, 3);
	assert_int_equal(r.pt[0].role, TUNE_BLOCK);
	assert_true(r.pt[0].in_search);
	assert_int_equal(r.pt[1].role, TUNE_RECIPE);
	assert_false(r.pt[1].in_search);
	assert_int_equal(r.pt[1].sysctl_usecs, TUNE_RECIPE_USECS);
	assert_true(r.pt[2].in_search);
	memset(&r, 0, sizeof(r));
	assert_int_equal(parse(&r.opts, err, sizeof(err), "--goal", "p99=5us", "--fix", "busy_read=50"), 0);
	assert_int_equal(tune_space(&r), 1); /* the recipe only */
	assert_true(r.pt[1].in_search);
}

static void test_verdict(void **state)
{
	static struct tune_report r;
	char line[400];

	(void)state;
	memset(&r, 0, sizeof(r));
	r.opts.goal = (struct tune_goal){ .kind = TUNE_GOAL_P99, .p99_us = 20 };
	r.n = 1;
	snprintf(r.pt[0].label, sizeof(r.pt[0].label), "epoll:spin");
	r.pt[0].confirm.seconds = 1;
	r.pt[0].confirm.c.p99 = 32.5;
	r.best = 0;
	r.runner = -1;
	tune_verdict(&r, line, sizeof(line));
	assert_string_equal(line, "no candidate meets p99 <= 20 us: the closest, epoll:spin, has P99 32.5 us, "
				  "12.5 us over");
	r.met = true;
	assert_string_equal(tune_verdict(&r, line, sizeof(line)), "");
	/* nothing left: how many failed and how many were unproven */
	r.met = false;
	r.best = -1;
	r.search_best = -1;
	r.n = 3;
	r.pt[0].in_search = r.pt[1].in_search = r.pt[2].in_search = true;
	r.pt[0].failed = true;
	r.pt[1].search.seconds = 1;
	r.pt[1].search.c.busy_poll = true;
	r.pt[1].search.c.bprx_per_tx = 0;
	r.pt[2].search.seconds = 1;
	r.pt[2].search.c.busy_poll = false;
	tune_verdict(&r, line, sizeof(line));
	assert_non_null(strstr(line, ": 1 failed or could not keep up"));
	assert_non_null(strstr(line, ", 1 busy-polled without BusyPollRxPackets"));
	/* the search's winner failed in the confirmation: said, with its error */
	r.search_best = 0;
	snprintf(r.pt[0].label, sizeof(r.pt[0].label), "epoll:napi");
	snprintf(r.pt[0].error, sizeof(r.pt[0].error), "cannot keep up");
	tune_verdict(&r, line, sizeof(line));
	assert_string_equal(line, "no candidate is left to recommend: the search's winner, epoll:napi, failed in "
				  "the confirmation: cannot keep up");
}

static void test_journal_sysctl(void **state)
{
	struct jentry e = { .kind = J_SYSCTL, .value = 50 }, back;
	char line[200];

	(void)state;
	snprintf(e.knob, sizeof(e.knob), "busy_read");
	assert_int_equal(jentry_format(&e, line, sizeof(line)), 0);
	assert_string_equal(line, "sysctl net.core busy_read=50");
	assert_int_equal(jentry_parse(line, &back), 0);
	assert_int_equal(back.kind, J_SYSCTL);
	assert_string_equal(back.knob, "busy_read");
	assert_true(back.value == 50);
	assert_int_not_equal(jentry_parse("sysctl net.core somaxconn=5", &back), 0);
	assert_int_not_equal(jentry_parse("sysctl net.ipv4 busy_read=5", &back), 0);
	assert_int_not_equal(jentry_parse("sysctl net.core busy_read=5x", &back), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hist_ci),
		cmocka_unit_test(test_figs_stall),
		cmocka_unit_test(test_goal),
		cmocka_unit_test(test_opts),
		cmocka_unit_test(test_fix),
		cmocka_unit_test(test_keys),
		cmocka_unit_test(test_space),
		cmocka_unit_test(test_verdict),
		cmocka_unit_test(test_journal_sysctl),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
