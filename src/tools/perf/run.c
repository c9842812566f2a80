/* SPDX-License-Identifier: MIT */
/*
 * busypoll perf: one run (contract in tools/perf.h).
 *
 * The run's thread owns the admin queue on a loop of its own (epoll:block: it
 * only carries Keep Alives) and runs it while it waits, so the controller never
 * expires mid-run; it starts one loop thread per job (each opens its own I/O
 * queue there), waits until every job is ready (pre-filled with --verify), gives
 * them one start time, prints progress, samples our spawned target's counters
 * around the measured interval, and joins them. Jobs move between phases on their
 * own timers, so the hot path shares nothing.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/utsname.h>

#include <busypoll/nvme/host.h>

#include "base/bytes.h"
#include "tools/perf/internal.h"

#define SETTLE_US 50000             /* the run's loop wakes this often to look around */
#define DRAIN_GRACE_NS (5ull * 1000000000ull)
#define MAX_VERIFY_UNITS (256ull << 20) /* 1 GiB of generations */

double perf_iops(const struct perf_result *r, const struct perf_dir *d)
{
	return r->seconds > 0 ? (double)d->ios / r->seconds : 0;
}

double perf_mbps(const struct perf_result *r, const struct perf_dir *d)
{
	return r->seconds > 0 ? (double)d->bytes / r->seconds / 1e6 : 0;
}

double perf_mibps(const struct perf_result *r, const struct perf_dir *d)
{
	return r->seconds > 0 ? (double)d->bytes / r->seconds / 1048576.0 : 0;
}

uint64_t perf_total_ios(const struct perf_result *r)
{
	return r->rd.ios + r->wr.ios;
}

double perf_cpu_us_per_io(const struct perf_result *r)
{
	uint64_t n = perf_total_ios(r);

	return n ? (double)ev_cpu_us(&r->initiator) / (double)n : 0;
}

/* ---- connecting, with the failures said the way a user can act on them ---- */

/* strip_queue - "queue 0: Connect refused: X" -> "X": the rest of the line says who. */
static const char *strip_queue(const char *msg)
{
	const char *p = msg;

	if (!strncmp(p, "queue ", 6)) {
		const char *c = strchr(p, ':');

		if (c && c[1] == ' ')
			p = c + 2;
	}
	if (!strncmp(p, "Connect refused: ", 17))
		p += 17;
	return p;
}

static int connect_ctrl(struct perf_ctx *ctx, struct bp_loop *loop, const struct sockaddr_storage *ss,
			socklen_t sl, const char *addr, int numjobs, char *err, size_t errlen)
{
	const struct perf_opts *o = ctx->o;
	struct bp_nvmeh_opts h;
	int ret;

	bp_nvmeh_opts_defaults(&h);
	snprintf(h.subnqn, sizeof(h.subnqn), "%s", o->nqn);
	if (o->hostnqn[0])
		snprintf(h.hostnqn, sizeof(h.hostnqn), "%s", o->hostnqn);
	h.hdgst = o->hdgst;
	h.ddgst = o->ddgst;
	h.io_queue_size = (uint16_t)(o->iodepth < 2 ? 2 : o->iodepth);
	h.timeout_ms = o->io_timeout_ms;
	ret = bp_nvmeh_ctrl_connect(loop, (const struct sockaddr *)ss, sl, &h, (uint16_t)numjobs, &ctx->ctrl);
	if (ret == 0)
		return 0;
	if (ret > 0) {
		snprintf(err, errlen, "target %s refused the connection: %s", addr, strip_queue(bp_last_error()));
		return -ECONNREFUSED;
	}
	if (ret == -ECONNREFUSED)
		snprintf(err, errlen, "cannot connect to %s: connection refused (is a target listening there?)", addr);
	else if (ret == -ETIMEDOUT)
		snprintf(err, errlen, "target %s: no answer: %s", addr, strip_queue(bp_last_error()));
	else if (ret == -ECONNRESET || ret == -ECONNABORTED || ret == -EPROTO)
		snprintf(err, errlen, "target %s: %s", addr, strip_queue(bp_last_error()));
	else
		snprintf(err, errlen, "cannot connect to %s: %s", addr, strip_queue(bp_last_error()));
	return ret;
}

/* check_fit - the options against what the controller and namespace say. -EINVAL: exit 2. */
static int check_fit(struct perf_ctx *ctx, struct perf_result *res, int numjobs, char *err, size_t errlen)
{
	const struct perf_opts *o = ctx->o;
	struct bp_nvmeh_ctrl *c = ctx->ctrl;
	struct bp_nvmeh_ns_info ns;
	uint64_t cap, size;
	int ret;

	if (c->nr_io_queues < numjobs) {
		snprintf(err, errlen, "the target grants %u I/O queue%s; %d job%s need one each (lower --numjobs)",
			 c->nr_io_queues, c->nr_io_queues == 1 ? "" : "s", numjobs, numjobs == 1 ? "" : "s");
		return -EINVAL;
	}
	if (c->io_depth < o->iodepth) {
		snprintf(err, errlen, "--iodepth %d: the target's I/O queues hold at most %u commands (CAP.MQES/MAXCMD)",
			 o->iodepth, c->io_depth);
		return -EINVAL;
	}
	ret = bp_nvmeh_identify_ns(c, o->nsid, &ns);
	if (ret > 0 && (ret & 0x7ff) == BP_NVME_SC_INVALID_NS) {
		snprintf(err, errlen, "--nsid %u: no such namespace on %s (it has %u)", o->nsid, o->nqn, c->nn);
		return -EINVAL;
	}
	if (ret) {
		char s[96];

		snprintf(err, errlen, "Identify Namespace %u: %s", o->nsid,
			 ret > 0 ? bp_nvme_status_str((uint16_t)ret, s, sizeof(s)) : bp_last_error());
		return ret > 0 ? -EIO : ret;
	}
	if (!ns.nblocks || ns.block_size < 512) {
		snprintf(err, errlen, "--nsid %u: the namespace is not active (size 0)", o->nsid);
		return -EINVAL;
	}
	ctx->nsid = o->nsid;
	ctx->block_size = ns.block_size;
	res->block_size = ns.block_size;
	res->ns_blocks = ns.nblocks;
	res->max_transfer = c->max_transfer;
	res->incapsule = c->incapsule;
	res->queue_depth = c->io_depth;
	memcpy(res->model, c->id + 24, 40);
	res->model[40] = 0;
	for (int i = 39; i >= 0 && (res->model[i] == ' ' || !res->model[i]); i--)
		res->model[i] = 0;
	if (o->bs % ns.block_size) {
		snprintf(err, errlen, "--bs %u: not a multiple of namespace %u's block size %u", o->bs, o->nsid,
			 ns.block_size);
		return -EINVAL;
	}
	if (c->max_transfer && o->bs > c->max_transfer) {
		snprintf(err, errlen, "--bs %u: more than the target's largest transfer (MDTS) of %u bytes", o->bs,
			 c->max_transfer);
		return -EINVAL;
	}
	if (o->offset % ns.block_size) {
		snprintf(err, errlen, "--offset %" PRIu64 ": not a multiple of the block size %u", o->offset,
			 ns.block_size);
		return -EINVAL;
	}
	cap = ns.nblocks * ns.block_size;
	if (o->offset >= cap) {
		snprintf(err, errlen, "--offset %" PRIu64 ": namespace %u holds only %" PRIu64 " bytes", o->offset,
			 o->nsid, cap);
		return -EINVAL;
	}
	size = o->size ? o->size : cap - o->offset;
	if (o->offset + size > cap) {
		snprintf(err, errlen, "--offset %" PRIu64 " + --size %" PRIu64 " is past the end of namespace %u (%" PRIu64
			 " bytes)", o->offset, size, o->nsid, cap);
		return -EINVAL;
	}
	ctx->region_offset = o->offset;
	ctx->units = size / o->bs;
	ctx->lbas_per_io = o->bs / ns.block_size;
	res->region_offset = o->offset;
	res->region_size = ctx->units * o->bs;
	if (!ctx->units) {
		snprintf(err, errlen, "the region (%" PRIu64 " bytes) holds no --bs %u block", size, o->bs);
		return -EINVAL;
	}
	if (o->verify) {
		if (ctx->units / (uint64_t)numjobs < (uint64_t)o->iodepth) {
			snprintf(err, errlen,
				 "--verify: each job's slice of the region must hold at least --iodepth %d blocks of %u bytes "
				 "(it holds %" PRIu64 "); raise --size", o->iodepth, o->bs, ctx->units / (uint64_t)numjobs);
			return -EINVAL;
		}
		if (ctx->units > MAX_VERIFY_UNITS) {
			snprintf(err, errlen, "--verify keeps 4 bytes per block: %" PRIu64 " blocks is too many; use --size",
				 ctx->units);
			return -EINVAL;
		}
		ctx->prefill = perf_rw_reads(o);
		ctx->readback = perf_rw_writes(o);
	}
	return 0;
}

/* ---- while it runs ---- */

/* progress - one line: what the jobs did since the last line, all directions together. */
static void progress(struct perf_ctx *ctx, const char *when, uint64_t *last_ios, uint64_t *last_bytes,
		     uint64_t *last_ns)
{
	uint64_t ios = 0, bytes = 0, now = bp_now_ns();
	double dt = (double)(now - *last_ns) / 1e9;

	for (int i = 0; i < ctx->n; i++) {
		if (!ctx->jobs[i])
			continue;
		ios += atomic_load_explicit(&ctx->jobs[i]->prog_ios, memory_order_relaxed);
		bytes += atomic_load_explicit(&ctx->jobs[i]->prog_bytes, memory_order_relaxed);
	}
	if (dt > 0 && when)
		fprintf(stderr, "busypoll perf: %-22s %9.1fK IOPS  %9.1f MiB/s  (%d job%s)\n", when,
			(double)(ios - *last_ios) / dt / 1e3, (double)(bytes - *last_bytes) / dt / 1048576.0, ctx->n,
			ctx->n == 1 ? "" : "s");
	*last_ios = ios;
	*last_bytes = bytes;
	*last_ns = now;
}

static int first_job_error(struct perf_ctx *ctx, char *err, size_t errlen)
{
	for (int i = 0; i < ctx->n; i++)
		if (ctx->jobs[i] && ctx->jobs[i]->err) {
			snprintf(err, errlen, "%s", ctx->jobs[i]->errmsg);
			return ctx->jobs[i]->err;
		}
	return 0;
}

static void stop_jobs(struct perf_ctx *ctx, int started)
{
	for (int i = 0; i < started; i++)
		bp_loop_post(bp_loop_thread_loop(ctx->jobs[i]->lt), perf_job_stop, ctx->jobs[i]);
}

static void sample_target(struct perf_ctx *ctx, struct perf_spawn *sp, struct perf_target_stats *st)
{
	char peers[PERF_MAX_JOBS][64];

	for (int i = 0; i < ctx->n; i++)
		snprintf(peers[i], sizeof(peers[i]), "%s", ctx->jobs[i]->local);
	if (perf_spawn_sample(sp, peers, (size_t)ctx->n, st))
		st->valid = false;
}

static void target_delta(struct perf_target_stats *d, const struct perf_target_stats *a,
			 const struct perf_target_stats *b)
{
	memset(d, 0, sizeof(*d));
	if (!a->valid || !b->valid)
		return;
	d->valid = true;
	d->pid = b->pid;
	d->queues = b->queues;
#define D(f) d->f = b->f >= a->f ? b->f - a->f : 0;
	D(commands) D(reads) D(writes) D(r2ts) D(errors) D(poll_passes) D(idle_exits) D(bytes_in) D(bytes_out)
	D(cpu_us)
#undef D
}

/* fill_result - sum what the joined jobs measured. */
static void fill_result(struct perf_ctx *ctx, struct perf_result *res)
{
	uint64_t first = UINT64_MAX, last = 0;

	res->initiator.valid = true;
	memcpy(res->initiator.mode, ctx->o->mode_text, sizeof(res->initiator.mode));
	res->initiator.threads = (uint32_t)ctx->n;
	for (int i = 0; i < ctx->n; i++) {
		struct perf_job *j = ctx->jobs[i];
		struct perf_job_result *jr = &res->jobs[i];
		struct evidence one = { 0 };

		if (!j)
			continue;
		jr->cpu = j->cpu;
		res->verified_blocks += j->verified;
		if (!j->measured_any)
			continue;
		res->rd.ios += j->rd.ios;
		res->rd.bytes += j->rd.bytes;
		res->wr.ios += j->wr.ios;
		res->wr.bytes += j->wr.bytes;
		bp_hist_merge(&res->rd.hist, &j->rd.hist);
		bp_hist_merge(&res->wr.hist, &j->wr.hist);
		if (j->start.loop.ns < first)
			first = j->start.loop.ns;
		if (j->end.loop.ns > last)
			last = j->end.loop.ns;
		jr->ios = j->rd.ios + j->wr.ios;
		jr->iops = j->end.loop.ns > j->start.loop.ns
				   ? (double)jr->ios * 1e9 / (double)(j->end.loop.ns - j->start.loop.ns)
				   : 0;
		ev_add_interval(&one, &j->start, &j->end);
		jr->cpu_us = ev_cpu_us(&one);
		ev_add_interval(&res->initiator, &j->start, &j->end);
	}
	bp_hist_merge(&res->all, &res->rd.hist);
	bp_hist_merge(&res->all, &res->wr.hist);
	res->seconds = last > first ? (double)(last - first) / 1e9 : 0;
	res->initiator.interval_ns = last > first ? last - first : 0;
	res->initiator.transactions = res->rd.ios + res->wr.ios;
}

static void result_init(struct perf_result *res, const struct perf_opts *o, int numjobs)
{
	struct utsname un;

	memset(res, 0, sizeof(*res));
	res->opts = *o;
	res->opts.numjobs = numjobs;
	res->numjobs = numjobs;
	bp_hist_init(&res->rd.hist);
	bp_hist_init(&res->wr.hist);
	bp_hist_init(&res->all);
	if (uname(&un) == 0)
		snprintf(res->kernel, sizeof(res->kernel), "%s", un.release);
	for (int i = 0; i < PERF_MAX_JOBS; i++)
		res->jobs[i].cpu = -1;
}

int perf_run(const struct perf_opts *o, int numjobs, struct perf_spawn *sp, volatile sig_atomic_t *stop,
	     struct perf_result *res, char *err, size_t errlen)
{
	struct perf_ctx *ctx = calloc(1, sizeof(*ctx));
	struct perf_target_stats t0 = { 0 }, t1 = { 0 };
	struct bp_kstats k0 = { 0 }, k1 = { 0 };
	struct sockaddr_storage ss;
	socklen_t sl;
	struct bp_loop *loop = NULL;
	struct bp_mode block;
	char merr[128], addr[128];
	int ret, started = 0;
	bool stopping = false, sampled_start = false, sampled_end = false, healthy = true;
	uint64_t measure_at = 0, end_at = 0, next_progress = 0, last_ios = 0, last_bytes = 0, last_ns, t_start;
	uint64_t last_seen = 0, last_change = 0;

	result_init(res, o, numjobs);
	if (err && errlen)
		err[0] = 0;
	if (!ctx) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	ctx->o = o;
	ctx->n = numjobs;
	if (getrandom(&ctx->run_id, sizeof(ctx->run_id), 0) != sizeof(ctx->run_id))
		ctx->run_id = (uint32_t)bp_now_ns();
	ret = bp_parse_addr(o->target, PERF_DEFAULT_PORT, &ss, &sl);
	if (ret) {
		snprintf(err, errlen, "--target %s: %s", o->target, bp_last_error());
		free(ctx);
		return -EINVAL;
	}
	bp_format_addr((struct sockaddr *)&ss, addr, sizeof(addr));
	snprintf(ctx->addr, sizeof(ctx->addr), "%s", addr);
	snprintf(res->target_addr, sizeof(res->target_addr), "%s", addr);
	bp_mode_parse("epoll:block", &block, merr, sizeof(merr));
	ret = bp_loop_create(&loop, &block);
	if (ret) {
		snprintf(err, errlen, "%s", bp_last_error());
		free(ctx);
		return ret;
	}
	ret = connect_ctrl(ctx, loop, &ss, sl, addr, numjobs, err, errlen);
	if (ret)
		goto out;
	ret = check_fit(ctx, res, numjobs, err, errlen);
	if (ret)
		goto out;
	for (int i = 0; i < numjobs; i++) {
		ctx->jobs[i] = perf_job_new(ctx, i);
		if (!ctx->jobs[i]) {
			snprintf(err, errlen, "out of memory for job %d (%d buffers of %u bytes)", i, o->iodepth, o->bs);
			ret = -ENOMEM;
			goto out_jobs;
		}
	}
	for (int i = 0; i < numjobs; i++) {
		struct perf_job *j = ctx->jobs[i];

		ret = bp_loop_thread_start(&j->lt, &o->mode, j->cpu, perf_job_setup, j);
		if (ret) {
			snprintf(err, errlen, "%s", strip_queue(bp_last_error()));
			if (ret == -EPERM || ret == -EOPNOTSUPP)
				ret = -EINVAL;
			goto out_jobs;
		}
		started++;
	}

	/* Every queue open (and pre-filled): then one start time for all. */
	last_ns = t_start = bp_now_ns();
	next_progress = last_ns + (uint64_t)(o->interval_s * 1e9);
	while (atomic_load(&ctx->ready) < numjobs) {
		if (atomic_load(&ctx->failed))
			break;
		if (stop && *stop) {
			res->interrupted = true;
			stop_jobs(ctx, started);
			break;
		}
		if (bp_loop_run_once(loop, SETTLE_US) < 0 || bp_nvmeh_queue_state(ctx->ctrl->admin) != BP_NVMEH_READY)
			break;
		if (o->interval_s > 0 && !o->quiet && bp_now_ns() >= next_progress) {
			char when[64];

			snprintf(when, sizeof(when), "pre-fill %.0f s", (double)(bp_now_ns() - t_start) / 1e9);
			progress(ctx, when, &last_ios, &last_bytes, &last_ns);
			next_progress += (uint64_t)(o->interval_s * 1e9);
		}
	}
	if (atomic_load(&ctx->ready) < numjobs && !res->interrupted && !atomic_load(&ctx->failed)) {
		snprintf(err, errlen, "the controller failed before the run: %s",
			 strip_queue(bp_nvmeh_queue_error(ctx->ctrl->admin)));
		ret = -EIO;
		healthy = false;
		goto out_jobs;
	}
	if (atomic_load(&ctx->ready) == numjobs && !res->interrupted && !atomic_load(&ctx->failed)) {
		uint64_t now = bp_now_ns();

		res->prefilled_bytes = ctx->prefill ? ctx->units * o->bs : 0;
		measure_at = now + (uint64_t)(o->ramp_s * 1e9);
		end_at = measure_at + (uint64_t)(o->runtime_s * 1e9);
		for (int i = 0; i < numjobs; i++) {
			ctx->jobs[i]->measure_at_ns = measure_at;
			ctx->jobs[i]->end_at_ns = end_at;
			bp_loop_post(bp_loop_thread_loop(ctx->jobs[i]->lt), perf_job_go, ctx->jobs[i]);
		}
		progress(ctx, NULL, &last_ios, &last_bytes, &last_ns);
		next_progress = now + (uint64_t)(o->interval_s * 1e9);
		last_change = now;
	}

	/* Run: the jobs' own timers end it; the admin queue keeps the controller alive meanwhile. */
	while (measure_at && atomic_load(&ctx->done) < numjobs) {
		uint64_t now, ios = 0;
		int64_t wait_us;

		if (atomic_load(&ctx->failed))
			break;
		if (stop && *stop && !stopping) {
			stopping = true;
			res->interrupted = true;
			stop_jobs(ctx, started);
		}
		/* Wake at the interval's edges too: the kernel's (and the target's) counters are read on them. */
		now = bp_now_ns();
		if (!sampled_start && now >= measure_at) {
			bp_kstats_read(&k0);
			if (sp)
				sample_target(ctx, sp, &t0);
			sampled_start = true;
		}
		if (sampled_start && !sampled_end && (now >= end_at || stopping)) {
			bp_kstats_read(&k1);
			if (sp)
				sample_target(ctx, sp, &t1);
			sampled_end = true;
		}
		wait_us = SETTLE_US;
		if (!sampled_start && measure_at > now && (measure_at - now) / 1000 < (uint64_t)wait_us)
			wait_us = (int64_t)((measure_at - now) / 1000);
		else if (!sampled_end && end_at > now && (end_at - now) / 1000 < (uint64_t)wait_us)
			wait_us = (int64_t)((end_at - now) / 1000);
		if (bp_loop_run_once(loop, wait_us) < 0) {
			snprintf(err, errlen, "the admin queue's loop: %s", bp_last_error());
			ret = -EIO;
			healthy = false;
			break;
		}
		if (bp_nvmeh_queue_state(ctx->ctrl->admin) != BP_NVMEH_READY) {
			/* Give the jobs a moment to say why in their own words (the same cause, closer). */
			for (int k = 0; k < 20 && !atomic_load(&ctx->failed); k++)
				bp_loop_run_once(loop, SETTLE_US);
			if (!atomic_load(&ctx->failed)) {
				snprintf(err, errlen, "the controller failed: %s",
					 strip_queue(bp_nvmeh_queue_error(ctx->ctrl->admin)));
				ret = -EIO;
			}
			healthy = false;
			break;
		}
		now = bp_now_ns();
		if (o->interval_s > 0 && !o->quiet && now >= next_progress && (now < end_at || ctx->readback)) {
			char when[64];

			if (stopping)
				snprintf(when, sizeof(when), "stopping");
			else if (now < measure_at)
				snprintf(when, sizeof(when), "ramp %.1f/%.1f s", o->ramp_s - (double)(measure_at - now) / 1e9,
					 o->ramp_s);
			else if (now < end_at)
				snprintf(when, sizeof(when), "run %.1f/%.1f s", (double)(now - measure_at) / 1e9, o->runtime_s);
			else
				snprintf(when, sizeof(when), "verify read-back");
			progress(ctx, when, &last_ios, &last_bytes, &last_ns);
			next_progress += (uint64_t)(o->interval_s * 1e9);
			if (next_progress < now)
				next_progress = now + (uint64_t)(o->interval_s * 1e9);
		}
		/* A never-ending drain: the command timeout should have said so; this is the backstop. */
		for (int i = 0; i < numjobs; i++)
			ios += atomic_load_explicit(&ctx->jobs[i]->prog_ios, memory_order_relaxed);
		if (ios != last_seen) {
			last_seen = ios;
			last_change = now;
		} else if (now > end_at && now - last_change > (uint64_t)o->io_timeout_ms * 1000000ull + DRAIN_GRACE_NS) {
			snprintf(err, errlen, "target %s stopped answering: no I/O completed for %.0f s after the run ended",
				 addr, (double)(now - last_change) / 1e9);
			ret = -ETIMEDOUT;
			healthy = false;
			break;
		}
	}
	/* The jobs can be done (their drain is short) before this loop came round to it. */
	if (sampled_start && !sampled_end && !ret && !atomic_load(&ctx->failed)) {
		bp_kstats_read(&k1);
		if (sp)
			sample_target(ctx, sp, &t1);
		sampled_end = true;
	}
	if (!ret && atomic_load(&ctx->failed)) {
		ret = first_job_error(ctx, err, errlen);
		healthy = false;
	}
	if (sp && t0.valid && t1.valid)
		target_delta(&res->target, &t0, &t1);
out_jobs:
	for (int i = 0; i < started; i++)
		bp_loop_thread_join(ctx->jobs[i]->lt, perf_job_teardown, ctx->jobs[i]);
	if (!ret)
		ret = first_job_error(ctx, err, errlen);
	if (!ret || res->interrupted) {
		fill_result(ctx, res);
		if (sampled_end)
			ev_add_kstats(&res->initiator, &k0, &k1);
	}
	for (int i = 0; i < numjobs; i++)
		perf_job_free(ctx->jobs[i]);
out:
	if (ctx->ctrl) {
		if (healthy && !ret)
			bp_nvmeh_ctrl_disconnect(ctx->ctrl);
		else
			bp_nvmeh_ctrl_close(ctx->ctrl);
	}
	bp_loop_destroy(loop);
	free(ctx);
	return ret;
}
