/* SPDX-License-Identifier: MIT */
/*
 * busypoll tune: its option table and the space it searches (contract in
 * tools/tune/tune.h). The workload options are compare's; the goal, the budget and
 * what narrows the space are tune's own.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools/common/opt.h"
#include "tools/common/values.h"
#include "tools/tune/tune.h"

/* The default space: a few key values per mode family (epoll:block and the recipe come first, always). */
static const char *const default_space[] = {
	"epoll:napi,usecs=16,budget=8",
	"epoll:napi,usecs=64,budget=8",
	"epoll:napi,usecs=200,budget=8",
	"epoll:napi,usecs=64,budget=8,prefer",
	"epoll:spin",
	"epoll:hybrid",
	"epoll:suspend",
	"uring:block",
	"uring:napi,usecs=64",
	"uring:spin",
};

int tune_parse_goal(const char *name, const char *v, struct tune_goal *g, char *err, size_t errlen)
{
	char num[32], *end;
	double x, scale = 1;
	size_t len;

	if (!strcmp(v, "max-tps")) {
		g->kind = TUNE_GOAL_MAX_TPS;
		return 0;
	}
	if (strncmp(v, "p99=", 4) || !v[4] || strlen(v + 4) >= sizeof(num))
		return tool_fail(err, errlen, "%s %s: give p99=TIME (50us, 0.2ms) or max-tps", name, v);
	snprintf(num, sizeof(num), "%s", v + 4);
	len = strlen(num);
	if (len > 2 && !strcmp(num + len - 2, "us"))
		num[len - 2] = 0;
	else if (len > 2 && !strcmp(num + len - 2, "ms"))
		num[len - 2] = 0, scale = 1000;
	else if (len > 1 && num[len - 1] == 's')
		num[len - 1] = 0, scale = 1e6;
	if (!num[0] || !strchr("0123456789.", num[0]))
		return tool_fail(err, errlen, "%s %s: give p99=TIME (50us, 0.2ms) or max-tps", name, v);
	x = strtod(num, &end);
	if (*end || !isfinite(x) || x <= 0 || x * scale > 10e6)
		return tool_fail(err, errlen, "%s %s: the P99 is a time above 0 and at most 10 s, such as 50us",
				 name, v);
	g->kind = TUNE_GOAL_P99;
	g->p99_us = x * scale;
	return 0;
}

static int parse_goal(const struct opt_spec *sp, const char *name, const char *v, void *base, char *err,
		      size_t errlen)
{
	struct tune_opts *o = base;

	if (tune_parse_goal(name, v, &o->goal, err, errlen))
		return -EINVAL;
	snprintf(o->goal_text, sizeof(o->goal_text), "%s", v);
	return 0;
}

/* --cpu-budget N: CPUs, both ends together (1.5 is one and a half). */
static int parse_cpu_budget(const struct opt_spec *sp, const char *name, const char *v, void *base, char *err,
			    size_t errlen)
{
	struct tune_opts *o = base;
	double x;

	if (tool_opt_rate(name, v, 4096, &x, err, errlen))
		return -EINVAL;
	o->goal.cpu_budget = x;
	return 0;
}

/* --rate R, or max: the closed loop. */
static int parse_rate(const struct opt_spec *sp, const char *name, const char *v, void *base, char *err,
		      size_t errlen)
{
	struct tune_opts *o = base;

	if (!strcmp(v, "max")) {
		o->rate = 0;
		return 0;
	}
	return tool_opt_rate(name, v, RR_MAX_RATE, &o->rate, err, errlen) ? -EINVAL : 0;
}

/* --modes "A;B": the space's modes, each checked against this machine, none twice. */
static int parse_modes(const struct opt_spec *sp, const char *name, const char *v, void *base, char *err,
		       size_t errlen)
{
	struct tune_opts *o = base;
	char buf[2048], *save = NULL, *tok;

	if (strlen(v) >= sizeof(buf))
		return tool_fail(err, errlen, "%s: longer than %zu characters", name, sizeof(buf) - 1);
	if (tool_check_list(name, v, ';', err, errlen))
		return -EINVAL;
	snprintf(buf, sizeof(buf), "%s", v);
	for (tok = strtok_r(buf, ";", &save); tok; tok = strtok_r(NULL, ";", &save)) {
		struct bp_mode m;

		if (o->nmodes == TUNE_MAX_CANDS - 2)
			return tool_fail(err, errlen, "%s: at most %d modes", name, TUNE_MAX_CANDS - 2);
		if (opt_mode_read(name, tok, &m, o->modes[o->nmodes], err, errlen))
			return -EINVAL;
		for (int i = 0; i < o->nmodes; i++)
			if (!strcmp(o->modes[i], o->modes[o->nmodes]))
				return tool_fail(err, errlen, "%s: %s is listed twice (as %s)", name, tok, o->modes[i]);
		o->nmodes++;
	}
	o->modes_given = true;
	return 0;
}

/* parse_plot - --plot FILE.svg: checked before the search rather than after it. */
static int parse_plot(const struct opt_spec *sp, const char *name, const char *v, void *base, char *err,
		      size_t errlen)
{
	struct tune_opts *o = base;

	return tool_opt_svg_file(name, v, o->plot, sizeof(o->plot), err, errlen);
}

/* --fix KEY=V, repeatable: a key of the mode grammar or busy_read/busy_poll. */
static int parse_fix(const struct opt_spec *sp, const char *name, const char *v, void *base, char *err,
		     size_t errlen)
{
	struct tune_opts *o = base;
	const char *eq = strchr(v, '=');

	if (!eq || eq == v || !eq[1] || strchr(eq + 1, '=') || strchr(v, ',') || strchr(v, ' '))
		return tool_fail(err, errlen, "%s %s: give one KEY=VALUE, such as usecs=64 or busy_read=50", name, v);
	if (o->nfix == TUNE_MAX_FIX)
		return tool_fail(err, errlen, "%s: at most %d", name, TUNE_MAX_FIX);
	if (strlen(v) >= sizeof(o->fix[0]))
		return tool_fail(err, errlen, "%s %s: longer than %zu characters", name, v, sizeof(o->fix[0]) - 1);
	snprintf(o->fix[o->nfix++], sizeof(o->fix[0]), "%s", v);
	return 0;
}

/* --keys K,K: the keys the space varies; each one a mode takes, or busy_read/busy_poll. */
static int parse_keys(const struct opt_spec *sp, const char *name, const char *v, void *base, char *err,
		      size_t errlen)
{
	struct tune_opts *o = base;
	char buf[256], *save = NULL, *tok;

	if (strlen(v) >= sizeof(buf))
		return tool_fail(err, errlen, "%s: longer than %zu characters", name, sizeof(buf) - 1);
	if (tool_check_list(name, v, ',', err, errlen))
		return -EINVAL;
	snprintf(buf, sizeof(buf), "%s", v);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!tune_key_known(tok))
			return tool_fail(err, errlen, "%s %s: %s is not a key of any mode, nor busy_read or busy_poll "
					 "(busypoll modes lists the keys)", name, v, tok);
		if (o->nkeys == TUNE_MAX_KEYS)
			return tool_fail(err, errlen, "%s: at most %d keys", name, TUNE_MAX_KEYS);
		snprintf(o->keys[o->nkeys++], sizeof(o->keys[0]), "%s", tok);
	}
	return 0;
}

#define TF(m) OPT_FIELD(struct tune_opts, m)

static const struct opt_spec tune_specs[] = {
	{ .name = "goal", .kind = OPT_CUSTOM, .parse = parse_goal, .arg = "GOAL",
	  .help = "p99=TIME: at most that P99 at the offered rate at the least CPU (both ends);\n"
		  "max-tps: the most transactions/s within --cpu-budget" },
	{ .name = "cpu-budget", .kind = OPT_CUSTOM, .parse = parse_cpu_budget, .arg = "N",
	  .help = "with --goal max-tps: CPUs both ends may use together, e.g. 1.5" },
	{ .name = "budget", .kind = OPT_SECONDS, TF(budget_s), .max_s = 86400, .arg = "TIME",
	  .help = "the whole search and its confirmation, e.g. 2m", .dflt = OPT_DFLT_FIELD },
	{ .name = "rate", .kind = OPT_CUSTOM, .parse = parse_rate, .arg = "R",
	  .help = "offered requests/s over all flows (an open loop), or max: the closed loop (default max)" },
	{ .name = "flows", .shortname = 'F', .kind = OPT_INT, TF(flows), .lo = 1, .hi = 100000, .arg = "N",
	  .help = "flows", .dflt = OPT_DFLT_FIELD },
	{ .name = "threads", .shortname = 'T', .kind = OPT_INT, TF(threads), .lo = 1, .hi = RR_MAX_THREADS, .arg = "N",
	  .help = "threads per side", .dflt = OPT_DFLT_FIELD },
	{ .name = "request-size", .shortname = 'Q', .kind = OPT_SIZE, TF(request_size), .hi = BP_RR_MAX_SIZE,
	  .arg = "B", .help = "request bytes", .dflt = OPT_DFLT_FIELD },
	{ .name = "response-size", .shortname = 'R', .kind = OPT_SIZE, TF(response_size), .hi = BP_RR_MAX_SIZE,
	  .arg = "B", .help = "response bytes", .dflt = OPT_DFLT_FIELD },
	{ .name = "modes", .kind = OPT_CUSTOM, .parse = parse_modes, .arg = "LIST",
	  .help = "';'-separated modes: the space (default: a few key values per mode family)" },
	{ .name = "fix", .kind = OPT_CUSTOM, .flags = OPT_F_REPEAT, .parse = parse_fix, .arg = "KEY=V",
	  .help = "repeatable: only candidates with that setting (usecs=64, prefer=1, busy_read=50)" },
	{ .name = "keys", .kind = OPT_CUSTOM, .parse = parse_keys, .arg = "K,K",
	  .help = "only candidates that set one of these keys (usecs, prefer,\nbusy_read: the recipe)" },
	{ .name = "client-cpus", .kind = OPT_CPUS, OPT_CPUS_FIELD(struct tune_opts, client_cpus, nclient_cpus),
	  .arg = "LIST", .help = "client thread i on the i-th CPU of LIST (default 0)" },
	{ .name = "server-cpus", .kind = OPT_CPUS, OPT_CPUS_FIELD(struct tune_opts, server_cpus, nserver_cpus),
	  .arg = "LIST", .help = "server thread i on the i-th CPU of LIST (default 1)" },
	{ .name = "plot", .kind = OPT_CUSTOM, .parse = parse_plot, .arg = "FILE.svg",
	  .help = "every candidate, P99 against CPU, the Pareto front and the answer marked" },
	{ .name = "loopback", .kind = OPT_FLAG, TF(loopback),
	  .help = "run on loopback even as root (busy polling cannot engage)" },
};

/* The goal and its budget, the workload's rules; then the space must hold a candidate. */
static int tune_check(void *base, const struct opt_seen *seen, char *err, size_t errlen)
{
	struct tune_opts *o = base;

	if (!opt_given(seen, "goal"))
		return tool_fail(err, errlen, "--goal is missing: give p99=TIME (such as p99=50us) or max-tps "
				 "with --cpu-budget N");
	if (o->goal.kind == TUNE_GOAL_MAX_TPS && !opt_given(seen, "cpu-budget"))
		return tool_fail(err, errlen, "--goal max-tps needs --cpu-budget N (CPUs, both ends together)");
	if (o->goal.kind == TUNE_GOAL_P99 && opt_given(seen, "cpu-budget"))
		return tool_fail(err, errlen, "--cpu-budget goes with --goal max-tps; --goal %s already asks for "
				 "the least CPU", o->goal_text);
	if (o->flows < o->threads)
		return tool_fail(err, errlen, "--flows %d is fewer than --threads %d", o->flows, o->threads);
	if (o->nclient_cpus > o->threads || o->nserver_cpus > o->threads)
		return tool_fail(err, errlen, "--%s-cpus: more CPUs than --threads %d (one CPU per thread)",
				 o->nclient_cpus > o->threads ? "client" : "server", o->threads);
	if (!opt_given(seen, "modes"))
		for (size_t i = 0; i < sizeof(default_space) / sizeof(default_space[0]); i++) {
			struct bp_mode m;
			char why[200];

			if (bp_mode_parse(default_space[i], &m, why, sizeof(why)) || bp_mode_check(&m, why, sizeof(why))) {
				if (o->nskipped < TUNE_MAX_CANDS)
					snprintf(o->skipped[o->nskipped++], sizeof(o->skipped[0]), "%s", why);
				continue;
			}
			bp_mode_format(&m, o->modes[o->nmodes++], OPT_MODE_TEXT);
		}
	return 0;
}

static const struct opt_table tune_table = OPT_TABLE(tune_specs, tune_check);

static const struct opt_spec remote_specs[] = {
	{ .name = "server-addr", .kind = OPT_HOST, TF(server_addr), .arg = "ADDR",
	  .help = "with --remote: the server's data address there (default:\nthe --remote host)" },
};

/* With --remote: not on loopback, and the data path's address resolved (compare's rule). */
static int remote_check(void *base, const struct opt_seen *seen, char *err, size_t errlen)
{
	struct tune_opts *o = base;

	if (!o->remote.remote[0])
		return opt_given(seen, "server-addr") ? tool_fail(err, errlen, "--server-addr goes with --remote HOST")
						      : 0;
	if (o->loopback)
		return tool_fail(err, errlen, "--loopback and --remote exclude each other: the client runs here, the "
				 "server on the remote host");
	return cmp_remote_resolve(&o->remote, o->server_addr, o->server_ip, sizeof(o->server_ip), err, errlen);
}

static const struct opt_table tune_remote_table = OPT_TABLE(remote_specs, remote_check);

static const struct opt_cmd tune_cmd = {
	.name = "tune",
	.usage = "usage: busypoll tune --goal p99=TIME [--rate R] [options]\n"
		 "       busypoll tune --goal max-tps --cpu-budget N [options]\n"
		 "       busypoll tune --remote [user@]HOST --goal ... [options]\n"
		 "       busypoll tune --remote HOST:PORT --key-file FILE --goal ... [options]\n\n"
		 "Searches the wait modes and their keys (and tuned's network-latency recipe) on a\n"
		 "temporary veth test bed for the settings that meet the goal at this load, by\n"
		 "successive halving and a confirmation against epoll:block and the recipe, and\n"
		 "prints them as the lines to apply; with --remote the server runs on HOST through\n"
		 "its agent, and the NICs' coalescing joins the space. Every setting it changes is\n"
		 "put back.\n\n",
	.epilog = "\nExit status: 0 a recommendation meets the goal, 1 the run failed (the test bed, the\n"
		  "journal), 2 bad input, 3 no candidate meets the goal (the closest one said),\n"
		  "130 interrupted.\n",
};

int tune_parse_opts(int argc, char **argv, struct tune_opts *o, char *err, size_t errlen)
{
	const struct opt_layer layers[] = {
		{ &tool_common_table, &o->common },
		{ &tune_table, o },
		{ &agent_remote_table, &o->remote },
		{ &tune_remote_table, o },
	};

	memset(o, 0, sizeof(*o));
	o->flows = 1;
	o->threads = 1;
	o->request_size = o->response_size = 1;
	o->budget_s = 120;
	o->client_cpus[0] = 0;
	o->nclient_cpus = 1;
	o->server_cpus[0] = sysconf(_SC_NPROCESSORS_ONLN) > 1 ? 1 : 0;
	o->nserver_cpus = 1;
	o->format = TOOL_FORMAT_TABLE;
	agent_remote_defaults(&o->remote);
	return opt_parse(&tune_cmd, layers, 4, argc, argv, NULL, err, errlen);
}

/* ---- the space ---- */

bool tune_has_fix(const char *mode_text, int sysctl_usecs, const char *fix)
{
	char buf[OPT_MODE_TEXT + 64], *save = NULL, *tok, key[64];
	const char *eq = strchr(fix, '=');

	snprintf(key, sizeof(key), "%.*s", (int)(eq - fix), fix);
	if (!strcmp(key, "busy_read") || !strcmp(key, "busy_poll"))
		return sysctl_usecs >= 0 && atoi(eq + 1) == sysctl_usecs && strspn(eq + 1, "0123456789") == strlen(eq + 1);
	snprintf(buf, sizeof(buf), "%s", mode_text);
	for (tok = strtok_r(buf, ":,", &save); tok; tok = strtok_r(NULL, ":,", &save)) {
		if (!strcmp(tok, fix))
			return true;
		/* a flag key ("prefer") spelled as prefer=1 */
		if (!strcmp(tok, key) && !strcmp(eq + 1, "1"))
			return true;
	}
	return false;
}

bool tune_has_key(const char *mode_text, int sysctl_usecs, const char *key)
{
	char buf[OPT_MODE_TEXT], *save = NULL, *tok;

	if (!strcmp(key, "busy_read") || !strcmp(key, "busy_poll"))
		return sysctl_usecs >= 0;
	snprintf(buf, sizeof(buf), "%s", mode_text);
	strtok_r(buf, ":", &save); /* the backend */
	strtok_r(NULL, ",", &save); /* the policy */
	for (tok = strtok_r(NULL, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		if (!strncmp(tok, key, strlen(key)) && (!tok[strlen(key)] || tok[strlen(key)] == '='))
			return true;
	return false;
}

bool tune_key_known(const char *key)
{
	size_t n;
	const struct bp_mode_info *t = bp_mode_table(&n);

	if (!strcmp(key, "busy_read") || !strcmp(key, "busy_poll"))
		return true;
	if (!key[0] || strchr(key, '=') || strchr(key, ','))
		return false;
	/* each family's keys as "usecs=64,budget=8[,prefer]": a key is a name in that list */
	for (size_t i = 0; i < n; i++) {
		char buf[256], *save = NULL, *tok;

		snprintf(buf, sizeof(buf), "%s", t[i].keys ? t[i].keys : "");
		for (tok = strtok_r(buf, ",[]", &save); tok; tok = strtok_r(NULL, ",[]", &save)) {
			tok[strcspn(tok, "=")] = 0;
			if (!strcmp(tok, key))
				return true;
		}
	}
	return false;
}

/* in_keys - p's settings set one of --keys (no --keys: every point). */
static bool in_keys(const struct tune_opts *o, const char *mode_text, int usecs)
{
	bool any = !o->nkeys;

	for (int i = 0; i < o->nkeys; i++)
		any |= tune_has_key(mode_text, usecs, o->keys[i]);
	return any;
}

/* add - one point; false when the space is full. */
static bool add(struct tune_report *r, const char *mode_text, enum tune_role role, int usecs)
{
	struct tune_point *p = &r->pt[r->n];
	struct tune_opts *o = &r->opts;
	char why[200], text[OPT_MODE_TEXT];

	if (r->n == TUNE_MAX_CANDS || bp_mode_parse(mode_text, &p->mode, why, sizeof(why)))
		return false;
	bp_mode_format(&p->mode, text, sizeof(text));
	memcpy(p->mode_text, text, sizeof(text));
	p->role = role;
	p->sysctl_usecs = usecs;
	if (usecs >= 0)
		snprintf(p->label, sizeof(p->label), "%s + busy_read=busy_poll=%d (tuned)", text, usecs);
	else
		snprintf(p->label, sizeof(p->label), "%s", text);
	p->in_search = true;
	for (int i = 0; i < o->nfix; i++)
		p->in_search &= tune_has_fix(p->mode_text, usecs, o->fix[i]);
	p->in_search &= in_keys(o, p->mode_text, usecs);
	/* --modes names the space: the baselines are then the confirmation's only */
	if (role != TUNE_CAND && o->modes_given)
		p->in_search = false;
	r->n++;
	return true;
}

int tune_space(struct tune_report *r)
{
	struct tune_opts *o = &r->opts;
	int n = 0;

	r->n = 0;
	add(r, "epoll:block", TUNE_BLOCK, -1);
	add(r, "epoll:block", TUNE_RECIPE, TUNE_RECIPE_USECS);
	for (int i = 0; i < o->nmodes; i++) {
		bool dup = false;

		for (int k = 0; k < r->n; k++)
			dup |= r->pt[k].role == TUNE_CAND && !strcmp(r->pt[k].mode_text, o->modes[i]);
		if (!strcmp(o->modes[i], r->pt[0].mode_text)) {
			r->pt[0].in_search = true; /* --modes epoll:block: the baseline is a candidate too */
			for (int f = 0; f < o->nfix; f++)
				r->pt[0].in_search &= tune_has_fix(r->pt[0].mode_text, -1, o->fix[f]);
			r->pt[0].in_search &= in_keys(o, r->pt[0].mode_text, -1);
			continue;
		}
		if (!dup)
			add(r, o->modes[i], TUNE_CAND, -1);
	}
	for (int i = 0; i < r->n; i++)
		n += r->pt[i].in_search;
	return n;
}
