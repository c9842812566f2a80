/* SPDX-License-Identifier: MIT */
/*
 * busypoll rr: printing a result (contract in tools/rr/rr.h).
 *
 * json and csv come from one walk over the result (emit_result) through a small
 * writer that either nests (json) or flattens (csv), so the two can never disagree
 * on which fields exist: a csv column is the json path with dots ("latency_us.p50",
 * "client.syscalls_per_tx"). A null json object (the server when its side is not
 * valid) becomes empty csv fields, so every row has the same columns as the header
 * whatever the run, and `compare` can print one header for many rows.
 *
 * Per-transaction figures divide a side's counters, which cover the measured
 * interval only, by the measured transactions (r->transactions), not by the side's
 * all-phases count: warm-up transactions did not cost anything in that interval.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tools/common/cmd.h"
#include "tools/common/emit.h"
#include "tools/rr/rr.h"

/* ---- the result, walked once for json and csv ---- */

/*
 * client_mode - the settings' canonical mode (mode_text, 128 bytes: never cut short),
 * else the client side's (struct evidence's mode has 128). *max: its array's size.
 */
static const char *client_mode(const struct rr_result *r, size_t *max)
{
	if (r->opts.mode_text[0]) {
		*max = sizeof(r->opts.mode_text);
		return r->opts.mode_text;
	}
	*max = sizeof(r->client.mode);
	return r->client.mode;
}

/*
 * emit_side_of - one side: the shared evidence fields, per transaction of the
 * measured interval (the counters cover it alone, so warm-up transactions cost
 * nothing in it).
 */
static void emit_side_of(struct emit *e, const char *key, const struct evidence *s, uint64_t tx, bool is_null)
{
	ev_emit(e, key, s, tx, "tx", is_null);
}

/*
 * rr_note - what a reader must know to read the figures right: a busy-poll mode
 * whose flows had no NAPI id (loopback has none) had nothing to busy poll. "" none.
 */
static const char *rr_note(const struct rr_result *r, char *buf, size_t len)
{
	buf[0] = 0;
	if (bp_mode_is_busy_poll(&r->opts.mode) && r->client.valid && !r->client.n_napi_ids)
		snprintf(buf, len, "%s asks the kernel to busy poll NAPI, but no flow had a NAPI id (loopback has "
			 "none): it had nothing to busy poll; `busypoll testbed up` makes a path that has one",
			 r->opts.mode_text);
	return buf;
}

/* em_text_or_null - a text, null (csv: empty) when it is "". */
static void em_text_or_null(struct emit *e, const char *key, const char *s, size_t max)
{
	if (s[0])
		em_string(e, key, s, max);
	else
		em_null(e, key);
}

/* emit_latency - a histogram as key {min, mean, p50..p99_99, max} in us; null when it has no sample. */
static void emit_latency(struct emit *e, const char *key, const struct bp_hist *h)
{
	em_begin(e, key, h->count == 0);
	em_double(e, "min", h->min / 1e3);
	em_double(e, "mean", bp_hist_mean(h) / 1e3);
	em_double(e, "p50", bp_hist_percentile(h, 50) / 1e3);
	em_double(e, "p90", bp_hist_percentile(h, 90) / 1e3);
	em_double(e, "p99", bp_hist_percentile(h, 99) / 1e3);
	em_double(e, "p99_9", bp_hist_percentile(h, 99.9) / 1e3);
	em_double(e, "p99_99", bp_hist_percentile(h, 99.99) / 1e3);
	em_double(e, "max", h->max / 1e3);
	em_end(e);
}

/*
 * emit_open_loop - the open loop's figures (null in a closed loop): the achieved
 * rate beside the offered one, how the requests went out, the latency from the send.
 */
static void emit_open_loop(struct emit *e, const struct rr_result *r)
{
	const struct rr_opts *o = &r->opts;

	em_begin(e, "open_loop", !(o->rate > 0));
	em_double(e, "offered_rate", o->rate);
	em_double(e, "achieved_rate", r->tps);
	em_u64(e, "max_outstanding", r->max_outstanding);
	em_u64(e, "outstanding_peak", r->outstanding_peak);
	em_u64(e, "queued", r->queued);
	em_u64(e, "late", r->late);
	em_double(e, "late_after_us", RR_LATE_NS / 1e3);
	emit_latency(e, "send_lag_us", &r->hist_lag);
	emit_latency(e, "latency_from_send_us", &r->hist_send);
	em_end(e);
}

static void emit_result(struct emit *e, const struct rr_result *r)
{
	char note[300];
	const struct rr_opts *o = &r->opts;
	const struct bp_hist *h = &r->hist;
	int64_t cpus[RR_MAX_THREADS];
	int ncpus = o->ncpus < RR_MAX_THREADS ? o->ncpus : RR_MAX_THREADS;
	size_t cm_max;
	const char *cm = client_mode(r, &cm_max);

	em_begin(e, NULL, false);

	em_begin(e, "settings", false);
	em_string(e, "protocol", o->udp ? "udp" : "tcp", 4);
	em_int(e, "threads", o->threads);
	em_int(e, "flows", o->flows);
	em_u64(e, "request_size", o->request_size);
	em_u64(e, "response_size", o->response_size);
	em_double(e, "duration_s", o->duration_s);
	em_u64(e, "transactions_target", o->transactions);
	em_double(e, "warmup_s", o->warmup_s);
	em_double(e, "interval_s", o->interval_s);
	if (o->rate > 0) {
		em_double(e, "rate", o->rate);
		em_string(e, "arrivals", o->arrivals == RR_ARRIVALS_FIXED ? "fixed" : "poisson", 8);
	} else {
		em_null(e, "rate"); /* closed loop */
		em_null(e, "arrivals");
	}
	em_string(e, "client_mode", cm, cm_max);
	if (r->server.valid)
		em_string(e, "server_mode", r->server.mode, sizeof(r->server.mode));
	else
		em_null(e, "server_mode");
	for (int i = 0; i < ncpus; i++)
		cpus[i] = o->cpus[i];
	em_list(e, "cpus", cpus, ncpus > 0 ? (size_t)ncpus : 0);
	for (int i = 0; i < r->nserver_cpus && i < RR_MAX_THREADS; i++)
		cpus[i] = r->server_cpus[i];
	em_list(e, "server_cpus", cpus, r->nserver_cpus > 0 ? (size_t)r->nserver_cpus : 0);
	if (o->priority >= 0)
		em_int(e, "priority", o->priority);
	else
		em_null(e, "priority"); /* -1: SO_PRIORITY left alone */
	em_u64(e, "port", o->port);
	em_string(e, "server_host", o->host, sizeof(o->host));
	em_string(e, "server_address", r->server_addr, sizeof(r->server_addr));
	em_end(e);

	em_known_string(e, "kernel", r->kernel, sizeof(r->kernel));
	em_begin(e, "sysctls", false);
	em_known_int(e, "busy_poll", r->sysctl_busy_poll);
	em_known_int(e, "busy_read", r->sysctl_busy_read);
	em_end(e);

	em_u64(e, "transactions", r->transactions);
	em_double(e, "seconds", r->seconds);
	em_double(e, "tps", r->tps);
	em_u64(e, "latency_samples", h->count);
	/* No samples: null rather than zeros, which would read as a 0 us latency. Open loop:
	 * from when each request was due. */
	emit_latency(e, "latency_us", h);
	emit_open_loop(e, r);

	emit_side_of(e, "client", &r->client, r->transactions, false);
	emit_side_of(e, "server", &r->server, r->transactions, !r->server.valid);

	if (o->udp)
		em_u64(e, "udp_lost", r->udp_lost);
	else
		em_null(e, "udp_lost");
	em_bool(e, "interrupted", r->interrupted);
	em_text_or_null(e, "failed", r->failed, sizeof(r->failed));
	em_text_or_null(e, "note", rr_note(r, note, sizeof(note)), sizeof(note));
	em_end(e);
}

void rr_print_csv_header(FILE *out)
{
	/* The columns never depend on the values, so an all-zero result names them all. */
	static const struct rr_result zero;
	struct emit e = { .kind = EMIT_CSV_HEADER, .out = out };

	emit_result(&e, &zero);
	fputc('\n', out);
}

/* ---- table ---- */

/*
 * put_clean - at most max bytes of s for a terminal: control characters and invalid
 * UTF-8 (a peer's text could hold escape sequences) as '?'; "-" when empty.
 */
static void put_clean(FILE *out, const char *s, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strnlen(s, max);

	if (n == 0) {
		fputc('-', out);
		return;
	}
	for (size_t i = 0; i < n;) {
		size_t len = utf8_len(p + i, n - i);

		if (len == 0 || p[i] < 0x20 || p[i] == 0x7f) {
			fputc('?', out);
			i++;
			continue;
		}
		fwrite(p + i, 1, len, out);
		i += len;
	}
}

/* sysctl_text - a sysctl's value, "unknown" when the client could not read it. */
static void sysctl_text(FILE *out, int v)
{
	if (v != BP_UNKNOWN)
		fprintf(out, "%d", v);
	else
		fputs("unknown (not readable from this network namespace)", out);
}

/* cpus_text - ", CPUs 0,1" or ", not pinned". */
static void cpus_text(FILE *out, const int *cpus, int n)
{
	if (!n) {
		fputs(", not pinned", out);
		return;
	}
	fprintf(out, ", CPU%s ", n > 1 ? "s" : "");
	for (int i = 0; i < n && i < RR_MAX_THREADS; i++)
		fprintf(out, "%s%d", i ? "," : "", cpus[i]);
}

#define TABLE_ROW "  %-26s %16s %16s\n"

/* table_row_u64 / table_row_tx - one row: the client's value and the server's or "-". */
static void table_row_u64(FILE *out, const char *label, uint64_t c, uint64_t s, bool server)
{
	char cb[32], sb[32];

	snprintf(cb, sizeof(cb), "%" PRIu64, c);
	snprintf(sb, sizeof(sb), "%" PRIu64, s);
	fprintf(out, TABLE_ROW, label, cb, server ? sb : "-");
}

static void table_row_tx(FILE *out, const char *label, uint64_t c, uint64_t s, uint64_t tx,
			 bool server)
{
	char cb[32], sb[32];

	fprintf(out, TABLE_ROW, label, ev_per_text(cb, sizeof(cb), ev_per(c, tx)),
		server ? ev_per_text(sb, sizeof(sb), ev_per(s, tx)) : "-");
}

/* table_row_util - one row: each side's CPU time cv, sv as a percent of one CPU over its interval. */
static void table_row_util(FILE *out, const char *label, uint64_t cv, const struct evidence *c, uint64_t sv,
			   const struct evidence *s)
{
	char cb[32], sb[32];
	double cp = ev_util_pct(cv, c->interval_ns), sp = ev_util_pct(sv, s->interval_ns);

	snprintf(cb, sizeof(cb), isfinite(cp) ? "%.1f" : "-", cp);
	snprintf(sb, sizeof(sb), s->valid && isfinite(sp) ? "%.1f" : "-", sp);
	fprintf(out, TABLE_ROW, label, cb, sb);
}

static void napi_list(char *buf, size_t len, const struct evidence *s)
{
	uint32_t n = s->n_napi_ids < RR_MAX_NAPI_IDS ? s->n_napi_ids : RR_MAX_NAPI_IDS;
	size_t used = 0;

	snprintf(buf, len, "-");
	for (uint32_t i = 0; i < n && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%" PRIu32, i ? "," : "",
					 s->napi_ids[i]);
}

/* print_latency - "LABEL min .. max" in us, or "LABEL no samples". */
static void print_latency(FILE *out, const char *label, const struct bp_hist *h)
{
	if (!h->count) {
		fprintf(out, "%sno samples\n", label);
		return;
	}
	fprintf(out, "%smin %.1f  mean %.1f  P50 %.1f  P90 %.1f  P99 %.1f  P99.9 %.1f  P99.99 %.1f  max %.1f\n", label,
		h->min / 1e3, bp_hist_mean(h) / 1e3, bp_hist_percentile(h, 50) / 1e3, bp_hist_percentile(h, 90) / 1e3,
		bp_hist_percentile(h, 99) / 1e3, bp_hist_percentile(h, 99.9) / 1e3, bp_hist_percentile(h, 99.99) / 1e3,
		h->max / 1e3);
}

/* print_open_loop - the rates, the two latencies, how the requests went out. */
static void print_open_loop(FILE *out, const struct rr_result *r)
{
	const struct rr_opts *o = &r->opts;
	uint64_t tx = r->transactions;

	fprintf(out, "open loop       offered %.1f/s (%s), achieved %.1f/s\n", o->rate,
		o->arrivals == RR_ARRIVALS_FIXED ? "fixed" : "poisson", r->tps);
	print_latency(out, "latency us      ", &r->hist);
	fputs("                (from when each request was due)\n", out);
	print_latency(out, "from send us    ", &r->hist_send);
	if (r->hist_lag.count)
		fprintf(out, "send lag us     P50 %.1f  P99 %.1f  max %.1f  (due to on the wire)\n",
			bp_hist_percentile(&r->hist_lag, 50) / 1e3, bp_hist_percentile(&r->hist_lag, 99) / 1e3,
			r->hist_lag.max / 1e3);
	fprintf(out, "requests        %" PRIu64 " queued behind their flow's answer (%.2f%%), %" PRIu64
		" late (sent over %.0f us after due otherwise, %.2f%%); at most %" PRIu64 " outstanding (limit %" PRIu64
		")\n",
		r->queued, tx ? 100.0 * (double)r->queued / (double)tx : 0, r->late, RR_LATE_NS / 1e3,
		tx ? 100.0 * (double)r->late / (double)tx : 0, r->outstanding_peak, r->max_outstanding);
}

static void print_table(FILE *out, const struct rr_result *r)
{
	const struct rr_opts *o = &r->opts;
	const struct evidence *c = &r->client, *s = &r->server;
	const struct bp_hist *h = &r->hist;
	bool sv = s->valid;
	uint64_t tx = r->transactions;
	size_t cm_max;
	const char *cm = client_mode(r, &cm_max);
	char cb[128], sb[128], threads[EV_MAX_THREADS * 96];

	/* What ran: enough to reproduce it, and to see at once two runs differ. */
	fprintf(out, "busypoll rr %s: %d thread%s, %d flow%s, request %" PRIu32 " B, response %" PRIu32
		" B, ", o->udp ? "UDP" : "TCP", o->threads, o->threads == 1 ? "" : "s", o->flows,
		o->flows == 1 ? "" : "s", o->request_size, o->response_size);
	if (o->transactions)
		fprintf(out, "%" PRIu64 " transactions", o->transactions);
	else
		fprintf(out, "%g s", o->duration_s);
	if (o->warmup_s > 0)
		fprintf(out, " after %g s warm-up\n", o->warmup_s);
	else
		fputs(", no warm-up\n", out);
	/* each side's own CPUs: the server's from its HELLO_OK, never the client's */
	fputs("  client mode   ", out);
	put_clean(out, cm, cm_max);
	cpus_text(out, o->cpus, o->ncpus);
	fputs("\n  server mode   ", out);
	if (sv) {
		put_clean(out, s->mode, sizeof(s->mode));
		cpus_text(out, r->server_cpus, r->nserver_cpus);
	} else {
		fputc('-', out);
	}
	fputs("\n  kernel        ", out);
	put_clean(out, r->kernel, sizeof(r->kernel));
	fputs(" (net.core.busy_poll ", out);
	sysctl_text(out, r->sysctl_busy_poll);
	fputs(", busy_read ", out);
	sysctl_text(out, r->sysctl_busy_read);
	fputs(")\n", out);
	fputs("  server        ", out);
	if (r->server_addr[0]) {
		put_clean(out, r->server_addr, sizeof(r->server_addr));
	} else {
		put_clean(out, o->host, sizeof(o->host));
		fprintf(out, " port %" PRIu16, o->port);
	}
	if (o->priority >= 0)
		fprintf(out, ", priority %d", o->priority);
	fputs("\n\n", out);

	/* Above the figures, not under them: every number below is from a cut-short run. */
	if (r->failed[0]) {
		fputs("failed: ", out);
		put_clean(out, r->failed, sizeof(r->failed));
		fputs("; partial results\n", out);
	}
	if (r->interrupted && !r->failed[0])
		fputs("interrupted: partial results\n", out);
	if (!rr_measured(r) || (!tx && !r->seconds)) {
		fputs(r->interrupted ? "interrupted before anything was measured\n" : "nothing was measured\n", out);
		return;
	}
	fprintf(out, "transactions/s  %.1f  (%" PRIu64 " in %.3f s)\n", r->tps, tx, r->seconds);
	if (o->rate > 0)
		print_open_loop(out, r);
	else
		print_latency(out, "latency us      ", h);
	fputc('\n', out);

	fprintf(out, TABLE_ROW, "", "client", "server");
	table_row_u64(out, "threads", c->threads ? c->threads : (uint64_t)o->threads, s->threads, sv);
	table_row_u64(out, "transactions (all phases)", c->transactions, s->transactions, sv);
	table_row_tx(out, "user CPU us/tx", c->utime_us, s->utime_us, tx, sv);
	table_row_tx(out, "system CPU us/tx", c->stime_us, s->stime_us, tx, sv);
	table_row_util(out, "CPU % of one CPU", ev_cpu_us(c), c, ev_cpu_us(s), s);
	table_row_util(out, "  user %", c->utime_us, c, s->utime_us, s);
	table_row_util(out, "  system %", c->stime_us, c, s->stime_us, s);
	table_row_tx(out, "context switches/tx", c->nvcsw + c->nivcsw, s->nvcsw + s->nivcsw, tx, sv);
	table_row_tx(out, "syscalls/tx", c->syscalls, s->syscalls, tx, sv);
	table_row_tx(out, "empty polls/tx", c->empty_polls, s->empty_polls, tx, sv);
	table_row_tx(out, "wake-ups/tx", c->wakeups, s->wakeups, tx, sv);
	table_row_tx(out, "BusyPollRxPackets/tx", c->busy_poll_rx, s->busy_poll_rx, tx, sv);
	table_row_tx(out, "NET_RX/tx", c->net_rx, s->net_rx, tx, sv);
	napi_list(cb, sizeof(cb), c);
	napi_list(sb, sizeof(sb), s);
	fprintf(out, TABLE_ROW, "NAPI ids", cb, sv ? sb : "-");
	if (c->xsk || s->xsk) {
		char xb[160];

		fprintf(out, "  AF_XDP client: %s\n", ev_xsk_text(c, xb, sizeof(xb)));
		fprintf(out, "  AF_XDP server: %s\n", sv ? ev_xsk_text(s, xb, sizeof(xb)) : "-");
	}
	fprintf(out, "\nCPU counts the client's %s", ev_threads_util_text(c, threads, sizeof(threads)));
	if (sv)
		fprintf(out, "; the server's %s", ev_threads_util_text(s, threads, sizeof(threads)));
	fputc('\n', out);
	if (o->udp)
		fprintf(out, "\nUDP lost        %" PRIu64 " (requests timed out and resent)\n",
			r->udp_lost);
	{
		char note[300];

		if (rr_note(r, note, sizeof(note))[0])
			fprintf(out, "\nnote: %s\n", note);
	}
}

static void walk_result(struct emit *e, const void *r)
{
	emit_result(e, r);
}

void rr_print(FILE *out, const struct rr_result *r, enum tool_format format)
{
	/* csv: a header and one row, a single run is a complete csv file */
	if (format != TOOL_FORMAT_TABLE)
		emit_one(out, format == TOOL_FORMAT_CSV, walk_result, r);
	else
		print_table(out, r);
}
