/* SPDX-License-Identifier: MIT */
/*
 * busypoll compare --plot with --rates: for each flow count the two charts that
 * let a person choose a mode at their load, both against the achieved rate
 * (transactions/s, a log axis): P50 (solid) and P99 (dashed) latency on a log scale,
 * and each side's CPU utilisation, percent of one CPU (client solid, server dashed).
 * Each chart is a <g class="chart" data-chart="latency|cpu"> holding one
 * <g class="series"> per mode and its own <g class="legend">; a series joins its
 * points in order of offered rate, only between loads measured one after the other,
 * and draws the closed loop's point apart, a hollow square (contract in
 * tools/compare/compare.h).
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "tools/compare/compare.h"
#include "tools/compare/svg.h"

#define LAT_X 70
#define CPU_X 760
#define CHART_W 560

enum chart { CHART_LATENCY, CHART_CPU };

/*
 * A point of a series: the achieved rate and its two values (P50 and P99, or client
 * and server), at the offered rate it was asked for (0: the closed loop, drawn apart);
 * measured: false for a cell that failed, a gap the lines do not cross.
 */
struct point {
	double offered, x, y[2];
	bool measured;
};

/* by_offered - the offered loads in order, the closed loop (0) after them all. */
static int by_offered(const void *a, const void *b)
{
	double x = ((const struct point *)a)->offered, y = ((const struct point *)b)->offered;

	x = x > 0 ? x : INFINITY;
	y = y > 0 ? y : INFINITY;
	return x < y ? -1 : x > y;
}

/* mode_points - the cells of (mode mi, flows) as the chart's points, in order of offered rate. */
static int mode_points(const struct cmp_report *r, int mi, int flows, enum chart chart, struct point *p)
{
	int n = 0;

	for (int i = 0; i < r->ncells && n < CMP_MAX_RATES; i++) {
		const struct cmp_cell *c = &r->cells[i];

		if (c->mode_idx != mi || c->flows != flows)
			continue;
		p[n].offered = c->rate;
		p[n].measured = c->runs > 0 && !c->failed;
		p[n].x = c->tps;
		p[n].y[0] = chart == CHART_LATENCY ? c->lat_us[2] : c->client_util.total;
		p[n].y[1] = chart == CHART_LATENCY ? c->lat_us[4] : c->server_util.total;
		n++;
	}
	qsort(p, (size_t)n, sizeof(*p), by_offered);
	return n;
}

/* measured - how many of the n points were measured. */
static int measured(const struct point *p, int n)
{
	int m = 0;

	for (int i = 0; i < n; i++)
		m += p[i].measured;
	return m;
}

/*
 * line - one of a series' two lines (k: 0 solid, 1 dashed): the open-loop points as
 * dots, joined only from one measured offered load to the next (a failed one between
 * breaks the line); the closed loop's point a hollow square, joined to none.
 */
static void line(FILE *f, const struct svg_axis *ax, const struct svg_axis *ay, const struct point *p, int n, int k,
		 const char *color)
{
	for (int i = 0; i < n;) {
		int j = i;

		while (j < n && p[j].measured && p[j].offered > 0)
			j++;
		if (j - i >= 2) {
			fprintf(f, "<polyline class=\"load-line\" fill=\"none\" stroke-width=\"2\" stroke=\"%s\"%s points=\"",
				color, k ? " stroke-dasharray=\"6,4\"" : "");
			for (int q = i; q < j; q++)
				fprintf(f, "%.1f,%.1f ", svg_pos(ax, p[q].x), svg_pos(ay, p[q].y[k]));
			fputs("\"/>\n", f);
		}
		i = j > i ? j : i + 1;
	}
	for (int i = 0; i < n; i++) {
		if (!p[i].measured)
			continue;
		if (p[i].offered > 0)
			fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n", svg_pos(ax, p[i].x),
				svg_pos(ay, p[i].y[k]), color);
		else
			fprintf(f, "<rect class=\"closed-loop\" x=\"%.1f\" y=\"%.1f\" width=\"8\" height=\"8\" fill=\"white\" "
				   "stroke-width=\"2\" stroke=\"%s\"/>\n",
				svg_pos(ax, p[i].x) - 4, svg_pos(ay, p[i].y[k]) - 4, color);
	}
}

/* legend - a chart's own legend under it: a swatch per mode drawn, and the closed loop's mark. */
static void legend(FILE *f, const struct cmp_report *r, int flows, enum chart which, int x0)
{
	struct point p[CMP_MAX_RATES];
	bool closed = false;
	int s = 0;

	fprintf(f, "<g class=\"legend\" data-chart=\"%s\">\n", which == CHART_LATENCY ? "latency" : "cpu");
	for (int mi = 0; mi < r->opts.nmodes; mi++) {
		int n = mode_points(r, mi, flows, which, p);

		if (!measured(p, n))
			continue;
		for (int i = 0; i < n; i++)
			closed |= p[i].measured && p[i].offered <= 0;
		svg_legend(f, s++, 2, CHART_W / 2, x0, SVG_PLOT_Y + SVG_PLOT_H + 28, svg_color(mi), r->opts.labels[mi], "");
	}
	if (closed)
		svg_legend(f, s, 2, CHART_W / 2, x0, SVG_PLOT_Y + SVG_PLOT_H + 28, "white",
			   "closed loop (max): hollow square, joined to none", "");
	fputs("</g>\n", f);
}

/* chart - one chart at x0: its axes over every mode's points (rate on a log scale), a series per mode, its legend. */
static void chart(FILE *f, const struct cmp_report *r, int flows, enum chart which, int x0)
{
	struct point p[CMP_MAX_RATES];
	double xlo = INFINITY, xmax = 0, lo = INFINITY, hi = 0;
	struct svg_axis ax, ay;

	for (int mi = 0; mi < r->opts.nmodes; mi++) {
		int n = mode_points(r, mi, flows, which, p);

		for (int i = 0; i < n; i++) {
			if (!p[i].measured)
				continue;
			xmax = p[i].x > xmax ? p[i].x : xmax;
			xlo = p[i].x > 0 && p[i].x < xlo ? p[i].x : xlo;
			for (int k = 0; k < 2; k++) {
				if (p[i].y[k] > 0 && p[i].y[k] < lo)
					lo = p[i].y[k];
				hi = p[i].y[k] > hi ? p[i].y[k] : hi;
			}
		}
	}
	/* a log rate axis: 5k and 20k apart, not squeezed against the left edge by a closed loop of 60k */
	svg_axis_log(&ax, isfinite(xlo) ? xlo : 1, xmax > 0 ? xmax : 10, false, x0, CHART_W);
	if (which == CHART_LATENCY)
		svg_axis_log(&ay, isfinite(lo) ? lo : 1, hi > 0 ? hi : 10, true, SVG_PLOT_Y, SVG_PLOT_H);
	else
		svg_axis_lin(&ay, hi > 100 ? hi : 100, true, SVG_PLOT_Y, SVG_PLOT_H);
	fprintf(f, "<g class=\"chart\" data-chart=\"%s\" data-rate-axis=\"%s\">\n",
		which == CHART_LATENCY ? "latency" : "cpu", ax.log ? "log" : "linear");
	fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#444\"/>\n", x0,
		SVG_PLOT_Y, CHART_W, SVG_PLOT_H);
	svg_grid(f, &ay, x0, CHART_W);
	svg_grid(f, &ax, SVG_PLOT_Y, SVG_PLOT_H);
	for (int mi = 0; mi < r->opts.nmodes; mi++) {
		int n = mode_points(r, mi, flows, which, p);

		if (!measured(p, n))
			continue;
		fputs("<g class=\"series\" data-mode=\"", f);
		svg_text(f, r->opts.labels[mi]);
		fprintf(f, "\" data-flows=\"%d\" data-points=\"%d\">\n<title>", flows, measured(p, n));
		svg_text(f, r->opts.labels[mi]);
		fputs("</title>\n", f);
		line(f, &ax, &ay, p, n, 0, svg_color(mi));
		line(f, &ax, &ay, p, n, 1, svg_color(mi));
		fputs("</g>\n", f);
	}
	legend(f, r, flows, which, x0);
	fputs("</g>\n", f);
}

void plot_rate_row(FILE *f, const struct cmp_report *r, int flows, int y0)
{
	fprintf(f, "<g class=\"row\" data-flows=\"%d\" transform=\"translate(0,%d)\">\n", flows, y0);
	fprintf(f, "<text x=\"%d\" y=\"22\" font-size=\"15\" font-weight=\"bold\">%d flow%s: P50 (solid) and P99 "
		   "(dashed) latency, us (log scale)</text>\n",
		LAT_X, flows, flows == 1 ? "" : "s");
	fprintf(f, "<text x=\"%d\" y=\"22\" font-size=\"15\" font-weight=\"bold\">CPU utilisation, %% of one CPU: "
		   "client (solid), server (dashed)</text>\n",
		CPU_X);
	fprintf(f, "<text x=\"%d\" y=\"40\" font-size=\"11\" fill=\"#555\">against the achieved rate, "
		   "transactions/s, log scale (offered: ", LAT_X);
	svg_text(f, r->opts.rates_text);
	fputs(")</text>\n", f);
	chart(f, r, flows, CHART_LATENCY, LAT_X);
	chart(f, r, flows, CHART_CPU, CPU_X);
	fputs("</g>\n", f);
}
