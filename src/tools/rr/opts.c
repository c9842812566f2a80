/* SPDX-License-Identifier: MIT */
/*
 * busypoll rr: its option table (contract in tools/rr/rr.h). The common and
 * transport layers (tools/common/opt.h's common layer, net_opts.h) come first; rr's own
 * options and the rules between them are here. Every message names the option in
 * its long form and repeats the value as typed, from the shared parser.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "tools/rr/rr.h"
#include "tools/common/values.h"

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
	o->control_fd = -1;
	o->arrivals = RR_ARRIVALS_POISSON;
}

uint64_t rr_max_outstanding(const struct rr_opts *o)
{
	uint64_t two_per_flow = 2 * (uint64_t)o->flows;

	if (o->max_outstanding)
		return o->max_outstanding;
	return two_per_flow > RR_DEFAULT_OUTSTANDING ? two_per_flow : RR_DEFAULT_OUTSTANDING;
}

static const char *const arrivals_names[] = { "fixed", "poisson", NULL };

/* parse_rate - --rate R: requests per second over all flows, k and M suffixes (decimal). */
static int parse_rate(const struct opt_spec *sp, const char *name, const char *v, void *base, char *err,
		      size_t errlen)
{
	struct rr_opts *o = base;

	return tool_opt_rate(name, v, RR_MAX_RATE, &o->rate, err, errlen);
}

/* parse_hold - the server's test hook, --test-hold N:MS: hold each flow's N-th answer for MS ms. */
static int parse_hold(const struct opt_spec *sp, const char *name, const char *v, void *base, char *err,
		      size_t errlen)
{
	struct rr_opts *o = base;
	const char *colon = strchr(v, ':');
	char n[32];
	long long after, ms;

	if (!colon || colon == v || (size_t)(colon - v) >= sizeof(n))
		return tool_fail(err, errlen, "%s %s: N:MS, e.g. 50:100 (the 50th answer of each flow held 100 ms)",
				 name, v);
	memcpy(n, v, (size_t)(colon - v));
	n[colon - v] = 0;
	if (tool_opt_int(name, n, 1, UINT32_MAX, &after, err, errlen) ||
	    tool_opt_int(name, colon + 1, 1, 60000, &ms, err, errlen))
		return -EINVAL;
	o->hold_after = (uint32_t)after;
	o->hold_ms = (uint32_t)ms;
	return 0;
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
	{ .name = "rate", .kind = OPT_CUSTOM, .role = OPT_ROLE_CLIENT, .parse = parse_rate, .arg = "R",
	  .help = "client: open loop: R requests/s over all flows on a schedule that never waits for "
		  "an answer (k and M suffixes; latency from each request's intended send time); default: "
		  "closed loop, a flow's next request when its answer came" },
	{ .name = "arrivals", .kind = OPT_CHOICE, .role = OPT_ROLE_CLIENT, RR_FIELD(arrivals),
	  .choices = arrivals_names, .arg = "A",
	  .help = "client, with --rate: fixed (evenly spaced) or poisson (random, exponential gaps)",
	  .dflt = OPT_DFLT_FIELD },
	{ .name = "max-outstanding", .kind = OPT_INT, .role = OPT_ROLE_CLIENT, RR_FIELD(max_outstanding),
	  .lo = 1, .hi = 10000000, .arg = "N",
	  .help = "client, with --rate: more requests due and not answered than N means the server "
		  "cannot keep up: the run stops (default " STR(RR_DEFAULT_OUTSTANDING)
		  ", or two per flow)" },
	{ .name = "test-hold", .kind = OPT_CUSTOM, .flags = OPT_F_HIDDEN, .role = OPT_ROLE_SERVER,
	  .parse = parse_hold, .arg = "N:MS" },
	{ .name = "interval", .shortname = 'I', .kind = OPT_SECONDS, .flags = OPT_F_ZERO_OK,
	  .role = OPT_ROLE_CLIENT, RR_FIELD(interval_s), .max_s = RR_MAX_SECONDS, .arg = "S",
	  .help = "client: a progress line every S seconds (default none)" },
	/* how the two-host agent talks to an rr server it starts (tools/harness/spawn.h) */
	{ .name = "control-fd", .kind = OPT_INT, .flags = OPT_F_HIDDEN, .role = OPT_ROLE_SERVER, RR_FIELD(control_fd),
	  .lo = 3, .hi = 65535 },
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
	if (!o->rate && (opt_given(seen, "arrivals") || opt_given(seen, "max-outstanding")))
		return tool_fail(err, errlen, "--%s needs --rate (a closed loop has no schedule)",
				 opt_given(seen, "arrivals") ? "arrivals" : "max-outstanding");
	if (o->max_outstanding && o->max_outstanding < (uint64_t)o->flows)
		return tool_fail(err, errlen,
				 "--max-outstanding %s: fewer than --flows %d (each flow may have a request in flight)",
				 opt_text(seen, "max-outstanding"), o->flows);
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
		 "sends a request and waits for the response before sending the next one; with\n"
		 "--rate, an open loop (like wrk2 or mutilate): requests go on a schedule, a\n"
		 "flow with one outstanding queues the next, and latency counts from when each\n"
		 "request was due.\n"
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
