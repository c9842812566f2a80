/* SPDX-License-Identifier: MIT */
/*
 * busypoll rr: option parsing (contract in tools/rr.h).
 *
 * Every error is one line that names the option as its long form and repeats the
 * value as typed ("--threads 0: must be between 1 and 64"), so a user can tell which
 * of a long command line was wrong. Checks that involve two options (flows against
 * threads, UDP size limits, server/client-only options) run after the whole command
 * line is read, so the order of the options never matters.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools/rr/rr.h"
#include "tools/common/options.h"

#define RR_MAX_FLOWS 1000000
#define RR_MAX_PRIORITY 15
/*
 * Longest -l/--warmup/-I we accept: a week. Nobody benchmarks longer, and it keeps
 * seconds-to-nanoseconds conversions far from overflowing a u64.
 */
#define RR_MAX_SECONDS 604800.0

void rr_opts_defaults(struct rr_opts *o)
{
	char err[128];

	memset(o, 0, sizeof(*o));
	o->port = RR_DEFAULT_PORT;
	o->threads = 1;
	o->flows = 1;
	o->request_size = 1;
	o->response_size = 1;
	o->duration_s = 10;
	o->warmup_s = 1;
	o->priority = -1;
	o->format = RR_FORMAT_TABLE;
	/*
	 * Parse the default rather than hand-fill the struct so it is exactly what
	 * `--mode epoll:block` gives (the parser owns the other fields' defaults). The
	 * zeroed struct above already is epoll:block should the parser ever refuse it.
	 */
	o->hello_timeout_ms = RR_HELLO_TIMEOUT_MS;
	if (bp_mode_parse("epoll:block", &o->mode, err, sizeof(err)) != 0)
		memset(&o->mode, 0, sizeof(o->mode));
	bp_mode_format(&o->mode, o->mode_text, sizeof(o->mode_text));
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: busypoll rr --server [options]\n"
		"       busypoll rr --client HOST [options]\n"
		"\n"
		"Request/response benchmark (like neper tcp_rr / sockperf ping-pong): each flow\n"
		"sends a request and waits for the response before sending the next one.\n"
		"\n"
		"  --server               serve (TCP and UDP) until interrupted\n"
		"  --client HOST          run against the server on HOST\n"
		"  -T, --threads N        loop threads, 1..%d (default 1)\n"
		"  --mode MODE            wait mode (default epoll:block; see `busypoll modes`)\n"
		"  --cpus LIST            thread i on the i-th CPU of LIST (e.g. 0,2-3); a list\n"
		"                         shorter than --threads is repeated\n"
		"  --priority N           SO_PRIORITY 0..%d on every socket (7+: CAP_NET_ADMIN)\n"
		"  --port N               TCP and UDP port (default %d)\n"
		"  -q, --quiet            no progress or log lines\n"
		"  -h, --help             this text\n"
		"server only:\n"
		"  --bind ADDR            address to listen on (default: all)\n"
		"client only:\n"
		"  -F, --flows N          connections (UDP: sockets), spread over the threads,\n"
		"                         at least --threads, at most %d (default 1)\n"
		"  -Q, --request-size B   request bytes, 1..16M, suffixes k and M (default 1)\n"
		"  -R, --response-size B  response bytes, 1..16M, suffixes k and M (default 1)\n"
		"  -l, --duration S       measure for S seconds, decimals allowed (default 10)\n"
		"  -n, --transactions N   measure N transactions instead of a duration\n"
		"  --warmup S             seconds of traffic before measuring (default 1)\n"
		"  -I, --interval S       a progress line every S seconds (default none)\n"
		"  --format F             table, json or csv (default table)\n"
		"  --udp                  UDP flows: request >= 8 bytes (it carries the run id),\n"
		"                         both sizes <= %u (one datagram)\n",
		RR_MAX_THREADS, RR_MAX_PRIORITY, RR_DEFAULT_PORT, RR_MAX_FLOWS, BP_RR_UDP_MAX_SIZE);
}

/* Long-only options get values above any character. */
enum {
	OPT_SERVER = 256,
	OPT_CLIENT,
	OPT_WARMUP,
	OPT_MODE,
	OPT_CPUS,
	OPT_PRIORITY,
	OPT_PORT,
	OPT_FORMAT,
	OPT_UDP,
	OPT_BIND,
};

static const struct option long_opts[] = {
	{ "server", no_argument, NULL, OPT_SERVER },
	{ "client", required_argument, NULL, OPT_CLIENT },
	{ "threads", required_argument, NULL, 'T' },
	{ "flows", required_argument, NULL, 'F' },
	{ "request-size", required_argument, NULL, 'Q' },
	{ "response-size", required_argument, NULL, 'R' },
	{ "duration", required_argument, NULL, 'l' },
	{ "transactions", required_argument, NULL, 'n' },
	{ "warmup", required_argument, NULL, OPT_WARMUP },
	{ "mode", required_argument, NULL, OPT_MODE },
	{ "cpus", required_argument, NULL, OPT_CPUS },
	{ "priority", required_argument, NULL, OPT_PRIORITY },
	{ "port", required_argument, NULL, OPT_PORT },
	{ "interval", required_argument, NULL, 'I' },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "udp", no_argument, NULL, OPT_UDP },
	{ "bind", required_argument, NULL, OPT_BIND },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};
/* "+": stop at the first non-option instead of reordering argv; ":": we report errors. */
static const char short_opts[] = "+:T:F:Q:R:l:n:I:qh";

/* long_name - "--threads" for an option value, for messages. */
static const char *long_name(int val)
{
	static char buf[32];

	return tool_long_name(long_opts, val, buf, sizeof(buf));
}

/* opt_cpus - --cpus: syntax, at most RR_MAX_THREADS entries, CPUs this machine has. */
static int opt_cpus(const char *s, struct rr_opts *o, char *err, size_t errlen)
{
	return tool_opt_cpus("--cpus", s, o->cpus, RR_MAX_THREADS, &o->ncpus, err, errlen);
}

/* opt_host - --client HOST / --bind ADDR into o->host. */
static int opt_host(const char *name, const char *s, struct rr_opts *o, char *err, size_t errlen)
{
	/* getopt takes the next word whatever it is: "--client -T 2" is a missing HOST. */
	if (!*s || *s == '-')
		return tool_fail(err, errlen, "%s needs a %s (got '%s')", name,
			    !strcmp(name, "--bind") ? "ADDR" : "HOST", s);
	if (strlen(s) >= sizeof(o->host))
		return tool_fail(err, errlen, "%s: the address is longer than %zu characters", name,
			    sizeof(o->host) - 1);
	snprintf(o->host, sizeof(o->host), "%s", s);
	return 0;
}

int rr_parse_opts(int argc, char **argv, struct rr_opts *o, char *err, size_t errlen)
{
	/* What was given, for the checks that need the whole command line. */
	bool server = false, client = false, dur = false, count = false;
	const char *req_text = NULL, *resp_text = NULL, *cpus_text = NULL;
	int client_only = 0, server_only = 0; /* an option val given, for the message */
	char bind[sizeof(o->host)] = "", host[sizeof(o->host)] = "";
	char name[64];
	long long v = 0;
	int c, r;

	rr_opts_defaults(o);
	if (err && errlen)
		err[0] = 0;
	/* 0, not 1: glibc then also forgets a half-read cluster from a previous call. */
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, short_opts, long_opts, NULL)) != -1) {
		r = 0;
		switch (c) {
		case OPT_SERVER:
			server = true;
			break;
		case OPT_CLIENT:
			client = true;
			r = opt_host("--client", optarg, o, err, errlen);
			if (!r)
				snprintf(host, sizeof(host), "%s", o->host);
			break;
		case OPT_BIND:
			server_only = c;
			r = opt_host("--bind", optarg, o, err, errlen);
			if (!r)
				snprintf(bind, sizeof(bind), "%s", o->host);
			break;
		case 'T':
			r = tool_opt_int("--threads", optarg, 1, RR_MAX_THREADS, &v, err, errlen);
			o->threads = (int)v;
			break;
		case 'F':
			client_only = c;
			r = tool_opt_int("--flows", optarg, 1, RR_MAX_FLOWS, &v, err, errlen);
			o->flows = (int)v;
			break;
		case 'Q':
			client_only = c;
			req_text = optarg;
			r = tool_opt_size("--request-size", optarg, BP_RR_MAX_SIZE, &o->request_size, err, errlen);
			break;
		case 'R':
			client_only = c;
			resp_text = optarg;
			r = tool_opt_size("--response-size", optarg, BP_RR_MAX_SIZE, &o->response_size, err, errlen);
			break;
		case 'l':
			client_only = c;
			dur = true;
			r = tool_opt_seconds("--duration", optarg, false, RR_MAX_SECONDS, &o->duration_s, err, errlen);
			break;
		case 'n':
			client_only = c;
			count = true;
			r = tool_opt_int("--transactions", optarg, 1, INT64_MAX, &v, err, errlen);
			o->transactions = (uint64_t)v;
			break;
		case OPT_WARMUP:
			client_only = c;
			r = tool_opt_seconds("--warmup", optarg, true, RR_MAX_SECONDS, &o->warmup_s, err, errlen);
			break;
		case 'I':
			client_only = c;
			r = tool_opt_seconds("--interval", optarg, true, RR_MAX_SECONDS, &o->interval_s, err, errlen);
			break;
		case OPT_MODE: {
			char merr[256];

			if (bp_mode_parse(optarg, &o->mode, merr, sizeof(merr)) != 0 ||
			    bp_mode_check(&o->mode, merr, sizeof(merr)) != 0) {
				r = tool_fail(err, errlen, "--mode %s: %s", optarg, merr);
				break;
			}
			bp_mode_format(&o->mode, o->mode_text, sizeof(o->mode_text));
			break;
		}
		case OPT_CPUS:
			cpus_text = optarg;
			r = opt_cpus(optarg, o, err, errlen);
			break;
		case OPT_PRIORITY:
			r = tool_opt_int("--priority", optarg, 0, RR_MAX_PRIORITY, &v, err, errlen);
			o->priority = (int)v;
			break;
		case OPT_PORT:
			r = tool_opt_int("--port", optarg, 1, 65535, &v, err, errlen);
			o->port = (uint16_t)v;
			break;
		case OPT_FORMAT: {
			static const char *const formats[] = { "table", "json", "csv", NULL };
			int f = tool_opt_choice("--format", optarg, formats, err, errlen);

			client_only = c;
			r = f < 0 ? f : 0;
			if (f >= 0)
				o->format = f == 1 ? RR_FORMAT_JSON : f == 2 ? RR_FORMAT_CSV : RR_FORMAT_TABLE;
			break;
		}
		case OPT_UDP:
			client_only = c;
			o->udp = true;
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
			return tool_option_refused("rr", argc, argv, long_opts, err, errlen);
		}
		if (r)
			return r;
	}
	if (optind < argc)
		return tool_fail(err, errlen, "unexpected argument '%s'; see busypoll rr --help",
			    argv[optind]);

	r = tool_pick_role(server, client, err, errlen);
	if (r)
		return r;
	o->server = server;
	/* --client and --bind share o->host; each side keeps only its own. */
	snprintf(o->host, sizeof(o->host), "%s", server ? bind : host);

	if (server && client_only) {
		if (client_only == OPT_UDP)
			return tool_fail(err, errlen,
				    "--udp is a client option: the server always serves TCP and UDP");
		return tool_fail(err, errlen, "%s is a client option (the client sets up each run)",
			    long_name(client_only));
	}
	if (client && server_only)
		return tool_fail(err, errlen, "%s is a server option", long_name(server_only));

	if (dur && count)
		return tool_fail(err, errlen,
			    "--duration and --transactions are exclusive: measure a time or a count");
	if (count)
		o->duration_s = 0;

	if (client && o->flows < o->threads)
		return tool_fail(err, errlen,
			    "--flows %d is fewer than --threads %d (every thread needs a flow)",
			    o->flows, o->threads);

	if (o->udp) {
		char reqv[32], respv[32];

		/* Say "the default" so a user who never typed -Q sees where the 1 came from. */
		snprintf(reqv, sizeof(reqv), "%s", req_text ? req_text : "1 (the default)");
		snprintf(respv, sizeof(respv), "%s", resp_text ? resp_text : "1 (the default)");
		if (o->request_size < 8)
			return tool_fail(err, errlen,
				    "--request-size %s: --udp requests must be at least 8 bytes (they carry the run id)",
				    reqv);
		if (o->request_size > BP_RR_UDP_MAX_SIZE)
			return tool_fail(err, errlen,
				    "--request-size %s: --udp allows at most %u bytes (one datagram)",
				    reqv, BP_RR_UDP_MAX_SIZE);
		if (o->response_size > BP_RR_UDP_MAX_SIZE)
			return tool_fail(err, errlen,
				    "--response-size %s: --udp allows at most %u bytes (one datagram)",
				    respv, BP_RR_UDP_MAX_SIZE);
	}

	/*
	 * Thread i runs on cpus[i]: repeat a short list so that holds for every thread
	 * (e.g. --cpus 1 -T 4 stacks four threads on CPU 1, on purpose). More CPUs than
	 * threads would be silently unused, which a reader of the results would not expect.
	 */
	if (o->ncpus > o->threads)
		return tool_fail(err, errlen, "--cpus %s: %d CPUs for %d thread%s (one CPU per thread)",
			    cpus_text, o->ncpus, o->threads, o->threads == 1 ? "" : "s");
	for (int i = o->ncpus; o->ncpus && i < o->threads; i++)
		o->cpus[i] = o->cpus[i % o->ncpus];
	if (o->ncpus)
		o->ncpus = o->threads;
	return 0;
}
