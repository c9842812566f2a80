/* SPDX-License-Identifier: MIT */
/*
 * busypoll perf: one run (contract in tools/perf/perf.h).
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

#include <busypoll/nvme/host.h>

#include "base/bytes.h"
#include "tools/common/cmd.h"
#include "tools/perf/internal.h"

#define SETTLE_US 50000             /* the run's loop wakes this often to look around */
#define DRAIN_GRACE_NS (5ull * 1000000000ull)
#define MAX_VERIFY_UNITS (256ull << 20) /* 1 GiB of generations */

const struct perf_dir *perf_result_dir(const struct perf_result *r, enum perf_ddir d)
{
	return d == PERF_DDIR_READ ? &r->rd : d == PERF_DDIR_WRITE ? &r->wr : &r->tr;
}

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
	return r->rd.ios + r->wr.ios + r->tr.ios;
}

unsigned perf_unproven(const struct perf_result *r)
{
	const struct perf_target_stats *t = &r->target;
	uint64_t ios = perf_total_ios(r);
	unsigned f = 0;

	if (!ios)
		return 0;
	if (bp_mode_is_busy_poll(&r->opts.mode) && r->initiator.valid &&
	    ev_per(r->initiator.busy_poll_rx, ios) < EV_PROOF_MIN)
		f |= PERF_UNPROVEN_HOST;
	if (t->valid && t->poll_known && t->poll_period_us && ev_per(t->polls, ios) < EV_PROOF_MIN)
		f |= PERF_UNPROVEN_TARGET_POLL;
	if (t->valid && t->busy_poll_mode && ev_per(t->busy_poll_rx, ios) < EV_PROOF_MIN)
		f |= PERF_UNPROVEN_TARGET_BUSY;
	return f;
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
	if (ns.read_only && (perf_rw_writes(o) || perf_rw_trims(o) || o->verify)) {
		/* known from Identify before any I/O: refused here, not failed mid-run */
		snprintf(err, errlen, "--rw %s%s: namespace %u of %s is write protected (Identify Namespace NSATTR): "
			 "only --rw read or randread%s", perf_rw_name(o->rw), o->verify ? " --verify" : "", o->nsid, o->nqn,
			 o->verify ? ", without --verify (it writes its pre-fill)" : "");
		return -EINVAL;
	}
	if (perf_rw_trims(o) && !(bp_get_le16(c->id + 520) & (1u << 2))) {
		/* ONCS bit 2: Dataset Management */
		snprintf(err, errlen, "--rw %s: the controller does not support Dataset Management (Identify Controller "
			 "ONCS), which perf's trims are", perf_rw_name(o->rw));
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
	/* a trim carries its range (16 bytes), not bs of data */
	if (c->max_transfer && o->bs > c->max_transfer && !perf_rw_trims(o)) {
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

/* ---- while it runs: the run's hooks (tools/harness/run_driver.h) ---- */

/* bytes_done - every job's bytes since the go (their progress counters). */
static uint64_t bytes_done(const struct perf_ctx *ctx)
{
	uint64_t bytes = 0;

	for (int i = 0; i < ctx->n; i++)
		if (ctx->jobs[i])
			bytes += atomic_load_explicit(&ctx->jobs[i]->prog_bytes, memory_order_relaxed);
	return bytes;
}

/* progress - one line: what the jobs did since the last line, all directions together. */
static void progress(struct run *r, const char *when, uint64_t ios, double dt)
{
	struct perf_ctx *ctx = r->tool;
	uint64_t bytes = bytes_done(ctx);
	char text[64];

	if (ctx->o->quiet || dt <= 0 || (!strcmp(when, "draining") && !ctx->readback))
		return; /* the drain is a moment; a read-back is work worth a line */
	/* fio's word for the warm-up is the ramp */
	if (!strncmp(when, "warm-up", 7))
		snprintf(text, sizeof(text), "ramp%s", when + 7);
	else
		snprintf(text, sizeof(text), "%s", !strcmp(when, "draining") && ctx->readback ? "verify read-back" : when);
	fprintf(stderr, "busypoll perf: %-22s %9.1fK IOPS  %9.1f MiB/s  (%d job%s)\n", text, (double)ios / dt / 1e3,
		(double)(bytes - ctx->last_bytes) / dt / 1048576.0, ctx->n, ctx->n == 1 ? "" : "s");
	ctx->last_bytes = bytes;
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
	d->poll_period_us = b->poll_period_us;
	d->poll_known = b->poll_known;
	d->busy_poll_mode = b->busy_poll_mode;
	memcpy(d->mode, b->mode, sizeof(d->mode));
#define D(f) d->f = b->f >= a->f ? b->f - a->f : 0;
	D(commands) D(reads) D(writes) D(r2ts) D(errors) D(poll_passes) D(idle_exits) D(polls) D(bytes_in)
	D(bytes_out) D(cpu_us) D(busy_poll_rx)
#undef D
}

/* edge - the measured interval's edges: the kernel's counters, and our target's. */
static void edge(struct run *r, bool end)
{
	struct perf_ctx *ctx = r->tool;

	bp_kstats_read(end ? &ctx->k1 : &ctx->k0);
	if (ctx->sp)
		sample_target(ctx, ctx->sp, end ? &ctx->t1 : &ctx->t0);
}

/*
 * tick - while the jobs run, the admin queue's loop runs here, so the controller
 * never expires; pre-fill progress lines before the go. -EIO when it failed.
 */
static int tick(struct run *r, int64_t wait_us)
{
	struct perf_ctx *ctx = r->tool;

	if (bp_loop_run_once(ctx->admin, wait_us) < 0) {
		snprintf(ctx->err, sizeof(ctx->err), "the admin queue's loop: %s", bp_last_error());
		return -EIO;
	}
	if (bp_nvmeh_queue_state(ctx->ctrl->admin) != BP_NVMEH_READY) {
		/* Give the jobs a moment to say why in their own words (the same cause, closer). */
		for (int k = 0; k < 20 && !atomic_load(&r->failed); k++)
			bp_loop_run_once(ctx->admin, SETTLE_US);
		snprintf(ctx->err, sizeof(ctx->err), "the controller failed%s: %s", r->started ? "" : " before the run",
			 strip_queue(bp_nvmeh_queue_error(ctx->ctrl->admin)));
		ctx->admin_err = -EIO;
		return -EIO;
	}
	if (!r->started && ctx->prefill && ctx->o->interval_s > 0) {
		uint64_t now = bp_now_ns();

		/* the pre-fill's own progress lines, before the go */
		if (now >= ctx->next_line) {
			char when[64];

			snprintf(when, sizeof(when), "pre-fill %.0f s", (double)(now - ctx->t_start) / 1e9);
			progress(r, when, run_units(r) - ctx->last_units, (double)(now - ctx->last_line) / 1e9);
			ctx->last_units = run_units(r);
			ctx->last_line = now;
			ctx->next_line = now + (uint64_t)(ctx->o->interval_s * 1e9);
		}
	}
	return 0;
}

static const struct run_ops perf_run_ops = {
	.start = perf_job_start, .idle = perf_job_idle, .edge = edge, .tick = tick, .progress = progress,
};

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
		jr->ran_on = j->w.measured ? j->w.end.cpu : -1;
		res->verified_blocks += j->verified;
		if (!j->w.measured)
			continue;
		for (int d = 0; d < PERF_DDIRS; d++) {
			struct perf_dir *rd = (struct perf_dir *)perf_result_dir(res, (enum perf_ddir)d);

			rd->ios += j->dir[d].ios;
			rd->bytes += j->dir[d].bytes;
			rd->late += j->dir[d].late;
			rd->queued += j->dir[d].queued;
			bp_hist_merge(&rd->hist, &j->dir[d].hist);
			bp_hist_merge(&rd->clat, &j->dir[d].clat);
			bp_hist_merge(&rd->slat, &j->dir[d].slat);
		}
		res->behind += j->behind;
		if (j->w.start.loop.ns < first)
			first = j->w.start.loop.ns;
		if (j->w.end.loop.ns > last)
			last = j->w.end.loop.ns;
		jr->ios = j->dir[PERF_DDIR_READ].ios + j->dir[PERF_DDIR_WRITE].ios + j->dir[PERF_DDIR_TRIM].ios;
		jr->iops = j->w.end.loop.ns > j->w.start.loop.ns
				   ? (double)jr->ios * 1e9 / (double)(j->w.end.loop.ns - j->w.start.loop.ns)
				   : 0;
		ev_add_napi(&res->initiator, j->napi_id);
		ev_add_interval(&one, &j->w.start, &j->w.end);
		jr->cpu_us = ev_cpu_us(&one);
		ev_add_interval(&res->initiator, &j->w.start, &j->w.end);
	}
	bp_hist_merge(&res->all, &res->rd.hist);
	bp_hist_merge(&res->all, &res->wr.hist);
	bp_hist_merge(&res->all, &res->tr.hist);
	res->seconds = last > first ? (double)(last - first) / 1e9 : 0;
	res->initiator.interval_ns = last > first ? last - first : 0;
	res->initiator.transactions = perf_total_ios(res);
}

static void result_init(struct perf_result *res, const struct perf_opts *o, int numjobs)
{
	struct bp_host host;

	memset(res, 0, sizeof(*res));
	res->opts = *o;
	res->opts.numjobs = numjobs;
	res->numjobs = numjobs;
	for (int d = 0; d < PERF_DDIRS; d++) {
		struct perf_dir *x = (struct perf_dir *)perf_result_dir(res, (enum perf_ddir)d);

		bp_hist_init(&x->hist);
		bp_hist_init(&x->clat);
		bp_hist_init(&x->slat);
	}
	bp_hist_init(&res->all);
	bp_host_read(&host);
	snprintf(res->kernel, sizeof(res->kernel), "%s", host.kernel);
	for (int i = 0; i < PERF_MAX_JOBS; i++)
		res->jobs[i].cpu = res->jobs[i].ran_on = -1;
}

/* ctx_connect - the controller on the run's own loop, and the options against it. */
static int ctx_connect(struct perf_ctx *ctx, struct perf_result *res, int numjobs, char *err, size_t errlen)
{
	const struct perf_opts *o = ctx->o;
	struct sockaddr_storage ss;
	socklen_t sl;
	int ret = bp_parse_addr(o->target, PERF_DEFAULT_PORT, &ss, &sl);

	if (ret) {
		snprintf(err, errlen, "--target %s: %s", o->target, bp_last_error());
		return -EINVAL;
	}
	bp_format_addr((struct sockaddr *)&ss, ctx->addr, sizeof(ctx->addr));
	snprintf(res->target_addr, sizeof(res->target_addr), "%s", ctx->addr);
	/* epoll:block: the admin queue only carries Keep Alives */
	ret = bp_loop_create(&ctx->admin, &opt_mode_default);
	if (ret) {
		snprintf(err, errlen, "%s", bp_last_error());
		return ret;
	}
	ret = connect_ctrl(ctx, ctx->admin, &ss, sl, ctx->addr, numjobs, err, errlen);
	if (!ret)
		ret = check_fit(ctx, res, numjobs, err, errlen);
	return ret;
}

/* start_jobs - every job's memory, then its loop thread (which opens its I/O queue). */
static int start_jobs(struct perf_ctx *ctx, int numjobs, int *started, char *err, size_t errlen)
{
	const struct perf_opts *o = ctx->o;

	for (int i = 0; i < numjobs; i++) {
		ctx->jobs[i] = perf_job_new(ctx, i);
		if (!ctx->jobs[i]) {
			snprintf(err, errlen, "out of memory for job %d (%d buffers of %u bytes)", i, o->iodepth, o->bs);
			return -ENOMEM;
		}
		ctx->run.w[i] = &ctx->jobs[i]->w;
	}
	/* before the threads: a job reports ready from its setup */
	if (run_init(&ctx->run, &perf_run_ops, ctx, numjobs)) {
		snprintf(err, errlen, "eventfd: %s", strerror(errno));
		return -errno;
	}
	for (int i = 0; i < numjobs; i++) {
		struct perf_job *j = ctx->jobs[i];
		int ret = bp_loop_thread_start(&j->lt, &o->mode, j->cpu, perf_job_setup, j);

		if (ret) {
			snprintf(err, errlen, "%s", strip_queue(bp_last_error()));
			return ret == -EPERM || ret == -EOPNOTSUPP ? -EINVAL : ret;
		}
		(*started)++;
	}
	return 0;
}

/* drive - the jobs' run: every queue open (and pre-filled), one start time, the interval, the drain. */
static int drive(struct perf_ctx *ctx, struct perf_result *res, volatile sig_atomic_t *stop, char *err,
		 size_t errlen)
{
	const struct perf_opts *o = ctx->o;
	struct run *r = &ctx->run;
	int ret;

	r->warmup_s = o->ramp_s;
	r->duration_s = o->runtime_s;
	r->interval_s = o->quiet ? 0 : o->interval_s;
	r->stall_ns = (uint64_t)o->io_timeout_ms * 1000000ull + DRAIN_GRACE_NS;
	r->stop = stop;
	ctx->t_start = ctx->last_line = bp_now_ns();
	ctx->next_line = ctx->t_start + (uint64_t)(o->interval_s * 1e9);
	ret = run_drive(r);
	res->interrupted = r->interrupted;
	if (ret == -ETIMEDOUT)
		snprintf(err, errlen, "target %s stopped answering: no I/O completed for %.0f s", ctx->addr,
			 (double)r->stall_ns / 1e9);
	else if (ret && ctx->err[0])
		snprintf(err, errlen, "%s", ctx->err);
	if (r->started)
		res->prefilled_bytes = ctx->prefill ? ctx->units * o->bs : 0;
	return ret;
}

int perf_run(const struct perf_opts *o, int numjobs, struct perf_spawn *sp, volatile sig_atomic_t *stop,
	     struct perf_result *res, char *err, size_t errlen)
{
	struct perf_ctx *ctx = calloc(1, sizeof(*ctx));
	int ret, started = 0;

	result_init(res, o, numjobs);
	if (err && errlen)
		err[0] = 0;
	if (!ctx) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	ctx->o = o;
	ctx->n = numjobs;
	ctx->sp = sp;
	ctx->run.wake_fd = -1;
	if (getrandom(&ctx->run_id, sizeof(ctx->run_id), 0) != sizeof(ctx->run_id))
		ctx->run_id = (uint32_t)bp_now_ns();
	ret = ctx_connect(ctx, res, numjobs, err, errlen);
	if (!ret)
		ret = start_jobs(ctx, numjobs, &started, err, errlen);
	if (!ret)
		ret = drive(ctx, res, stop, err, errlen);
	for (int i = 0; i < started; i++)
		bp_loop_thread_join(ctx->jobs[i]->lt, perf_job_teardown, ctx->jobs[i]);
	if (ret == -EIO || ret == 0) {
		int e = run_first_error(&ctx->run, err, errlen);

		if (e)
			ret = e;
		else if (ctx->admin_err)
			ret = ctx->admin_err;
	}
	if (ctx->run.started) {
		res->measured = true;
		if (ret)
			snprintf(res->failed, sizeof(res->failed), "%s", err);
		fill_result(ctx, res);
		if (ctx->run.edge_end)
			ev_add_kstats(&res->initiator, &ctx->k0, &ctx->k1);
		if (sp && ctx->t0.valid && ctx->t1.valid)
			target_delta(&res->target, &ctx->t0, &ctx->t1);
	}
	for (int i = 0; i < numjobs; i++)
		perf_job_free(ctx->jobs[i]);
	if (ctx->ctrl) {
		if (!ret && !atomic_load(&ctx->run.failed))
			bp_nvmeh_ctrl_disconnect(ctx->ctrl);
		else
			bp_nvmeh_ctrl_close(ctx->ctrl);
	}
	if (ctx->admin)
		bp_loop_destroy(ctx->admin);
	run_free(&ctx->run);
	free(ctx);
	return ret;
}
