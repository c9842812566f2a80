/* SPDX-License-Identifier: MIT */
/*
 * The NVMe/TCP target in the tests: a configuration from namespace specs, a host
 * controller with one I/O queue against it, and the target's own counters
 * (bp_nvmet_snapshot), as the tests read them. Failures fail the test.
 */
#ifndef BPT_NVMET_H
#define BPT_NVMET_H

#include <stdbool.h>
#include <stdint.h>

#include <busypoll/nvme/host.h>
#include <busypoll/nvme/target.h>

/*
 * bpt_nvmet_cfg - cfg for a target on 127.0.0.1 (a port the kernel picks), subsystem
 * nqn, the n namespaces of specs (bp_nvmet_ns_parse's syntax), logging errors only
 * (everything with BPT_VERBOSE in the environment); the rest bp_nvmet_cfg_defaults'.
 */
void bpt_nvmet_cfg(struct bp_nvmet_cfg *cfg, const char *nqn, const char *const *specs, int n);

/*
 * bpt_nvmeh_up - a host controller of hostnqn on loop, connected to subsystem nqn of
 * the target at 127.0.0.1:port (10 s timeout), and its I/O queue 1 in *q.
 */
struct bp_nvmeh_ctrl *bpt_nvmeh_up(struct bp_loop *loop, uint16_t port, const char *nqn, const char *hostnqn,
				   struct bp_nvmeh_queue **q);

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
