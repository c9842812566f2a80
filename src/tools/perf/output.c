/* SPDX-License-Identifier: MIT */
/*
 * busypoll perf: printing results (contract in tools/perf/perf.h).
 *
 * json and csv come from one walk over a result (perf_emit_result, tools/common/emit.h), so
 * they never disagree on which fields exist; a csv column is the json path with
 * dots ("read.latency_us.p99_99"). The table reads like fio's summary: per
 * direction IOPS, bandwidth in MiB/s and MB/s, latency percentiles in us (fio's
 * "lat": submission to completion), then what it cost. The sweep's table is the
 * issue's reference: threads, IOPS (K), average latency, P99.99.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tools/common/cmd.h"
#include "tools/common/emit.h"
#include "tools/perf/perf.h"

static const struct bp_hist no_hist; /* a latency not measured: null */

static double per_io(uint64_t v, uint64_t ios)
{
	return ios ? (double)v / (double)ios : 0;
}

/* ---- json / csv ---- */

static void emit_latency(struct emit *e, const char *key, const struct bp_hist *h)
{
	/* No samples: null, not zeros that would read as a 0 us latency. */
	em_begin(e, key, h->count == 0);
	em_double(e, "min", (double)h->min / 1e3);
	em_double(e, "mean", bp_hist_mean(h) / 1e3);
	em_double(e, "p50", (double)bp_hist_percentile(h, 50) / 1e3);
	em_double(e, "p90", (double)bp_hist_percentile(h, 90) / 1e3);
	em_double(e, "p99", (double)bp_hist_percentile(h, 99) / 1e3);
	em_double(e, "p99_9", (double)bp_hist_percentile(h, 99.9) / 1e3);
	em_double(e, "p99_99", (double)bp_hist_percentile(h, 99.99) / 1e3);
	em_double(e, "max", (double)h->max / 1e3);
	em_end(e);
}

/*
 * emit_dir - one direction: latency_us is fio's lat (the open loop's from the intended
 * issue time); the open loop adds the latency from the issue (fio's clat), the
 * issue lag (fio's slat), late and queued I/Os (null in a closed loop).
 */
static void emit_dir(struct emit *e, const char *key, const struct perf_result *r, const struct perf_dir *d)
{
	bool open = perf_open_loop(&r->opts);

	em_begin(e, key, false);
	em_u64(e, "ios", d->ios);
	em_u64(e, "bytes", d->bytes);
	em_double(e, "iops", perf_iops(r, d));
	em_double(e, "mbps", perf_mbps(r, d));
	em_double(e, "mibps", perf_mibps(r, d));
	emit_latency(e, "latency_us", &d->hist);
	emit_latency(e, "latency_from_issue_us", open ? &d->clat : &no_hist);
	emit_latency(e, "issue_lag_us", open ? &d->slat : &no_hist);
	if (open) {
		em_u64(e, "late", d->late);
		em_u64(e, "queued", d->queued);
	} else {
		em_null(e, "late");
		em_null(e, "queued");
	}
	em_end(e);
}

/* emit_open_loop - the schedule (null in a closed loop): the rates asked, offered and achieved, what went out late. */
static void emit_open_loop(struct emit *e, const struct perf_result *r)
{
	const struct perf_opts *o = &r->opts;
	bool open = perf_open_loop(o);
	uint64_t late = r->rd.late + r->wr.late + r->tr.late, queued = r->rd.queued + r->wr.queued + r->tr.queued;
	struct perf_dir all = { .ios = perf_total_ios(r) };

	em_begin(e, "open_loop", !open);
	em_begin(e, "rate_iops_per_job", false);
	for (int d = 0; d < PERF_DDIRS; d++)
		em_double(e, perf_ddir_name((enum perf_ddir)d), o->rate_iops[d]);
	em_end(e);
	em_string(e, "rate_process", o->rate_poisson ? "poisson" : "linear", 16);
	em_double(e, "offered_iops", perf_offered_iops(o) * r->numjobs);
	em_double(e, "achieved_iops", perf_iops(r, &all));
	em_u64(e, "late", late);
	em_double(e, "late_after_us", ARRIVALS_LATE_NS / 1e3);
	em_u64(e, "queued", queued);
	em_u64(e, "behind", r->behind);
	em_end(e);
}

/*
 * emit_proof - did each polling side poll (perf_unproven, EV_PROOF_MIN per I/O)?
 * A side that does not poll, or whose counters are not known (a target we did not
 * spawn), is null rather than false.
 */
static void emit_proof(struct emit *e, const struct perf_result *r)
{
	const struct perf_target_stats *t = &r->target;
	unsigned f = perf_unproven(r);
	bool host = bp_mode_is_busy_poll(&r->opts.mode), tpoll = t->valid && t->poll_known && t->poll_period_us,
	     tbusy = t->valid && t->busy_poll_mode;

	em_begin(e, "proof", false);
	em_double(e, "min_per_io", EV_PROOF_MIN);
	if (host)
		em_bool(e, "host_unproven", f & PERF_UNPROVEN_HOST);
	else
		em_null(e, "host_unproven");
	if (tpoll)
		em_bool(e, "target_poll_unproven", f & PERF_UNPROVEN_TARGET_POLL);
	else
		em_null(e, "target_poll_unproven");
	if (tbusy)
		em_bool(e, "target_busy_poll_unproven", f & PERF_UNPROVEN_TARGET_BUSY);
	else
		em_null(e, "target_busy_poll_unproven");
	em_end(e);
}

void perf_emit_result(struct emit *e, const char *key, const struct perf_result *r)
{
	const struct perf_opts *o = &r->opts;
	const struct perf_target_stats *t = &r->target;
	struct perf_dir all = { .ios = perf_total_ios(r), .bytes = r->rd.bytes + r->wr.bytes + r->tr.bytes };
	uint64_t ios = all.ios;
	int64_t cpus[PERF_MAX_JOBS];
	int ncpus = o->ncpus < PERF_MAX_JOBS ? o->ncpus : PERF_MAX_JOBS;

	em_begin(e, key, false);
	em_begin(e, "settings", false);
	em_string(e, "target", o->target, sizeof(o->target));
	em_string(e, "nqn", o->nqn, sizeof(o->nqn));
	em_u64(e, "nsid", o->nsid);
	em_string(e, "rw", perf_rw_name(o->rw), 16);
	em_int(e, "rwmixread", perf_rw_mixed(o->rw) ? o->rwmixread : o->rw == PERF_RW_READ || o->rw == PERF_RW_RANDREAD ? 100 : 0);
	em_u64(e, "bs", o->bs);
	em_int(e, "iodepth", o->iodepth);
	em_int(e, "iodepth_batch", o->iodepth_batch);
	em_int(e, "iodepth_batch_complete_min", o->complete_min);
	em_int(e, "iodepth_batch_complete_max", o->complete_max);
	em_int(e, "submit_batch", o->batch);
	em_int(e, "reap_min", o->reap_min);
	em_int(e, "reap_max", o->reap_max);
	em_bool(e, "reap_polls", o->reap_poll);
	em_int(e, "numjobs", r->numjobs);
	for (int i = 0; i < ncpus; i++)
		cpus[i] = o->cpus[i];
	em_list(e, "cpus", cpus, ncpus > 0 ? (size_t)ncpus : 0);
	for (int i = 0; i < o->nallowed; i++)
		cpus[i] = o->allowed[i];
	em_list(e, "cpus_allowed", cpus, (size_t)o->nallowed); /* shared by every job; [] none */
	em_double(e, "runtime_s", o->runtime_s);
	em_double(e, "ramp_time_s", o->ramp_s);
	em_u64(e, "offset", r->region_offset);
	em_u64(e, "size", r->region_size);
	em_bool(e, "verify", o->verify);
	em_string(e, "mode", o->mode_text, sizeof(o->mode_text));
	em_bool(e, "header_digest", o->hdgst);
	em_bool(e, "data_digest", o->ddgst);
	em_u64(e, "io_timeout_ms", o->io_timeout_ms);
	em_string(e, "target_config", r->target_config, sizeof(r->target_config));
	em_end(e);

	em_known_string(e, "kernel", r->kernel, sizeof(r->kernel));
	em_begin(e, "controller", false);
	em_string(e, "address", r->target_addr, sizeof(r->target_addr));
	em_string(e, "model", r->model, sizeof(r->model));
	em_u64(e, "block_size", r->block_size);
	em_u64(e, "namespace_blocks", r->ns_blocks);
	em_u64(e, "max_transfer", r->max_transfer);
	em_u64(e, "in_capsule", r->incapsule);
	em_u64(e, "queue_depth", r->queue_depth);
	em_end(e);

	em_double(e, "seconds", r->seconds);
	em_u64(e, "ios", ios);
	em_double(e, "iops", perf_iops(r, &all));
	em_double(e, "mbps", perf_mbps(r, &all));
	em_double(e, "mibps", perf_mibps(r, &all));
	emit_latency(e, "latency_us", &r->all);
	emit_dir(e, "read", r, &r->rd);
	emit_dir(e, "write", r, &r->wr);
	emit_dir(e, "trim", r, &r->tr);
	emit_open_loop(e, r);

	/* the shared evidence, per I/O: perf's unit (tools/harness/evidence.h) */
	ev_emit(e, "initiator", &r->initiator, ios, "io", false);

	em_begin(e, "target_counters", !t->valid);
	em_u64(e, "pid", (uint64_t)t->pid);
	em_u64(e, "queues", t->queues);
	em_u64(e, "commands", t->commands);
	em_u64(e, "reads", t->reads);
	em_u64(e, "writes", t->writes);
	em_u64(e, "r2ts", t->r2ts);
	em_u64(e, "errors", t->errors);
	em_u64(e, "poll_passes", t->poll_passes);
	em_u64(e, "idle_exits", t->idle_exits);
	em_u64(e, "polls", t->polls);
	em_u64(e, "bytes_in", t->bytes_in);
	em_u64(e, "bytes_out", t->bytes_out);
	em_u64(e, "cpu_us", t->cpu_us);
	em_u64(e, "busy_poll_rx", t->busy_poll_rx);
	em_double(e, "cpu_us_per_io", per_io(t->cpu_us, ios));
	em_double(e, "poll_passes_per_io", per_io(t->poll_passes, ios));
	em_double(e, "polls_per_io", ev_per(t->polls, ios));
	em_double(e, "busy_poll_rx_per_io", ev_per(t->busy_poll_rx, ios));
	em_known_string(e, "mode", t->mode, sizeof(t->mode));
	if (t->poll_known)
		em_u64(e, "poll_period_us", t->poll_period_us);
	else
		em_null(e, "poll_period_us");
	em_end(e);

	emit_proof(e, r);

	em_begin(e, "verify", !o->verify);
	em_u64(e, "blocks_checked", r->verified_blocks);
	em_u64(e, "prefilled_bytes", r->prefilled_bytes);
	em_end(e);

	/* Per job: json only (a csv row has one set of columns whatever the job count). */
	em_array_begin(e, "jobs");
	for (int i = 0; e->kind == EMIT_JSON && i < r->numjobs && i < PERF_MAX_JOBS; i++) {
		const struct perf_job_result *j = &r->jobs[i];

		em_begin(e, NULL, false);
		em_int(e, "job", i);
		em_int(e, "cpu", j->cpu);
		em_int(e, "ran_on_cpu", j->ran_on);
		em_u64(e, "ios", j->ios);
		em_double(e, "iops", j->iops);
		em_double(e, "cpu_us_per_io", per_io(j->cpu_us, j->ios));
		em_end(e);
	}
	em_array_end(e);
	em_bool(e, "interrupted", r->interrupted);
	if (r->failed[0])
		em_string(e, "failed", r->failed, sizeof(r->failed));
	else
		em_null(e, "failed");
	em_end(e);
}

void perf_print_csv_header(FILE *out)
{
	static struct perf_result zero;
	struct emit e = { .kind = EMIT_CSV_HEADER, .out = out };

	perf_emit_result(&e, NULL, &zero);
	fputc('\n', out);
}

/* ---- table ---- */

static void human_bytes(char *buf, size_t len, uint64_t v)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	double d = (double)v;
	int u = 0;

	while (d >= 1024 && u < 5) {
		d /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%" PRIu64 " B", v);
	else
		snprintf(buf, len, "%.1f %s", d, units[u]);
}

static void iops_text(char *buf, size_t len, double v)
{
	if (v >= 1e6)
		snprintf(buf, len, "%.2fM", v / 1e6);
	else if (v >= 1e3)
		snprintf(buf, len, "%.1fK", v / 1e3);
	else
		snprintf(buf, len, "%.0f", v);
}

/* print_lat - one latency line, "LABEL min .. max" in us (nothing without samples). */
static void print_lat(FILE *out, const char *label, const struct bp_hist *h)
{
	if (h->count)
		fprintf(out, "         %-7s min %.1f  mean %.1f  P50 %.1f  P99 %.1f  P99.9 %.1f  P99.99 %.1f  max %.1f\n",
			label, (double)h->min / 1e3, bp_hist_mean(h) / 1e3, (double)bp_hist_percentile(h, 50) / 1e3,
			(double)bp_hist_percentile(h, 99) / 1e3, (double)bp_hist_percentile(h, 99.9) / 1e3,
			(double)bp_hist_percentile(h, 99.99) / 1e3, (double)h->max / 1e3);
}

/*
 * print_dir - a direction: IOPS, bandwidth, I/Os, fio's lat; the open loop's lat is
 * from the intended issue time, then clat (from the issue), slat (the issue lag)
 * and how many went out late (d NULL for the total: no open-loop lines).
 */
static void print_dir(FILE *out, const char *name, const struct perf_result *r, const struct perf_dir *d,
		      const struct bp_hist *h, bool open)
{
	char iops[32];

	iops_text(iops, sizeof(iops), perf_iops(r, d));
	fprintf(out, "  %-6s IOPS %s, %.1f MiB/s (%.1f MB/s), %" PRIu64 " I/Os\n", name, iops, perf_mibps(r, d),
		perf_mbps(r, d), d->ios);
	print_lat(out, "lat us", h);
	if (!open || !d->ios)
		return;
	print_lat(out, "clat us", &d->clat);
	print_lat(out, "slat us", &d->slat);
	fprintf(out, "         late    %" PRIu64 " went out over %.0f us after their time (%.2f%%), %" PRIu64
		" waited for a free slot (%.2f%%)\n", d->late, ARRIVALS_LATE_NS / 1e3, 100.0 * (double)d->late / (double)d->ios,
		d->queued, 100.0 * (double)d->queued / (double)d->ios);
}

/*
 * print_proof - the proof flag per side ('!', as compare's): a polling mode whose
 * evidence per I/O is under EV_PROOF_MIN, and why when it is known (loopback has no
 * NAPI to busy poll).
 */
static void print_proof(FILE *out, const struct perf_result *r)
{
	const struct perf_opts *o = &r->opts;
	const struct perf_target_stats *t = &r->target;
	unsigned f = perf_unproven(r);

	if (f & PERF_UNPROVEN_HOST)
		fprintf(out, "! host           %s busy-polls, but under %.2f BusyPollRxPackets per I/O: kernel busy polling "
			"(almost) never ran%s\n", o->mode_text, EV_PROOF_MIN, r->initiator.n_napi_ids ? "" :
			" (no queue had a NAPI id, as on loopback: nothing to busy poll)");
	if (f & PERF_UNPROVEN_TARGET_POLL)
		fprintf(out, "! target         poll mode (--poll-period-us %u), but under %.2f polls per I/O: its poll mode "
			"(almost) never ran\n", t->poll_period_us, EV_PROOF_MIN);
	if (f & PERF_UNPROVEN_TARGET_BUSY)
		fprintf(out, "! target         %s busy-polls, but under %.2f BusyPollRxPackets per I/O in its namespace: "
			"kernel busy polling (almost) never ran there\n", t->mode, EV_PROOF_MIN);
}

/* workload_line - "randread, bs 4096, iodepth 32 (submit 8, reap 1..32)": what a fio user checks first. */
static void workload_line(FILE *out, const struct perf_opts *o)
{
	fprintf(out, "%s", perf_rw_name(o->rw));
	if (perf_rw_mixed(o->rw))
		fprintf(out, " (rwmixread %d)", o->rwmixread);
	fprintf(out, ", bs %u, iodepth %d (submit batch %d, reap %d..%d%s)", o->bs, o->iodepth, o->batch, o->reap_min,
		o->reap_max, o->reap_poll ? ", polling" : "");
}

static void print_table(FILE *out, const struct perf_result *r)
{
	const struct perf_opts *o = &r->opts;
	const struct perf_target_stats *t = &r->target;
	struct perf_dir all = { .ios = perf_total_ios(r), .bytes = r->rd.bytes + r->wr.bytes + r->tr.bytes };
	uint64_t ios = all.ios;
	bool open = perf_open_loop(o);
	char a[64], b[32];

	fputs("busypoll perf: ", out);
	workload_line(out, o);
	fprintf(out, ", %d job%s, %g s", r->numjobs, r->numjobs == 1 ? "" : "s", o->runtime_s);
	if (o->ramp_s > 0)
		fprintf(out, " after %g s ramp", o->ramp_s);
	fputc('\n', out);
	human_bytes(a, sizeof(a), r->ns_blocks * r->block_size);
	human_bytes(b, sizeof(b), r->region_size);
	fprintf(out, "  target   %s  %s  nsid %u: %" PRIu64 " blocks of %u B (%s), region %" PRIu64 " + %s\n",
		r->target_addr, o->nqn, o->nsid, r->ns_blocks, r->block_size, a, r->region_offset, b);
	if (r->max_transfer)
		snprintf(a, sizeof(a), "%u B", r->max_transfer);
	else
		snprintf(a, sizeof(a), "no limit");
	fprintf(out, "           model '%s', MDTS %s, in-capsule %u B, queue depth %u\n", r->model, a, r->incapsule,
		r->queue_depth);
	fprintf(out, "  host     mode %s, digests %s, kernel %s", o->mode_text,
		o->hdgst && o->ddgst ? "hdr,data" : o->hdgst ? "hdr" : o->ddgst ? "data" : "none", r->kernel);
	if (o->ncpus) {
		fputs(", CPUs ", out);
		for (int i = 0; i < r->numjobs; i++)
			fprintf(out, "%s%d", i ? "," : "", o->cpus[i % o->ncpus]);
	}
	if (o->nallowed) {
		fputs(", every job on CPUs ", out);
		for (int i = 0; i < o->nallowed; i++)
			fprintf(out, "%s%d", i ? "," : "", o->allowed[i]);
		fputs(" (--cpus_allowed)", out);
	}
	fputc('\n', out);
	if (r->target_config[0])
		fprintf(out, "  target config  %s\n", r->target_config);
	fputc('\n', out);
	if (r->failed[0])
		fprintf(out, "failed: %s; partial results\n", r->failed);
	else if (r->interrupted)
		fputs("interrupted: partial results\n", out);
	if (!r->seconds && !perf_total_ios(r)) {
		fputs(r->interrupted ? "interrupted before anything was measured\n" : "nothing was measured\n", out);
		return;
	}
	fprintf(out, "  %.3f s measured\n", r->seconds);
	if (open) {
		perf_rates_text(a, sizeof(a), o);
		fprintf(out, "  open loop      --rate_iops %s per job (%s gaps): offered %.1f IOPS, achieved %.1f; %" PRIu64
			" due by the end never went out\n", a, o->rate_poisson ? "poisson" : "linear",
			perf_offered_iops(o) * r->numjobs, perf_iops(r, &all), r->behind);
	}
	if (r->rd.ios || o->rw == PERF_RW_READ || o->rw == PERF_RW_RANDREAD)
		print_dir(out, "read", r, &r->rd, &r->rd.hist, open);
	if (r->wr.ios || o->rw == PERF_RW_WRITE || o->rw == PERF_RW_RANDWRITE)
		print_dir(out, "write", r, &r->wr, &r->wr.hist, open);
	if (r->tr.ios || perf_rw_trims(o))
		print_dir(out, "trim", r, &r->tr, &r->tr.hist, open);
	if (r->rd.ios && r->wr.ios)
		print_dir(out, "total", r, &all, &r->all, false);
	fprintf(out, "  initiator CPU  %.2f us/IO (user %.2f, sys %.2f), %.3f context switches/IO, %.2f syscalls/IO, "
		"%s BusyPollRxPackets/IO\n", perf_cpu_us_per_io(r), per_io(r->initiator.utime_us, ios),
		per_io(r->initiator.stime_us, ios), per_io(r->initiator.nvcsw + r->initiator.nivcsw, ios),
		per_io(r->initiator.syscalls, ios), ev_per_text(a, sizeof(a), ev_per(r->initiator.busy_poll_rx, ios)));
	if (t->valid) {
		char pm[32] = "poll mode unknown";

		if (t->poll_known && t->poll_period_us)
			snprintf(pm, sizeof(pm), "poll mode %u us", t->poll_period_us);
		else if (t->poll_known)
			snprintf(pm, sizeof(pm), "poll mode off");
		fprintf(out, "  target (ours)  CPU %.2f us/IO, %.2f work passes/IO, %s polls/IO (%s), %" PRIu64
			" idle exits, %s BusyPollRxPackets/IO (mode %s), %" PRIu64 " R2Ts, %" PRIu64 " errors (pid %d, %u queue%s)\n",
			per_io(t->cpu_us, ios), per_io(t->poll_passes, ios), ev_per_text(a, sizeof(a), ev_per(t->polls, ios)),
			pm, t->idle_exits, ev_per_text(b, sizeof(b), ev_per(t->busy_poll_rx, ios)),
			t->mode[0] ? t->mode : "unknown", t->r2ts, t->errors, (int)t->pid, t->queues, t->queues == 1 ? "" : "s");
	}
	print_proof(out, r);
	if (o->verify && r->failed[0]) {
		/* never "no mismatch" under a failed run: the failure (above) may be the mismatch */
		fprintf(out, "  verify         %" PRIu64 " blocks checked before the run failed (above): not verified\n",
			r->verified_blocks);
	} else if (o->verify) {
		human_bytes(a, sizeof(a), r->prefilled_bytes);
		fprintf(out, "  verify         %" PRIu64 " blocks checked, no mismatch%s%s%s\n", r->verified_blocks,
			r->prefilled_bytes ? " (pre-filled " : "", r->prefilled_bytes ? a : "",
			r->prefilled_bytes ? ")" : "");
	}
}

static void walk_result(struct emit *e, const void *r)
{
	perf_emit_result(e, NULL, r);
}

void perf_print(FILE *out, const struct perf_result *r, enum tool_format format)
{
	if (format != TOOL_FORMAT_TABLE)
		emit_one(out, format == TOOL_FORMAT_CSV, walk_result, r);
	else
		print_table(out, r);
}

/* row_mark - a sweep row's end: failed, interrupted, and '!' naming each side that did not poll (perf_unproven). */
static const char *row_mark(const struct perf_result *r, char *buf, size_t len)
{
	unsigned f = perf_unproven(r);

	snprintf(buf, len, "%s%s%s%s%s", r->failed[0] ? "  (failed)" : r->interrupted ? "  (interrupted)" : "",
		 f ? "  ! no polling:" : "", f & PERF_UNPROVEN_HOST ? " host" : "",
		 f & PERF_UNPROVEN_TARGET_POLL ? " target-poll-mode" : "", f & PERF_UNPROVEN_TARGET_BUSY ? " target-busy-poll" : "");
	return buf;
}

/*
 * sweep_row_open - one open-loop row: offered and achieved load, latency from the
 * intended issue time (P50, P99, P99.99) and from the issue (P99), what went out
 * late and what never went out: a latency-vs-load curve reads down the rows.
 */
static void sweep_row_open(FILE *out, const struct perf_result *r, const char *tcpu)
{
	const struct perf_dir *d[] = { &r->rd, &r->wr, &r->tr };
	struct perf_dir all = { .ios = perf_total_ios(r) };
	struct bp_hist clat;
	uint64_t late = 0;
	char mark[96];

	bp_hist_init(&clat);
	for (int i = 0; i < PERF_DDIRS; i++) {
		bp_hist_merge(&clat, &d[i]->clat);
		late += d[i]->late;
	}
	fprintf(out, "  %7d %12.1f %10.1f %10.1f %10.1f %12.1f %12.1f %7.2f %9" PRIu64 " %10.2f %12s%s\n", r->numjobs,
		perf_offered_iops(&r->opts) * r->numjobs / 1e3, perf_iops(r, &all) / 1e3,
		(double)bp_hist_percentile(&r->all, 50) / 1e3, (double)bp_hist_percentile(&r->all, 99) / 1e3,
		(double)bp_hist_percentile(&r->all, 99.99) / 1e3, (double)bp_hist_percentile(&clat, 99) / 1e3,
		all.ios ? 100.0 * (double)late / (double)all.ios : 0, r->behind, perf_cpu_us_per_io(r), tcpu,
		row_mark(r, mark, sizeof(mark)));
}

void perf_print_sweep_block(FILE *out, const struct perf_opts *o, const char *config, const struct perf_result *rows,
			    int n)
{
	bool open = false;

	for (int i = 0; i < n; i++)
		open |= perf_open_loop(&rows[i].opts);
	fputs("busypoll perf sweep: ", out);
	workload_line(out, o);
	fprintf(out, ", %g s", o->runtime_s);
	if (o->ramp_s > 0)
		fprintf(out, " after %g s ramp", o->ramp_s);
	fprintf(out, ", host %s", o->mode_text);
	if (open)
		fprintf(out, ", open loop (%s gaps): latency from each I/O's intended issue time", o->rate_poisson ?
			"poisson" : "linear");
	fprintf(out, "\ntarget %s%s%s\n", rows[0].target_addr, config && config[0] ? ", config: " : "",
		config && config[0] ? config : "");
	if (open)
		fprintf(out, "  %7s %12s %10s %10s %10s %12s %12s %7s %9s %10s %12s\n", "threads", "offered (K)", "IOPS (K)",
			"P50 (us)", "P99 (us)", "P99.99 (us)", "clat P99", "late %", "behind", "CPU us/IO", "target us/IO");
	else
		fprintf(out, "  %7s %10s %14s %13s %12s %12s\n", "threads", "IOPS (K)", "avg lat (us)", "P99.99 (us)",
			"CPU us/IO", "target us/IO");
	for (int i = 0; i < n; i++) {
		const struct perf_result *r = &rows[i];
		struct perf_dir all = { .ios = perf_total_ios(r), .bytes = r->rd.bytes + r->wr.bytes + r->tr.bytes };
		char tcpu[32] = "-", mark[96];

		if (r->target.valid)
			snprintf(tcpu, sizeof(tcpu), "%.2f", per_io(r->target.cpu_us, all.ios));
		if (open) {
			sweep_row_open(out, r, tcpu);
			continue;
		}
		fprintf(out, "  %7d %10.1f %14.1f %13.1f %12.2f %12s%s\n", r->numjobs, perf_iops(r, &all) / 1e3,
			bp_hist_mean(&r->all) / 1e3, (double)bp_hist_percentile(&r->all, 99.99) / 1e3,
			perf_cpu_us_per_io(r), tcpu, row_mark(r, mark, sizeof(mark)));
	}
	fputc('\n', out);
}

void perf_print_sweep(FILE *out, const struct perf_result *rows, int n, enum tool_format format)
{
	struct emit e = { .out = out };

	if (format == TOOL_FORMAT_CSV) {
		perf_print_csv_header(out);
		e.kind = EMIT_CSV_ROW;
		for (int i = 0; i < n; i++) {
			e.ncols = 0;
			e.depth = 0;
			e.null_depth = 0;
			perf_emit_result(&e, NULL, &rows[i]);
			fputc('\n', out);
		}
		return;
	}
	e.kind = EMIT_JSON;
	em_begin(&e, NULL, false);
	em_array_begin(&e, "sweep");
	for (int i = 0; i < n; i++)
		perf_emit_result(&e, NULL, &rows[i]);
	em_array_end(&e);
	em_end(&e);
	fputc('\n', out);
}
