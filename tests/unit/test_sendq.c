/* SPDX-License-Identifier: MIT */
/* The connection send queue: order, compaction, and the pinning rule. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/sendq.h"

static void fill(uint8_t *p, size_t n, uint8_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed + i * 3);
}

static void test_push_consume_in_order(void **state)
{
	struct bp_sendq q = { 0 };
	uint8_t a[100], b[5000];

	fill(a, sizeof(a), 1);
	fill(b, sizeof(b), 9);
	assert_int_equal(bp_sendq_push(&q, a, sizeof(a)), 0);
	assert_int_equal(bp_sendq_push(&q, b, sizeof(b)), 0);
	assert_int_equal(bp_sendq_len(&q), sizeof(a) + sizeof(b));
	assert_memory_equal(bp_sendq_data(&q), a, sizeof(a));
	bp_sendq_consume(&q, 40);
	assert_memory_equal(bp_sendq_data(&q), a + 40, 60);
	bp_sendq_consume(&q, 60);
	assert_memory_equal(bp_sendq_data(&q), b, sizeof(b));
	bp_sendq_consume(&q, sizeof(b));
	assert_int_equal(bp_sendq_len(&q), 0);
	/* Empty and unpinned: offsets reset so the buffer is reused from the start. */
	assert_int_equal(q.head, 0);
	bp_sendq_free(&q);
}

static void test_compacts_without_growing(void **state)
{
	struct bp_sendq q = { 0 };
	uint8_t big[3000], more[2000];
	size_t cap;

	fill(big, sizeof(big), 2);
	fill(more, sizeof(more), 5);
	assert_int_equal(bp_sendq_push(&q, big, sizeof(big)), 0);
	cap = q.cap;
	bp_sendq_consume(&q, 2500);
	/* 500 live + 2000 new fit in the capacity once the live bytes slide down. */
	assert_int_equal(bp_sendq_push(&q, more, sizeof(more)), 0);
	assert_int_equal(q.cap, cap);
	assert_memory_equal(bp_sendq_data(&q), big + 2500, 500);
	assert_memory_equal(bp_sendq_data(&q) + 500, more, sizeof(more));
	bp_sendq_free(&q);
}

static void test_pinned_bytes_never_move(void **state)
{
	struct bp_sendq q = { 0 };
	uint8_t first[4000], second[10000], third[70000];
	const uint8_t *inflight;

	fill(first, sizeof(first), 3);
	fill(second, sizeof(second), 4);
	fill(third, sizeof(third), 6);
	assert_int_equal(bp_sendq_push(&q, first, sizeof(first)), 0);
	bp_sendq_consume(&q, 1000);
	bp_sendq_pin(&q);
	inflight = bp_sendq_data(&q); /* what a completion backend's send points at */
	/* Growing while pinned must keep the in-flight bytes where they are. */
	assert_int_equal(bp_sendq_push(&q, second, sizeof(second)), 0);
	assert_non_null(q.retired);
	assert_memory_equal(inflight, first + 1000, 3000);
	assert_int_equal(bp_sendq_push(&q, third, sizeof(third)), 0);
	assert_memory_equal(inflight, first + 1000, 3000);
	/* The send completed partially: consume and unpin. */
	bp_sendq_consume(&q, 3000);
	bp_sendq_unpin(&q);
	assert_null(q.retired);
	assert_int_equal(bp_sendq_len(&q), sizeof(second) + sizeof(third));
	assert_memory_equal(bp_sendq_data(&q), second, sizeof(second));
	assert_memory_equal(bp_sendq_data(&q) + sizeof(second), third, sizeof(third));
	bp_sendq_free(&q);
}

static void test_pinned_consume_keeps_offsets(void **state)
{
	struct bp_sendq q = { 0 };
	uint8_t a[64];

	fill(a, sizeof(a), 7);
	assert_int_equal(bp_sendq_push(&q, a, sizeof(a)), 0);
	bp_sendq_pin(&q);
	bp_sendq_consume(&q, sizeof(a));
	/* Still pinned: no reset yet, a push must not land on the in-flight bytes. */
	assert_int_equal(bp_sendq_push(&q, a, 8), 0);
	assert_true(q.head >= sizeof(a));
	bp_sendq_unpin(&q);
	assert_int_equal(bp_sendq_len(&q), 8);
	assert_memory_equal(bp_sendq_data(&q), a, 8);
	bp_sendq_free(&q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_push_consume_in_order),
		cmocka_unit_test(test_compacts_without_growing),
		cmocka_unit_test(test_pinned_bytes_never_move),
		cmocka_unit_test(test_pinned_consume_keeps_offsets),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
