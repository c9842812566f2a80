/* SPDX-License-Identifier: MIT */
/*
 * The option-table parser (contract in tools/common/opt.h). getopt_long does the
 * scanning (abbreviations, --opt=value, clusters of short options), from a struct
 * option array built out of the tables; everything it refuses, and every value,
 * is worded here, once for every command.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/common/commands.h"
#include "tools/common/opt.h"
#include "tools/common/values.h"

/*
 * getopt's value of a long option: 256 + its index, above every short option's
 * character; the parser's own options after the largest index.
 */
#define OPT_ID_BASE 256
enum { OPT_ID_HELP = OPT_ID_BASE + OPT_MAX_SPECS, OPT_ID_VERSION };

/*
 * What every command accepts as its default mode: epoll:block with the family's
 * defaults (no key set), exactly what the parser gives for that text. A constant,
 * so no command parses text at run time to get its default.
 */
const struct bp_mode opt_mode_default = { .backend = BP_BACKEND_EPOLL, .policy = BP_POLICY_BLOCK };
const char opt_mode_default_text[OPT_MODE_TEXT] = "epoll:block";

const char *opt_spec_name(const struct opt_spec *s, char *buf, size_t len)
{
	const char *name = s->alias_of ? s->alias_of : s->name;

	if (name)
		snprintf(buf, len, "--%s", name);
	else
		snprintf(buf, len, "-%c", s->shortname);
	return buf;
}

int opt_mode_read(const char *name, const char *text, struct bp_mode *m, char *text_out, char *err,
		  size_t errlen)
{
	char why[256];
	struct bp_mode v;

	if (bp_mode_parse(text, &v, why, sizeof(why)) != 0 || bp_mode_check(&v, why, sizeof(why)) != 0)
		return tool_fail(err, errlen, "%s %s: %s", name, text, why);
	*m = v;
	if (text_out)
		bp_mode_format(&v, text_out, OPT_MODE_TEXT);
	return 0;
}

/* ---- one value ---- */

/* put_int - v into a field of size bytes (the kinds' ranges are never negative). */
static void put_int(void *field, size_t size, long long v)
{
	switch (size) {
	case 1: { uint8_t x = (uint8_t)v; memcpy(field, &x, 1); break; }
	case 2: { uint16_t x = (uint16_t)v; memcpy(field, &x, 2); break; }
	case 4: { uint32_t x = (uint32_t)v; memcpy(field, &x, 4); break; }
	default: { uint64_t x = (uint64_t)v; memcpy(field, &x, 8); break; }
	}
}

/* get_int - a field of size bytes, as put_int wrote it. */
static uint64_t get_int(const void *field, size_t size)
{
	uint8_t a;
	uint16_t b;
	uint32_t c;
	uint64_t d;

	switch (size) {
	case 1: memcpy(&a, field, 1); return a;
	case 2: memcpy(&b, field, 2); return b;
	case 4: memcpy(&c, field, 4); return c;
	default: memcpy(&d, field, 8); return d;
	}
}

/* typed_name - "--warmup" for the spec as typed (an alias too), "-n" for a short-only one. */
static const char *typed_name(const struct opt_spec *s, char *buf, size_t len)
{
	if (s->name)
		snprintf(buf, len, "--%s", s->name);
	else
		snprintf(buf, len, "-%c", s->shortname);
	return buf;
}

/* read_text - HOST and TEXT: copied whole or refused, never cut short. */
static int read_text(const struct opt_spec *s, const char *name, const char *v, char *dst, char *err,
		     size_t errlen)
{
	bool dash_ok = s->kind == OPT_TEXT && (s->flags & OPT_F_DASH_OK);

	/* getopt takes the next word whatever it is: "--client -T 2" is a missing HOST. */
	if (!*v || (*v == '-' && !dash_ok)) {
		if (s->kind == OPT_HOST)
			return tool_fail(err, errlen, "%s needs a%s %s (got '%s')", name,
					 s->arg && strchr("AEIOU", s->arg[0]) ? "n" : "", s->arg ? s->arg : "HOST", v);
		return tool_fail(err, errlen, "%s needs a value (got '%s')", name, v);
	}
	if (strlen(v) >= s->size) {
		if (s->kind == OPT_HOST)
			return tool_fail(err, errlen, "%s: the address is longer than %zu characters", name, s->size - 1);
		return tool_fail(err, errlen, "%s: longer than %zu characters", name, s->size - 1);
	}
	memcpy(dst, v, strlen(v) + 1);
	return 0;
}

/* read_value - one option's value into its field, by kind. */
static int read_value(const struct opt_spec *s, void *base, const char *v, char *err, size_t errlen)
{
	char name[64];
	char *field = (char *)base + s->off;
	long long n;
	int r = 0;

	typed_name(s, name, sizeof(name)); /* an alias's message names what the user typed */
	switch (s->kind) {
	case OPT_FLAG:
		*(bool *)field = true;
		return 0;
	case OPT_INT:
		r = tool_opt_int(name, v, s->lo, s->hi, &n, err, errlen);
		if (!r)
			put_int(field, s->size, n);
		return r;
	case OPT_SIZE:
		return tool_opt_size(name, v, (uint64_t)s->hi, (uint32_t *)field, err, errlen);
	case OPT_SECONDS:
		return tool_opt_seconds(name, v, s->flags & OPT_F_ZERO_OK, s->max_s, (double *)field, err, errlen);
	case OPT_CHOICE:
		r = tool_opt_choice(name, v, s->choices, err, errlen);
		if (r < 0)
			return r;
		*(int *)field = r;
		return 0;
	case OPT_CPUS:
		return tool_opt_cpus(name, v, (int *)field, (int)(s->size / sizeof(int)), (int *)((char *)base + s->aux),
				     err, errlen);
	case OPT_MODE:
		return opt_mode_read(name, v, (struct bp_mode *)field, (char *)base + s->aux, err, errlen);
	case OPT_HOST:
	case OPT_TEXT:
		return read_text(s, name, v, field, err, errlen);
	case OPT_CUSTOM:
		return s->parse(s, name, v, base, err, errlen);
	}
	return tool_fail(err, errlen, "%s: unknown option kind", name);
}

static bool takes_value(const struct opt_spec *s)
{
	return s->kind != OPT_FLAG && !(s->kind == OPT_CUSTOM && (s->flags & OPT_F_OPTIONAL));
}

/* ---- the command line ---- */

struct flat {
	int n;
	const struct opt_spec *spec[OPT_MAX_SPECS];
	void *base[OPT_MAX_SPECS];
	struct option lo[OPT_MAX_SPECS + 3];
	char shorts[2 * OPT_MAX_SPECS + 8];
};

/* flatten - the layers' specs in lookup order, and getopt's view of them. */
static int flatten(const struct opt_cmd *cmd, const struct opt_layer *layers, int nlayers, struct flat *f,
		   char *err, size_t errlen)
{
	size_t ns = 0, nl = 0;

	/* "+": stop at the first non-option (no reordering); ":": we word the errors. */
	if (!cmd->options_after_positional)
		f->shorts[ns++] = '+';
	f->shorts[ns++] = ':';
	f->n = 0;
	for (int l = 0; l < nlayers; l++) {
		for (size_t i = 0; i < layers[l].table->n; i++) {
			const struct opt_spec *s = &layers[l].table->specs[i];

			if (f->n == OPT_MAX_SPECS)
				return tool_fail(err, errlen, "busypoll %s: more than %d options", cmd->name,
						 OPT_MAX_SPECS);
			f->spec[f->n] = s;
			f->base[f->n] = layers[l].base;
			if (s->name)
				f->lo[nl++] = (struct option){ s->name,
							       !takes_value(s) ? (s->kind == OPT_FLAG ? no_argument
												       : optional_argument)
									       : required_argument,
							       NULL, OPT_ID_BASE + f->n };
			if (s->shortname) {
				f->shorts[ns++] = s->shortname;
				if (takes_value(s))
					f->shorts[ns++] = ':';
			}
			f->n++;
		}
	}
	f->lo[nl++] = (struct option){ "help", no_argument, NULL, OPT_ID_HELP };
	f->lo[nl++] = (struct option){ "version", no_argument, NULL, OPT_ID_VERSION };
	f->lo[nl] = (struct option){ NULL, 0, NULL, 0 };
	f->shorts[ns++] = 'h';
	f->shorts[ns] = 0;
	return 0;
}

/* by_short - the spec index of short option c, -1 if none. */
static int by_short(const struct flat *f, int c)
{
	for (int i = 0; i < f->n; i++)
		if (f->spec[i]->shortname == c)
			return i;
	return -1;
}

/* canonical - the index repeats are counted on: an alias counts as its option. */
static int canonical(const struct flat *f, int i)
{
	const char *target = f->spec[i]->alias_of;

	for (int j = 0; target && j < f->n; j++)
		if (f->spec[j]->name && !f->spec[j]->alias_of && !strcmp(f->spec[j]->name, target))
			return j;
	return i;
}

/* refused - getopt's '?' and ':' in our words (tools/common/values.c has the pieces). */
static int refused(const struct opt_cmd *cmd, const struct flat *f, int c, int argc, char **argv, char *err,
		   size_t errlen)
{
	char name[64];

	tool_bad_option_name(argc, argv, f->lo, name, sizeof(name));
	if (c == ':') {
		int i = -1;

		if (optopt >= OPT_ID_BASE && optopt < OPT_ID_BASE + f->n)
			i = optopt - OPT_ID_BASE;
		else if (optopt > 0 && optopt < OPT_ID_BASE)
			i = by_short(f, optopt);
		if (i >= 0 && f->spec[i]->kind == OPT_HOST) {
			const char *arg = f->spec[i]->arg ? f->spec[i]->arg : "HOST";

			return tool_fail(err, errlen, "%s needs a%s %s", name, strchr("AEIOU", arg[0]) ? "n" : "",
					 arg);
		}
		return tool_fail(err, errlen, "%s needs a value", name);
	}
	return tool_option_refused(cmd->name, argc, argv, f->lo, err, errlen);
}

static void print_version(const struct opt_cmd *cmd)
{
	printf("busypoll %s %s\n", cmd->name, BP_VERSION);
}

int opt_parse(const struct opt_cmd *cmd, const struct opt_layer *layers, int nlayers, int argc,
	      char **argv, struct opt_seen *seen, char *err, size_t errlen)
{
	static struct flat f; /* the tools are single-threaded while they parse */
	struct opt_seen local;
	int c, r, typed_as[OPT_MAX_SPECS]; /* the spec each option was first given by */

	if (!seen)
		seen = &local;
	memset(seen, 0, sizeof(*seen));
	if (err && errlen)
		err[0] = 0;
	r = flatten(cmd, layers, nlayers, &f, err, errlen);
	if (r)
		return r;
	seen->n = f.n;
	for (int i = 0; i < f.n; i++) {
		seen->spec[i] = f.spec[i];
		seen->base[i] = f.base[i];
	}
	/* 0, not 1: glibc then also forgets a half-read cluster from a previous call. */
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, f.shorts, f.lo, NULL)) != -1) {
		int i, k;

		if (c == OPT_ID_HELP || c == 'h') {
			opt_usage(stdout, cmd, layers, nlayers);
			return 1;
		}
		if (c == OPT_ID_VERSION) {
			print_version(cmd);
			return 1;
		}
		if (c == '?' || c == ':')
			return refused(cmd, &f, c, argc, argv, err, errlen);
		i = c >= OPT_ID_BASE ? c - OPT_ID_BASE : by_short(&f, c);
		if (i < 0 || i >= f.n)
			return refused(cmd, &f, '?', argc, argv, err, errlen);
		k = canonical(&f, i);
		if (seen->count[k] && !(f.spec[k]->flags & OPT_F_REPEAT)) {
			char name[64], before[64], canon[64];

			/* in the words typed: an alias and its option are one option */
			typed_name(f.spec[i], name, sizeof(name));
			typed_name(f.spec[typed_as[k]], before, sizeof(before));
			opt_spec_name(f.spec[k], canon, sizeof(canon));
			if (strcmp(name, before))
				return tool_fail(err, errlen, "%s given twice (as %s and %s): give it once", canon, before,
						 name);
			return tool_fail(err, errlen, "%s given twice: give it once", name);
		}
		if (!seen->count[k])
			typed_as[k] = i;
		seen->count[k]++;
		seen->text[k] = optarg;
		r = read_value(f.spec[i], f.base[i], optarg, err, errlen);
		if (r)
			return r;
	}
	for (; optind < argc; optind++) {
		if (seen->npos >= cmd->max_positional || seen->npos >= (int)(sizeof(seen->pos) / sizeof(seen->pos[0])))
			return tool_fail(err, errlen, "unexpected argument '%s'; see busypoll %s --help", argv[optind],
					 cmd->name);
		seen->pos[seen->npos++] = argv[optind];
	}
	for (int l = 0; l < nlayers; l++) {
		if (!layers[l].table->check)
			continue;
		r = layers[l].table->check(layers[l].base, seen, err, errlen);
		if (r)
			return r;
	}
	return 0;
}

/* ---- what was given ---- */

static int seen_index(const struct opt_seen *seen, const char *name)
{
	for (int i = 0; i < seen->n; i++) {
		const struct opt_spec *s = seen->spec[i];

		if (s->alias_of)
			continue;
		if (name[0] == '-' && name[1] && !name[2] ? s->shortname == name[1] && !s->name
							  : s->name && !strcmp(s->name, name))
			return i;
	}
	return -1;
}

unsigned opt_given(const struct opt_seen *seen, const char *name)
{
	int i = seen_index(seen, name);

	return i < 0 ? 0 : seen->count[i];
}

const char *opt_text(const struct opt_seen *seen, const char *name)
{
	int i = seen_index(seen, name);

	return i < 0 || !seen->count[i] ? NULL : seen->text[i];
}

int opt_check_role(const struct opt_seen *seen, enum opt_role role, char *err, size_t errlen)
{
	for (int i = 0; i < seen->n; i++) {
		const struct opt_spec *s = seen->spec[i];
		char name[64];

		if (!seen->count[i] || s->role == OPT_ROLE_ANY || s->role == role)
			continue;
		opt_spec_name(s, name, sizeof(name));
		if (s->role == OPT_ROLE_CLIENT)
			return tool_fail(err, errlen, "%s is a client option%s%s", name, s->role_why ? ": " : "",
					 s->role_why ? s->role_why : " (the client sets up each run)");
		return tool_fail(err, errlen, "%s is a server option%s%s", name, s->role_why ? ": " : "",
				 s->role_why ? s->role_why : "");
	}
	return 0;
}

/* ---- --help ---- */

#define HELP_COL 25

/* field_default - the field's value as its default, for OPT_DFLT_FIELD ("" if none). */
static void field_default(char *buf, size_t len, const struct opt_spec *s, const void *base)
{
	const char *field = (const char *)base + s->off;

	buf[0] = '\0';
	switch (s->kind) {
	case OPT_INT:
	case OPT_SIZE:
		snprintf(buf, len, "(default %llu)", (unsigned long long)get_int(field, s->size));
		break;
	case OPT_SECONDS:
		snprintf(buf, len, "(default %g)", *(const double *)field);
		break;
	case OPT_CHOICE:
		snprintf(buf, len, "(default %s)", s->choices[*(const int *)field]);
		break;
	case OPT_MODE:
		snprintf(buf, len, "(default %s)", (const char *)base + s->aux);
		break;
	case OPT_HOST:
	case OPT_TEXT:
		if (*field)
			snprintf(buf, len, "(default %s)", field);
		break;
	default:
		break;
	}
}

#define HELP_WIDTH 80

/* help_text - the help, filled to the width from the column, and its default
 * (on a line of its own when it would run past the width). A newline in the help
 * is a space, unless two spaces follow it: a line of a list, kept. */
static void help_text(FILE *out, const struct opt_spec *s, const void *base)
{
	char text[1024], dflt[160] = "";
	const char *p = text;
	size_t col = HELP_COL, w = 0;

	for (const char *q = s->help ? s->help : ""; *q && w + 1 < sizeof(text); q++)
		text[w++] = (*q == '\n' && strncmp(q + 1, "  ", 2)) ? ' ' : *q;
	text[w] = '\0';
	for (;;) {
		size_t n = strcspn(p, "\n");

		/* a line longer than the width breaks at its last space that fits */
		while (HELP_COL + n >= HELP_WIDTH) {
			size_t cut = HELP_WIDTH - 1 - HELP_COL;

			while (cut > 0 && p[cut] != ' ')
				cut--;
			if (!cut)
				break;
			fwrite(p, 1, cut, out);
			fprintf(out, "\n%*s", HELP_COL, "");
			p += cut + 1;
			n -= cut + 1;
		}
		fwrite(p, 1, n, out);
		col = HELP_COL + n;
		p += n;
		if (!*p)
			break;
		fprintf(out, "\n%*s", HELP_COL, "");
		p++;
	}
	if (s->dflt && !s->dflt[0])
		field_default(dflt, sizeof(dflt), s, base);
	else if (s->dflt)
		snprintf(dflt, sizeof(dflt), "(default %s)", s->dflt);
	if (dflt[0] && col + 1 + strlen(dflt) >= HELP_WIDTH)
		fprintf(out, "\n%*s%s", HELP_COL, "", dflt);
	else if (dflt[0])
		fprintf(out, " %s", dflt);
	fputc('\n', out);
}

static void help_line(FILE *out, const struct opt_spec *s, const void *base)
{
	char left[96];
	int len;

	if (s->flags & OPT_F_HIDDEN)
		return;
	if (s->shortname && s->name)
		len = snprintf(left, sizeof(left), "-%c, --%s", s->shortname, s->name);
	else if (s->name)
		len = snprintf(left, sizeof(left), "--%s", s->name);
	else
		len = snprintf(left, sizeof(left), "-%c", s->shortname);
	if (takes_value(s) && s->arg)
		len += snprintf(left + len, sizeof(left) - (size_t)len, " %s", s->arg);
	else if (s->kind == OPT_CUSTOM && s->arg)
		len += snprintf(left + len, sizeof(left) - (size_t)len, "[=%s]", s->arg);
	if (len > HELP_COL - 4) /* at least two spaces before the help: a reader (and the man page test) splits there */
		fprintf(out, "  %s\n%*s", left, HELP_COL, "");
	else
		fprintf(out, "  %-*s", HELP_COL - 2, left);
	help_text(out, s, base);
}

void opt_usage(FILE *out, const struct opt_cmd *cmd, const struct opt_layer *layers, int nlayers)
{
	if (cmd->usage)
		fputs(cmd->usage, out);
	for (int l = 0; l < nlayers; l++) {
		const struct opt_table *t = layers[l].table;

		if (t->title)
			fprintf(out, "%s\n", t->title);
		for (size_t i = 0; i < t->n; i++)
			help_line(out, &t->specs[i], layers[l].base);
	}
	fprintf(out, "  %-*s%s\n", HELP_COL - 2, "-h, --help", "this text");
	fprintf(out, "  %-*s%s\n", HELP_COL - 2, "--version", "the program's version");
	if (cmd->epilog)
		fputs(cmd->epilog, out);
}

/* ---- the common layer: the options every subcommand has (opt.h) ---- */

const char *const tool_format_names[] = { "table", "json", "csv", NULL };

static const struct opt_spec common_specs[] = {
	{ .name = "quiet", .shortname = 'q', .kind = OPT_FLAG, OPT_FIELD(struct tool_common, quiet),
	  .help = "no progress or log lines" },
	{ .name = "format", .kind = OPT_CHOICE, OPT_FIELD(struct tool_common, format), .choices = tool_format_names,
	  .arg = "F", .help = "table, json or csv", .dflt = "table" },
};

const struct opt_table tool_common_table = OPT_TABLE(common_specs, NULL);
