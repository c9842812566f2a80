/* SPDX-License-Identifier: MIT */
/*
 * busypoll perf: --output-format=json in fio's own json shape (contract in
 * tools/perf/perf.h), so that scripts written for fio's json read perf's: the
 * field names are fio's (fio's stat.c, show_thread_status_json and
 * add_ddir_status_json). Latencies as emit_ddir says: the open loop's lat_ns
 * from each I/O's intended issue time, clat_ns from its submission, slat_ns
 * between; the closed loop's clat_ns and lat_ns from the submission (the same
 * figures), slat_ns null. fio's stddev is not kept by perf's histogram: null.
 * busypoll's own result (settings, controller, evidence, target counters) is
 * under each job's "busypoll" key.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "tools/common/commands.h"
#include "tools/common/emit.h"
#include "tools/perf/perf.h"

/* fio's default percentile_list, and its keys as fio prints them ("%f"). */
static const double fio_pcts[] = { 1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99 };

/* emit_lat - fio's clat_ns / lat_ns: null without samples (an unknown latency, not 0 ns). */
static void emit_lat(struct emit *e, const char *key, const struct bp_hist *h, bool percentiles)
{
	char k[16];

	em_begin(e, key, h->count == 0);
	em_u64(e, "min", h->min);
	em_u64(e, "max", h->max);
	em_double(e, "mean", bp_hist_mean(h));
	em_null(e, "stddev");
	em_u64(e, "N", h->count);
	if (percentiles) {
		em_begin(e, "percentile", false);
		for (size_t i = 0; i < sizeof(fio_pcts) / sizeof(fio_pcts[0]); i++) {
			snprintf(k, sizeof(k), "%f", fio_pcts[i]);
			em_u64(e, k, bp_hist_percentile(h, fio_pcts[i]));
		}
		em_end(e);
	}
	em_end(e);
}

/*
 * emit_ddir - one of fio's read/write/trim blocks: a direction with no I/O has zeros
 * and null latencies. fio's lat is from the I/O's creation to its completion, its
 * clat from the submission, its slat between the two. The open loop creates each
 * I/O at its intended issue time: lat_ns from then, clat_ns from the submission,
 * slat_ns how late it went out. The closed loop measures from the submission only:
 * clat_ns and lat_ns the same figures, slat_ns null (not measured).
 */
static void emit_ddir(struct emit *e, const char *key, const struct perf_result *r, const struct perf_dir *x)
{
	static const struct bp_hist none;
	bool open = perf_open_loop(&r->opts);
	double bw = r->seconds > 0 ? (double)x->bytes / r->seconds : 0;

	em_begin(e, key, false);
	em_u64(e, "io_bytes", x->bytes);
	em_u64(e, "io_kbytes", x->bytes >> 10);
	em_u64(e, "bw_bytes", (uint64_t)bw);
	em_u64(e, "bw", (uint64_t)(bw / 1024));
	em_double(e, "iops", x->ios ? perf_iops(r, x) : 0);
	em_u64(e, "runtime", (uint64_t)(r->seconds * 1e3 + 0.5));
	em_u64(e, "total_ios", x->ios);
	em_u64(e, "short_ios", 0);
	em_u64(e, "drop_ios", 0);
	emit_lat(e, "slat_ns", open ? &x->slat : &none, false);
	emit_lat(e, "clat_ns", open ? &x->clat : &x->hist, true);
	emit_lat(e, "lat_ns", &x->hist, false);
	em_end(e);
}

/* emit_job - one result as one of fio's jobs (all of its jobs together, as fio's group_reporting). */
static void emit_job(struct emit *e, const struct perf_result *r)
{
	const struct perf_opts *o = &r->opts;
	double wall_us = r->seconds * 1e6;
	char text[64];

	em_begin(e, NULL, false);
	em_string(e, "jobname", o->jobname[0] ? o->jobname : "perf", sizeof(o->jobname));
	em_int(e, "groupid", 0);
	em_int(e, "error", r->failed[0] ? 1 : 0);
	em_begin(e, "job options", false);
	em_string(e, "rw", perf_rw_name(o->rw), 16);
	snprintf(text, sizeof(text), "%u", o->bs);
	em_string(e, "bs", text, sizeof(text));
	snprintf(text, sizeof(text), "%d", o->iodepth);
	em_string(e, "iodepth", text, sizeof(text));
	snprintf(text, sizeof(text), "%d", r->numjobs);
	em_string(e, "numjobs", text, sizeof(text));
	if (perf_rw_mixed(o->rw)) {
		snprintf(text, sizeof(text), "%d", o->rwmixread);
		em_string(e, "rwmixread", text, sizeof(text));
	}
	if (perf_open_loop(o)) {
		perf_rates_text(text, sizeof(text), o);
		em_string(e, "rate_iops", text, sizeof(text));
		em_string(e, "rate_process", o->rate_poisson ? "poisson" : "linear", 16);
	}
	em_end(e);
	emit_ddir(e, "read", r, &r->rd);
	emit_ddir(e, "write", r, &r->wr);
	emit_ddir(e, "trim", r, &r->tr);
	em_u64(e, "job_runtime", (uint64_t)(r->seconds * 1e3 + 0.5));
	em_double(e, "usr_cpu", wall_us > 0 ? 100.0 * (double)r->initiator.utime_us / wall_us : 0);
	em_double(e, "sys_cpu", wall_us > 0 ? 100.0 * (double)r->initiator.stime_us / wall_us : 0);
	em_u64(e, "ctx", r->initiator.nvcsw + r->initiator.nivcsw);
	perf_emit_result(e, "busypoll", r);
	em_end(e);
}

void perf_print_fio(FILE *out, const struct perf_result *rows, int n, time_t now)
{
	struct emit e = { .kind = EMIT_JSON, .out = out };
	char when[64] = "";
	struct tm tm;

	if (localtime_r(&now, &tm))
		strftime(when, sizeof(when), "%a %b %e %H:%M:%S %Y", &tm);
	em_begin(&e, NULL, false);
	em_string(&e, "fio version", "busypoll-perf-" BP_VERSION, 64);
	em_u64(&e, "timestamp", (uint64_t)now);
	em_u64(&e, "timestamp_ms", (uint64_t)now * 1000);
	em_string(&e, "time", when, sizeof(when));
	em_array_begin(&e, "jobs");
	for (int i = 0; i < n; i++)
		emit_job(&e, &rows[i]);
	em_array_end(&e);
	em_end(&e);
	fputc('\n', out);
}
