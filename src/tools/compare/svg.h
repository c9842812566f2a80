/* SPDX-License-Identifier: MIT */
/*
 * The few SVG pieces compare's charts share (tools/compare/plot.c,
 * plot_rate.c): escaped text, one colour per mode, axes (whole decades on a log
 * scale, round steps on a linear one) with their gridlines, a legend entry.
 * Plain SVG 1.1 with no script, so any browser or xmllint reads it.
 */
#ifndef BP_TOOLS_COMPARE_SVG_H
#define BP_TOOLS_COMPARE_SVG_H

#include <stdbool.h>
#include <stdio.h>

/* The layout every row of compare's plot shares: its width, the charts' top and height. */
#define SVG_W 1400
#define SVG_PLOT_Y 50
#define SVG_PLOT_H 270

/* svg_color - mode i's colour (the palette repeats after a dozen). */
const char *svg_color(int i);
/* svg_text - s as XML text or attribute value (the five special characters escaped). */
void svg_text(FILE *f, const char *s);

/* An axis: the values lo..hi over pixels at..at+len (a y axis grows upward). */
struct svg_axis {
	double lo, hi;
	bool log;
	double at, len;
	bool vertical;
};

/*
 * svg_axis_log - a log axis of whole decades around lo..hi (both above 0), so the
 * gridlines read 1, 10, 100 ...; svg_axis_lin - 0 to hi rounded up to a whole
 * number of steps of 1, 2 or 5 times a power of ten (hi 0: 0..1).
 */
void svg_axis_log(struct svg_axis *a, double lo, double hi, bool vertical, double at, double len);
void svg_axis_lin(struct svg_axis *a, double hi, bool vertical, double at, double len);
/* svg_pos - where value v falls, in pixels (clamped to the axis). */
double svg_pos(const struct svg_axis *a, double v);
/*
 * svg_grid - the axis' gridlines across the chart (from cross, cross_len long) and
 * their labels beside it ("20k" for thousands).
 */
void svg_grid(FILE *f, const struct svg_axis *a, double cross, double cross_len);
/* svg_legend - entry s of a legend cols to a line, col_w apart, at (x, y): a swatch, the label, note ("" none). */
void svg_legend(FILE *f, int s, int cols, int col_w, int x, int y, const char *color, const char *label,
		const char *note);

#endif
