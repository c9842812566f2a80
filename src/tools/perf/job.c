/* SPDX-License-Identifier: MIT */
/*
 * busypoll perf: one job, on its own loop thread with its own I/O queue
 * (contract in tools/perf/internal.h).
 *
 * fio's loop, on an event engine. fio fills the queue to iodepth, committing
 * every iodepth_batch submissions (and what is left before it waits); then waits
 * until at least min(complete_min, in flight) completions are there, reaps at
 * most complete_max, and fills again. Here completions arrive by callback (the
 * queue's done function: the slot goes on a ready ring) and the end of each
 * receive pass is "getevents returned" (the queue's batch function): there the
 * job reaps like fio and fills again, the submissions corked and sent every
 * `batch` commands. Latency is from the submit call to the reap, as fio's lat
 * (completion time is taken at reap). complete_min 0 keeps the loop polling
 * while I/O is in flight (a zero timer and bp_loop_poll_next), as fio polls.
 *
 * The open loop (--rate_iops): each direction's I/Os are due on an arrival clock
 * (tools/harness/arrivals.h); a timer at the next due time issues every I/O due
 * by now, as slots allow, and an I/O due while iodepth are in flight waits for a
 * slot (queued) and goes out at the next reap. Latency is then from the due time
 * (fio's lat, queueing included), with clat from the issue and slat between.
 *
 * Trims (--rw trim, randtrim): one Dataset Management deallocate per I/O, its
 * bs-sized range in the slot's buffer.
 *
 * Offsets: bs-sized units of the region; random ones uniformly (with repeats,
 * fio's norandommap), sequential ones wrapping. With --verify a job owns a
 * disjoint slice, keeps each unit's generation, and never has two I/Os on one
 * unit in flight, so every read has exactly one right answer.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <busypoll/nvme/host.h>

#include "tools/perf/internal.h"

static void job_service(void *arg);

/* ---- small helpers ---- */

static uint64_t rnd(struct perf_job *j)
{
	uint64_t z = (j->rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* rnd_below - uniform in [0, n) (Lemire's multiply-shift; the bias is below 2^-32 for any n we see). */
static uint64_t rnd_below(struct perf_job *j, uint64_t n)
{
	return (uint64_t)(((unsigned __int128)rnd(j) * n) >> 64);
}

static void job_fail(struct perf_job *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void job_fail(struct perf_job *j, const char *fmt, ...)
{
	char msg[600];
	va_list ap;

	if (j->phase == PJ_FAILED)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	j->phase = PJ_FAILED;
	bp_timer_stop(j->loop, &j->t_poll);
	run_worker_fail(&j->w, -EIO, "%s", msg);
}

/* ---- the open loop (--rate_iops): when the next I/O is due ---- */

/* rate_next - the direction whose next I/O is due first, and that due time. */
static enum perf_ddir rate_next(const struct perf_job *j, uint64_t *due)
{
	enum perf_ddir best = PERF_DDIR_READ;
	uint64_t t = UINT64_MAX;

	for (int d = 0; d < PERF_DDIRS; d++) {
		if (j->clocked[d] && j->clock[d].next_ns < t) {
			t = j->clock[d].next_ns;
			best = (enum perf_ddir)d;
		}
	}
	*due = t;
	return best;
}

/* rate_due - is an I/O due now? */
static bool rate_due(const struct perf_job *j)
{
	uint64_t due;

	rate_next(j, &due);
	return due <= bp_now_ns();
}

/* ---- picking the next I/O ---- */

/* Can the job submit in this phase? The open loop: only when an I/O is due. */
static bool may_submit(const struct perf_job *j)
{
	switch (j->phase) {
	case PJ_IO:
		return run_worker_active(&j->w) && (!j->open || rate_due(j));
	case PJ_PREFILL:
	case PJ_READBACK:
		return j->cursor < j->unit_hi;
	default:
		return false;
	}
}

static bool unit_busy(const struct perf_job *j, uint64_t unit)
{
	return j->gen && (j->gen[unit - j->unit_lo] & PERF_GEN_BUSY);
}

/* pattern_ddir - the next I/O's direction as the pattern has it (a mixed one by rwmixread). */
static enum perf_ddir pattern_ddir(struct perf_job *j)
{
	const struct perf_opts *o = j->ctx->o;

	switch (o->rw) {
	case PERF_RW_READ:
	case PERF_RW_RANDREAD:
		return PERF_DDIR_READ;
	case PERF_RW_WRITE:
	case PERF_RW_RANDWRITE:
		return PERF_DDIR_WRITE;
	case PERF_RW_RANDRW:
	case PERF_RW_RW:
		return rnd_below(j, 100) >= (uint64_t)o->rwmixread ? PERF_DDIR_WRITE : PERF_DDIR_READ;
	case PERF_RW_TRIM:
	case PERF_RW_RANDTRIM:
		break;
	}
	return PERF_DDIR_TRIM;
}

/*
 * pick - the next I/O's direction (unless chosen: the open loop's schedule says)
 * and unit, false when there is none (the end of a pre-fill or read-back pass).
 * --verify never picks a unit with an I/O in flight: the slice holds more units
 * than iodepth (checked by the run), so a free one always exists.
 */
static bool pick(struct perf_job *j, bool chosen, enum perf_ddir *ddir, uint64_t *unit)
{
	const struct perf_opts *o = j->ctx->o;
	uint64_t span = j->unit_hi - j->unit_lo, u = j->unit_lo;

	if (j->phase == PJ_PREFILL) {
		*ddir = PERF_DDIR_WRITE;
		*unit = j->cursor++;
		return true;
	}
	if (j->phase == PJ_READBACK) {
		while (j->cursor < j->unit_hi && !(j->gen[j->cursor - j->unit_lo] & PERF_GEN_MASK))
			j->cursor++;
		if (j->cursor == j->unit_hi)
			return false;
		*ddir = PERF_DDIR_READ;
		*unit = j->cursor++;
		return true;
	}
	if (!chosen)
		*ddir = pattern_ddir(j);
	if (!perf_rw_random(o->rw)) {
		for (uint64_t tries = 0; tries < span; tries++) {
			if (j->cursor >= j->unit_hi)
				j->cursor = j->unit_lo;
			u = j->cursor++;
			if (!unit_busy(j, u))
				break;
		}
	} else {
		u = j->unit_lo + rnd_below(j, span);
		for (int tries = 0; unit_busy(j, u) && tries < 8; tries++)
			u = j->unit_lo + rnd_below(j, span);
		while (unit_busy(j, u))
			u = u + 1 == j->unit_hi ? j->unit_lo : u + 1;
	}
	*unit = u;
	return true;
}

/* ---- submitting ---- */

static void io_done(void *arg, const struct bp_nvme_cqe *cqe, int err);

static bool submit_one(struct perf_job *j)
{
	struct perf_ctx *ctx = j->ctx;
	const struct perf_opts *o = ctx->o;
	uint32_t slot = j->freelist[j->nfree - 1];
	struct perf_io *io = &j->ios[slot];
	uint64_t unit = 0, lba, due = 0;
	enum perf_ddir ddir = PERF_DDIR_READ;
	bool write, scheduled = j->open && j->phase == PJ_IO;
	uint8_t sqe[64];
	int ret;

	if (scheduled)
		ddir = rate_next(j, &due);
	if (!pick(j, scheduled, &ddir, &unit))
		return false;
	if (scheduled)
		arrivals_take(&j->clock[ddir]);
	write = ddir == PERF_DDIR_WRITE;
	j->nfree--;
	lba = (ctx->region_offset + unit * o->bs) / ctx->block_size;
	io->unit = unit;
	io->ddir = (uint8_t)ddir;
	io->status = 0;
	if (j->gen) {
		uint32_t *g = &j->gen[unit - j->unit_lo];

		if (write) {
			io->newgen = (*g & PERF_GEN_MASK) + 1;
			for (uint32_t b = 0; b < ctx->lbas_per_io; b++)
				perf_stamp_fill(io->buf + (size_t)b * ctx->block_size, ctx->block_size, lba + b, io->newgen,
						ctx->run_id);
		}
		*g |= PERF_GEN_BUSY;
	}
	if (write)
		j->wrote = true;
	if (ddir == PERF_DDIR_TRIM) {
		/* fio's trim: one Dataset Management deallocate of the bs-sized range; its data is the range */
		bp_nvmeh_dsm_range(io->buf, lba, ctx->lbas_per_io);
		bp_nvmeh_sqe_dsm(sqe, ctx->nsid, 1);
	} else {
		bp_nvmeh_sqe_rw(sqe, write, ctx->nsid, lba, ctx->lbas_per_io);
	}
	io->state = IO_INFLIGHT;
	io->submit_ns = bp_now_ns();
	io->due_ns = scheduled ? due : io->submit_ns;
	io->queued = scheduled && j->backlog;
	j->busy++;
	ret = bp_nvmeh_submit(j->q, sqe, io->buf, ddir == PERF_DDIR_TRIM ? BP_NVME_DSM_RANGE_LEN : o->bs,
			      ddir != PERF_DDIR_READ, io_done, io);
	if (ret) {
		/* Nothing was queued for it: the queue failed under us (its error says why). */
		io->state = IO_FREE;
		j->busy--;
		j->freelist[j->nfree++] = slot;
		job_fail(j, "job %d: cannot submit: %s", j->idx,
			 bp_nvmeh_queue_error(j->q)[0] ? bp_nvmeh_queue_error(j->q) : strerror(-ret));
		return false;
	}
	return true;
}

static void rate_tick(struct bp_loop *loop, void *arg);

/*
 * rate_after_fill - the open loop after a fill: I/Os still due with every slot in
 * flight make a backlog (the next ones out waited for a slot; a completion's reap
 * fills again); nothing due: the timer at the next due time. The engine's timers
 * take whole microseconds: rounded down, so it is never late, at most 1 us early,
 * and then nothing is due yet and it is armed again with 0.
 */
static void rate_after_fill(struct perf_job *j)
{
	uint64_t due, now;

	if (j->phase != PJ_IO || !run_worker_active(&j->w))
		return;
	rate_next(j, &due);
	now = bp_now_ns();
	j->backlog = due <= now && !j->nfree;
	if (due > now || j->nfree)
		bp_timer_start(j->loop, &j->t_rate, due > now ? (due - now) / 1000 : 0, rate_tick, j);
}

/*
 * job_fill - submit until iodepth is in flight (the open loop: every I/O due by
 * now, at most iodepth), a send every `batch` commands and one for the rest.
 */
static void job_fill(struct perf_job *j)
{
	int batch = j->ctx->o->batch, in_batch = 0;

	if (j->nfree && may_submit(j)) {
		bp_nvmeh_cork(j->q);
		while (j->nfree && may_submit(j) && j->phase != PJ_FAILED) {
			if (!submit_one(j))
				break;
			if (++in_batch == batch) {
				bp_nvmeh_uncork(j->q);
				bp_nvmeh_cork(j->q);
				in_batch = 0;
			}
		}
		bp_nvmeh_uncork(j->q);
	}
	if (j->open)
		rate_after_fill(j);
}

/* ---- completions ---- */

static void io_done(void *arg, const struct bp_nvme_cqe *cqe, int err)
{
	struct perf_io *io = arg;
	struct perf_job *j = io->j;

	if (j->closing)
		return;
	if (err) {
		/* The queue failed (connection lost, timeout, protocol): every command ends here. */
		if (err == -ETIMEDOUT)
			job_fail(j, "target %s, job %d: %s (--io-timeout)", j->ctx->addr, j->idx, bp_nvmeh_queue_error(j->q));
		else if (err == -EPROTO || err == -ECONNABORTED)
			job_fail(j, "target %s, job %d: %s", j->ctx->addr, j->idx, bp_nvmeh_queue_error(j->q));
		else
			job_fail(j, "target %s, job %d: connection lost: %s", j->ctx->addr, j->idx,
				 bp_nvmeh_queue_error(j->q));
		return;
	}
	io->status = cqe->status;
	io->state = IO_DONE;
	j->ready[(j->rhead + j->rcount++) % j->nios] = (uint32_t)(io - j->ios);
}

static void io_status_fail(struct perf_job *j, const struct perf_io *io)
{
	struct perf_ctx *ctx = j->ctx;
	uint64_t lba = (ctx->region_offset + io->unit * ctx->o->bs) / ctx->block_size;
	char s[96];

	job_fail(j, "target %s, job %d: %s of %u block%s at LBA %" PRIu64 " (nsid %u) failed: %s", ctx->addr, j->idx,
		 io->ddir == PERF_DDIR_TRIM ? "trim (deallocate)" : perf_ddir_name(io->ddir), ctx->lbas_per_io, ctx->lbas_per_io == 1 ? "" : "s", lba, ctx->nsid,
		 bp_nvme_status_str(io->status, s, sizeof(s)));
}

/* reap_one - one completion: its status, its stamps, its latency; the slot is free again. */
static void reap_one(struct perf_job *j, struct perf_io *io, uint64_t now)
{
	struct perf_ctx *ctx = j->ctx;
	const struct perf_opts *o = ctx->o;

	j->busy--;
	io->state = IO_FREE;
	j->freelist[j->nfree++] = (uint32_t)(io - j->ios);
	if (io->status) {
		io_status_fail(j, io);
		return;
	}
	if (j->gen) {
		uint32_t *g = &j->gen[io->unit - j->unit_lo];

		if (io->ddir == PERF_DDIR_WRITE) {
			*g = io->newgen;
		} else {
			uint64_t lba = (ctx->region_offset + io->unit * o->bs) / ctx->block_size;
			uint32_t want = *g & PERF_GEN_MASK;
			char why[300];

			*g &= PERF_GEN_MASK;
			for (uint32_t b = 0; b < ctx->lbas_per_io; b++) {
				if (perf_stamp_check(io->buf + (size_t)b * ctx->block_size, ctx->block_size, lba + b, want,
						     ctx->run_id, why, sizeof(why)) != PERF_STAMP_OK) {
					job_fail(j, "target %s, job %d: verify failed on nsid %u: %s", ctx->addr, j->idx,
						 ctx->nsid, why);
					return;
				}
			}
			j->verified += ctx->lbas_per_io;
		}
	}
	if (j->w.phase == RUN_MEASURE && j->phase == PJ_IO) {
		struct perf_dir *d = &j->dir[io->ddir];
		uint64_t lag = io->submit_ns > io->due_ns ? io->submit_ns - io->due_ns : 0;

		d->ios++;
		d->bytes += o->bs;
		/* fio's lat: the open loop's from the intended issue time, so the queueing counts */
		bp_hist_record(&d->hist, now - (j->open ? io->due_ns : io->submit_ns));
		if (j->open) {
			bp_hist_record(&d->clat, now - io->submit_ns);
			bp_hist_record(&d->slat, lag);
			d->late += lag > ARRIVALS_LATE_NS;
			d->queued += io->queued;
		}
	}
	run_worker_add(&j->w, 1);
	atomic_store_explicit(&j->prog_ios, atomic_load_explicit(&j->prog_ios, memory_order_relaxed) + 1,
			      memory_order_relaxed);
	atomic_store_explicit(&j->prog_bytes, atomic_load_explicit(&j->prog_bytes, memory_order_relaxed) + o->bs,
			      memory_order_relaxed);
}

/* ---- phases ---- */

static void poll_tick(struct bp_loop *loop, void *arg);

static bool io_phase(const struct perf_job *j)
{
	return j->phase == PJ_IO || j->phase == PJ_PREFILL || j->phase == PJ_READBACK;
}

/* complete_min 0: while I/O is in flight, the loop's wait is a poll (fio: getevents asks for none). */
static void poll_arm(struct perf_job *j)
{
	if (j->ctx->o->reap_poll && j->busy && io_phase(j) && !bp_timer_armed(&j->t_poll))
		bp_timer_start(j->loop, &j->t_poll, 0, poll_tick, j);
}

static void poll_tick(struct bp_loop *loop, void *arg)
{
	struct perf_job *j = arg;

	if (j->closing || !j->busy || !io_phase(j))
		return;
	bp_loop_poll_next(loop);
	bp_timer_start(loop, &j->t_poll, 0, poll_tick, j);
}

/* rate_tick - the open loop's timer: every I/O due by now goes out (as slots allow). */
static void rate_tick(struct bp_loop *loop, void *arg)
{
	struct perf_job *j = arg;

	(void)loop;
	if (j->closing || j->phase == PJ_FAILED)
		return;
	job_fill(j);
	poll_arm(j);
}

/* job_advance - move on when a phase's I/O is all back: the pre-fill makes the job ready, the drain done. */
static void job_advance(struct perf_job *j)
{
	if (j->busy)
		return;
	if (j->phase == PJ_PREFILL && j->cursor >= j->unit_hi) {
		j->phase = PJ_IO;
		run_worker_ready(&j->w);
		return;
	}
	run_worker_drained(&j->w);
}

/*
 * perf_job_idle - the run's drain asks: nothing in flight and nothing more to do?
 * A --verify write job first reads every written block back (unless stopped).
 */
bool perf_job_idle(struct run_worker *w)
{
	struct perf_job *j = (struct perf_job *)w;

	if (j->busy)
		return false;
	if (j->phase == PJ_IO && j->ctx->readback && j->wrote && !w->interrupted && !j->closing) {
		j->phase = PJ_READBACK;
		j->cursor = j->unit_lo;
		job_fill(j);
		poll_arm(j);
	}
	if (j->phase == PJ_READBACK && (j->busy || (j->cursor < j->unit_hi && !w->interrupted)))
		return false;
	bp_timer_stop(j->loop, &j->t_poll);
	bp_timer_stop(j->loop, &j->t_rate);
	return true;
}

static void job_service(void *arg)
{
	struct perf_job *j = arg;
	const struct perf_opts *o = j->ctx->o;

	if (j->closing || j->phase == PJ_FAILED)
		return;
	for (;;) {
		bool steady = j->phase == PJ_IO && run_worker_active(&j->w);
		uint32_t need = steady ? ((uint32_t)o->reap_min < j->busy ? (uint32_t)o->reap_min : j->busy) : 1;
		uint32_t take = steady && (uint32_t)o->reap_max < j->rcount ? (uint32_t)o->reap_max : j->rcount;
		uint64_t now;

		if (!j->rcount || j->rcount < need)
			break;
		now = bp_now_ns();
		for (uint32_t i = 0; i < take && j->phase != PJ_FAILED; i++) {
			struct perf_io *io = &j->ios[j->ready[j->rhead]];

			j->rhead = (j->rhead + 1) % j->nios;
			j->rcount--;
			reap_one(j, io, now);
		}
		if (j->phase == PJ_FAILED)
			return;
		job_fill(j);
	}
	job_advance(j);
	poll_arm(j);
}

/*
 * perf_job_start - the go: sequential patterns start at the slice's start (after
 * any pre-fill), fill the queue. The open loop's clocks start now, fixed gaps
 * staggered by job (job i one i-th of the jobs' gap later), so the jobs' I/Os interleave.
 */
void perf_job_start(struct run_worker *w)
{
	struct perf_job *j = (struct perf_job *)w;
	uint64_t now = bp_now_ns();

	j->phase = PJ_IO;
	j->cursor = j->unit_lo;
	for (int d = 0; d < PERF_DDIRS; d++)
		if (j->clocked[d])
			arrivals_start(&j->clock[d], now, j->clock[d].poisson ? 0 : j->clock[d].gap_ns * j->idx / j->ctx->n);
	job_fill(j);
	poll_arm(j);
}

/* ---- life ---- */

struct perf_job *perf_job_new(struct perf_ctx *ctx, int idx)
{
	const struct perf_opts *o = ctx->o;
	struct perf_job *j = calloc(1, sizeof(*j));
	uint32_t n = (uint32_t)o->iodepth;

	if (!j)
		return NULL;
	j->ctx = ctx;
	j->idx = idx;
	j->cpu = o->ncpus ? o->cpus[idx % o->ncpus] : -1;
	j->nios = n;
	j->ios = calloc(n, sizeof(*j->ios));
	j->freelist = calloc(n, sizeof(*j->freelist));
	j->ready = calloc(n, sizeof(*j->ready));
	if (!j->ios || !j->freelist || !j->ready)
		goto oom;
	for (uint32_t i = 0; i < n; i++) {
		j->ios[i].j = j;
		j->ios[i].buf = aligned_alloc(4096, (o->bs + 4095) & ~4095u);
		if (!j->ios[i].buf)
			goto oom;
		/* Writes without --verify send this: not zeros, which a target might treat specially. */
		for (uint32_t b = 0; b < o->bs; b += 8) {
			uint64_t v = rnd(j);

			memcpy(j->ios[i].buf + b, &v, 8);
		}
		j->freelist[i] = n - 1 - i;
	}
	j->nfree = n;
	/* --verify: a disjoint slice each; otherwise every job spans the region, as fio's clones do. */
	if (o->verify) {
		j->unit_lo = ctx->units * (uint64_t)idx / (uint64_t)ctx->n;
		j->unit_hi = ctx->units * (uint64_t)(idx + 1) / (uint64_t)ctx->n;
		j->gen = calloc(j->unit_hi - j->unit_lo, sizeof(*j->gen));
		if (!j->gen)
			goto oom;
	} else {
		j->unit_lo = 0;
		j->unit_hi = ctx->units;
	}
	j->cursor = j->unit_lo;
	j->rng = bp_now_ns() ^ ((uint64_t)idx << 48) ^ (uint64_t)(uintptr_t)j;
	for (int d = 0; d < PERF_DDIRS; d++) {
		bp_hist_init(&j->dir[d].hist);
		bp_hist_init(&j->dir[d].clat);
		bp_hist_init(&j->dir[d].slat);
		/* the open loop: a clock per direction the pattern issues (every one has a rate: perf_check) */
		if (perf_open_loop(o) && perf_rw_uses(o, (enum perf_ddir)d) &&
		    arrivals_init(&j->clock[d], o->rate_iops[d], o->rate_poisson, rnd(j)) == 0)
			j->clocked[d] = j->open = true;
	}
	return j;
oom:
	perf_job_free(j);
	return NULL;
}

void perf_job_free(struct perf_job *j)
{
	if (!j)
		return;
	for (uint32_t i = 0; j->ios && i < j->nios; i++)
		free(j->ios[i].buf);
	free(j->ios);
	free(j->freelist);
	free(j->ready);
	free(j->gen);
	free(j);
}

int perf_job_setup(struct bp_loop *loop, void *arg)
{
	struct perf_job *j = arg;
	struct perf_ctx *ctx = j->ctx;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	int ret;

	j->loop = loop;
	j->w.loop = loop;
	j->phase = PJ_SETUP;
	ev_name_thread("perf-job", j->idx);
	/* --cpus_allowed (fio's shared policy): the job's thread may run on any CPU of the set */
	if (ctx->o->nallowed) {
		cpu_set_t set;

		CPU_ZERO(&set);
		for (int i = 0; i < ctx->o->nallowed; i++)
			CPU_SET(ctx->o->allowed[i], &set);
		ret = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
		if (ret)
			return bp_set_last_error(-ret, "job %d: --cpus_allowed: %s", j->idx, strerror(ret));
	}
	/* the open loop's timer is this thread's wait timeout: let the kernel end it on time */
	if (j->open && prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL) < 0)
		return bp_set_last_error(-errno, "job %d: prctl(PR_SET_TIMERSLACK): %s", j->idx, strerror(errno));
	ret = bp_nvmeh_ctrl_io_queue(ctx->ctrl, loop, (uint16_t)(j->idx + 1), &j->q);
	if (ret) {
		char s[96];

		if (ret > 0)
			return bp_set_last_error(-ECONNREFUSED, "job %d: I/O queue %d refused: %s", j->idx, j->idx + 1,
						 bp_nvme_status_str((uint16_t)ret, s, sizeof(s)));
		return bp_set_last_error(ret, "job %d: I/O queue %d: %s", j->idx, j->idx + 1, bp_last_error());
	}
	bp_nvmeh_queue_set_batch_fn(j->q, job_service, j);
	if (getsockname(bp_nvmeh_queue_fd(j->q), (struct sockaddr *)&ss, &sl) == 0)
		bp_format_addr((struct sockaddr *)&ss, j->local, sizeof(j->local));
	if (ctx->prefill) {
		j->phase = PJ_PREFILL;
		job_fill(j);
		poll_arm(j);
	} else {
		j->phase = PJ_IO;
		run_worker_ready(&j->w);
	}
	return 0;
}

void perf_job_teardown(struct bp_loop *loop, void *arg)
{
	struct perf_job *j = arg;

	(void)loop;
	j->closing = true;
	if (j->q && bp_sock_napi_id(bp_nvmeh_queue_fd(j->q), &j->napi_id))
		j->napi_id = 0;
	bp_timer_stop(loop, &j->w.t_measure);
	bp_timer_stop(loop, &j->w.t_end);
	bp_timer_stop(loop, &j->t_poll);
	bp_timer_stop(loop, &j->t_rate);
	/* the open loop's I/Os due by the end of the interval that never went out (the schedule stopped there) */
	for (int d = 0; d < PERF_DDIRS; d++)
		if (j->clocked[d] && j->w.measured)
			j->behind += arrivals_behind(&j->clock[d], j->w.end.loop.ns);
	if (j->q)
		bp_nvmeh_queue_close(j->q);
	j->q = NULL;
}
