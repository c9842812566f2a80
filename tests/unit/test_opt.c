/* SPDX-License-Identifier: MIT */
/*
 * The option-table parser (src/tools/common/opt.c) on a small command of its own:
 * every kind fills its field, a value out of range or malformed is refused with one
 * line naming the option, a single-value option given twice is refused (an alias
 * counts as its option), a repeatable one is not, roles are enforced, layers are
 * checked in order, --help is generated from the tables (defaults from the fields)
 * and the default mode constant is exactly what the mode parser gives.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tools/common/opt.h"
#include "tools/common/values.h"

struct t_opts {
	TOOL_COMMON;
	bool flag;
	int count;
	uint16_t port;
	uint64_t big;
	uint32_t size;
	double secs;
	int color;
	int cpus[4];
	int ncpus;
	struct bp_mode mode;
	char mode_text[OPT_MODE_TEXT];
	char host[16];
	char text[32];
	int nlist;
	bool server;
	char checked[32];  /* which checks ran, in order */
};

static const char *const colors[] = { "red", "green", NULL };

static int parse_list(const struct opt_spec *s, const char *name, const char *v, void *base, char *err,
		      size_t errlen)
{
	struct t_opts *o = base;

	if (!strcmp(v, "bad"))
		return tool_fail(err, errlen, "%s %s: not a list item", name, v);
	o->nlist++;
	return 0;
}

#define F(m) OPT_FIELD(struct t_opts, m)
static const struct opt_spec specs[] = {
	{ .name = "flag", .shortname = 'f', .kind = OPT_FLAG, F(flag), .help = "a flag" },
	{ .name = "count", .shortname = 'c', .kind = OPT_INT, F(count), .lo = 1, .hi = 10, .arg = "N",
	  .help = "a count", .dflt = OPT_DFLT_FIELD },
	{ .name = "port", .kind = OPT_INT, F(port), .lo = 1, .hi = 65535, .arg = "N", .help = "a port",
	  .role = OPT_ROLE_CLIENT },
	{ .name = "big", .kind = OPT_INT, F(big), .lo = 1, .hi = INT64_MAX, .arg = "N", .help = "no upper limit" },
	{ .name = "size", .kind = OPT_SIZE, F(size), .hi = 1 << 20, .arg = "B", .help = "bytes" },
	{ .name = "secs", .kind = OPT_SECONDS, .flags = OPT_F_ZERO_OK, F(secs), .max_s = 60, .arg = "S",
	  .help = "seconds\nover two lines", .dflt = OPT_DFLT_FIELD },
	{ .name = "color", .kind = OPT_CHOICE, F(color), .choices = colors, .arg = "C", .help = "a color",
	  .dflt = OPT_DFLT_FIELD },
	{ .name = "colour", .kind = OPT_CHOICE, .flags = OPT_F_HIDDEN, F(color), .choices = colors,
	  .alias_of = "color" },
	{ .name = "cpus", .kind = OPT_CPUS, OPT_CPUS_FIELD(struct t_opts, cpus, ncpus), .arg = "LIST", .help = "CPUs" },
	{ .name = "mode", .kind = OPT_MODE, OPT_MODE_FIELD(struct t_opts, mode, mode_text), .arg = "MODE",
	  .help = "a mode", .dflt = OPT_DFLT_FIELD },
	{ .name = "host", .kind = OPT_HOST, F(host), .arg = "ADDR", .help = "an address", .role = OPT_ROLE_SERVER },
	{ .name = "text", .kind = OPT_TEXT, F(text), .arg = "T", .help = "text" },
	{ .name = "item", .kind = OPT_CUSTOM, .flags = OPT_F_REPEAT, .parse = parse_list, .arg = "X",
	  .help = "repeatable" },
	{ .name = "server", .kind = OPT_FLAG, F(server), .help = "be the server" },
};

static int check_a(void *base, const struct opt_seen *seen, char *err, size_t errlen)
{
	struct t_opts *o = base;

	strcat(o->checked, "a");
	if (o->count == 9)
		return tool_fail(err, errlen, "check a refused 9");
	return 0;
}

static int check_b(void *base, const struct opt_seen *seen, char *err, size_t errlen)
{
	struct t_opts *o = base;

	strcat(o->checked, "b");
	return opt_check_role(seen, o->server ? OPT_ROLE_SERVER : OPT_ROLE_CLIENT, err, errlen);
}

static const struct opt_table table_a = { .specs = specs, .n = sizeof(specs) / sizeof(specs[0]),
					  .check = check_a };
static const struct opt_table table_b = { .title = "more:", .specs = NULL, .n = 0, .check = check_b };
static const struct opt_cmd cmd = { .name = "t", .usage = "usage: busypoll t [options]\n",
				    .epilog = "the end\n", .max_positional = 1 };

static struct t_opts o;
static struct opt_seen seen;
static char err[256];

static int parse(const char *line)
{
	static char buf[512];
	char *argv[32];
	int argc = 0;
	const struct opt_layer layers[] = { { &tool_common_table, &o.common }, { &table_a, &o }, { &table_b, &o } };

	memset(&o, 0, sizeof(o));
	o.count = 3;
	o.secs = 1.5;
	o.color = 1;
	o.mode = opt_mode_default;
	memcpy(o.mode_text, opt_mode_default_text, sizeof(o.mode_text));
	argv[argc++] = (char *)"t";
	snprintf(buf, sizeof(buf), "%s", line);
	for (char *save = NULL, *w = strtok_r(buf, " ", &save); w && argc < 31; w = strtok_r(NULL, " ", &save))
		argv[argc++] = w;
	argv[argc] = NULL;
	return opt_parse(&cmd, layers, 3, argc, argv, &seen, err, sizeof(err));
}

static void refused(const char *line, const char *want)
{
	int r = parse(line);

	if (r != -EINVAL || !strstr(err, want) || strchr(err, '\n'))
		fail_msg("`%s`: got %d '%s', want -EINVAL and '%s'", line, r, err, want);
}

static void test_kinds(void **state)
{
	assert_int_equal(parse("-f -c 7 --port 80 --big 123456789012 --size 2k --secs 0 --color red --cpus 0 "
			       "--mode epoll:spin --text hello --item x --item y -q --format csv pos"),
			 0);
	assert_true(o.flag && o.count == 7 && o.port == 80 && o.big == 123456789012ull && o.size == 2048);
	assert_true(o.secs == 0 && o.color == 0 && o.ncpus == 1 && o.cpus[0] == 0);
	assert_int_equal(o.mode.policy, BP_POLICY_SPIN);
	assert_string_equal(o.mode_text, "epoll:spin");
	assert_string_equal(o.text, "hello");
	assert_int_equal(o.nlist, 2);
	assert_true(o.quiet);
	assert_int_equal(o.format, TOOL_FORMAT_CSV);
	assert_int_equal(seen.npos, 1);
	assert_string_equal(seen.pos[0], "pos");
	assert_int_equal(opt_given(&seen, "item"), 2);
	assert_string_equal(opt_text(&seen, "count"), "7");
	assert_null(opt_text(&seen, "host"));
	/* the checks ran, in layer order */
	assert_string_equal(o.checked, "ab");
	/* --opt=value, an alias, a cluster */
	assert_int_equal(parse("--count=4 --colour green -fq"), 0);
	assert_true(o.count == 4 && o.color == 1 && o.flag && o.quiet);
}

static void test_refusals(void **state)
{
	refused("--count 0", "--count 0: must be between 1 and 10");
	refused("-c 11", "--count 11: must be between 1 and 10");
	refused("--count x", "--count x: not a whole number");
	refused("--big 0", "--big 0: must be at least 1");
	refused("--size 2M", "--size 2M");
	refused("--secs 61", "--secs 61: at most 60 seconds");
	refused("--secs -1", "--secs -1: must not be negative");
	refused("--color blue", "--color blue: must be red or green");
	refused("--cpus 99999", "--cpus 99999");
	refused("--mode epoll:nope", "--mode epoll:nope:");
	refused("--host -f", "--host needs an ADDR (got '-f')");
	refused("--host", "--host needs an ADDR");
	refused("--count", "--count needs a value");
	refused("--host 0123456789abcdef", "--host: the address is longer than 15 characters");
	refused("--item bad", "--item bad: not a list item");
	refused("--bogus", "unknown option '--bogus'; see busypoll t --help");
	refused("--co 1", "ambiguous option '--co'");
	refused("-f=1", "unknown option");
	refused("--flag=1", "--flag takes no value");
	refused("a b", "unexpected argument 'b'; see busypoll t --help");
	refused("--format xml", "--format xml: must be table, json or csv");
	/* the checks: a layer's own rule, then the roles */
	refused("-c 9", "check a refused 9");
	refused("--host h", "--host is a server option");
	refused("--server --port 1", "--port is a client option (the client sets up each run)");
}

static void test_repeats(void **state)
{
	refused("-c 1 -c 2", "--count given twice: give it once");
	refused("--count 1 -c 1", "--count given twice");
	refused("--color red --colour red", "--color given twice");
	refused("-f -f", "--flag given twice");
	refused("-q --quiet", "--quiet given twice");
	assert_int_equal(parse("--item a --item b --item c"), 0);
	assert_int_equal(o.nlist, 3);
}

static void test_help(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	struct t_opts d = { .count = 3, .secs = 1.5, .color = 1 };
	const struct opt_layer layers[] = { { &tool_common_table, &d.common }, { &table_a, &d }, { &table_b, &d } };

	memcpy(d.mode_text, "epoll:block", 12);
	assert_non_null(m);
	opt_usage(m, &cmd, layers, 3);
	fclose(m);
	assert_non_null(strstr(buf, "usage: busypoll t [options]\n"));
	assert_non_null(strstr(buf, "  -c, --count N          a count (default 3)\n"));
	assert_non_null(strstr(buf, "  --secs S               seconds over two lines (default 1.5)\n"));
	assert_non_null(strstr(buf, "--color C              a color (default green)\n"));
	assert_non_null(strstr(buf, "--mode MODE            a mode (default epoll:block)\n"));
	assert_non_null(strstr(buf, "--format F             table, json or csv (default table)\n"));
	assert_non_null(strstr(buf, "more:\n"));
	assert_non_null(strstr(buf, "  -h, --help             this text\n"));
	assert_non_null(strstr(buf, "  --version"));
	assert_null(strstr(buf, "colour")); /* hidden alias */
	assert_non_null(strstr(buf, "the end\n"));
	free(buf);
}

/* The constant every command starts from is what `--mode epoll:block` gives. */
static void test_default_mode(void **state)
{
	struct bp_mode m;
	char text[OPT_MODE_TEXT], e[128];

	assert_int_equal(bp_mode_parse("epoll:block", &m, e, sizeof(e)), 0);
	assert_memory_equal(&m, &opt_mode_default, sizeof(m));
	bp_mode_format(&opt_mode_default, text, sizeof(text));
	assert_string_equal(text, opt_mode_default_text);
}

/* Many command lines in one process: nothing left over from the last. */
static void test_many(void **state)
{
	for (int i = 0; i < 50; i++) {
		refused("-fZ", "unknown option '-Z'");
		assert_int_equal(parse("-f"), 0);
		assert_true(o.flag);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kinds),   cmocka_unit_test(test_refusals),     cmocka_unit_test(test_repeats),
		cmocka_unit_test(test_help),    cmocka_unit_test(test_default_mode), cmocka_unit_test(test_many),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
