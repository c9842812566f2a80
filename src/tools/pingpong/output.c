/* SPDX-License-Identifier: MIT */
/*
 * busypoll pingpong: printing a result (contract in tools/pingpong/pingpong.h).
 *
 * table: what a person reads at a glance: the runs (or the matrix rows), per round
 *        trip counters of both sides, and with --breakdown the components per row
 *        and how they move between rows, beside the cost of an empty poll.
 * json:  everything, nested: settings, rows, each row's runs.
 * csv:   one line per run and one "avg" line per row, the same columns every line
 *        (a record walked through tools/common/emit.c's writer: header and rows
 *        cannot disagree). Breakdown columns are filled on "avg" lines only: the
 *        components are pooled over a row's runs.
 *
 * Units: microseconds for times (fields end in _us), per transaction for counters
 * (_per_tx: a round trip is pingpong's transaction; tools/harness/evidence.h),
 * nanoseconds for the calibration (_ns). A figure that does not exist
 * (no samples, no server answer) is null in json, empty in csv, "-" in the table.
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "tools/common/cmd.h"
#include "tools/pingpong/pingpong.h"
#include "tools/common/emit.h"

static const char *proto_name(const struct pp_opts *o)
{
	return o->tcp ? "tcp" : "udp";
}

/* ---- json and csv ---- */

/* emit_side - a side's evidence per round trip: the shared fields (_per_tx, a round trip is a transaction). */
static void emit_side(struct emit *e, const char *key, const struct evidence *s)
{
	ev_emit(e, key, s, s->transactions, "tx", !s->valid);
}

static void emit_hist_us(struct emit *e, const char *key, const struct bp_hist *h)
{
	em_begin(e, key, !h || !h->count);
	em_u64(e, "count", h ? h->count : 0);
	em_double(e, "min", h && h->count ? h->min / 1e3 : NAN);
	em_double(e, "mean", h && h->count ? bp_hist_mean(h) / 1e3 : NAN);
	em_double(e, "p50", h && h->count ? bp_hist_percentile(h, 50) / 1e3 : NAN);
	em_double(e, "p99", h && h->count ? bp_hist_percentile(h, 99) / 1e3 : NAN);
	em_double(e, "p99_9", h && h->count ? bp_hist_percentile(h, 99.9) / 1e3 : NAN);
	em_double(e, "max", h && h->count ? h->max / 1e3 : NAN);
	em_end(e);
}

static void emit_breakdown(struct emit *e, const struct pp_bd_acc *bd)
{
	em_begin(e, "breakdown", bd == NULL);
	em_u64(e, "samples", bd ? bd->samples : 0);
	em_u64(e, "complete", bd ? bd->complete : 0);
	em_u64(e, "no_client_tx_ts", bd ? bd->miss[PP_MISS_CLIENT_TX] : 0);
	em_u64(e, "no_client_rx_ts", bd ? bd->miss[PP_MISS_CLIENT_RX] : 0);
	em_u64(e, "no_server_rx_ts", bd ? bd->miss[PP_MISS_SERVER_RX] : 0);
	em_u64(e, "no_server_tx_ts", bd ? bd->miss[PP_MISS_SERVER_TX] : 0);
	em_u64(e, "out_of_order", bd ? bd->miss[PP_MISS_ORDER] : 0);
	for (int c = 0; c < PP_NCOMP; c++) {
		const struct bp_hist *h = bd ? &bd->comp[c] : NULL;

		em_begin(e, pp_comp_key(c), !h || !h->count);
		em_double(e, "mean_us", h && h->count ? bp_hist_mean(h) / 1e3 : NAN);
		em_double(e, "p50_us", h && h->count ? bp_hist_percentile(h, 50) / 1e3 : NAN);
		em_double(e, "p99_us", h && h->count ? bp_hist_percentile(h, 99) / 1e3 : NAN);
		em_end(e);
	}
	em_double(e, "rtt_mean_us", bd && bd->rtt.count ? bp_hist_mean(&bd->rtt) / 1e3 : NAN);
	/* The same round trips timed by the payload's CLOCK_MONOTONIC: the sum's check. */
	em_double(e, "rtt_mono_mean_us",
		  bd && bd->complete ? (double)bd->rtt_mono_sum / (double)bd->complete / 1e3 : NAN);
	em_end(e);
}

/* The figures of a run (run >= 0) or of the row's average (run < 0): the csv record. */
static void emit_record(struct emit *e, const struct pp_row *row, int run, bool with_bd)
{
	const struct pp_run *r = run >= 0 ? &row->runs[run] : NULL;
	const struct pp_agg *a = &row->agg;
	bool ran = r || row->nruns; /* a row never run (interrupted before it) has no figures: null */
	uint64_t lost = 0;
	char runtext[16];

	for (int i = 0; i < row->nruns; i++) /* the row's: every run's resent requests */
		lost += row->runs[i].lost;

	em_string(e, "row", row->label, sizeof(row->label));
	em_string(e, "client_mode", row->client_mode, sizeof(row->client_mode));
	em_string(e, "server_mode", row->server_mode, sizeof(row->server_mode));
	if (r)
		snprintf(runtext, sizeof(runtext), "%d", run + 1);
	else
		snprintf(runtext, sizeof(runtext), "avg");
	em_string(e, "run", runtext, sizeof(runtext));
	if (ran) {
		em_u64(e, "n", r ? r->n : row->all->count);
		em_u64(e, "lost", r ? r->lost : lost);
	} else {
		em_null(e, "n");
		em_null(e, "lost");
	}
	em_double(e, "min_us", r ? r->min_us : ran ? a->min_us : NAN);
	em_double(e, "mean_us", r ? r->mean_us : ran ? a->mean_us : NAN);
	em_double(e, "sd_us", r || !ran ? NAN : a->sd_us);
	em_double(e, "p50_us", r ? r->p50_us : ran ? a->p50_us : NAN);
	em_double(e, "p99_us", r ? r->p99_us : ran ? a->p99_us : NAN);
	em_double(e, "p99_9_us", r ? r->p999_us : ran ? a->p999_us : NAN);
	em_double(e, "max_us", r ? r->max_us : ran ? a->max_us : NAN);
	emit_side(e, "client", r ? &r->client : &row->client);
	emit_side(e, "server", r ? &r->server : &row->server);
	if (with_bd)
		emit_breakdown(e, r ? NULL : row->bd);
}

static void emit_settings(struct emit *e, const struct pp_result *res)
{
	const struct pp_opts *o = &res->opts;

	em_begin(e, "settings", false);
	em_string(e, "protocol", proto_name(o), 4);
	em_u64(e, "size", o->size);
	em_u64(e, "n", o->n);
	em_int(e, "runs", o->runs);
	em_u64(e, "warmup", o->warmup);
	em_string(e, "mode", o->mode_text, sizeof(o->mode_text));
	em_bool(e, "matrix", o->matrix);
	em_bool(e, "breakdown", o->breakdown);
	if (o->cpu >= 0)
		em_int(e, "cpu", o->cpu);
	else
		em_null(e, "cpu");
	if (o->priority >= 0)
		em_int(e, "priority", o->priority);
	else
		em_null(e, "priority");
	em_u64(e, "port", o->port);
	em_string(e, "server_host", o->host, sizeof(o->host));
	em_string(e, "server_address", res->server_addr, sizeof(res->server_addr));
	em_double(e, "timeout_s", o->timeout_s);
	em_end(e);
}

static void print_json(FILE *out, const struct pp_result *res)
{
	struct emit e = { .kind = EMIT_JSON, .out = out };
	const struct pp_calib *c = &res->calib;

	em_begin(&e, NULL, false);
	emit_settings(&e, res);
	em_begin(&e, "server", false);
	em_string(&e, "own_mode", res->server_mode, sizeof(res->server_mode));
	if (res->server_cpu >= 0)
		em_int(&e, "cpu", res->server_cpu);
	else
		em_null(&e, "cpu");
	em_u64(&e, "delay_us", res->server_delay_us);
	if (res->agent[0]) {
		em_string(&e, "agent", res->agent, sizeof(res->agent));
		em_u64(&e, "pid", res->server_pid);
	} else {
		em_null(&e, "agent");
		em_null(&e, "pid");
	}
	em_end(&e);
	em_known_string(&e, "kernel", res->kernel, sizeof(res->kernel));
	em_bool(&e, "interrupted", res->interrupted);
	if (res->failed[0])
		em_string(&e, "failed", res->failed, sizeof(res->failed));
	else
		em_null(&e, "failed");
	em_begin(&e, "calibration", !c->valid);
	if (c->cpu >= 0)
		em_int(&e, "cpu", c->cpu);
	else
		em_null(&e, "cpu");
	em_double(&e, "syscall_ns", c->syscall_ns);
	em_double(&e, "epoll_wait0_ns", c->epoll_wait0_ns);
	em_double(&e, "uring_enter_ns", c->uring_enter_ns);
	em_double(&e, "uring_nop_ns", c->uring_nop_ns);
	em_end(&e);
	em_array_begin(&e, "rows");
	for (int i = 0; i < res->nrows; i++) {
		const struct pp_row *row = &res->rows[i];

		em_begin(&e, NULL, false);
		emit_record(&e, row, -1, res->opts.breakdown);
		em_int(&e, "runs_done", row->nruns);
		em_double(&e, "mean_lo_us", row->nruns ? row->agg.mean_lo_us : NAN);
		em_double(&e, "mean_hi_us", row->nruns ? row->agg.mean_hi_us : NAN);
		if (row->nruns)
			em_u64(&e, "server_napi_id", row->server_napi_id);
		else
			em_null(&e, "server_napi_id");
		emit_hist_us(&e, "all_samples_us", row->all);
		em_array_begin(&e, "runs");
		for (int k = 0; k < row->nruns; k++) {
			em_begin(&e, NULL, false);
			emit_record(&e, row, k, false);
			em_u64(&e, "total", row->runs[k].total);
			em_u64(&e, "client_napi_id", row->runs[k].napi_id);
			em_bool(&e, "interrupted", row->runs[k].interrupted);
			em_end(&e);
		}
		em_array_end(&e);
		em_end(&e);
	}
	em_array_end(&e);
	em_end(&e);
	fputc('\n', out);
}

static void print_csv(FILE *out, const struct pp_result *res)
{
	static struct pp_row zero_row;
	static struct bp_hist zero_hist;
	struct emit e = { .kind = EMIT_CSV_HEADER, .out = out };

	/* The columns never depend on the values: an empty row names them all. */
	zero_row.all = &zero_hist;
	emit_record(&e, &zero_row, -1, true);
	em_string(&e, "failed", "", 1);
	fputc('\n', out);
	for (int i = 0; i < res->nrows; i++) {
		const struct pp_row *row = &res->rows[i];

		/* each run, then the row's average */
		for (int k = 0; k <= row->nruns; k++) {
			e = (struct emit){ .kind = EMIT_CSV_ROW, .out = out };
			emit_record(&e, row, k < row->nruns ? k : -1, true);
			em_string(&e, "failed", res->failed, sizeof(res->failed)); /* every line: what this file is from */
			fputc('\n', out);
		}
	}
}

/* ---- table ---- */

/* num - "%.*f" of v, or "-" when it does not exist. */
static const char *num(char *buf, size_t len, double v, int dec)
{
	if (isfinite(v))
		snprintf(buf, len, "%.*f", dec, v);
	else
		snprintf(buf, len, "-");
	return buf;
}

/*
 * clean - a mode text for a fixed-width column: printable ASCII only (the server's
 * text comes off the wire and could hold escape sequences), "-" when empty.
 */
static const char *clean(char *buf, size_t len, const char *s, size_t max)
{
	size_t n = strnlen(s, max), j = 0;

	for (size_t i = 0; i < n && j + 1 < len; i++)
		buf[j++] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
	buf[j] = 0;
	if (!j)
		snprintf(buf, len, "-");
	return buf;
}

static void print_header(FILE *out, const struct pp_result *res)
{
	const struct pp_opts *o = &res->opts;
	char text[PP_MODE_LEN];

	fprintf(out, "busypoll pingpong %s, %" PRIu32 " B, to %s", o->tcp ? "TCP" : "UDP", o->size,
		clean(text, sizeof(text), res->server_addr[0] ? res->server_addr : o->host,
		      sizeof(res->server_addr)));
	fprintf(out, ": %d run%s x %" PRIu64 " round trips after %" PRIu64 " warm-up\n", o->runs,
		o->runs == 1 ? "" : "s", o->n, o->warmup);
	fputs("  client   CPU ", out);
	if (o->cpu >= 0)
		fprintf(out, "%d", o->cpu);
	else
		fputs("not pinned", out);
	if (!o->matrix) {
		fprintf(out, ", mode %s", clean(text, sizeof(text), o->mode_text, sizeof(o->mode_text)));
	}
	fputs("\n  server   CPU ", out);
	if (res->server_cpu >= 0)
		fprintf(out, "%d", res->server_cpu);
	else
		fputs("not pinned", out);
	fprintf(out, ", own mode %s", clean(text, sizeof(text), res->server_mode, sizeof(res->server_mode)));
	if (res->server_delay_us)
		fprintf(out, ", adds %" PRIu32 " us before each reply", res->server_delay_us);
	if (res->agent[0])
		fprintf(out, ", started by %s (pid %" PRIu32 ")", res->agent, res->server_pid);
	fprintf(out, "\n  kernel   %s\n", clean(text, sizeof(text), res->kernel, sizeof(res->kernel)));
	if (o->cpu < 0 || res->server_cpu < 0)
		fputs("  note     pin both ends to different CPUs (--cpus): unpinned figures flip between modes\n",
		      out);
	fputc('\n', out);
	if (res->failed[0])
		fprintf(out, "failed: %s; partial results\n", clean(text, sizeof(text), res->failed, sizeof(res->failed)));
	else if (res->interrupted)
		fputs("interrupted: partial results\n", out);
	if (!pp_measured(res))
		fputs(res->interrupted ? "interrupted before a run finished: nothing measured\n" : "nothing was measured\n",
		      out);
}

static void print_runs(FILE *out, const struct pp_row *row)
{
	char b[6][32];

	fprintf(out, "%-6s %9s %9s %9s %9s %9s %9s   (us)\n", "run", "min", "mean", "P50", "P99",
		"P99.9", "max");
	for (int i = 0; i < row->nruns; i++) {
		const struct pp_run *r = &row->runs[i];

		fprintf(out, "%-6d %9s %9s %9s %9s %9s %9s%s\n", i + 1, num(b[0], 32, r->min_us, 1),
			num(b[1], 32, r->mean_us, 1), num(b[2], 32, r->p50_us, 1),
			num(b[3], 32, r->p99_us, 1), num(b[4], 32, r->p999_us, 1),
			num(b[5], 32, r->max_us, 1), r->interrupted ? "  (interrupted)" : "");
	}
	fprintf(out, "%-6s %9s %9s %9s %9s %9s %9s\n", "avg", num(b[0], 32, row->agg.min_us, 1),
		num(b[1], 32, row->agg.mean_us, 1), num(b[2], 32, row->agg.p50_us, 1),
		num(b[3], 32, row->agg.p99_us, 1), num(b[4], 32, row->agg.p999_us, 1),
		num(b[5], 32, row->agg.max_us, 1));
	fprintf(out, "spread of the run means: sd %s us, %s..%s us over %d run%s\n",
		num(b[0], 32, row->agg.sd_us, 2), num(b[1], 32, row->agg.mean_lo_us, 1),
		num(b[2], 32, row->agg.mean_hi_us, 1), row->agg.runs, row->agg.runs == 1 ? "" : "s");
}

static void print_matrix(FILE *out, const struct pp_result *res)
{
	char b[7][32], cm[PP_MODE_LEN], sm[PP_MODE_LEN];
	int w = 12; /* the mode columns fit the longest mode */

	for (int i = 0; i < res->nrows; i++) {
		int lc = (int)strlen(clean(cm, sizeof(cm), res->rows[i].client_mode, PP_MODE_LEN));
		int ls = (int)strlen(clean(sm, sizeof(sm), res->rows[i].server_mode, PP_MODE_LEN));

		w = lc > w ? lc : w;
		w = ls > w ? ls : w;
	}
	fprintf(out, "%-16s %-*s %-*s %8s %8s %7s %8s %8s %8s   (us, average of the runs)\n", "", w,
		"client mode", w, "server mode", "min", "mean", "sd", "P50", "P99", "P99.9");
	for (int i = 0; i < res->nrows; i++) {
		const struct pp_row *row = &res->rows[i];

		if (!row->nruns) { /* interrupted before it: no figures, not zeros */
			fprintf(out, "%-16s %-*s %-*s %8s\n", row->label, w,
				clean(cm, sizeof(cm), row->client_mode, sizeof(row->client_mode)), w, "-", "not run");
			continue;
		}
		fprintf(out, "%-16s %-*s %-*s %8s %8s %7s %8s %8s %8s\n", row->label, w,
			clean(cm, sizeof(cm), row->client_mode, sizeof(row->client_mode)), w,
			clean(sm, sizeof(sm), row->server_mode, sizeof(row->server_mode)),
			num(b[0], 32, row->agg.min_us, 1), num(b[1], 32, row->agg.mean_us, 1),
			num(b[2], 32, row->agg.sd_us, 2), num(b[3], 32, row->agg.p50_us, 1),
			num(b[4], 32, row->agg.p99_us, 1), num(b[5], 32, row->agg.p999_us, 1));
	}
}

#define SIDES_ROW "  %-28s"

/* Per round trip counters: client/server for each row. */
static void print_counters(FILE *out, const struct pp_result *res)
{
	static const char *const labels[] = { "syscalls", "empty polls", "wake-ups", "CPU us (user+sys)",
					      "context switches", "BusyPollRxPackets", "NET_RX softirqs" };
	char c[32], s[32];

	fputs("\nper round trip, a transaction (client / server)", out);
	for (int i = 0; i < res->nrows && res->nrows > 1; i++) /* one row: no column labels */
		fprintf(out, " %23s", res->rows[i].label);
	fputc('\n', out);
	for (size_t l = 0; l < sizeof(labels) / sizeof(labels[0]); l++) {
		fprintf(out, SIDES_ROW "    ", labels[l]);
		for (int i = 0; i < res->nrows; i++) {
			const struct evidence *cs = &res->rows[i].client, *ss = &res->rows[i].server;
			uint64_t cv = 0, sv = 0;
			char cell[64];

			switch (l) {
			case 0: cv = cs->syscalls; sv = ss->syscalls; break;
			case 1: cv = cs->empty_polls; sv = ss->empty_polls; break;
			case 2: cv = cs->wakeups; sv = ss->wakeups; break;
			case 3: cv = cs->utime_us + cs->stime_us; sv = ss->utime_us + ss->stime_us; break;
			case 4: cv = cs->nvcsw + cs->nivcsw; sv = ss->nvcsw + ss->nivcsw; break;
			case 5: cv = cs->busy_poll_rx; sv = ss->busy_poll_rx; break;
			default: cv = cs->net_rx; sv = ss->net_rx; break;
			}
			snprintf(cell, sizeof(cell), "%s / %s", ev_per_text(c, sizeof(c), pp_per_tx(cv, cs)),
				 ev_per_text(s, sizeof(s), pp_per_tx(sv, ss)));
			fprintf(out, " %23s", cell);
		}
		fputc('\n', out);
	}
	for (int i = 0; i < res->nrows; i++) {
		const struct evidence *cs = &res->rows[i].client, *ss = &res->rows[i].server;
		char xc[160], xs[160];

		if (cs->xsk || ss->xsk)
			fprintf(out, "  AF_XDP%s%s client: %s; server: %s\n", res->nrows > 1 ? " " : "",
				res->nrows > 1 ? res->rows[i].label : "", ev_xsk_text(cs, xc, sizeof(xc)),
				ev_xsk_text(ss, xs, sizeof(xs)));
	}
}

/*
 * print_spin_cost - for a side that polled from userspace (empty polls every round
 * trip), what its looks cost per round trip at the calibrated price of one empty poll
 * of its backend, and how late a look finds a packet on average (half a look).
 */
static void print_spin_cost(FILE *out, const struct pp_row *row, int side, const struct pp_calib *cal,
			    bool label)
{
	const struct evidence *s = side ? &row->server : &row->client;
	const char *mode = side ? row->server_mode : row->client_mode;
	double looks = pp_per_tx(s->empty_polls, s);
	double cost = !strncmp(mode, "uring", 5) ? cal->uring_enter_ns : cal->epoll_wait0_ns;

	if (!isfinite(looks) || looks < 1)
		return;
	/* A plain io_uring ring looks at its completion queue without a syscall. */
	if (pp_per_tx(s->syscalls, s) < looks) {
		fprintf(out, "  %s%s%s polled from userspace: %.1f empty polls per round trip, most without a syscall\n",
			label ? row->label : "", label ? ": " : "", side ? "server" : "client", looks);
		return;
	}
	fprintf(out, "  %s%s%s polled from userspace: %.1f empty polls per round trip x %.0f ns = %.2f us per "
		"round trip in empty %s; a packet waits ~%.2f us for the next look\n",
		label ? row->label : "", label ? ": " : "", side ? "server" : "client", looks, cost,
		looks * cost / 1e3, !strncmp(mode, "uring", 5) ? "io_uring_enter" : "epoll_wait(0)",
		cost / 2e3);
}

static void print_breakdown(FILE *out, const struct pp_result *res)
{
	const struct pp_row *base = &res->rows[0];
	const struct pp_calib *cal = &res->calib;
	char b[4][32];

	fputs("\nbreakdown: each interval on one host's clock (software timestamps), us\n", out);
	for (int i = 0; i < res->nrows; i++) {
		const struct pp_bd_acc *bd = res->rows[i].bd;
		bool any = false;

		fprintf(out, "  %s: %" PRIu64 " of %" PRIu64 " measured round trips have every timestamp",
			res->nrows > 1 ? res->rows[i].label : "round trips", bd->complete, bd->samples);
		for (int m = 0; m < PP_NMISS; m++)
			if (bd->miss[m]) {
				fprintf(out, "%s%" PRIu64 ": %s", any ? "; " : " (the rest: ", bd->miss[m],
					pp_miss_text(m));
				any = true;
			}
		fputs(any ? ")\n" : "\n", out);
	}
	fprintf(out, "%-28s", "");
	for (int i = 0; i < res->nrows; i++)
		fprintf(out, " | %-24s", res->nrows > 1 ? res->rows[i].label : "");
	fprintf(out, "\n%-28s", "component");
	for (int i = 0; i < res->nrows; i++)
		fprintf(out, " | %7s %7s %8s", "mean", "P50", "P99");
	fputc('\n', out);
	for (int c = 0; c <= PP_NCOMP; c++) {
		fprintf(out, "%-28s", c < PP_NCOMP ? pp_comp_name(c) : "= RTT of these round trips");
		for (int i = 0; i < res->nrows; i++) {
			const struct bp_hist *h = c < PP_NCOMP ? &res->rows[i].bd->comp[c] : &res->rows[i].bd->rtt;
			bool has = h->count > 0;

			fprintf(out, " | %7s %7s %8s", num(b[0], 32, has ? bp_hist_mean(h) / 1e3 : NAN, 2),
				num(b[1], 32, has ? bp_hist_percentile(h, 50) / 1e3 : NAN, 2),
				num(b[2], 32, has ? bp_hist_percentile(h, 99) / 1e3 : NAN, 2));
		}
		fputc('\n', out);
	}
	if (res->nrows > 1) {
		fprintf(out, "\nchange of the mean against %s, us\n", base->label);
		for (int c = 0; c <= PP_NCOMP; c++) {
			const struct bp_hist *h0 = c < PP_NCOMP ? &base->bd->comp[c] : &base->bd->rtt;

			fprintf(out, "%-28s", c < PP_NCOMP ? pp_comp_name(c) : "RTT");
			for (int i = 1; i < res->nrows; i++) {
				const struct bp_hist *h = c < PP_NCOMP ? &res->rows[i].bd->comp[c] : &res->rows[i].bd->rtt;
				double d = h->count && h0->count ? (bp_hist_mean(h) - bp_hist_mean(h0)) / 1e3 : NAN;

				if (isfinite(d))
					snprintf(b[0], 32, "%+.2f", d);
				else
					snprintf(b[0], 32, "-");
				fprintf(out, "  %s %8s", res->rows[i].label, b[0]);
			}
			fputc('\n', out);
		}
	}
	if (cal->valid) {
		fprintf(out, "\ncost of one call on this machine (CPU %s, ns): syscall (getppid) %.0f, "
			"empty epoll_wait(0) %.0f, empty io_uring_enter (GETEVENTS) %.0f, io_uring NOP "
			"submit+reap %.0f\n",
			cal->cpu >= 0 ? (snprintf(b[3], 32, "%d", cal->cpu), b[3]) : "not pinned",
			cal->syscall_ns, cal->epoll_wait0_ns, cal->uring_enter_ns, cal->uring_nop_ns);
		fputs("  a userspace spin pays one empty poll per look, so it notices a packet about half a poll\n"
		      "  late on average; the kernel's busy-poll loop enters once and also runs the NAPI poll on\n"
		      "  the waiting CPU. The rx wake-up rows above show which effect dominates here.\n",
		      out);
		for (int i = 0; i < res->nrows; i++)
			for (int side = 0; side < 2; side++)
				print_spin_cost(out, &res->rows[i], side, cal, res->nrows > 1);
	}
	fputs("  timestamps cost each side error-queue reads per round trip: the RTT above includes them\n", out);
}

static void print_table(FILE *out, const struct pp_result *res)
{
	print_header(out, res);
	if (res->opts.matrix)
		print_matrix(out, res);
	else
		print_runs(out, &res->rows[0]);
	print_counters(out, res);
	if (res->nrows == 1 && res->rows[0].nruns &&
	    res->rows[0].server_napi_id + res->rows[0].runs[0].napi_id)
		fprintf(out, "  NAPI id: client %" PRIu32 ", server %" PRIu32 "\n",
			res->rows[0].runs[0].napi_id, res->rows[0].server_napi_id);
	if (res->opts.breakdown)
		print_breakdown(out, res);
	for (int i = 0; i < res->nrows; i++) {
		const struct pp_row *row = &res->rows[i];
		struct bp_mode m;

		/* a busy-poll mode over a path with no NAPI (loopback) had nothing to busy poll: say so */
		if (!row->nruns || row->runs[0].napi_id || row->server_napi_id ||
		    bp_mode_parse(row->client_mode, &m, NULL, 0) || !bp_mode_is_busy_poll(&m))
			continue;
		fprintf(out, "\nnote: %s asks the kernel to busy poll NAPI, but the socket had no NAPI id (loopback has "
			"none): it had nothing to busy poll; `busypoll testbed up` makes a path that has one\n",
			row->client_mode);
		break;
	}
}

void pp_print(FILE *out, const struct pp_result *r, enum tool_format format)
{
	switch (format) {
	case TOOL_FORMAT_JSON:
		print_json(out, r);
		break;
	case TOOL_FORMAT_CSV:
		print_csv(out, r);
		break;
	case TOOL_FORMAT_TABLE:
	default:
		print_table(out, r);
		break;
	}
}
