/* SPDX-License-Identifier: MIT */
/* Timers: heap order under random starts and stops, and firing order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/internal.h"

#define N 500

static uint64_t fired[N];
static int nfired;

static void on_fire(struct bp_loop *loop, void *arg)
{
	fired[nfired++] = ((struct bp_timer *)arg)->deadline_ns;
}

static void test_fires_in_deadline_order(void **state)
{
	static struct bp_loop loop;
	static struct bp_timer t[N];
	uint32_t seed = 12345;
	int armed = 0;

	memset(&loop, 0, sizeof(loop));
	nfired = 0;
	for (int i = 0; i < N; i++) {
		seed = seed * 1103515245u + 12345u;
		t[i].deadline_ns = 1000 + (seed >> 8) % 100000;
		t[i].fn = on_fire;
		t[i].arg = &t[i];
		assert_int_equal(bp_timer_heap_push(&loop.timers, &t[i]), 0);
	}
	/* Stop every third one, including ones in the middle of the heap. */
	for (int i = 0; i < N; i += 3)
		bp_timer_heap_remove(&loop.timers, &t[i]);
	for (int i = 0; i < N; i++) {
		if (i % 3 == 0)
			assert_false(bp_timer_armed(&t[i]));
		else {
			assert_true(bp_timer_armed(&t[i]));
			armed++;
		}
	}
	/* Nothing is due before the earliest deadline. */
	assert_int_equal(bp_timers_run(&loop, 999), 0);
	{
		int due = 0, early, late;

		for (int i = 0; i < N; i++)
			if (i % 3 && t[i].deadline_ns <= 50000)
				due++;
		early = bp_timers_run(&loop, 50000);
		assert_int_equal(early, due);
		late = bp_timers_run(&loop, UINT64_MAX);
		assert_int_equal(early + late, armed);
	}
	assert_int_equal(nfired, armed);
	for (int i = 1; i < nfired; i++)
		assert_true(fired[i - 1] <= fired[i]);
	assert_null(bp_timer_heap_top(&loop.timers));
	bp_timer_heap_free(&loop.timers);
}

static struct bp_timer rearm;
static int rearm_count;

static void on_rearm(struct bp_loop *loop, void *arg)
{
	rearm_count++;
	/* Restarting from the callback lands in the future, so the run ends. */
	rearm.deadline_ns += 10;
	bp_timer_heap_push(&loop->timers, &rearm);
}

static void test_restart_from_callback_terminates(void **state)
{
	static struct bp_loop loop;

	memset(&loop, 0, sizeof(loop));
	rearm_count = 0;
	rearm.deadline_ns = 100;
	rearm.fn = on_rearm;
	assert_int_equal(bp_timer_heap_push(&loop.timers, &rearm), 0);
	assert_int_equal(bp_timers_run(&loop, 135), 4); /* 100, 110, 120, 130 */
	assert_int_equal(rearm_count, 4);
	assert_true(bp_timer_armed(&rearm));
	bp_timer_heap_free(&loop.timers);
	assert_false(bp_timer_armed(&rearm));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fires_in_deadline_order),
		cmocka_unit_test(test_restart_from_callback_terminates),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
