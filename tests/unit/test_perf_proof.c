/* SPDX-License-Identifier: MIT */
/*
 * perf's proof per I/O (perf_unproven), each side on its own, from results made by
 * hand: the host's busy-poll mode against its BusyPollRxPackets per I/O, our
 * target's poll mode against its polls per I/O, its busy-poll mode against its
 * namespace's BusyPollRxPackets per I/O, all with the tools' one threshold
 * (EV_PROOF_MIN, the threshold itself being proof, as compare's). A side that
 * does not poll, a target whose counters or poll period are not known, and a run
 * with no I/O are never flagged.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "tools/perf/perf.h"

#define IOS 100000ull

struct proof_case {
	const char *what;
	const char *host_mode;
	double host_bprx;          /* per I/O */
	bool target;               /* its counters are known (we spawned it) */
	bool poll_known;
	uint32_t poll_us;
	double polls;              /* per I/O */
	bool target_busy;
	double target_bprx;        /* per I/O */
	unsigned want;
};

static const struct proof_case cases[] = {
	{ "a blocking host, no target counters", "epoll:block", 0, false, false, 0, 0, false, 0, 0 },
	{ "a busy-polling host with no proof", "epoll:napi", 0, false, false, 0, 0, false, 0, PERF_UNPROVEN_HOST },
	{ "a trace of host polling is no proof", "epoll:napi", EV_PROOF_MIN / 2, false, false, 0, 0, false, 0,
	  PERF_UNPROVEN_HOST },
	{ "the threshold itself is proof", "epoll:napi", EV_PROOF_MIN, false, false, 0, 0, false, 0, 0 },
	{ "a proven host", "epoll:napi", 1.0, false, false, 0, 0, false, 0, 0 },
	{ "target poll mode that never polled", "epoll:block", 0, true, true, 50, 0, false, 0, PERF_UNPROVEN_TARGET_POLL },
	{ "target poll mode, a trace of polls", "epoll:block", 0, true, true, 50, EV_PROOF_MIN / 2, false, 0,
	  PERF_UNPROVEN_TARGET_POLL },
	{ "target poll mode that polled", "epoll:block", 0, true, true, 50, 3.0, false, 0, 0 },
	{ "target poll mode off: no polls expected", "epoll:block", 0, true, true, 0, 0, false, 0, 0 },
	{ "an older target that does not say its poll period", "epoll:block", 0, true, false, 50, 0, false, 0, 0 },
	{ "a target's busy-poll mode with no proof", "epoll:block", 0, true, true, 0, 0, true, 0,
	  PERF_UNPROVEN_TARGET_BUSY },
	{ "a target's busy-poll mode, proven", "epoll:block", 0, true, true, 0, 0, true, 0.5, 0 },
	{ "every side unproven", "epoll:napi", 0, true, true, 50, 0, true, 0,
	  PERF_UNPROVEN_HOST | PERF_UNPROVEN_TARGET_POLL | PERF_UNPROVEN_TARGET_BUSY },
	{ "counters of a target we did not spawn are not known", "epoll:block", 0, false, true, 50, 0, true, 0, 0 },
};

static struct perf_result r;

static void fill(const struct proof_case *c, uint64_t ios)
{
	char err[200];

	memset(&r, 0, sizeof(r));
	assert_int_equal(bp_mode_parse(c->host_mode, &r.opts.mode, err, sizeof(err)), 0);
	r.rd.ios = ios;
	r.initiator.valid = true;
	r.initiator.busy_poll_rx = (uint64_t)(c->host_bprx * (double)ios + 0.5);
	r.target.valid = c->target;
	r.target.poll_known = c->poll_known;
	r.target.poll_period_us = c->poll_us;
	r.target.polls = (uint64_t)(c->polls * (double)ios + 0.5);
	r.target.busy_poll_mode = c->target_busy;
	r.target.busy_poll_rx = (uint64_t)(c->target_bprx * (double)ios + 0.5);
}

static void test_cases(void **state)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fill(&cases[i], IOS);
		if (perf_unproven(&r) != cases[i].want)
			fail_msg("%s: flags %#x, want %#x", cases[i].what, perf_unproven(&r), cases[i].want);
	}
}

/* No I/O: nothing to judge, whatever the modes. */
static void test_no_io(void **state)
{
	fill(&cases[sizeof(cases) / sizeof(cases[0]) - 2], 0);
	assert_int_equal(perf_unproven(&r), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cases),
		cmocka_unit_test(test_no_io),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
