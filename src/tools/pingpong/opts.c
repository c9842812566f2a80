/* SPDX-License-Identifier: MIT */
/*
 * busypoll pingpong: its option table (contract in tools/pingpong/pingpong.h). The
 * common and transport layers come first (tools/common/); pingpong's own options
 * and the rules between them (one CPU, --matrix against --mode) are here.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/pingpong/pingpong.h"
#include "tools/common/values.h"

#define STR_(x) #x
#define STR(x) STR_(x)

void pp_opts_defaults(struct pp_opts *o)
{
	memset(o, 0, sizeof(*o));
	tool_net_defaults(&o->net, PP_DEFAULT_PORT);
	o->size = PP_DEFAULT_SIZE;
	o->n = PP_DEFAULT_N;
	o->runs = PP_DEFAULT_RUNS;
	o->warmup = PP_DEFAULT_WARMUP;
	o->cpu = -1;
	o->timeout_s = PP_DEFAULT_TIMEOUT_S;
	o->format = TOOL_FORMAT_TABLE;
	o->control_fd = -1;
	o->server_cpu = -1;
	agent_remote_defaults(&o->remote);
}

/* --size: out of range says what the range is for (the header). */
static int opt_size(const struct opt_spec *s, const char *name, const char *v, void *base, char *err,
		    size_t errlen)
{
	struct pp_opts *o = base;
	int r = tool_opt_size(name, v, BP_PP_MAX_LEN, &o->size, err, errlen);

	/* Not a size at all: its message stands; out of range: say what the range is for. */
	if (r && !strstr(err, "must be between"))
		return r;
	if (r || o->size < BP_PP_HDR_LEN)
		return tool_fail(err, errlen,
				 "%s %s: must be between %d (the header: magic, sequence, timestamp, server intervals) and %u bytes",
				 name, v, BP_PP_HDR_LEN, BP_PP_MAX_LEN);
	return 0;
}

/* refuse_warmup - --warmup means seconds everywhere; pingpong warms up by round trips. */
static int refuse_warmup(const struct opt_spec *s, const char *name, const char *v, void *base, char *err,
			 size_t errlen)
{
	return tool_fail(err, errlen, "%s %s: pingpong warms up by round trips: --warmup-count N (--warmup is seconds "
			 "in every other command)", name, v);
}

#define PP_FIELD(m) OPT_FIELD(struct pp_opts, m)

static const struct opt_spec pp_specs[] = {
	{ .name = "server-delay-us", .kind = OPT_INT, .role = OPT_ROLE_SERVER, PP_FIELD(server_delay_us), .lo = 0,
	  .hi = PP_MAX_DELAY_US, .arg = "N", .help = "server: busy-wait N us before each reply (0..1000000, one second)" },
	{ .name = "size", .kind = OPT_CUSTOM, .role = OPT_ROLE_CLIENT, PP_FIELD(size), .parse = opt_size, .arg = "B",
	  .help = "client: request (= reply) bytes, 48 (the header) to 65507,\nsuffix k allowed",
	  .dflt = OPT_DFLT_FIELD },
	{ .shortname = 'n', .kind = OPT_INT, .role = OPT_ROLE_CLIENT, PP_FIELD(n), .lo = 1, .hi = (long long)PP_MAX_N,
	  .arg = "N", .help = "client: measured round trips per run", .dflt = OPT_DFLT_FIELD },
	{ .name = "runs", .kind = OPT_INT, .role = OPT_ROLE_CLIENT, PP_FIELD(runs), .lo = 1, .hi = PP_MAX_RUNS,
	  .arg = "N", .help = "client: runs, 1.." STR(PP_MAX_RUNS) "; each figure is their average",
	  .dflt = OPT_DFLT_FIELD },
	{ .name = "warmup-count", .kind = OPT_INT, .role = OPT_ROLE_CLIENT, PP_FIELD(warmup), .lo = 0,
	  .hi = (long long)PP_MAX_N, .arg = "N", .help = "client: round trips before each run's measured ones",
	  .dflt = OPT_DFLT_FIELD },
	/* --warmup is seconds in every command; pingpong's warm-up is a count */
	{ .name = "warmup", .kind = OPT_CUSTOM, .flags = OPT_F_HIDDEN, .parse = refuse_warmup },
	{ .name = "matrix", .kind = OPT_FLAG, .role = OPT_ROLE_CLIENT, PP_FIELD(matrix),
	  .help = "client: three rows: no busy polling, client only, both ends,\nfor --mode (default "
		  PP_DEFAULT_MATRIX_MODE ") against the same\nbackend's :block; the server is switched per row "
		  "over\nthe control connection (on another host: through its\nagent, --remote)" },
	{ .name = "breakdown", .kind = OPT_FLAG, .role = OPT_ROLE_CLIENT, PP_FIELD(breakdown),
	  .help = "client: split each round trip into client send path, server\nrx wake-up, server processing, "
		  "server send path, client\nrx wake-up and the remainder (software timestamps)" },
	{ .name = "timeout", .kind = OPT_SECONDS, .role = OPT_ROLE_CLIENT, PP_FIELD(timeout_s),
	  .max_s = PP_MAX_TIMEOUT_S, .arg = "S", .help = "client: fail a run after S seconds without a reply",
	  .dflt = OPT_DFLT_FIELD },
	{ .name = "server-cpus", .kind = OPT_CPUS, .role = OPT_ROLE_CLIENT,
	  OPT_CPUS_FIELD(struct pp_opts, server_cpus, nserver_cpus), .arg = "CPU",
	  .help = "client --remote: the server's CPU there (one)" },
	{ .name = "server-mode", .kind = OPT_MODE, .role = OPT_ROLE_CLIENT,
	  OPT_MODE_FIELD(struct pp_opts, server_mode, server_mode_text), .arg = "MODE",
	  .help = "client --remote: the server's own mode there (default: --mode)" },
	/* how the two-host agent talks to a pingpong server it starts (tools/harness/spawn.h) */
	{ .name = "control-fd", .kind = OPT_INT, .flags = OPT_F_HIDDEN, .role = OPT_ROLE_SERVER, PP_FIELD(control_fd),
	  .lo = 3, .hi = 65535 },
};

/* pp_check - one CPU; --matrix compares its (busy) mode against blocking. */
static int pp_check(void *base, const struct opt_seen *seen, char *err, size_t errlen)
{
	struct pp_opts *o = base;
	const char *mode_arg = opt_text(seen, "mode");

	if (o->ncpus > 1)
		return tool_fail(err, errlen, "--cpus %s: one CPU (pingpong runs one loop thread per side)",
				 opt_text(seen, "cpus"));
	o->cpu = o->ncpus ? o->cpus[0] : -1;
	o->udp = !o->tcp;
	if (!o->remote.remote[0] && (opt_given(seen, "server-cpus") || opt_given(seen, "server-mode")))
		return tool_fail(err, errlen, "--%s goes with --remote HOST (the server started there)",
				 opt_given(seen, "server-cpus") ? "server-cpus" : "server-mode");
	if (o->nserver_cpus > 1)
		return tool_fail(err, errlen, "--server-cpus %s: one CPU (the server runs one loop thread)",
				 opt_text(seen, "server-cpus"));
	o->server_cpu = o->nserver_cpus ? o->server_cpus[0] : -1;
	o->port_given = opt_given(seen, "port") > 0;
	if (o->remote.remote[0] && o->server)
		return tool_fail(err, errlen, "--remote starts the server on another host: it goes with --client");
	if (!opt_given(seen, "server-mode")) {
		o->server_mode = o->mode;
		snprintf(o->server_mode_text, sizeof(o->server_mode_text), "%s", o->mode_text);
	}
	if (o->matrix) {
		/* The busy-poll mode the rows compare; the baseline is its backend's :block. */
		if (!mode_arg) {
			char merr[256];

			if (opt_mode_read("--matrix: the default mode", PP_DEFAULT_MATRIX_MODE, &o->mode, o->mode_text,
					  merr, sizeof(merr)))
				return tool_fail(err, errlen, "%s; choose one with --mode", merr);
		}
		if (o->mode.policy == BP_POLICY_BLOCK)
			return tool_fail(err, errlen,
					 "--mode %s: --matrix compares a polling mode against blocking; give one, e.g. %s",
					 mode_arg ? mode_arg : o->mode_text, PP_DEFAULT_MATRIX_MODE);
	}
	return 0;
}

static const struct opt_table pp_table = OPT_TABLE(pp_specs, pp_check);

static const struct opt_cmd pp_cmd = {
	.name = "pingpong",
	.usage = "usage: busypoll pingpong --server [options]\n"
		 "       busypoll pingpong --client HOST [options]\n"
		 "       busypoll pingpong --client HOST --remote [user@]HOST [options]\n"
		 "\n"
		 "Round trips with a timestamped payload: the client sends a request carrying\n"
		 "its send time, the server answers with the same bytes, the client takes the\n"
		 "round trip. Each figure is the average of --runs runs of -n round trips.\n"
		 "UDP unless --tcp; pin the client and the server to different CPUs (--cpus CPU),\n"
		 "or the figures mean little.\n\n",
	.epilog = "\nExit status: 0 done, 1 a run failed, 2 bad input (option, mode), 130\n"
		  "interrupted (the results so far are printed).\n",
};

int pp_parse_opts(int argc, char **argv, struct pp_opts *o, char *err, size_t errlen)
{
	const struct opt_layer layers[] = {
		{ &tool_common_table, &o->common },
		{ &tool_net_table, &o->net },
		{ &agent_remote_table, &o->remote },
		{ &pp_table, o },
	};

	pp_opts_defaults(o);
	return opt_parse(&pp_cmd, layers, 4, argc, argv, NULL, err, errlen);
}
