/* SPDX-License-Identifier: MIT */
/*
 * busypoll perf: what a run (run.c) and its jobs (job.c) share. Not for
 * other files: the command's contract is tools/perf/perf.h.
 *
 * Threading: a job lives on its own loop thread and touches only its own state;
 * the run's thread reads a job's atomics while it runs and everything else only
 * after joining its thread. Jobs are told things with bp_loop_post.
 */
#ifndef BP_TOOLS_PERF_INTERNAL_H
#define BP_TOOLS_PERF_INTERNAL_H

#include <stdatomic.h>

#include <busypoll/nvme/host.h>

#include "tools/harness/run_driver.h"
#include "tools/perf/perf.h"

/*
 * What a job's I/O is for. The run's phases (ready, ramp = warm-up, measure,
 * drain, done) are the shared driver's (tools/harness/run_driver.h, j->w.phase); these say
 * what the job submits around them.
 */
enum perf_phase {
	PJ_SETUP,      /* connecting the queue */
	PJ_PREFILL,    /* --verify with reads: stamping the slice once, before the run is ready */
	PJ_IO,         /* the workload: ramp and measure, then its drain */
	PJ_READBACK,   /* --verify with writes, in the drain: reading every written block back */
	PJ_FAILED,
};

enum { IO_FREE = 0, IO_INFLIGHT, IO_DONE };

/* One I/O slot: preallocated at iodepth with its buffer; nothing is allocated per I/O. */
struct perf_io {
	struct perf_job *j;
	uint8_t *buf;
	uint64_t unit;           /* bs-sized unit of the region */
	uint64_t submit_ns;
	uint64_t due_ns;         /* the open loop: its intended issue time */
	bool queued;             /* the open loop: it waited for a free slot */
	uint32_t newgen;         /* --verify write: the generation it stamps */
	uint16_t status;
	uint8_t ddir;            /* enum perf_ddir */
	uint8_t state;
};

#define PERF_GEN_BUSY 0x80000000u  /* --verify: an I/O to this unit is in flight */
#define PERF_GEN_MASK 0x7fffffffu

struct perf_ctx;

struct perf_job {
	struct run_worker w;     /* the run's phases, the interval's snapshots, the error */
	struct perf_ctx *ctx;
	int idx, cpu;
	struct bp_loop_thread *lt;
	struct bp_loop *loop;
	struct bp_nvmeh_queue *q;
	char local[64];          /* our end of the queue, as the target names its peer */
	struct perf_io *ios;
	uint32_t nios;
	uint32_t *freelist, nfree;
	uint32_t *ready, rhead, rcount; /* completed, not reaped yet (a ring of nios) */
	uint32_t busy;           /* slots in flight or completed-unreaped */
	enum perf_phase phase;
	bool closing, wrote, readback_done;
	uint64_t unit_lo, unit_hi, cursor;
	uint64_t rng;
	uint32_t *gen;           /* --verify: per unit of [unit_lo, unit_hi) */
	struct perf_dir dir[PERF_DDIRS]; /* measured, by enum perf_ddir */
	atomic_uint_fast64_t prog_ios, prog_bytes; /* every phase after the go, for progress lines */
	uint64_t verified;
	uint32_t napi_id;        /* of its queue's socket (0: loopback or none), read at teardown */
	struct bp_timer t_poll;
	/* --rate_iops: the open loop's schedule, one arrival clock per direction the pattern issues */
	bool open;
	bool clocked[PERF_DDIRS];
	struct arrivals clock[PERF_DDIRS];
	bool backlog;            /* I/Os were due while iodepth was in flight: the next ones out waited for a slot */
	uint64_t behind;         /* due by the end of the measured interval, never issued (at teardown) */
	struct bp_timer t_rate;
};

struct perf_ctx {
	const struct perf_opts *o;
	int n;                   /* jobs */
	struct bp_nvmeh_ctrl *ctrl;
	char addr[128];          /* the target, for messages */
	uint32_t nsid, block_size, lbas_per_io;
	uint64_t region_offset;  /* bytes */
	uint64_t units;          /* bs-sized units in the region */
	uint32_t run_id;         /* --verify: stamped in every block */
	bool prefill, readback;
	struct perf_job *jobs[PERF_MAX_JOBS];
	struct run run;          /* the jobs' run (tools/harness/run_driver.h) */
	struct bp_loop *admin;   /* the admin queue's loop, run while the jobs run */
	struct perf_spawn *sp;   /* our spawned target, sampled on the interval's edges */
	struct perf_target_stats t0, t1;
	struct bp_kstats k0, k1;
	uint64_t last_bytes;     /* progress */
	uint64_t t_start, last_line, next_line, last_units; /* the pre-fill's progress lines */
	int admin_err;           /* the admin queue failed (its message in err) */
	char err[600];
};

/* perf_job_new - a job's memory (slots, buffers, generations), on the run's thread. NULL: out of memory. */
struct perf_job *perf_job_new(struct perf_ctx *ctx, int idx);
void perf_job_free(struct perf_job *j);
/* Loop-thread setup: open I/O queue idx+1, then pre-fill or report ready. */
int perf_job_setup(struct bp_loop *loop, void *arg);
/* The run's hooks on a job's thread: the go (fill the queue), and "nothing more to do" (starts a read-back). */
void perf_job_start(struct run_worker *w);
bool perf_job_idle(struct run_worker *w);
/* Join teardown: close the queue on its own thread. */
void perf_job_teardown(struct bp_loop *loop, void *arg);

#endif
