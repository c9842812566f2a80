/* SPDX-License-Identifier: MIT */
/*
 * compare's two judgements of a cell beside its figures: why busy polling did not
 * run on a side (the facts of its path for tools/harness/diagnose.h), and whether
 * the machine disturbed a run (the facts of its evidence for tools/harness/disturb.h).
 * The rules are there; here only the facts are put together.
 */
#include <math.h>
#include <string.h>

#include "tools/compare/compare.h"
#include "tools/harness/disturb.h"

/* served_id - a NAPI the side's flows were served by, as its end's evidence said (0: not known). */
static uint32_t served_id(const struct cmp_report *r, bool client)
{
	const struct cmp_end *e = &r->ends[client ? 0 : 1];

	return e->nserved > 0 ? e->served[0] : 0;
}

bool cmp_cell_diag(const struct cmp_report *r, const struct cmp_cell *c, bool client, char *buf, size_t len)
{
	const struct cmp_path *p = &r->pathf[client ? 0 : 1];
	const struct bp_mode *m = client ? &r->opts.client_mode[c->mode_idx] : &r->opts.server_mode[c->mode_idx];
	struct diag_facts f = {
		.side = client ? "client" : "server",
		.where = p->where ? p->where : "path",
		.dev = p->dev,
		.veth = p->veth,
		.busy_poll_mode = client ? c->busy_poll_mode_client : c->busy_poll_mode_server,
		.suspend_mode = m->policy == BP_POLICY_SUSPEND,
		.mode_usecs = m->busy_usecs, /* napi, suspend; sqpoll's napi=N */
		.mode_budget = m->budget,
		.mean_us = c->lat_us[1] > 0 ? c->lat_us[1] : NAN,
		.bprx_per_tx = client ? c->bprx_client_per_tx : c->bprx_server_per_tx,
		.dev_napis = p->napis,
		.served_napis = client ? c->served_client : c->served_server,
		.served_id = served_id(r, client),
		.gro = p->gro, .tso = p->tso, .threaded = p->threaded,
		.sysctl_busy_poll = r->remote && !client ? r->ends[1].busy_poll : r->sysctl_busy_poll,
		.sysctl_busy_read = r->remote && !client ? r->ends[1].busy_read : r->sysctl_busy_read,
		.flows = c->flows,
		.threads = r->opts.threads,
	};

	if (len)
		buf[0] = '\0';
	if (!c->runs)
		return false;
	return diag_explain(&f, buf, len);
}

/* side_facts - a side's disturbance facts from its evidence; NaN each when not known. */
static struct dist_side side_facts(const char *name, const struct evidence *ev, bool spins)
{
	struct dist_side s = { .side = name, .spins = spins, .cpu_pct = NAN, .other_pct = NAN, .runq_pct = NAN,
			       .steal_pct = NAN };
	double per_thread_ns;
	uint32_t loops = 0;

	if (!ev->valid || !ev->interval_ns)
		return s;
	for (uint32_t i = 0; i < ev->nthr; i++) {
		double u;

		if (!strncmp(ev->thr[i].comm, "iou-", 4))
			continue; /* an io_uring helper: not a pinned loop thread */
		u = ev_util_pct(ev->thr[i].cpu_us, ev->interval_ns);
		if (!loops++ || u < s.cpu_pct)
			s.cpu_pct = u;
	}
	per_thread_ns = (double)ev->interval_ns * (loops ? loops : 1);
	if (ev->sched_known) {
		s.runq_pct = (double)ev->run_delay_ns / per_thread_ns * 100;
		s.steal_pct = (double)ev->steal_us * 1000 / per_thread_ns * 100;
	}
	if (ev->other_known)
		s.other_pct = (double)ev->other_us * 1000 / per_thread_ns * 100;
	return s;
}

void cmp_sample_disturbed(struct cmp_sample *s, const struct evidence *client, const struct evidence *server,
			  bool spins_client, bool spins_server, double rate, int flows)
{
	struct dist_side cs = side_facts("client", client, spins_client);
	struct dist_side ss = side_facts("server", server, spins_server);
	struct dist_loop l = { .closed = !(rate > 0), .tps = s->tps, .mean_us = s->lat_us[1], .flows = flows };

	if (!dist_side_explain(&ss, s->disturbed, sizeof(s->disturbed)) &&
	    !dist_side_explain(&cs, s->disturbed, sizeof(s->disturbed)))
		dist_loop_explain(&l, s->disturbed, sizeof(s->disturbed));
}
