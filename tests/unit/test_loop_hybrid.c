/* SPDX-License-Identifier: MIT */
/*
 * The hybrid wait policy and timers, by the loop's own counters (time in waits
 * that could sleep versus polls), never by how long anything took: a hybrid loop
 * polls, not sleeps, up to a timer due within its period; a timer that ran opens
 * the period again, as arriving work does; past the period, or with no timer
 * near, it sleeps. (An open loop's sender on a hybrid loop keeps its schedule.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <busypoll/loop.h>

static int fired;

static void on_timer(struct bp_loop *loop, void *arg)
{
	(void)loop;
	(void)arg;
	fired++;
}

static struct bp_loop *hybrid(const char *text)
{
	struct bp_mode m;
	struct bp_loop *loop;

	assert_int_equal(bp_mode_parse(text, &m, NULL, 0), 0);
	assert_int_equal(bp_loop_create(&loop, &m), 0);
	return loop;
}

/* A timer due within the period: every wait until it fires is a poll. */
static void test_polls_up_to_a_near_timer(void **state)
{
	struct bp_loop *loop = hybrid("epoll:hybrid,period=10000000"); /* 10 s */
	struct bp_timer t = { 0 };
	int passes = 0;

	fired = 0;
	assert_int_equal(bp_timer_start(loop, &t, 20000, on_timer, NULL), 0); /* 20 ms */
	while (!fired && passes++ < 100000000)
		assert_true(bp_loop_run_once(loop, -1) >= 0);
	assert_int_equal(fired, 1);
	assert_true(bp_loop_counters(loop)->sleep_ns == 0); /* not one wait that could sleep */
	assert_true(bp_loop_counters(loop)->waits > 1);
	bp_loop_destroy(loop);
}

/* After a timer ran, the loop polls on (its period opened) rather than sleeping to the cap. */
static void test_timer_opens_the_period(void **state)
{
	struct bp_loop *loop = hybrid("epoll:hybrid,period=10000000");
	struct bp_timer t = { 0 };

	fired = 0;
	assert_int_equal(bp_timer_start(loop, &t, 0, on_timer, NULL), 0);
	assert_true(bp_loop_run_once(loop, -1) >= 0);
	assert_int_equal(fired, 1);
	/* nothing arrived, no timer left: without the timer's work the cap would be slept */
	for (int i = 0; i < 10; i++)
		assert_true(bp_loop_run_once(loop, 200000) >= 0);
	assert_true(bp_loop_counters(loop)->sleep_ns == 0);
	bp_loop_destroy(loop);
}

/* A timer further than the period, and nothing else: the loop sleeps (its cap, here). */
static void test_sleeps_past_the_period(void **state)
{
	struct bp_loop *loop = hybrid("epoll:hybrid,period=1");
	struct bp_timer t = { 0 };

	fired = 0;
	assert_int_equal(bp_timer_start(loop, &t, 10000000, on_timer, NULL), 0); /* 10 s away */
	assert_true(bp_loop_run_once(loop, 1000) >= 0);
	assert_int_equal(fired, 0);
	assert_true(bp_loop_counters(loop)->sleep_ns > 0);
	bp_timer_stop(loop, &t);
	bp_loop_destroy(loop);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_polls_up_to_a_near_timer),
		cmocka_unit_test(test_timer_opens_the_period),
		cmocka_unit_test(test_sleeps_past_the_period),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
