/* SPDX-License-Identifier: MIT */
/*
 * The open loop's schedule (tools/rr/sched.h), as arithmetic with no clock: fixed
 * gaps exact over a million requests, Poisson gaps and flow picks with the right
 * mean and spread (a fixed seed, so never flaky), the per-flow queues first in
 * first out within their room, and the refusals.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tools/rr/sched.h"

/* Fixed: every gap is 1/rate, flows in turn, and a million gaps later not one ns of drift. */
static void test_fixed(void **state)
{
	struct rr_sched s;
	const uint64_t start = 5000000000ull;

	assert_int_equal(rr_sched_init(&s, 3000, false, 3, 16, 1), 0);
	rr_sched_start(&s, start, 250);
	assert_true(s.clock.next_ns == start + 250);
	for (uint64_t k = 0; k < 1000000; k++) {
		uint64_t due = s.clock.next_ns;

		assert_int_equal(rr_sched_take(&s), (uint32_t)(k % 3));
		/* 1e9 / 3000 = 333333.33.. ns: each due time is the exact one, rounded down */
		assert_true(due == start + (uint64_t)(250 + (double)k * (1e9 / 3000)));
	}
	assert_true(s.clock.next_ns == start + 250 + 333333333333ull);
	rr_sched_free(&s);
}

/*
 * Poisson: exponential gaps (mean 1/rate, a share e^-1 longer than the mean, the
 * coefficient of variation 1) and a flow picked at random, evenly over the flows.
 */
static void test_poisson(void **state)
{
	enum { N = 400000, FLOWS = 4 };
	struct rr_sched s;
	uint64_t per_flow[FLOWS] = { 0 }, longer = 0, prev;
	double sum = 0, sum2 = 0, mean, sd;

	assert_int_equal(rr_sched_init(&s, 10000, true, FLOWS, 16, 42), 0);
	rr_sched_start(&s, 1000, 0);
	prev = s.clock.next_ns;
	for (int i = 0; i < N; i++) {
		uint32_t f = rr_sched_take(&s);
		double gap = (double)(s.clock.next_ns - prev);

		assert_true(f < FLOWS);
		per_flow[f]++;
		sum += gap;
		sum2 += gap * gap;
		longer += gap > 100000;
		prev = s.clock.next_ns;
	}
	mean = sum / N;
	sd = sqrt(sum2 / N - mean * mean);
	assert_true(fabs(mean - 100000) < 1000);          /* 1%: about 6 standard errors */
	assert_true(fabs(sd / mean - 1) < 0.02);
	assert_true(fabs((double)longer / N - exp(-1)) < 0.005);
	for (int f = 0; f < FLOWS; f++)
		assert_true(fabs((double)per_flow[f] / N - 1.0 / FLOWS) < 0.005);
	/* the whole run's rate: N requests in N gaps */
	assert_true(fabs((double)(s.clock.next_ns - 1000) / N - 100000) < 1000);
	rr_sched_free(&s);
}

/* The same seed draws the same schedule; another seed another one. */
static void test_seed(void **state)
{
	struct rr_sched a, b, c;
	int same = 0;

	assert_int_equal(rr_sched_init(&a, 1000, true, 8, 4, 7), 0);
	assert_int_equal(rr_sched_init(&b, 1000, true, 8, 4, 7), 0);
	assert_int_equal(rr_sched_init(&c, 1000, true, 8, 4, 8), 0);
	rr_sched_start(&a, 0, 0);
	rr_sched_start(&b, 0, 0);
	rr_sched_start(&c, 0, 0);
	for (int i = 0; i < 100; i++) {
		uint32_t fa = rr_sched_take(&a), fb = rr_sched_take(&b), fc = rr_sched_take(&c);

		assert_int_equal(fa, fb);
		assert_true(a.clock.next_ns == b.clock.next_ns);
		same += fa == fc && a.clock.next_ns == c.clock.next_ns;
	}
	assert_true(same < 10);
	rr_sched_free(&a);
	rr_sched_free(&b);
	rr_sched_free(&c);
}

/* The queues: first in first out per flow, flows apart, room for cap, reused once popped. */
static void test_queue(void **state)
{
	struct rr_sched s;
	uint64_t due;

	assert_int_equal(rr_sched_init(&s, 100, false, 3, 4, 1), 0);
	assert_false(rr_sched_pop(&s, 0, &due));
	assert_int_equal(rr_sched_push(&s, 1, 10), 0);
	assert_int_equal(rr_sched_push(&s, 2, 20), 0);
	assert_int_equal(rr_sched_push(&s, 1, 11), 0);
	assert_int_equal(rr_sched_push(&s, 1, 12), 0);
	assert_int_equal(rr_sched_waiting(&s), 4);
	assert_int_equal(rr_sched_push(&s, 0, 30), -ENOSPC);
	assert_int_equal(rr_sched_waiting(&s), 4);
	assert_false(rr_sched_pop(&s, 0, &due));
	assert_true(rr_sched_pop(&s, 1, &due) && due == 10);
	assert_int_equal(rr_sched_push(&s, 0, 30), 0); /* the freed room is used again */
	assert_true(rr_sched_pop(&s, 1, &due) && due == 11);
	assert_true(rr_sched_pop(&s, 2, &due) && due == 20);
	assert_false(rr_sched_pop(&s, 2, &due));
	assert_true(rr_sched_pop(&s, 1, &due) && due == 12);
	assert_false(rr_sched_pop(&s, 1, &due));
	assert_true(rr_sched_pop(&s, 0, &due) && due == 30);
	assert_int_equal(rr_sched_waiting(&s), 0);
	/* an emptied queue takes new requests at its tail again */
	assert_int_equal(rr_sched_push(&s, 1, 40), 0);
	assert_int_equal(rr_sched_push(&s, 1, 41), 0);
	assert_true(rr_sched_pop(&s, 1, &due) && due == 40);
	assert_true(rr_sched_pop(&s, 1, &due) && due == 41);
	rr_sched_free(&s);
	rr_sched_free(&s); /* harmless twice */
}

static void test_refusals(void **state)
{
	struct rr_sched s;

	assert_int_equal(rr_sched_init(&s, 0, true, 1, 1, 1), -EINVAL);
	assert_int_equal(rr_sched_init(&s, -5, true, 1, 1, 1), -EINVAL);
	assert_int_equal(rr_sched_init(&s, NAN, true, 1, 1, 1), -EINVAL);
	assert_int_equal(rr_sched_init(&s, 10, true, 0, 1, 1), -EINVAL);
	assert_int_equal(rr_sched_init(&s, 10, true, 1, 0, 1), -EINVAL);
	rr_sched_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixed),
		cmocka_unit_test(test_poisson),
		cmocka_unit_test(test_seed),
		cmocka_unit_test(test_queue),
		cmocka_unit_test(test_refusals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
