/* SPDX-License-Identifier: MIT */
/* busypoll rr: the command around rr_server_* and rr_client_run. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools/common/commands.h"
#include "tools/common/options.h"
#include "tools/common/server.h"
#include "tools/rr/rr.h"

static volatile sig_atomic_t *stop_requested;

static int run_server(const struct rr_opts *o)
{
	struct rr_server *s;
	char err[256];
	int ret = rr_server_start(o, &s, err, sizeof(err));

	if (ret) {
		bp_tool_error("rr", "%s", err);
		/* a port in use or not ours, an address not here, a mode or a priority not allowed: bad input */
		return (ret == -EOPNOTSUPP || ret == -EPERM || ret == -EADDRINUSE || ret == -EINVAL || ret == -EACCES ||
			ret == -EADDRNOTAVAIL)
			       ? BP_EXIT_USAGE : BP_EXIT_FAIL;
	}
	if (!o->quiet)
		fprintf(stderr, "busypoll rr server: listening on port %u (tcp and udp), %d thread%s, mode %s\n",
			rr_server_port(s), o->threads, o->threads == 1 ? "" : "s", o->mode_text);
	srv_wait(stop_requested);
	rr_server_stop(s);
	return BP_EXIT_OK;
}

int cmd_rr(int argc, char **argv)
{
	struct rr_opts o;
	struct rr_result *res;
	char err[512];
	int ret;

	ret = rr_parse_opts(argc, argv, &o, err, sizeof(err));
	if (ret == 1)
		return BP_EXIT_OK;
	if (ret) {
		bp_tool_error("rr", "%s", err);
		return BP_EXIT_USAGE;
	}
	stop_requested = tool_catch_stop_signals();
	if (o.server)
		return run_server(&o);

	res = malloc(sizeof(*res));
	if (!res) {
		bp_tool_error("rr", "out of memory");
		return BP_EXIT_FAIL;
	}
	ret = rr_client_run(&o, stop_requested, res, err, sizeof(err));
	/* What was measured is printed, a failure's partial results too (with the reason). */
	if (!ret || rr_measured(res))
		rr_print(stdout, res, o.format);
	if (ret) {
		bp_tool_error("rr", "%s", err);
		free(res);
		/* a host that does not resolve, a descriptor limit, a mode or priority not allowed: bad input */
		return (ret == -EINVAL || ret == -EMFILE || ret == -EOPNOTSUPP || ret == -EPERM) ? BP_EXIT_USAGE
												     : BP_EXIT_FAIL;
	}
	ret = res->interrupted ? BP_EXIT_INTERRUPTED : BP_EXIT_OK;
	free(res);
	return ret;
}
