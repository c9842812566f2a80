/* SPDX-License-Identifier: MIT */
/*
 * `busypoll napi` and `busypoll testbed` without a kernel: key=value parsing of
 * per-NAPI settings and device knobs (every refusal names what was wrong), the
 * table/JSON forms of a NAPI, and the commands' usage errors (exit 2 before
 * anything is touched, so these run unprivileged).
 */
#include <errno.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tools/common/commands.h"
#include "tools/common/emit.h"
#include "tools/common/napi_show.h"

static char err[256];

/* What the user would have read: bp_tool_error's last line, through its sink. */
static char tool_msg[512];

static void keep_tool_msg(const char *line)
{
	snprintf(tool_msg, sizeof(tool_msg), "%s", line);
}

/* settings - parse each word of line into one settings struct; the first failure's code. */
static int settings(const char *line, bp_napi_settings *s)
{
	char buf[512];
	int rc = 0;

	memset(s, 0, sizeof(*s));
	memset(err, 0, sizeof(err));
	snprintf(buf, sizeof(buf), "%s", line);
	for (char *save = NULL, *w = strtok_r(buf, " ", &save); w && !rc; w = strtok_r(NULL, " ", &save))
		rc = napi_parse_setting(w, s, err, sizeof(err));
	return rc;
}

#define EXPECT_REFUSED(line, want)                                                   \
	do {                                                                         \
		bp_napi_settings s_;                                                 \
		int r_ = settings(line, &s_);                                        \
		if (r_ != -EINVAL || !strstr(err, want) || strchr(err, '\n'))        \
			fail_msg("`%s`: got %d \"%s\", wanted -EINVAL naming \"%s\"", \
				 line, r_, err, want);                               \
	} while (0)

static void test_settings_ok(void **state)
{
	bp_napi_settings s;

	assert_int_equal(settings("defer-hard-irqs=3 gro-flush-timeout=40000", &s), 0);
	assert_int_equal(s.has, BP_NAPI_HAS_DEFER | BP_NAPI_HAS_GRO_FLUSH);
	assert_int_equal(s.defer_hard_irqs, 3);
	assert_int_equal(s.gro_flush_timeout_ns, 40000);

	assert_int_equal(settings("irq-suspend-timeout=18446744073709551615 threaded=1", &s), 0);
	assert_int_equal(s.has, BP_NAPI_HAS_IRQ_SUSPEND | BP_NAPI_HAS_THREADED);
	assert_true(s.irq_suspend_timeout_ns == UINT64_MAX);
	assert_int_equal(s.threaded, 1);

	/* zero is a value (it turns a setting off), not "absent" */
	assert_int_equal(settings("defer-hard-irqs=0 threaded=0", &s), 0);
	assert_int_equal(s.has, BP_NAPI_HAS_DEFER | BP_NAPI_HAS_THREADED);
	assert_int_equal(settings("defer-hard-irqs=2147483647", &s), 0);
	assert_int_equal(s.defer_hard_irqs, INT32_MAX);
}

static void test_settings_refused(void **state)
{
	EXPECT_REFUSED("bogus=1", "unknown key 'bogus'");
	EXPECT_REFUSED("bogus=1", "defer-hard-irqs, gro-flush-timeout"); /* the keys are listed */
	EXPECT_REFUSED("gro_flush_timeout=1", "--device");
	EXPECT_REFUSED("irq=5", "irq is read-only");
	EXPECT_REFUSED("pid=5", "pid is read-only");
	EXPECT_REFUSED("defer-hard-irqs", "expected key=value");
	EXPECT_REFUSED("=3", "expected key=value");
	EXPECT_REFUSED("defer-hard-irqs=", "defer-hard-irqs=: not a whole number");
	EXPECT_REFUSED("defer-hard-irqs=abc", "defer-hard-irqs=abc: not a whole number");
	EXPECT_REFUSED("defer-hard-irqs= 3", "not a whole number");
	EXPECT_REFUSED("defer-hard-irqs=+3", "not a whole number");
	EXPECT_REFUSED("defer-hard-irqs=0x10", "not a whole number");
	EXPECT_REFUSED("defer-hard-irqs=-1", "defer-hard-irqs=-1: must be between 0 and 2147483647");
	EXPECT_REFUSED("defer-hard-irqs=2147483648", "must be between 0 and 2147483647");
	EXPECT_REFUSED("gro-flush-timeout=18446744073709551616", "gro-flush-timeout=18446744073709551616: must be between");
	EXPECT_REFUSED("gro-flush-timeout=40us", "not a whole number");
	EXPECT_REFUSED("threaded=2", "threaded=2: must be between 0 and 1");
	EXPECT_REFUSED("threaded=1 threaded=0", "threaded is given twice");
	EXPECT_REFUSED("a-very-long-key-that-is-longer-than-any-known-one=1", "unknown key 'a-very-long");
}

static void test_knobs(void **state)
{
	struct napi_knobs k;

	memset(&k, 0, sizeof(k));
	assert_int_equal(napi_parse_knob("gro_flush_timeout=20000", &k, err, sizeof(err)), 0);
	assert_int_equal(napi_parse_knob("napi_defer_hard_irqs=2", &k, err, sizeof(err)), 0);
	assert_true(k.has[NAPI_KNOB_DEFER] && k.has[NAPI_KNOB_GRO_FLUSH]);
	assert_true(k.value[NAPI_KNOB_GRO_FLUSH] == 20000 && k.value[NAPI_KNOB_DEFER] == 2);
	assert_string_equal(napi_knob_names[NAPI_KNOB_DEFER], "napi_defer_hard_irqs");
	assert_string_equal(napi_knob_names[NAPI_KNOB_GRO_FLUSH], "gro_flush_timeout");

	assert_int_equal(napi_parse_knob("gro_flush_timeout=1", &k, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "gro_flush_timeout is given twice"));
	memset(&k, 0, sizeof(k));
	assert_int_equal(napi_parse_knob("threaded=1", &k, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "unknown device knob 'threaded'"));
	assert_int_equal(napi_parse_knob("napi_defer_hard_irqs=2147483648", &k, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "must be between 0 and 2147483647"));
	assert_int_equal(napi_parse_knob("gro-flush-timeout=1", &k, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "unknown device knob 'gro-flush-timeout'"));
}

/* What a FILE writer printed, NUL-terminated (static buffer). */
static const char *printed(void (*fn)(FILE *, const void *), const void *arg)
{
	static char buf[2048];
	FILE *f = fmemopen(buf, sizeof(buf), "w");

	assert_non_null(f);
	fn(f, arg);
	fclose(f);
	return buf;
}

/* emitted - n through napi_emit as one json object (or csv header / row), line breaks and indents dropped. */
static void emitted(FILE *f, const void *n, const char *dev, enum emit_kind kind)
{
	struct emit e = { .kind = kind, .out = f };

	em_begin(&e, NULL, false);
	napi_emit(&e, n, dev);
	em_end(&e);
}

static void json_with_dev(FILE *f, const void *n)
{
	emitted(f, n, "bp\"v\x01", EMIT_JSON);
}

static void json_no_dev(FILE *f, const void *n)
{
	emitted(f, n, NULL, EMIT_JSON);
}

static void csv_header(FILE *f, const void *n)
{
	emitted(f, n, "", EMIT_CSV_HEADER);
}

static void csv_row(FILE *f, const void *n)
{
	emitted(f, n, "", EMIT_CSV_ROW);
}

/* squeeze - s without its line breaks and the indentation after them. */
static const char *squeeze(const char *s)
{
	static char buf[2048];
	size_t j = 0;

	for (size_t i = 0; s[i] && j + 1 < sizeof(buf); i++) {
		if (s[i] == '\n') {
			while (s[i + 1] == ' ')
				i++;
			continue;
		}
		buf[j++] = s[i];
	}
	buf[j] = 0;
	return buf;
}

static void row(FILE *f, const void *n)
{
	napi_table_row(f, "a", n, NULL);
}

static void test_output(void **state)
{
	struct bp_napi_info full = {
		.id = 8193, .ifindex = 2, .irq = 45, .pid = 1234, .defer_hard_irqs = 3,
		.gro_flush_timeout_ns = 40000, .irq_suspend_timeout_ns = UINT64_MAX, .threaded = 1,
		.has = BP_NAPI_HAS_IRQ | BP_NAPI_HAS_PID | BP_NAPI_HAS_DEFER | BP_NAPI_HAS_GRO_FLUSH |
		       BP_NAPI_HAS_IRQ_SUSPEND | BP_NAPI_HAS_THREADED,
	};
	/* an older kernel: only id and ifindex, no irq (-1), no pid */
	struct bp_napi_info bare = { .id = 300, .ifindex = 7, .irq = -1, .pid = -1 };

	assert_string_equal(squeeze(printed(json_with_dev, &full)),
			    "{\"id\": 8193,\"ifindex\": 2,\"device\": \"bp\\\"v\\u0001\",\"irq\": 45,"
			    "\"pid\": 1234,\"defer_hard_irqs\": 3,\"gro_flush_timeout_ns\": 40000,"
			    "\"irq_suspend_timeout_ns\": 18446744073709551615,\"threaded\": 1}");
	assert_string_equal(squeeze(printed(json_no_dev, &bare)),
			    "{\"id\": 300,\"ifindex\": 7,\"irq\": null,\"pid\": null,"
			    "\"defer_hard_irqs\": null,\"gro_flush_timeout_ns\": null,"
			    "\"irq_suspend_timeout_ns\": null,\"threaded\": null}");
	/* csv: the same fields as columns; an unknown device and absent attributes are empty */
	assert_string_equal(printed(csv_header, &bare),
			    "id,ifindex,device,irq,pid,defer_hard_irqs,gro_flush_timeout_ns,irq_suspend_timeout_ns,threaded");
	assert_string_equal(printed(csv_row, &bare), "300,7,,,,,,,");
	assert_string_equal(printed(csv_row, &full), "8193,2,,45,1234,3,40000,18446744073709551615,1");

	/* absent attributes are "-", and so is an unknown device; ten columns with the lead */
	{
		const char *r = printed(row, &bare);
		char copy[2048], *save = NULL;
		const char *want[] = { "a", "300", "7", "-", "-", "-", "-", "-", "-", "-" };
		int n = 0;

		snprintf(copy, sizeof(copy), "%s", r);
		for (char *w = strtok_r(copy, " \n", &save); w; w = strtok_r(NULL, " \n", &save), n++)
			if (n < 10)
				assert_string_equal(w, want[n]);
		assert_int_equal(n, 10);
	}
	{
		const char *r = printed(row, &full);

		assert_non_null(strstr(r, "8193"));
		assert_non_null(strstr(r, "18446744073709551615"));
		assert_non_null(strstr(r, "40000"));
	}
}

/* run - a subcommand with the words of line as its argv. */
static int run(int (*cmd)(int, char **), const char *line)
{
	static char buf[512];
	char *argv[32];
	int argc = 0;

	snprintf(buf, sizeof(buf), "%s", line);
	for (char *save = NULL, *w = strtok_r(buf, " ", &save); w && argc < 31;
	     w = strtok_r(NULL, " ", &save))
		argv[argc++] = w;
	argv[argc] = NULL;
	return cmd(argc, argv);
}

/* Bad input is exit 2 before anything is touched: no root, kernel or namespace needed. */
static void test_usage_errors(void **state)
{
	static const char *const napi_bad[] = {
		"napi",
		"napi frob",
		"napi list extra",
		"napi get",
		"napi get abc",
		"napi get 0",
		"napi get 4294967296",
		"napi get 1 2",
		"napi get 1 --device lo",
		"napi set 1",
		"napi set 1 bogus=1",
		"napi set 1 defer-hard-irqs=x",
		"napi set --device lo",
		"napi set --device lo napi_defer_hard_irqs=-1",
		"napi list --format yaml",
		"napi list --netns",
		"napi list --netns a/b",
		"napi list --device a/b",
		"napi list --bogus",
	};
	static const char *const testbed_bad[] = {
		"testbed",
		"testbed sideways",
		"testbed up extra",
		"testbed up --queues 0",
		"testbed up --queues 65",
		"testbed up --queues x",
		"testbed up --name",
		"testbed up --name 0123456789012345678901234567890123",
		"testbed status --queues 2",
		"testbed down --threaded",
		"testbed status --format xml",
		"testbed up --bogus",
	};

	/* exit 2 and one line that starts with the subcommand */
	for (size_t i = 0; i < sizeof(napi_bad) / sizeof(napi_bad[0]); i++) {
		tool_msg[0] = '\0';
		if (run(cmd_napi, napi_bad[i]) != BP_EXIT_USAGE || strncmp(tool_msg, "busypoll napi: ", 15) ||
		    strchr(tool_msg, '\n'))
			fail_msg("`%s` did not exit %d with one line (\"%s\")", napi_bad[i],
				 BP_EXIT_USAGE, tool_msg);
	}
	for (size_t i = 0; i < sizeof(testbed_bad) / sizeof(testbed_bad[0]); i++) {
		tool_msg[0] = '\0';
		if (run(cmd_testbed, testbed_bad[i]) != BP_EXIT_USAGE ||
		    strncmp(tool_msg, "busypoll testbed: ", 18) || strchr(tool_msg, '\n'))
			fail_msg("`%s` did not exit %d with one line (\"%s\")", testbed_bad[i],
				 BP_EXIT_USAGE, tool_msg);
	}
	/* a few messages word for word: they are what a user acts on */
	run(cmd_napi, "napi set 1 bogus=1");
	assert_string_equal(tool_msg, "busypoll napi: unknown key 'bogus'; keys: defer-hard-irqs, "
				      "gro-flush-timeout, irq-suspend-timeout, threaded");
	run(cmd_testbed, "testbed status --queues 2");
	assert_string_equal(tool_msg, "busypoll testbed: --queues only applies to up (status shows "
				      "what up made)");
	run(cmd_napi, "napi get 1 --device lo");
	assert_string_equal(tool_msg, "busypoll napi: give a NAPI id or --device DEV, not both");
	assert_int_equal(run(cmd_napi, "napi --help"), BP_EXIT_OK);
	assert_int_equal(run(cmd_testbed, "testbed --help"), BP_EXIT_OK);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_settings_ok),
		cmocka_unit_test(test_settings_refused),
		cmocka_unit_test(test_knobs),
		cmocka_unit_test(test_output),
		cmocka_unit_test(test_usage_errors),
	};

	bp_tool_error_sink(keep_tool_msg);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
