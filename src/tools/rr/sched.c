/* SPDX-License-Identifier: MIT */
/* The open loop's schedule (contract in tools/rr/sched.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tools/rr/sched.h"

int rr_sched_init(struct rr_sched *s, double rate, bool poisson, uint32_t nflows, uint32_t cap, uint64_t seed)
{
	memset(s, 0, sizeof(*s));
	if (!nflows || !cap || cap == RR_SCHED_NONE || arrivals_init(&s->clock, rate, poisson, seed))
		return -EINVAL;
	s->nflows = nflows;
	s->cap = cap;
	s->due = calloc(cap, sizeof(*s->due));
	s->link = calloc(cap, sizeof(*s->link));
	s->head = malloc(nflows * sizeof(*s->head));
	s->tail = malloc(nflows * sizeof(*s->tail));
	if (!s->due || !s->link || !s->head || !s->tail) {
		rr_sched_free(s);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < cap; i++)
		s->link[i] = i + 1 < cap ? i + 1 : RR_SCHED_NONE;
	for (uint32_t i = 0; i < nflows; i++)
		s->head[i] = s->tail[i] = RR_SCHED_NONE;
	return 0;
}

void rr_sched_free(struct rr_sched *s)
{
	free(s->due);
	free(s->link);
	free(s->head);
	free(s->tail);
	s->due = NULL;
	s->link = s->head = s->tail = NULL;
}

void rr_sched_start(struct rr_sched *s, uint64_t start_ns, double first_ns)
{
	arrivals_start(&s->clock, start_ns, first_ns);
}

uint32_t rr_sched_take(struct rr_sched *s)
{
	uint32_t flow;

	if (s->clock.poisson) {
		flow = s->nflows > 1 ? (uint32_t)(arrivals_uniform(&s->clock) * s->nflows) : 0;
		if (flow >= s->nflows) /* erand48 is below 1, but the product may round up */
			flow = s->nflows - 1;
	} else {
		flow = s->next_flow;
		s->next_flow = flow + 1 < s->nflows ? flow + 1 : 0;
	}
	arrivals_take(&s->clock);
	return flow;
}

int rr_sched_push(struct rr_sched *s, uint32_t flow, uint64_t due_ns)
{
	uint32_t i = s->free_head;

	if (s->used == s->cap || i == RR_SCHED_NONE)
		return -ENOSPC;
	s->free_head = s->link[i];
	s->due[i] = due_ns;
	s->link[i] = RR_SCHED_NONE;
	if (s->tail[flow] == RR_SCHED_NONE)
		s->head[flow] = i;
	else
		s->link[s->tail[flow]] = i;
	s->tail[flow] = i;
	s->used++;
	return 0;
}

bool rr_sched_pop(struct rr_sched *s, uint32_t flow, uint64_t *due_ns)
{
	uint32_t i = s->head[flow];

	if (i == RR_SCHED_NONE)
		return false;
	*due_ns = s->due[i];
	s->head[flow] = s->link[i];
	if (s->head[flow] == RR_SCHED_NONE)
		s->tail[flow] = RR_SCHED_NONE;
	s->link[i] = s->free_head;
	s->free_head = i;
	s->used--;
	return true;
}

uint32_t rr_sched_waiting(const struct rr_sched *s)
{
	return s->used;
}
