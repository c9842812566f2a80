/* SPDX-License-Identifier: MIT */
/* busypoll compare: the table (settings first, flags last), json and csv. */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "tools/common/cmd.h"
#include "tools/compare/compare.h"
#include "tools/common/emit.h"

static const char *const lat_names[8] = { "min", "mean", "p50", "p90", "p99", "p99_9", "p99_99", "max" };

static void mode_label(const struct cmp_report *r, const struct cmp_cell *c, char *buf, size_t len)
{
	snprintf(buf, len, "%s", r->opts.labels[c->mode_idx]);
}

const char *cpu_list(const int *cpus, int n, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = 0;
	for (int i = 0; i < n && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%d", i ? "," : "", cpus[i]);
	return buf;
}

/* diag_note - the cell's diagnosis for json "proof_note": the client's line, else the server's; NULL none. */
static const char *diag_note(const struct cmp_report *r, const struct cmp_cell *c, char *buf, size_t len)
{
	if (!c->proof_missing)
		return NULL;
	if (cmp_cell_diag(r, c, true, buf, len) || cmp_cell_diag(r, c, false, buf, len))
		return buf;
	return NULL;
}

/* offered_text - the cell's offered rate: "max" (the closed loop) or requests/s. */
static void offered_text(const struct cmp_cell *c, char *buf, size_t len)
{
	if (c->rate > 0)
		snprintf(buf, len, "%.0f", c->rate);
	else
		snprintf(buf, len, "max");
}

static void pct_text(char *buf, size_t len, bool have, double pct)
{
	if (!have)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%+.0f%%", pct);
}

/* any_suspend - a mode of the matrix suspends on either end (it sets per-NAPI values). */
static bool any_suspend(const struct cmp_opts *o)
{
	for (int i = 0; i < o->nmodes; i++)
		if (o->client_mode[i].policy == BP_POLICY_SUSPEND || o->server_mode[i].policy == BP_POLICY_SUSPEND)
			return true;
	return false;
}

static void print_settings(FILE *out, const struct cmp_report *r)
{
	const struct cmp_opts *o = &r->opts;
	char cb[256], sb[256], bp[16], br[16];

	fprintf(out, "busypoll compare on %s\n", r->path);
	fprintf(out, "  kernel %s; client on CPU%s %s, server on CPU%s %s, %d thread%s each; %s, request %u B, "
		     "response %u B\n",
		r->kernel, o->nclient_cpus > 1 ? "s" : "", cpu_list(o->client_cpus, o->nclient_cpus, cb, sizeof(cb)),
		o->nserver_cpus > 1 ? "s" : "", cpu_list(o->server_cpus, o->nserver_cpus, sb, sizeof(sb)), o->threads,
		o->threads == 1 ? "" : "s", o->udp ? "UDP" : "TCP", o->request_size, o->response_size);
	fprintf(out, "  %.1f s per cell: %d run%s of %.2f s, each after %.1f s warm-up%s; both ends in the same "
		     "mode unless shown\n",
		o->duration_s, o->runs, o->runs == 1 ? "" : "s", o->duration_s / o->runs, o->warmup_s,
		o->runs > 1 ? ", the modes alternated (medians; the spread is min..max over the runs)" : "");
	if (o->rates_given)
		fprintf(out, "  offered rates %s: requests/s over all flows in an open loop (Poisson arrivals, latency "
			     "from when each request was due), max the closed loop\n",
			o->rates_text);
	if (r->remote)
		cmp_print_ends(out, r);
	else
		fprintf(out, "  net.core.busy_poll %s, net.core.busy_read %s%s%s%s\n",
			bp_known_text(r->sysctl_busy_poll, bp, sizeof(bp)),
			bp_known_text(r->sysctl_busy_read, br, sizeof(br)), r->sysctl_why[0] ? " (" : "", r->sysctl_why,
			r->sysctl_why[0] ? ")" : "");
	for (int i = 0; i < r->nnapi; i++) {
		const struct cmp_napi *n = &r->napi[i];

		fprintf(out, "  NAPI %u (%s end): defer-hard-irqs %u, gro-flush-timeout %llu ns, irq-suspend-timeout "
			     "%llu ns, threaded %u\n",
			n->id, n->side == 'c' ? "client" : "server", n->defer_hard_irqs,
			(unsigned long long)n->gro_flush_timeout_ns, (unsigned long long)n->irq_suspend_timeout_ns,
			n->threaded);
	}
	if ((r->nnapi || r->remote) && any_suspend(o))
		fprintf(out, "  (epoll:suspend sets its own per-NAPI values for its cells; they are restored after)\n");
	for (int i = 0; i < o->nskipped; i++)
		fprintf(out, "  not run: %s\n", o->skipped[i]);
	for (int i = 0; i < r->nstale; i++)
		fprintf(out, "  at the start: %s\n", r->stale[i]);
	if (r->interrupted)
		fprintf(out, "  interrupted: partial results\n");
}

/* xsk_lost - frames a side's rings lost over the cell: dropped or the rx ring full. */
static uint64_t xsk_lost(const struct cmp_xsk *x)
{
	return x->dropped + x->rx_ring_full;
}

/* xsk_side_text - one side's AF_XDP socket over the cell, for the table. */
static const char *xsk_side_text(const struct cmp_xsk *x, char *buf, size_t len)
{
	if (x->binding == EV_XSK_NONE)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%s, rx dropped %" PRIu64 ", rx ring full %" PRIu64 ", fill ring empty %" PRIu64
			 ", tx ring empty %" PRIu64, ev_xsk_name(x->binding), x->dropped, x->rx_ring_full,
			 x->fill_empty, x->tx_empty);
	return buf;
}

/* print_xsk - each xsk cell's AF_XDP statistics, both ends; X marks a cell whose rings lost frames. */
static void print_xsk(FILE *out, const struct cmp_report *r)
{
	bool any = false;

	for (int i = 0; i < r->ncells; i++) {
		const struct cmp_cell *c = &r->cells[i];
		char label[300], cb[200], sb[200];

		if (c->xsk[0].binding == EV_XSK_NONE && c->xsk[1].binding == EV_XSK_NONE)
			continue;
		if (!any)
			fprintf(out, "\nAF_XDP sockets (client; server), over each cell's runs:\n");
		any = true;
		mode_label(r, c, label, sizeof(label));
		fprintf(out, "%s %s, %d flow%s: %s; %s\n", xsk_lost(&c->xsk[0]) || xsk_lost(&c->xsk[1]) ? "X" : " ",
			label, c->flows, c->flows == 1 ? "" : "s", xsk_side_text(&c->xsk[0], cb, sizeof(cb)),
			xsk_side_text(&c->xsk[1], sb, sizeof(sb)));
	}
	if (any)
		fprintf(out, "  (X: the rings lost frames; tx ring empty counts the kernel finding nothing more to send, "
			     "not a loss)\n");
}

/* emit_xsk - one side's AF_XDP socket over the cell as key, null without one. */
static void emit_xsk(struct emit *e, const char *key, const struct cmp_xsk *x)
{
	em_begin(e, key, x->binding == EV_XSK_NONE);
	em_string(e, "binding", x->binding == EV_XSK_NONE ? "" : ev_xsk_name(x->binding), 16);
	em_u64(e, "frames_rx", x->pkt_rx);
	em_u64(e, "rx_dropped", x->dropped);
	em_u64(e, "rx_ring_full", x->rx_ring_full);
	em_u64(e, "fill_ring_empty", x->fill_empty);
	em_u64(e, "tx_ring_empty", x->tx_empty);
	em_end(e);
}

static void print_table(FILE *out, const struct cmp_report *r)
{
	int width = 36;
	bool flags = false, busy = false;

	for (int i = 0; i < r->ncells; i++) {
		char label[300];

		mode_label(r, &r->cells[i], label, sizeof(label));
		if ((int)strlen(label) > width)
			width = (int)strlen(label);
	}
	print_settings(out, r);
	fprintf(out, "\n%-*s %5s %9s %10s %7s %8s %8s %8s %8s %8s %7s %7s %9s %7s %11s  %s\n", width, "mode", "flows",
		"offered", "tx/s", "vs base", "P50 us", "P90", "P99", "P99.9", "P99.99", "P50 vs", "P99 vs", "CPU us/tx",
		"CPU vs", "CPU % c/s", "BusyPollRx/tx client/server");
	for (int i = 0; i < r->ncells; i++) {
		const struct cmp_cell *c = &r->cells[i];
		char label[300], dt[16], d50[16], d99[16], dc[16], rt[32];

		mode_label(r, c, label, sizeof(label));
		if (r->ncoal > 1 && (i == 0 || r->cells[i - 1].coal_idx != c->coal_idx))
			fprintf(out, "%scoalescing %s on both ends:\n", i ? "\n" : "", r->coal_label[c->coal_idx]);
		offered_text(c, rt, sizeof(rt));
		if ((c->failed || c->saturated) && !c->runs) {
			char at[32] = "-";

			/* a saturated cell's achieved rate: what its closed loop carried */
			if (c->saturated && isfinite(c->sat_tps))
				snprintf(at, sizeof(at), "%.0f", c->sat_tps);
			fprintf(out, "%-*s %5d %9s %10s  %s: %s\n", width, label, c->flows, rt, c->saturated ? at : "-",
				c->saturated ? "saturated" : "failed", c->error);
			continue;
		}
		/* an open-loop cell's tx/s is the offered rate for every mode: no tx/s vs base */
		pct_text(dt, sizeof(dt), c->have_baseline && c->mode_idx && !(c->rate > 0), c->d_tps_pct);
		pct_text(d50, sizeof(d50), c->have_baseline && c->mode_idx, c->d_p50_pct);
		pct_text(d99, sizeof(d99), c->have_baseline && c->mode_idx, c->d_p99_pct);
		pct_text(dc, sizeof(dc), c->have_baseline && c->mode_idx && isfinite(c->d_cpu_pct), c->d_cpu_pct);
		fprintf(out, "%-*s %5d %9s %10.0f %7s %8.1f %8.1f %8.1f %8.1f %8.1f %7s %7s %9.2f %7s %5.1f/%-5.1f  %5.2f / %-5.2f%s%s\n",
			width, label, c->flows, rt, c->tps, dt, c->lat_us[2], c->lat_us[3], c->lat_us[4], c->lat_us[5],
			c->lat_us[6], d50, d99, c->cpu_us_per_tx, dc, c->client_util.total, c->server_util.total,
			c->bprx_client_per_tx, c->bprx_server_per_tx, c->proof_missing ? " !" : "",
			c->disturbed ? " ~" : "");
		if (c->runs > 1) {
			struct cmp_spread p50 = cmp_lat_spread(c, 2), p99 = cmp_lat_spread(c, 4);

			fprintf(out, "%-*s %5s %10s over %d runs: tx/s %.0f..%.0f (%.1f%%) mean %.0f; P50 %.1f..%.1f "
				     "mean %.1f; P99 %.1f..%.1f mean %.1f\n",
				width, "", "", "", c->runs, c->tps_min, c->tps_max,
				c->tps ? (c->tps_max - c->tps_min) / c->tps * 100 : 0, c->tps_mean, p50.min, p50.max,
				p50.mean, p99.min, p99.max, p99.mean);
		}
		if (c->failed || c->saturated)
			fprintf(out, "%-*s %5s  %s after %d run%s (their figures above): %s\n", width, "", "",
				c->saturated ? "saturated" : "failed", c->runs, c->runs == 1 ? "" : "s", c->error);
		flags |= c->proof_missing;
		busy |= c->disturbed;
	}
	if (flags) {
		fprintf(out, "\n");
		for (int i = 0; i < r->ncells; i++) {
			const struct cmp_cell *c = &r->cells[i];
			char label[300];

			if (!c->proof_missing)
				continue;
			mode_label(r, c, label, sizeof(label));
			fprintf(out, "! %s, %d flow%s: a busy-poll mode, but under %.2f BusyPollRxPackets per "
				     "transaction on the %s: kernel busy polling (almost) never ran\n",
				label, c->flows, c->flows == 1 ? "" : "s", EV_PROOF_MIN,
				cmp_side_unproven(c, true)
					? (cmp_side_unproven(c, false) ? "client and server" : "client")
					: "server");
			for (int side = 0; side < 2; side++) {
				char why[512];

				if (cmp_cell_diag(r, c, side == 0, why, sizeof(why)))
					fprintf(out, "  why: %s\n", why);
			}
		}
	}
	if (busy) {
		fprintf(out, "\n");
		for (int i = 0; i < r->ncells; i++) {
			const struct cmp_cell *c = &r->cells[i];
			char label[300];

			if (!c->disturbed)
				continue;
			mode_label(r, c, label, sizeof(label));
			fprintf(out, "~ %s, %d flow%s: disturbed: %s\n", label, c->flows, c->flows == 1 ? "" : "s",
				c->disturbed_reason);
		}
	}
	print_xsk(out, r);
	cmp_print_coalesce(out, r);
	fprintf(out, "\nvs base: change against %s with the same flows and offered rate (tx/s up is better, latency "
		     "down is better).\n"
		     "offered: requests/s asked for (max: the closed loop, a flow's next request when its answer came); "
		     "tx/s: achieved.\n"
		     "CPU us/tx: CPU time of both sides (user + system) per transaction; CPU vs: against the "
		     "base (down saves CPU).\n"
		     "CPU %% c/s: each side's CPU time over the interval, percent of one CPU, every thread counted "
		     "(client/server).\n"
		     "BusyPollRx/tx: TcpExt BusyPollRxPackets per transaction on each end, the kernel's proof that "
		     "busy polling ran.\n"
		     "!: a busy-poll mode whose kernel evidence shows no busy polling (why: the likely cause "
		     "and what to change).\n"
		     "~: the machine disturbed a run of the cell (a spinning thread short of its CPU, other "
		     "tasks on the pinned CPUs, a wait on a run queue, steal, a closed loop idle between "
		     "transactions).\n",
		r->opts.client_modes[0]);
	for (int i = 0; i < r->ncells; i++)
		if (r->cells[i].saturated && !r->cells[i].runs) {
			fputs("saturated: offered more than the mode takes; its tx/s is what its closed loop with the same "
			      "flows carried (an open loop carries no more).\n", out);
			break;
		}
	if (busy)
		fprintf(out, "\nthe machine was busy during the run: the figures of the cells marked ~ are not to be "
			     "compared.\n");
}

/* emit_lat - eight latencies in us as key {min, mean, p50..p99_99, max}, or null. */
static void emit_lat(struct emit *e, const char *key, const double lat[8], bool is_null)
{
	em_begin(e, key, is_null);
	for (int k = 0; k < 8; k++)
		em_double(e, lat_names[k], lat[k]);
	em_end(e);
}

/* emit_util - a side's utilisation as key {user, system, total}, or null. */
static void emit_util(struct emit *e, const char *key, const struct cmp_util *u, bool is_null)
{
	em_begin(e, key, is_null);
	em_double(e, "user", u->user);
	em_double(e, "system", u->system);
	em_double(e, "total", u->total);
	em_end(e);
}

static void emit_cell(struct emit *e, const struct cmp_report *r, const struct cmp_cell *c)
{
	const char *cm = r->opts.client_modes[c->mode_idx], *sm = r->opts.server_modes[c->mode_idx];

	em_begin(e, NULL, false);
	em_string(e, "label", r->opts.labels[c->mode_idx], sizeof(r->opts.labels[0]));
	em_string(e, "client_mode", cm, 128);
	em_string(e, "server_mode", sm, 128);
	em_int(e, "flows", c->flows);
	if (cmp_coal_text(r, c))
		em_string(e, "coalesce", cmp_coal_text(r, c), 64);
	else
		em_null(e, "coalesce");
	if (c->rate > 0)
		em_double(e, "offered_rate", c->rate);
	else
		em_null(e, "offered_rate"); /* max: the closed loop */
	em_bool(e, "closed_loop", !(c->rate > 0));
	em_int(e, "runs", c->runs);
	em_bool(e, "failed", c->failed);
	em_bool(e, "saturated", c->saturated);
	em_string(e, "error", c->error, sizeof(c->error));
	em_double(e, "tps", c->runs ? c->tps : NAN); /* no run finished: none, not 0 */
	/* saturated before a run finished: what the mode carried, its closed loop with the same flows */
	em_double(e, "achieved_rate", c->runs ? c->tps : c->saturated ? c->sat_tps : NAN);
	em_bool(e, "achieved_rate_closed_loop", !c->runs && c->saturated && isfinite(c->sat_tps));
	em_double(e, "tps_min", c->runs ? c->tps_min : NAN);
	em_double(e, "tps_max", c->runs ? c->tps_max : NAN);
	em_double(e, "tps_mean", c->runs ? c->tps_mean : NAN);
	for (int k = 2; k <= 4; k += 2) {
		struct cmp_spread sp = cmp_lat_spread(c, k);
		char key[32];

		snprintf(key, sizeof(key), "%s_us_min", lat_names[k]);
		em_double(e, key, sp.min);
		snprintf(key, sizeof(key), "%s_us_max", lat_names[k]);
		em_double(e, key, sp.max);
		snprintf(key, sizeof(key), "%s_us_mean", lat_names[k]);
		em_double(e, key, sp.mean);
	}
	if (e->kind == EMIT_JSON) {
		/* each run as it ran (json only: csv has one line per cell) */
		em_array_begin(e, "samples");
		for (int i = 0; i < c->runs; i++) {
			const struct cmp_sample *s = &c->sample[i];

			em_begin(e, NULL, false);
			em_double(e, "tps", s->tps);
			em_u64(e, "transactions", s->transactions);
			emit_lat(e, "latency_us", s->lat_us, false);
			em_double(e, "cpu_us_per_tx", s->client_cpu_us_per_tx + s->server_cpu_us_per_tx);
			em_double(e, "client_busy_poll_rx_per_tx", s->bprx_client_per_tx);
			em_double(e, "server_busy_poll_rx_per_tx", s->bprx_server_per_tx);
			if (s->disturbed[0])
				em_string(e, "disturbed_reason", s->disturbed, sizeof(s->disturbed));
			else
				em_null(e, "disturbed_reason");
			em_end(e);
		}
		em_array_end(e);
		/* the NAPI settings the cell ran at (its last run, read before its server stopped) */
		if (c->napi_at_read) {
			em_array_begin(e, "napi_ran_at");
			for (int i = 0; i < c->nnapi_at; i++) {
				const struct cmp_napi_at *n = &c->napi_at[i];

				em_begin(e, NULL, false);
				em_u64(e, "id", n->id);
				em_string(e, "end", n->side == 'c' ? "client" : "server", 8);
				em_u64(e, "defer_hard_irqs", n->defer_hard_irqs);
				em_u64(e, "gro_flush_timeout_ns", n->gro_flush_timeout_ns);
				em_u64(e, "irq_suspend_timeout_ns", n->irq_suspend_timeout_ns);
				em_end(e);
			}
			em_array_end(e);
		} else {
			em_null(e, "napi_ran_at");
		}
	}
	em_u64(e, "transactions", c->transactions);
	emit_lat(e, "latency_us", c->lat_us, false);
	emit_lat(e, "latency_from_send_us", c->lat_send_us, !(c->rate > 0) || !c->runs);
	em_double(e, "queued_pct", c->rate > 0 && c->runs ? c->queued_pct : NAN);
	em_double(e, "late_pct", c->rate > 0 && c->runs ? c->late_pct : NAN);
	emit_util(e, "client_cpu_util_pct", &c->client_util, !c->runs);
	emit_util(e, "server_cpu_util_pct", &c->server_util, !c->runs);
	em_double(e, "cpu_us_per_tx", c->cpu_us_per_tx);
	em_double(e, "client_cpu_us_per_tx", c->client_cpu_us_per_tx);
	em_double(e, "server_cpu_us_per_tx", c->server_cpu_us_per_tx);
	em_double(e, "client_syscalls_per_tx", c->syscalls_client_per_tx);
	em_double(e, "server_syscalls_per_tx", c->syscalls_server_per_tx);
	em_double(e, "client_direct_hit_per_tx", c->direct_hit_client_per_tx);
	em_double(e, "server_direct_hit_per_tx", c->direct_hit_server_per_tx);
	em_double(e, "client_busy_poll_rx_per_tx", c->bprx_client_per_tx);
	em_double(e, "server_busy_poll_rx_per_tx", c->bprx_server_per_tx);
	em_bool(e, "client_busy_polls", c->busy_poll_mode_client);
	em_bool(e, "server_busy_polls", c->busy_poll_mode_server);
	em_bool(e, "proof_missing", c->proof_missing);
	emit_xsk(e, "client_xsk", &c->xsk[0]);
	emit_xsk(e, "server_xsk", &c->xsk[1]);
	{
		char note[512], why[512];
		const char *n = diag_note(r, c, note, sizeof(note));

		if (n)
			em_string(e, "proof_note", n, sizeof(note));
		else
			em_null(e, "proof_note");
		em_begin(e, "diagnosis", false);
		for (int side = 0; side < 2; side++) {
			const char *key = side ? "server" : "client";

			if (c->proof_missing && cmp_cell_diag(r, c, side == 0, why, sizeof(why)))
				em_string(e, key, why, sizeof(why));
			else
				em_null(e, key);
		}
		em_end(e);
	}
	em_bool(e, "disturbed", c->disturbed);
	if (c->disturbed)
		em_string(e, "disturbed_reason", c->disturbed_reason, sizeof(c->disturbed_reason));
	else
		em_null(e, "disturbed_reason");
	if (c->have_baseline && c->mode_idx) {
		em_double(e, "tps_vs_base_pct", c->rate > 0 ? NAN : c->d_tps_pct); /* open loop: the rate was offered */
		em_double(e, "p50_vs_base_pct", c->d_p50_pct);
		em_double(e, "p99_vs_base_pct", c->d_p99_pct);
		em_double(e, "cpu_vs_base_pct", c->d_cpu_pct);
	} else {
		em_null(e, "tps_vs_base_pct");
		em_null(e, "p50_vs_base_pct");
		em_null(e, "p99_vs_base_pct");
		em_null(e, "cpu_vs_base_pct");
	}
	em_end(e);
}

static void print_json(FILE *out, const struct cmp_report *r)
{
	const struct cmp_opts *o = &r->opts;
	struct emit e = { .kind = EMIT_JSON, .out = out };

	em_begin(&e, NULL, false);
	em_string(&e, "path", r->path, sizeof(r->path));
	em_known_string(&e, "kernel", r->kernel, sizeof(r->kernel));
	em_bool(&e, "interrupted", r->interrupted);
	em_begin(&e, "settings", false);
	{
		int64_t c[RR_MAX_THREADS], s[RR_MAX_THREADS];

		for (int i = 0; i < o->nclient_cpus; i++)
			c[i] = o->client_cpus[i];
		for (int i = 0; i < o->nserver_cpus; i++)
			s[i] = o->server_cpus[i];
		em_list(&e, "client_cpus", c, (size_t)o->nclient_cpus);
		em_list(&e, "server_cpus", s, (size_t)o->nserver_cpus);
	}
	em_int(&e, "threads", o->threads);
	em_u64(&e, "request_size", o->request_size);
	em_u64(&e, "response_size", o->response_size);
	em_double(&e, "duration_s", o->duration_s);
	em_double(&e, "warmup_s", o->warmup_s);
	em_int(&e, "runs", o->runs);
	em_string(&e, "rates", o->rates_text, sizeof(o->rates_text));
	em_known_int(&e, "sysctl_busy_poll", r->sysctl_busy_poll);
	em_known_int(&e, "sysctl_busy_read", r->sysctl_busy_read);
	em_known_string(&e, "sysctl_note", r->sysctl_why, sizeof(r->sysctl_why)); /* why one is null */
	em_end(&e);
	em_array_begin(&e, "napi");
	for (int i = 0; i < r->nnapi; i++) {
		const struct cmp_napi *n = &r->napi[i];

		em_begin(&e, NULL, false);
		em_u64(&e, "id", n->id);
		em_string(&e, "end", n->side == 'c' ? "client" : "server", 8);
		em_u64(&e, "defer_hard_irqs", n->defer_hard_irqs);
		em_u64(&e, "gro_flush_timeout_ns", n->gro_flush_timeout_ns);
		em_u64(&e, "irq_suspend_timeout_ns", n->irq_suspend_timeout_ns);
		em_u64(&e, "threaded", n->threaded);
		em_end(&e);
	}
	em_array_end(&e);
	cmp_emit_ends(&e, r);
	em_array_begin(&e, "stale_beds_removed");
	for (int i = 0; i < r->nstale; i++) {
		em_begin(&e, NULL, false);
		em_string(&e, "what", r->stale[i], sizeof(r->stale[i]));
		em_end(&e);
	}
	em_array_end(&e);
	em_array_begin(&e, "skipped");
	for (int i = 0; i < o->nskipped; i++) {
		em_begin(&e, NULL, false);
		em_string(&e, "reason", o->skipped[i], sizeof(o->skipped[i]));
		em_end(&e);
	}
	em_array_end(&e);
	em_array_begin(&e, "cells");
	for (int i = 0; i < r->ncells; i++)
		emit_cell(&e, r, &r->cells[i]);
	em_array_end(&e);
	em_end(&e);
	fputc('\n', out);
}

static void print_csv(FILE *out, const struct cmp_report *r)
{
	struct emit e = { .kind = EMIT_CSV_HEADER, .out = out };
	struct cmp_cell empty = { 0 };

	emit_cell(&e, r, r->ncells ? &r->cells[0] : &empty);
	fputc('\n', out);
	for (int i = 0; i < r->ncells; i++) {
		e = (struct emit){ .kind = EMIT_CSV_ROW, .out = out };
		emit_cell(&e, r, &r->cells[i]);
		fputc('\n', out);
	}
}

void compare_print(FILE *out, const struct cmp_report *r)
{
	switch (r->opts.format) {
	case TOOL_FORMAT_JSON: print_json(out, r); break;
	case TOOL_FORMAT_CSV: print_csv(out, r); break;
	default: print_table(out, r); break;
	}
}
