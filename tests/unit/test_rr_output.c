/* SPDX-License-Identifier: MIT */
/*
 * busypoll rr output: a result built by hand, printed as json, csv and table.
 * json is checked by a real parser (python3's json module) against the values put
 * in; csv by a quote-aware field count here and python3's csv module there, which
 * also checks that every json field has its csv column with the same value.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "tools/rr/rr.h"
#include "bptest.h"

static struct rr_result res;

/* The hand-made result: two threads, a comma-laden mode, 1000 latency samples 1..1000 us. */
static void build_result(struct rr_result *r)
{
	memset(r, 0, sizeof(*r));
	rr_opts_defaults(&r->opts);
	snprintf(r->opts.host, sizeof(r->opts.host), "server.example");
	r->opts.threads = 2;
	r->opts.flows = 4;
	r->opts.request_size = 64;
	r->opts.response_size = 128;
	r->opts.duration_s = 10;
	r->opts.warmup_s = 1.5;
	snprintf(r->opts.mode_text, sizeof(r->opts.mode_text), "epoll:napi,usecs=64,budget=8");
	r->opts.cpus[0] = 0;
	r->opts.cpus[1] = 1;
	r->opts.ncpus = 2;
	snprintf(r->server_addr, sizeof(r->server_addr), "192.0.2.7:12867");
	/* quotes, a backslash and a tab: the json must escape them */
	snprintf(r->kernel, sizeof(r->kernel), "6.18.0 \"test\" \\\t");
	r->sysctl_busy_poll = 50;
	r->sysctl_busy_read = 0;
	r->transactions = 1000000;
	r->seconds = 9.999995;
	r->tps = 100000.5;
	bp_hist_init(&r->hist);
	for (uint64_t us = 1; us <= 1000; us++)
		bp_hist_record(&r->hist, us * 1000);

	r->client.valid = true;
	snprintf(r->client.mode, sizeof(r->client.mode), "epoll:napi,usecs=64,budget=8");
	r->client.threads = 2;
	r->client.transactions = 1150000;
	r->client.interval_ns = 10000000000ull;
	r->client.utime_us = 500000;   /* 0.5 us/tx */
	r->client.stime_us = 2250000;  /* 2.25 us/tx */
	r->client.nvcsw = 100;
	r->client.nivcsw = 150;        /* 0.00025 switches/tx */
	r->client.busy_poll_rx = 2000000;
	r->client.net_rx = 10;
	r->client.syscalls = 3000000;  /* 3 /tx */
	r->client.empty_polls = 7000000;
	r->client.wakeups = 1000000;
	r->client.waits = 4000000;
	r->client.completions = 0;

	r->server.valid = true;
	snprintf(r->server.mode, sizeof(r->server.mode), "epoll:napi,usecs=64,budget=8,prefer");
	r->server.threads = 1;
	r->server.transactions = 1150000;
	r->server.interval_ns = 10000100000ull;
	r->server.utime_us = 400000;
	r->server.stime_us = 1600000;
	r->server.syscalls = 2000000;
	r->server.napi_ids[0] = 8193;
	r->server.napi_ids[1] = 8194;
	r->server.n_napi_ids = 2;
	/* the threads counted: the server's loop thread and its SQPOLL thread */
	r->server.thr[0] = (struct ev_thread){ .tid = 1234, .comm = "rr-server-0", .cpu_us = 1000001,
					       .utime_us = 250000, .stime_us = 750001, .split = true };
	r->server.thr[1] = (struct ev_thread){ .tid = 1240, .comm = "iou-sqp-1234", .cpu_us = 500005,
					       .stime_us = 500005, .split = true };
	r->server.nthr = 2;
	r->server.helper_cpu_us = 5000;
}

/* render - r printed in format f, as a malloc'd string. */
static char *render(const struct rr_result *r, enum tool_format f)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	assert_non_null(m);
	rr_print(m, r, f);
	assert_int_equal(fclose(m), 0);
	assert_non_null(buf);
	return buf;
}

/* csv_fields - fields on one csv line (RFC 4180 quotes); *next: the start of the next line. */
static int csv_fields(const char *p, const char **next)
{
	int n = 1;
	bool quoted = false;

	for (; *p && (quoted || *p != '\n'); p++) {
		if (*p == '"')
			quoted = !quoted; /* a doubled "" toggles twice: still inside */
		else if (*p == ',' && !quoted)
			n++;
	}
	assert_false(quoted); /* an unterminated quote */
	*next = *p ? p + 1 : p;
	return n;
}

/* write_temp - s into a new temporary file; its path into path. */
static void write_temp(const char *s, char *path, size_t len)
{
	int fd;

	snprintf(path, len, "/tmp/test_rr_output.XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, s, strlen(s)), (ssize_t)strlen(s));
	close(fd);
}

/*
 * run_python - python3 -c script ARGS... with no shell in between. Returns its exit
 * status (python_missing() said beforehand whether there is a python3 to run).
 */
static int run_python(const char *script, const char *const *args, bool quiet)
{
	const char *argv[16] = { "python3", "-c", script };
	int n = 3, status;
	pid_t pid;

	while (*args && n < 15)
		argv[n++] = *args++;
	argv[n] = NULL;
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (quiet) /* a failure we expect: no traceback in the test log */
			if (!freopen("/dev/null", "w", stderr))
				_exit(126);
		execvp("python3", (char *const *)argv);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) == 127)
		fail_msg("python3 could not be run although it was found before");
	return WEXITSTATUS(status);
}

/*
 * python_missing - true (and this part counted as skipped, so the program exits
 * 77, not 0) when there is no python3 to check the json and csv with.
 */
static bool python_missing(const char *test)
{
	static int have = -1;

	if (have < 0)
		have = system("python3 -c pass >/dev/null 2>&1") == 0;
	if (!have)
		bpt_skip_part("%s: python3 is missing (apt-get install python3)", test);
	return !have;
}

/*
 * The python side: argv = json file, csv file, then expectations. Checks the values,
 * then that every json leaf has a csv column holding the same value.
 */
static const char py_check[] =
	"import csv, json, sys\n"
	"d = json.load(open(sys.argv[1]))\n"
	"rows = list(csv.reader(open(sys.argv[2], newline='')))\n"
	"exp = json.loads(sys.argv[3])\n"
	"assert len(rows) == 2, rows\n"
	"assert len(rows[0]) == len(rows[1]), (len(rows[0]), len(rows[1]))\n"
	"assert len(set(rows[0])) == len(rows[0]), 'duplicate csv columns'\n"
	"col = dict(zip(rows[0], rows[1]))\n"
	"def get(path):\n"
	"    v = d\n"
	"    for k in path.split('.'):\n"
	"        v = v[k]\n"
	"    return v\n"
	"for path, want in exp.items():\n"
	"    got = get(path)\n"
	"    assert got == want, f'{path}: json has {got!r}, wanted {want!r}'\n"
	"def leaves(o, p):\n"
	"    if isinstance(o, dict):\n"
	"        for k, v in o.items():\n"
	"            yield from leaves(v, p + '.' + k if p else k)\n"
	"    else:\n"
	"        yield p, o\n"
	"seen = set()\n"
	"for path, v in leaves(d, ''):\n"
	"    if v is None and path not in col:\n"
	"        sub = [c for c in col if c.startswith(path + '.')]\n"
	"        assert sub, f'{path}: null in json, no csv columns'\n"
	"        assert all(col[c] == '' for c in sub), f'{path}: null in json, not empty in csv'\n"
	"        seen.update(sub)\n"
	"        continue\n"
	"    assert path in col, f'{path}: in json, not in csv'\n"
	"    seen.add(path)\n"
	"    c = col[path]\n"
	"    if v is None: ok = c == ''\n"
	"    elif isinstance(v, bool): ok = c == ('true' if v else 'false')\n"
	"    elif isinstance(v, (int, float)): ok = float(c) == v\n"
	"    elif isinstance(v, list): ok = c == ','.join(str(x) for x in v)\n"
	"    else: ok = c == v\n"
	"    assert ok, f'{path}: json {v!r} but csv {c!r}'\n"
	"assert seen == set(col), f'csv columns not in json: {set(col) - seen}'\n";

/*
 * check_with_python - print r as json and csv; python checks them against exp_json
 * (a json object of "dotted.path": value). expect_fail: keep a failure quiet.
 */
static int check_with_python(const struct rr_result *r, const char *exp_json, bool expect_fail)
{
	char *json = render(r, TOOL_FORMAT_JSON), *csv = render(r, TOOL_FORMAT_CSV);
	char jpath[64], cpath[64];
	int rc;

	write_temp(json, jpath, sizeof(jpath));
	write_temp(csv, cpath, sizeof(cpath));
	rc = run_python(py_check, (const char *const[]){ jpath, cpath, exp_json, NULL }, expect_fail);
	if (rc != 0 && !expect_fail)
		print_message("json was:\n%s\ncsv was:\n%s\n", json, csv);
	unlink(jpath);
	unlink(cpath);
	free(json);
	free(csv);
	return rc;
}

/* Per transaction: no transactions, no figure (NaN: json null, table "-"). */
static void test_per_tx(void **state)
{
	char buf[32];

	assert_true(isnan(ev_per(0, 0)));
	assert_true(isnan(ev_per(5, 0)));
	assert_true(ev_per(3, 2) == 1.5);
	assert_true(ev_per(UINT64_MAX, 1) == (double)UINT64_MAX);
	assert_string_equal(ev_per_text(buf, sizeof(buf), NAN), "-");
	assert_string_equal(ev_per_text(buf, sizeof(buf), 0.00025), "0.00025");
	assert_string_equal(ev_per_text(buf, sizeof(buf), 3), "3.00");
}

static void test_json_values(void **state)
{
	char exp[2048];

	if (python_missing("test_json_values"))
		return;
	build_result(&res);
	/*
	 * Latencies are compared exactly with what the histogram reports (the printer must
	 * not lose digits) and, separately, loosely with the truth (the 1% the histogram
	 * promises), so a wrong percentile argument would show too.
	 */
	assert_true(bp_hist_percentile(&res.hist, 50) > 495000 &&
		    bp_hist_percentile(&res.hist, 50) < 505000);
	snprintf(exp, sizeof(exp),
		 "{\"tps\": 100000.5, \"transactions\": 1000000, \"seconds\": 9.999995,"
		 " \"latency_samples\": 1000,"
		 " \"latency_us.min\": 1, \"latency_us.max\": 1000, \"latency_us.mean\": 500.5,"
		 " \"latency_us.p50\": %.17g, \"latency_us.p99\": %.17g, \"latency_us.p99_99\": %.17g,"
		 " \"settings.protocol\": \"tcp\", \"settings.threads\": 2, \"settings.flows\": 4,"
		 " \"settings.request_size\": 64, \"settings.response_size\": 128,"
		 " \"settings.duration_s\": 10, \"settings.transactions_target\": 0,"
		 " \"settings.warmup_s\": 1.5, \"settings.cpus\": [0, 1], \"settings.priority\": null,"
		 " \"settings.port\": 12867, \"settings.server_host\": \"server.example\","
		 " \"settings.server_address\": \"192.0.2.7:12867\","
		 " \"settings.client_mode\": \"epoll:napi,usecs=64,budget=8\","
		 " \"settings.server_mode\": \"epoll:napi,usecs=64,budget=8,prefer\","
		 " \"kernel\": \"6.18.0 \\\"test\\\" \\\\\\t\", \"sysctls.busy_poll\": 50,"
		 " \"sysctls.busy_read\": 0,"
		 " \"client.valid\": true, \"client.threads\": 2, \"client.transactions\": 1150000,"
		 " \"client.syscalls_per_tx\": 3, \"client.utime_us_per_tx\": 0.5,"
		 " \"client.stime_us_per_tx\": 2.25, \"client.cpu_us_per_tx\": 2.75,"
		 " \"client.context_switches_per_tx\": 0.00025, \"client.empty_polls_per_tx\": 7,"
		 " \"client.busy_poll_rx_per_tx\": 2, \"client.napi_ids\": [],"
		 " \"client.cpu_util_pct.user\": 5, \"client.cpu_util_pct.system\": 22.5,"
		 " \"client.cpu_util_pct.total\": 27.5, \"open_loop\": null, \"settings.rate\": null,"
		 " \"settings.arrivals\": null,"
		 " \"server.mode\": \"epoll:napi,usecs=64,budget=8,prefer\","
		 " \"server.napi_ids\": [8193, 8194], \"server.syscalls_per_tx\": 2,"
		 " \"server.interval_ns\": 10000100000, \"server.helper_cpu_us\": 5000,"
		 " \"server.cpu_threads\": \"rr-server-0(1234) + iou-sqp-1234(1240)\","
		 " \"udp_lost\": null, \"interrupted\": false}",
		 bp_hist_percentile(&res.hist, 50) / 1e3, bp_hist_percentile(&res.hist, 99) / 1e3,
		 bp_hist_percentile(&res.hist, 99.99) / 1e3);
	assert_int_equal(check_with_python(&res, exp, false), 0);
}

/* A check that must fail: proves the python side is not vacuous. */
static void test_json_check_can_fail(void **state)
{
	if (python_missing("test_json_check_can_fail"))
		return;
	build_result(&res);
	assert_int_not_equal(check_with_python(&res, "{\"tps\": 1}", true), 0);
	assert_int_not_equal(check_with_python(&res, "{\"client.syscalls_per_tx\": 4}", true), 0);
}

static void test_json_server_missing(void **state)
{
	if (python_missing("test_json_server_missing"))
		return;
	build_result(&res);
	res.server.valid = false; /* e.g. the control connection failed: no server stats */
	res.opts.udp = true;
	res.opts.request_size = 8;
	res.udp_lost = 3;
	res.interrupted = true;
	res.opts.priority = 6;
	res.opts.transactions = 5000;
	res.opts.duration_s = 0;
	res.sysctl_busy_read = -1; /* unreadable */
	/* A canonical mode longer than the evidence's mode holds: the settings keep all of it. */
	snprintf(res.opts.mode_text, sizeof(res.opts.mode_text), "%s",
		 "epoll:suspend,usecs=2147483647,budget=65535,defer=2147483647,"
		 "gro-flush=9223372036854775807,suspend=9223372036854775807");
	memcpy(res.client.mode, res.opts.mode_text, sizeof(res.client.mode) - 1); /* cut, as the wire does */
	res.client.mode[sizeof(res.client.mode) - 1] = 0;
	assert_int_equal(check_with_python(&res,
		"{\"server\": null, \"settings.server_mode\": null, \"settings.protocol\": \"udp\","
		" \"udp_lost\": 3, \"interrupted\": true, \"settings.priority\": 6,"
		" \"settings.transactions_target\": 5000, \"settings.duration_s\": 0,"
		" \"sysctls.busy_read\": null, \"sysctls.busy_poll\": 50,"
		" \"settings.client_mode\": \"epoll:suspend,usecs=2147483647,budget=65535,"
		"defer=2147483647,gro-flush=9223372036854775807,suspend=9223372036854775807\"}",
		false), 0);
}

static void test_json_hostile_strings(void **state)
{
	if (python_missing("test_json_hostile_strings"))
		return;
	build_result(&res);
	/* What a broken or hostile server could send as its mode: still valid json. */
	memset(res.server.mode, 0, sizeof(res.server.mode));
	{
		static const char hostile[] = "a\x01\"b\\\n\xff\xc3\xa9\xe2\x82";

		memcpy(res.server.mode, hostile, sizeof(hostile) - 1);
	}
	memset(res.client.mode, 'x', sizeof(res.client.mode)); /* no NUL at all */
	memset(res.opts.mode_text, 0, sizeof(res.opts.mode_text)); /* so settings use it too */
	memset(res.kernel, 'k', sizeof(res.kernel));
	/* no samples: latency is null, not zeros */
	bp_hist_init(&res.hist);
	res.transactions = 0;
	assert_int_equal(check_with_python(&res,
		"{\"server.mode\": \"a\\u0001\\\"b\\\\\\n\\ufffd\u00e9\\ufffd\\ufffd\","
		" \"latency_us\": null, \"latency_samples\": 0, \"client.syscalls_per_tx\": null}", false), 0);
	{
		char *json = render(&res, TOOL_FORMAT_JSON);
		char want[sizeof(res.client.mode) + 3];

		/* the unterminated client mode is cut at its array, not read past it */
		want[0] = '"';
		memset(want + 1, 'x', sizeof(res.client.mode));
		want[sizeof(res.client.mode) + 1] = '"';
		want[sizeof(res.client.mode) + 2] = 0;
		assert_non_null(strstr(json, want));
		free(json);
	}
}

static void test_csv_shape(void **state)
{
	char *csv, *header, *hdr_only = NULL;
	const char *line2, *end;
	size_t hlen = 0;
	FILE *m;
	int n1, n2;

	build_result(&res);
	csv = render(&res, TOOL_FORMAT_CSV);
	n1 = csv_fields(csv, &line2);
	n2 = csv_fields(line2, &end);
	assert_true(n1 > 40);
	assert_int_equal(n1, n2);
	assert_string_equal(end, ""); /* exactly two lines */
	/* the comma-laden modes are quoted */
	assert_non_null(strstr(line2, "\"epoll:napi,usecs=64,budget=8\""));
	assert_non_null(strstr(csv, "client.syscalls_per_tx"));

	/* rr_print_csv_header is exactly the first line, for any result (compare relies on it) */
	m = open_memstream(&hdr_only, &hlen);
	rr_print_csv_header(m);
	fclose(m);
	header = strndup(csv, (size_t)(line2 - csv));
	assert_string_equal(header, hdr_only);
	free(header);
	free(csv);

	res.server.valid = false;
	res.opts.udp = true;
	bp_hist_init(&res.hist);
	csv = render(&res, TOOL_FORMAT_CSV);
	assert_int_equal(strncmp(csv, hdr_only, hlen), 0);
	n1 = csv_fields(csv, &line2);
	n2 = csv_fields(line2, &end);
	assert_int_equal(n1, n2);
	free(csv);
	free(hdr_only);
}

/* row_is - the table row LABEL holds the client's and the server's values c and s. */
static const char *row_is(const char *t, const char *label, const char *c, const char *s)
{
	char want[160];

	snprintf(want, sizeof(want), "  %-26s %16s %16s\n", label, c, s);
	return strstr(t, want);
}

/* an open loop's figures: json and csv agree, the table says what the rates were */
static void test_open_loop(void **state)
{
	char *t;

	build_result(&res);
	res.opts.rate = 50000;
	res.opts.arrivals = RR_ARRIVALS_FIXED;
	res.max_outstanding = 1000;
	res.outstanding_peak = 12;
	res.queued = 40;
	res.late = 7;
	bp_hist_init(&res.hist_send);
	bp_hist_init(&res.hist_lag);
	for (uint64_t us = 1; us <= 1000; us++) {
		bp_hist_record(&res.hist_send, 2000);
		bp_hist_record(&res.hist_lag, us < 1000 ? 100 : 3000000);
	}
	assert_int_equal(check_with_python(&res,
		"{\"settings.rate\": 50000, \"settings.arrivals\": \"fixed\", \"open_loop.offered_rate\": 50000,"
		" \"open_loop.achieved_rate\": 100000.5, \"open_loop.max_outstanding\": 1000,"
		" \"open_loop.outstanding_peak\": 12, \"open_loop.queued\": 40, \"open_loop.late\": 7,"
		" \"open_loop.late_after_us\": 10, \"open_loop.latency_from_send_us.min\": 2,"
		" \"open_loop.latency_from_send_us.max\": 2, \"open_loop.send_lag_us.max\": 3000,"
		" \"latency_us.max\": 1000}", false), 0);
	t = render(&res, TOOL_FORMAT_TABLE);
	assert_non_null(strstr(t, "open loop       offered 50000.0/s (fixed), achieved 100000.5/s\n"));
	assert_non_null(strstr(t, "from send us    min 2.0 "));
	assert_non_null(strstr(t, "send lag us     P50 0.1  P99 0.1  max 3000.0"));
	assert_non_null(strstr(t, "40 queued behind their flow's answer (0.00%), 7 late"));
	assert_non_null(strstr(t, "at most 12 outstanding (limit 1000)"));
	free(t);
	res.opts.rate = 0;
	t = render(&res, TOOL_FORMAT_TABLE);
	assert_null(strstr(t, "from send"));
	free(t);
}

static void test_table(void **state)
{
	char *t;

	build_result(&res);
	t = render(&res, TOOL_FORMAT_TABLE);
	assert_non_null(strstr(t, "transactions/s"));
	assert_non_null(strstr(t, "100000.5"));
	assert_non_null(strstr(t, "P99.99"));
	assert_non_null(strstr(t, "P50 "));
	assert_non_null(strstr(t, "max 1000.0"));
	assert_non_null(strstr(t, "min 1.0"));
	assert_non_null(strstr(t, "epoll:napi,usecs=64,budget=8,prefer")); /* server mode */
	assert_non_null(strstr(t, "8193,8194"));
	assert_non_null(strstr(t, "syscalls/tx"));
	assert_non_null(strstr(t, "3.00"));
	assert_non_null(strstr(t, "0.00025")); /* tiny but not zero: not shown as 0.00 */
	assert_non_null(strstr(t, "2.25"));
	assert_non_null(strstr(t, "BusyPollRxPackets/tx"));
	assert_non_null(strstr(t, "NET_RX/tx"));
	assert_non_null(strstr(t, "TCP"));
	assert_non_null(strstr(t, "6.18.0"));
	assert_null(strstr(t, "interrupted"));
	assert_null(strstr(t, "UDP lost"));
	assert_non_null(strstr(t, "busy_poll 50, busy_read 0"));
	/* the output says which threads the CPU figures count, each one's utilisation */
	assert_non_null(strstr(t, "the server's rr-server-0(1234) 10.0% (user 2.5%, system 7.5%) + "
				  "iou-sqp-1234(1240) 5.0% (user 0.0%, system 5.0%)"));
	assert_non_null(row_is(t, "CPU % of one CPU", "27.5", "20.0"));
	assert_non_null(row_is(t, "  user %", "5.0", "4.0"));
	assert_non_null(row_is(t, "  system %", "22.5", "16.0"));
	assert_null(strstr(t, "open loop")); /* closed loop */
	assert_null(strchr(t, '\t')); /* the kernel string's tab is not sent to the terminal */
	free(t);

	res.server.valid = false;
	res.interrupted = true;
	res.opts.udp = true;
	res.udp_lost = 42;
	res.sysctl_busy_poll = -1;
	t = render(&res, TOOL_FORMAT_TABLE);
	assert_non_null(strstr(t, "busy_poll unknown (not readable from this network namespace), busy_read 0"));
	assert_non_null(strstr(t, "interrupted: partial results"));
	/* said before the figures it qualifies */
	assert_true(strstr(t, "interrupted: partial results") < strstr(t, "transactions/s"));
	assert_non_null(strstr(t, "UDP lost        42"));
	assert_null(strstr(t, "8193")); /* the server column is "-" */
	assert_null(strstr(t, "prefer"));
	{
		const char *row = strstr(t, "syscalls/tx");

		assert_non_null(row);
		row = strchr(row, '\n');
		assert_non_null(row);
		assert_true(row[-1] == '-'); /* the server's value on that row */
	}
	free(t);
}

/*
 * What issue 12 made the output say: the server's own CPUs (never the client's), a
 * failure above the figures it cut short (and in json), a busy-poll mode with no
 * NAPI to poll, and nothing measured said as such (no table of zeros).
 */
static void test_truthful(void **state)
{
	char *t, exp[512];

	build_result(&res);
	assert_int_equal(bp_mode_parse(res.opts.mode_text, &res.opts.mode, NULL, 0), 0);
	res.server_cpus[0] = 3;
	res.nserver_cpus = 1;
	snprintf(res.failed, sizeof(res.failed), "server 192.0.2.7:12867 stopped answering: no response for 5 s");
	t = render(&res, TOOL_FORMAT_TABLE);
	/* client 0,1 on its line, server 3 on its own */
	assert_non_null(strstr(t, "server mode   epoll:napi,usecs=64,budget=8,prefer"));
	assert_non_null(strstr(strstr(t, "server mode"), "3"));
	assert_null(strstr(strstr(t, "server mode"), "0,1\n  kernel"));
	assert_non_null(strstr(t, "failed: server 192.0.2.7:12867 stopped answering: no response for 5 s; partial results"));
	assert_true(strstr(t, "failed: ") < strstr(t, "transactions/s"));
	/* the client had no NAPI id in a busy-poll mode: said */
	assert_non_null(strstr(t, "note: epoll:napi,usecs=64,budget=8 asks the kernel to busy poll NAPI"));
	free(t);
	snprintf(exp, sizeof(exp),
		 "{\"settings.server_cpus\": [3], \"settings.cpus\": [0, 1],"
		 " \"failed\": \"server 192.0.2.7:12867 stopped answering: no response for 5 s\"}");
	assert_int_equal(check_with_python(&res, exp, false), 0);

	/* flows with a NAPI id: no note */
	res.client.napi_ids[0] = 8193;
	res.client.n_napi_ids = 1;
	res.failed[0] = 0;
	t = render(&res, TOOL_FORMAT_TABLE);
	assert_null(strstr(t, "note:"));
	assert_null(strstr(t, "failed:"));
	free(t);
	assert_int_equal(check_with_python(&res, "{\"failed\": null, \"note\": null}", false), 0);

	/* Ctrl-C in the warm-up: no figures, no zeros */
	res.client.valid = false;
	res.server.valid = false;
	res.interrupted = true;
	res.transactions = 0;
	res.seconds = 0;
	t = render(&res, TOOL_FORMAT_TABLE);
	assert_non_null(strstr(t, "interrupted before anything was measured"));
	assert_null(strstr(t, "transactions/s"));
	assert_null(strstr(t, "syscalls/tx"));
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_per_tx),
		cmocka_unit_test(test_json_values),
		cmocka_unit_test(test_json_check_can_fail),
		cmocka_unit_test(test_json_server_missing),
		cmocka_unit_test(test_json_hostile_strings),
		cmocka_unit_test(test_csv_shape),
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_open_loop),
		cmocka_unit_test(test_truthful),
	};

	return bpt_unit_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
