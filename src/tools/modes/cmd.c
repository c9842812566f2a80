/* SPDX-License-Identifier: MIT */
/*
 * busypoll modes [--format table|json|csv] [--check MODE | --features]
 *
 * Lists every wait-mode family with its keys, defaults and a status probed right now
 * (bp_mode_check on the family's default mode), or checks one mode for a script:
 * exit 0 and its canonical text when usable, exit 2 and one line on stderr when not.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <busypoll/mode.h>

#include "tools/common/commands.h"
#include "tools/common/opt.h"
#include "tools/common/emit.h"
#include "tools/common/values.h"

#define SUB "modes"
#define MAX_FAMILIES 16 /* bp_mode_table has 10 */

struct family_status {
	const struct bp_mode_info *info;
	char canonical[160];
	char reason[256]; /* empty: ok */
	int big_budget;   /* epoll:napi only: 1 budget>64 allowed, 0 not, -1 not applicable */
	char big_budget_reason[256];
};

/* The family's default mode, probed; fills st. */
static void probe_family(const struct bp_mode_info *info, struct family_status *st)
{
	struct bp_mode m;

	memset(st, 0, sizeof(*st));
	st->info = info;
	st->big_budget = -1;
	if (bp_mode_parse(info->name, &m, st->reason, sizeof(st->reason)))
		return; /* cannot happen: the table's names parse; the reason says so if it does */
	bp_mode_format(&m, st->canonical, sizeof(st->canonical));
	if (bp_mode_check(&m, st->reason, sizeof(st->reason)))
		return;
	if (m.backend == BP_BACKEND_EPOLL && m.policy == BP_POLICY_NAPI) {
		/* Budgets above NAPI_POLL_WEIGHT need a privilege: worth knowing before a run. */
		m.budget = 128;
		st->big_budget = bp_mode_check(&m, st->big_budget_reason,
					       sizeof(st->big_budget_reason)) == 0;
	}
}

static void status_text(const struct family_status *st, char *buf, size_t len)
{
	if (st->reason[0])
		snprintf(buf, len, "no: %s", st->reason);
	else if (st->big_budget == 1)
		snprintf(buf, len, "ok (budget>64 ok)");
	else if (st->big_budget == 0)
		snprintf(buf, len, "ok (budget>64 no: needs CAP_NET_ADMIN)");
	else
		snprintf(buf, len, "ok");
}

/* Columns sized to their widest cell, so that the table lines up whatever the reasons say. */
static void print_table(FILE *out, const struct family_status *st, size_t n)
{
	char status[MAX_FAMILIES][300];
	int wname = 4, wkeys = 15, wstat = 6;

	for (size_t i = 0; i < n; i++) {
		status_text(&st[i], status[i], sizeof(status[i]));
		if ((int)strlen(st[i].info->name) > wname)
			wname = (int)strlen(st[i].info->name);
		if ((int)strlen(st[i].info->keys) > wkeys)
			wkeys = (int)strlen(st[i].info->keys);
		if ((int)strlen(status[i]) > wstat)
			wstat = (int)strlen(status[i]);
	}
	fprintf(out, "%-*s  %-*s  %-*s  %s\n", wname, "MODE", wkeys, "KEYS (defaults)", wstat, "STATUS",
		"SUMMARY");
	for (size_t i = 0; i < n; i++)
		fprintf(out, "%-*s  %-*s  %-*s  %s\n", wname, st[i].info->name, wkeys,
			st[i].info->keys[0] ? st[i].info->keys : "-", wstat, status[i], st[i].info->summary);
}

/* emit_family - one family as a json object or a csv row (every row the same columns). */
static void emit_family(struct emit *e, const struct family_status *st)
{
	em_begin(e, NULL, false);
	em_string(e, "name", st->info->name, 64);
	em_string(e, "keys", st->info->keys, 256);
	em_string(e, "default", st->canonical, sizeof(st->canonical));
	em_string(e, "summary", st->info->summary, 512);
	em_bool(e, "ok", !st->reason[0]);
	if (st->reason[0])
		em_string(e, "reason", st->reason, sizeof(st->reason));
	else
		em_null(e, "reason");
	if (st->big_budget >= 0)
		em_bool(e, "budget_over_64", st->big_budget);
	else
		em_null(e, "budget_over_64");
	if (st->big_budget == 0)
		em_string(e, "budget_over_64_reason", st->big_budget_reason, sizeof(st->big_budget_reason));
	else
		em_null(e, "budget_over_64_reason");
	em_end(e);
}

static void print_json(FILE *out, const struct family_status *st, size_t n)
{
	struct emit e = { .kind = EMIT_JSON, .out = out };

	em_begin(&e, NULL, false);
	em_array_begin(&e, "modes");
	for (size_t i = 0; i < n; i++)
		emit_family(&e, &st[i]);
	em_array_end(&e);
	em_end(&e);
	fputc('\n', out);
}

static void print_csv(FILE *out, const struct family_status *st, size_t n)
{
	struct emit e = { .kind = EMIT_CSV_HEADER, .out = out };

	emit_family(&e, &st[0]);
	fputc('\n', out);
	for (size_t i = 0; i < n; i++) {
		e = (struct emit){ .kind = EMIT_CSV_ROW, .out = out };
		emit_family(&e, &st[i]);
		fputc('\n', out);
	}
}

static int list_modes(enum tool_format fmt)
{
	size_t n;
	const struct bp_mode_info *tab = bp_mode_table(&n);
	struct family_status st[MAX_FAMILIES];

	if (n > MAX_FAMILIES)
		n = MAX_FAMILIES;
	for (size_t i = 0; i < n; i++)
		probe_family(&tab[i], &st[i]);
	if (fmt == TOOL_FORMAT_JSON)
		print_json(stdout, st, n);
	else if (fmt == TOOL_FORMAT_CSV)
		print_csv(stdout, st, n);
	else
		print_table(stdout, st, n);
	return fflush(stdout) ? BP_EXIT_FAIL : BP_EXIT_OK;
}

/* walk_ok - {"mode": canonical, "ok": true}. */
static void walk_ok(struct emit *e, const void *canon)
{
	em_begin(e, NULL, false);
	em_string(e, "mode", canon, 160);
	em_bool(e, "ok", true);
	em_end(e);
}

static int check_one(const char *text, enum tool_format fmt)
{
	struct bp_mode m;
	char err[256], canon[160];

	if (bp_mode_parse(text, &m, err, sizeof(err)) || bp_mode_check(&m, err, sizeof(err))) {
		/* named by the option; the reason may start with the mode already */
		if (!strncmp(err, text, strlen(text)))
			bp_tool_error(SUB, "--check %s", err);
		else
			bp_tool_error(SUB, "--check %s: %s", text, err);
		return BP_EXIT_USAGE;
	}
	bp_mode_format(&m, canon, sizeof(canon));
	if (fmt == TOOL_FORMAT_TABLE)
		printf("%s ok\n", canon);
	else
		emit_one(stdout, fmt == TOOL_FORMAT_CSV, walk_ok, canon);
	return fflush(stdout) ? BP_EXIT_FAIL : BP_EXIT_OK;
}

#define MAX_FEATURES 16

/* "in use", or why not, for one feature. */
static void feature_status(const struct bp_feature *f, char *buf, size_t len)
{
	switch (f->status) {
	case 0:
		snprintf(buf, len, "in use");
		break;
	case -EOPNOTSUPP:
		snprintf(buf, len, "no: this kernel lacks it");
		break;
	case -ECANCELED:
		snprintf(buf, len, "off (BP_URING_FEATURES)");
		break;
	case -EINVAL:
		snprintf(buf, len, "no: BP_URING_FEATURES or BP_URING_BUFS does not parse");
		break;
	default:
		snprintf(buf, len, "no: cannot probe: %s", strerror(-f->status));
		break;
	}
}

/* emit_feature - one feature as a json object or a csv row. */
static void emit_feature(struct emit *e, const struct bp_feature *f, const char *status)
{
	em_begin(e, NULL, false);
	em_string(e, "backend", f->backend, 64);
	em_string(e, "name", f->name, 64);
	em_string(e, "needs", f->needs, 128);
	em_string(e, "summary", f->summary, 512);
	em_bool(e, "in_use", !f->status);
	em_string(e, "status", status, 96);
	em_end(e);
}

static int list_features(enum tool_format fmt)
{
	struct bp_feature f[MAX_FEATURES];
	char status[MAX_FEATURES][96];
	size_t n = bp_features(f, MAX_FEATURES);
	int wname = 7, wstat = 6, wneeds = 5;
	struct emit e = { .out = stdout };

	if (n > MAX_FEATURES)
		n = MAX_FEATURES;
	for (size_t i = 0; i < n; i++) {
		feature_status(&f[i], status[i], sizeof(status[i]));
		if ((int)(strlen(f[i].backend) + 1 + strlen(f[i].name)) > wname)
			wname = (int)(strlen(f[i].backend) + 1 + strlen(f[i].name));
		if ((int)strlen(status[i]) > wstat)
			wstat = (int)strlen(status[i]);
		if ((int)strlen(f[i].needs) > wneeds)
			wneeds = (int)strlen(f[i].needs);
	}
	if (fmt == TOOL_FORMAT_JSON) {
		e.kind = EMIT_JSON;
		em_begin(&e, NULL, false);
		em_array_begin(&e, "features");
		for (size_t i = 0; i < n; i++)
			emit_feature(&e, &f[i], status[i]);
		em_array_end(&e);
		em_end(&e);
		fputc('\n', stdout);
	} else if (fmt == TOOL_FORMAT_CSV) {
		static const struct bp_feature none = { .backend = "", .name = "", .needs = "", .summary = "" };

		e.kind = EMIT_CSV_HEADER;
		emit_feature(&e, n ? &f[0] : &none, ""); /* the columns never depend on the values */
		fputc('\n', stdout);
		for (size_t i = 0; i < n; i++) {
			e = (struct emit){ .kind = EMIT_CSV_ROW, .out = stdout };
			emit_feature(&e, &f[i], status[i]);
			fputc('\n', stdout);
		}
	} else {
		printf("%-*s  %-*s  %-*s  %s\n", wname, "FEATURE", wstat, "STATUS", wneeds, "NEEDS", "SUMMARY");
		for (size_t i = 0; i < n; i++) {
			char name[64];

			snprintf(name, sizeof(name), "%s:%s", f[i].backend, f[i].name);
			printf("%-*s  %-*s  %-*s  %s\n", wname, name, wstat, status[i], wneeds, f[i].needs,
			       f[i].summary);
		}
	}
	return fflush(stdout) ? BP_EXIT_FAIL : BP_EXIT_OK;
}

struct modes_cli {
	TOOL_COMMON;              /* quiet, format */
	char check[512];          /* --check MODE, "" none */
	bool features;            /* --features */
};

static int modes_check(void *base, const struct opt_seen *seen, char *err, size_t errlen)
{
	const struct modes_cli *c = base;

	(void)seen;
	if (c->check[0] && c->features)
		return tool_fail(err, errlen, "--check and --features do not go together; run one, then the other");
	return 0;
}

static const struct opt_spec modes_specs[] = {
	{ .name = "check", .kind = OPT_TEXT, OPT_FIELD(struct modes_cli, check), .arg = "MODE",
	  .help = "parse and check one mode, e.g. epoll:napi,usecs=50,prefer;\nprints its canonical form and 'ok' "
		  "(exit 0), or the reason\nit is unusable on stderr (exit 2)" },
	{ .name = "features", .kind = OPT_FLAG, OPT_FIELD(struct modes_cli, features),
	  .help = "the optional kernel features the backends use where this kernel has them (probed now; "
		  "BP_URING_FEATURES turns them off)" },
};

static const struct opt_table modes_table = OPT_TABLE(modes_specs, modes_check);

static const struct opt_cmd modes_cmd = {
	.name = "modes",
	.usage = "usage: busypoll modes [--format table|json|csv] [--check MODE | --features]\n"
		 "\n"
		 "List every wait mode family: its keys with their defaults, what it does, and\n"
		 "whether this kernel and process can use it right now (probed, not assumed).\n\n",
	.epilog = "\nMODE is BACKEND:POLICY[,key=value|flag...],\n"
		  "e.g. uring:napi,usecs=100,tracking=static\n"
		  "\nExit status: 0 done (--check: the mode is usable here), 2 bad input or, with\n"
		  "--check, a mode that is malformed or unusable here.\n",
};

int cmd_modes(int argc, char **argv)
{
	struct modes_cli c;
	const struct opt_layer layers[] = {
		{ &tool_common_table, &c.common },
		{ &modes_table, &c },
	};
	char err[512];
	int rc;

	memset(&c, 0, sizeof(c));
	rc = opt_parse(&modes_cmd, layers, 2, argc, argv, NULL, err, sizeof(err));
	if (rc)
		return bp_opts_exit(SUB, rc, err);
	if (c.features)
		return list_features(c.format);
	return c.check[0] ? check_one(c.check, c.format) : list_modes(c.format);
}
