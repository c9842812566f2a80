/* SPDX-License-Identifier: MIT */
/*
 * busypoll compare: the main job. As root it builds a temporary veth test bed
 * (where NAPI exists, so kernel busy polling can really engage), runs the rr
 * server in one namespace and the client in the other, pinned to different CPUs,
 * over every mode this machine supports and each flow count, and removes the
 * bed on every exit path (Ctrl-C included). Not root: loopback, said plainly.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools/bed/testbed.h"

#include "tools/common/cmd.h"
#include "tools/common/commands.h"
#include "tools/common/opt.h"
#include "tools/common/values.h"
#include "tools/compare/compare.h"
#include "tools/compare/opts.h"
#include "tools/harness/devfeat.h"
#include "tools/harness/disturb.h"
#include "tools/bed/exec.h"

#define CMP_PORT 12867

static volatile sig_atomic_t *stop_requested;
static const char *who = "compare"; /* the command whose lines these are (tune runs cells too) */

/* ---- one run's figures ---- */

/* per_tx - a run's figure per measured transaction; 0 for a run without any (a median input). */
static double per_tx(uint64_t v, uint64_t tx)
{
	return tx ? (double)v / (double)tx : 0;
}

/* lat_of - out[8]: min, mean, P50..P99.99, max of histogram h, in us. */
static void lat_of(double out[8], const struct bp_hist *h)
{
	static const double pct[] = { 50, 90, 99, 99.9, 99.99 };

	for (int k = 0; k < 8; k++)
		out[k] = (k == 0 ? (double)h->min : k == 1 ? bp_hist_mean(h) : k == 7 ? (double)h->max
			  : (double)bp_hist_percentile(h, pct[k - 2])) / 1000.0;
}

/* util - a side's CPU time over its interval, percent of one CPU (0 for a side not measured: a median input). */
static double util(const struct evidence *ev, uint64_t cpu_us)
{
	double u = ev->valid ? ev_util_pct(cpu_us, ev->interval_ns) : 0;

	return isfinite(u) ? u : 0;
}

/* sample_of - one finished run r of cell (modes of o) into its sample s, its disturbance judged. */
static void sample_of(struct cmp_sample *s, const struct rr_result *r, const struct cmp_opts *o,
		      const struct cmp_cell *cell)
{
	double rate = cell->rate;
	const struct evidence *c = &r->client, *v = &r->server;

	memset(s, 0, sizeof(*s));
	s->tps = r->tps;
	s->transactions = r->transactions;
	lat_of(s->lat_us, &r->hist);
	if (rate > 0)
		lat_of(s->lat_send_us, &r->hist_send);
	s->client_cpu_us_per_tx = per_tx(c->utime_us + c->stime_us, r->transactions);
	s->server_cpu_us_per_tx = v->valid ? per_tx(v->utime_us + v->stime_us, r->transactions) : 0;
	s->bprx_client_per_tx = per_tx(c->busy_poll_rx, r->transactions);
	s->bprx_server_per_tx = v->valid ? per_tx(v->busy_poll_rx, r->transactions) : 0;
	s->syscalls_client_per_tx = per_tx(c->syscalls, r->transactions);
	s->syscalls_server_per_tx = v->valid ? per_tx(v->syscalls, r->transactions) : 0;
	s->direct_hit_client_per_tx = c->direct_known ? per_tx(c->direct_hit, r->transactions) : NAN;
	s->direct_hit_server_per_tx = v->valid && v->direct_known ? per_tx(v->direct_hit, r->transactions) : NAN;
	s->client_util = (struct cmp_util){ util(c, c->utime_us), util(c, c->stime_us), util(c, ev_cpu_us(c)) };
	s->server_util = (struct cmp_util){ util(v, v->utime_us), util(v, v->stime_us), util(v, ev_cpu_us(v)) };
	s->queued_pct = 100 * per_tx(r->queued, r->transactions);
	s->late_pct = 100 * per_tx(r->late, r->transactions);
	s->served_client = c->valid ? (int)c->n_napi_ids : -1;
	s->served_server = v->valid ? (int)v->n_napi_ids : -1;
	cmp_sample_disturbed(s, c, v, dist_mode_spins(&o->client_mode[cell->mode_idx]),
			     dist_mode_spins(&o->server_mode[cell->mode_idx]), rate, cell->flows);
}

/* xsk_add - one side's AF_XDP socket over a run into the cell's sums (nothing without one). */
static void xsk_add(struct cmp_xsk *x, const struct evidence *ev)
{
	if (!ev->valid || ev->xsk == EV_XSK_NONE)
		return;
	x->binding = ev->xsk;
	x->pkt_rx += ev->pkt_rx;
	x->dropped += ev->pkt_dropped + ev->xsk_rx_dropped;
	x->rx_ring_full += ev->xsk_rx_ring_full;
	x->fill_empty += ev->xsk_fill_empty;
	x->tx_empty += ev->xsk_tx_empty;
}

/* ---- the test bed and its NAPI settings ---- */

struct bed {
	bool up;
	struct bp_testbed tb;
	int home;                  /* the namespace we came from */
};

static int bed_enter(struct bed *b, int side)
{
	if (!b->up)
		return 0;
	return bp_testbed_enter(&b->tb, side);
}

static int bed_leave(struct bed *b)
{
	int ret;

	if (!b->up)
		return 0;
	ret = bp_netns_restore(b->home);
	b->home = -1;
	if (!ret)
		ret = bp_netns_save(&b->home);
	return ret;
}

/* Read (save) or write back (restore) every NAPI's settings: epoll:suspend changes them. */
static void bed_napi(struct bed *b, struct cmp_report *r, bool restore)
{
	if (!b->up)
		return;
	if (!restore)
		r->nnapi = 0;
	for (int side = 0; side < 2; side++) {
		uint32_t ids[CMP_MAX_NAPI];
		int n = bp_testbed_napi_ids(&b->tb, side, ids, CMP_MAX_NAPI);

		if (n < 0 || bed_enter(b, side))
			continue;
		for (int i = 0; i < n && i < CMP_MAX_NAPI; i++) {
			struct bp_napi_info info;

			if (!restore) {
				if (bp_napi_get(ids[i], &info) || r->nnapi == CMP_MAX_NAPI)
					continue;
				r->napi[r->nnapi++] = (struct cmp_napi){
					.id = info.id, .side = side ? 's' : 'c',
					.defer_hard_irqs = info.defer_hard_irqs,
					.gro_flush_timeout_ns = info.gro_flush_timeout_ns,
					.irq_suspend_timeout_ns = info.irq_suspend_timeout_ns,
					.threaded = info.threaded,
				};
				continue;
			}
			for (int k = 0; k < r->nnapi; k++) {
				if (r->napi[k].id != ids[i])
					continue;
				memset(&info, 0, sizeof(info));
				info.defer_hard_irqs = r->napi[k].defer_hard_irqs;
				info.gro_flush_timeout_ns = r->napi[k].gro_flush_timeout_ns;
				info.irq_suspend_timeout_ns = r->napi[k].irq_suspend_timeout_ns;
				info.has = BP_NAPI_HAS_DEFER | BP_NAPI_HAS_GRO_FLUSH | BP_NAPI_HAS_IRQ_SUSPEND;
				bp_napi_set(ids[i], &info);
			}
		}
		bed_leave(b);
	}
}

/* ---- one cell ---- */

static void cell_rr_opts(const struct cmp_opts *o, struct rr_opts *ro, int mi, bool server)
{
	rr_opts_defaults(ro);
	ro->server = server;
	ro->threads = o->threads;
	ro->request_size = o->request_size;
	ro->response_size = o->response_size;
	ro->udp = o->udp;
	ro->tcp = !o->udp;
	ro->duration_s = o->duration_s;
	ro->warmup_s = o->warmup_s;
	ro->quiet = true;
	ro->own_server = true;
	/* thread i on the i-th CPU of the side's list, a short list repeated */
	for (int i = 0; i < o->threads; i++)
		ro->cpus[i] = server ? o->server_cpus[i % o->nserver_cpus] : o->client_cpus[i % o->nclient_cpus];
	ro->ncpus = o->threads;
	ro->mode = server ? o->server_mode[mi] : o->client_mode[mi];
	snprintf(ro->mode_text, sizeof(ro->mode_text), "%s", server ? o->server_modes[mi] : o->client_modes[mi]);
}

/* rate_text - an offered rate for people: "max" (the closed loop) or "20000/s". */
static const char *rate_text(double rate, char *buf, size_t len)
{
	if (rate > 0)
		snprintf(buf, len, "%.0f/s", rate);
	else
		snprintf(buf, len, "max");
	return buf;
}

static void progress(const struct cmp_report *r, int done, int total, const struct cmp_cell *c, int run)
{
	const struct cmp_opts *o = &r->opts;
	double per_run = o->duration_s / o->runs + o->warmup_s + 0.3;
	double left = per_run * (double)(total - done);
	char rt[32];

	if (o->quiet)
		return;
	fprintf(stderr, "busypoll compare: [%2d/%d] %-36s flows %-4d", done + 1, total, o->labels[c->mode_idx], c->flows);
	if (o->nrates > 1 || c->rate > 0)
		fprintf(stderr, " rate %-9s", rate_text(c->rate, rt, sizeof(rt)));
	if (r->ncoal > 1)
		fprintf(stderr, " coalescing %s", r->coal_label[r->coal_now]);
	if (o->runs > 1)
		fprintf(stderr, " run %d/%d", run + 1, o->runs);
	fprintf(stderr, "  about %.0f s left\n", left);
}

/* served - the NAPI ids a run's flows were served by, on each end, kept for the header. */
static void served(struct cmp_report *r, const struct rr_result *res)
{
	const struct evidence *ev[2] = { &res->client, &res->server };

	for (int e = 0; e < 2; e++)
		for (uint32_t i = 0; i < ev[e]->n_napi_ids; i++) {
			struct cmp_end *end = &r->ends[e];
			bool have = false;

			for (int k = 0; k < end->nserved; k++)
				have |= end->served[k] == ev[e]->napi_ids[i];
			if (!have && end->nserved < EV_MAX_NAPI)
				end->served[end->nserved++] = ev[e]->napi_ids[i];
		}
}

/*
 * saturated_rate - the rate a saturated cell achieved: offered more than it can take,
 * an open loop carries what the closed loop with the same flows carries, so one closed
 * loop run of co (the cell's settings) measures it; NAN when that run fails too.
 */
static void saturated_rate(const struct cmp_side *side, struct rr_opts *co, struct cmp_cell *cell,
			   struct rr_result *res)
{
	char err[512];
	int ret;

	co->rate = 0;
	if (side->client_enter)
		side->client_enter(side->ctx);
	ret = rr_client_run(co, stop_requested, res, err, sizeof(err));
	if (side->client_leave)
		side->client_leave(side->ctx);
	cell->sat_tps = !ret && !res->interrupted && res->tps > 0 ? res->tps : NAN;
}

/*
 * run_once - one run of the cell against its mode's server at host:port (through
 * side's client namespace), appended to the cell's samples. An open loop the mode
 * cannot keep up with (rr's -EOVERFLOW) is a finding, not a failure: the cell is
 * saturated, with rr's reason; either way it is not run again. res: scratch.
 */
static void run_once(struct cmp_report *r, const struct cmp_side *side, const char *host, uint16_t port,
		     struct cmp_cell *cell, struct rr_result *res)
{
	const struct cmp_opts *o = &r->opts;
	struct rr_opts co;
	char err[512];
	int ret;

	cell_rr_opts(o, &co, cell->mode_idx, false);
	co.duration_s = o->duration_s / o->runs; /* -l is per cell, split over its runs */
	co.flows = cell->flows;
	co.rate = cell->rate;
	co.port = port;
	snprintf(co.host, sizeof(co.host), "%s", host);
	if (side->client_enter)
		side->client_enter(side->ctx);
	ret = rr_client_run(&co, stop_requested, res, err, sizeof(err));
	if (side->client_leave)
		side->client_leave(side->ctx);
	if (ret) {
		cell->saturated = ret == -EOVERFLOW;
		cell->failed = !cell->saturated;
		/* what to do, in compare's options (it takes --rates and --flows, not --max-outstanding) */
		snprintf(cell->error, sizeof(cell->error), "%.470s%s", err,
			 cell->saturated ? "; lower --rates or add --flows" : "");
		if (cell->saturated)
			saturated_rate(side, &co, cell, res);
		return;
	}
	if (res->interrupted)
		return;
	served(r, res);
	xsk_add(&cell->xsk[0], &res->client);
	xsk_add(&cell->xsk[1], &res->server);
	sample_of(&cell->sample[cell->runs], res, o, cell);
	cell->runs++;
	if (side->napi_now)
		side->napi_now(side->ctx, cell);
}

/* cell_done - the cell runs no more: it failed or saturated (the runs before stay). */
static bool cell_done(const struct cmp_cell *c)
{
	return c->failed || c->saturated;
}

int cmp_run_matrix(struct cmp_report *r, const struct cmp_side *side)
{
	const struct cmp_opts *o = &r->opts;
	int per_mode = o->nflows * o->nrates, per_block = o->nmodes * per_mode * o->runs;
	int total = per_block * r->ncoal, done = per_block * r->coal_now, base = r->ncells, kept = base;
	struct rr_result *res = calloc(1, sizeof(*res));

	if (!res)
		return -ENOMEM;
	for (int mi = 0; mi < o->nmodes; mi++)
		for (int fi = 0; fi < o->nflows; fi++)
			for (int ri = 0; ri < o->nrates; ri++)
				r->cells[r->ncells++] = (struct cmp_cell){ .mode_idx = mi, .coal_idx = r->coal_now,
									   .flows = o->flows[fi], .rate = o->rates[ri],
									   .sat_tps = NAN };
	/* round k of every mode before round k+1: never one mode's runs back to back */
	for (int run = 0; run < o->runs && !*stop_requested; run++) {
		for (int mi = 0; mi < o->nmodes && !*stop_requested; mi++) {
			struct cmp_cell *cells = &r->cells[base + mi * per_mode];
			char host[TOOL_HOST_LEN], err[512];
			uint16_t port = 0;
			int ret, left = 0;

			for (int k = 0; k < per_mode; k++)
				left += !cell_done(&cells[k]);
			if (!left) {
				done += per_mode;
				continue;
			}
			ret = side->start(side->ctx, mi, host, sizeof(host), &port, err, sizeof(err));
			for (int k = 0; k < per_mode && !*stop_requested; k++) {
				struct cmp_cell *cell = &cells[k];

				if (cell_done(cell)) {
					done++;
					continue;
				}
				if (ret) {
					cell->failed = true;
					snprintf(cell->error, sizeof(cell->error), "server: %.400s", err);
					done++;
					continue;
				}
				progress(r, done++, total, cell, run);
				run_once(r, side, host, port, cell, res);
			}
			if (!ret)
				side->stop(side->ctx, mi);
		}
	}
	free(res);
	/* the cells' figures; those interrupted before anything was measured dropped */
	for (int i = base; i < r->ncells; i++) {
		struct cmp_cell *c = &r->cells[i];

		if (!c->runs && !cell_done(c))
			continue;
		cmp_cell_fill(c);
		c->busy_poll_mode_client = bp_mode_is_busy_poll(&o->client_mode[c->mode_idx]);
		c->busy_poll_mode_server = bp_mode_is_busy_poll(&o->server_mode[c->mode_idx]);
		c->proof_missing = c->runs && cmp_proof_missing(c);
		c->served_client = c->served_server = c->runs ? -1 : 0;
		for (int k = 0; k < c->runs; k++) {
			const struct cmp_sample *s = &c->sample[k];

			if (s->served_client > c->served_client)
				c->served_client = s->served_client;
			if (s->served_server > c->served_server)
				c->served_server = s->served_server;
			if (s->disturbed[0] && !c->disturbed) {
				c->disturbed = true;
				snprintf(c->disturbed_reason, sizeof(c->disturbed_reason), "%s", s->disturbed);
			}
		}
		if (kept != i)
			r->cells[kept] = *c;
		kept++;
	}
	r->ncells = kept;
	if (*stop_requested)
		r->interrupted = true;
	return 0;
}

/* ---- the test bed's side: both ends here, the server in the bed's second namespace ---- */

struct bed_side {
	struct cmp_report *r;
	struct bed *b;
	struct rr_server *srv;
};

static int bed_start(void *ctx, int mi, char *host, size_t hostlen, uint16_t *port, char *err, size_t errlen)
{
	struct bed_side *bs = ctx;
	struct bed *b = bs->b;
	struct rr_opts so;
	int ret;

	cell_rr_opts(&bs->r->opts, &so, mi, true);
	so.port = b->up ? CMP_PORT : 0;
	snprintf(so.host, sizeof(so.host), "%s", b->up ? b->tb.addr[1] : "127.0.0.1");
	if (bed_enter(b, 1)) {
		snprintf(err, errlen, "cannot enter the test bed: %s", strerror(errno));
		return -errno;
	}
	ret = rr_server_start(&so, &bs->srv, err, errlen);
	bed_leave(b);
	if (!ret) {
		snprintf(host, hostlen, "%s", so.host);
		*port = rr_server_port(bs->srv);
	}
	return ret;
}

static void bed_stop(void *ctx, int mi)
{
	struct bed_side *bs = ctx;

	rr_server_stop(bs->srv);
	bs->srv = NULL;
	/* epoll:suspend sets per-NAPI timeouts; the next mode starts from the original. */
	bed_napi(bs->b, bs->r, true);
}

static int bed_client_enter(void *ctx)
{
	struct bed_side *bs = ctx;

	return bed_enter(bs->b, 0);
}

static void bed_client_leave(void *ctx)
{
	struct bed_side *bs = ctx;

	bed_leave(bs->b);
}

/* bed_napi_now - each end's NAPI settings now, the cell's server still up: what the run ran at. */
static void bed_napi_now(void *ctx, struct cmp_cell *cell)
{
	struct bed_side *bs = ctx;
	struct bed *b = bs->b;

	cell->nnapi_at = 0;
	cell->napi_at_read = b->up;
	for (int side = 0; side < 2 && b->up; side++) {
		uint32_t ids[CMP_MAX_NAPI];
		int n = bp_testbed_napi_ids(&b->tb, side, ids, CMP_MAX_NAPI);

		if (n < 0 || bed_enter(b, side)) {
			cell->napi_at_read = false;
			continue;
		}
		for (int i = 0; i < n && cell->nnapi_at < CMP_MAX_NAPI; i++) {
			struct bp_napi_info info;

			if (bp_napi_get(ids[i], &info)) {
				cell->napi_at_read = false;
				continue;
			}
			cell->napi_at[cell->nnapi_at++] = (struct cmp_napi_at){
				.id = info.id, .side = side ? 's' : 'c', .defer_hard_irqs = info.defer_hard_irqs,
				.gro_flush_timeout_ns = info.gro_flush_timeout_ns,
				.irq_suspend_timeout_ns = info.irq_suspend_timeout_ns,
			};
		}
		bed_leave(b);
	}
}

static int run_matrix(struct cmp_report *r, struct bed *b)
{
	struct bed_side bs = { .r = r, .b = b };
	const struct cmp_side side = { .start = bed_start, .stop = bed_stop, .client_enter = bed_client_enter,
				       .client_leave = bed_client_leave, .napi_now = bed_napi_now, .ctx = &bs };

	r->ncoal = 1;
	return cmp_run_matrix(r, &side);
}

/* stale_found - a stale bed removed at the start: said now, and kept for the report. */
static void stale_found(void *ctx, const char *line)
{
	struct cmp_report *r = ctx;

	fprintf(stderr, "busypoll %s: %s\n", who, line);
	if (r->nstale < 4)
		snprintf(r->stale[r->nstale++], sizeof(r->stale[0]), "%s", line);
}

static void baselines(struct cmp_report *r)
{
	for (int i = 0; i < r->ncells; i++) {
		struct cmp_cell *c = &r->cells[i];

		for (int j = 0; j < r->ncells; j++) {
			const struct cmp_cell *b = &r->cells[j];

			if (b->mode_idx != 0 || b->flows != c->flows || b->rate != c->rate || b->coal_idx != c->coal_idx ||
			    b->failed || c->failed || !c->runs || !b->tps)
				continue;
			c->have_baseline = true;
			c->d_tps_pct = (c->tps / b->tps - 1) * 100;
			c->d_p50_pct = b->lat_us[2] ? (c->lat_us[2] / b->lat_us[2] - 1) * 100 : 0;
			c->d_p99_pct = b->lat_us[4] ? (c->lat_us[4] / b->lat_us[4] - 1) * 100 : 0;
			c->d_cpu_pct = b->cpu_us_per_tx > 0 ? (c->cpu_us_per_tx / b->cpu_us_per_tx - 1) * 100 : NAN;
		}
	}
}

/* bed_facts - each end's path for the diagnosis: the bed's veth, its NAPIs, GRO and TSO as read there. */
static void bed_facts(struct cmp_report *r, struct bed *b)
{
	for (int side = 0; side < 2; side++) {
		struct cmp_path *p = &r->pathf[side];
		uint32_t ids[CMP_MAX_NAPI];

		*p = (struct cmp_path){ .where = "test bed", .veth = true, .napis = -1, .gro = DIAG_UNKNOWN,
					.tso = DIAG_UNKNOWN, .threaded = b->tb.threaded ? DIAG_ON : DIAG_OFF };
		snprintf(p->dev, sizeof(p->dev), "%s", b->tb.dev[side]);
		p->napis = bp_testbed_napi_ids(&b->tb, side, ids, CMP_MAX_NAPI);
		if (p->napis < 0)
			p->napis = -1;
		if (bed_enter(b, side))
			continue;
		devfeat_read(p->dev, &p->gro, &p->tso);
		bed_leave(b);
	}
}

/* loopback_facts - loopback's path: no NAPI, no veth. */
static void loopback_facts(struct cmp_report *r)
{
	for (int side = 0; side < 2; side++)
		r->pathf[side] = (struct cmp_path){ .where = "loopback", .dev = "lo", .napis = 0, .gro = DIAG_UNKNOWN,
						    .tso = DIAG_UNKNOWN, .threaded = DIAG_UNKNOWN };
}

/*
 * bed_build - where the cells run: a veth test bed as root (stale ones of a killed
 * compare removed first), else loopback, said plainly; r->path names it. 0, or -1
 * with the error said (nothing left behind).
 */
static int bed_build(struct cmp_report *r, struct bed *b)
{
	char name[32];

	if (geteuid() != 0 && !r->opts.loopback) {
		r->opts.loopback = true;
		fprintf(stderr, "busypoll compare: not root, so no veth test bed: running on loopback, which has no "
				"NAPI, so kernel busy polling cannot engage there (run as root for the real comparison)\n");
	}
	if (r->opts.loopback) {
		snprintf(r->path, sizeof(r->path), "loopback (no NAPI: kernel busy polling cannot engage)");
		loopback_facts(r);
		return 0;
	}
	/* a compare killed (or whose terminal closed) before it could clean up left its bed: remove it */
	bp_testbed_reap_stale(stale_found, r);
	snprintf(name, sizeof(name), "cmp%d", (int)getpid());
	if (bp_netns_save(&b->home)) {
		bp_tool_error(who, "%s", bp_last_error());
		return -1;
	}
	if (bp_testbed_up(&b->tb, name, 1, false)) {
		bp_tool_error(who, "cannot build the test bed: %s", bp_last_error());
		bp_netns_restore(b->home);
		return -1;
	}
	b->up = true;
	/* --bed-tso, --bed-no-gro: the bed as many veth pairs are, to see what it does to busy polling */
	for (int i = 0; i < 2 && (r->opts.bed_tso || r->opts.bed_no_gro); i++)
		if (bp_run((const char *const[]){ "ip", "netns", "exec", b->tb.ns[i], "ethtool", "-K", b->tb.dev[i],
						"tso", r->opts.bed_tso ? "on" : "off", "gro",
						r->opts.bed_no_gro ? "off" : "on", NULL })) {
			bp_tool_error("compare", "--bed-tso/--bed-no-gro: cannot set the bed's offloads: %s",
				      bp_last_error());
			bp_testbed_down(&b->tb);
			bp_netns_restore(b->home);
			b->up = false;
			return -1;
		}
	bed_facts(r, b);
	snprintf(r->path, sizeof(r->path), "veth test bed %s <-> %s (%s <-> %s)", b->tb.ns[0], b->tb.ns[1],
		 b->tb.addr[0], b->tb.addr[1]);
	bed_napi(b, r, false);
	return 0;
}

/* run_local - the matrix on this host, its test bed removed on every path. An exit status. */
static int run_local(struct cmp_report *r)
{
	struct bed b = { .home = -1 };
	int ret;

	if (bed_build(r, &b))
		return BP_EXIT_FAIL;
	ret = run_matrix(r, &b);
	if (b.up) {
		bp_testbed_down(&b.tb);
		bp_netns_restore(b.home);
	}
	if (ret) {
		bp_tool_error("compare", "%s", strerror(-ret));
		return BP_EXIT_FAIL;
	}
	return BP_EXIT_OK;
}

/* ---- one cell at a time, for tune ---- */

struct cmp_bed_run {
	struct bed b;
	struct bed_side bs;
	struct cmp_side side;
};

int cmp_bed_open(struct cmp_report *r, const char *sub, volatile sig_atomic_t *stop, struct cmp_bed_run **out,
		 const struct cmp_side **side)
{
	struct cmp_bed_run *br = calloc(1, sizeof(*br));

	if (!br) {
		bp_tool_error(sub, "out of memory");
		return -1;
	}
	who = sub;
	stop_requested = stop;
	br->b.home = -1;
	if (bed_build(r, &br->b)) {
		free(br);
		return -1;
	}
	br->bs = (struct bed_side){ .r = r, .b = &br->b };
	br->side = (struct cmp_side){ .start = bed_start, .stop = bed_stop, .client_enter = bed_client_enter,
				      .client_leave = bed_client_leave, .ctx = &br->bs };
	r->ncoal = 1;
	*out = br;
	*side = &br->side;
	return 0;
}

void cmp_bed_close(struct cmp_bed_run *br)
{
	if (!br)
		return;
	if (br->b.up) {
		bp_testbed_down(&br->b.tb);
		bp_netns_restore(br->b.home);
	}
	free(br);
}

void cmp_run_one(struct cmp_report *r, const struct cmp_side *side, const char *host, uint16_t port,
		 struct cmp_cell *cell, struct rr_result *res)
{
	run_once(r, side, host, port, cell, res);
}

/* run_remote - the matrix between this host and the agent's (no test bed). An exit status. */
static int run_remote(struct cmp_report *r)
{
	char err[512];
	int rc = cmp_remote_run(r, stop_requested, err, sizeof(err));

	if (rc) {
		bp_tool_error("compare", "%s", err);
		/* a host another session holds is found before any cell: refused as held (docs/cli.md) */
		return rc == -EBUSY ? bp_exit_for(rc) : BP_EXIT_FAIL;
	}
	return BP_EXIT_OK;
}

/*
 * report - the comparison printed (and plotted); its exit status: 130 when
 * interrupted, 1 when the plot, the remote end or a cell failed, else 0.
 */
static int report(struct cmp_report *r)
{
	char err[512];
	int ret = BP_EXIT_OK;

	baselines(r);
	compare_print(stdout, r);
	/* the table ends with it; json and csv say it beside (their document stays one) */
	for (int i = 0; i < r->ncells && r->opts.format != TOOL_FORMAT_TABLE; i++)
		if (r->cells[i].disturbed) {
			fprintf(stderr, "busypoll compare: the machine was busy during the run: the figures of the "
					"cells marked disturbed are not to be compared\n");
			break;
		}
	if (r->opts.plot[0] && compare_plot(r->opts.plot, r, err, sizeof(err))) {
		bp_tool_error("compare", "%s", err);
		ret = BP_EXIT_FAIL;
	}
	if (r->remote_error[0]) {
		bp_tool_error("compare", "%s", r->remote_error);
		ret = BP_EXIT_FAIL;
	}
	if (r->interrupted)
		return BP_EXIT_INTERRUPTED;
	for (int i = 0; i < r->ncells; i++)
		if (r->cells[i].failed)
			ret = BP_EXIT_FAIL;
	return ret;
}

int cmd_compare(int argc, char **argv)
{
	struct cmp_report *r = calloc(1, sizeof(*r));
	struct bp_host host;
	char err[512];
	int ret;

	if (!r) {
		bp_tool_error("compare", "out of memory");
		return BP_EXIT_FAIL;
	}
	ret = cmp_parse_opts(argc, argv, &r->opts, err, sizeof(err));
	if (ret) {
		ret = bp_opts_exit("compare", ret, err);
		goto out;
	}
	stop_requested = tool_catch_stop_signals();
	bp_host_read(&host);
	snprintf(r->kernel, sizeof(r->kernel), "%s", host.kernel);
	r->sysctl_busy_poll = host.busy_poll;
	r->sysctl_busy_read = host.busy_read;
	snprintf(r->sysctl_why, sizeof(r->sysctl_why), "%s", host.sysctl_why);
	ret = r->opts.remote.remote[0] ? run_remote(r) : run_local(r);
	if (ret == BP_EXIT_OK)
		ret = report(r);
out:
	free(r);
	return ret;
}
