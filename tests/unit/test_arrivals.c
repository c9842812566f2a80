/* SPDX-License-Identifier: MIT */
/*
 * The open loop's arrival clock (tools/harness/arrivals.h), shared by rr --rate and
 * perf --rate_iops, as arithmetic with no clock: a take returns the due time it took
 * and moves on by one gap; what was due by a time and not taken is counted (fixed
 * and Poisson); refusals. rr's schedule over it is test_rr_sched.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tools/harness/arrivals.h"

static void test_take(void **state)
{
	struct arrivals a;

	assert_int_equal(arrivals_init(&a, 1000, false, 1), 0);
	arrivals_start(&a, 10000, 500);
	assert_true(a.next_ns == 10500);
	assert_true(arrivals_take(&a) == 10500);
	assert_true(a.next_ns == 10500 + 1000000);
	assert_true(arrivals_take(&a) == 1010500);
	assert_true(a.k == 2);
}

/* behind: every due time up to now (inclusive) not taken yet, and the clock past now after. */
static void test_behind(void **state)
{
	struct arrivals a;

	assert_int_equal(arrivals_init(&a, 1000, false, 1), 0); /* a gap of 1 ms */
	arrivals_start(&a, 0, 0);
	assert_true(arrivals_behind(&a, 0) == 1);               /* the one due at 0 */
	assert_true(arrivals_behind(&a, 999999) == 0);
	assert_true(arrivals_behind(&a, 10000000) == 10);        /* 1 ms .. 10 ms */
	assert_true(a.next_ns == 11000000);
	arrivals_take(&a);
	assert_true(arrivals_behind(&a, 11999999) == 0);
	/* Poisson: about rate x time, and the clock is past the time after */
	assert_int_equal(arrivals_init(&a, 100000, true, 9), 0);
	arrivals_start(&a, 0, 0);
	{
		uint64_t n = arrivals_behind(&a, 1000000000ull);

		assert_true(n > 99000 && n < 101000);
		assert_true(a.next_ns > 1000000000ull);
	}
	/* a clock never started or initialised counts nothing */
	{
		struct arrivals z = { 0 };

		assert_true(arrivals_behind(&z, 5) == 0);
	}
}

static void test_refusals(void **state)
{
	struct arrivals a;

	assert_int_equal(arrivals_init(&a, 0, false, 1), -EINVAL);
	assert_int_equal(arrivals_init(&a, -1, true, 1), -EINVAL);
	assert_int_equal(arrivals_init(&a, NAN, false, 1), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_take),
		cmocka_unit_test(test_behind),
		cmocka_unit_test(test_refusals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
