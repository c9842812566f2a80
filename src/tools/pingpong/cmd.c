/* SPDX-License-Identifier: MIT */
/* busypoll pingpong: the command around pp_server_* and pp_measure (tools/pingpong/pingpong.h). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools/common/commands.h"
#include "tools/common/values.h"
#include "tools/harness/server.h"
#include "tools/pingpong/pingpong.h"

static volatile sig_atomic_t *stop_requested;

static int run_server(const struct pp_opts *o)
{
	uint64_t dropped[BP_PP_ERR_COUNT] = { 0 }, total = 0;
	struct pp_server *s;
	char err[256];
	int ret = pp_server_start(o, &s, err, sizeof(err));

	if (ret) {
		bp_tool_error("pingpong", "%s", err);
		return bp_exit_for(ret);
	}
	if (!o->quiet) {
		fprintf(stderr, "busypoll pingpong server: port %u (udp and tcp), mode %s, ",
			pp_server_port(s), o->mode_text);
		if (o->cpu >= 0)
			fprintf(stderr, "CPU %d", o->cpu);
		else
			fprintf(stderr, "not pinned");
		if (o->server_delay_us)
			fprintf(stderr, ", %u us delay", o->server_delay_us);
		fputc('\n', stderr);
	}
	srv_wait(stop_requested);
	pp_server_dropped(s, dropped, BP_PP_ERR_COUNT);
	pp_server_stop(s);
	for (int i = 1; i < BP_PP_ERR_COUNT; i++)
		total += dropped[i];
	if (total && !o->quiet) {
		fprintf(stderr, "busypoll pingpong server: dropped %llu bad messages:", (unsigned long long)total);
		for (int i = 1; i < BP_PP_ERR_COUNT; i++)
			if (dropped[i])
				fprintf(stderr, " %llu %s;", (unsigned long long)dropped[i], bp_pp_err_text(i));
		fputc('\n', stderr);
	}
	return BP_EXIT_OK;
}

/* run_client - the measurement, printed; a failure's finished runs too, with the reason. */
static int run_client(const struct pp_opts *o)
{
	struct pp_result *res = malloc(sizeof(*res));
	char err[512];
	int ret;

	if (!res) {
		bp_tool_error("pingpong", "out of memory");
		return BP_EXIT_FAIL;
	}
	ret = pp_measure(o, stop_requested, res, err, sizeof(err));
	if (!ret || pp_measured(res))
		pp_print(stdout, res, o->format);
	if (ret)
		bp_tool_error("pingpong", "%s", err);
	/* Interrupted while a run failed (the server went with the Ctrl-C): 130 wins. */
	if (*stop_requested || (!ret && res->interrupted))
		ret = BP_EXIT_INTERRUPTED;
	else
		ret = bp_exit_for(ret);
	pp_result_free(res);
	free(res);
	return ret;
}

int cmd_pingpong(int argc, char **argv)
{
	struct pp_opts o;
	char err[512];
	int ret = pp_parse_opts(argc, argv, &o, err, sizeof(err));

	if (ret)
		return bp_opts_exit("pingpong", ret, err);
	stop_requested = tool_catch_stop_signals();
	return o.server ? run_server(&o) : run_client(&o);
}
