/* SPDX-License-Identifier: MIT */
/*
 * The open loop's schedule (busypoll rr --rate), one per client thread: when each
 * request is due, on which flow, and the requests waiting for their flow.
 *
 * Times: the shared arrival clock (tools/harness/arrivals.h: fixed gaps exact,
 * Poisson gaps exponential, a seed per thread), which perf's --rate_iops uses too.
 *
 * Flows: fixed arrivals go round robin, so each flow is evenly spaced and the
 * flows interleave; Poisson arrivals pick a flow uniformly at random, which splits
 * one Poisson process into independent ones per flow, each of rate/flows (the
 * per-connection schedules of mutilate and wrk2).
 *
 * The queue: a request due on a flow that has one outstanding waits for that
 * answer, first in first out per flow, in a pool sized once (cap): nothing is
 * allocated once the schedule runs.
 *
 * Pure arithmetic, no clock: callers pass times in, so tests need no timing.
 */
#ifndef BP_TOOLS_RR_SCHED_H
#define BP_TOOLS_RR_SCHED_H

#include <stdbool.h>
#include <stdint.h>

#include "tools/harness/arrivals.h"

#define RR_SCHED_NONE UINT32_MAX

struct rr_sched {
	struct arrivals clock;    /* when each request is due (clock.next_ns: the next one) */
	uint32_t nflows, next_flow;
	/* the requests waiting for their flow */
	uint32_t cap, used, free_head;
	uint64_t *due;            /* [cap] each waiting request's due time */
	uint32_t *link;           /* [cap] the next one in its flow's queue, or in the free list */
	uint32_t *head, *tail;    /* [nflows] each flow's queue (RR_SCHED_NONE: empty) */
};

/*
 * rr_sched_init - a schedule of rate requests/s over nflows flows, fixed or Poisson
 * gaps, room for cap waiting requests, its random numbers from seed. Not started.
 * Returns 0, -EINVAL (rate not above 0, no flow) or -ENOMEM.
 */
int rr_sched_init(struct rr_sched *s, double rate, bool poisson, uint32_t nflows, uint32_t cap, uint64_t seed);
/* rr_sched_free - the pool freed (harmless on a zeroed or freed schedule). */
void rr_sched_free(struct rr_sched *s);
/* rr_sched_start - the first request due at start_ns + first_ns (threads stagger their starts). */
void rr_sched_start(struct rr_sched *s, uint64_t start_ns, double first_ns);
/* rr_sched_take - the flow of the request due at next_ns; next_ns moves on to the one after it. */
uint32_t rr_sched_take(struct rr_sched *s);
/* rr_sched_push - a request due at due_ns waits for flow's answer. 0, or -ENOSPC (cap waiting). */
int rr_sched_push(struct rr_sched *s, uint32_t flow, uint64_t due_ns);
/* rr_sched_pop - flow's oldest waiting request: true with its due time, false when none waits. */
bool rr_sched_pop(struct rr_sched *s, uint32_t flow, uint64_t *due_ns);
/* rr_sched_waiting - requests waiting, over every flow. */
uint32_t rr_sched_waiting(const struct rr_sched *s);

#endif
