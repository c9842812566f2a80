/* SPDX-License-Identifier: MIT */
/*
 * busypoll perf: an fio-class NVMe/TCP initiator on the busypoll engine, for any
 * NVMe/TCP target (ours or another). fio's vocabulary and meanings, fio's
 * reap/submit loop (iodepth, iodepth_batch, iodepth_batch_complete_min/max), one
 * I/O queue connection and one loop thread per job, every engine wait mode on the
 * host side. Files by concern:
 *
 *   opts.c    options, fio's meanings resolved into effective values
 *   jobfile.c fio job files ([global], one job section) read into key=value rows
 *   verify.c  the per-block stamp (LBA, generation, run, CRC32C): encode, check
 *   job.c     one job: its queue, its I/O slots, the reap/submit loop, phases
 *   run.c     one run: controller, jobs, progress, the result
 *   spawn_target.c  our own target as a child process, and its counters
 *   sweep.c   --sweep numjobs=A..B over --target-config blocks
 *   output.c  table, json, csv
 *   output_fio.c  --output-format=json: fio's own json shape
 *   cmd.c     the command
 */
#ifndef BP_TOOLS_PERF_H
#define BP_TOOLS_PERF_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

#include <busypoll/busypoll.h>

#include "tools/remote/agent_client.h"
#include "tools/common/opt.h"
#include "tools/harness/arrivals.h"
#include "tools/harness/evidence.h"

#define PERF_MAX_JOBS 64
#define PERF_MAX_CONFIGS 16
#define PERF_MAX_IODEPTH 4096
#define PERF_MAX_BS (16u << 20)
#define PERF_DEFAULT_PORT 4420
#define PERF_MAX_RATES 32          /* --sweep rate_iops=A,B,..: points */
#define PERF_MAX_RATE_IOPS 1e8     /* --rate_iops per job and direction */

/*
 * PERF_RW_RW: fio's rw (readwrite), sequential offsets, reads and writes mixed by
 * rwmixread. PERF_RW_TRIM, PERF_RW_RANDTRIM: fio's trim and randtrim, each I/O one
 * Dataset Management deallocate of a bs-sized range.
 */
enum perf_rw { PERF_RW_READ, PERF_RW_WRITE, PERF_RW_RANDREAD, PERF_RW_RANDWRITE, PERF_RW_RANDRW, PERF_RW_RW,
	       PERF_RW_TRIM, PERF_RW_RANDTRIM };
/* An I/O's direction, fio's ddir: the read, write and trim blocks of the output. */
enum perf_ddir { PERF_DDIR_READ, PERF_DDIR_WRITE, PERF_DDIR_TRIM, PERF_DDIRS };

struct perf_opts {
	TOOL_COMMON;               /* quiet (no progress lines), format */
	char target[300];          /* ADDR:PORT as given */
	char nqn[224];
	char hostnqn[224];         /* "" = the library's random uuid NQN (with --remote: that one, chosen at parse) */
	uint32_t nsid;
	enum perf_rw rw;
	int rw_given;              /* --rw's choice as typed (index in its list: rw, readwrite, trim...) */
	int rwmixread;             /* percent of reads in randrw and rw (fio default 50) */
	int rwmixwrite;            /* --rwmixwrite as given (rwmixread = 100 - it) */
	uint32_t bs;
	int iodepth;
	/* As given (fio's spelling and defaults)... */
	int iodepth_batch;         /* fio iodepth_batch_submit: default 1, 0 = iodepth */
	int complete_min;          /* fio iodepth_batch_complete_min: default 1, 0 = poll */
	int complete_max;          /* fio iodepth_batch_complete_max: default = complete_min */
	/* ...and what they mean (perf_opts_resolve). */
	int batch;                 /* submissions per send, 1..iodepth */
	int reap_min;              /* completions to wait for before submitting again, 1..iodepth */
	bool reap_poll;            /* complete_min 0: that wait polls, never sleeps */
	int reap_max;              /* completions reaped at most before submitting again */
	int numjobs;
	int cpus[PERF_MAX_JOBS];   /* job i on cpus[i % ncpus]; ncpus 0 = not pinned */
	int ncpus;
	/* --cpus_allowed LIST (fio's): every job may run on any CPU of it (fio's shared policy); split: --cpus */
	int allowed[PERF_MAX_JOBS];
	int nallowed;              /* 0: none given (or split: it became cpus) */
	bool allowed_split;        /* --cpus_allowed_policy split */
	double runtime_s;
	double ramp_s;
	uint64_t offset;           /* bytes: where the region starts */
	uint64_t size;             /* bytes of region; 0 = to the end of the namespace */
	bool verify;
	/*
	 * --rate_iops R[,W[,T]]: the open loop (fio's rate_iops, per job): I/Os per
	 * second in each direction (enum perf_ddir), issued on a schedule whatever is in
	 * flight; 0 = not limited. All 0: the closed loop.
	 */
	double rate_iops[PERF_DDIRS];
	bool rate_poisson;         /* --rate_process poisson: exponential gaps (fio's; default linear: fixed gaps) */
	bool fio_json;             /* --output-format=json: fio's json shape (perf_print_fio) */
	struct bp_mode mode;
	char mode_text[OPT_MODE_TEXT]; /* canonical */
	bool hdgst, ddgst;
	uint32_t io_timeout_ms;    /* a command unanswered this long fails the run */
	double interval_s;         /* progress lines on stderr (0 = none) */
	/* --sweep numjobs=A..B, --sweep rate_iops=A,B,.., --spawn-target ARGS, --target-config ARGS... */
	bool sweep;                /* numjobs */
	int sweep_lo, sweep_hi;
	int nrates;                /* rate_iops points (0: no rate sweep) */
	double sweep_rate[PERF_MAX_RATES]; /* each an I/O rate per job in every direction, or a percentage */
	bool sweep_pct[PERF_MAX_RATES];    /* ...of --rate_iops (each of its directions scaled) */
	bool spawn;
	char jobname[64];          /* the job file's job section, "" without one */
	char notes[768];           /* "--ioengine (implied: ...); ..." : fio options that do not apply, said once */
	char spawn_args[1024];
	char configs[PERF_MAX_CONFIGS][512];
	int nconfigs;
	struct agent_remote_opts remote; /* --remote: --spawn-target starts the target there, through its agent */
};

/* ---- fio job files: `busypoll perf JOBFILE [options]` ---- */

#define PERF_JOBFILE_MAX_OPTS 64

struct perf_jobfile_opt {
	char key[64];
	char val[512];
	bool has_val;              /* key=value; false: a bare key (time_based) */
	bool global;               /* from [global] */
	int line;
};

struct perf_jobfile {
	char jobname[64];          /* the one job section's name */
	int job_line;
	int nopts;                 /* [global]'s then the job's, a later key replacing an earlier one */
	struct perf_jobfile_opt opt[PERF_JOBFILE_MAX_OPTS];
};

/*
 * perf_jobfile_parse - fio's job file format in text (modified in place) into
 * *jf: blank lines and lines starting with ; or # skipped, [global] first, then
 * exactly one job section, key=value or bare key lines, blanks around '=' trimmed.
 * Only the format is checked here, not the keys (perf_parse_opts reads them as
 * options). Returns 0, or -EINVAL with one line "PATH:LINE: what" in err (a
 * second job section, [global] after the job, no job section, include, a line
 * outside any section).
 */
int perf_jobfile_parse(const char *path, char *text, struct perf_jobfile *jf, char *err, size_t errlen);
/* perf_jobfile_read - read the file at path (at most 256 KiB of text) and parse it. */
int perf_jobfile_read(const char *path, struct perf_jobfile *jf, char *err, size_t errlen);

/* perf_opts_defaults - fio's defaults: read, bs 4k, iodepth 1, batch 1, complete 1..1, 1 job; 10 s, no ramp. */
void perf_opts_defaults(struct perf_opts *o);
/*
 * perf_parse_opts - `busypoll perf` options into *o (fio's underscore spellings
 * are accepted too, so a fio command line's options paste in). A first argument
 * that is not an option is an fio job file (perf_jobfile_read): its keys are read
 * as the options of the same name, each checked alone first (an error names
 * FILE:LINE), and an option given on the command line overrides the file's (an
 * alias counts as its option). o->jobname gets the job section's name. Returns
 * 0; 1 when --help was printed; -EINVAL with one line in err naming the option
 * as typed.
 */
int perf_parse_opts(int argc, char **argv, struct perf_opts *o, char *err, size_t errlen);
/*
 * perf_opts_resolve - fio's meanings of the batch options into batch/reap_*:
 * iodepth_batch 0 or above iodepth = iodepth; complete_min 0 = reap at least
 * one but poll while waiting (fio's backend asks the engine for 0 events and
 * loops); complete_min above iodepth = iodepth; complete_max below complete_min
 * = complete_min. Called by perf_parse_opts; pure.
 */
void perf_opts_resolve(struct perf_opts *o);
/* perf_rw_name - "randread" etc. */
const char *perf_rw_name(enum perf_rw rw);
/* perf_rw_mixed - does the pattern mix reads and writes by rwmixread (randrw, rw)? */
bool perf_rw_mixed(enum perf_rw rw);
/* perf_rw_reads / perf_rw_writes / perf_rw_trims - does the pattern read / write / trim at all (a mixed one by its mix)? */
bool perf_rw_reads(const struct perf_opts *o);
bool perf_rw_writes(const struct perf_opts *o);
bool perf_rw_trims(const struct perf_opts *o);
/* perf_rw_random - are the pattern's offsets random (randread, randwrite, randrw, randtrim)? */
bool perf_rw_random(enum perf_rw rw);
/* perf_ddir_name - "read", "write", "trim". */
const char *perf_ddir_name(enum perf_ddir d);
/* perf_rw_uses - does the pattern issue I/O in direction d (a mixed one by its mix)? */
bool perf_rw_uses(const struct perf_opts *o, enum perf_ddir d);
/* perf_open_loop - --rate_iops: are I/Os issued on a schedule (an open loop) rather than as slots free up? */
bool perf_open_loop(const struct perf_opts *o);
/* perf_offered_iops - the schedule's I/Os per second per job, over the directions the pattern issues. */
double perf_offered_iops(const struct perf_opts *o);
/* perf_rates_text - --rate_iops as fio writes it: "R" when every direction has it, else "R,W,T". */
void perf_rates_text(char *buf, size_t len, const struct perf_opts *o);
/*
 * perf_sweep_rate - o with the rate of --sweep rate_iops point i: a value in every
 * direction the pattern issues, or a percentage of o's --rate_iops (each direction).
 */
void perf_sweep_rate(struct perf_opts *o, int i);

/* ---- verify: each logical block stamped with its LBA, a generation, the run, a CRC ---- */

enum {
	PERF_STAMP_MAGIC = 0x31565042,  /* "BPV1" little-endian */
	PERF_STAMP_HDR = 24,            /* magic 4, crc32c 4, lba 8, generation 4, run 4 */
};
enum perf_stamp_err { PERF_STAMP_OK = 0, PERF_STAMP_MAGIC_BAD, PERF_STAMP_CRC_BAD, PERF_STAMP_LBA_BAD,
		      PERF_STAMP_RUN_BAD, PERF_STAMP_GEN_BAD };
/*
 * perf_stamp_fill - one logical block of block_size bytes (>= 64): the header,
 * a payload derived from (lba, gen, run), and CRC32C (bp_crc32c) over every byte
 * after the CRC field.
 */
void perf_stamp_fill(uint8_t *blk, uint32_t block_size, uint64_t lba, uint32_t gen, uint32_t run);
/*
 * perf_stamp_check - is blk the block written as (lba, gen, run)? Checks in the
 * order that names the fault best: magic (never stamped), CRC (corrupted), LBA
 * (misplaced), run (written by another run or host), generation (stale: a write
 * lost). Returns PERF_STAMP_OK or the first fault, with one line in why
 * ("LBA 4096: generation 2, expected 3 (stale data: a completed write is missing)").
 */
enum perf_stamp_err perf_stamp_check(const uint8_t *blk, uint32_t block_size, uint64_t lba, uint32_t gen,
				     uint32_t run, char *why, size_t whylen);

/* ---- the target's counters (when we spawned it) ---- */

struct perf_target_stats {
	bool valid;
	pid_t pid;
	uint64_t commands, reads, writes, r2ts, errors, poll_passes, idle_exits;
	uint64_t polls;            /* poll mode: passes of the poll work */
	uint64_t bytes_in, bytes_out;
	uint64_t cpu_us;           /* the whole target process, user + system */
	uint64_t busy_poll_rx;     /* its network namespace's BusyPollRxPackets */
	uint32_t queues;           /* our I/O queues found in its table */
	uint32_t poll_period_us;   /* its --poll-period-us (0: poll mode off) */
	bool poll_known;           /* it said its poll period (an older target does not) */
	bool busy_poll_mode;       /* its engine wait mode busy-polls NAPI (--mode epoll:napi...) */
	char mode[EV_MODE_LEN];    /* its engine wait mode */
};

struct perf_spawn;
/*
 * perf_spawn_start - run `busypoll target` (our own binary, /proc/self/exe) with
 * o->spawn_args, then config's, then --listen/--nqn from o unless given, as a
 * child process with a control session (a socketpair, --control-fd); wait until
 * its HELLO_OK says it listens (10 s). Its log lines go to a file shown if it
 * fails. Returns 0, or -errno with one line in err (it exited: its own message).
 */
int perf_spawn_start(const struct perf_opts *o, const char *config, struct perf_spawn **sp, char *err,
		     size_t errlen);
/*
 * perf_spawn_sample - the target's evidence now (a SAMPLE over its control
 * session): its whole process's CPU, and its counters summed over the queues
 * whose peer is one of peers (our I/O queues' local addresses). Returns 0 or
 * -errno (no answer in 3 s, gone, garbage).
 */
int perf_spawn_sample(struct perf_spawn *sp, char peers[][64], size_t npeers, struct perf_target_stats *st);
/* perf_spawn_stop - SIGTERM, 5 s, SIGKILL; reap; free. */
void perf_spawn_stop(struct perf_spawn *sp);
struct ctl_msg;
struct ctl_session;
/*
 * perf_target_argv - the target's command line for one configuration: "target",
 * o->spawn_args, config's, then --listen/--nqn from o unless given (and, through an
 * agent (--remote), --allow-host with our host NQN, which the agent requires), split into
 * argv (at most max, NULL-terminated; the words point into buf). Returns the
 * count, or -EINVAL with one line in err (unbalanced quotes, too many words).
 */
int perf_target_argv(const struct perf_opts *o, const char *config, char *buf, size_t buflen, char **argv,
		     int max, char *err, size_t errlen);
/*
 * perf_target_sample - SAMPLE over a target's control session (its own, or relayed
 * by the agent): as perf_spawn_sample.
 */
int perf_target_sample(struct ctl_session *ctl, char peers[][64], size_t npeers, struct perf_target_stats *st);
/*
 * perf_target_add_queues - add the queue records (CTL_T_Q) of a target's EVIDENCE
 * whose peer is in peers to *st. Returns how many were added.
 */
int perf_target_add_queues(const struct ctl_msg *m, char peers[][64], size_t npeers, struct perf_target_stats *st);

/* ---- a run ---- */

/* One direction's figures over the measured interval. */
struct perf_dir {
	uint64_t ios;
	uint64_t bytes;
	/*
	 * Latency, ns, to the reap (fio takes completion time there too): fio's lat, from
	 * the I/O's intended issue time in the open loop (--rate_iops: the queueing
	 * behind a slow target included), from its submission in the closed loop.
	 */
	struct bp_hist hist;
	/* the open loop only */
	struct bp_hist clat;      /* from its submission: fio's clat */
	struct bp_hist slat;      /* from its intended issue time to its submission: how late it went out */
	uint64_t late;            /* went out more than ARRIVALS_LATE_NS after its intended time */
	uint64_t queued;          /* due while iodepth I/Os were in flight: went out when one completed */
};

struct perf_job_result {
	uint64_t ios;
	double iops;
	uint64_t cpu_us;          /* its loop thread and that thread's io_uring helpers */
	int cpu;                  /* pinned CPU, -1 none */
	int ran_on;               /* the CPU its loop thread ran on at the interval's end, -1 not known */
};

struct perf_result {
	struct perf_opts opts;    /* the settings that produced it */
	int numjobs;
	char target_config[512];  /* this block's --target-config, "" none */
	char target_addr[128];
	char kernel[128];
	/* what the controller said */
	char model[41];
	uint32_t block_size;
	uint64_t ns_blocks;
	uint64_t region_offset, region_size;
	uint32_t max_transfer, incapsule, queue_depth;
	/* measured */
	double seconds;
	struct perf_dir rd, wr, tr; /* fio's read, write and trim */
	struct bp_hist all;
	uint64_t behind;          /* the open loop: I/Os due by the end of the interval and never issued */
	struct evidence initiator; /* every job over the measured interval (tools/harness/evidence.h) */
	struct perf_job_result jobs[PERF_MAX_JOBS];
	struct perf_target_stats target;
	/* verify */
	uint64_t verified_blocks;  /* stamps checked (run and read-back) */
	uint64_t prefilled_bytes;
	bool interrupted;
	bool measured;            /* the jobs got their go: the figures are a run's (maybe a cut-short one) */
	char failed[256];         /* why the run failed ("" it did not): what it measured is kept */
};

/*
 * The proof per I/O (as compare's '!'): a side that runs a polling mode, yet shows
 * under EV_PROOF_MIN of that mode's evidence per I/O, polled (almost) never.
 */
enum {
	PERF_UNPROVEN_HOST = 1u << 0,        /* the host's --mode busy-polls: BusyPollRxPackets per I/O */
	PERF_UNPROVEN_TARGET_POLL = 1u << 1, /* our target's poll mode (--poll-period-us): polls per I/O */
	PERF_UNPROVEN_TARGET_BUSY = 1u << 2, /* our target's --mode busy-polls: its BusyPollRxPackets per I/O */
};
/* perf_unproven - the PERF_UNPROVEN_* of a result (0 for a run with no I/O: nothing to judge). Pure. */
unsigned perf_unproven(const struct perf_result *r);

/* Derived figures. */
/* perf_result_dir - the result's figures of direction d (rd, wr or tr). */
const struct perf_dir *perf_result_dir(const struct perf_result *r, enum perf_ddir d);
double perf_iops(const struct perf_result *r, const struct perf_dir *d);
double perf_mbps(const struct perf_result *r, const struct perf_dir *d);   /* 10^6 bytes/s, as fio's MB/s */
double perf_mibps(const struct perf_result *r, const struct perf_dir *d);  /* 2^20 bytes/s */
uint64_t perf_total_ios(const struct perf_result *r);
double perf_cpu_us_per_io(const struct perf_result *r);

/*
 * perf_run - one run of o with numjobs jobs against o->target; sp (may be NULL)
 * is our spawned target, sampled around the measured interval. *stop may be set
 * (SIGINT) to end early: the result so far is filled in and interrupted set.
 * Returns 0, or -errno with one line in err; -EINVAL means the options do not
 * fit this target (exit 2), anything else a failed run (exit 1).
 */
int perf_run(const struct perf_opts *o, int numjobs, struct perf_spawn *sp, volatile sig_atomic_t *stop,
	     struct perf_result *res, char *err, size_t errlen);

/* ---- a sweep ---- */

/*
 * perf_sweep - every target configuration (one, "", without --target-config) and
 * every numjobs of o (A..B with --sweep, else o->numjobs), spawning the target per
 * configuration when asked. Prints as it goes (the table block after each
 * configuration; json/csv at the end). Returns the exit status.
 */
int perf_sweep(const struct perf_opts *o, volatile sig_atomic_t *stop, FILE *out);

/* ---- output ---- */
void perf_print(FILE *out, const struct perf_result *r, enum tool_format format);
/* The sweep's reference table for one configuration: threads, IOPS (K), average latency, P99.99. */
void perf_print_sweep_block(FILE *out, const struct perf_opts *o, const char *config, const struct perf_result *rows,
			    int n);
/* json (one document holding every result) or csv (one header, one row per result). */
void perf_print_sweep(FILE *out, const struct perf_result *rows, int n, enum tool_format format);
void perf_print_csv_header(FILE *out);
struct emit;
/* perf_emit_result - one result as busypoll's json object (or csv columns) under key (NULL: none). */
void perf_emit_result(struct emit *e, const char *key, const struct perf_result *r);
/*
 * perf_print_fio - --output-format=json: fio's json document ("fio version",
 * "timestamp", "time", "jobs": one entry per result, each with "jobname" and
 * fio's "read", "write", "trim" blocks: io_bytes, io_kbytes, bw_bytes, bw (KiB/s),
 * iops, runtime (ms), total_ios, clat_ns and lat_ns {min, max, mean, stddev
 * (null: not kept), N, percentile {"1.000000".. "99.990000"}}), busypoll's own
 * result under each job's "busypoll" key. now is the timestamp (seconds).
 */
void perf_print_fio(FILE *out, const struct perf_result *rows, int n, time_t now);

int cmd_perf(int argc, char **argv);

#endif
