/* SPDX-License-Identifier: MIT */
/*
 * The agent's session (agent/session.c) without a client: each request's refusal
 * is one "error ERRNO reason" reply and the session goes on; the requests that
 * need no privilege answer; bye ends it; a change that fails leaves no journal
 * behind once the session ends. (The changes themselves, journalled and restored,
 * are tests/integration/test_agent_journal.c.)
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "bpt_agent.h"

#include "tools/agent/session.h"

/* bp_tool_error lives in main.c, outside the tools library. */
void bp_tool_error(const char *sub, const char *fmt, ...)
{
}

static char dir[64], reply[SESSION_REPLY_MAX];
static struct agent_cfg cfg;
static struct session s;

static const char *req(const char *text, bool *end)
{
	size_t n = session_handle(&s, text, strlen(text), reply, end);

	assert_true(n < sizeof(reply));
	reply[n] = '\0';
	return reply;
}

#define EXPECT(text, want)                                                          \
	do {                                                                        \
		bool end_;                                                          \
		const char *r_ = req(text, &end_);                                  \
		if (strncmp(r_, want, strlen(want)))                                \
			fail_msg("'%s': got '%s', wanted '%s...'", text, r_, want); \
		assert_false(end_);                                                 \
	} while (0)

static void test_refusals(void **state)
{
	char big[2048];

	session_start(&s, &cfg, "unit");
	EXPECT("", "error 22 an empty request");
	EXPECT("frobnicate now", "error 22 unknown request (hello, path, napi-get");
	EXPECT("path", "error 22 unknown request or missing argument");
	EXPECT("napi-get x", "error 22 not a NAPI id");
	EXPECT("napi-get 0", "error 22 not a NAPI id");
	EXPECT("napi-set 300", "error 22 napi-set ID key=value[,key=value]");
	EXPECT("napi-set 300 irq=5", "error 22 irq is read-only");
	EXPECT("napi-set 300 defer-hard-irqs=1,,threaded=1", "error 22 'defer-hard-irqs=1,,threaded=1': an empty item");
	EXPECT("knob-set eth0", "error 22 knob-get DEV KNOB, knob-set DEV KNOB=VALUE");
	EXPECT("knob-set eth0 mtu=9000", "error 22 unknown");
	EXPECT("coalesce-set eth0 rx-usec=1", "error 22 unknown coalescing key 'rx-usec'");
	EXPECT("channels-set eth0 queues=4", "error 22 unknown channel kind 'queues'");
	EXPECT("coalesce-get nosuch0", "error 19 coalesce-get nosuch0: no such device in this network namespace");
	EXPECT("path nosuch0", "error 19 path nosuch0: no such device in this network namespace");
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	EXPECT(big, "error 22 a request is one line of text, under 1024 bytes");
	{
		bool end;
		size_t n = session_handle(&s, "hel\0lo", 6, reply, &end);

		reply[n] = '\0';
		assert_string_equal(reply, "error 22 a request is one line of text, under 1024 bytes");
	}
	/* still serving after all of it */
	EXPECT("hello", "ok busypoll-agent 1 pid=");
	assert_int_equal(s.changes, 0);
	assert_int_equal(session_end(&s, "test"), 0);
}

static void test_hello_and_bye(void **state)
{
	bool end;

	snprintf(cfg.cpus_text, sizeof(cfg.cpus_text), "1");
	session_start(&s, &cfg, "unit");
	{
		char want[64];

		snprintf(want, sizeof(want), "ok busypoll-agent 1 pid=%d cpus=1", (int)getpid());
		assert_string_equal(req("hello", &end), want);
	}
	assert_string_equal(req("bye", &end), "ok restored 0");
	assert_true(end);
	assert_true(s.ended);
	assert_int_equal(session_end(&s, "again"), 0); /* idempotent */
	cfg.cpus_text[0] = '\0';
}

/* A change that fails at its first step still leaves no journal once the session ends. */
static void test_failed_change_leaves_nothing(void **state)
{
	char cmd[160];
	bool end;

	session_start(&s, &cfg, "unit");
	req("napi-set 4294967295 defer-hard-irqs=1", &end);
	assert_non_null(strstr(reply, "error "));
	assert_int_equal(s.changes, 0);
	session_end(&s, "test");
	snprintf(cmd, sizeof(cmd), "ls '%s'/*.journal >/dev/null 2>&1", dir);
	assert_int_not_equal(system(cmd), 0);
}

static int setup(void **state)
{
	bpt_tmpdir("test-session", dir, sizeof(dir));
	cfg.state_dir = dir;
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_hello_and_bye),
		cmocka_unit_test(test_failed_change_leaves_nothing),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
