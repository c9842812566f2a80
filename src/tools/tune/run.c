/* SPDX-License-Identifier: MIT */
/*
 * busypoll tune: the search and the confirmation on compare's test bed, one
 * measured run at a time through compare's own cell machinery (cmp_run_one), and
 * the recipe's sysctls changed only through the agent's journal (contract in
 * tools/tune/tune.h).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tools/agent/journal.h"
#include "tools/common/values.h"
#include "tools/tune/tune.h"

struct run {
	struct tune_report *r;
	struct cmp_report *cr;     /* compare's view: the points as its modes */
	const struct cmp_side *side;
	struct cmp_bed_run *bed;
	struct cmp_remote_run *rr;  /* --remote: the two hosts' session, instead of the bed */
	bool coal_changed;          /* --remote: a point's coalescing is on the NICs now */
	struct journal j;
	bool journal_open;
	volatile sig_atomic_t *stop;
	struct rr_result *res;
	double t0;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* say - a line of the journal's (a stale one played back) on stderr. */
static void say(void *arg, const char *line)
{
	const struct tune_report *r = arg;

	if (!r->opts.quiet)
		fprintf(stderr, "busypoll tune: %s\n", line);
}

static bool point_busy(const struct tune_point *p)
{
	return bp_mode_is_busy_poll(&p->mode) || p->sysctl_usecs > 0;
}

bool tune_figs_add(struct tune_figs *f, const struct bp_hist *h, double seconds, double cpu, double tx,
		   double bprx_client, double bprx_server)
{
	double est, lo, hi;

	if (f->nruns >= TUNE_MAX_SAMPLES || !tune_hist_ci(h, 0.99, &est, &lo, &hi))
		return false;
	f->run_p99[f->nruns] = est;
	f->run_lo[f->nruns] = lo;
	f->run_hi[f->nruns] = hi;
	f->nruns++;
	f->latencies += h->count;
	f->seconds += seconds;
	f->cpu_s += cpu * seconds;
	f->tx += tx;
	f->bprx_client += bprx_client * tx;
	f->bprx_server += bprx_server * tx;
	return true;
}

void tune_figs_view(struct tune_figs *f, bool busy_poll, const char *name)
{
	struct tune_cand *c = &f->c;
	double est[TUNE_MAX_SAMPLES], lo[TUNE_MAX_SAMPLES], hi[TUNE_MAX_SAMPLES];
	size_t n = (size_t)f->nruns;

	c->name = name;
	c->busy_poll = busy_poll;
	c->samples = NULL;
	c->nsamples = (size_t)f->latencies;
	c->bprx_per_tx = f->tx > 0 ? fmin(f->bprx_client, f->bprx_server) / f->tx : 0;
	c->cpu = f->seconds > 0 ? f->cpu_s / f->seconds : NAN;
	c->tps = f->seconds > 0 ? f->tx / f->seconds : NAN;
	memcpy(est, f->run_p99, n * sizeof(*est));
	memcpy(lo, f->run_lo, n * sizeof(*lo));
	memcpy(hi, f->run_hi, n * sizeof(*hi));
	if (!tune_runs_p99(est, lo, hi, n, &c->p99, &c->p99_lo, &c->p99_hi))
		c->p99 = c->p99_lo = c->p99_hi = NAN;
}

/* quiet - the journal's lines at a normal playback: the table says the settings are back. */
static void quiet(void *arg, const char *line)
{
	(void)arg;
	(void)line;
}

/*
 * recipe_on - the recipe's sysctls for one run: a journal opened (the host's change
 * lock taken, the journals of a tune or agent that is gone played back first), each
 * value journalled before it is changed. 0 or -1 with err; recipe_off plays it back.
 */
static int recipe_on(struct run *ru, int usecs, char *err, size_t errlen)
{
	char holder[64];

	if (geteuid() != 0 || ru->r->opts.loopback)
		return tool_fail(err, errlen, "the recipe changes net.core.busy_read and busy_poll: run as root") ? -1 : -1;
	snprintf(holder, sizeof(holder), "busypoll tune pid %d", (int)getpid());
	if (journal_open(&ru->j, JOURNAL_DEFAULT_DIR, holder, say, ru->r, err, errlen))
		return -1;
	ru->journal_open = true;
	if (journal_change_sysctl(&ru->j, "busy_read", (uint64_t)usecs, err, errlen) ||
	    journal_change_sysctl(&ru->j, "busy_poll", (uint64_t)usecs, err, errlen))
		return -1;
	return 0;
}

/* recipe_off - the journal played back: every sysctl as it was. */
static void recipe_off(struct run *ru)
{
	if (!ru->journal_open)
		return;
	ru->r->restore_left += journal_finish(&ru->j, quiet, NULL);
	ru->journal_open = false;
}

/*
 * coalesce_for - both NICs' coalescing as point p runs at: its setting, or (after
 * one that changed it) back as found. 0, or -errno with err.
 */
static int coalesce_for(struct run *ru, const struct tune_point *p, char *err, size_t errlen)
{
	int rc;

	if (p->coalesce[0]) {
		rc = cmp_remote_coalesce(ru->rr, p->coalesce, 0, err, errlen);
		ru->coal_changed = true;
		return rc;
	}
	if (!ru->coal_changed)
		return 0;
	rc = cmp_remote_coalesce_found(ru->rr, err, errlen);
	ru->coal_changed = false;
	return rc;
}

/*
 * remote_space - with --remote, once the ends are known: tuned's recipe is not measured
 * (the agent changes no sysctl on its host, and this end's agent holds this host), and
 * where the server's NIC has interrupt coalescing each candidate joins the space again
 * at rx-usecs 0 on both ends, as far as the space and the budget allow (r->coal_note says
 * which, or why not).
 */
static void remote_space(struct run *ru)
{
	struct tune_report *r = ru->r;
	const struct cmp_end *b = &ru->cr->ends[1];
	struct cmp_opts *co = &ru->cr->opts;
	int n = r->n, nsearch = 0, added = 0;

	snprintf(r->dev[0], sizeof(r->dev[0]), "%s", ru->cr->ends[0].dev);
	snprintf(r->dev[1], sizeof(r->dev[1]), "%s", b->dev);
	for (int i = 0; i < r->n; i++)
		if (r->pt[i].role == TUNE_RECIPE) {
			r->pt[i].in_search = false;
			r->pt[i].failed = true;
			snprintf(r->pt[i].error, sizeof(r->pt[i].error), "not measured with --remote: the agent does not "
				 "change the other host's net.core sysctls");
		}
	if (b->coal_err) {
		snprintf(r->coal_note, sizeof(r->coal_note), "not in the space: the server's %s has no interrupt "
			 "coalescing to change (%.200s)", b->dev, b->coal_why);
		return;
	}
	for (int i = 0; i < n && r->n < TUNE_MAX_CANDS && r->n < CMP_MAX_MODES; i++) {
		struct tune_point *p = &r->pt[r->n];

		if (!r->pt[i].in_search || r->pt[i].role != TUNE_CAND)
			continue;
		*p = r->pt[i];
		snprintf(p->coalesce, sizeof(p->coalesce), "%s", TUNE_COALESCE);
		snprintf(p->label, sizeof(p->label), "%.150s + %s", r->pt[i].label, TUNE_COALESCE);
		co->client_mode[r->n] = co->client_mode[i];
		co->server_mode[r->n] = co->server_mode[i];
		memcpy(co->client_modes[r->n], co->client_modes[i], sizeof(co->client_modes[0]));
		memcpy(co->server_modes[r->n], co->server_modes[i], sizeof(co->server_modes[0]));
		snprintf(co->labels[r->n], sizeof(co->labels[0]), "%s", p->label);
		r->n++;
		added++;
	}
	for (int i = 0; i < r->n; i++)
		nsearch += r->pt[i].in_search;
	if (added && !tune_budget_ok(r, nsearch)) {
		r->n = n;
		tune_budget_ok(r, nsearch - added);
		snprintf(r->coal_note, sizeof(r->coal_note), "not in the space: --budget %.0f s is too short for the "
			 "candidates again at %s (give at least %.0f s)", r->opts.budget_s, TUNE_COALESCE,
			 tune_budget_needed(r, nsearch));
		return;
	}
	co->nmodes = r->n;
	snprintf(r->coal_note, sizeof(r->coal_note), "%d candidate%s again at %s on both ends (the server's %s "
		 "as found: %.120s)", added, added == 1 ? "" : "s", TUNE_COALESCE, b->dev, b->coal_found);
}

/* measure - one run of point i for seconds, into its search figures (phase > 0) or its confirmation's. */
static void measure(struct run *ru, int i, double seconds, int phase)
{
	struct tune_report *r = ru->r;
	struct tune_point *p = &r->pt[i];
	struct cmp_cell cell = { .mode_idx = i, .flows = r->opts.flows, .rate = r->opts.rate };
	struct tune_figs *f = phase ? &p->search : &p->confirm;
	struct rr_result *res = ru->res;
	char host[TOOL_HOST_LEN], err[512];
	uint16_t port = 0;
	int ret;

	if (p->failed || *ru->stop)
		return;
	if (ru->rr && coalesce_for(ru, p, err, sizeof(err))) {
		p->failed = true;
		snprintf(p->error, sizeof(p->error), "coalescing: %.285s", err);
		return;
	}
	if (p->sysctl_usecs >= 0 && recipe_on(ru, p->sysctl_usecs, err, sizeof(err))) {
		recipe_off(ru);
		p->failed = true;
		snprintf(p->error, sizeof(p->error), "%.290s", err);
		return;
	}
	ret = ru->side->start(ru->side->ctx, i, host, sizeof(host), &port, err, sizeof(err));
	if (ret) {
		p->failed = true;
		snprintf(p->error, sizeof(p->error), "server: %.280s", err);
	} else {
		ru->cr->opts.duration_s = seconds;
		ru->cr->opts.runs = 1;
		cmp_run_one(ru->cr, ru->side, host, port, &cell, res);
		ru->side->stop(ru->side->ctx, i);
	}
	recipe_off(ru);
	if (ret)
		return;
	if (cell.failed || cell.saturated) {
		p->failed = true;
		snprintf(p->error, sizeof(p->error), "%.299s", cell.error);
		return;
	}
	if (!cell.runs)
		return; /* interrupted before anything was measured */
	const struct cmp_sample *s = &cell.sample[0];
	double cpu = (s->client_util.total + s->server_util.total) / 100.0;

	if (!tune_figs_add(f, &res->hist, res->seconds, cpu, (double)res->transactions, s->bprx_client_per_tx,
			   s->bprx_server_per_tx)) {
		/* no latency to stand on (runs are far fewer than kept): out, as a failed run, not figures of 0 */
		p->failed = true;
		snprintf(p->error, sizeof(p->error), "its %.2f s run completed no transaction", res->seconds);
		return;
	}
	if (p->ns < TUNE_MAX_SAMPLES)
		p->s[p->ns++] = (struct tune_sample){ .phase = phase, .seconds = res->seconds, .tps = s->tps,
						      .cpu = cpu, .p99_us = f->run_p99[f->nruns - 1],
						      .p99_lo_us = f->run_lo[f->nruns - 1],
						      .p99_hi_us = f->run_hi[f->nruns - 1],
						      .bprx_per_tx = fmin(s->bprx_client_per_tx, s->bprx_server_per_tx),
						      .transactions = res->transactions };
	tune_figs_view(f, point_busy(p), p->label);
}

static void progress(struct run *ru, const char *what, int k, int n, const struct tune_point *p, double secs)
{
	double left = ru->r->opts.budget_s - (now_s() - ru->t0);

	if (ru->r->opts.quiet)
		return;
	fprintf(stderr, "busypoll tune: %s [%d/%d] %-44s %.1f s  about %.0f s left\n", what, k, n, p->label, secs,
		left > 0 ? left : 0);
}

/* plan - the rungs for the search's share of the budget (TUNE_SEARCH_SHARE) after each run's overhead. */
static bool plan(struct tune_report *r, int nsearch)
{
	double share = 0.6 * r->opts.budget_s - TUNE_RUN_OVERHEAD_S * 2.0 * nsearch;

	return tune_plan((size_t)nsearch, share, TUNE_MIN_RUN_S, &r->rungs, &r->first_s);
}

double tune_budget_needed(const struct tune_report *r, int nsearch)
{
	unsigned rungs = 1;

	for (int m = nsearch; m > 1; m = (m + 1) / 2)
		rungs++;
	return ceil((nsearch * rungs * TUNE_MIN_RUN_S + TUNE_RUN_OVERHEAD_S * 2.0 * nsearch) / 0.6);
}

bool tune_budget_ok(struct tune_report *r, int nsearch)
{
	return plan(r, nsearch);
}

/* search - the rungs of successive halving over the points in the search. */
static void search(struct run *ru)
{
	struct tune_report *r = ru->r;
	struct tune_cand c[TUNE_MAX_CANDS];
	int idx[TUNE_MAX_CANDS], n = 0;

	for (int i = 0; i < r->n; i++)
		if (r->pt[i].in_search) {
			r->pt[i].search.c.alive = true;
			idx[n++] = i;
		}
	for (unsigned rung = 1; rung <= r->rungs && !*ru->stop; rung++) {
		double secs = fmax(r->first_s, TUNE_MIN_RUN_S) * pow(2, rung - 1);
		double left = 0.6 * r->opts.budget_s - (now_s() - ru->t0);
		int live = 0, k = 0;
		char what[32];

		for (int m = 0; m < n; m++)
			live += r->pt[idx[m]].search.c.alive;
		/* ties keep more than half alive: the rung shrinks to the search's time left, or ends it */
		if (rung > 1 && left < live * (TUNE_MIN_RUN_S + TUNE_RUN_OVERHEAD_S))
			break;
		secs = fmin(secs, left / live - TUNE_RUN_OVERHEAD_S);
		snprintf(what, sizeof(what), "rung %u/%u", rung, r->rungs);
		for (int m = 0; m < n && !*ru->stop; m++) {
			struct tune_point *p = &r->pt[idx[m]];

			if (!p->search.c.alive)
				continue;
			progress(ru, what, ++k, live, p, secs);
			measure(ru, idx[m], secs, (int)rung);
		}
		if (*ru->stop)
			break;
		r->rungs_run = rung;
		for (int m = 0; m < n; m++) {
			struct tune_point *p = &r->pt[idx[m]];

			if (p->failed && p->search.c.alive) {
				p->search.c.alive = false; /* failed or could not keep up: out, at this rung */
				p->dropped_at = (int)rung;
			}
			c[m] = p->search.c;
		}
		if (live <= 1)
			break;
		tune_halve(c, (size_t)n, &r->opts.goal);
		live = 0;
		for (int m = 0; m < n; m++) {
			struct tune_point *p = &r->pt[idx[m]];

			if (p->search.c.alive && !c[m].alive)
				p->dropped_at = (int)rung;
			p->search.c.alive = c[m].alive;
			live += c[m].alive;
		}
		if (live <= 1)
			break;
	}
	for (int m = 0; m < n; m++)
		c[m] = r->pt[idx[m]].search.c;
	tune_pick(c, (size_t)n, &r->opts.goal, &r->best, &r->runner);
	r->best = r->best < 0 ? -1 : idx[r->best];
	r->runner = r->runner < 0 ? -1 : idx[r->runner];
}

/* confirm - the winner, the runner-up, epoll:block and the recipe alternated, round by round; the pick again. */
static void confirm(struct run *ru)
{
	struct tune_report *r = ru->r;
	int set[4], n = 0, two[2], nt = 0;
	const int want[4] = { r->best, r->runner, 0, 1 };
	struct tune_cand c[2];

	r->search_best = r->best;
	if (r->best < 0)
		return;
	for (int k = 0; k < 4; k++) {
		bool dup = want[k] < 0 || r->pt[want[k]].failed;

		for (int m = 0; m < n; m++)
			dup |= set[m] == want[k];
		if (!dup)
			set[n++] = want[k];
	}
	r->confirm_s = (0.4 * r->opts.budget_s - TUNE_RUN_OVERHEAD_S * TUNE_CONFIRM_ROUNDS * n) /
		       (TUNE_CONFIRM_ROUNDS * n);
	if (r->confirm_s < TUNE_MIN_CONFIRM_S)
		r->confirm_s = TUNE_MIN_CONFIRM_S;
	for (int round = 0; round < TUNE_CONFIRM_ROUNDS && !*ru->stop; round++)
		for (int m = 0; m < n && !*ru->stop; m++) {
			char what[32];

			snprintf(what, sizeof(what), "confirm %d/%d", round + 1, TUNE_CONFIRM_ROUNDS);
			progress(ru, what, m + 1, n, &r->pt[set[m]], r->confirm_s);
			measure(ru, set[m], r->confirm_s, 0);
		}
	if (*ru->stop)
		return;
	r->confirmed = true;
	/* the answer is the confirmation's: the winner and the runner-up judged again, side by side */
	for (int k = 0; k < 2; k++)
		if (want[k] >= 0 && !r->pt[want[k]].failed && r->pt[want[k]].confirm.seconds > 0) {
			c[nt] = r->pt[want[k]].confirm.c;
			c[nt].alive = true;
			two[nt++] = want[k];
		}
	int b = -1, rn = -1;

	r->met = nt && tune_pick(c, (size_t)nt, &r->opts.goal, &b, &rn);
	r->best = b < 0 ? -1 : two[b];
	r->runner = rn < 0 ? -1 : two[rn];
}

int tune_run(struct tune_report *r, volatile sig_atomic_t *stop)
{
	struct run ru = { .r = r, .stop = stop, .t0 = now_s() };
	char err[600];
	int ret = -1;

	r->best = r->runner = r->search_best = -1;
	ru.cr = calloc(1, sizeof(*ru.cr));
	ru.res = calloc(1, sizeof(*ru.res));
	if (!ru.cr || !ru.res) {
		snprintf(r->error, sizeof(r->error), "out of memory");
		goto out;
	}
	if (tool_read_net_sysctl("busy_read", &r->found_busy_read) || tool_read_net_sysctl("busy_poll", &r->found_busy_poll))
		r->found_busy_read = r->found_busy_poll = -1;
	struct cmp_opts *co = &ru.cr->opts;

	co->quiet = true;
	co->nmodes = r->n;
	co->threads = r->opts.threads;
	co->request_size = r->opts.request_size;
	co->response_size = r->opts.response_size;
	co->warmup_s = TUNE_MIN_RUN_S;
	co->runs = 1;
	co->loopback = r->opts.loopback;
	memcpy(co->client_cpus, r->opts.client_cpus, sizeof(co->client_cpus));
	memcpy(co->server_cpus, r->opts.server_cpus, sizeof(co->server_cpus));
	co->nclient_cpus = r->opts.nclient_cpus;
	co->nserver_cpus = r->opts.nserver_cpus;
	for (int i = 0; i < r->n; i++) {
		co->client_mode[i] = co->server_mode[i] = r->pt[i].mode;
		snprintf(co->client_modes[i], sizeof(co->client_modes[0]), "%s", r->pt[i].mode_text);
		snprintf(co->server_modes[i], sizeof(co->server_modes[0]), "%s", r->pt[i].mode_text);
		snprintf(co->labels[i], sizeof(co->labels[0]), "%s", r->pt[i].label);
	}
	if (r->opts.remote.remote[0]) {
		co->remote = r->opts.remote;
		snprintf(co->server_addr, sizeof(co->server_addr), "%s", r->opts.server_addr);
		snprintf(co->server_ip, sizeof(co->server_ip), "%s", r->opts.server_ip);
		if (cmp_remote_open(ru.cr, &ru.rr, &ru.side, err, sizeof(err))) {
			snprintf(r->error, sizeof(r->error), "%s", err);
			goto out;
		}
		remote_space(&ru);
	} else if (cmp_bed_open(ru.cr, "tune", stop, &ru.bed, &ru.side)) {
		goto out; /* said */
	}
	snprintf(r->path, sizeof(r->path), "%s", ru.cr->path);
	search(&ru);
	confirm(&ru);
	ret = 0;
out:
	cmp_bed_close(ru.bed);
	/* the agents put back what they changed: the NICs' coalescing, the NAPIs */
	if (cmp_remote_close(ru.rr, err, sizeof(err)) && !r->error[0]) {
		snprintf(r->error, sizeof(r->error), "%s", err);
		r->restore_left++;
	}
	recipe_off(&ru);
	if (*stop)
		r->interrupted = true;
	free(ru.cr);
	free(ru.res);
	return ret;
}
