/* SPDX-License-Identifier: MIT */
/*
 * busypoll pingpong: a run's figures and the averages over runs (contract in
 * tools/pingpong/pingpong.h). Pure arithmetic, so the unit tests can feed it known samples.
 *
 * "Each figure is the average of N runs", as in the experiment this reproduces:
 * min, mean and every percentile of a row are the mean of that figure over its
 * runs, not a figure of all samples pooled (the row's pooled histogram is kept
 * too, in json). The spread is the sample standard deviation of the run means,
 * which says how far apart repeated runs land.
 */
#include <math.h>
#include <string.h>

#include "tools/pingpong/pingpong.h"

void pp_run_figures(const struct bp_hist *h, struct pp_run *r)
{
	r->n = h->count;
	if (!h->count) {
		r->min_us = r->mean_us = r->p50_us = r->p99_us = r->p999_us = r->max_us = NAN;
		return;
	}
	/* min, max and mean are exact; percentiles within the histogram's 1%. */
	r->min_us = (double)h->min / 1e3;
	r->max_us = (double)h->max / 1e3;
	r->mean_us = bp_hist_mean(h) / 1e3;
	r->p50_us = (double)bp_hist_percentile(h, 50) / 1e3;
	r->p99_us = (double)bp_hist_percentile(h, 99) / 1e3;
	r->p999_us = (double)bp_hist_percentile(h, 99.9) / 1e3;
}

void pp_runs_aggregate(const struct pp_run *runs, int n, struct pp_agg *a)
{
	double sum_mean = 0, sum_min = 0, sum_p50 = 0, sum_p99 = 0, sum_p999 = 0, sum_max = 0;
	double ss = 0;
	int k = 0;

	memset(a, 0, sizeof(*a));
	for (int i = 0; i < n; i++) {
		const struct pp_run *r = &runs[i];

		if (!r->n)
			continue;
		if (k == 0 || r->mean_us < a->mean_lo_us)
			a->mean_lo_us = r->mean_us;
		if (k == 0 || r->mean_us > a->mean_hi_us)
			a->mean_hi_us = r->mean_us;
		sum_mean += r->mean_us;
		sum_min += r->min_us;
		sum_p50 += r->p50_us;
		sum_p99 += r->p99_us;
		sum_p999 += r->p999_us;
		sum_max += r->max_us;
		k++;
	}
	a->runs = k;
	if (!k) {
		a->mean_us = a->sd_us = a->mean_lo_us = a->mean_hi_us = NAN;
		a->min_us = a->p50_us = a->p99_us = a->p999_us = a->max_us = NAN;
		return;
	}
	a->mean_us = sum_mean / k;
	a->min_us = sum_min / k;
	a->p50_us = sum_p50 / k;
	a->p99_us = sum_p99 / k;
	a->p999_us = sum_p999 / k;
	a->max_us = sum_max / k;
	/* Second pass around the mean: no cancellation from sum-of-squares formulas. */
	for (int i = 0; i < n; i++)
		if (runs[i].n)
			ss += (runs[i].mean_us - a->mean_us) * (runs[i].mean_us - a->mean_us);
	a->sd_us = k > 1 ? sqrt(ss / (k - 1)) : 0;
}

double pp_per_tx(uint64_t value, const struct evidence *s)
{
	return s->valid ? ev_per(value, s->transactions) : NAN;
}
