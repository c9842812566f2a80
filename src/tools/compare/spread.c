/* SPDX-License-Identifier: MIT */
/*
 * compare's spread: a cell's runs (samples) into its median figures, the tx/s
 * spread (min..max) and mean, and a latency's spread. Pure arithmetic on the
 * samples, so a test can call it with figures made by hand.
 */
#include <math.h>
#include <stdlib.h>

#include "tools/common/values.h"
#include "tools/compare/compare.h"

/* median - of v[0..n) (n >= 1), v sorted in place. */
static double median(double *v, int n)
{
	return tool_median_doubles(v, (size_t)n);
}

void cmp_cell_fill(struct cmp_cell *c)
{
	double v[CMP_MAX_RUNS], sum = 0;
	int n = c->runs, best = -1;

	if (n < 1)
		return;
	c->tps_min = c->tps_max = c->sample[0].tps;
	for (int i = 0; i < n; i++) {
		const double t = c->sample[i].tps;

		c->tps_min = t < c->tps_min ? t : c->tps_min;
		c->tps_max = t > c->tps_max ? t : c->tps_max;
		sum += t;
		v[i] = t;
	}
	c->tps_mean = sum / n;
	c->tps = median(v, n);
	/* the transactions of the run nearest the median from below */
	for (int i = 0; i < n; i++)
		if (c->sample[i].tps <= c->tps && (best < 0 || c->sample[i].tps > c->sample[best].tps))
			best = i;
	c->transactions = c->sample[best].transactions;
#define MEDIAN_OF(field)                               \
	do {                                           \
		for (int i = 0; i < n; i++)            \
			v[i] = c->sample[i].field;     \
		c->field = median(v, n);               \
	} while (0)
	for (int k = 0; k < 8; k++) {
		MEDIAN_OF(lat_us[k]);
		MEDIAN_OF(lat_send_us[k]);
	}
	MEDIAN_OF(client_util.user);
	MEDIAN_OF(client_util.system);
	MEDIAN_OF(client_util.total);
	MEDIAN_OF(server_util.user);
	MEDIAN_OF(server_util.system);
	MEDIAN_OF(server_util.total);
	MEDIAN_OF(client_cpu_us_per_tx);
	MEDIAN_OF(server_cpu_us_per_tx);
	MEDIAN_OF(bprx_client_per_tx);
	MEDIAN_OF(bprx_server_per_tx);
	MEDIAN_OF(syscalls_client_per_tx);
	MEDIAN_OF(syscalls_server_per_tx);
	/* not known in any run (NAN): not known in the cell */
	MEDIAN_OF(direct_hit_client_per_tx);
	MEDIAN_OF(direct_hit_server_per_tx);
	for (int i = 0; i < n; i++) {
		if (isnan(c->sample[i].direct_hit_client_per_tx))
			c->direct_hit_client_per_tx = NAN;
		if (isnan(c->sample[i].direct_hit_server_per_tx))
			c->direct_hit_server_per_tx = NAN;
	}
	MEDIAN_OF(queued_pct);
	MEDIAN_OF(late_pct);
#undef MEDIAN_OF
	c->cpu_us_per_tx = c->client_cpu_us_per_tx + c->server_cpu_us_per_tx;
}

struct cmp_spread cmp_lat_spread(const struct cmp_cell *c, int k)
{
	struct cmp_spread s = { NAN, NAN, NAN };
	double sum = 0;

	for (int i = 0; i < c->runs; i++) {
		double v = c->sample[i].lat_us[k];

		s.min = i && s.min < v ? s.min : v;
		s.max = i && s.max > v ? s.max : v;
		sum += v;
	}
	if (c->runs)
		s.mean = sum / c->runs;
	return s;
}
