/* SPDX-License-Identifier: MIT */
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpt_nvmet.h"
#include "bptest.h"

void bpt_nvmet_cfg(struct bp_nvmet_cfg *cfg, const char *nqn, const char *const *specs, int n)
{
	char e[300];

	bp_nvmet_cfg_defaults(cfg);
	((struct sockaddr_in *)&cfg->listen)->sin_port = 0;
	snprintf(cfg->nqn, sizeof(cfg->nqn), "%s", nqn);
	for (int i = 0; i < n; i++)
		BPT_CHECK(bp_nvmet_ns_parse(specs[i], &cfg->ns[i], e, sizeof(e)) == 0, "--ns %s: %s", specs[i], e);
	cfg->n_ns = n;
	cfg->log_level = getenv("BPT_VERBOSE") ? BP_NVMET_LOG_DEBUG : BP_NVMET_LOG_ERROR;
}

struct bp_nvmeh_ctrl *bpt_nvmeh_up(struct bp_loop *loop, uint16_t port, const char *nqn, const char *hostnqn,
				   struct bp_nvmeh_queue **q)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct bp_nvmeh_opts o;
	struct bp_nvmeh_ctrl *c = NULL;

	bp_nvmeh_opts_defaults(&o);
	snprintf(o.subnqn, sizeof(o.subnqn), "%s", nqn);
	snprintf(o.hostnqn, sizeof(o.hostnqn), "%s", hostnqn);
	o.timeout_ms = 10000;
	BPT_CHECK(bp_nvmeh_ctrl_connect(loop, (struct sockaddr *)&a, sizeof(a), &o, 1, &c) == 0, "connect: %s",
		  bp_last_error());
	BPT_CHECK(bp_nvmeh_ctrl_io_queue(c, loop, 1, q) == 0, "I/O queue: %s", bp_last_error());
	return c;
}

#define BPT_NVMET_MAX_QUEUES 1024

/* A snapshot into a static buffer (the tests read it from one thread); returns the count. */
static size_t snapshot(struct bp_nvmet *t, struct bp_nvmet_queue_stats **st)
{
	static struct bp_nvmet_queue_stats buf[BPT_NVMET_MAX_QUEUES];
	size_t n = 0;

	BPT_CHECK(bp_nvmet_snapshot(t, buf, BPT_NVMET_MAX_QUEUES, &n) == 0, "bp_nvmet_snapshot failed");
	*st = buf;
	return n;
}

struct bpt_nvmet_sum bpt_nvmet_sum(struct bp_nvmet *t, bool live_only)
{
	struct bp_nvmet_queue_stats *st, *s = NULL;
	struct bpt_nvmet_sum sum;
	size_t n = snapshot(t, &st);

	memset(&sum, 0, sizeof(sum));
	s = &sum.total;
	for (size_t i = 0; i < n; i++) {
		const struct bp_nvmet_queue_stats *q = &st[i];

		sum.queues++;
		sum.live += q->live;
		if (live_only && !q->live)
			continue;
		s->commands += q->commands;
		s->bytes_in += q->bytes_in;
		s->bytes_out += q->bytes_out;
		s->reads += q->reads;
		s->writes += q->writes;
		s->flushes += q->flushes;
		s->errors += q->errors;
		s->poll_passes += q->poll_passes;
		s->idle_exits += q->idle_exits;
		s->r2ts += q->r2ts;
		s->write_zeroes += q->write_zeroes;
		s->deallocs += q->deallocs;
		s->storage_errors += q->storage_errors;
		s->polls += q->polls;
	}
	return sum;
}

bool bpt_nvmet_queue(struct bp_nvmet *t, uint16_t cntlid, uint16_t qid, struct bp_nvmet_queue_stats *out)
{
	struct bp_nvmet_queue_stats *st;
	size_t n = snapshot(t, &st);

	for (size_t i = 0; i < n; i++)
		if (st[i].live && st[i].cntlid == cntlid && st[i].qid == qid) {
			if (out)
				*out = st[i];
			return true;
		}
	return false;
}
