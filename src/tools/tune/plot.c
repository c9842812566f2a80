/* SPDX-License-Identifier: MIT */
/*
 * busypoll tune --plot: one chart, P99 (log scale) against the CPUs both ends used,
 * a point per measured candidate with its P99 interval as a bar: the confirmation's
 * figures where it was confirmed, else the search's. The Pareto front of the
 * proven points (tune_pareto) is drawn as a line, the goal as a dashed line, the
 * recommendation ringed and the two baselines drawn as squares; a busy-poll point
 * without the proof is hollow. Contract in tools/tune/tune.h.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/compare/svg.h"
#include "tools/tune/tune.h"

#define X0 80
#define CW 760
#define Y0 60
#define CH 420
#define LEGEND_X (X0 + CW + 40)
#define LEGEND_W 500
#define W (LEGEND_X + LEGEND_W)

/* The points drawn: the measured ones, with their figures and their place on the front. */
struct plot_pts {
	struct tune_cand c[TUNE_MAX_CANDS]; /* the view drawn; NaN P99 for one not measured */
	int idx[TUNE_MAX_CANDS];            /* into r->pt */
	bool front[TUNE_MAX_CANDS];
	int n;
};

static void collect(const struct tune_report *r, struct plot_pts *pp)
{
	struct tune_cand proven[TUNE_MAX_CANDS];

	pp->n = 0;
	for (int i = 0; i < r->n; i++) {
		const struct tune_cand *c = tune_final_view(&r->pt[i]);

		if (!(c->nsamples > 0) || isnan(c->p99) || isnan(c->cpu))
			continue;
		pp->idx[pp->n] = i;
		pp->c[pp->n] = *c;
		/* the unproven are drawn but are never on the front: their figures are not the mode's */
		proven[pp->n] = *c;
		if (!tune_proven(c))
			proven[pp->n].p99 = NAN;
		pp->n++;
	}
	tune_pareto(proven, (size_t)pp->n, pp->front);
}

static int cmp_cpu(const void *a, const void *b)
{
	const struct tune_cand *x = a, *y = b;

	return (x->cpu > y->cpu) - (x->cpu < y->cpu);
}

/* front_line - the front as a step line: from each point right to the next one's CPU, then down. */
static void front_line(FILE *f, const struct plot_pts *pp, const struct svg_axis *ax, const struct svg_axis *ay)
{
	struct tune_cand v[TUNE_MAX_CANDS];
	int k = 0;

	for (int i = 0; i < pp->n; i++)
		if (pp->front[i])
			v[k++] = pp->c[i];
	if (!k)
		return;
	qsort(v, (size_t)k, sizeof(v[0]), cmp_cpu);
	fprintf(f, "<polyline class=\"pareto-front\" fill=\"none\" stroke=\"#333\" stroke-width=\"1.5\" points=\"");
	for (int i = 0; i < k; i++) {
		if (i)
			fprintf(f, "%.1f,%.1f ", svg_pos(ax, v[i].cpu), svg_pos(ay, v[i - 1].p99));
		fprintf(f, "%.1f,%.1f ", svg_pos(ax, v[i].cpu), svg_pos(ay, v[i].p99));
	}
	fprintf(f, "\"/>\n");
}

static void goal_line(FILE *f, const struct tune_report *r, const struct svg_axis *ax, const struct svg_axis *ay)
{
	const struct tune_goal *g = &r->opts.goal;

	if (g->kind == TUNE_GOAL_P99) {
		double y = svg_pos(ay, g->p99_us);

		fprintf(f, "<line class=\"goal\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#c00\" "
			   "stroke-dasharray=\"6,4\"/>\n", X0, y, X0 + CW, y);
		fprintf(f, "<text x=\"%d\" y=\"%.1f\" font-size=\"11\" fill=\"#c00\" text-anchor=\"end\">goal P99 %g us</text>\n",
			X0 + CW - 4, y - 4, g->p99_us);
	} else {
		double x = svg_pos(ax, g->cpu_budget);

		fprintf(f, "<line class=\"goal\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#c00\" "
			   "stroke-dasharray=\"6,4\"/>\n", x, Y0, x, Y0 + CH);
		fprintf(f, "<text x=\"%.1f\" y=\"%d\" font-size=\"11\" fill=\"#c00\">CPU budget %g</text>\n", x + 4,
			Y0 + 12, g->cpu_budget);
	}
}

/* point - one candidate: its interval, its marker (square for a baseline, hollow when unproven), a ring for the answer. */
static void point(FILE *f, const struct tune_report *r, const struct plot_pts *pp, int k, const struct svg_axis *ax,
		  const struct svg_axis *ay)
{
	const struct tune_cand *c = &pp->c[k];
	const struct tune_point *p = &r->pt[pp->idx[k]];
	const char *color = svg_color(pp->idx[k]);
	double x = svg_pos(ax, c->cpu), y = svg_pos(ay, c->p99);
	bool proven = tune_proven(c);
	const char *role = pp->idx[k] == r->best && r->met ? "recommendation"
			   : p->role == TUNE_BLOCK ? "baseline" : p->role == TUNE_RECIPE ? "tuned-recipe" : "candidate";

	fprintf(f, "<g class=\"%s%s\" data-label=\"", role, pp->front[k] ? " pareto" : "");
	svg_text(f, p->label);
	fprintf(f, "\" data-cpu=\"%.4f\" data-p99-us=\"%.3f\"><title>", c->cpu, c->p99);
	svg_text(f, p->label);
	fprintf(f, ": P99 %.1f us, %.2f CPUs%s</title>\n", c->p99, c->cpu, proven ? "" : ", no busy-poll proof");
	fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n", x,
		svg_pos(ay, c->p99_lo), x, isinf(c->p99_hi) ? (double)Y0 : svg_pos(ay, c->p99_hi), color);
	if (p->role == TUNE_CAND)
		fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"%s\" stroke=\"%s\"/>\n", x, y,
			proven ? color : "white", color);
	else
		fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"10\" height=\"10\" fill=\"%s\" stroke=\"%s\"/>\n", x - 5,
			y - 5, color, color);
	if (pp->idx[k] == r->best && r->met)
		fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"10\" fill=\"none\" stroke=\"#000\" stroke-width=\"2\"/>\n"
			   "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" font-weight=\"bold\">answer</text>\n", x, y, x + 13,
			y - 8);
	fputs("</g>\n", f);
}

int tune_plot(const char *path, const struct tune_report *r, char *err, size_t errlen)
{
	struct plot_pts *pp = calloc(1, sizeof(*pp));
	struct svg_axis ax, ay;
	double lo = INFINITY, hi = 0, cmax = 0;
	FILE *f;
	int s = 0, e;

	if (!pp) {
		snprintf(err, errlen, "--plot %s: out of memory", path);
		return -ENOMEM;
	}
	collect(r, pp);
	for (int k = 0; k < pp->n; k++) {
		const struct tune_cand *c = &pp->c[k];

		lo = fmin(lo, c->p99_lo > 0 ? c->p99_lo : c->p99);
		hi = fmax(hi, isinf(c->p99_hi) ? c->p99 : c->p99_hi);
		cmax = fmax(cmax, c->cpu);
	}
	if (r->opts.goal.kind == TUNE_GOAL_P99) {
		lo = fmin(lo, r->opts.goal.p99_us);
		hi = fmax(hi, r->opts.goal.p99_us);
	} else {
		cmax = fmax(cmax, r->opts.goal.cpu_budget);
	}
	if (!(lo > 0))
		lo = 1;
	if (hi < lo)
		hi = lo;
	svg_axis_lin(&ax, cmax, false, X0, CW);
	svg_axis_log(&ay, lo, hi, true, Y0, CH);
	f = fopen(path, "w");
	if (!f) {
		e = errno;
		snprintf(err, errlen, "--plot %s: %s", path, strerror(e));
		free(pp);
		return -e;
	}
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		   "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" height=\"%d\" "
		   "font-family=\"sans-serif\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
		   "<title>busypoll tune</title>\n", W, Y0 + CH + 60);
	fprintf(f, "<text x=\"%d\" y=\"24\" font-size=\"14\">busypoll tune: goal ", X0);
	svg_text(f, r->opts.goal_text);
	fprintf(f, ", P99 against CPU (both ends); the line is the Pareto front of the proven</text>\n");
	svg_grid(f, &ay, X0, CW);
	svg_grid(f, &ax, Y0, CH);
	fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"12\" text-anchor=\"middle\">CPUs, both ends</text>\n",
		X0 + CW / 2, Y0 + CH + 34);
	fprintf(f, "<text x=\"18\" y=\"%d\" font-size=\"12\" transform=\"rotate(-90 18 %d)\" text-anchor=\"middle\">"
		   "P99 us (log), bar: 95%% interval</text>\n", Y0 + CH / 2, Y0 + CH / 2);
	goal_line(f, r, &ax, &ay);
	front_line(f, pp, &ax, &ay);
	for (int k = 0; k < pp->n; k++)
		point(f, r, pp, k, &ax, &ay);
	for (int k = 0; k < pp->n; k++) {
		const struct tune_point *p = &r->pt[pp->idx[k]];
		const char *note = pp->idx[k] == r->best && r->met ? "  (answer)" : !tune_proven(&pp->c[k]) ? "  (!: no proof)"
				   : p->confirm.seconds > 0 ? "  (confirmed)" : "";

		svg_legend(f, s++, 1, LEGEND_W, LEGEND_X, Y0, svg_color(pp->idx[k]), p->label, note);
	}
	fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"11\" fill=\"#555\">", X0, Y0 + CH + 54);
	svg_text(f, r->path);
	fprintf(f, "; circles: candidates (hollow: busy-polled without BusyPollRxPackets), squares: the baselines</text>\n"
		   "</svg>\n");
	free(pp);
	if (fclose(f)) {
		e = errno;
		snprintf(err, errlen, "--plot %s: %s", path, strerror(e));
		return -e;
	}
	return 0;
}
