/* SPDX-License-Identifier: MIT */
/* busypoll perf: the command around perf_parse_opts and perf_sweep (tools/perf.h). */
#include <signal.h>
#include <stdio.h>

#include "tools/commands.h"
#include "tools/perf.h"

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

int cmd_perf(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	static struct perf_opts o;
	char err[512];
	int ret = perf_parse_opts(argc, argv, &o, err, sizeof(err));

	if (ret == 1)
		return BP_EXIT_OK;
	if (ret) {
		bp_tool_error("perf", "%s", err);
		return BP_EXIT_USAGE;
	}
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	return perf_sweep(&o, &stop_requested, stdout);
}
