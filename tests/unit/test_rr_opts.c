/* SPDX-License-Identifier: MIT */
/*
 * busypoll rr options: defaults, every option, every refusal (and that its message
 * names the option, on one line), and parsing many command lines in one process.
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

#include "bptest.h"
#include "tools/rr/rr.h"

static struct rr_opts o;
static char err[512];

/* parse_argv - rr_parse_opts on argv[0] = "rr" followed by args (NULL-terminated). */
static int parse_argv(const char *const *args)
{
	char *argv[64];
	int argc = 0;

	argv[argc++] = (char *)"rr";
	while (*args && argc < 63)
		argv[argc++] = (char *)*args++;
	argv[argc] = NULL;
	memset(&o, 0x5a, sizeof(o)); /* rr_parse_opts must set every field itself */
	memset(err, 0, sizeof(err));
	return rr_parse_opts(argc, argv, &o, err, sizeof(err));
}

/* parse - the same, with the words of a space-separated command line. */
static int parse(const char *line)
{
	static char buf[1024];
	const char *args[64];
	int n = 0;

	snprintf(buf, sizeof(buf), "%s", line);
	for (char *save = NULL, *w = strtok_r(buf, " ", &save); w && n < 63;
	     w = strtok_r(NULL, " ", &save))
		args[n++] = w;
	args[n] = NULL;
	return parse_argv(args);
}

/* expect_error - line is refused with -EINVAL and a one-line message holding want. */
static void expect_error_at(const char *line, const char *want, int lineno)
{
	int r = parse(line);

	if (r != -EINVAL || !strstr(err, want) || strchr(err, '\n') || !err[0])
		fail_msg("line %d: `%s`: got %d \"%s\", wanted -EINVAL and a message naming \"%s\"",
			 lineno, line, r, err, want);
}
#define expect_error(line, want) expect_error_at(line, want, __LINE__)

static void expect_ok_at(const char *line, int lineno)
{
	int r = parse(line);

	if (r != 0)
		fail_msg("line %d: `%s`: got %d \"%s\", wanted 0", lineno, line, r, err);
}
#define expect_ok(line) expect_ok_at(line, __LINE__)

static void test_defaults(void **state)
{
	struct rr_opts d;

	memset(&d, 0x5a, sizeof(d));
	rr_opts_defaults(&d);
	assert_false(d.server);
	assert_string_equal(d.host, "");
	assert_int_equal(d.port, RR_DEFAULT_PORT);
	assert_int_equal(d.port, 12867);
	assert_false(d.udp);
	assert_int_equal(d.threads, 1);
	assert_int_equal(d.flows, 1);
	assert_int_equal(d.request_size, 1);
	assert_int_equal(d.response_size, 1);
	assert_true(d.duration_s == 10);
	assert_true(d.transactions == 0);
	assert_true(d.warmup_s == 1);
	assert_int_equal(d.mode.backend, BP_BACKEND_EPOLL);
	assert_int_equal(d.mode.policy, BP_POLICY_BLOCK);
	assert_string_equal(d.mode_text, "epoll:block");
	assert_int_equal(d.ncpus, 0);
	assert_int_equal(d.priority, -1);
	assert_true(d.interval_s == 0);
	assert_int_equal(d.format, TOOL_FORMAT_TABLE);
	assert_false(d.quiet);

	/* A bare client gets exactly the defaults plus its host. */
	expect_ok("--client 192.0.2.1");
	assert_false(o.server);
	assert_string_equal(o.host, "192.0.2.1");
	assert_int_equal(o.threads, 1);
	assert_int_equal(o.flows, 1);
	assert_true(o.duration_s == 10);
	assert_true(o.warmup_s == 1);
	assert_int_equal(o.priority, -1);
	assert_int_equal(o.ncpus, 0);
	assert_string_equal(o.mode_text, d.mode_text);

	/* A bare server listens on any address: host stays "". */
	expect_ok("--server");
	assert_true(o.server);
	assert_string_equal(o.host, "");
	assert_int_equal(o.port, 12867);
}

static void test_client_long_options(void **state)
{
	expect_ok("--client host.example --threads 2 --flows 4 --request-size 64 --response-size 1k"
		  " --duration 2.5 --warmup 0 --cpus 0 --priority 6 --port 9000 --interval 0.5"
		  " --format json --quiet");
	assert_false(o.server);
	assert_string_equal(o.host, "host.example");
	assert_int_equal(o.threads, 2);
	assert_int_equal(o.flows, 4);
	assert_int_equal(o.request_size, 64);
	assert_int_equal(o.response_size, 1024);
	assert_true(o.duration_s == 2.5);
	assert_true(o.transactions == 0);
	assert_true(o.warmup_s == 0);
	/* one CPU for two threads: repeated so thread i is on cpus[i] */
	assert_int_equal(o.ncpus, 2);
	assert_int_equal(o.cpus[0], 0);
	assert_int_equal(o.cpus[1], 0);
	assert_int_equal(o.priority, 6);
	assert_int_equal(o.port, 9000);
	assert_true(o.interval_s == 0.5);
	assert_int_equal(o.format, TOOL_FORMAT_JSON);
	assert_true(o.quiet);
	assert_false(o.udp);
}

static void test_short_options(void **state)
{
	/* -R 2M with --udp is refused; the same without --udp is fine. */
	expect_error("--client h -T 3 -F 3 -Q 8 -R 2M -n 1000 -I 1 -q --udp", "--response-size 2M");
	expect_ok("--client h -T 3 -F 3 -Q 8 -R 2M -n 1000 -I 1 -q --format csv");
	assert_int_equal(o.threads, 3);
	assert_int_equal(o.flows, 3);
	assert_int_equal(o.request_size, 8);
	assert_int_equal(o.response_size, 2u << 20);
	assert_true(o.transactions == 1000);
	assert_true(o.duration_s == 0); /* -n replaces the duration */
	assert_true(o.interval_s == 1);
	assert_true(o.quiet);
	assert_int_equal(o.format, TOOL_FORMAT_CSV);
	/* clustered short options */
	expect_ok("--client h -qT2 -F2");
	assert_true(o.quiet);
	assert_int_equal(o.threads, 2);
	expect_ok("--client h -l 3 --format table");
	assert_true(o.duration_s == 3);
	assert_int_equal(o.format, TOOL_FORMAT_TABLE);
	expect_ok("--client h -l .25");
	assert_true(o.duration_s == 0.25);
}

static void test_server_options(void **state)
{
	expect_ok("--server -T 2 --bind 127.0.0.1 --port 1234 --cpus 1 --priority 0 -q");
	assert_true(o.server);
	assert_string_equal(o.host, "127.0.0.1");
	assert_int_equal(o.threads, 2);
	assert_int_equal(o.port, 1234);
	assert_int_equal(o.priority, 0);
	assert_int_equal(o.ncpus, 2);
	assert_true(o.quiet);
	/* The server needs no flows: T > F is no error there. */
	expect_ok("--server -T 4");
	assert_int_equal(o.threads, 4);
}

static void test_sizes(void **state)
{
	static const struct {
		const char *text;
		uint32_t bytes;
	} ok[] = {
		{ "1", 1 }, { "1k", 1024 }, { "2K", 2048 }, { "1m", 1048576 },
		{ "16M", 16u << 20 }, { "16384k", 16u << 20 }, { "16777216", 16u << 20 },
		{ "007", 7 },
	};
	static const char *const bad[] = {
		"0", "0k", "16777217", "17M", "16385k", "-5", "1.5k", "k", "M", "1kk",
		"1g", "1 k", "+1", "0x10", "99999999999999999999999", "4294967296",
	};
	char line[128];

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		snprintf(line, sizeof(line), "--client h -Q %s -R %s", ok[i].text, ok[i].text);
		expect_ok(line);
		assert_int_equal(o.request_size, ok[i].bytes);
		assert_int_equal(o.response_size, ok[i].bytes);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *args[] = { "--client", "h", "--request-size", bad[i], NULL };
		char want[64];

		snprintf(want, sizeof(want), "--request-size %s", bad[i]);
		if (parse_argv(args) != -EINVAL || !strstr(err, want))
			fail_msg("-Q '%s': got \"%s\"", bad[i], err);
		args[2] = "-R";
		snprintf(want, sizeof(want), "--response-size %s", bad[i]);
		if (parse_argv(args) != -EINVAL || !strstr(err, want))
			fail_msg("-R '%s': got \"%s\"", bad[i], err);
	}
}

static void test_udp_limits(void **state)
{
	expect_ok("--client h --udp -Q 8 -R 65507");
	assert_true(o.udp);
	assert_int_equal(o.request_size, 8);
	assert_int_equal(o.response_size, 65507);
	expect_ok("--client h --udp -Q 65507 -R 1");
	/* The default request (1 byte) has no room for the run id. */
	expect_error("--client h --udp", "--request-size 1");
	expect_error("--client h --udp -Q 7", "--request-size 7");
	expect_error("--client h -Q 7 --udp", "at least 8"); /* order does not matter */
	expect_error("--client h --udp -Q 65508", "--request-size 65508");
	expect_error("--client h --udp -Q 64k", "--request-size 64k");
	expect_error("--client h --udp -Q 8 -R 65508", "--response-size 65508");
	expect_error("--client h --udp -Q 8 -R 1M", "65507");
	/* the same sizes over TCP are fine */
	expect_ok("--client h -Q 7 -R 1M");
}

static void test_number_errors(void **state)
{
	expect_error("--client h -T 0", "--threads 0: must be between 1 and 64");
	expect_error("--client h -T 65 -F 100", "--threads 65");
	expect_error("--client h -T 2x", "--threads 2x");
	expect_error("--client h -T -1", "--threads -1");
	expect_error("--client h -T x", "--threads x");
	expect_error("--client h -T 99999999999999999999999", "--threads");
	expect_error("--client h --threads=3x", "--threads 3x");
	expect_error("--client h -F 0", "--flows 0");
	expect_error("--client h -F 1000001", "--flows 1000001");
	expect_error("--client h -F 1.5", "--flows 1.5");
	expect_error("--client h -T 2 -F 1", "--flows 1 is fewer than --threads 2");
	expect_error("--client h -F 1 -T 2", "--flows 1 is fewer than --threads 2");
	expect_error("--client h -T 3", "--threads 3"); /* the default one flow */
	expect_ok("--client h -F 1000000 -T 64");

	expect_error("--client h -l 0", "--duration 0");
	expect_error("--client h -l 0.0", "--duration 0.0");
	expect_error("--client h -l -1", "--duration -1");
	expect_error("--client h -l abc", "--duration abc");
	expect_error("--client h -l 1e3", "--duration 1e3");
	expect_error("--client h -l inf", "--duration inf");
	expect_error("--client h -l nan", "--duration nan");
	expect_error("--client h -l 1.2.3", "--duration 1.2.3");
	expect_error("--client h -l .", "--duration .");
	expect_error("--client h -l 10x", "--duration 10x");
	expect_error("--client h -l s", "--duration s");
	expect_error("--client h -l 10ss", "--duration 10ss");
	/* fio's time units, as every seconds option takes them */
	expect_ok("--client h -l 10s");
	assert_true(o.duration_s == 10);
	expect_ok("--client h -l 500ms");
	assert_true(o.duration_s == 0.5);
	expect_ok("--client h -l 2m");
	assert_true(o.duration_s == 120);
	expect_error("--client h -l 169h", "--duration 169h: at most a week");
	expect_error("--client h -l 9999999", "--duration 9999999");
	expect_error("--client h -n 0", "--transactions 0");
	expect_error("--client h -n 5x", "--transactions 5x");
	expect_error("--client h -n -5", "--transactions -5");
	expect_error("--client h --warmup -1", "--warmup -1");
	expect_error("--client h --warmup x", "--warmup x");
	expect_ok("--client h --warmup 0.5");
	assert_true(o.warmup_s == 0.5);
	expect_error("--client h -I -1", "--interval -1");
	expect_error("--client h -I 1x", "--interval 1x");

	expect_error("--client h --priority 16", "--priority 16");
	expect_error("--client h --priority -1", "--priority -1");
	expect_error("--client h --priority 1x", "--priority 1x");
	expect_ok("--client h --priority 15");
	assert_int_equal(o.priority, 15);
	expect_error("--client h --port 0", "--port 0");
	expect_error("--client h --port 65536", "--port 65536");
	expect_error("--client h --port -80", "--port -80");
	expect_error("--client h --port 80a", "--port 80a");
	expect_ok("--client h --port 65535");
	assert_int_equal(o.port, 65535);

	expect_error("--client h --format xml", "--format xml");
	expect_error("--client h --format JSON", "--format JSON");

	/* An empty value is not 0. */
	{
		const char *args[] = { "--client", "h", "-T", "", NULL };

		assert_int_equal(parse_argv(args), -EINVAL);
		assert_non_null(strstr(err, "--threads"));
	}
}

static void test_duration_vs_count(void **state)
{
	expect_error("--client h -l 5 -n 100", "--duration");
	expect_error("--client h -n 100 -l 5", "--transactions");
	expect_ok("--client h -n 100");
	assert_true(o.transactions == 100);
	assert_true(o.duration_s == 0);
	expect_ok("--client h -l 5");
	assert_true(o.transactions == 0);
	assert_true(o.duration_s == 5);
	/* the same option twice is refused: which one was meant? */
	expect_error("--client h -l 5 -l 7", "--duration given twice");
	expect_error("--client h -l 5 --duration 7", "--duration given twice");
}

static void test_role_errors(void **state)
{
	expect_error("", "--server or --client");
	expect_error("-T 2", "--server or --client");
	expect_error("--server --client h", "--server and --client");
	expect_error("--client h --server", "--server and --client");
	expect_error("--client", "--client");
	expect_error("--client -T 2", "--client");
	expect_error("--client h --bind 0.0.0.0", "--bind");
	expect_error("--server --bind", "--bind");
	expect_error("--server --flows 2", "--flows");
	expect_error("--server -F 2", "--flows");
	expect_error("--server -Q 64", "--request-size");
	expect_error("--server -R 64", "--response-size");
	expect_error("--server -l 5", "--duration");
	expect_error("--server -n 5", "--transactions");
	expect_error("--server --warmup 0", "--warmup");
	expect_error("--server -I 1", "--interval");
	/* --format is on every command (the server has nothing to print in it) */
	expect_ok("--server --format json");
	expect_error("--server --udp", "--udp");
}

static void test_syntax_errors(void **state)
{
	expect_error("--client h --bogus", "--bogus");
	expect_error("--client h --bogus=1", "--bogus");
	expect_error("--client h -Z", "-Z");
	expect_error("--client h -qZ", "-Z");
	expect_error("--client h extra", "extra");
	expect_error("--client h -- -T", "-T");
	expect_error("--client h -T", "-T");
	expect_error("--client h --threads", "--threads");
	expect_error("--client h -Q", "-Q");
	expect_error("--client h --mode", "--mode");
	expect_error("--client h --udp=1", "--udp");
	expect_error("--client h --quiet=yes", "--quiet");
	expect_error("--client h --t 2", "--t"); /* ambiguous: --threads, --transactions */
	/* unambiguous abbreviations are getopt's to accept */
	expect_ok("--client h --thr 2 --fl 2");
	assert_int_equal(o.threads, 2);
}

/* help_output - parse line with stdout captured; returns what was printed. */
static const char *help_output(const char *line, int *ret)
{
	static char text[8192];
	FILE *tmp = tmpfile();
	int saved;
	size_t n;

	assert_non_null(tmp);
	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	dup2(fileno(tmp), STDOUT_FILENO);
	*ret = parse(line);
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	rewind(tmp);
	n = fread(text, 1, sizeof(text) - 1, tmp);
	text[n] = 0;
	fclose(tmp);
	return text;
}

static void test_help(void **state)
{
	const char *out;
	int r;

	out = help_output("--help", &r);
	assert_int_equal(r, 1);
	assert_non_null(strstr(out, "usage: busypoll rr"));
	/* every option is in the help */
	for (const char *const *w = (const char *const[]){ "--server", "--client", "--threads",
		"--flows", "--request-size", "--response-size", "--duration", "--transactions",
		"--warmup", "--mode", "--cpus", "--priority", "--port", "--interval", "--format",
		"--udp", "--bind", "--quiet", "--help", NULL }; *w; w++)
		if (!strstr(out, *w))
			fail_msg("--help does not mention %s", *w);
	out = help_output("--client h -h", &r);
	assert_int_equal(r, 1);
	assert_non_null(strstr(out, "usage: busypoll rr"));
	help_output("-h --bogus", &r);
	assert_int_equal(r, 1);
	/* an error is not help: nothing on stdout */
	out = help_output("--client h -T 0", &r);
	assert_int_equal(r, -EINVAL);
	assert_string_equal(out, "");
}

static void test_mode(void **state)
{
	struct bp_mode m;
	char canon[128], merr[256];

	expect_ok("--client h --mode epoll:block");
	assert_int_equal(o.mode.backend, BP_BACKEND_EPOLL);
	assert_int_equal(o.mode.policy, BP_POLICY_BLOCK);
	expect_ok("--server --mode epoll:spin");
	assert_int_equal(o.mode.policy, BP_POLICY_SPIN);
	assert_int_equal(bp_mode_parse("epoll:spin", &m, merr, sizeof(merr)), 0);
	bp_mode_format(&m, canon, sizeof(canon));
	assert_string_equal(o.mode_text, canon);

	expect_error("--client h --mode bogus", "--mode bogus");
	expect_error("--client h --mode epoll:nosuchpolicy", "--mode epoll:nosuchpolicy");
	expect_error("--client h --mode epoll:napi,nosuchkey=1", "--mode");

	/*
	 * A mode this kernel or process cannot use is refused with the checker's reason.
	 * Which modes those are depends on the machine: use any the checker refuses here.
	 */
	for (size_t i = 0; i < bpt_n_modes; i++) {
		char line[256];

		if (bp_mode_parse(bpt_all_modes[i], &m, merr, sizeof(merr)) != 0)
			fail_msg("the test matrix mode %s does not parse: %s", bpt_all_modes[i], merr);
		snprintf(line, sizeof(line), "--client h --mode %s", bpt_all_modes[i]);
		if (bp_mode_check(&m, merr, sizeof(merr)) != 0) {
			expect_error(line, "--mode");
			assert_non_null(strstr(err, merr));
		} else {
			expect_ok(line);
			bp_mode_format(&m, canon, sizeof(canon));
			assert_string_equal(o.mode_text, canon);
		}
	}
}

static void test_cpus(void **state)
{
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	char line[128];

	expect_ok("--client h --cpus 0");
	assert_int_equal(o.ncpus, 1);
	assert_int_equal(o.cpus[0], 0);
	expect_ok("--client h -T 3 -F 3 --cpus 0");
	assert_int_equal(o.ncpus, 3);
	for (int i = 0; i < 3; i++)
		assert_int_equal(o.cpus[i], 0);
	if (ncpu >= 2) {
		expect_ok("--client h -T 4 -F 4 --cpus 0-1");
		assert_int_equal(o.ncpus, 4);
		assert_int_equal(o.cpus[0], 0);
		assert_int_equal(o.cpus[1], 1);
		assert_int_equal(o.cpus[2], 0);
		assert_int_equal(o.cpus[3], 1);
	}
	expect_error("--client h --cpus 0,0", "--cpus 0,0"); /* two CPUs, one thread */
	expect_error("--client h --cpus x", "--cpus x");
	expect_error("--client h --cpus 0,", "--cpus 0,");
	expect_error("--client h --cpus -1", "--cpus -1");
	snprintf(line, sizeof(line), "--client h --cpus %ld", ncpu);
	expect_error(line, "does not exist");
	expect_error("--client h --cpus 100000", "--cpus 100000");
}

/* One process, many command lines: getopt state from one must not leak into the next. */
static void test_repeated_parsing(void **state)
{
	for (int round = 0; round < 3; round++) {
		expect_ok("--client h -T 2 -F 2");
		assert_int_equal(o.threads, 2);
		/* an error in the middle of a cluster leaves getopt half-way through a word */
		expect_error("--client h -qZT 3", "-Z");
		expect_ok("--client h2 -T 3 -F 3");
		assert_int_equal(o.threads, 3);
		assert_string_equal(o.host, "h2");
		expect_error("--client h -T", "-T");
		expect_ok("--server");
		assert_true(o.server);
		assert_int_equal(o.threads, 1);
	}
	/* a longer argv then a shorter one: the second must start from its own argv[1] */
	expect_ok("--client h -T 2 -F 2 -Q 100 -R 200 -l 1 --warmup 0 --port 5000");
	expect_ok("--client h");
	assert_int_equal(o.threads, 1);
	assert_int_equal(o.request_size, 1);
	assert_int_equal(o.port, 12867);
}

/* --rate, --arrivals, --max-outstanding: the open loop's options and their refusals */
static void test_open_loop(void **state)
{
	expect_ok("--client h");
	assert_true(o.rate == 0); /* closed loop */
	assert_int_equal(o.arrivals, RR_ARRIVALS_POISSON);
	assert_true(o.max_outstanding == 0);
	assert_true(rr_max_outstanding(&o) == RR_DEFAULT_OUTSTANDING);
	expect_ok("--client h --rate 2000");
	assert_true(o.rate == 2000);
	expect_ok("--client h --rate 20k --arrivals fixed --max-outstanding 50");
	assert_true(o.rate == 20000);
	assert_int_equal(o.arrivals, RR_ARRIVALS_FIXED);
	assert_true(rr_max_outstanding(&o) == 50);
	expect_ok("--client h --rate 2.5k --arrivals poisson");
	assert_true(o.rate == 2500);
	assert_int_equal(o.arrivals, RR_ARRIVALS_POISSON);
	expect_ok("--client h --rate 1M -F 800");
	assert_true(o.rate == 1e6);
	assert_true(rr_max_outstanding(&o) == 1600); /* two per flow, more than the default */
	expect_ok("--client h --rate 0.5");
	assert_true(o.rate == 0.5);

	expect_error("--client h --rate 0", "--rate 0: must be more than 0");
	expect_error("--client h --rate 0k", "--rate 0k: must be more than 0");
	expect_error("--client h --rate -5", "--rate -5: must not be negative");
	expect_error("--client h --rate 10x", "--rate 10x: not a rate");
	expect_error("--client h --rate k", "--rate k: not a rate");
	expect_error("--client h --rate 1e5", "--rate 1e5: not a rate");
	expect_error("--client h --rate 200M", "--rate 200M: at most 100000000");
	expect_error("--client h --rate 5 --rate 6", "--rate");
	expect_error("--client h --arrivals fixed", "--arrivals needs --rate");
	expect_error("--client h --max-outstanding 10", "--max-outstanding needs --rate");
	expect_error("--client h --rate 1k --arrivals even", "--arrivals even: must be fixed or poisson");
	expect_error("--client h --rate 1k -F 20 --max-outstanding 10",
		     "--max-outstanding 10: fewer than --flows 20");
	expect_error("--client h --rate 1k --max-outstanding 0", "--max-outstanding 0");
	expect_error("--server --rate 1k", "--rate");

	/* the server's test hook: hidden, N:MS */
	expect_ok("--server --test-hold 50:100");
	assert_int_equal(o.hold_after, 50);
	assert_int_equal(o.hold_ms, 100);
	expect_ok("--server");
	assert_int_equal(o.hold_after, 0);
	expect_error("--server --test-hold 50", "--test-hold 50: N:MS");
	expect_error("--server --test-hold 0:100", "--test-hold 0");
	expect_error("--server --test-hold 5:0", "--test-hold 0");
	expect_error("--client h --test-hold 5:5", "--test-hold");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_client_long_options),
		cmocka_unit_test(test_short_options),
		cmocka_unit_test(test_server_options),
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_udp_limits),
		cmocka_unit_test(test_number_errors),
		cmocka_unit_test(test_duration_vs_count),
		cmocka_unit_test(test_role_errors),
		cmocka_unit_test(test_syntax_errors),
		cmocka_unit_test(test_help),
		cmocka_unit_test(test_mode),
		cmocka_unit_test(test_cpus),
		cmocka_unit_test(test_repeated_parsing),
		cmocka_unit_test(test_open_loop),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
