/* SPDX-License-Identifier: MIT */
/*
 * busypoll compare: the main job. As root it builds a temporary veth test bed
 * (where NAPI exists, so kernel busy polling can really engage), runs the rr
 * server in one namespace and the client in the other, pinned to different CPUs,
 * over every mode this machine supports and each flow count, and removes the
 * bed on every exit path (Ctrl-C included). Not root: loopback, said plainly.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "tools/bed/testbed.h"

#include "tools/common/commands.h"
#include "tools/compare/compare.h"
#include "tools/common/opt.h"
#include "tools/common/values.h"

#define CMP_PORT 12867

static volatile sig_atomic_t *stop_requested;

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

/* parse_plot - --plot FILE: writable, checked now rather than after every cell ran. */
static int parse_plot(const struct opt_spec *sp, const char *name, const char *v, void *base, char *err,
		      size_t errlen)
{
	struct cmp_opts *o = base;
	char dir[sizeof(o->plot)];
	char *slash;

	if (!*v || strlen(v) >= sizeof(o->plot))
		return tool_fail(err, errlen, "%s '%s': a file name, shorter than %zu characters", name, v, sizeof(o->plot));
	snprintf(dir, sizeof(dir), "%s", v);
	slash = strrchr(dir, '/');
	if (slash)
		*(slash == dir ? slash + 1 : slash) = 0;
	else
		snprintf(dir, sizeof(dir), ".");
	if (access(v, F_OK) == 0 ? access(v, W_OK) != 0 : access(dir, W_OK | X_OK) != 0)
		return tool_fail(err, errlen, "%s %s: cannot write there: %s", name, v, strerror(errno));
	snprintf(o->plot, sizeof(o->plot), "%s", v);
	return 0;
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
	  .help = "seconds per cell", .dflt = OPT_DFLT_FIELD },
	{ .name = "warmup", .kind = OPT_SECONDS, .flags = OPT_F_ZERO_OK, CF(warmup_s), .max_s = 600, .arg = "S",
	  .help = "warm-up per cell", .dflt = OPT_DFLT_FIELD },
	{ .name = "runs", .kind = OPT_INT, CF(runs), .lo = 1, .hi = CMP_MAX_RUNS, .arg = "N",
	  .help = "repeat each cell, report the median and spread", .dflt = OPT_DFLT_FIELD },
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
	}
	if (!o->nmodes)
		return tool_fail(err, errlen, "no mode to compare");
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

static int parse_opts(int argc, char **argv, struct cmp_opts *o, char *err, size_t errlen)
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
	o->runs = 1;
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

/* ---- medians over runs ---- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* per_tx - a run's figure per measured transaction; 0 for a run without any (a median input). */
static double per_tx(uint64_t v, uint64_t tx)
{
	return tx ? (double)v / (double)tx : 0;
}

/* lat_medians - out[8]: min, mean, P50..P99.99, max in us of each run's histogram (hist_of), medians. */
static void lat_medians(double out[8], struct rr_result *runs, int n, const struct bp_hist *(*hist_of)(const struct rr_result *))
{
	static const double pct[] = { 50, 90, 99, 99.9, 99.99 };
	double v[CMP_MAX_RUNS];

	for (int k = 0; k < 8; k++) {
		for (int i = 0; i < n; i++) {
			const struct bp_hist *h = hist_of(&runs[i]);

			v[i] = k == 0 ? (double)h->min : k == 1 ? bp_hist_mean(h) : k == 7 ? (double)h->max
			       : (double)bp_hist_percentile(h, pct[k - 2]);
			v[i] /= 1000.0;
		}
		out[k] = median(v, n);
	}
}

static const struct bp_hist *hist_due(const struct rr_result *r)
{
	return &r->hist;
}

static const struct bp_hist *hist_send(const struct rr_result *r)
{
	return &r->hist_send;
}

/* util - a side's CPU time over its interval, percent of one CPU (0 for a side not measured: a median input). */
static double util(const struct evidence *ev, uint64_t cpu_us)
{
	double u = ev->valid ? ev_util_pct(cpu_us, ev->interval_ns) : 0;

	return isfinite(u) ? u : 0;
}

static void cell_fill(struct cmp_cell *cell, struct rr_result *runs, int n)
{
	double v[CMP_MAX_RUNS];
	int best = 0;

	cell->runs = n;
	for (int i = 0; i < n; i++)
		v[i] = runs[i].tps;
	cell->tps_min = cell->tps_max = v[0];
	for (int i = 1; i < n; i++) {
		if (v[i] < cell->tps_min)
			cell->tps_min = v[i];
		if (v[i] > cell->tps_max)
			cell->tps_max = v[i];
	}
	cell->tps = median(v, n);
	for (int i = 0; i < n; i++)
		if (runs[i].tps <= cell->tps)
			best = i;
	cell->transactions = runs[best].transactions;
	lat_medians(cell->lat_us, runs, n, hist_due);
	if (cell->rate > 0)
		lat_medians(cell->lat_send_us, runs, n, hist_send);
#define MEDIAN_OF(field, expr)                 \
	do {                                   \
		for (int i = 0; i < n; i++) {  \
			struct rr_result *r = &runs[i]; \
			v[i] = (expr);         \
		}                              \
		cell->field = median(v, n);    \
	} while (0)
	MEDIAN_OF(client_cpu_us_per_tx, per_tx(r->client.utime_us + r->client.stime_us, r->transactions));
	MEDIAN_OF(server_cpu_us_per_tx,
		  r->server.valid ? per_tx(r->server.utime_us + r->server.stime_us, r->transactions) : 0);
	MEDIAN_OF(bprx_client_per_tx, per_tx(r->client.busy_poll_rx, r->transactions));
	MEDIAN_OF(bprx_server_per_tx, r->server.valid ? per_tx(r->server.busy_poll_rx, r->transactions) : 0);
	MEDIAN_OF(syscalls_client_per_tx, per_tx(r->client.syscalls, r->transactions));
	MEDIAN_OF(syscalls_server_per_tx, r->server.valid ? per_tx(r->server.syscalls, r->transactions) : 0);
	MEDIAN_OF(client_util.user, util(&r->client, r->client.utime_us));
	MEDIAN_OF(client_util.system, util(&r->client, r->client.stime_us));
	MEDIAN_OF(client_util.total, util(&r->client, ev_cpu_us(&r->client)));
	MEDIAN_OF(server_util.user, util(&r->server, r->server.utime_us));
	MEDIAN_OF(server_util.system, util(&r->server, r->server.stime_us));
	MEDIAN_OF(server_util.total, util(&r->server, ev_cpu_us(&r->server)));
	MEDIAN_OF(queued_pct, 100 * per_tx(r->queued, r->transactions));
	MEDIAN_OF(late_pct, 100 * per_tx(r->late, r->transactions));
#undef MEDIAN_OF
	cell->cpu_us_per_tx = cell->client_cpu_us_per_tx + cell->server_cpu_us_per_tx;
}

/* ---- the test bed and its NAPI settings ---- */

struct bed {
	bool up;
	struct bp_testbed tb;
	int home;                  /* the namespace we came from */
};

static int bed_enter(struct bed *b, int side)
{
	if (!b->up)
		return 0;
	return bp_testbed_enter(&b->tb, side);
}

static int bed_leave(struct bed *b)
{
	int ret;

	if (!b->up)
		return 0;
	ret = bp_netns_restore(b->home);
	b->home = -1;
	if (!ret)
		ret = bp_netns_save(&b->home);
	return ret;
}

/* Read (save) or write back (restore) every NAPI's settings: epoll:suspend changes them. */
static void bed_napi(struct bed *b, struct cmp_report *r, bool restore)
{
	if (!b->up)
		return;
	if (!restore)
		r->nnapi = 0;
	for (int side = 0; side < 2; side++) {
		uint32_t ids[CMP_MAX_NAPI];
		int n = bp_testbed_napi_ids(&b->tb, side, ids, CMP_MAX_NAPI);

		if (n < 0 || bed_enter(b, side))
			continue;
		for (int i = 0; i < n && i < CMP_MAX_NAPI; i++) {
			struct bp_napi_info info;

			if (!restore) {
				if (bp_napi_get(ids[i], &info) || r->nnapi == CMP_MAX_NAPI)
					continue;
				r->napi[r->nnapi++] = (struct cmp_napi){
					.id = info.id, .side = side ? 's' : 'c',
					.defer_hard_irqs = info.defer_hard_irqs,
					.gro_flush_timeout_ns = info.gro_flush_timeout_ns,
					.irq_suspend_timeout_ns = info.irq_suspend_timeout_ns,
					.threaded = info.threaded,
				};
				continue;
			}
			for (int k = 0; k < r->nnapi; k++) {
				if (r->napi[k].id != ids[i])
					continue;
				memset(&info, 0, sizeof(info));
				info.defer_hard_irqs = r->napi[k].defer_hard_irqs;
				info.gro_flush_timeout_ns = r->napi[k].gro_flush_timeout_ns;
				info.irq_suspend_timeout_ns = r->napi[k].irq_suspend_timeout_ns;
				info.has = BP_NAPI_HAS_DEFER | BP_NAPI_HAS_GRO_FLUSH | BP_NAPI_HAS_IRQ_SUSPEND;
				bp_napi_set(ids[i], &info);
			}
		}
		bed_leave(b);
	}
}

static void read_sysctl(const char *path, int *out)
{
	FILE *f = fopen(path, "r");

	*out = -1;
	if (f) {
		if (fscanf(f, "%d", out) != 1)
			*out = -1;
		fclose(f);
	}
}

/* ---- one cell ---- */

static void cell_rr_opts(const struct cmp_opts *o, struct rr_opts *ro, int mi, bool server)
{
	rr_opts_defaults(ro);
	ro->server = server;
	ro->threads = o->threads;
	ro->request_size = o->request_size;
	ro->response_size = o->response_size;
	ro->duration_s = o->duration_s;
	ro->warmup_s = o->warmup_s;
	ro->quiet = true;
	ro->own_server = true;
	/* thread i on the i-th CPU of the side's list, a short list repeated */
	for (int i = 0; i < o->threads; i++)
		ro->cpus[i] = server ? o->server_cpus[i % o->nserver_cpus] : o->client_cpus[i % o->nclient_cpus];
	ro->ncpus = o->threads;
	ro->mode = server ? o->server_mode[mi] : o->client_mode[mi];
	snprintf(ro->mode_text, sizeof(ro->mode_text), "%s", server ? o->server_modes[mi] : o->client_modes[mi]);
}

/* rate_text - an offered rate for people: "max" (the closed loop) or "20000/s". */
static const char *rate_text(double rate, char *buf, size_t len)
{
	if (rate > 0)
		snprintf(buf, len, "%.0f/s", rate);
	else
		snprintf(buf, len, "max");
	return buf;
}

static void progress(const struct cmp_report *r, int done, int total, const struct cmp_cell *c, int run)
{
	const struct cmp_opts *o = &r->opts;
	double per_cell = o->duration_s + o->warmup_s + 0.3;
	double left = per_cell * (double)(total - done);
	char rt[32];

	if (o->quiet)
		return;
	fprintf(stderr, "busypoll compare: [%2d/%d] %-36s flows %-4d", done + 1, total, o->labels[c->mode_idx], c->flows);
	if (o->nrates > 1 || c->rate > 0)
		fprintf(stderr, " rate %-9s", rate_text(c->rate, rt, sizeof(rt)));
	if (r->ncoal > 1)
		fprintf(stderr, " coalescing %s", r->coal_label[r->coal_now]);
	if (o->runs > 1)
		fprintf(stderr, " run %d/%d", run + 1, o->runs);
	fprintf(stderr, "  about %.0f s left\n", left);
}

/* served - the NAPI ids a run's flows were served by, on each end, kept for the header. */
static void served(struct cmp_report *r, const struct rr_result *res)
{
	const struct evidence *ev[2] = { &res->client, &res->server };

	for (int e = 0; e < 2; e++)
		for (uint32_t i = 0; i < ev[e]->n_napi_ids; i++) {
			struct cmp_end *end = &r->ends[e];
			bool have = false;

			for (int k = 0; k < end->nserved; k++)
				have |= end->served[k] == ev[e]->napi_ids[i];
			if (!have && end->nserved < EV_MAX_NAPI)
				end->served[end->nserved++] = ev[e]->napi_ids[i];
		}
}

/*
 * run_cell - the cell's runs against its mode's server at host:port (through side's
 * client namespace), then the medians of those that finished. An open loop the mode
 * cannot keep up with (rr's -EOVERFLOW) is a finding, not a failure: the cell is
 * saturated, with rr's reason.
 */
static void run_cell(struct cmp_report *r, const struct cmp_side *side, const char *host, uint16_t port,
		     struct cmp_cell *cell, struct rr_result *runs, int *done, int total)
{
	const struct cmp_opts *o = &r->opts;
	int n = 0, mi = cell->mode_idx;
	char err[512];

	for (int run = 0; run < o->runs && !*stop_requested; run++) {
		struct rr_opts co;
		int ret;

		progress(r, (*done)++, total, cell, run);
		cell_rr_opts(o, &co, mi, false);
		co.flows = cell->flows;
		co.rate = cell->rate;
		co.port = port;
		snprintf(co.host, sizeof(co.host), "%s", host);
		if (side->client_enter)
			side->client_enter(side->ctx);
		ret = rr_client_run(&co, stop_requested, &runs[n], err, sizeof(err));
		if (side->client_leave)
			side->client_leave(side->ctx);
		if (ret) {
			cell->saturated = ret == -EOVERFLOW;
			cell->failed = !cell->saturated;
			snprintf(cell->error, sizeof(cell->error), "%s", err);
			*done += o->runs - run - 1;
			break;
		}
		if (runs[n].interrupted)
			break;
		served(r, &runs[n]);
		n++;
	}
	if (!n)
		return;
	/* the runs before a failure stay; the cell still says it failed */
	cell_fill(cell, runs, n);
	cell->busy_poll_mode_client = bp_mode_is_busy_poll(&o->client_mode[mi]);
	cell->busy_poll_mode_server = bp_mode_is_busy_poll(&o->server_mode[mi]);
	cell->proof_missing = cmp_proof_missing(cell);
}

int cmp_run_matrix(struct cmp_report *r, const struct cmp_side *side)
{
	const struct cmp_opts *o = &r->opts;
	int per_block = o->nmodes * o->nflows * o->nrates * o->runs;
	int total = per_block * r->ncoal, done = per_block * r->coal_now;
	struct rr_result *runs = calloc((size_t)o->runs, sizeof(*runs));

	if (!runs)
		return -ENOMEM;
	for (int mi = 0; mi < o->nmodes && !*stop_requested; mi++) {
		char host[TOOL_HOST_LEN], err[512];
		uint16_t port = 0;
		int ret = side->start(side->ctx, mi, host, sizeof(host), &port, err, sizeof(err));

		for (int fi = 0; fi < o->nflows && !*stop_requested; fi++) {
			for (int ri = 0; ri < o->nrates && !*stop_requested; ri++) {
				struct cmp_cell *cell = &r->cells[r->ncells++];

				cell->mode_idx = mi;
				cell->coal_idx = r->coal_now;
				cell->flows = o->flows[fi];
				cell->rate = o->rates[ri];
				if (ret) {
					cell->failed = true;
					snprintf(cell->error, sizeof(cell->error), "server: %.400s", err);
					done += o->runs;
					continue;
				}
				run_cell(r, side, host, port, cell, runs, &done, total);
				if (!cell->runs && !cell->failed && !cell->saturated)
					r->ncells--; /* interrupted before anything was measured */
			}
		}
		if (!ret)
			side->stop(side->ctx, mi);
	}
	free(runs);
	if (*stop_requested)
		r->interrupted = true;
	return 0;
}

/* ---- the test bed's side: both ends here, the server in the bed's second namespace ---- */

struct bed_side {
	struct cmp_report *r;
	struct bed *b;
	struct rr_server *srv;
};

static int bed_start(void *ctx, int mi, char *host, size_t hostlen, uint16_t *port, char *err, size_t errlen)
{
	struct bed_side *bs = ctx;
	struct bed *b = bs->b;
	struct rr_opts so;
	int ret;

	cell_rr_opts(&bs->r->opts, &so, mi, true);
	so.port = b->up ? CMP_PORT : 0;
	snprintf(so.host, sizeof(so.host), "%s", b->up ? b->tb.addr[1] : "127.0.0.1");
	if (bed_enter(b, 1)) {
		snprintf(err, errlen, "cannot enter the test bed: %s", strerror(errno));
		return -errno;
	}
	ret = rr_server_start(&so, &bs->srv, err, errlen);
	bed_leave(b);
	if (!ret) {
		snprintf(host, hostlen, "%s", so.host);
		*port = rr_server_port(bs->srv);
	}
	return ret;
}

static void bed_stop(void *ctx, int mi)
{
	struct bed_side *bs = ctx;

	rr_server_stop(bs->srv);
	bs->srv = NULL;
	/* epoll:suspend sets per-NAPI timeouts; the next mode starts from the original. */
	bed_napi(bs->b, bs->r, true);
}

static int bed_client_enter(void *ctx)
{
	struct bed_side *bs = ctx;

	return bed_enter(bs->b, 0);
}

static void bed_client_leave(void *ctx)
{
	struct bed_side *bs = ctx;

	bed_leave(bs->b);
}

static int run_matrix(struct cmp_report *r, struct bed *b)
{
	struct bed_side bs = { .r = r, .b = b };
	const struct cmp_side side = { .start = bed_start, .stop = bed_stop, .client_enter = bed_client_enter,
				       .client_leave = bed_client_leave, .ctx = &bs };

	r->ncoal = 1;
	return cmp_run_matrix(r, &side);
}

/* stale_found - a stale bed removed at the start: said now, and kept for the report. */
static void stale_found(void *ctx, const char *line)
{
	struct cmp_report *r = ctx;

	fprintf(stderr, "busypoll compare: %s\n", line);
	if (r->nstale < 4)
		snprintf(r->stale[r->nstale++], sizeof(r->stale[0]), "%s", line);
}

static void baselines(struct cmp_report *r)
{
	for (int i = 0; i < r->ncells; i++) {
		struct cmp_cell *c = &r->cells[i];

		for (int j = 0; j < r->ncells; j++) {
			const struct cmp_cell *b = &r->cells[j];

			if (b->mode_idx != 0 || b->flows != c->flows || b->rate != c->rate || b->coal_idx != c->coal_idx ||
			    b->failed || c->failed || !c->runs || !b->tps)
				continue;
			c->have_baseline = true;
			c->d_tps_pct = (c->tps / b->tps - 1) * 100;
			c->d_p50_pct = b->lat_us[2] ? (c->lat_us[2] / b->lat_us[2] - 1) * 100 : 0;
			c->d_p99_pct = b->lat_us[4] ? (c->lat_us[4] / b->lat_us[4] - 1) * 100 : 0;
		}
	}
}

int cmd_compare(int argc, char **argv)
{
	struct cmp_report *r = calloc(1, sizeof(*r));
	struct bed b = { .home = -1 };
	struct utsname un;
	char err[512];
	int ret;

	if (!r) {
		bp_tool_error("compare", "out of memory");
		return BP_EXIT_FAIL;
	}
	ret = parse_opts(argc, argv, &r->opts, err, sizeof(err));
	if (ret == 1) {
		free(r);
		return BP_EXIT_OK;
	}
	if (ret) {
		bp_tool_error("compare", "%s", err);
		free(r);
		return BP_EXIT_USAGE;
	}
	stop_requested = tool_catch_stop_signals();
	if (uname(&un) == 0)
		snprintf(r->kernel, sizeof(r->kernel), "%s", un.release);
	read_sysctl("/proc/sys/net/core/busy_poll", &r->sysctl_busy_poll);
	read_sysctl("/proc/sys/net/core/busy_read", &r->sysctl_busy_read);

	if (r->opts.remote.remote[0]) {
		/* two hosts: this one and the agent's; no test bed */
		ret = cmp_remote_run(r, stop_requested, err, sizeof(err));
		if (ret) {
			bp_tool_error("compare", "%s", err);
			free(r);
			return BP_EXIT_FAIL;
		}
		goto print;
	}
	if (geteuid() != 0 && !r->opts.loopback) {
		r->opts.loopback = true;
		fprintf(stderr, "busypoll compare: not root, so no veth test bed: running on loopback, which has no "
				"NAPI, so kernel busy polling cannot engage there (run as root for the real comparison)\n");
	}
	if (!r->opts.loopback) {
		char name[32];

		/* a compare killed (or whose terminal closed) before it could clean up left its bed: remove it */
		bp_testbed_reap_stale(stale_found, r);
		snprintf(name, sizeof(name), "cmp%d", (int)getpid());
		if (bp_netns_save(&b.home)) {
			bp_tool_error("compare", "%s", bp_last_error());
			free(r);
			return BP_EXIT_FAIL;
		}
		ret = bp_testbed_up(&b.tb, name, 1, false);
		if (ret) {
			bp_tool_error("compare", "cannot build the test bed: %s", bp_last_error());
			bp_netns_restore(b.home);
			free(r);
			return BP_EXIT_FAIL;
		}
		b.up = true;
		snprintf(r->path, sizeof(r->path), "veth test bed %s <-> %s (%s <-> %s)", b.tb.ns[0], b.tb.ns[1],
			 b.tb.addr[0], b.tb.addr[1]);
		bed_napi(&b, r, false);
	} else {
		snprintf(r->path, sizeof(r->path), "loopback (no NAPI: kernel busy polling cannot engage)");
	}

	ret = run_matrix(r, &b);
	if (b.up) {
		bp_testbed_down(&b.tb);
		bp_netns_restore(b.home);
	}
	if (ret) {
		bp_tool_error("compare", "%s", strerror(-ret));
		free(r);
		return BP_EXIT_FAIL;
	}
print:
	baselines(r);
	compare_print(stdout, r);
	if (r->opts.plot[0] && compare_plot(r->opts.plot, r, err, sizeof(err))) {
		bp_tool_error("compare", "%s", err);
		ret = BP_EXIT_FAIL;
	}
	if (r->remote_error[0]) {
		bp_tool_error("compare", "%s", r->remote_error);
		ret = BP_EXIT_FAIL;
	}
	ret = r->interrupted ? BP_EXIT_INTERRUPTED : ret;
	for (int i = 0; i < r->ncells && ret == 0; i++)
		if (r->cells[i].failed)
			ret = BP_EXIT_FAIL;
	free(r);
	return ret;
}
