/* SPDX-License-Identifier: MIT */
/*
 * compare's spread (cmp_cell_fill): runs made by hand into a cell's median, tx/s
 * min..max and mean; an even count takes the middle two's mean; the transactions
 * are the run at (or just below) the median's; a cell without runs is left alone.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "tools/compare/compare.h"

static void odd_runs(void **state)
{
	static const double tps[] = { 300, 100, 200 };
	struct cmp_cell c;

	(void)state;
	memset(&c, 0, sizeof(c));
	for (int i = 0; i < 3; i++) {
		c.sample[i].tps = tps[i];
		c.sample[i].transactions = (uint64_t)tps[i] * 10;
		c.sample[i].lat_us[2] = 10 * (i + 1);
		c.sample[i].client_cpu_us_per_tx = 1;
		c.sample[i].server_cpu_us_per_tx = i;
	}
	c.runs = 3;
	cmp_cell_fill(&c);
	if (c.tps != 200 || c.tps_min != 100 || c.tps_max != 300 || c.tps_mean != 200)
		fail_msg("tps median/min/max/mean %g %g %g %g, want 200 100 300 200", c.tps, c.tps_min, c.tps_max,
			 c.tps_mean);
	if (c.transactions != 2000)
		fail_msg("transactions %llu, want 2000 (the median run's)", (unsigned long long)c.transactions);
	if (c.lat_us[2] != 20)
		fail_msg("P50 %g, want the median of the runs' P50s, 20", c.lat_us[2]);
	if (c.cpu_us_per_tx != 2)
		fail_msg("CPU us/tx %g, want client 1 + server median 1", c.cpu_us_per_tx);
}

static void even_runs(void **state)
{
	static const double tps[] = { 100, 400, 200, 900 };
	struct cmp_cell c;

	(void)state;
	memset(&c, 0, sizeof(c));
	for (int i = 0; i < 4; i++)
		c.sample[i] = (struct cmp_sample){ .tps = tps[i], .transactions = (uint64_t)tps[i] };
	c.runs = 4;
	cmp_cell_fill(&c);
	if (c.tps != 300 || c.tps_mean != 400 || c.tps_min != 100 || c.tps_max != 900)
		fail_msg("even count: median %g mean %g min %g max %g, want 300 400 100 900", c.tps, c.tps_mean,
			 c.tps_min, c.tps_max);
	if (c.transactions != 200)
		fail_msg("transactions %llu, want 200 (the run just below the median)", (unsigned long long)c.transactions);
}

static void no_runs(void **state)
{
	struct cmp_cell c;

	(void)state;
	memset(&c, 0, sizeof(c));
	c.tps = 7;
	cmp_cell_fill(&c);
	if (c.tps != 7)
		fail_msg("a cell without runs was changed (tps %g): nothing to fill it from", c.tps);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(odd_runs),
		cmocka_unit_test(even_runs),
		cmocka_unit_test(no_runs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
