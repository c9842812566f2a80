/* SPDX-License-Identifier: MIT */
/*
 * busypoll tune: from a table to an answer. The space (wait modes with a few key
 * values each, and tuned's network-latency recipe) is searched on compare's veth
 * test bed, or with --remote between this host and another through its agent
 * (compare's session: both hosts held, each setting journalled there; the NICs'
 * coalescing at rx-usecs 0 joins the space where the other host's NIC has it), by
 * the rules of search.h: a short rung for every candidate, the better
 * half again for twice as long, and so on; then a confirmation that alternates the
 * winner, the runner-up, epoll:block and the tuned recipe for several rounds. The
 * answer is the winner's settings as lines to apply, with its confirmation figures
 * beside the two baselines'. Every sysctl it changes goes through the agent's
 * journal, so it is put back at the end, on Ctrl-C and (at the next start, or
 * `busypoll agent --restore`) after SIGKILL; the bed's NAPIs go with the bed.
 * --plot draws every candidate, P99 against CPU, with the Pareto front (plot.c).
 */
#ifndef BP_TOOLS_TUNE_H
#define BP_TOOLS_TUNE_H

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>

#include <busypoll/hist.h>
#include <busypoll/mode.h>

#include "tools/common/opt.h"
#include "tools/compare/compare.h"
#include "tools/tune/search.h"

#define TUNE_MAX_CANDS 24        /* the space, baselines included (within CMP_MAX_MODES) */
#define TUNE_MAX_SAMPLES 32      /* runs kept per candidate */
#define TUNE_MAX_FIX 8
#define TUNE_MAX_KEYS 8
#define TUNE_CONFIRM_ROUNDS 3    /* rounds of the confirmation, alternated */
#define TUNE_MIN_RUN_S 0.2       /* the shortest measured run of the first rung */
#define TUNE_MIN_CONFIRM_S 0.5   /* the shortest run of the confirmation */
#define TUNE_RUN_OVERHEAD_S 0.4  /* a run's warm-up and its server's start, counted against --budget */
#define TUNE_RECIPE_USECS 50     /* tuned's network-latency: net.core.busy_read and busy_poll */
#define TUNE_COALESCE "rx-usecs=0" /* --remote: the NICs' coalescing a candidate runs at again */

/* What a candidate is there for. */
enum tune_role { TUNE_CAND = 0, TUNE_BLOCK, TUNE_RECIPE };

struct tune_opts {
	TOOL_COMMON;
	int flows, threads;
	uint32_t request_size, response_size;
	double rate;                 /* --rate: requests/s; 0 the closed loop */
	struct tune_goal goal;
	char goal_text[64];
	double budget_s;             /* --budget: the whole search and confirmation */
	char modes[TUNE_MAX_CANDS][OPT_MODE_TEXT]; /* --modes, canonical; none: the default space */
	int nmodes;
	bool modes_given;            /* --modes: the baselines are the confirmation's only */
	char fix[TUNE_MAX_FIX][64];  /* --fix KEY=V: only candidates whose settings have it */
	int nfix;
	char keys[TUNE_MAX_KEYS][32]; /* --keys K,K: only candidates that set one of them */
	int nkeys;
	int client_cpus[TOOL_MAX_CPUS], nclient_cpus;
	int server_cpus[TOOL_MAX_CPUS], nserver_cpus;
	bool loopback;
	/* --remote: the server side on another host, through its agent (compare's machinery) */
	struct agent_remote_opts remote;
	char server_addr[TOOL_HOST_LEN]; /* --server-addr: the data path's address there */
	char server_ip[64];          /* it, resolved here */
	char plot[1024];             /* --plot FILE.svg, "" none */
	char skipped[TUNE_MAX_CANDS][200]; /* space this machine cannot run, with why */
	int nskipped;
};

/* One run of a candidate. */
struct tune_sample {
	int phase;                   /* the rung (1..), or 0 for the confirmation */
	double seconds, tps, cpu, bprx_per_tx;
	double p99_us, p99_lo_us, p99_hi_us; /* the run's own P99 and its interval (tune_hist_ci) */
	uint64_t transactions;
};

/* One phase's figures of a candidate: each run's P99 with its interval (their medians
 * are the phase's, tune_runs_p99), CPU and TPS over the runs' time. */
struct tune_figs {
	double run_p99[TUNE_MAX_SAMPLES], run_lo[TUNE_MAX_SAMPLES], run_hi[TUNE_MAX_SAMPLES];
	int nruns;
	uint64_t latencies;
	double seconds, cpu_s, tx, bprx_client, bprx_server; /* sums */
	struct tune_cand c;          /* the search's view (p99 interval, cpu, tps, proof) */
};

struct tune_point {
	char label[200];             /* the mode, and " + tuned's sysctls" for the recipe */
	char mode_text[OPT_MODE_TEXT];
	struct bp_mode mode;
	enum tune_role role;
	int sysctl_usecs;            /* net.core.busy_read/busy_poll during its runs, -1: as found */
	char coalesce[64];           /* --remote: both ends' coalescing during its runs ("" as found) */
	struct tune_figs search, confirm;
	struct tune_sample s[TUNE_MAX_SAMPLES];
	int ns;
	int dropped_at;              /* the rung after which it was dropped, 0 never */
	bool in_search;              /* a candidate of the search (the baselines are too, unless --fix/--modes left them out) */
	bool failed;
	char error[300];
};

struct tune_report {
	struct tune_opts opts;
	struct tune_point pt[TUNE_MAX_CANDS];
	int n;
	unsigned rungs, rungs_run;
	double first_s, confirm_s;
	int best, runner;            /* indices, -1 none */
	int search_best;             /* the search's winner, before the confirmation (-1 none) */
	bool met;                    /* the confirmation's best meets the goal */
	bool confirmed;
	bool interrupted;
	char path[200];
	char dev[2][16];             /* --remote: each end's device (the ethtool lines) */
	char coal_note[300];         /* --remote: the coalescing in the space, or why it is not */
	int found_busy_read, found_busy_poll;
	int restore_left;            /* settings the journal could not put back */
	char error[600];             /* why the run stopped ("" it did not) */
};

/* ---- options and the space (opts.c) ---- */
/*
 * tune_parse_opts - argv into o, the space built and checked against this machine
 * (o->modes; the default space notes in o->skipped what it cannot run). 0; 1 when
 * --help or --version was printed; -EINVAL with one line in err (exit 2).
 */
int tune_parse_opts(int argc, char **argv, struct tune_opts *o, char *err, size_t errlen);
/*
 * tune_parse_goal - "p99=50us" (also ms, s, or a bare number of us) or "max-tps"
 * into g (cpu_budget untouched). 0, or -EINVAL with one line in err.
 */
int tune_parse_goal(const char *name, const char *v, struct tune_goal *g, char *err, size_t errlen);
/*
 * tune_space - r's points from o: epoll:block and the tuned recipe first, then the
 * modes, each dropped unless it has every --fix KEY=V (the baselines are kept, out
 * of the search, for the confirmation). Returns how many take part in the search.
 */
int tune_space(struct tune_report *r);
/* tune_has_fix - the label's settings hold KEY=V (a mode key, or busy_read/busy_poll). */
bool tune_has_fix(const char *mode_text, int sysctl_usecs, const char *fix);
/* tune_has_key - the settings set KEY, whatever its value (a mode key, or busy_read/busy_poll). */
bool tune_has_key(const char *mode_text, int sysctl_usecs, const char *key);
/* tune_key_known - KEY is busy_read, busy_poll or a key some mode family takes (bp_mode_table). */
bool tune_key_known(const char *key);

/* ---- the search (run.c) ---- */
/*
 * tune_run - the search and the confirmation on the test bed (r->path), every
 * sysctl change journalled and put back. 0, or -1 with r->error (the bed or the
 * journal could not be had: exit 1); r->interrupted when stop was set.
 */
int tune_run(struct tune_report *r, volatile sig_atomic_t *stop);
/* tune_budget_ok - the budget leaves every rung's runs at least TUNE_MIN_RUN_S (sets r's plan). */
bool tune_budget_ok(struct tune_report *r, int nsearch);
/* tune_budget_needed - the least --budget, seconds, for nsearch candidates. */
double tune_budget_needed(const struct tune_report *r, int nsearch);
/*
 * tune_figs_add - one run into f: its latencies' P99 and interval (tune_hist_ci), its
 * seconds, CPUs (both ends) and transactions, each end's BusyPollRxPackets per
 * transaction. Returns false (f untouched) when the run has no latency or f is full.
 */
bool tune_figs_add(struct tune_figs *f, const struct bp_hist *h, double seconds, double cpu, double tx,
		   double bprx_client, double bprx_server);
/* tune_figs_view - f's search view from its runs (tune_runs_p99) and sums. */
void tune_figs_view(struct tune_figs *f, bool busy_poll, const char *name);

/* ---- the answer (output.c) ---- */
/* tune_print - table (the answer and every candidate), json or csv. */
void tune_print(FILE *out, const struct tune_report *r);
/* tune_final_view - the figures the answer stands on: p's confirmation's, else its search's. */
const struct tune_cand *tune_final_view(const struct tune_point *p);
/* tune_verdict - the one line for a goal no candidate meets, "" when one does. */
const char *tune_verdict(const struct tune_report *r, char *buf, size_t len);

/* ---- the plot (plot.c) ---- */
/*
 * tune_plot - --plot: an SVG of every measured candidate, P99 (with its interval)
 * against CPU, the proven points' Pareto front, the goal, the recommendation ringed
 * and the baselines as squares. 0, or -errno with one line in err.
 */
int tune_plot(const char *path, const struct tune_report *r, char *err, size_t errlen);

int cmd_tune(int argc, char **argv);

#endif
