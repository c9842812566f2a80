/* SPDX-License-Identifier: MIT */
/*
 * busypoll rr: a neper-class request/response benchmark on the busypoll engine.
 * The server and the client are functions, not just a command, so that `compare`
 * can run both in one process with each side's threads in its own namespace.
 */
#ifndef BP_TOOLS_RR_H
#define BP_TOOLS_RR_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <busypoll/busypoll.h>
#include "tools/common/opt.h"
#include "tools/harness/arrivals.h"
#include "tools/harness/evidence.h"
#include "tools/common/net_opts.h"
#include "tools/rr/proto.h"

#define RR_DEFAULT_PORT 12867
#define RR_MAX_THREADS TOOL_MAX_CPUS
#define RR_MAX_NAPI_IDS EV_MAX_NAPI
/* A connection that has not said hello by then is closed: silent or half-open peers
 * must not hold the server's descriptors for ever. */
#define RR_HELLO_TIMEOUT_MS 10000
#define RR_MAX_RATE 1e8           /* --rate: requests/s, far above what one machine answers */
/* --max-outstanding when not given: this many, or two per flow when that is more. */
#define RR_DEFAULT_OUTSTANDING 1000
/* Open loop: a request sent this long after it was due, its flow idle, was late (the sender's own lag). */
#define RR_LATE_NS ARRIVALS_LATE_NS

/* --arrivals: how the open loop spaces its requests (the choice's index). */
enum rr_arrivals { RR_ARRIVALS_FIXED = 0, RR_ARRIVALS_POISSON = 1 };

struct rr_opts {
	TOOL_COMMON;              /* quiet, format */
	TOOL_NET;                 /* server, host, port, udp, priority, mode, cpus (thread i on cpus[i]) */
	int threads;              /* -T */
	int flows;                /* -F, spread over the threads */
	uint32_t request_size;    /* -Q */
	uint32_t response_size;   /* -R */
	double duration_s;        /* -l (0 when -n is given) */
	uint64_t transactions;    /* -n (0 = use the duration) */
	double warmup_s;
	double interval_s;        /* -I progress lines (0 = none) */
	uint32_t hello_timeout_ms; /* server: close a connection with no hello by then (default 10 s) */
	/* client, open loop (rate > 0): requests on a schedule that never waits for answers */
	double rate;              /* --rate: requests/s over all flows (0: closed loop) */
	int arrivals;             /* --arrivals: enum rr_arrivals (default poisson) */
	uint64_t max_outstanding; /* --max-outstanding: due and unanswered at most (0: the default) */
	/* server, a test hook (hidden --test-hold N:MS): each flow's N-th answer held MS ms */
	uint32_t hold_after, hold_ms;
	bool own_server;          /* client: the caller runs the server (compare): no "is it running?" hint */
	int control_fd;           /* server: --control-fd, the session of the process that started it, -1 none */
};

/* rr_opts_defaults - TCP, 1 thread, 1 flow, Q=R=1, 10 s, 1 s warmup, epoll:block, closed loop. */
void rr_opts_defaults(struct rr_opts *o);
/*
 * rr_max_outstanding - the open loop's limit of requests due and not answered:
 * --max-outstanding, else RR_DEFAULT_OUTSTANDING or two per flow, whichever is more.
 */
uint64_t rr_max_outstanding(const struct rr_opts *o);

/*
 * rr_parse_opts - `busypoll rr` options into *o. Returns 0; 1 when --help was
 * printed; -EINVAL with a one-line message in err (the caller exits 2).
 */
int rr_parse_opts(int argc, char **argv, struct rr_opts *o, char *err, size_t errlen);

struct rr_result {
	struct rr_opts opts;      /* the settings that produced it */
	char server_addr[128];
	uint64_t transactions;    /* measured */
	double seconds;           /* measured interval */
	double tps;
	uint64_t udp_lost;        /* UDP requests that timed out and were resent */
	struct bp_hist hist;      /* latency, ns: from when each request was due (closed loop: sent) */
	/* open loop (opts.rate > 0), over the measured transactions */
	struct bp_hist hist_send; /* latency from when each request went out */
	struct bp_hist hist_lag;  /* how long after it was due each went out */
	uint64_t queued;          /* they waited for their flow's previous answer */
	uint64_t late;            /* not queued, yet out more than RR_LATE_NS after due (the sender's lag) */
	uint64_t outstanding_peak; /* most requests due and unanswered (each thread's most, summed) */
	uint64_t max_outstanding; /* the limit the run had (rr_max_outstanding) */
	/* each side over the measured interval; transactions: every one it did, all phases */
	struct evidence client, server;
	bool interrupted;
	char failed[256];         /* why the run failed ("" it did not): what was measured is kept */
	int server_cpus[RR_MAX_THREADS]; /* the server's loop threads' CPUs (its HELLO_OK) */
	int nserver_cpus;         /* 0: not pinned (or not known) */
	char kernel[128];         /* uname -r */
	int sysctl_busy_poll, sysctl_busy_read; /* -1: not readable from here */
};

/* ---- server ---- */
struct rr_server;
/*
 * rr_server_start - listen (TCP, and UDP with SO_REUSEPORT per thread) and serve
 * on o->threads loop threads, pinned per o->cpus, until rr_server_stop. The
 * threads inherit the caller's network namespace. Returns 0 or -errno with a
 * one-line message in err ("port 12867 is in use; pick another with --port").
 */
int rr_server_start(const struct rr_opts *o, struct rr_server **sp, char *err, size_t errlen);
uint16_t rr_server_port(const struct rr_server *s);
/*
 * rr_server_runs_live - run slots in use now (of 256). A run holds its slot while
 * any of its flows or its control connection is open, so this returns to 0 once
 * every client is gone (the fault tests assert that no slot leaks). Any thread.
 */
unsigned rr_server_runs_live(struct rr_server *s);
void rr_server_stop(struct rr_server *s);

/* ---- client ---- */
/*
 * rr_client_run - one run against o->host. *stop may be set (e.g. by SIGINT) to
 * end early: the results so far are still filled in and res->interrupted set.
 * Returns 0, or -errno with a one-line message in err (server unreachable, refused,
 * gone mid-run, fd limit, mode not allowed); when the run had started, what it
 * measured is in res too, with the reason in res->failed (rr_measured says so).
 * -EOVERFLOW: an open loop the server did not keep up with; err says what happened,
 * the caller adds what to do in its own options (RR_OVERLOAD_ADVICE for rr's).
 */
#define RR_OVERLOAD_ADVICE "lower --rate, add --flows, or raise --max-outstanding"
int rr_client_run(const struct rr_opts *o, volatile sig_atomic_t *stop, struct rr_result *res,
		  char *err, size_t errlen);

/* rr_measured - does res hold a run's figures (it got past the start), even a failed one's? */
bool rr_measured(const struct rr_result *res);

/* ---- output ---- */
/* rr_print - the result in o->format: table (at a glance), json or csv (every field). */
void rr_print(FILE *out, const struct rr_result *r, enum tool_format format);
/* rr_print_csv_header - the csv header line (compare prints it once for many rows). */
void rr_print_csv_header(FILE *out);

int cmd_rr(int argc, char **argv);

#endif
