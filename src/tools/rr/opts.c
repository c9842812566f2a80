/* SPDX-License-Identifier: MIT */
/*
 * busypoll rr: its option table (contract in tools/rr/rr.h). The common and
 * transport layers (tools/common/common_opts.h, net_opts.h) come first; rr's own
 * options and the rules between them are here. Every message names the option in
 * its long form and repeats the value as typed, from the shared parser.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "tools/rr/rr.h"
#include "tools/common/options.h"

#define RR_MAX_FLOWS 1000000
/*
 * Longest -l/--warmup/-I we accept: a week. Nobody benchmarks longer, and it keeps
 * seconds-to-nanoseconds conversions far from overflowing a u64.
 */
#define RR_MAX_SECONDS 604800.0

#define STR_(x) #x
#define STR(x) STR_(x)

void rr_opts_defaults(struct rr_opts *o)
{
	memset(o, 0, sizeof(*o));
	tool_net_defaults(&o->net, RR_DEFAULT_PORT);
	o->threads = 1;
	o->flows = 1;
	o->request_size = 1;
	o->response_size = 1;
	o->duration_s = 10;
	o->warmup_s = 1;
	o->format = TOOL_FORMAT_TABLE;
	o->hello_timeout_ms = RR_HELLO_TIMEOUT_MS;
}

#define RR_FIELD(m) OPT_FIELD(struct rr_opts, m)

static const struct opt_spec rr_specs[] = {
	{ .name = "threads", .shortname = 'T', .kind = OPT_INT, RR_FIELD(threads), .lo = 1, .hi = RR_MAX_THREADS,
	  .arg = "N", .help = "loop threads, 1.." STR(RR_MAX_THREADS), .dflt = OPT_DFLT_FIELD },
	{ .name = "flows", .shortname = 'F', .kind = OPT_INT, .role = OPT_ROLE_CLIENT, RR_FIELD(flows), .lo = 1,
	  .hi = RR_MAX_FLOWS, .arg = "N",
	  .help = "client: connections (UDP: sockets), spread over the threads,\nat least --threads, at most "
		  STR(RR_MAX_FLOWS), .dflt = OPT_DFLT_FIELD },
	{ .name = "request-size", .shortname = 'Q', .kind = OPT_SIZE, .role = OPT_ROLE_CLIENT,
	  RR_FIELD(request_size), .hi = BP_RR_MAX_SIZE, .arg = "B",
	  .help = "client: request bytes, 1..16M, suffixes k and M", .dflt = OPT_DFLT_FIELD },
	{ .name = "response-size", .shortname = 'R', .kind = OPT_SIZE, .role = OPT_ROLE_CLIENT,
	  RR_FIELD(response_size), .hi = BP_RR_MAX_SIZE, .arg = "B",
	  .help = "client: response bytes, 1..16M, suffixes k and M", .dflt = OPT_DFLT_FIELD },
	{ .name = "duration", .shortname = 'l', .kind = OPT_SECONDS, .role = OPT_ROLE_CLIENT, RR_FIELD(duration_s),
	  .max_s = RR_MAX_SECONDS, .arg = "S", .help = "client: measure for S seconds (decimals, s ms m h units allowed)",
	  .dflt = OPT_DFLT_FIELD },
	{ .name = "transactions", .shortname = 'n', .kind = OPT_INT, .role = OPT_ROLE_CLIENT,
	  RR_FIELD(transactions), .lo = 1, .hi = INT64_MAX, .arg = "N",
	  .help = "client: measure N transactions instead of a duration" },
	{ .name = "warmup", .kind = OPT_SECONDS, .flags = OPT_F_ZERO_OK, .role = OPT_ROLE_CLIENT,
	  RR_FIELD(warmup_s), .max_s = RR_MAX_SECONDS, .arg = "S",
	  .help = "client: seconds of traffic before measuring", .dflt = OPT_DFLT_FIELD },
	{ .name = "interval", .shortname = 'I', .kind = OPT_SECONDS, .flags = OPT_F_ZERO_OK,
	  .role = OPT_ROLE_CLIENT, RR_FIELD(interval_s), .max_s = RR_MAX_SECONDS, .arg = "S",
	  .help = "client: a progress line every S seconds (default none)" },
};

/* rr_check - the rules between rr's options, once the whole command line is read. */
static int rr_check(void *base, const struct opt_seen *seen, char *err, size_t errlen)
{
	struct rr_opts *o = base;
	const char *req = opt_text(seen, "request-size"), *resp = opt_text(seen, "response-size");
	char reqv[32], respv[32];

	if (opt_given(seen, "duration") && opt_given(seen, "transactions"))
		return tool_fail(err, errlen, "--duration and --transactions are exclusive: measure a time or a count");
	if (opt_given(seen, "transactions"))
		o->duration_s = 0;
	if (!o->server && o->flows < o->threads)
		return tool_fail(err, errlen, "--flows %d is fewer than --threads %d (every thread needs a flow)",
				 o->flows, o->threads);
	o->tcp = !o->udp;
	if (o->udp) {
		/* Say "the default" so a user who never typed -Q sees where the 1 came from. */
		snprintf(reqv, sizeof(reqv), "%s", req ? req : "1 (the default)");
		snprintf(respv, sizeof(respv), "%s", resp ? resp : "1 (the default)");
		if (o->request_size < 8)
			return tool_fail(err, errlen,
					 "--request-size %s: --udp requests must be at least 8 bytes (they carry the run id)",
					 reqv);
		if (o->request_size > BP_RR_UDP_MAX_SIZE)
			return tool_fail(err, errlen, "--request-size %s: --udp allows at most %u bytes (one datagram)",
					 reqv, BP_RR_UDP_MAX_SIZE);
		if (o->response_size > BP_RR_UDP_MAX_SIZE)
			return tool_fail(err, errlen, "--response-size %s: --udp allows at most %u bytes (one datagram)",
					 respv, BP_RR_UDP_MAX_SIZE);
	}
	/*
	 * Thread i runs on cpus[i]: repeat a short list so that holds for every thread
	 * (e.g. --cpus 1 -T 4 stacks four threads on CPU 1, on purpose). More CPUs than
	 * threads would be silently unused, which a reader of the results would not expect.
	 */
	if (o->ncpus > o->threads)
		return tool_fail(err, errlen, "--cpus %s: %d CPUs for %d thread%s (one CPU per thread)",
				 opt_text(seen, "cpus"), o->ncpus, o->threads, o->threads == 1 ? "" : "s");
	for (int i = o->ncpus; o->ncpus && i < o->threads; i++)
		o->cpus[i] = o->cpus[i % o->ncpus];
	if (o->ncpus)
		o->ncpus = o->threads;
	return 0;
}

static const struct opt_table rr_table = OPT_TABLE(rr_specs, rr_check);

static const struct opt_cmd rr_cmd = {
	.name = "rr",
	.usage = "usage: busypoll rr --server [options]\n"
		 "       busypoll rr --client HOST [options]\n"
		 "\n"
		 "Request/response benchmark (like neper tcp_rr / sockperf ping-pong): each flow\n"
		 "sends a request and waits for the response before sending the next one.\n"
		 "--udp: UDP flows, request >= 8 bytes (it carries the run id), both sizes\n"
		 "<= 65507 (one datagram).\n\n",
	.epilog = "\nExit status: 0 done, 1 the run failed, 2 bad input, 130 interrupted (the\n"
		  "results so far are printed).\n",
};

int rr_parse_opts(int argc, char **argv, struct rr_opts *o, char *err, size_t errlen)
{
	const struct opt_layer layers[] = {
		{ &tool_common_table, &o->common },
		{ &tool_net_table, &o->net },
		{ &rr_table, o },
	};

	rr_opts_defaults(o);
	return opt_parse(&rr_cmd, layers, 3, argc, argv, NULL, err, errlen);
}
