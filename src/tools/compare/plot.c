/* SPDX-License-Identifier: MIT */
/*
 * busypoll compare --plot: one row per flow count. Closed loop: on the left the
 * latency percentiles P50..P99.99 of every mode on one log-scale chart (one series
 * per mode), on the right the throughput of the same modes as bars, same colours.
 * With --rates each row is plot_rate.c's two charts against the achieved rate.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tools/compare/compare.h"
#include "tools/compare/svg.h"

#define W SVG_W /* room for the mode beside each throughput bar */
#define LAT_X 70
#define LAT_W 520
#define BAR_X 700
#define BAR_W 260
#define PLOT_Y SVG_PLOT_Y
#define PLOT_H SVG_PLOT_H

static const char *const pct_names[5] = { "P50", "P90", "P99", "P99.9", "P99.99" };

static void mode_label(const struct cmp_report *r, int mi, char *buf, size_t len)
{
	snprintf(buf, len, "%s", r->opts.labels[mi]);
}

/* Room for the charts, the axis labels and a legend (--rates: two entries per line, and the closed loop's). */
static int row_height(const struct cmp_report *r)
{
	return PLOT_Y + PLOT_H + 40 + (r->opts.nmodes + 2) / 2 * 14 + 24;
}

static void plot_row(FILE *f, const struct cmp_report *r, int flows, int row)
{
	double lo = INFINITY, hi = 0, tmax = 0;
	int y0 = row * row_height(r);
	int n = 0;
	struct svg_axis ax;

	for (int i = 0; i < r->ncells; i++) {
		const struct cmp_cell *c = &r->cells[i];

		if (c->flows != flows || c->failed || !c->runs)
			continue;
		n++;
		for (int k = 2; k <= 6; k++) {
			if (c->lat_us[k] > 0 && c->lat_us[k] < lo)
				lo = c->lat_us[k];
			if (c->lat_us[k] > hi)
				hi = c->lat_us[k];
		}
		if (c->tps > tmax)
			tmax = c->tps;
	}
	if (!n)
		return;
	/* Whole decades, so the gridlines read 1, 10, 100, 1000 us. */
	svg_axis_log(&ax, lo, hi, true, PLOT_Y, PLOT_H);

	fprintf(f, "<g class=\"row\" data-flows=\"%d\" transform=\"translate(0,%d)\">\n", flows, y0);
	fprintf(f, "<text x=\"%d\" y=\"30\" font-size=\"16\" font-weight=\"bold\">%d flow%s: latency percentiles "
		   "(us, log scale)</text>\n",
		LAT_X, flows, flows == 1 ? "" : "s");
	fprintf(f, "<text x=\"%d\" y=\"30\" font-size=\"16\" font-weight=\"bold\">transactions/s</text>\n", BAR_X);
	/* latency axes */
	fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#444\"/>\n", LAT_X,
		PLOT_Y, LAT_W, PLOT_H);
	svg_grid(f, &ax, LAT_X, LAT_W);
	for (int k = 0; k < 5; k++)
		fprintf(f, "<text x=\"%.1f\" y=\"%d\" font-size=\"12\" text-anchor=\"middle\">%s</text>\n",
			LAT_X + (k + 0.5) * LAT_W / 5.0, PLOT_Y + PLOT_H + 18, pct_names[k]);
	/* one series per mode */
	for (int i = 0, s = 0; i < r->ncells; i++) {
		const struct cmp_cell *c = &r->cells[i];
		const char *color = svg_color(c->mode_idx);
		char label[300];

		if (c->flows != flows || c->failed || !c->runs)
			continue;
		mode_label(r, c->mode_idx, label, sizeof(label));
		fputs("<g class=\"series\" data-mode=\"", f);
		svg_text(f, label);
		fprintf(f, "\" data-flows=\"%d\">\n<title>", flows);
		svg_text(f, label);
		fputs("</title>\n<polyline fill=\"none\" stroke-width=\"2\" stroke=\"", f);
		fprintf(f, "%s\" points=\"", color);
		for (int k = 0; k < 5; k++)
			fprintf(f, "%.1f,%.1f ", LAT_X + (k + 0.5) * LAT_W / 5.0, svg_pos(&ax, c->lat_us[k + 2]));
		fputs("\"/>\n", f);
		/* throughput bar, same colour */
		{
			double bh = (double)PLOT_H / n;
			double bw = tmax > 0 ? c->tps / tmax * BAR_W : 0;
			double by = PLOT_Y + s * bh;

			fprintf(f, "<rect x=\"%d\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>\n", BAR_X, by + 2,
				bw, bh - 4, color);
			/* the spread of the runs (min..max) over the median's bar */
			if (c->runs > 1 && tmax > 0) {
				double x0 = BAR_X + c->tps_min / tmax * BAR_W, x1 = BAR_X + c->tps_max / tmax * BAR_W;
				double ym = by + bh / 2;

				fprintf(f, "<path class=\"spread\" stroke=\"#000\" fill=\"none\" d=\"M%.1f,%.1f H%.1f "
					   "M%.1f,%.1f V%.1f M%.1f,%.1f V%.1f\"/>\n",
					x0, ym, x1, x0, ym - 4, ym + 4, x1, ym - 4, ym + 4);
			}
			/* the figure and which mode it is, beside the bar */
			fprintf(f, "<text class=\"bar-label\" x=\"%.1f\" y=\"%.1f\" font-size=\"11\">%.0f", BAR_X + bw + 4,
				by + bh / 2 + 4, c->tps);
			if (c->runs > 1)
				fprintf(f, " (%.0f..%.0f)", c->tps_min, c->tps_max);
			fputs(" ", f);
			svg_text(f, label);
			fputs("</text>\n", f);
		}
		/* legend entry under the charts */
		svg_legend(f, s, 3, 330, LAT_X, PLOT_Y + PLOT_H + 28, color, label,
			   c->proof_missing ? " (!: no busy-poll proof)" : "");
		fputs("</g>\n", f);
		s++;
	}
	fputs("</g>\n", f);
}

int compare_plot(const char *path, const struct cmp_report *r, char *err, size_t errlen)
{
	int rows = r->opts.nflows;
	FILE *f = fopen(path, "w");

	if (!f) {
		snprintf(err, errlen, "--plot %s: %s", path, strerror(errno));
		return -errno;
	}
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" height=\"%d\" "
		   "font-family=\"sans-serif\">\n",
		W, rows * row_height(r) + 30);
	fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n<title>busypoll compare</title>\n");
	for (int i = 0; i < rows; i++)
		if (r->opts.rates_given)
			plot_rate_row(f, r, r->opts.flows[i], i * row_height(r));
		else
			plot_row(f, r, r->opts.flows[i], i);
	fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"11\" fill=\"#555\">", LAT_X, rows * row_height(r) + 14);
	svg_text(f, r->path);
	fprintf(f, "; kernel ");
	svg_text(f, r->kernel);
	{
		char cb[256], sb[256];

		fprintf(f, "; client CPUs %s, server CPUs %s</text>\n</svg>\n",
			cpu_list(r->opts.client_cpus, r->opts.nclient_cpus, cb, sizeof(cb)),
			cpu_list(r->opts.server_cpus, r->opts.nserver_cpus, sb, sizeof(sb)));
	}
	if (fclose(f)) {
		snprintf(err, errlen, "--plot %s: %s", path, strerror(errno));
		return -errno;
	}
	return 0;
}
