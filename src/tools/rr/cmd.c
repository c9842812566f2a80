/* SPDX-License-Identifier: MIT */
/* busypoll rr: the command around rr_server_* and rr_client_run. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools/common/commands.h"
#include "tools/harness/control.h"
#include "tools/common/values.h"
#include "tools/harness/server.h"
#include "tools/rr/rr.h"

static volatile sig_atomic_t *stop_requested;

struct rr_control {
	const struct rr_opts *o;
	struct rr_server *s;
};

/* rr_control - the session of the process that started us (--control-fd): HELLO says where and how we serve. */
static void rr_control(void *ctx, const struct ctl_msg *in, struct ctl_msg *out)
{
	const struct rr_control *c = ctx;

	if (in->type != CTL_HELLO) {
		srv_control_refuse("rr", in, out);
		return;
	}
	ctl_msg_init(out, CTL_HELLO_OK);
	ctl_put_text(out, CTL_T_TOOL, "rr");
	ctl_put_text(out, CTL_T_MODE, c->o->mode_text);
	ctl_put_u64(out, CTL_T_THREADS, (uint64_t)c->o->threads);
	for (int i = 0; i < c->o->threads; i++)
		ctl_put_i64(out, CTL_T_CPU, c->o->ncpus ? c->o->cpus[i % c->o->ncpus] : -1);
	ctl_put_u64(out, CTL_T_PORT, rr_server_port(c->s));
	ctl_put_u64(out, CTL_T_PID, (uint64_t)getpid());
}

static int run_server(const struct rr_opts *o)
{
	struct rr_server *s;
	char err[256];
	int ret = rr_server_start(o, &s, err, sizeof(err));

	if (ret) {
		bp_tool_error("rr", "%s%s", err, ret == -EOVERFLOW ? "; " RR_OVERLOAD_ADVICE : "");
		return bp_exit_for(ret);
	}
	if (!o->quiet)
		fprintf(stderr, "busypoll rr server: listening on port %u (tcp and udp), %d thread%s, mode %s\n",
			rr_server_port(s), o->threads, o->threads == 1 ? "" : "s", o->mode_text);
	if (o->control_fd >= 0) {
		struct rr_control c = { .o = o, .s = s };

		if (srv_serve_control(o->control_fd, stop_requested, rr_control, &c) && !o->quiet)
			fprintf(stderr, "busypoll rr server: the control session ended; stopping\n");
	} else {
		srv_wait(stop_requested);
	}
	rr_server_stop(s);
	return BP_EXIT_OK;
}

/* run_client - the measurement, printed; a failure's partial results too (with the reason). */
static int run_client(const struct rr_opts *o)
{
	struct rr_result *res = malloc(sizeof(*res));
	char err[512];
	int ret;

	if (!res) {
		bp_tool_error("rr", "out of memory");
		return BP_EXIT_FAIL;
	}
	ret = rr_client_run(o, stop_requested, res, err, sizeof(err));
	if (!ret || rr_measured(res))
		rr_print(stdout, res, o->format);
	if (ret) {
		bp_tool_error("rr", "%s%s", err, ret == -EOVERFLOW ? "; " RR_OVERLOAD_ADVICE : "");
		ret = bp_exit_for(ret);
	} else {
		ret = res->interrupted ? BP_EXIT_INTERRUPTED : BP_EXIT_OK;
	}
	free(res);
	return ret;
}

int cmd_rr(int argc, char **argv)
{
	struct rr_opts o;
	char err[512];
	int ret = rr_parse_opts(argc, argv, &o, err, sizeof(err));

	if (ret)
		return bp_opts_exit("rr", ret, err);
	stop_requested = tool_catch_stop_signals();
	return o.server ? run_server(&o) : run_client(&o);
}
