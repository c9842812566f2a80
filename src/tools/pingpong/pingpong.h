/* SPDX-License-Identifier: MIT */
/*
 * busypoll pingpong: round-trip times with a timestamped payload, and where the
 * microseconds go. A client sends a request carrying its send time; the server
 * answers with the same bytes; the client takes the round trip. Each figure is the
 * average of --runs runs of -n round trips.
 *
 * Files, by concern:
 *   opts.c       options
 *   runs.c       a run's figures and the averages over runs (pure)
 *   breakdown.c  a round trip's components from its timestamps (pure)
 *   calib.c      the cost of an empty syscall, epoll_wait(0), io_uring_enter
 *   server.c     the server's data loop: answer, time, drop bad messages
 *   srvctl.c     the server's control thread: listener, sessions, mode switch
 *   server.h        what those two share
 *   ctl.c        the client's end of a control session
 *   client.c     one client run on its own loop thread
 *   matrix.c     rows x runs: what --matrix and a plain client run
 *   output.c     table, json, csv
 *   cmd.c        the command
 */
#ifndef BP_TOOLS_PINGPONG_H
#define BP_TOOLS_PINGPONG_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <time.h>

#include <busypoll/busypoll.h>
#include "tools/remote/agent_client.h"
#include "tools/common/opt.h"
#include "tools/harness/control.h"
#include "tools/harness/evidence.h"
#include "tools/common/net_opts.h"
#include "tools/pingpong/proto.h"

#define PP_DEFAULT_PORT 12868
#define PP_DEFAULT_SIZE 64
#define PP_DEFAULT_N 10000
#define PP_DEFAULT_RUNS 10
#define PP_DEFAULT_WARMUP 1000
#define PP_DEFAULT_TIMEOUT_S 5.0
#define PP_MAX_TIMEOUT_S 3600.0
#define PP_MAX_RUNS 1000
#define PP_MAX_N 100000000ull
#define PP_MAX_DELAY_US 1000000u
#define PP_MAX_PRIORITY 15
#define PP_MODE_LEN 128
#define PP_DEFAULT_MATRIX_MODE "uring:napi,usecs=100"
#define PP_MAX_ROWS 3

/*
 * pp_realtime_ns - CLOCK_REALTIME in ns (vDSO): the clock the kernel's software
 * timestamps use, so every breakdown reading is taken with it.
 */
static inline uint64_t pp_realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* pp_test_delay - busy-wait us microseconds (pp_opts.test_delay_us; 0: nothing). */
static inline void pp_test_delay(uint32_t us)
{
	struct timespec ts;
	uint64_t end = 0, now;

	if (!us)
		return; /* the common case costs one branch */
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
		if (!end)
			end = now + (uint64_t)us * 1000;
		if (now >= end)
			return;
	}
}

struct pp_opts {
	TOOL_COMMON;              /* quiet, format */
	TOOL_NET;                 /* server, host, port (UDP and TCP, data and control), tcp, priority,
				   * mode (this side's; with --matrix the busy-poll mode compared), cpus */
	uint32_t size;            /* request = reply bytes, BP_PP_HDR_LEN..BP_PP_MAX_LEN */
	uint64_t n;               /* measured round trips per run */
	int runs;
	uint64_t warmup;          /* round trips before each run's measured ones */
	int cpu;                  /* the loop thread's CPU (--cpus, one), -1 = not pinned */
	bool matrix;
	bool breakdown;
	uint32_t server_delay_us; /* server: busy-wait this long before each reply */
	/*
	 * Tests only (no option sets it): busy-wait this many us inside breakdown
	 * component PP_C_* on this side (client: its send path, its rx wake-up;
	 * server: its rx wake-up, its send path; processing is server_delay_us), so
	 * a test can put a known delay into one component and see it there alone.
	 */
	uint32_t test_delay_us[6];
	double timeout_s;         /* client: a run fails after this long without a reply */
	int control_fd;           /* server: --control-fd, the session of the process that started it (the
				   * agent: it may switch the mode), -1 none */
	/* client --remote: the server started on another host through its agent */
	struct agent_remote_opts remote;
	int server_cpu;           /* --server-cpus: its CPU there, -1 not pinned */
	int server_cpus[TOOL_MAX_CPUS], nserver_cpus;
	struct bp_mode server_mode; /* --server-mode: its own mode (default --mode) */
	char server_mode_text[PP_MODE_LEN];
	bool port_given;          /* --port: the server there takes it (else any free port) */
};

/* pp_opts_defaults - UDP, 64 B, 10 runs x 10000 after 1000, epoll:block, port 12868. */
void pp_opts_defaults(struct pp_opts *o);
/*
 * pp_parse_opts - `busypoll pingpong` options into *o. Returns 0; 1 when --help was
 * printed; -EINVAL with a one-line message in err (the caller exits 2).
 */
int pp_parse_opts(int argc, char **argv, struct pp_opts *o, char *err, size_t errlen);

/* ---- runs and averages (runs.c) ---- */

struct pp_run {
	uint64_t n;               /* measured round trips */
	uint64_t total;           /* every round trip of the run (warm-up and tail too) */
	uint64_t lost;            /* UDP requests resent after no reply */
	double min_us, mean_us, p50_us, p99_us, p999_us, max_us;
	/* each side over the run (warm-up included: the same work, no gap to measure it);
	 * transactions: the round trips the counters cover */
	struct evidence client, server;
	uint32_t napi_id;         /* of the client's socket, 0 = none */
	bool interrupted;
};

/* Over runs: every figure is the average of the runs' figures; spread is of the means. */
struct pp_agg {
	int runs;                 /* runs with samples */
	double mean_us;           /* mean of the run means */
	double sd_us;             /* sample standard deviation of the run means (0 for one run) */
	double mean_lo_us, mean_hi_us; /* the lowest and highest run mean */
	double min_us, p50_us, p99_us, p999_us, max_us;
};

/* pp_run_figures - a run's n, min, mean and percentiles from its histogram (ns). */
void pp_run_figures(const struct bp_hist *h, struct pp_run *r);
/* pp_runs_aggregate - average runs[0..n) (runs without samples are skipped). */
void pp_runs_aggregate(const struct pp_run *runs, int n, struct pp_agg *a);
/* pp_per_tx - value per round trip (transaction) of a side, NaN when it covers none or is not valid. */
double pp_per_tx(uint64_t value, const struct evidence *s);

/* ---- breakdown (breakdown.c) ---- */

enum pp_comp {
	PP_C_CLIENT_SEND,   /* client: send call -> its software tx timestamp */
	PP_C_SERVER_RX,     /* server: software rx timestamp -> the bytes in its hands */
	PP_C_SERVER_PROC,   /* server: bytes in hand -> its send call */
	PP_C_SERVER_SEND,   /* server: send call -> its software tx timestamp */
	PP_C_CLIENT_RX,     /* client: software rx timestamp -> the bytes in its hands */
	PP_C_REMAINDER,     /* the rest: wire, NIC, the stacks between the timestamps */
	PP_NCOMP
};
_Static_assert(PP_NCOMP == 6, "pp_opts.test_delay_us has one entry per component");

/* Why a round trip has no breakdown (the kernel gave no timestamp, or they disagree). */
enum pp_miss {
	PP_MISS_CLIENT_TX,  /* no software tx timestamp for the request */
	PP_MISS_CLIENT_RX,  /* no software rx timestamp for the reply */
	PP_MISS_SERVER_RX,  /* the server had no rx timestamp for the request */
	PP_MISS_SERVER_TX,  /* the server had no tx timestamp for its reply */
	PP_MISS_ORDER,      /* timestamps out of order (clock stepped?), or parts > RTT */
	PP_NMISS
};

/* What the client knows about one round trip, gathered as its pieces arrive. */
struct pp_bd_sample {
	uint64_t seq;
	uint32_t key;             /* OPT_ID of the request's transmit timestamp */
	uint32_t have;            /* PP_HAVE_* */
	bool measured;            /* counts (not warm-up, not the tail) */
	uint64_t t_send;          /* client CLOCK_REALTIME at the send call */
	uint64_t tx_ts;           /* client software tx timestamp (REALTIME) */
	uint64_t rx_ts;           /* client software rx timestamp of the reply */
	uint64_t t_app;           /* client CLOCK_REALTIME when the reply was in hand */
	uint64_t rtt_mono;        /* the same round trip on CLOCK_MONOTONIC (the payload's) */
	uint32_t srv_rx, srv_proc, srv_send; /* the server's intervals, ns */
};
enum {
	PP_HAVE_SENT = 1u << 0,
	PP_HAVE_TX = 1u << 1,
	PP_HAVE_REPLY = 1u << 2,  /* t_app set */
	PP_HAVE_RX = 1u << 3,
	PP_HAVE_SRV = 1u << 4,    /* srv_rx and srv_proc */
	PP_HAVE_SRV_RX_MISSING = 1u << 5, /* the server said it had no rx timestamp */
	PP_HAVE_SRV_SEND = 1u << 6,
};

/*
 * pp_bd_components - the six components of a complete sample, ns; the remainder is
 * the RTT (t_app - t_send, the client's REALTIME) less the other five, so they sum
 * to it exactly. Returns -1 with every piece there and consistent, else the first
 * enum pp_miss that applies.
 */
int pp_bd_components(const struct pp_bd_sample *s, uint64_t comp[PP_NCOMP], uint64_t *rtt);

/* Every measured round trip's components (one row: its runs pooled). */
struct pp_bd_acc {
	struct bp_hist comp[PP_NCOMP];
	struct bp_hist rtt;       /* the RTT of exactly these samples (client REALTIME) */
	uint64_t rtt_mono_sum;    /* ... and their RTTs on CLOCK_MONOTONIC, summed: the check
				   * that the breakdown adds up to the RTT the payload measured */
	uint64_t samples;         /* measured round trips offered */
	uint64_t complete;
	uint64_t miss[PP_NMISS];
};
void pp_bd_init(struct pp_bd_acc *a);
/* pp_bd_add - a finished sample: into the histograms, or counted as missing. */
void pp_bd_add(struct pp_bd_acc *a, const struct pp_bd_sample *s);
void pp_bd_merge(struct pp_bd_acc *dst, const struct pp_bd_acc *src);
const char *pp_comp_name(int comp);   /* "client send path" */
const char *pp_comp_key(int comp);    /* "client_send" (json/csv) */
const char *pp_miss_text(int miss);

/* ---- calibration (calib.c) ---- */

struct pp_calib {
	bool valid;
	int cpu;                  /* where it ran, -1 = not pinned */
	double syscall_ns;        /* getppid(2): the bare way in and out of the kernel */
	double epoll_wait0_ns;    /* epoll_wait(timeout 0) on an idle epoll instance */
	double uring_enter_ns;    /* io_uring_enter(GETEVENTS, nothing to submit or wait) */
	double uring_nop_ns;      /* one NOP submitted and reaped (enter with work) */
};
/*
 * pp_calibrate - time each call many times on a thread pinned to cpu (-1: not
 * pinned): the median of several batches, ns per call. 0 or -errno (message in err).
 */
int pp_calibrate(int cpu, struct pp_calib *c, char *err, size_t errlen);

/* ---- server (server.c, srvctl.c) ---- */

struct pp_server;
/*
 * pp_server_start - bind UDP and TCP on o->port (0: any free port), start the data
 * loop in o->mode pinned to o->cpu and the control thread. Serves until
 * pp_server_stop. Returns 0 or -errno with a one-line message in err.
 */
int pp_server_start(const struct pp_opts *o, struct pp_server **sp, char *err, size_t errlen);
uint16_t pp_server_port(const struct pp_server *s);
/* pp_server_dropped - bad messages dropped so far, per BP_PP_ERR_* (n entries). */
void pp_server_dropped(const struct pp_server *s, uint64_t *counts, int n);
void pp_server_stop(struct pp_server *s);

/* ---- client ---- */

/* The server as its control session's HELLO_OK describes it (ctl.c). */
struct pp_server_info {
	char mode[PP_MODE_LEN];   /* its own mode, canonical */
	int cpu;                  /* -1: not pinned */
	uint32_t delay_us;        /* --server-delay-us */
};

/*
 * The client's end of the control session (tools/harness/control.h), blocking,
 * between runs only. Each returns 0, or -errno with one line in err: the server's
 * refusal (a mode it cannot run: -EINVAL/-EPERM/-EOPNOTSUPP) or the transport's.
 */
/* pp_ctl_open - connect and HELLO; *info from the reply. */
int pp_ctl_open(struct ctl_session *ctl, const struct sockaddr *addr, socklen_t addrlen, int timeout_ms,
		struct pp_server_info *info, char *err, size_t errlen);
/* pp_ctl_hello - HELLO on a session already open (the agent's relay to the server it started). */
int pp_ctl_hello(struct ctl_session *ctl, struct pp_server_info *info, char *err, size_t errlen);
/* pp_ctl_set_mode - run the server's data loop in mode ("" = its own), timestamps on or off; now: the mode it runs. */
int pp_ctl_set_mode(struct ctl_session *ctl, const char *mode, bool timestamps, char now[PP_MODE_LEN], char *err,
		    size_t errlen);
/* pp_ctl_start / pp_ctl_stop - around a run: the server's evidence over it and its socket's NAPI id. */
int pp_ctl_start(struct ctl_session *ctl, char *err, size_t errlen);
int pp_ctl_stop(struct ctl_session *ctl, struct evidence *server, uint32_t *napi_id, char *err, size_t errlen);

/* Where the client sends, resolved once. */
struct pp_target {
	struct sockaddr_storage addr;
	socklen_t addrlen;
	char text[128];
};

/*
 * pp_client_run - one run in mode: a fresh loop thread (pinned to o->cpu) and
 * socket, o->warmup round trips, then o->n measured ones recorded into hist (and
 * into bd when not NULL, which turns timestamps on). *stop ends it early (the
 * figures so far are kept, run->interrupted set). Fills run (figures from hist are
 * left to the caller) and run->client. Returns 0 or -errno with a message in err.
 */
int pp_client_run(const struct pp_opts *o, const struct pp_target *t, const struct bp_mode *mode,
		  volatile sig_atomic_t *stop, struct bp_hist *hist, struct pp_bd_acc *bd,
		  struct pp_run *run, char *err, size_t errlen);

/* ---- rows x runs (matrix.c) ---- */

struct pp_row {
	char label[32];           /* "no busy polling", "client only", "both ends", "run" */
	char client_mode[PP_MODE_LEN];
	char server_mode[PP_MODE_LEN];
	int nruns;                /* runs done (fewer when interrupted) */
	struct pp_run *runs;      /* o->runs of them */
	struct pp_agg agg;
	struct bp_hist *all;      /* every measured sample of every run */
	struct pp_bd_acc *bd;     /* NULL without --breakdown */
	struct evidence client, server; /* summed over the runs */
	uint32_t server_napi_id;
};

struct pp_result {
	struct pp_opts opts;
	char server_addr[128];
	char server_mode[PP_MODE_LEN]; /* the server's own mode (HELLO) */
	int server_cpu;
	uint32_t server_delay_us;
	int nrows;
	struct pp_row rows[PP_MAX_ROWS];
	struct pp_calib calib;
	char kernel[128];
	bool interrupted;
	char failed[256];         /* why the measurement failed ("" it did not): the finished runs are kept */
	char agent[320];          /* --remote: the agent that started the server, "" none */
	uint32_t server_pid;      /* --remote: the server's pid there */
};

/* pp_measured - did any run finish (something to print, even from a failed measurement)? */
bool pp_measured(const struct pp_result *res);

/*
 * pp_measure - the whole client side: control session, calibration (--breakdown),
 * then for each row (3 with --matrix) the server's mode and --runs runs. Fills res
 * (allocations freed by pp_result_free). Returns 0 (also when interrupted: see
 * res->interrupted), -EINVAL/-EPERM/-EOPNOTSUPP when the server refuses a mode, or
 * -errno with a one-line message in err.
 */
int pp_measure(const struct pp_opts *o, volatile sig_atomic_t *stop, struct pp_result *res,
	       char *err, size_t errlen);
void pp_result_free(struct pp_result *res);

/* pp_matrix_modes - the three rows' client and server modes for busy mode m. */
int pp_matrix_modes(const struct bp_mode *m, char client[PP_MAX_ROWS][PP_MODE_LEN],
		    char server[PP_MAX_ROWS][PP_MODE_LEN], char *err, size_t errlen);

/* ---- output (output.c) ---- */
void pp_print(FILE *out, const struct pp_result *r, enum tool_format format);

int cmd_pingpong(int argc, char **argv);

#endif
