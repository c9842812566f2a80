/* SPDX-License-Identifier: MIT */
/*
 * busypoll pingpong: option parsing (contract in tools/pingpong.h).
 *
 * Values are checked by the helpers rr uses (tools/common/options.h), so a message names
 * the option in its long form and repeats the value as typed. Checks that involve
 * two options (side-only options, --matrix against --mode) run after the whole
 * command line is read, so the order of the options never matters.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/pingpong/pingpong.h"
#include "tools/common/options.h"

void pp_opts_defaults(struct pp_opts *o)
{
	char err[128];

	memset(o, 0, sizeof(*o));
	o->port = PP_DEFAULT_PORT;
	o->size = PP_DEFAULT_SIZE;
	o->n = PP_DEFAULT_N;
	o->runs = PP_DEFAULT_RUNS;
	o->warmup = PP_DEFAULT_WARMUP;
	o->cpu = -1;
	o->priority = -1;
	o->timeout_s = PP_DEFAULT_TIMEOUT_S;
	o->format = PP_FORMAT_TABLE;
	/* As rr does: exactly what --mode epoll:block gives (the zeroed struct is that too). */
	if (bp_mode_parse("epoll:block", &o->mode, err, sizeof(err)) != 0)
		memset(&o->mode, 0, sizeof(o->mode));
	bp_mode_format(&o->mode, o->mode_text, sizeof(o->mode_text));
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: busypoll pingpong --server [options]\n"
		"       busypoll pingpong --client HOST [options]\n"
		"\n"
		"Round trips with a timestamped payload: the client sends a request carrying\n"
		"its send time, the server answers with the same bytes, the client takes the\n"
		"round trip. Each figure is the average of --runs runs of -n round trips.\n"
		"\n"
		"  --server               answer clients (UDP and TCP) until interrupted\n"
		"  --client HOST          measure against the server on HOST\n"
		"  --mode MODE            this side's wait mode (default epoll:block; see\n"
		"                         `busypoll modes`); with --matrix the busy-poll mode to\n"
		"                         compare (default %s)\n"
		"  --cpus CPU             pin this side's loop thread (pin the client and the\n"
		"                         server to different CPUs, or the figures mean little)\n"
		"  --priority N           SO_PRIORITY 0..%d on the data sockets (7+: CAP_NET_ADMIN)\n"
		"  --port N               UDP and TCP port (default %d)\n"
		"  -q, --quiet            no log lines\n"
		"  -h, --help             this text\n"
		"server only:\n"
		"  --bind ADDR            address to listen on (default: all)\n"
		"  --server-delay-us N    busy-wait N us before each reply (0..%u)\n"
		"client only:\n"
		"  --tcp                  TCP instead of UDP\n"
		"  --size B               request (= reply) bytes, %d (the header) to %u,\n"
		"                         suffix k allowed (default %d)\n"
		"  -n N                   measured round trips per run (default %d)\n"
		"  --runs N               runs, 1..%d; each figure is their average (default %d)\n"
		"  --warmup N             round trips before each run's measured ones (default %d)\n"
		"  --matrix               three rows: no busy polling, client only, both ends,\n"
		"                         for --mode against the same backend's :block; the\n"
		"                         server is switched per row over the control connection\n"
		"  --breakdown            split each round trip into client send path, server\n"
		"                         rx wake-up, server processing, server send path, client\n"
		"                         rx wake-up and the remainder (software timestamps)\n"
		"  --timeout S            fail a run after S seconds without a reply (default %g)\n"
		"  --format F             table, json or csv (default table)\n"
		"\n"
		"Exit status: 0 done, 1 a run failed, 2 bad input (option, mode), 130 interrupted\n"
		"(the results so far are printed).\n",
		PP_DEFAULT_MATRIX_MODE, PP_MAX_PRIORITY, PP_DEFAULT_PORT, PP_MAX_DELAY_US,
		BP_PP_HDR_LEN, BP_PP_MAX_LEN, PP_DEFAULT_SIZE, PP_DEFAULT_N, PP_MAX_RUNS,
		PP_DEFAULT_RUNS, PP_DEFAULT_WARMUP, PP_DEFAULT_TIMEOUT_S);
}

/* Long-only options get values above any character. */
enum {
	OPT_SERVER = 256,
	OPT_CLIENT,
	OPT_BIND,
	OPT_TCP,
	OPT_SIZE,
	OPT_RUNS,
	OPT_WARMUP,
	OPT_MODE,
	OPT_CPUS,
	OPT_PRIORITY,
	OPT_PORT,
	OPT_FORMAT,
	OPT_MATRIX,
	OPT_BREAKDOWN,
	OPT_DELAY,
	OPT_TIMEOUT,
};

static const struct option long_opts[] = {
	{ "server", no_argument, NULL, OPT_SERVER },
	{ "client", required_argument, NULL, OPT_CLIENT },
	{ "bind", required_argument, NULL, OPT_BIND },
	{ "tcp", no_argument, NULL, OPT_TCP },
	{ "size", required_argument, NULL, OPT_SIZE },
	{ "runs", required_argument, NULL, OPT_RUNS },
	{ "warmup", required_argument, NULL, OPT_WARMUP },
	{ "mode", required_argument, NULL, OPT_MODE },
	{ "cpus", required_argument, NULL, OPT_CPUS },
	{ "priority", required_argument, NULL, OPT_PRIORITY },
	{ "port", required_argument, NULL, OPT_PORT },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "matrix", no_argument, NULL, OPT_MATRIX },
	{ "breakdown", no_argument, NULL, OPT_BREAKDOWN },
	{ "server-delay-us", required_argument, NULL, OPT_DELAY },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};
/* "+": stop at the first non-option; ":": we report errors ourselves. */
static const char short_opts[] = "+:n:qh";

/* opt_host - --client HOST / --bind ADDR. */
static int opt_host(const char *name, const char *s, char *dst, size_t dstlen, char *err,
		    size_t errlen)
{
	/* getopt takes the next word whatever it is: "--client --tcp" is a missing HOST. */
	if (!*s || *s == '-')
		return tool_fail(err, errlen, "%s needs a %s (got '%s')", name,
				 !strcmp(name, "--bind") ? "ADDR" : "HOST", s);
	if (strlen(s) >= dstlen)
		return tool_fail(err, errlen, "%s: the address is longer than %zu characters", name,
				 dstlen - 1);
	snprintf(dst, dstlen, "%s", s);
	return 0;
}

static int opt_size(const char *s, uint32_t *out, char *err, size_t errlen)
{
	int r = tool_opt_size("--size", s, BP_PP_MAX_LEN, out, err, errlen);

	/* Not a size at all: its message stands; out of range: say what the range is for. */
	if (r && !strstr(err, "must be between"))
		return r;
	if (r || *out < BP_PP_HDR_LEN)
		return tool_fail(err, errlen,
				 "--size %s: must be between %d (the header: magic, sequence, timestamp, server intervals) and %u bytes",
				 s, BP_PP_HDR_LEN, BP_PP_MAX_LEN);
	return 0;
}

static int opt_mode(const char *s, struct pp_opts *o, char *err, size_t errlen)
{
	char merr[256];

	if (bp_mode_parse(s, &o->mode, merr, sizeof(merr)) != 0 ||
	    bp_mode_check(&o->mode, merr, sizeof(merr)) != 0)
		return tool_fail(err, errlen, "--mode %s: %s", s, merr);
	bp_mode_format(&o->mode, o->mode_text, sizeof(o->mode_text));
	return 0;
}

int pp_parse_opts(int argc, char **argv, struct pp_opts *o, char *err, size_t errlen)
{
	bool server = false, client = false, mode_given = false;
	int client_only = 0, server_only = 0; /* an option given, for the message */
	char bind[sizeof(o->host)] = "", host[sizeof(o->host)] = "", name[64];
	const char *mode_arg = NULL;
	long long v = 0;
	int c, r;

	pp_opts_defaults(o);
	if (err && errlen)
		err[0] = 0;
	optind = 0; /* 0, not 1: glibc then also forgets a half-read cluster */
	opterr = 0;
	while ((c = getopt_long(argc, argv, short_opts, long_opts, NULL)) != -1) {
		r = 0;
		switch (c) {
		case OPT_SERVER:
			server = true;
			break;
		case OPT_CLIENT:
			client = true;
			r = opt_host("--client", optarg, host, sizeof(host), err, errlen);
			break;
		case OPT_BIND:
			server_only = c;
			r = opt_host("--bind", optarg, bind, sizeof(bind), err, errlen);
			break;
		case OPT_TCP:
			client_only = c;
			o->tcp = true;
			break;
		case OPT_SIZE:
			client_only = c;
			r = opt_size(optarg, &o->size, err, errlen);
			break;
		case 'n':
			client_only = c;
			r = tool_opt_int("-n", optarg, 1, (long long)PP_MAX_N, &v, err, errlen);
			o->n = (uint64_t)v;
			break;
		case OPT_RUNS:
			client_only = c;
			r = tool_opt_int("--runs", optarg, 1, PP_MAX_RUNS, &v, err, errlen);
			o->runs = (int)v;
			break;
		case OPT_WARMUP:
			client_only = c;
			r = tool_opt_int("--warmup", optarg, 0, (long long)PP_MAX_N, &v, err, errlen);
			o->warmup = (uint64_t)v;
			break;
		case OPT_MODE:
			mode_given = true;
			mode_arg = optarg;
			r = opt_mode(optarg, o, err, errlen);
			break;
		case OPT_CPUS: {
			int cpus[64], n = 0;

			r = tool_opt_cpus("--cpus", optarg, cpus, 64, &n, err, errlen);
			if (!r && n != 1)
				r = tool_fail(err, errlen,
					      "--cpus %s: one CPU (pingpong runs one loop thread per side)",
					      optarg);
			o->cpu = cpus[0];
			break;
		}
		case OPT_PRIORITY:
			r = tool_opt_int("--priority", optarg, 0, PP_MAX_PRIORITY, &v, err, errlen);
			o->priority = (int)v;
			break;
		case OPT_PORT:
			r = tool_opt_int("--port", optarg, 1, 65535, &v, err, errlen);
			o->port = (uint16_t)v;
			break;
		case OPT_FORMAT: {
			/* in enum pp_format's order */
			static const char *const formats[] = { "table", "json", "csv", NULL };
			int f = tool_opt_choice("--format", optarg, formats, err, errlen);

			client_only = c;
			if (f < 0)
				r = f;
			else
				o->format = (enum pp_format)f;
			break;
		}
		case OPT_MATRIX:
			client_only = c;
			o->matrix = true;
			break;
		case OPT_BREAKDOWN:
			client_only = c;
			o->breakdown = true;
			break;
		case OPT_DELAY:
			server_only = c;
			r = tool_opt_int("--server-delay-us", optarg, 0, PP_MAX_DELAY_US, &v, err, errlen);
			o->server_delay_us = (uint32_t)v;
			break;
		case OPT_TIMEOUT:
			client_only = c;
			r = tool_opt_seconds("--timeout", optarg, false, PP_MAX_TIMEOUT_S, &o->timeout_s, err,
					     errlen);
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'h':
			usage(stdout);
			return 1;
		case ':':
			tool_bad_option_name(argc, argv, long_opts, name, sizeof(name));
			return tool_fail(err, errlen, "%s needs %s", name,
					 optopt == OPT_CLIENT ? "a HOST" :
					 optopt == OPT_BIND ? "an ADDR" : "a value");
		case '?':
		default:
			return tool_option_refused("pingpong", argc, argv, long_opts, err, errlen);
		}
		if (r)
			return r;
	}
	if (optind < argc)
		return tool_fail(err, errlen, "unexpected argument '%s'; see busypoll pingpong --help",
				 argv[optind]);
	r = tool_pick_role(server, client, err, errlen);
	if (r)
		return r;
	o->server = server;
	snprintf(o->host, sizeof(o->host), "%s", server ? bind : host);
	if (server && client_only) {
		if (client_only == OPT_TCP)
			return tool_fail(err, errlen,
					 "--tcp is a client option: the server always serves UDP and TCP");
		return tool_fail(err, errlen, "%s is a client option (the client sets up each run)",
				 tool_long_name(long_opts, client_only, name, sizeof(name)));
	}
	if (client && server_only)
		return tool_fail(err, errlen, "%s is a server option",
				 tool_long_name(long_opts, server_only, name, sizeof(name)));

	if (o->matrix) {
		/* The busy-poll mode the rows compare; the baseline is its backend's :block. */
		char merr[256];

		if (!mode_given && (bp_mode_parse(PP_DEFAULT_MATRIX_MODE, &o->mode, merr, sizeof(merr)) ||
				    bp_mode_check(&o->mode, merr, sizeof(merr))))
			return tool_fail(err, errlen,
					 "--matrix: the default mode %s cannot run here (%s); choose one with --mode",
					 PP_DEFAULT_MATRIX_MODE, merr);
		if (!mode_given)
			bp_mode_format(&o->mode, o->mode_text, sizeof(o->mode_text));
		if (o->mode.policy == BP_POLICY_BLOCK)
			return tool_fail(err, errlen,
					 "--mode %s: --matrix compares a polling mode against blocking; give one, e.g. %s",
					 mode_arg ? mode_arg : o->mode_text, PP_DEFAULT_MATRIX_MODE);
	}
	return 0;
}
