/* SPDX-License-Identifier: MIT */
/*
 * busypoll compare --plot with --rates: for each flow count the two charts that
 * let a person choose a mode at their load, both against the achieved rate
 * (transactions/s): P50 (solid) and P99 (dashed) latency on a log scale, and each
 * side's CPU utilisation, percent of one CPU (client solid, server dashed). Each
 * chart is a <g class="chart" data-chart="latency|cpu"> holding one
 * <g class="series"> per mode, its points in order of achieved rate (contract in
 * tools/compare/compare.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "tools/compare/compare.h"
#include "tools/compare/svg.h"

#define LAT_X 70
#define CPU_X 760
#define CHART_W 560

enum chart { CHART_LATENCY, CHART_CPU };

/* A point of a series: the achieved rate, and its two values (P50 and P99, or client and server). */
struct point {
	double x, y[2];
};

static int by_x(const void *a, const void *b)
{
	double x = ((const struct point *)a)->x, y = ((const struct point *)b)->x;

	return x < y ? -1 : x > y;
}

/* mode_points - the measured cells of (mode mi, flows) as the chart's points, by achieved rate. */
static int mode_points(const struct cmp_report *r, int mi, int flows, enum chart chart, struct point *p)
{
	int n = 0;

	for (int i = 0; i < r->ncells && n < CMP_MAX_RATES; i++) {
		const struct cmp_cell *c = &r->cells[i];

		if (c->mode_idx != mi || c->flows != flows || !c->runs)
			continue;
		p[n].x = c->tps;
		p[n].y[0] = chart == CHART_LATENCY ? c->lat_us[2] : c->client_util.total;
		p[n].y[1] = chart == CHART_LATENCY ? c->lat_us[4] : c->server_util.total;
		n++;
	}
	qsort(p, (size_t)n, sizeof(*p), by_x);
	return n;
}

/* line - one of a series' two lines (k: 0 solid, 1 dashed) and its points as dots. */
static void line(FILE *f, const struct svg_axis *ax, const struct svg_axis *ay, const struct point *p, int n, int k,
		 const char *color)
{
	fprintf(f, "<polyline fill=\"none\" stroke-width=\"2\" stroke=\"%s\"%s points=\"", color,
		k ? " stroke-dasharray=\"6,4\"" : "");
	for (int i = 0; i < n; i++)
		fprintf(f, "%.1f,%.1f ", svg_pos(ax, p[i].x), svg_pos(ay, p[i].y[k]));
	fputs("\"/>\n", f);
	for (int i = 0; i < n; i++)
		fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n", svg_pos(ax, p[i].x),
			svg_pos(ay, p[i].y[k]), color);
}

/* chart - one chart at x0: its axes over every mode's points, then a series per mode. */
static void chart(FILE *f, const struct cmp_report *r, int flows, enum chart which, int x0)
{
	struct point p[CMP_MAX_RATES];
	double xmax = 0, lo = INFINITY, hi = 0;
	struct svg_axis ax, ay;

	for (int mi = 0; mi < r->opts.nmodes; mi++) {
		int n = mode_points(r, mi, flows, which, p);

		for (int i = 0; i < n; i++) {
			xmax = p[i].x > xmax ? p[i].x : xmax;
			for (int k = 0; k < 2; k++) {
				if (p[i].y[k] > 0 && p[i].y[k] < lo)
					lo = p[i].y[k];
				hi = p[i].y[k] > hi ? p[i].y[k] : hi;
			}
		}
	}
	svg_axis_lin(&ax, xmax, false, x0, CHART_W);
	if (which == CHART_LATENCY)
		svg_axis_log(&ay, isfinite(lo) ? lo : 1, hi > 0 ? hi : 10, true, SVG_PLOT_Y, SVG_PLOT_H);
	else
		svg_axis_lin(&ay, hi > 100 ? hi : 100, true, SVG_PLOT_Y, SVG_PLOT_H);
	fprintf(f, "<g class=\"chart\" data-chart=\"%s\">\n", which == CHART_LATENCY ? "latency" : "cpu");
	fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#444\"/>\n", x0,
		SVG_PLOT_Y, CHART_W, SVG_PLOT_H);
	svg_grid(f, &ay, x0, CHART_W);
	svg_grid(f, &ax, SVG_PLOT_Y, SVG_PLOT_H);
	for (int mi = 0; mi < r->opts.nmodes; mi++) {
		int n = mode_points(r, mi, flows, which, p);

		if (!n)
			continue;
		fputs("<g class=\"series\" data-mode=\"", f);
		svg_text(f, r->opts.labels[mi]);
		fprintf(f, "\" data-flows=\"%d\" data-points=\"%d\">\n<title>", flows, n);
		svg_text(f, r->opts.labels[mi]);
		fputs("</title>\n", f);
		line(f, &ax, &ay, p, n, 0, svg_color(mi));
		line(f, &ax, &ay, p, n, 1, svg_color(mi));
		fputs("</g>\n", f);
	}
	fputs("</g>\n", f);
}

void plot_rate_row(FILE *f, const struct cmp_report *r, int flows, int y0)
{
	struct point p[CMP_MAX_RATES];

	fprintf(f, "<g class=\"row\" data-flows=\"%d\" transform=\"translate(0,%d)\">\n", flows, y0);
	fprintf(f, "<text x=\"%d\" y=\"22\" font-size=\"15\" font-weight=\"bold\">%d flow%s: P50 (solid) and P99 "
		   "(dashed) latency, us (log scale)</text>\n",
		LAT_X, flows, flows == 1 ? "" : "s");
	fprintf(f, "<text x=\"%d\" y=\"22\" font-size=\"15\" font-weight=\"bold\">CPU utilisation, %% of one CPU: "
		   "client (solid), server (dashed)</text>\n",
		CPU_X);
	fprintf(f, "<text x=\"%d\" y=\"40\" font-size=\"11\" fill=\"#555\">against the achieved rate, "
		   "transactions/s (offered: ", LAT_X);
	svg_text(f, r->opts.rates_text);
	fputs(")</text>\n", f);
	chart(f, r, flows, CHART_LATENCY, LAT_X);
	chart(f, r, flows, CHART_CPU, CPU_X);
	for (int mi = 0, s = 0; mi < r->opts.nmodes; mi++)
		if (mode_points(r, mi, flows, CHART_LATENCY, p))
			svg_legend(f, s++, LAT_X, SVG_PLOT_Y + SVG_PLOT_H + 28, svg_color(mi), r->opts.labels[mi], "");
	fputs("</g>\n", f);
}
