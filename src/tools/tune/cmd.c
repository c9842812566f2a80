/* SPDX-License-Identifier: MIT */
/*
 * busypoll tune: the command. Options and the space are checked (and the budget
 * against the space) before any work; then the search runs on the test bed, the
 * journal puts back what it changed, and the answer is printed with its exit
 * status (tools/tune/tune.h).
 */
#include <stdio.h>
#include <stdlib.h>

#include "tools/common/cmd.h"
#include "tools/common/commands.h"
#include "tools/common/values.h"
#include "tools/tune/tune.h"

/* TUNE_EXIT_NOT_MET - no candidate meets the goal (the closest one is said). */
#define TUNE_EXIT_NOT_MET 3

int cmd_tune(int argc, char **argv)
{
	struct tune_report *r = calloc(1, sizeof(*r));
	volatile sig_atomic_t *stop;
	char err[600];
	int ret, nsearch;

	if (!r) {
		bp_tool_error("tune", "out of memory");
		return BP_EXIT_FAIL;
	}
	ret = tune_parse_opts(argc, argv, &r->opts, err, sizeof(err));
	if (ret) {
		ret = bp_opts_exit("tune", ret, err);
		goto out;
	}
	nsearch = tune_space(r);
	if (!nsearch) {
		ret = BP_EXIT_USAGE;
		bp_tool_error("tune", "no candidate is left to search (--modes, --fix and --keys exclude every "
			      "one); drop a --fix or name another key");
		goto out;
	}
	if (!tune_budget_ok(r, nsearch)) {
		ret = BP_EXIT_USAGE;
		bp_tool_error("tune", "--budget %.0f s is too short for %d candidates: give at least %.0f s, or "
			      "narrow the space with --modes or --fix", r->opts.budget_s, nsearch,
			      tune_budget_needed(r, nsearch));
		goto out;
	}
	stop = tool_catch_stop_signals();
	if (tune_run(r, stop)) {
		if (r->error[0])
			bp_tool_error("tune", "%s", r->error);
		ret = BP_EXIT_FAIL;
		goto out;
	}
	tune_print(stdout, r);
	if (r->opts.plot[0] && tune_plot(r->opts.plot, r, err, sizeof(err))) {
		bp_tool_error("tune", "%s", err);
		ret = BP_EXIT_FAIL;
		goto out;
	}
	if (r->error[0])
		bp_tool_error("tune", "%s", r->error);
	if (r->interrupted)
		ret = BP_EXIT_INTERRUPTED;
	else if (r->error[0] || r->restore_left)
		ret = BP_EXIT_FAIL;
	else if (!r->met) {
		bp_tool_error("tune", "%s", tune_verdict(r, err, sizeof(err)));
		ret = TUNE_EXIT_NOT_MET;
	} else
		ret = BP_EXIT_OK;
out:
	free(r);
	return ret;
}
