/* SPDX-License-Identifier: MIT */
/* SVG pieces of compare's charts (contract in tools/compare/svg.h). */
#include <math.h>
#include <stdio.h>

#include "tools/compare/svg.h"

static const char *const palette[] = {
	"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
	"#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#393b79", "#637939",
};

const char *svg_color(int i)
{
	int n = (int)(sizeof(palette) / sizeof(palette[0]));

	return palette[(i % n + n) % n];
}

void svg_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&apos;", f); break;
		default: fputc(*s, f);
		}
	}
}

void svg_axis_log(struct svg_axis *a, double lo, double hi, bool vertical, double at, double len)
{
	a->lo = pow(10, floor(log10(lo)));
	a->hi = pow(10, ceil(log10(hi)));
	if (a->hi <= a->lo)
		a->hi = a->lo * 10;
	a->log = true;
	a->vertical = vertical;
	a->at = at;
	a->len = len;
}

/* step_of - the axis step for 0..hi: 1, 2 or 5 times a power of ten, five or so steps. */
static double step_of(double hi)
{
	double p = pow(10, floor(log10(hi / 5))), m = hi / 5 / p;

	return p * (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10);
}

void svg_axis_lin(struct svg_axis *a, double hi, bool vertical, double at, double len)
{
	double step = hi > 0 ? step_of(hi) : 1;

	a->lo = 0;
	a->hi = hi > 0 ? ceil(hi / step) * step : 1;
	a->log = false;
	a->vertical = vertical;
	a->at = at;
	a->len = len;
}

double svg_pos(const struct svg_axis *a, double v)
{
	double frac;

	if (a->log)
		frac = v > 0 ? (log10(v) - log10(a->lo)) / (log10(a->hi) - log10(a->lo)) : 0;
	else
		frac = (v - a->lo) / (a->hi - a->lo);
	frac = frac < 0 ? 0 : frac > 1 ? 1 : frac;
	return a->vertical ? a->at + a->len - frac * a->len : a->at + frac * a->len;
}

/* tick_text - "20k" for whole thousands, else the number. */
static void tick_text(char *buf, size_t len, double v)
{
	if (v >= 1000 && fmod(v, 1000) == 0)
		snprintf(buf, len, "%.0fk", v / 1000);
	else
		snprintf(buf, len, "%g", v);
}

void svg_grid(FILE *f, const struct svg_axis *a, double cross, double cross_len)
{
	double step = a->log ? 0 : step_of(a->hi);
	char t[32];

	for (double v = a->lo; v <= a->hi * 1.0001; v = a->log ? v * 10 : v + step) {
		double p = svg_pos(a, v);

		tick_text(t, sizeof(t), v);
		if (a->vertical) {
			fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", cross, p,
				cross + cross_len, p);
			fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">%s</text>\n", cross - 6,
				p + 4, t);
		} else {
			fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", p, cross, p,
				cross + cross_len);
			fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"middle\">%s</text>\n", p,
				cross + cross_len + 14, t);
		}
	}
}

void svg_legend(FILE *f, int s, int cols, int col_w, int x, int y, const char *color, const char *label,
		const char *note)
{
	fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\" stroke=\"#444\"/>\n",
		x + (s % cols) * col_w, y + (s / cols) * 14, color);
	fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"11\">", x + (s % cols) * col_w + 14, y + 9 + (s / cols) * 14);
	svg_text(f, label);
	svg_text(f, note);
	fputs("</text>\n", f);
}
