/* SPDX-License-Identifier: MIT */
/*
 * busypoll compare: the wait modes side by side on a path where each one really
 * does what it claims (a veth test bed with NAPI), with the kernel's evidence
 * (BusyPollRxPackets per transaction) printed beside the numbers.
 */
#ifndef BP_TOOLS_COMPARE_H
#define BP_TOOLS_COMPARE_H

#include <stdbool.h>
#include <stdio.h>

#include "tools/harness/diagnose.h"
#include "tools/remote/agent_client.h"
#include "tools/rr/rr.h"

#define CMP_MAX_MODES 32
#define CMP_MAX_FLOWS 16
#define CMP_MAX_RUNS 25
#define CMP_MAX_RATES 16
#define CMP_MAX_CELLS 1024         /* modes x flows x rates */
#define CMP_MAX_NAPI 8
#define CMP_MAX_COAL 2        /* coalescing settings side by side (--coalesce-matrix) */

struct cmp_opts {
	TOOL_COMMON;               /* quiet, format */
	/* cell i runs client_mode[i] against server_mode[i], parsed and checked once */
	struct bp_mode client_mode[CMP_MAX_MODES], server_mode[CMP_MAX_MODES];
	char client_modes[CMP_MAX_MODES][OPT_MODE_TEXT]; /* their canonical text */
	char server_modes[CMP_MAX_MODES][OPT_MODE_TEXT];
	char labels[CMP_MAX_MODES][160];       /* as the user wrote them, for the table and plot */
	int nmodes;
	struct bp_mode one_client, one_server; /* --client-mode / --server-mode */
	char one_client_text[OPT_MODE_TEXT], one_server_text[OPT_MODE_TEXT];
	int flows[CMP_MAX_FLOWS];
	int nflows;
	/* offered loads, each a cell per mode and flows: requests/s (rr --rate), 0 = max (the closed loop) */
	double rates[CMP_MAX_RATES];
	int nrates;
	char rates_text[256];      /* --rates as given ("max" by default) */
	bool rates_given;          /* --rates: the plot draws against the achieved rate */
	double duration_s, warmup_s;
	int runs;
	int threads;
	uint32_t request_size, response_size;
	int client_cpus[RR_MAX_THREADS], nclient_cpus; /* --client-cpus: client thread i on the i-th */
	int server_cpus[RR_MAX_THREADS], nserver_cpus; /* --server-cpus */
	char plot[1024];           /* --plot FILE.svg, "" none */
	bool loopback;             /* not root (or --loopback): no test bed */
	bool bed_tso;              /* --bed-tso: the test bed with TSO on (its diagnosis seen) */
	bool bed_no_gro;           /* --bed-no-gro: ... with GRO off */
	bool udp;                  /* --udp: UDP flows; the default matrix adds the xsk modes */
	char skipped[CMP_MAX_MODES][200]; /* modes this machine cannot use, with why */
	int nskipped;
	/* two hosts (remote.c) */
	struct agent_remote_opts remote; /* --remote: the server side on another host, through its agent */
	char server_addr[TOOL_HOST_LEN]; /* --server-addr: the data path's address there (default: --remote's host) */
	char server_ip[64];        /* it, resolved here */
	char coalesce[256];        /* --coalesce: both ends' coalescing for the run, "" as found */
	bool coalesce_matrix;      /* --coalesce-matrix: the table at the NIC's setting and at rx-usecs 0 */
};

/* Utilisation of one side, percent of one CPU (medians). */
struct cmp_util {
	double user, system, total;
};

/* One run of a cell: its figures, kept so the cell shows median, spread and mean. */
struct cmp_sample {
	double tps;
	double lat_us[8];          /* min, mean, p50, p90, p99, p99.9, p99.99, max; open loop: from due */
	double lat_send_us[8];     /* open loop: from each request's send */
	struct cmp_util client_util, server_util;
	double client_cpu_us_per_tx, server_cpu_us_per_tx;
	double bprx_client_per_tx, bprx_server_per_tx;
	double syscalls_client_per_tx, syscalls_server_per_tx;
	double direct_hit_client_per_tx, direct_hit_server_per_tx; /* NAN: not known (an older peer) */
	double queued_pct, late_pct;
	uint64_t transactions;
	int served_client, served_server; /* NAPI ids each side's sockets were served by (-1 not known) */
	char disturbed[160];       /* why the machine disturbed this run (tools/harness/disturb.h), "" not */
};

/* One (mode pair, flows, offered rate) cell: medians over its runs. */
struct cmp_cell {
	int mode_idx;
	int coal_idx;              /* which coalescing setting (cmp_report.coal_label) */
	int flows;
	double rate;               /* offered requests/s; 0: max, the closed loop */
	int runs;                  /* completed */
	bool failed;
	bool saturated;            /* an open loop the mode could not keep up with (not a failure) */
	double sat_tps;            /* saturated: what the mode carried, its closed loop with the same flows (NAN: unknown) */
	struct cmp_napi_at {       /* the NAPI settings its last run ran at, read before its server stopped */
		uint32_t id;
		char side;         /* 'c' client end, 's' server end */
		uint32_t defer_hard_irqs;
		uint64_t gro_flush_timeout_ns, irq_suspend_timeout_ns;
	} napi_at[CMP_MAX_NAPI];
	int nnapi_at;
	bool napi_at_read;         /* false: not read (loopback, or the side cannot) */
	char error[512];
	double tps, tps_min, tps_max, tps_mean; /* achieved: median, spread, mean over the runs */
	struct cmp_sample sample[CMP_MAX_RUNS]; /* each run, in the order run (rounds alternate the modes) */
	double lat_us[8];          /* min, mean, p50, p90, p99, p99.9, p99.99, max: medians; open loop: from due */
	double lat_send_us[8];     /* open loop: the same from each request's send */
	double queued_pct, late_pct; /* open loop: requests that waited for their flow; sent late otherwise */
	struct cmp_util client_util, server_util;
	double cpu_us_per_tx;      /* client + server, user + system */
	double client_cpu_us_per_tx, server_cpu_us_per_tx;
	double bprx_client_per_tx, bprx_server_per_tx;
	double syscalls_client_per_tx, syscalls_server_per_tx;
	double direct_hit_client_per_tx, direct_hit_server_per_tx; /* reads before the wait that found bytes */
	uint64_t transactions;     /* of the median run */
	bool busy_poll_mode_client, busy_poll_mode_server;
	bool proof_missing;        /* a busy-poll side with under EV_PROOF_MIN BusyPollRxPackets/tx */
	int served_client, served_server; /* most NAPI ids a run's sockets were served by (-1 not known) */
	/* xsk modes: each side's AF_XDP socket over the cell's runs, client [0] and server [1]:
	 * its binding (enum ev_xsk, EV_XSK_NONE without one) and ring counters summed */
	struct cmp_xsk {
		uint8_t binding;
		uint64_t pkt_rx, dropped, rx_ring_full, fill_empty, tx_empty;
	} xsk[2];
	bool disturbed;            /* the machine disturbed one of its runs or more */
	char disturbed_reason[200]; /* the first such run's reason */
	double d_tps_pct, d_p50_pct, d_p99_pct; /* against the baseline (first mode), same flows and rate */
	double d_cpu_pct;          /* CPU us/tx against the baseline's: which mode saves CPU (NAN: none to compare) */
	bool have_baseline;
};

struct cmp_napi {
	uint32_t id;
	char side;                 /* 'c' client end, 's' server end */
	uint32_t defer_hard_irqs;
	uint64_t gro_flush_timeout_ns, irq_suspend_timeout_ns;
	uint32_t threaded;
};

/* One end of a two-host run as its host reports it (remote.c). */
struct cmp_end {
	char role[8];              /* "client", "server" */
	bool valid;
	char host[64], kernel[128];
	char addr[64];             /* its end of the data path */
	char dev[16], driver[32], driver_version[32], bus[32];
	char channels[96];
	int coal_err;              /* 0, or why its coalescing cannot be read (-EOPNOTSUPP: veth) */
	char coal_found[192];      /* as found ("rx-usecs=8,...") */
	char coal_why[192];        /* the driver's words when it has none */
	char coal_run[CMP_MAX_COAL][256]; /* per setting: what the run set, or why it could not */
	bool coal_applied[CMP_MAX_COAL];
	int busy_poll, busy_read;  /* net.core sysctls, BP_UNKNOWN unreadable */
	char sysctl_why[160];      /* why one is unreadable ("" both read) */
	struct bp_napi_info napi[CMP_MAX_NAPI]; /* the device's NAPIs, as found */
	int nnapi;
	uint32_t served[EV_MAX_NAPI]; /* the NAPIs its flows were served by (evidence) */
	int nserved;
	enum diag_tri gro, tso;    /* its device's, as its host read them (DIAG_UNKNOWN: could not) */
};

/* The path one side's flows take, for the diagnosis (diag.c): found once per run. */
struct cmp_path {
	const char *where;         /* "test bed", "local host", "remote host" */
	char dev[16];              /* "" not known */
	bool veth;
	int napis;                 /* the device's NAPIs, -1 not known */
	enum diag_tri gro, tso, threaded;
};

struct cmp_report {
	struct cmp_opts opts;
	struct cmp_cell cells[CMP_MAX_CELLS];
	int ncells;
	bool interrupted;
	char path[200];            /* "veth test bed bp-x-a <-> bp-x-b", "loopback", "two hosts: ..." */
	char kernel[128];
	int sysctl_busy_poll, sysctl_busy_read;
	char sysctl_why[160];      /* why one is unreadable ("" both read) */
	struct cmp_napi napi[CMP_MAX_NAPI];
	int nnapi;
	char stale[4][256];        /* test beds left by a compare that is gone, removed at the start */
	int nstale;
	struct cmp_end ends[2];    /* client, server: the served NAPIs always; the rest with --remote */
	int ncoal, coal_now;       /* coalescing settings run (1, or 2 with --coalesce-matrix), and which now */
	char coal_label[CMP_MAX_COAL][64];
	bool remote;               /* --remote: two hosts */
	char agent[320];           /* the agent, where */
	uint32_t agent_pid;
	unsigned restored[2];      /* settings each end's agent put back at the end */
	char remote_error[600];    /* what went wrong with an agent once cells were measured ("" nothing) */
	struct cmp_path pathf[2];  /* client, server end */
};

/*
 * The server side of the matrix, whichever it is: the test bed's second namespace
 * (cmd.c) or the remote host's agent (remote.c).
 */
struct cmp_side {
	/* start mode mi's rr server; where the client reaches it. 0, or -errno with err. */
	int (*start)(void *ctx, int mi, char *host, size_t hostlen, uint16_t *port, char *err, size_t errlen);
	/* stop it, the NAPI settings put back as they were before it */
	void (*stop)(void *ctx, int mi);
	/* around each client run: into the client's namespace and back (NULL: stay) */
	int (*client_enter)(void *ctx);
	void (*client_leave)(void *ctx);
	/* after a run, its server still up: the NAPI settings both ends ran at into cell (NULL: none) */
	void (*napi_now)(void *ctx, struct cmp_cell *cell);
	void *ctx;
};

/*
 * cmp_run_matrix - every mode (its server through side) x flow count x run, the
 * cells appended for coalescing setting r->coal_now. The runs alternate: round 1
 * of every mode, then round 2, so a slow spell of the machine falls on all modes
 * alike. 0 (interrupted: r->interrupted) or -ENOMEM; a cell that fails says so in
 * the cell and is not run again.
 */
int cmp_run_matrix(struct cmp_report *r, const struct cmp_side *side);

/* ---- one cell at a time on the test bed (cmd.c), for tune ---- */
struct cmp_bed_run;
/*
 * cmp_bed_open - the test bed compare runs on (loopback when not root or
 * r->opts.loopback), built once for many cells; sub names the command in its lines,
 * stop ends a run early. *side starts a mode's server (r->opts' modes) and puts the
 * bed's NAPI settings back when it stops it. 0, or -1 with the error said.
 */
int cmp_bed_open(struct cmp_report *r, const char *sub, volatile sig_atomic_t *stop, struct cmp_bed_run **out,
		 const struct cmp_side **side);
/* cmp_bed_close - the bed removed and this thread back in its namespace (NULL: nothing). */
void cmp_bed_close(struct cmp_bed_run *br);
/*
 * cmp_run_one - one run of cell (its mode_idx, flows and rate; r->opts.duration_s
 * / r->opts.runs long) against the server side started at host:port, appended to
 * the cell's samples as compare's run is; res keeps the run's histogram.
 */
void cmp_run_one(struct cmp_report *r, const struct cmp_side *side, const char *host, uint16_t port,
		 struct cmp_cell *cell, struct rr_result *res);

/* ---- the proof flag (proof.c) ---- */
/*
 * cmp_side_unproven - the cell's client side (client true) or server side ran a
 * busy-poll mode, yet shows under EV_PROOF_MIN BusyPollRxPackets per transaction:
 * kernel busy polling (almost) never ran there. False for a side in a blocking mode.
 */
bool cmp_side_unproven(const struct cmp_cell *c, bool client);
/*
 * cmp_cell_fill - a cell's figures from its c->runs samples: the medians, the tx/s
 * spread (min, max) and mean. Nothing when it has no run.
 */
void cmp_cell_fill(struct cmp_cell *c);
/* A figure's spread over a cell's runs. */
struct cmp_spread {
	double min, max, mean;
};
/* cmp_lat_spread - latency k (lat_names' order) over the cell's runs: min, max and
 * mean; NAN each when it has no run. */
struct cmp_spread cmp_lat_spread(const struct cmp_cell *c, int k);
/* cmp_proof_missing - either side unproven: the cell's '!' (cmp_cell.proof_missing). */
bool cmp_proof_missing(const struct cmp_cell *c);
/*
 * cmp_cell_diag - why busy polling did not run on the cell's client (client true)
 * or server side: diag_explain's line over the side's path (r->pathf), the mode,
 * the NAPI ids served and the sysctls, into buf. False (buf "") when the side ran
 * busy polling or does not busy-poll (diag.c).
 */
bool cmp_cell_diag(const struct cmp_report *r, const struct cmp_cell *c, bool client, char *buf, size_t len);
/*
 * cmp_sample_disturbed - one run's disturbance (tools/harness/disturb.h) from its
 * sides' evidence and the client's loop, into s->disturbed ("" none): spins_* say
 * which side's mode never sleeps, rate the cell's offered rate (0: closed loop).
 */
void cmp_sample_disturbed(struct cmp_sample *s, const struct evidence *client, const struct evidence *server,
			  bool spins_client, bool spins_server, double rate, int flows);
/* cpu_list - "0,1,2" into buf. */
const char *cpu_list(const int *cpus, int n, char *buf, size_t len);
/* compare_print - table (with the settings), json or csv. */
void compare_print(FILE *out, const struct cmp_report *r);
/* ---- two hosts (remote.c) ---- */
/* The --remote options' table layer of compare: --server-addr, --coalesce, --coalesce-matrix. */
extern const struct opt_table cmp_remote_table;
/*
 * cmp_remote_run - the matrix with the server side on the agent's host: both ends
 * described, coalescing set and restored, every setting's table run. 0, or -errno
 * with one line in err (the agent unreachable, a setting refused: exit 1).
 */
int cmp_remote_run(struct cmp_report *r, volatile sig_atomic_t *stop, char *err, size_t errlen);
/* One session with both hosts held, for many cells (tune). */
struct cmp_remote_run;
/*
 * cmp_remote_open - the agents reached (the server's, and this end's own as root), both
 * ends read after their restores and held (r->opts.remote, server_ip; r->ends, path).
 * *side starts a mode's server on the other host and puts the NAPIs back when it stops
 * it. 0, or -errno with one line in err (-EBUSY: a host another session holds); either
 * way *out is to be closed.
 */
int cmp_remote_open(struct cmp_report *r, struct cmp_remote_run **out, const struct cmp_side **side, char *err,
		    size_t errlen);
/*
 * cmp_remote_coalesce - both ends' coalescing set to set (NULL: left as it is) as
 * setting k (r->coal_label[k], each end's coal_run[k]/coal_applied[k]); an end that
 * cannot change it is said so there. 0, or -errno with err (a change refused).
 */
int cmp_remote_coalesce(struct cmp_remote_run *rr, const char *set, int k, char *err, size_t errlen);
/* cmp_remote_coalesce_found - each end's coalescing that a setting changed put back as found. 0, or -errno with err. */
int cmp_remote_coalesce_found(struct cmp_remote_run *rr, char *err, size_t errlen);
/*
 * cmp_remote_resolve - the data path's address on the other host (server_addr, else
 * remote's host), in numbers as this host reaches it, into ip. 0, or -EINVAL with one
 * line in err (exit 2).
 */
int cmp_remote_resolve(const struct agent_remote_opts *remote, const char *server_addr, char *ip, size_t iplen,
		       char *err, size_t errlen);
/* cmp_remote_close - the agents told goodbye: each restores what it changed (r->restored). 0, or -EIO with err. */
int cmp_remote_close(struct cmp_remote_run *rr, char *err, size_t errlen);
/* cmp_print_ends - the header lines of both ends (table). */
void cmp_print_ends(FILE *out, const struct cmp_report *r);
/* cmp_print_coalesce - the rx-usecs 0 blocks against the NIC's setting, mode by mode (table). */
void cmp_print_coalesce(FILE *out, const struct cmp_report *r);
struct emit;
/* cmp_emit_ends - "ends" and "remote" of the json document. */
void cmp_emit_ends(struct emit *e, const struct cmp_report *r);
/* cmp_coal_text - a cell's coalescing setting (json/csv "coalesce"), NULL when it is the only one. */
const char *cmp_coal_text(const struct cmp_report *r, const struct cmp_cell *c);

/*
 * compare_plot - an SVG, one row per flow count: without --rates the latency
 * percentiles of every mode on one chart, throughput beside it; with --rates P50
 * and P99 against the achieved rate, and each side's CPU utilisation against it.
 * Returns 0 or -errno (message in err).
 */
int compare_plot(const char *path, const struct cmp_report *r, char *err, size_t errlen);

/*
 * plot_rate_row - with --rates, the plot's row for one flow count at y0 (plot_rate.c):
 * P50 and P99 against the achieved rate, and each side's CPU utilisation against it.
 */
void plot_rate_row(FILE *f, const struct cmp_report *r, int flows, int y0);

int cmd_compare(int argc, char **argv);

#endif
