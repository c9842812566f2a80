/* SPDX-License-Identifier: MIT */
/*
 * busypoll modes [--format table|json] [--check MODE | --features]
 *
 * Lists every wait-mode family with its keys, defaults and a status probed right now
 * (bp_mode_check on the family's default mode), or checks one mode for a script:
 * exit 0 and its canonical text when usable, exit 2 and one line on stderr when not,
 * or lists the optional kernel features the backends use where they can (bp_features).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <busypoll/mode.h>

#include "tools/common/commands.h"

#define SUB "modes"
#define MAX_FAMILIES 16 /* bp_mode_table has 10 */

enum out_format { OUT_TABLE, OUT_JSON };

struct family_status {
	const struct bp_mode_info *info;
	char canonical[160];
	char reason[256]; /* empty: ok */
	int big_budget;   /* epoll:napi only: 1 budget>64 allowed, 0 not, -1 not applicable */
	char big_budget_reason[256];
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: busypoll modes [--format table|json] [--check MODE | --features]\n"
		"\n"
		"List every wait mode family: its keys with their defaults, what it does, and\n"
		"whether this kernel and process can use it right now (probed, not assumed).\n"
		"\n"
		"  --format table|json  output format (default table)\n"
		"  --check MODE         parse and check one mode, e.g. epoll:napi,usecs=50,prefer;\n"
		"                       prints its canonical form and 'ok' (exit 0), or the reason\n"
		"                       it is unusable on stderr (exit 2)\n"
		"  --features           the optional kernel features the backends use where this\n"
		"                       kernel has them (probed now; BP_URING_FEATURES turns them off)\n"
		"  -h, --help           this text\n"
		"\n"
		"MODE is BACKEND:POLICY[,key=value|flag...], e.g. uring:napi,usecs=100,tracking=static\n");
}

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

static void json_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
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

static void print_json(FILE *out, const struct family_status *st, size_t n)
{
	fprintf(out, "{\n  \"modes\": [\n");
	for (size_t i = 0; i < n; i++) {
		fprintf(out, "    {\"name\": ");
		json_string(out, st[i].info->name);
		fprintf(out, ", \"keys\": ");
		json_string(out, st[i].info->keys);
		fprintf(out, ", \"default\": ");
		json_string(out, st[i].canonical);
		fprintf(out, ", \"summary\": ");
		json_string(out, st[i].info->summary);
		fprintf(out, ", \"ok\": %s, \"reason\": ", st[i].reason[0] ? "false" : "true");
		if (st[i].reason[0])
			json_string(out, st[i].reason);
		else
			fprintf(out, "null");
		if (st[i].big_budget >= 0) {
			fprintf(out, ", \"budget_over_64\": %s", st[i].big_budget ? "true" : "false");
			if (!st[i].big_budget) {
				fprintf(out, ", \"budget_over_64_reason\": ");
				json_string(out, st[i].big_budget_reason);
			}
		}
		fprintf(out, "}%s\n", i + 1 < n ? "," : "");
	}
	fprintf(out, "  ]\n}\n");
}

static int list_modes(enum out_format fmt)
{
	size_t n;
	const struct bp_mode_info *tab = bp_mode_table(&n);
	struct family_status st[MAX_FAMILIES];

	if (n > MAX_FAMILIES)
		n = MAX_FAMILIES;
	for (size_t i = 0; i < n; i++)
		probe_family(&tab[i], &st[i]);
	if (fmt == OUT_JSON)
		print_json(stdout, st, n);
	else
		print_table(stdout, st, n);
	return fflush(stdout) ? BP_EXIT_FAIL : BP_EXIT_OK;
}

static int check_one(const char *text, enum out_format fmt)
{
	struct bp_mode m;
	char err[256], canon[160];

	if (bp_mode_parse(text, &m, err, sizeof(err)) || bp_mode_check(&m, err, sizeof(err))) {
		bp_tool_error(SUB, "%s", err);
		return BP_EXIT_USAGE;
	}
	bp_mode_format(&m, canon, sizeof(canon));
	if (fmt == OUT_JSON) {
		printf("{\"mode\": ");
		json_string(stdout, canon);
		printf(", \"ok\": true}\n");
	} else {
		printf("%s ok\n", canon);
	}
	return fflush(stdout) ? BP_EXIT_FAIL : BP_EXIT_OK;
}

/* "--opt VALUE" or "--opt=VALUE": returns the value and advances *i, or NULL. */
static const char *opt_value(int argc, char **argv, int *i, const char *opt, bool *matched)
{
	size_t len = strlen(opt);
	const char *a = argv[*i];

	*matched = false;
	if (strncmp(a, opt, len) || (a[len] && a[len] != '='))
		return NULL;
	*matched = true;
	if (a[len] == '=')
		return a + len + 1;
	if (*i + 1 >= argc)
		return NULL;
	return argv[++*i];
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

static int list_features(enum out_format fmt)
{
	struct bp_feature f[MAX_FEATURES];
	char status[MAX_FEATURES][96];
	size_t n = bp_features(f, MAX_FEATURES);
	int wname = 7, wstat = 6, wneeds = 5;

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
	if (fmt == OUT_JSON) {
		printf("{\n  \"features\": [\n");
		for (size_t i = 0; i < n; i++) {
			printf("    {\"backend\": ");
			json_string(stdout, f[i].backend);
			printf(", \"name\": ");
			json_string(stdout, f[i].name);
			printf(", \"needs\": ");
			json_string(stdout, f[i].needs);
			printf(", \"summary\": ");
			json_string(stdout, f[i].summary);
			printf(", \"in_use\": %s, \"status\": ", f[i].status ? "false" : "true");
			json_string(stdout, status[i]);
			printf("}%s\n", i + 1 < n ? "," : "");
		}
		printf("  ]\n}\n");
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

int cmd_modes(int argc, char **argv)
{
	enum out_format fmt = OUT_TABLE;
	const char *check = NULL;
	bool features = false;

	for (int i = 1; i < argc; i++) {
		const char *v;
		bool matched;

		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return BP_EXIT_OK;
		}
		if (!strcmp(argv[i], "--features")) {
			features = true;
			continue;
		}
		v = opt_value(argc, argv, &i, "--format", &matched);
		if (matched) {
			if (v && !strcmp(v, "table")) {
				fmt = OUT_TABLE;
			} else if (v && !strcmp(v, "json")) {
				fmt = OUT_JSON;
			} else {
				bp_tool_error(SUB, "--format needs table or json%s%s%s", v ? ", not '" : "",
					      v ? v : "", v ? "'" : "");
				return BP_EXIT_USAGE;
			}
			continue;
		}
		v = opt_value(argc, argv, &i, "--check", &matched);
		if (matched) {
			if (!v) {
				bp_tool_error(SUB, "--check needs a MODE, e.g. --check epoll:napi");
				return BP_EXIT_USAGE;
			}
			check = v;
			continue;
		}
		if (argv[i][0] == '-')
			bp_tool_error(SUB, "unknown option '%s'; run 'busypoll modes --help'", argv[i]);
		else
			bp_tool_error(SUB, "unexpected argument '%s'; run 'busypoll modes --help'", argv[i]);
		return BP_EXIT_USAGE;
	}
	if (check && features) {
		bp_tool_error(SUB, "--check and --features do not go together; run one, then the other");
		return BP_EXIT_USAGE;
	}
	if (features)
		return list_features(fmt);
	return check ? check_one(check, fmt) : list_modes(fmt);
}
