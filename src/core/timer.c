/* SPDX-License-Identifier: MIT */
/*
 * Timers: a binary min-heap of caller-owned struct bp_timer, ordered by deadline.
 * Starting a timer allocates only when the heap outgrows its capacity.
 */
#include <errno.h>
#include <stdlib.h>

#include "core/internal.h"

static void heap_set(struct bp_timer_heap *h, uint32_t i, struct bp_timer *t)
{
	h->items[i] = t;
	t->heap_index = i;
}

static void heap_sift_up(struct bp_timer_heap *h, uint32_t i)
{
	struct bp_timer *t = h->items[i];

	while (i > 1 && h->items[i / 2]->deadline_ns > t->deadline_ns) {
		heap_set(h, i, h->items[i / 2]);
		i /= 2;
	}
	heap_set(h, i, t);
}

static void heap_sift_down(struct bp_timer_heap *h, uint32_t i)
{
	struct bp_timer *t = h->items[i];

	for (;;) {
		uint32_t child = 2 * i;

		if (child > h->len)
			break;
		if (child + 1 <= h->len &&
		    h->items[child + 1]->deadline_ns < h->items[child]->deadline_ns)
			child++;
		if (h->items[child]->deadline_ns >= t->deadline_ns)
			break;
		heap_set(h, i, h->items[child]);
		i = child;
	}
	heap_set(h, i, t);
}

int bp_timer_heap_push(struct bp_timer_heap *h, struct bp_timer *t)
{
	if (h->len + 1 >= h->cap) {
		uint32_t cap = h->cap ? h->cap * 2 : 64;
		struct bp_timer **items = realloc(h->items, cap * sizeof(*items));

		if (!items)
			return -ENOMEM;
		h->items = items;
		h->cap = cap;
	}
	h->len++;
	heap_set(h, h->len, t);
	heap_sift_up(h, h->len);
	return 0;
}

void bp_timer_heap_remove(struct bp_timer_heap *h, struct bp_timer *t)
{
	uint32_t i = t->heap_index;

	if (!i || i > h->len || h->items[i] != t)
		return;
	t->heap_index = 0;
	if (i == h->len) {
		h->len--;
		return;
	}
	heap_set(h, i, h->items[h->len]);
	h->len--;
	/* The moved timer may belong above or below its new place. */
	heap_sift_up(h, i);
	heap_sift_down(h, i);
}

struct bp_timer *bp_timer_heap_top(const struct bp_timer_heap *h)
{
	return h->len ? h->items[1] : NULL;
}

void bp_timer_heap_free(struct bp_timer_heap *h)
{
	for (uint32_t i = 1; i <= h->len; i++)
		h->items[i]->heap_index = 0;
	free(h->items);
	h->items = NULL;
	h->len = h->cap = 0;
}

int bp_timer_start(struct bp_loop *loop, struct bp_timer *t, uint64_t after_us,
		   bp_timer_fn fn, void *arg)
{
	if (t->heap_index)
		bp_timer_heap_remove(&loop->timers, t);
	t->fn = fn;
	t->arg = arg;
	t->deadline_ns = bp_now_ns() + after_us * 1000;
	return bp_timer_heap_push(&loop->timers, t);
}

void bp_timer_stop(struct bp_loop *loop, struct bp_timer *t)
{
	if (t->heap_index)
		bp_timer_heap_remove(&loop->timers, t);
}

int bp_timers_run(struct bp_loop *loop, uint64_t now_ns)
{
	struct bp_timer *t;
	int ran = 0;

	/* A callback may restart its own timer: it lands after now, so this ends. */
	while ((t = bp_timer_heap_top(&loop->timers)) && t->deadline_ns <= now_ns) {
		bp_timer_heap_remove(&loop->timers, t);
		t->fn(loop, t->arg);
		ran++;
	}
	return ran;
}
