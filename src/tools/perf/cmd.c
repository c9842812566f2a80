/* SPDX-License-Identifier: MIT */
/* busypoll perf: the command around perf_parse_opts and perf_sweep (tools/perf/perf.h). */
#include <stdio.h>

#include "tools/common/commands.h"
#include "tools/perf/perf.h"
#include "tools/common/values.h"

int cmd_perf(int argc, char **argv)
{
	static struct perf_opts o;
	char err[512];
	int ret = perf_parse_opts(argc, argv, &o, err, sizeof(err));

	if (ret)
		return bp_opts_exit("perf", ret, err);
	if (o.notes[0])
		/* fio's options that do not apply: said once, never silently (perf_parse_opts kept why) */
		fprintf(stderr, "busypoll perf: fio options that do not apply here: %s\n", o.notes);
	return perf_sweep(&o, tool_catch_stop_signals(), stdout);
}
