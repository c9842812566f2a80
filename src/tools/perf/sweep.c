/* SPDX-License-Identifier: MIT */
/*
 * busypoll perf: every run the command line asks for (contract in tools/perf/perf.h):
 * one block per --target-config (our target restarted for each when spawned),
 * one run per numjobs of --sweep numjobs=A..B (or the one --numjobs) and, within
 * it, per rate of --sweep rate_iops=A,B,.. (or the one --rate_iops): a latency
 * against offered load curve per configuration. A single run prints the full
 * result; a sweep prints the reference table per block as it completes, and
 * json/csv once at the end.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/common/commands.h"
#include "tools/perf/perf.h"

int perf_sweep(const struct perf_opts *o, volatile sig_atomic_t *stop, FILE *out)
{
	int nconf = o->nconfigs ? o->nconfigs : 1, nrates = o->nrates ? o->nrates : 1;
	int lo = o->sweep ? o->sweep_lo : o->numjobs, hi = o->sweep ? o->sweep_hi : o->numjobs;
	int npts = (hi - lo + 1) * nrates, k = 0, rc = BP_EXIT_OK;
	bool single = !o->sweep && !o->nrates && !o->nconfigs, interrupted = false;
	struct perf_result *rows = calloc((size_t)nconf * (size_t)npts, sizeof(*rows));
	struct perf_opts *po = malloc(sizeof(*po));  /* one point's options (its rate) */
	char err[1024];

	if (!rows || !po) {
		free(rows);
		free(po);
		bp_tool_error("perf", "out of memory");
		return BP_EXIT_FAIL;
	}
	for (int c = 0; c < nconf && !interrupted; c++) {
		const char *config = o->nconfigs ? o->configs[c] : "";
		struct perf_spawn *sp = NULL;
		int first = k, ret;

		if (o->spawn) {
			ret = perf_spawn_start(o, config, &sp, err, sizeof(err));
			if (ret) {
				bp_tool_error("perf", "%s", err);
				rc = bp_exit_for(ret);
				break;
			}
		}
		for (int p = 0; p < npts && !rc && !interrupted; p++) {
			struct perf_result *r = &rows[k];
			int n = lo + p / nrates;

			if (stop && *stop) {
				interrupted = true;
				break;
			}
			*po = *o;
			if (o->nrates)
				perf_sweep_rate(po, p % nrates);
			ret = perf_run(po, n, sp, stop, r, err, sizeof(err));
			snprintf(r->target_config, sizeof(r->target_config), "%s", config);
			if (ret) {
				/* what it measured stays, printed below with the reason */
				if (r->measured)
					k++;
				bp_tool_error("perf", "%s", err);
				rc = bp_exit_for(ret);
				break;
			}
			k++;
			if (r->interrupted)
				interrupted = true;
		}
		perf_spawn_stop(sp);
		if (!single && o->format == TOOL_FORMAT_TABLE && k > first) {
			perf_print_sweep_block(out, o, config, rows + first, k - first);
			fflush(out);
		}
		if (rc)
			break;
	}
	if (k && o->fio_json && o->format == TOOL_FORMAT_JSON)
		perf_print_fio(out, rows, k, time(NULL));
	else if (k && single)
		perf_print(out, &rows[0], o->format);
	else if (k && !single && o->format != TOOL_FORMAT_TABLE)
		perf_print_sweep(out, rows, k, o->format);
	free(rows);
	free(po);
	if (rc)
		return rc;
	return interrupted ? BP_EXIT_INTERRUPTED : BP_EXIT_OK;
}
