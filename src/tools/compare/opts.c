/* SPDX-License-Identifier: MIT */
/*
 * busypoll compare: its option table (contract in tools/compare/opts.h). The
 * common layer and the agent's --remote options come first and last; compare's
 * own options, the matrix they build and the rules between them are here.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "tools/common/opt.h"
#include "tools/common/values.h"
#include "tools/compare/compare.h"
#include "tools/compare/opts.h"

/* The default matrix: one representative setting per mode family, baseline first. */
static const char *const default_modes[] = {
	"epoll:block",
	"epoll:napi,usecs=64,budget=8",
	"epoll:napi,usecs=64,budget=8,prefer",
	"epoll:spin",
	"epoll:hybrid",
	"epoll:suspend",
	"uring:block",
	"uring:napi,usecs=64",
	"uring:spin",
	"uring:hybrid",
	"uring:sqpoll,napi=64",
};
/* With --udp, the AF_XDP rung below them (the xsk backend carries UDP only). */
static const char *const default_udp_modes[] = {
	"xsk:block",
	"xsk:napi,usecs=64,budget=8",
	"xsk:spin",
};

/*
 * add_mode - a mode pair for the matrix, parsed and checked once; a pair this
 * machine cannot run is an error, or (skip_unusable, the default matrix) noted.
 */
static int add_mode(struct cmp_opts *o, const char *client, const char *server, bool skip_unusable, char *err,
		    size_t errlen)
{
	struct bp_mode mc, ms;
	char why[200];
	int i = o->nmodes;

	if (o->nmodes == CMP_MAX_MODES) {
		snprintf(err, errlen, "--modes: at most %d modes", CMP_MAX_MODES);
		return -EINVAL;
	}
	if (bp_mode_parse(client, &mc, why, sizeof(why)) || bp_mode_parse(server, &ms, why, sizeof(why))) {
		snprintf(err, errlen, "%s", why);
		return -EINVAL;
	}
	if (bp_mode_check(&mc, why, sizeof(why)) || bp_mode_check(&ms, why, sizeof(why))) {
		if (!skip_unusable) {
			snprintf(err, errlen, "%s", why);
			return -EINVAL;
		}
		if (o->nskipped < CMP_MAX_MODES)
			snprintf(o->skipped[o->nskipped++], sizeof(o->skipped[0]), "%s", why);
		return 0;
	}
	if (!strcmp(client, server))
		snprintf(o->labels[i], sizeof(o->labels[0]), "%s", client);
	else
		snprintf(o->labels[i], sizeof(o->labels[0]), "client %.60s / server %.60s", client, server);
	o->client_mode[i] = mc;
	o->server_mode[i] = ms;
	bp_mode_format(&mc, o->client_modes[i], sizeof(o->client_modes[0]));
	bp_mode_format(&ms, o->server_modes[i], sizeof(o->server_modes[0]));
	o->nmodes++;
	return 0;
}

/* --modes "A;B;C": each one both ends' mode, none empty, none twice (a mode against itself). */
static int parse_modes(const struct opt_spec *sp, const char *name, const char *v, void *base, char *err,
		       size_t errlen)
{
	struct cmp_opts *o = base;
	char buf[2048], *save = NULL, *tok, why[300];

	if (strlen(v) >= sizeof(buf))
		return tool_fail(err, errlen, "%s: longer than %zu characters", name, sizeof(buf) - 1);
	if (tool_check_list(name, v, ';', err, errlen))
		return -EINVAL;
	snprintf(buf, sizeof(buf), "%s", v);
	for (tok = strtok_r(buf, ";", &save); tok; tok = strtok_r(NULL, ";", &save)) {
		if (add_mode(o, tok, tok, false, why, sizeof(why)))
			return tool_fail(err, errlen, "%s: %s: %s", name, tok, why);
		for (int i = 0; i < o->nmodes - 1; i++)
			if (!strcmp(o->client_modes[i], o->client_modes[o->nmodes - 1]))
				return tool_fail(err, errlen, "%s: %s is listed twice (as %s): a mode against itself",
						 name, tok, o->labels[i]);
	}
	return 0;
}

/* --flows "1,15": the flow counts, each a cell per mode. */
static int parse_flows(const struct opt_spec *sp, const char *name, const char *v, void *base, char *err,
		       size_t errlen)
{
	struct cmp_opts *o = base;
	char buf[256], *save = NULL, *tok;
	long long n;

	if (strlen(v) >= sizeof(buf))
		return tool_fail(err, errlen, "%s: longer than %zu characters", name, sizeof(buf) - 1);
	if (tool_check_list(name, v, ',', err, errlen))
		return -EINVAL;
	snprintf(buf, sizeof(buf), "%s", v);
	o->nflows = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (o->nflows == CMP_MAX_FLOWS)
			return tool_fail(err, errlen, "%s: at most %d values", name, CMP_MAX_FLOWS);
		if (tool_opt_int(name, tok, 1, 100000, &n, err, errlen))
			return -EINVAL;
		for (int i = 0; i < o->nflows; i++)
			if (o->flows[i] == n)
				return tool_fail(err, errlen, "%s %s: %lld is listed twice", name, v, n);
		o->flows[o->nflows++] = (int)n;
	}
	if (!o->nflows)
		return tool_fail(err, errlen, "%s: give a list such as 1,15", name);
	return 0;
}

/* --rates "10k,50k,max": offered loads, each a cell per mode and flows; max is the closed loop. */
static int parse_rates(const struct opt_spec *sp, const char *name, const char *v, void *base, char *err,
		       size_t errlen)
{
	struct cmp_opts *o = base;
	char buf[sizeof(o->rates_text)], *save = NULL, *tok;
	double rate;

	if (strlen(v) >= sizeof(buf))
		return tool_fail(err, errlen, "%s: longer than %zu characters", name, sizeof(buf) - 1);
	if (tool_check_list(name, v, ',', err, errlen))
		return -EINVAL;
	snprintf(buf, sizeof(buf), "%s", v);
	o->nrates = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (o->nrates == CMP_MAX_RATES)
			return tool_fail(err, errlen, "%s %s: at most %d rates", name, v, CMP_MAX_RATES);
		if (!strcmp(tok, "max"))
			rate = 0;
		else if (tool_opt_rate(name, tok, RR_MAX_RATE, &rate, err, errlen))
			return -EINVAL;
		for (int i = 0; i < o->nrates; i++)
			if (o->rates[i] == rate)
				return tool_fail(err, errlen, "%s %s: %s is listed twice", name, v, tok);
		o->rates[o->nrates++] = rate;
	}
	snprintf(o->rates_text, sizeof(o->rates_text), "%s", v);
	o->rates_given = true;
	return 0;
}

/* --cpus: a per-thread list in every other command; compare pins two sides. */
static int refuse_cpus(const struct opt_spec *sp, const char *name, const char *v, void *base, char *err,
		       size_t errlen)
{
	return tool_fail(err, errlen, "%s %s: compare runs two sides: --client-cpus LIST and --server-cpus LIST "
			 "(each thread i on the i-th CPU)", name, v);
}

/* parse_plot - --plot FILE.svg: checked now rather than after every cell ran. */
static int parse_plot(const struct opt_spec *sp, const char *name, const char *v, void *base, char *err,
		      size_t errlen)
{
	struct cmp_opts *o = base;

	return tool_opt_svg_file(name, v, o->plot, sizeof(o->plot), err, errlen);
}

#define CF(m) OPT_FIELD(struct cmp_opts, m)

static const struct opt_spec cmp_specs[] = {
	{ .name = "modes", .kind = OPT_CUSTOM, .parse = parse_modes, .arg = "LIST",
	  .help = "';'-separated modes (default: one per family, epoll:block first)" },
	{ .name = "server-mode", .kind = OPT_MODE, OPT_MODE_FIELD(struct cmp_opts, one_server, one_server_text),
	  .arg = "MODE", .help = "with --client-mode: one asymmetric pair (busy poll on one end)" },
	{ .name = "client-mode", .kind = OPT_MODE, OPT_MODE_FIELD(struct cmp_opts, one_client, one_client_text),
	  .arg = "MODE", .help = "the client's end of that pair" },
	{ .name = "flows", .kind = OPT_CUSTOM, .parse = parse_flows, .arg = "LIST",
	  .help = "flow counts, e.g. 1,15 (default 1,15)" },
	{ .name = "rates", .kind = OPT_CUSTOM, .parse = parse_rates, .arg = "LIST",
	  .help = "offered loads, requests/s over all flows, e.g. 10k,50k,max: every mode at every rate "
		  "in an open loop (rr --rate, Poisson arrivals), max the closed loop (default max)" },
	{ .name = "duration", .shortname = 'l', .kind = OPT_SECONDS, CF(duration_s), .max_s = 3600, .arg = "S",
	  .help = "seconds measured per cell, split over its --runs", .dflt = OPT_DFLT_FIELD },
	{ .name = "warmup", .kind = OPT_SECONDS, .flags = OPT_F_ZERO_OK, CF(warmup_s), .max_s = 600, .arg = "S",
	  .help = "warm-up before each run", .dflt = OPT_DFLT_FIELD },
	{ .name = "runs", .kind = OPT_INT, CF(runs), .lo = 1, .hi = CMP_MAX_RUNS, .arg = "N",
	  .help = "runs per cell, alternated across the modes: the median, its spread (min..max) and the "
		  "mean; 1 for the quick look", .dflt = OPT_DFLT_FIELD },
	{ .name = "threads", .shortname = 'T', .kind = OPT_INT, CF(threads), .lo = 1, .hi = RR_MAX_THREADS, .arg = "N",
	  .help = "threads per side", .dflt = OPT_DFLT_FIELD },
	{ .name = "request-size", .shortname = 'Q', .kind = OPT_SIZE, CF(request_size), .hi = BP_RR_MAX_SIZE,
	  .arg = "B", .help = "request bytes", .dflt = OPT_DFLT_FIELD },
	{ .name = "response-size", .shortname = 'R', .kind = OPT_SIZE, CF(response_size), .hi = BP_RR_MAX_SIZE,
	  .arg = "B", .help = "response bytes", .dflt = OPT_DFLT_FIELD },
	{ .name = "client-cpus", .kind = OPT_CPUS, OPT_CPUS_FIELD(struct cmp_opts, client_cpus, nclient_cpus),
	  .arg = "LIST", .help = "client thread i on the i-th CPU of LIST (default 0)" },
	{ .name = "server-cpus", .kind = OPT_CPUS, OPT_CPUS_FIELD(struct cmp_opts, server_cpus, nserver_cpus),
	  .arg = "LIST", .help = "server thread i on the i-th CPU of LIST (default 1)" },
	{ .name = "cpus", .kind = OPT_CUSTOM, .flags = OPT_F_HIDDEN, .parse = refuse_cpus },
	{ .name = "bed-tso", .kind = OPT_FLAG, CF(bed_tso),
	  .help = "build the test bed with TSO on (as many veth pairs are): see what it does to busy polling" },
	{ .name = "bed-no-gro", .kind = OPT_FLAG, CF(bed_no_gro),
	  .help = "build the test bed with GRO off (veth then has no NAPI): see what it does to busy polling" },
	{ .name = "udp", .kind = OPT_FLAG, CF(udp),
	  .help = "UDP flows (requests of 8 B at least, 8 by default): the default matrix adds the xsk "
		  "modes (AF_XDP), each side's AF_XDP statistics beside the proof" },
	{ .name = "loopback", .kind = OPT_FLAG, CF(loopback),
	  .help = "run on loopback even as root (busy polling cannot engage)" },
	{ .name = "plot", .kind = OPT_CUSTOM, .parse = parse_plot, .arg = "FILE.svg",
	  .help = "latency percentiles and throughput of every mode; with --rates, P50 and P99 and each "
		  "side's CPU utilisation against the achieved rate" },
};

/* The one pair, or the default matrix; then flows against threads. */
static int cmp_check(void *base, const struct opt_seen *seen, char *err, size_t errlen)
{
	struct cmp_opts *o = base;
	bool one = opt_given(seen, "server-mode") || opt_given(seen, "client-mode");

	if (!!opt_given(seen, "server-mode") != !!opt_given(seen, "client-mode"))
		return tool_fail(err, errlen, "--server-mode and --client-mode go together");
	if (one && opt_given(seen, "modes"))
		return tool_fail(err, errlen, "--modes and --server-mode/--client-mode exclude each other");
	if (one) {
		/* Asymmetric: the baseline (both block) first, then the pair asked for. */
		const char *base_text = o->one_client.backend == BP_BACKEND_URING ? "uring:block" : "epoll:block";

		if (add_mode(o, base_text, base_text, false, err, errlen) ||
		    add_mode(o, opt_text(seen, "client-mode"), opt_text(seen, "server-mode"), false, err, errlen))
			return -EINVAL;
	} else if (!opt_given(seen, "modes")) {
		for (size_t i = 0; i < sizeof(default_modes) / sizeof(default_modes[0]); i++)
			if (add_mode(o, default_modes[i], default_modes[i], true, err, errlen))
				return -EINVAL;
		for (size_t i = 0; o->udp && i < sizeof(default_udp_modes) / sizeof(default_udp_modes[0]); i++)
			if (add_mode(o, default_udp_modes[i], default_udp_modes[i], true, err, errlen))
				return -EINVAL;
	}
	if (!o->nmodes)
		return tool_fail(err, errlen, "no mode to compare");
	for (int i = 0; i < o->nmodes && !o->udp; i++)
		if (o->client_mode[i].backend == BP_BACKEND_XSK || o->server_mode[i].backend == BP_BACKEND_XSK)
			return tool_fail(err, errlen, "%s: the xsk modes carry UDP only; add --udp", o->labels[i]);
	if (o->udp && !opt_given(seen, "request-size"))
		o->request_size = 8; /* UDP requests carry the run id */
	if (o->udp && o->request_size < 8)
		return tool_fail(err, errlen, "--request-size %u: --udp requests must be at least 8 bytes (they carry "
				 "the run id)", o->request_size);
	if (o->nmodes * o->nflows * o->nrates * (o->coalesce_matrix ? 2 : 1) > CMP_MAX_CELLS)
		return tool_fail(err, errlen, "%d modes x %d flow counts x %d rates%s: %d cells, at most %d; compare fewer",
				 o->nmodes, o->nflows, o->nrates, o->coalesce_matrix ? " x 2 coalescing settings" : "",
				 o->nmodes * o->nflows * o->nrates * (o->coalesce_matrix ? 2 : 1), CMP_MAX_CELLS);
	for (int i = 0; i < o->nflows; i++)
		if (o->flows[i] < o->threads)
			return tool_fail(err, errlen, "--flows %d is fewer than --threads %d", o->flows[i], o->threads);
	if (o->nclient_cpus > o->threads || o->nserver_cpus > o->threads)
		return tool_fail(err, errlen, "--%s-cpus %s: %d CPUs for %d thread%s (one CPU per thread)",
				 o->nclient_cpus > o->threads ? "client" : "server",
				 opt_text(seen, o->nclient_cpus > o->threads ? "client-cpus" : "server-cpus"),
				 o->nclient_cpus > o->threads ? o->nclient_cpus : o->nserver_cpus, o->threads,
				 o->threads == 1 ? "" : "s");
	return 0;
}

static const struct opt_table cmp_table = OPT_TABLE(cmp_specs, cmp_check);

static const struct opt_cmd cmp_cmd = {
	.name = "compare",
	.usage = "usage: busypoll compare [options]\n"
		 "       busypoll compare --remote [user@]HOST [options]\n"
		 "       busypoll compare --remote HOST:PORT --key-file FILE [options]\n\n"
		 "Runs busypoll rr in every wait mode this machine supports, side by side, on a\n"
		 "temporary veth test bed (as root; removed on exit) where busy polling really\n"
		 "engages; with --remote, between this host (the client) and HOST, whose agent\n"
		 "runs the server side and reports and restores its NIC's settings.\n\n",
	.epilog = "\nExit status: 0 done, 1 a cell failed or the test bed could not be built, 2 bad\n"
		  "input, 130 interrupted (the cells so far are printed).\n",
};

int cmp_parse_opts(int argc, char **argv, struct cmp_opts *o, char *err, size_t errlen)
{
	const struct opt_layer layers[] = {
		{ &tool_common_table, &o->common },
		{ &cmp_table, o },
		{ &agent_remote_table, &o->remote },
		{ &cmp_remote_table, o },
	};

	memset(o, 0, sizeof(*o));
	o->flows[0] = 1;
	o->flows[1] = 15;
	o->nflows = 2;
	o->rates[0] = 0; /* max: the closed loop */
	o->nrates = 1;
	snprintf(o->rates_text, sizeof(o->rates_text), "max");
	o->duration_s = 3;
	o->warmup_s = 0.5;
	o->runs = 3;
	o->threads = 1;
	o->request_size = o->response_size = 1;
	/* apart by default: a shared CPU turns the comparison into a scheduler test */
	o->client_cpus[0] = 0;
	o->nclient_cpus = 1;
	o->server_cpus[0] = sysconf(_SC_NPROCESSORS_ONLN) > 1 ? 1 : 0;
	o->nserver_cpus = 1;
	o->format = TOOL_FORMAT_TABLE;
	agent_remote_defaults(&o->remote);
	return opt_parse(&cmp_cmd, layers, 4, argc, argv, NULL, err, errlen);
}
