/* SPDX-License-Identifier: MIT */
/*
 * busypoll tune: the answer as lines to apply, the confirmation beside the
 * baselines, and every candidate (table, json, csv; contract in tools/tune/tune.h).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tools/common/emit.h"
#include "tools/tune/tune.h"

static const char *const role_names[] = { "candidate", "baseline", "tuned-recipe" };

static double miss(const struct tune_report *r, const struct tune_cand *c)
{
	return r->opts.goal.kind == TUNE_GOAL_P99 ? c->p99 - r->opts.goal.p99_us : c->cpu - r->opts.goal.cpu_budget;
}

const struct tune_cand *tune_final_view(const struct tune_point *p)
{
	return p->confirm.seconds > 0 ? &p->confirm.c : &p->search.c;
}

const char *tune_verdict(const struct tune_report *r, char *buf, size_t len)
{
	buf[0] = 0;
	if (r->met || r->interrupted)
		return buf;
	if (r->best < 0 && r->search_best >= 0 && r->pt[r->search_best].failed) {
		snprintf(buf, len, "no candidate is left to recommend: the search's winner, %s, failed in the "
			 "confirmation: %s", r->pt[r->search_best].label, r->pt[r->search_best].error);
		return buf;
	}
	if (r->best < 0) {
		int failed = 0, unproven = 0;

		for (int i = 0; i < r->n; i++)
			if (r->pt[i].in_search) {
				failed += r->pt[i].failed;
				unproven += !r->pt[i].failed && r->pt[i].search.seconds > 0 && !tune_proven(&r->pt[i].search.c);
			}
		snprintf(buf, len, "no candidate is left to recommend: %d failed or could not keep up with the offered "
			 "rate (json: each one's error; lower --rate or add --flows), %d busy-polled without "
			 "BusyPollRxPackets", failed, unproven);
		return buf;
	}
	const struct tune_cand *c = tune_final_view(&r->pt[r->best]);

	if (r->opts.goal.kind == TUNE_GOAL_P99)
		snprintf(buf, len, "no candidate meets p99 <= %g us: the closest, %s, has P99 %.1f us, %.1f us over",
			 r->opts.goal.p99_us, r->pt[r->best].label, c->p99, miss(r, c));
	else
		snprintf(buf, len, "no candidate fits within %.2f CPUs: the closest, %s, uses %.2f, %.2f over",
			 r->opts.goal.cpu_budget, r->pt[r->best].label, c->cpu, miss(r, c));
	return buf;
}

/* apply_lines - the settings of p as the lines that apply them. */
static void apply_lines(FILE *out, const struct tune_report *r, const struct tune_point *p)
{
	const struct bp_mode *m = &p->mode;

	fprintf(out, "  mode string       %s  (busypoll --mode; bp_mode_parse in a libbusypoll program)\n",
		p->mode_text);
	if (m->backend == BP_BACKEND_EPOLL && (m->policy == BP_POLICY_NAPI || m->policy == BP_POLICY_SUSPEND))
		fprintf(out, "  your epoll loop   ioctl(epfd, EPIOCSPARAMS, &(struct epoll_params){ .busy_poll_usecs = %u, "
			     ".busy_poll_budget = %u, .prefer_busy_poll = %d })\n",
			m->busy_usecs, m->budget ? m->budget : 8, m->prefer);
	else if (m->backend == BP_BACKEND_URING && m->policy == BP_POLICY_NAPI)
		fprintf(out, "  your io_uring     io_uring_register(fd, IORING_REGISTER_NAPI, &(struct io_uring_napi){ "
			     ".busy_poll_to = %u, .prefer_busy_poll = %d }, 1)\n", m->busy_usecs, m->prefer);
	else if (m->policy == BP_POLICY_SPIN || m->policy == BP_POLICY_HYBRID)
		fprintf(out, "  your loop         never block in the wait (timeout 0)%s; no kernel setting\n",
			m->policy == BP_POLICY_HYBRID ? " while work came recently" : "");
	if (m->backend == BP_BACKEND_EPOLL && m->policy == BP_POLICY_SUSPEND)
		fprintf(out, "  per NAPI          busypoll napi set ID defer-hard-irqs=%u gro-flush-timeout=%llu "
			     "irq-suspend-timeout=%llu  (the mode sets them itself)\n",
			m->defer_hard_irqs, (unsigned long long)m->gro_flush_ns, (unsigned long long)m->irq_suspend_ns);
	if (p->coalesce[0]) {
		char words[64];

		/* ethtool's spelling: "rx-usecs 0" for the option's "rx-usecs=0" */
		snprintf(words, sizeof(words), "%s", p->coalesce);
		for (char *c = words; *c; c++)
			if (*c == '=' || *c == ',')
				*c = ' ';
		for (int end = 0; end < 2; end++)
			fprintf(out, "  coalescing        ethtool -C %s %s  (the %s's NIC)\n", r->dev[end], words,
				end ? "server" : "client");
	}
	if (p->sysctl_usecs >= 0) {
		fprintf(out, "  sysctls           sysctl -w net.core.busy_read=%d net.core.busy_poll=%d\n",
			p->sysctl_usecs, p->sysctl_usecs);
		fprintf(out, "  tuned profile     [sysctl]\n                    net.core.busy_read=%d\n"
			     "                    net.core.busy_poll=%d\n", p->sysctl_usecs, p->sysctl_usecs);
	} else {
		fprintf(out, "  sysctls           none: net.core.busy_read and busy_poll stay as they are\n");
	}
}

static void row(FILE *out, const struct tune_point *p, const struct tune_cand *c, const char *note)
{
	char iv[48];

	if (!(c->nsamples > 0)) {
		fprintf(out, "  %-52s %s\n", p->label, p->failed ? p->error : "not measured");
		return;
	}
	snprintf(iv, sizeof(iv), "[%.1f, %.1f]", c->p99_lo, c->p99_hi);
	fprintf(out, "  %-52s %8.1f %-18s %5.2f %9.0f %8.3f%s %s\n", p->label, c->p99, iv, c->cpu, c->tps,
		c->bprx_per_tx, c->busy_poll && !tune_proven(c) ? "!" : " ", note);
}

static void print_table(FILE *out, const struct tune_report *r)
{
	const struct tune_opts *o = &r->opts;
	char rate[32], line[600];

	if (o->rate > 0)
		snprintf(rate, sizeof(rate), "%.0f/s", o->rate);
	else
		snprintf(rate, sizeof(rate), "the closed loop");
	fprintf(out, "busypoll tune: goal %s at %s, %d flow%s, %d thread%s; %s\n", o->goal_text, rate, o->flows,
		o->flows == 1 ? "" : "s", o->threads, o->threads == 1 ? "" : "s", r->path);
	int nsearch = 0;

	for (int i = 0; i < r->n; i++)
		nsearch += r->pt[i].in_search;
	fprintf(out, "search: %d candidates, %u of %u rungs (the first %.2f s each, doubling); confirmation: %d "
		     "rounds of %.2f s each\n", nsearch, r->rungs_run, r->rungs, r->first_s, TUNE_CONFIRM_ROUNDS,
		r->confirm_s);
	if (r->best >= 0 && r->met) {
		fprintf(out, "\nanswer: %s\n", r->pt[r->best].label);
		apply_lines(out, r, &r->pt[r->best]);
	} else if (!r->interrupted) {
		fprintf(out, "\n%s\n", tune_verdict(r, line, sizeof(line)));
		/* --modes leaves the baselines out of the search: say when one of them would do */
		for (int i = 0; i < r->n; i++) {
			const struct tune_cand *c = &r->pt[i].confirm.c;
			bool meets = o->goal.kind == TUNE_GOAL_P99 ? c->p99 <= o->goal.p99_us : c->cpu <= o->goal.cpu_budget;

			if (!r->pt[i].in_search && r->pt[i].confirm.seconds > 0 && tune_proven(c) && meets)
				fprintf(out, "note: %s, a baseline outside the search, meets the goal in the confirmation\n",
					r->pt[i].label);
		}
	}
	fprintf(out, "\n  %-52s %8s %-18s %5s %9s %8s\n", r->confirmed ? "confirmation" : "search", "P99 us",
		"95% interval", "CPUs", "tx/s", "bprx/tx");
	for (int i = 0; i < r->n; i++) {
		const struct tune_point *p = &r->pt[i];
		const char *note = i == r->best ? (r->met ? "<- answer" : "<- closest") : i == r->runner ? "runner-up"
				   : p->role == TUNE_BLOCK ? "baseline" : p->role == TUNE_RECIPE ? "tuned recipe" : "";

		if (r->confirmed ? p->confirm.seconds > 0 : p->in_search)
			row(out, p, r->confirmed ? &p->confirm.c : &p->search.c, note);
	}
	fprintf(out, "\n  every candidate, the search's figures (dropped after rung N):\n");
	for (int i = 0; i < r->n; i++) {
		const struct tune_point *p = &r->pt[i];
		char note[32] = "";

		if (!p->in_search)
			continue;
		if (p->dropped_at)
			snprintf(note, sizeof(note), "dropped after %d", p->dropped_at);
		row(out, p, &p->search.c, note);
	}
	for (int i = 0; i < o->nskipped; i++)
		fprintf(out, "  skipped: %s\n", o->skipped[i]);
	if (r->coal_note[0])
		fprintf(out, "  coalescing: %s\n", r->coal_note);
	fprintf(out, "\n'!' a busy-poll candidate without BusyPollRxPackets: never recommended. What does not transfer:\n"
		     "the figures are this path's (a veth test bed has no interrupt coalescing and no NIC), this kernel's\n"
		     "and this load's; measure again on the real NIC and at the real rate before trusting the CPU.\n");
	if (r->restore_left)
		fprintf(out, "warning: %d settings could not be put back; busypoll agent --restore tries again\n",
			r->restore_left);
}

static void emit_figs(struct emit *e, const char *key, const struct tune_figs *f)
{
	const struct tune_cand *c = &f->c;

	em_begin(e, key, !(f->seconds > 0));
	em_double(e, "p99_us", c->p99);
	em_double(e, "p99_lo_us", c->p99_lo);
	em_double(e, "p99_hi_us", c->p99_hi);
	em_u64(e, "latencies", f->latencies);
	em_int(e, "runs", f->nruns);
	em_double(e, "cpu", c->cpu);
	em_double(e, "tps", c->tps);
	em_double(e, "busy_poll_rx_per_tx", c->bprx_per_tx);
	em_bool(e, "proven", tune_proven(c));
	em_double(e, "seconds", f->seconds);
	em_end(e);
}

static void emit_point(struct emit *e, const struct tune_report *r, int i)
{
	const struct tune_point *p = &r->pt[i];

	em_begin(e, NULL, false);
	em_string(e, "label", p->label, sizeof(p->label));
	em_string(e, "mode", p->mode_text, sizeof(p->mode_text));
	em_string(e, "role", role_names[p->role], 32);
	if (p->sysctl_usecs >= 0)
		em_int(e, "sysctl_busy_read", p->sysctl_usecs);
	else
		em_null(e, "sysctl_busy_read");
	if (p->sysctl_usecs >= 0)
		em_int(e, "sysctl_busy_poll", p->sysctl_usecs);
	else
		em_null(e, "sysctl_busy_poll");
	if (p->coalesce[0])
		em_string(e, "coalesce", p->coalesce, sizeof(p->coalesce));
	else
		em_null(e, "coalesce");
	em_bool(e, "in_search", p->in_search);
	if (p->dropped_at)
		em_int(e, "dropped_after_rung", p->dropped_at);
	else
		em_null(e, "dropped_after_rung");
	em_bool(e, "recommended", i == r->best && r->met);
	em_bool(e, "failed", p->failed);
	em_string(e, "error", p->error, sizeof(p->error));
	emit_figs(e, "search", &p->search);
	emit_figs(e, "confirmation", &p->confirm);
	if (e->kind == EMIT_JSON) {
		em_array_begin(e, "samples");
		for (int k = 0; k < p->ns; k++) {
			const struct tune_sample *s = &p->s[k];

			em_begin(e, NULL, false);
			em_string(e, "phase", s->phase ? "search" : "confirmation", 16);
			if (s->phase)
				em_int(e, "rung", s->phase);
			else
				em_null(e, "rung");
			em_double(e, "seconds", s->seconds);
			em_u64(e, "transactions", s->transactions);
			em_double(e, "tps", s->tps);
			em_double(e, "cpu", s->cpu);
			em_double(e, "p99_us", s->p99_us);
			em_double(e, "p99_lo_us", s->p99_lo_us);
			em_double(e, "p99_hi_us", s->p99_hi_us);
			em_double(e, "busy_poll_rx_per_tx", s->bprx_per_tx);
			em_end(e);
		}
		em_array_end(e);
	}
	em_end(e);
}

static void print_json(FILE *out, const struct tune_report *r)
{
	struct emit e = { .kind = EMIT_JSON, .out = out };
	char line[600];

	em_begin(&e, NULL, false);
	em_string(&e, "goal", r->opts.goal_text, sizeof(r->opts.goal_text));
	if (r->opts.goal.kind == TUNE_GOAL_P99)
		em_double(&e, "goal_p99_us", r->opts.goal.p99_us);
	else
		em_double(&e, "cpu_budget", r->opts.goal.cpu_budget);
	if (r->opts.rate > 0)
		em_double(&e, "rate", r->opts.rate);
	else
		em_null(&e, "rate");
	em_int(&e, "flows", r->opts.flows);
	em_int(&e, "threads", r->opts.threads);
	em_string(&e, "path", r->path, sizeof(r->path));
	em_bool(&e, "remote", r->opts.remote.remote[0] != 0);
	if (r->coal_note[0])
		em_string(&e, "coalescing_note", r->coal_note, sizeof(r->coal_note));
	else
		em_null(&e, "coalescing_note");
	em_double(&e, "budget_s", r->opts.budget_s);
	em_int(&e, "rungs", r->rungs);
	em_int(&e, "rungs_run", r->rungs_run);
	em_double(&e, "first_rung_s", r->first_s);
	em_double(&e, "confirmation_run_s", r->confirm_s);
	em_int(&e, "confirmation_rounds", TUNE_CONFIRM_ROUNDS);
	em_bool(&e, "confirmed", r->confirmed);
	em_bool(&e, "met", r->met);
	em_bool(&e, "interrupted", r->interrupted);
	if (r->best >= 0)
		em_string(&e, r->met ? "recommendation" : "closest", r->pt[r->best].label, sizeof(r->pt[0].label));
	if (!r->met || r->best < 0)
		em_null(&e, "recommendation");
	tune_verdict(r, line, sizeof(line));
	if (line[0])
		em_string(&e, "verdict", line, sizeof(line));
	else
		em_null(&e, "verdict");
	if (r->found_busy_read >= 0)
		em_int(&e, "sysctl_busy_read_found", r->found_busy_read);
	else
		em_null(&e, "sysctl_busy_read_found");
	if (r->found_busy_poll >= 0)
		em_int(&e, "sysctl_busy_poll_found", r->found_busy_poll);
	else
		em_null(&e, "sysctl_busy_poll_found");
	em_int(&e, "settings_not_restored", r->restore_left);
	em_array_begin(&e, "candidates");
	for (int i = 0; i < r->n; i++)
		emit_point(&e, r, i);
	em_array_end(&e);
	em_end(&e);
	fputc('\n', out);
}

static void print_csv(FILE *out, const struct tune_report *r)
{
	struct emit e = { .kind = EMIT_CSV_HEADER, .out = out };

	if (!r->n)
		return;
	emit_point(&e, r, 0);
	fputc('\n', out);
	for (int i = 0; i < r->n; i++) {
		e = (struct emit){ .kind = EMIT_CSV_ROW, .out = out };
		emit_point(&e, r, i);
		fputc('\n', out);
	}
}

void tune_print(FILE *out, const struct tune_report *r)
{
	switch (r->opts.format) {
	case TOOL_FORMAT_JSON: print_json(out, r); break;
	case TOOL_FORMAT_CSV: print_csv(out, r); break;
	default: print_table(out, r); break;
	}
}
