/* SPDX-License-Identifier: MIT */
/*
 * busypoll compare: the main job. As root it builds a temporary veth test bed
 * (where NAPI exists, so kernel busy polling can really engage), runs the rr
 * server in one namespace and the client in the other, pinned to different CPUs,
 * over every mode this machine supports and each flow count, and removes the
 * bed on every exit path (Ctrl-C included). Not root: loopback, said plainly.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "tools/bed/testbed.h"

#include "tools/common/commands.h"
#include "tools/compare/compare.h"
#include "tools/common/options.h"

#define CMP_PORT 12867

static volatile sig_atomic_t *stop_requested;

/* The default matrix: one representative setting per mode family, baseline first. */
static const char *const default_modes[] = {
	"epoll:block",
	"epoll:napi,usecs=64,budget=8",
	"epoll:napi,usecs=64,budget=8,prefer",
	"epoll:spin",
	"epoll:hybrid,period=100",
	"epoll:suspend",
	"uring:block",
	"uring:napi,usecs=64",
	"uring:spin",
	"uring:hybrid,period=100",
	"uring:sqpoll,napi=64",
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: busypoll compare [options]\n\n"
		"Runs busypoll rr in every wait mode this machine supports, side by side, on a\n"
		"temporary veth test bed (as root; removed on exit) where busy polling really engages.\n\n"
		"  --modes LIST         ';'-separated modes (default: one per family, epoll:block first)\n"
		"  --server-mode MODE   with --client-mode: one asymmetric pair (busy poll on one end)\n"
		"  --client-mode MODE\n"
		"  --flows LIST         flow counts, e.g. 1,15 (default 1,15)\n"
		"  -l, --duration S     seconds per cell (default 3)\n"
		"  --warmup S           warm-up per cell (default 0.5)\n"
		"  --runs N             repeat each cell, report the median and spread (default 1)\n"
		"  -T, --threads N      threads per side (default 1)\n"
		"  -Q, -R BYTES         request and response sizes (default 1)\n"
		"  --cpus C,S           client and server CPU (default 0,1)\n"
		"  --loopback           run on loopback even as root (busy polling cannot engage)\n"
		"  --format F           table (default), json or csv\n"
		"  --plot FILE.svg      latency percentiles and throughput of every mode\n"
		"  -q, --quiet          no progress lines\n");
}

/* A mode for the matrix: canonical text, or the reason this machine cannot run it. */
static int add_mode(struct cmp_opts *o, const char *client, const char *server, bool skip_unusable, char *err,
		    size_t errlen)
{
	struct bp_mode mc, ms;
	char why[200];

	if (o->nmodes == CMP_MAX_MODES) {
		snprintf(err, errlen, "at most %d modes", CMP_MAX_MODES);
		return -EINVAL;
	}
	if (bp_mode_parse(client, &mc, why, sizeof(why)) || bp_mode_parse(server, &ms, why, sizeof(why))) {
		snprintf(err, errlen, "%s", why);
		return -EINVAL;
	}
	if (bp_mode_check(&mc, why, sizeof(why)) || bp_mode_check(&ms, why, sizeof(why))) {
		if (!skip_unusable) {
			snprintf(err, errlen, "%s", why);
			return -EOPNOTSUPP;
		}
		if (o->nskipped < CMP_MAX_MODES)
			snprintf(o->skipped[o->nskipped++], sizeof(o->skipped[0]), "%s", why);
		return 0;
	}
	if (!strcmp(client, server))
		snprintf(o->labels[o->nmodes], sizeof(o->labels[0]), "%s", client);
	else
		snprintf(o->labels[o->nmodes], sizeof(o->labels[0]), "client %.60s / server %.60s", client, server);
	bp_mode_format(&mc, o->client_modes[o->nmodes], sizeof(o->client_modes[0]));
	bp_mode_format(&ms, o->server_modes[o->nmodes], sizeof(o->server_modes[0]));
	o->nmodes++;
	return 0;
}

static int parse_opts(int argc, char **argv, struct cmp_opts *o, char *err, size_t errlen)
{
	static const struct option lopts[] = {
		{ "modes", required_argument, 0, 'M' }, { "server-mode", required_argument, 0, 'S' },
		{ "client-mode", required_argument, 0, 'C' }, { "flows", required_argument, 0, 'F' },
		{ "duration", required_argument, 0, 'l' }, { "warmup", required_argument, 0, 'w' },
		{ "runs", required_argument, 0, 'r' }, { "threads", required_argument, 0, 'T' },
		{ "request-size", required_argument, 0, 'Q' }, { "response-size", required_argument, 0, 'R' },
		{ "cpus", required_argument, 0, 'c' }, { "loopback", no_argument, 0, 'L' },
		{ "format", required_argument, 0, 'f' }, { "plot", required_argument, 0, 'p' },
		{ "quiet", no_argument, 0, 'q' }, { "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 },
	};
	const char *modes = NULL, *smode = NULL, *cmode = NULL;
	long long v;
	int c;

	memset(o, 0, sizeof(*o));
	o->flows[0] = 1;
	o->flows[1] = 15;
	o->nflows = 2;
	o->duration_s = 3;
	o->warmup_s = 0.5;
	o->runs = 1;
	o->threads = 1;
	o->request_size = o->response_size = 1;
	o->client_cpu = 0;
	o->server_cpu = 1;
	o->format = RR_FORMAT_TABLE;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":l:T:Q:R:qh", lopts, NULL)) != -1) {
		switch (c) {
		case 'M': modes = optarg; break;
		case 'S': smode = optarg; break;
		case 'C': cmode = optarg; break;
		case 'F': {
			char buf[256], *save = NULL, *tok;

			snprintf(buf, sizeof(buf), "%s", optarg);
			o->nflows = 0;
			for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
				if (o->nflows == CMP_MAX_FLOWS) {
					snprintf(err, errlen, "--flows: at most %d values", CMP_MAX_FLOWS);
					return -EINVAL;
				}
				if (tool_opt_int("--flows", tok, 1, 100000, &v, err, errlen))
					return -EINVAL;
				o->flows[o->nflows++] = (int)v;
			}
			if (!o->nflows) {
				snprintf(err, errlen, "--flows: give a list such as 1,15");
				return -EINVAL;
			}
			break;
		}
		case 'l':
			if (tool_opt_seconds("--duration", optarg, false, 3600, &o->duration_s, err, errlen))
				return -EINVAL;
			break;
		case 'w':
			if (tool_opt_seconds("--warmup", optarg, true, 600, &o->warmup_s, err, errlen))
				return -EINVAL;
			break;
		case 'r':
			if (tool_opt_int("--runs", optarg, 1, CMP_MAX_RUNS, &v, err, errlen))
				return -EINVAL;
			o->runs = (int)v;
			break;
		case 'T':
			if (tool_opt_int("--threads", optarg, 1, RR_MAX_THREADS, &v, err, errlen))
				return -EINVAL;
			o->threads = (int)v;
			break;
		case 'Q':
		case 'R':
			if (tool_opt_size(c == 'Q' ? "--request-size" : "--response-size", optarg, BP_RR_MAX_SIZE,
					  c == 'Q' ? &o->request_size : &o->response_size, err, errlen))
				return -EINVAL;
			break;
		case 'c': {
			int cpus[2];

			if (bp_parse_cpu_list(optarg, cpus, 2) != 2 || cpus[0] == cpus[1]) {
				snprintf(err, errlen, "--cpus %s: give two different CPUs, client first (e.g. 0,1)", optarg);
				return -EINVAL;
			}
			o->client_cpu = cpus[0];
			o->server_cpu = cpus[1];
			break;
		}
		case 'L': o->loopback = true; break;
		case 'f': {
			static const char *const formats[] = { "table", "json", "csv", NULL };
			int f = tool_opt_choice("--format", optarg, formats, err, errlen);

			if (f < 0)
				return -EINVAL;
			o->format = f == 1 ? RR_FORMAT_JSON : f == 2 ? RR_FORMAT_CSV : RR_FORMAT_TABLE;
			break;
		}
		case 'p': o->plot = optarg; break;
		case 'q': o->quiet = true; break;
		case 'h': usage(stdout); return 1;
		case ':':
			snprintf(err, errlen, "%s needs a value", argv[optind - 1]);
			return -EINVAL;
		default:
			snprintf(err, errlen, "unknown option %s; see busypoll compare --help", argv[optind - 1]);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		snprintf(err, errlen, "unexpected argument '%s'; see busypoll compare --help", argv[optind]);
		return -EINVAL;
	}
	if (!!smode != !!cmode) {
		snprintf(err, errlen, "--server-mode and --client-mode go together");
		return -EINVAL;
	}
	if (smode && modes) {
		snprintf(err, errlen, "--modes and --server-mode/--client-mode exclude each other");
		return -EINVAL;
	}
	if (smode) {
		/* Asymmetric: the baseline (both block) first, then the pair asked for. */
		char base[64];
		struct bp_mode m;

		if (bp_mode_parse(cmode, &m, err, errlen))
			return -EINVAL;
		snprintf(base, sizeof(base), "%s:block", m.backend == BP_BACKEND_URING ? "uring" : "epoll");
		if (add_mode(o, base, base, false, err, errlen) || add_mode(o, cmode, smode, false, err, errlen))
			return -EINVAL;
	} else if (modes) {
		char buf[2048], *save = NULL, *tok;

		snprintf(buf, sizeof(buf), "%s", modes);
		for (tok = strtok_r(buf, ";", &save); tok; tok = strtok_r(NULL, ";", &save)) {
			int ret = add_mode(o, tok, tok, false, err, errlen);

			if (ret)
				return ret;
		}
	} else {
		for (size_t i = 0; i < sizeof(default_modes) / sizeof(default_modes[0]); i++)
			if (add_mode(o, default_modes[i], default_modes[i], true, err, errlen))
				return -EINVAL;
	}
	if (!o->nmodes) {
		snprintf(err, errlen, "no mode to compare");
		return -EINVAL;
	}
	if (o->threads > o->flows[0] && o->nflows) {
		for (int i = 0; i < o->nflows; i++)
			if (o->flows[i] < o->threads) {
				snprintf(err, errlen, "--flows %d is fewer than --threads %d", o->flows[i], o->threads);
				return -EINVAL;
			}
	}
	return 0;
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

static void cell_fill(struct cmp_cell *cell, struct rr_result *runs, int n)
{
	double v[CMP_MAX_RUNS];
	static const double pct[] = { 50, 90, 99, 99.9, 99.99 };
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
	for (int k = 0; k < 8; k++) {
		for (int i = 0; i < n; i++) {
			const struct bp_hist *h = &runs[i].hist;

			v[i] = k == 0 ? (double)h->min : k == 1 ? bp_hist_mean(h) : k == 7 ? (double)h->max
			       : (double)bp_hist_percentile(h, pct[k - 2]);
			v[i] /= 1000.0;
		}
		cell->lat_us[k] = median(v, n);
	}
#define MEDIAN_OF(field, expr)                 \
	do {                                   \
		for (int i = 0; i < n; i++) {  \
			struct rr_result *r = &runs[i]; \
			v[i] = (expr);         \
		}                              \
		cell->field = median(v, n);    \
	} while (0)
	MEDIAN_OF(client_cpu_us_per_tx, rr_per_tx(r->client.utime_us + r->client.stime_us, r->transactions));
	MEDIAN_OF(server_cpu_us_per_tx,
		  r->server.valid ? rr_per_tx(r->server.utime_us + r->server.stime_us, r->transactions) : 0);
	MEDIAN_OF(bprx_client_per_tx, rr_per_tx(r->client.busy_poll_rx, r->transactions));
	MEDIAN_OF(bprx_server_per_tx, r->server.valid ? rr_per_tx(r->server.busy_poll_rx, r->transactions) : 0);
	MEDIAN_OF(syscalls_client_per_tx, rr_per_tx(r->client.syscalls, r->transactions));
	MEDIAN_OF(syscalls_server_per_tx, r->server.valid ? rr_per_tx(r->server.syscalls, r->transactions) : 0);
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

static void cell_rr_opts(const struct cmp_opts *o, struct rr_opts *ro, const char *mode_text, bool server)
{
	rr_opts_defaults(ro);
	ro->server = server;
	ro->threads = o->threads;
	ro->request_size = o->request_size;
	ro->response_size = o->response_size;
	ro->duration_s = o->duration_s;
	ro->warmup_s = o->warmup_s;
	ro->quiet = true;
	ro->cpus[0] = server ? o->server_cpu : o->client_cpu;
	ro->ncpus = 1;
	bp_mode_parse(mode_text, &ro->mode, NULL, 0);
	snprintf(ro->mode_text, sizeof(ro->mode_text), "%s", mode_text);
}

static void progress(const struct cmp_opts *o, int done, int total, const char *label, int flows, int run)
{
	double per_cell = o->duration_s + o->warmup_s + 0.3;
	double left = per_cell * (double)(total - done);

	if (o->quiet)
		return;
	fprintf(stderr, "busypoll compare: [%2d/%d] %-36s flows %-4d", done + 1, total, label, flows);
	if (o->runs > 1)
		fprintf(stderr, " run %d/%d", run + 1, o->runs);
	fprintf(stderr, "  about %.0f s left\n", left);
}

static int run_matrix(struct cmp_report *r, struct bed *b)
{
	const struct cmp_opts *o = &r->opts;
	int total = o->nmodes * o->nflows * o->runs, done = 0;
	struct rr_result *runs = calloc((size_t)o->runs, sizeof(*runs));

	if (!runs)
		return -ENOMEM;
	for (int mi = 0; mi < o->nmodes && !*stop_requested; mi++) {
		struct rr_opts so;
		struct rr_server *srv;
		char err[512];
		int ret;

		cell_rr_opts(o, &so, o->server_modes[mi], true);
		so.port = b->up ? CMP_PORT : 0;
		snprintf(so.host, sizeof(so.host), "%s", b->up ? b->tb.addr[1] : "127.0.0.1");
		if (bed_enter(b, 1))
			return -errno;
		ret = rr_server_start(&so, &srv, err, sizeof(err));
		bed_leave(b);
		for (int fi = 0; fi < o->nflows && !*stop_requested; fi++) {
			struct cmp_cell *cell = &r->cells[r->ncells++];
			int n = 0;

			cell->mode_idx = mi;
			cell->flows = o->flows[fi];
			if (ret) {
				cell->failed = true;
				snprintf(cell->error, sizeof(cell->error), "server: %.400s", err);
				done += o->runs;
				continue;
			}
			for (int run = 0; run < o->runs && !*stop_requested; run++) {
				struct rr_opts co;

				progress(o, done++, total, o->labels[mi], cell->flows, run);
				cell_rr_opts(o, &co, o->client_modes[mi], false);
				co.flows = cell->flows;
				co.port = rr_server_port(srv);
				snprintf(co.host, sizeof(co.host), "%s", b->up ? b->tb.addr[1] : "127.0.0.1");
				bed_enter(b, 0);
				if (rr_client_run(&co, stop_requested, &runs[n], err, sizeof(err))) {
					cell->failed = true;
					snprintf(cell->error, sizeof(cell->error), "%s", err);
					bed_leave(b);
					break;
				}
				bed_leave(b);
				if (runs[n].interrupted)
					break;
				n++;
			}
			if (n) {
				struct bp_mode cm, sm;

				cell_fill(cell, runs, n);
				cell->failed = false;
				bp_mode_parse(o->client_modes[mi], &cm, NULL, 0);
				bp_mode_parse(o->server_modes[mi], &sm, NULL, 0);
				cell->busy_poll_mode_client = bp_mode_is_busy_poll(&cm);
				cell->busy_poll_mode_server = bp_mode_is_busy_poll(&sm);
				cell->proof_missing =
					(cell->busy_poll_mode_client && cell->bprx_client_per_tx < CMP_PROOF_MIN) ||
					(cell->busy_poll_mode_server && cell->bprx_server_per_tx < CMP_PROOF_MIN);
			} else if (!cell->failed) {
				r->ncells--; /* interrupted before anything was measured */
			}
		}
		if (!ret)
			rr_server_stop(srv);
		/* epoll:suspend sets per-NAPI timeouts; the next mode starts from the original. */
		bed_napi(b, r, true);
	}
	free(runs);
	if (*stop_requested)
		r->interrupted = true;
	return 0;
}

static void baselines(struct cmp_report *r)
{
	for (int i = 0; i < r->ncells; i++) {
		struct cmp_cell *c = &r->cells[i];

		for (int j = 0; j < r->ncells; j++) {
			const struct cmp_cell *b = &r->cells[j];

			if (b->mode_idx != 0 || b->flows != c->flows || b->failed || c->failed || !b->tps)
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

	if (geteuid() != 0 && !r->opts.loopback) {
		r->opts.loopback = true;
		fprintf(stderr, "busypoll compare: not root, so no veth test bed: running on loopback, which has no "
				"NAPI, so kernel busy polling cannot engage there (run as root for the real comparison)\n");
	}
	if (!r->opts.loopback) {
		char name[32];

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
	baselines(r);
	compare_print(stdout, r);
	if (r->opts.plot && compare_plot(r->opts.plot, r, err, sizeof(err))) {
		bp_tool_error("compare", "%s", err);
		ret = BP_EXIT_FAIL;
	}
	ret = r->interrupted ? BP_EXIT_INTERRUPTED : ret;
	for (int i = 0; i < r->ncells && ret == 0; i++)
		if (r->cells[i].failed)
			ret = BP_EXIT_FAIL;
	free(r);
	return ret;
}
