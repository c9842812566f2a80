/* SPDX-License-Identifier: MIT */
/*
 * busypoll pingpong options: defaults, each option, and every refusal, each on one
 * line naming the option (the command exits 2 on all of these).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "tools/pingpong/pingpong.h"

static struct pp_opts o;
static char err[512];

/* parse - pp_parse_opts on "pingpong" followed by the words of line. */
static int parse(const char *line)
{
	static char buf[1024];
	char *argv[64];
	int argc = 0;

	snprintf(buf, sizeof(buf), "%s", line);
	argv[argc++] = (char *)"pingpong";
	for (char *save = NULL, *w = strtok_r(buf, " ", &save); w && argc < 63;
	     w = strtok_r(NULL, " ", &save))
		argv[argc++] = w;
	argv[argc] = NULL;
	memset(&o, 0x5a, sizeof(o)); /* the parser must set every field itself */
	memset(err, 0, sizeof(err));
	return pp_parse_opts(argc, argv, &o, err, sizeof(err));
}

static void expect_error_at(const char *line, const char *want, int lineno)
{
	int r = parse(line);

	if (r != -EINVAL || !err[0] || !strstr(err, want) || strchr(err, '\n'))
		fail_msg("line %d: `%s`: got %d \"%s\", wanted -EINVAL and one line holding \"%s\"",
			 lineno, line, r, err, want);
}
#define expect_error(line, want) expect_error_at(line, want, __LINE__)

static void test_defaults(void **state)
{
	assert_int_equal(parse("--client 127.0.0.1"), 0);
	assert_false(o.server);
	assert_string_equal(o.host, "127.0.0.1");
	assert_int_equal(o.port, PP_DEFAULT_PORT);
	assert_false(o.tcp);
	assert_int_equal(o.size, PP_DEFAULT_SIZE);
	assert_int_equal(o.n, PP_DEFAULT_N);
	assert_int_equal(o.runs, 10);
	assert_int_equal(o.warmup, PP_DEFAULT_WARMUP);
	assert_string_equal(o.mode_text, "epoll:block");
	assert_int_equal(o.cpu, -1);
	assert_int_equal(o.priority, -1);
	assert_int_equal(o.format, TOOL_FORMAT_TABLE);
	assert_false(o.matrix);
	assert_false(o.breakdown);
	assert_int_equal(o.server_delay_us, 0);
	assert_false(o.quiet);

	assert_int_equal(parse("--server"), 0);
	assert_true(o.server);
	assert_string_equal(o.host, ""); /* all addresses */
}

static void test_values(void **state)
{
	assert_int_equal(parse("--client h --tcp --size 1k -n 5 --runs 3 --warmup-count 0 --cpus 1 --priority 6 "
			       "--port 9 --format csv --breakdown --timeout 0.5 -q"),
			 0);
	assert_true(o.tcp);
	assert_int_equal(o.size, 1024);
	assert_int_equal(o.n, 5);
	assert_int_equal(o.runs, 3);
	assert_int_equal(o.warmup, 0);
	assert_int_equal(o.cpu, 1);
	assert_int_equal(o.priority, 6);
	assert_int_equal(o.port, 9);
	assert_int_equal(o.format, TOOL_FORMAT_CSV);
	assert_true(o.breakdown);
	assert_float_equal(o.timeout_s, 0.5, 1e-12);
	assert_true(o.quiet);
	/* the header size is the least */
	assert_int_equal(parse("--client h --size 48"), 0);
	assert_int_equal(o.size, BP_PP_HDR_LEN);
	assert_int_equal(parse("--client h --size 65507"), 0);
	/* server side */
	assert_int_equal(parse("--server --bind 127.0.0.1 --server-delay-us 200 --mode epoll:spin --cpus 0"), 0);
	assert_string_equal(o.host, "127.0.0.1");
	assert_int_equal(o.server_delay_us, 200);
	assert_string_equal(o.mode_text, "epoll:spin");
}

static void test_matrix(void **state)
{
	char c[PP_MAX_ROWS][PP_MODE_LEN], s[PP_MAX_ROWS][PP_MODE_LEN];

	/* the default busy-poll mode when --mode is not given (if this machine has it) */
	if (parse("--client h --matrix") == 0) {
		assert_true(o.matrix);
		assert_int_equal(o.mode.backend, BP_BACKEND_URING);
		assert_int_equal(o.mode.policy, BP_POLICY_NAPI);
		assert_int_equal(o.mode.busy_usecs, 100);
	}
	/* rows: no busy polling, client only, both ends; the baseline is the backend's :block */
	assert_int_equal(parse("--client h --matrix --mode epoll:napi,usecs=50"), 0);
	assert_int_equal(pp_matrix_modes(&o.mode, c, s, err, sizeof(err)), 0);
	assert_string_equal(c[0], "epoll:block");
	assert_string_equal(s[0], "epoll:block");
	assert_string_equal(c[1], o.mode_text);
	assert_string_equal(s[1], "epoll:block");
	assert_string_equal(c[2], o.mode_text);
	assert_string_equal(s[2], o.mode_text);
	/* a ring set-up the busy mode names is kept by the baseline */
	if (parse("--client h --matrix --mode uring:spin,setup=plain") == 0) {
		assert_int_equal(pp_matrix_modes(&o.mode, c, s, err, sizeof(err)), 0);
		assert_non_null(strstr(c[0], "uring:block"));
		assert_non_null(strstr(c[0], "setup=plain"));
	}
}

static void test_refusals(void **state)
{
	expect_error("", "one of --server or --client HOST is required");
	expect_error("--server --client h", "exclusive");
	expect_error("--client", "--client needs a HOST");
	expect_error("--client --tcp", "--client needs a HOST");
	expect_error("--client h --size 47", "--size 47: must be between 48");
	expect_error("--client h --size 65508", "--size 65508");
	expect_error("--client h --size 1M", "--size 1M");
	expect_error("--client h --size abc", "--size abc: not a size");
	expect_error("--client h -n 0", "-n 0: must be between 1");
	expect_error("--client h -n -5", "-n -5");
	expect_error("--client h -n 5x", "-n 5x: not a whole number");
	expect_error("--client h --runs 0", "--runs 0: must be between 1 and 1000");
	expect_error("--client h --runs 1001", "--runs 1001");
	expect_error("--client h --warmup-count -1", "--warmup-count -1");
	expect_error("--client h --warmup 1", "pingpong warms up by round trips: --warmup-count N");
	expect_error("--client h --mode nope:block", "--mode nope:block");
	expect_error("--client h --mode epoll:napi,bogus=1", "--mode epoll:napi,bogus=1");
	expect_error("--client h --matrix --mode epoll:block", "--matrix compares a polling mode against blocking");
	expect_error("--client h --cpus 0,1", "--cpus 0,1: one CPU");
	expect_error("--client h --cpus 1023", "--cpus 1023: CPU 1023 does not exist");
	expect_error("--client h --cpus 99999", "--cpus 99999: not a CPU list");
	expect_error("--client h --cpus x", "--cpus x: not a CPU list");
	expect_error("--client h --priority 16", "--priority 16: must be between 0 and 15");
	expect_error("--client h --port 0", "--port 0: must be between 1 and 65535");
	expect_error("--client h --port 65536", "--port 65536");
	expect_error("--client h --format xml", "--format xml: must be table, json or csv");
	expect_error("--client h --timeout 0", "--timeout 0: must be more than 0 seconds");
	expect_error("--client h --timeout -1", "--timeout -1: must not be negative");
	expect_error("--client h --timeout 1e3", "--timeout 1e3: not a time (seconds, or with s, ms, m or h)");
	expect_error("--client h --server-delay-us 5", "--server-delay-us is a server option");
	expect_error("--client h --bind 1.2.3.4", "--bind is a server option");
	expect_error("--server --tcp", "--tcp is a client option");
	expect_error("--server --matrix", "--matrix is a client option");
	expect_error("--server --breakdown", "--breakdown is a client option");
	expect_error("--server --size 64", "--size is a client option");
	expect_error("--server -n 5", "-n is a client option");
	expect_error("--server --server-delay-us 1000001", "--server-delay-us 1000001: must be between 0 and 1000000");
	expect_error("--client h --frobnicate", "unknown option '--frobnicate'; see busypoll pingpong --help");
	expect_error("--client h --s 5", "ambiguous option '--s'");
	expect_error("--client h --tcp=1", "--tcp takes no value");
	expect_error("--client h --runs", "--runs needs a value");
	expect_error("--client h extra", "unexpected argument 'extra'");
	expect_error("--client h -Z", "unknown option '-Z'");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_matrix),
		cmocka_unit_test(test_refusals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
