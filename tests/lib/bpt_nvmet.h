/* SPDX-License-Identifier: MIT */
/* The NVMe/TCP target's own counters (bp_nvmet_snapshot), as the tests read them. */
#ifndef BPT_NVMET_H
#define BPT_NVMET_H

#include <stdbool.h>
#include <stdint.h>

#include <busypoll/nvme/target.h>

struct bpt_nvmet_sum {
	int queues;                        /* listed: live and recently closed */
	int live;
	struct bp_nvmet_queue_stats total; /* the counters summed (ids and names left 0) */
};

/*
 * bpt_nvmet_sum - the counters of the queues the target lists, summed over the
 * live ones only when live_only. A failed snapshot fails the test.
 */
struct bpt_nvmet_sum bpt_nvmet_sum(struct bp_nvmet *t, bool live_only);

/*
 * bpt_nvmet_queue - the live queue qid of controller cntlid: true with *out
 * filled (out may be NULL), false when the target serves no such queue.
 */
bool bpt_nvmet_queue(struct bp_nvmet *t, uint16_t cntlid, uint16_t qid, struct bp_nvmet_queue_stats *out);

#endif
