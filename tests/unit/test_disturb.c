/* SPDX-License-Identifier: MIT */
/*
 * The disturbance rules (tools/harness/disturb.c) on facts made by hand: an
 * undisturbed side and loop give no line; each fact past its bound, alone, gives
 * its own line; facts not known fire nothing; the bounds themselves are where
 * the rules say.
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

#include "tools/harness/disturb.h"

static struct dist_side calm(void)
{
	return (struct dist_side){ .side = "server", .spins = true, .cpu_pct = 99.5, .runq_pct = 0.2,
				   .steal_pct = 0 };
}

static void calm_side_no_line(void **state)
{
	struct dist_side s = calm();
	char buf[256];

	(void)state;
	if (dist_side_explain(&s, buf, sizeof(buf)) || buf[0])
		fail_msg("an undisturbed side must give no line: got '%s'", buf);
	s.cpu_pct = DIST_SPIN_MIN_PCT;
	s.other_pct = DIST_OTHER_MAX_PCT - 0.1;
	s.runq_pct = DIST_RUNQ_MAX_PCT - 0.1;
	s.steal_pct = DIST_STEAL_MAX_PCT - 0.1;
	if (dist_side_explain(&s, buf, sizeof(buf)))
		fail_msg("at the CPU bound and under the other tasks', wait and steal bounds: not disturbed, got '%s'", buf);
}

static void spinning_short_of_cpu(void **state)
{
	struct dist_side s = calm();
	char buf[256];

	(void)state;
	s.cpu_pct = 48;
	if (!dist_side_explain(&s, buf, sizeof(buf)) || !strstr(buf, "server: a spinning loop thread got 48%") ||
	    !strstr(buf, "under 90%"))
		fail_msg("a spinning mode at 48%% CPU is disturbed, said with the side and bound: got '%s'", buf);
	s.spins = false;
	if (dist_side_explain(&s, buf, sizeof(buf)))
		fail_msg("a mode that sleeps uses what CPU it needs: 48%% is no disturbance, got '%s'", buf);
}

/* Other tasks on the pinned CPUs: a mode that sleeps too, the bound itself included. */
static void other_tasks(void **state)
{
	struct dist_side s = calm();
	char buf[256];

	(void)state;
	s.spins = false;
	s.cpu_pct = 3;
	s.other_pct = DIST_OTHER_MAX_PCT;
	s.runq_pct = DIST_RUNQ_MAX_PCT; /* first match wins: the other tasks are the cause */
	if (!dist_side_explain(&s, buf, sizeof(buf)) ||
	    !strstr(buf, "server: other tasks took 20% of its loop threads' pinned CPUs (20% or more)"))
		fail_msg("other tasks at 20%% of a pinned CPU disturb even a mode that sleeps: got '%s'", buf);
	s.other_pct = DIST_OTHER_MAX_PCT - 0.1;
	s.runq_pct = 0;
	if (dist_side_explain(&s, buf, sizeof(buf)))
		fail_msg("other tasks under the bound are no disturbance: got '%s'", buf);
	s.spins = true;
	s.cpu_pct = 60;
	s.other_pct = 40;
	if (!dist_side_explain(&s, buf, sizeof(buf)) || !strstr(buf, "a spinning loop thread got 60%"))
		fail_msg("a spinning thread short of CPU is said first: got '%s'", buf);
}

static void run_queue_wait(void **state)
{
	struct dist_side s = calm();
	char buf[256];

	(void)state;
	s.spins = false;
	s.runq_pct = DIST_RUNQ_MAX_PCT;
	if (!dist_side_explain(&s, buf, sizeof(buf)) || !strstr(buf, "waited on a run queue for 10%"))
		fail_msg("loop threads waiting 10%% of the interval for a CPU are disturbed: got '%s'", buf);
}

static void steal(void **state)
{
	struct dist_side s = calm();
	char buf[256];

	(void)state;
	s.steal_pct = 7;
	if (!dist_side_explain(&s, buf, sizeof(buf)) || !strstr(buf, "stole 7%"))
		fail_msg("7%% steal on the loop threads' CPUs is a disturbance: got '%s'", buf);
}

static void unknown_fires_nothing(void **state)
{
	struct dist_side s = { .side = "client", .spins = true, .cpu_pct = NAN, .other_pct = NAN, .runq_pct = NAN,
			       .steal_pct = NAN };
	struct dist_loop l = { .closed = true, .tps = NAN, .mean_us = 40, .flows = 1 };
	char buf[256];

	(void)state;
	if (dist_side_explain(&s, buf, sizeof(buf)))
		fail_msg("facts not known must not mark a side disturbed: got '%s'", buf);
	if (dist_loop_explain(&l, buf, sizeof(buf)))
		fail_msg("a loop without a rate must not be marked: got '%s'", buf);
}

/* Little's law for a closed loop: tps x mean latency ~ flows. */
static void closed_loop_consistency(void **state)
{
	/* the figures: 22,662 tx/s on one flow with a mean near 20 us */
	struct dist_loop l = { .closed = true, .tps = 22662, .mean_us = 20, .flows = 1 };
	char buf[256];

	(void)state;
	assert_true(fabs(dist_little(&l) - 0.45324) < 1e-6);
	if (!dist_loop_explain(&l, buf, sizeof(buf)) || !strstr(buf, "0.45 for 1 flow") || !strstr(buf, "descheduled"))
		fail_msg("a loop busy 45%% of the time between transactions is disturbed: got '%s'", buf);
	l = (struct dist_loop){ .closed = true, .tps = 45000, .mean_us = 20, .flows = 1 };
	if (dist_loop_explain(&l, buf, sizeof(buf)))
		fail_msg("tps x mean = 0.9 of one flow is a loop that ran: got '%s'", buf);
	/* four flows: 4 x 0.45 in flight is not 4 */
	l = (struct dist_loop){ .closed = true, .tps = 4 * 22662, .mean_us = 20, .flows = 4 };
	if (!dist_loop_explain(&l, buf, sizeof(buf)) || !strstr(buf, "1.81 for 4 flows"))
		fail_msg("the rule is per flow: 1.81 in flight for 4 flows is disturbed, got '%s'", buf);
	l = (struct dist_loop){ .closed = true, .tps = 4 * 45000, .mean_us = 20, .flows = 4 };
	if (dist_loop_explain(&l, buf, sizeof(buf)))
		fail_msg("3.6 in flight for 4 flows is a loop that ran: got '%s'", buf);
	l = (struct dist_loop){ .closed = true, .tps = 25000, .mean_us = 20, .flows = 1 };
	if (dist_loop_explain(&l, buf, sizeof(buf)))
		fail_msg("the bound itself (0.50) is not disturbed: got '%s'", buf);
	l = (struct dist_loop){ .closed = false, .tps = 1000, .mean_us = 20, .flows = 1 };
	if (dist_loop_explain(&l, buf, sizeof(buf)))
		fail_msg("an open loop's rate is offered, not a loop's own: no rule, got '%s'", buf);
}

static void spinning_modes(void **state)
{
	struct bp_mode m = { 0 };

	(void)state;
	m.policy = BP_POLICY_SPIN;
	assert_true(dist_mode_spins(&m));
	m.policy = BP_POLICY_NAPI;
	assert_false(dist_mode_spins(&m));
	m.policy = BP_POLICY_SQPOLL;
	assert_false(dist_mode_spins(&m));
	m.spin = true;
	assert_true(dist_mode_spins(&m));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(calm_side_no_line),
		cmocka_unit_test(spinning_short_of_cpu),
		cmocka_unit_test(other_tasks),
		cmocka_unit_test(run_queue_wait),
		cmocka_unit_test(steal),
		cmocka_unit_test(unknown_fires_nothing),
		cmocka_unit_test(closed_loop_consistency),
		cmocka_unit_test(spinning_modes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
