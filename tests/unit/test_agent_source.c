/* SPDX-License-Identifier: MIT */
/*
 * The agent's connection sources and its refusal log (src/tools/agent/source.h):
 * an IPv4 address is a source, an IPv4-mapped IPv6 address the same one, an IPv6
 * address its /64; the refusal log writes the first refusal of a source in an
 * interval, sums the rest at the interval's end, caps the lines of an interval, and
 * loses no refusal from its counts (every one is a line, in a summary, or in the
 * "suppressed" line).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <sodium.h>

#include "tools/agent/source.h"

/* The source of ip (IPv6 when it has a ':'), port 1. */
static struct src src_at(const char *ip)
{
	struct sockaddr_storage ss = { 0 };
	struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
	bool six = strchr(ip, ':');
	struct src s;

	ss.ss_family = six ? AF_INET6 : AF_INET;
	a4->sin_port = htons(1); /* sin6_port is at the same place */
	assert_int_equal(inet_pton(ss.ss_family, ip, six ? (void *)&a6->sin6_addr : (void *)&a4->sin_addr), 1);
	src_of((struct sockaddr *)&ss, &s);
	return s;
}

static void test_sources(void **state)
{
	struct src a = src_at("10.0.0.1"), b = src_at("10.0.0.2"), m = src_at("::ffff:10.0.0.1");
	struct src x = src_at("2001:db8:1:2::1"), y = src_at("2001:db8:1:2:ffff::9"), z = src_at("2001:db8:1:3::1");

	assert_string_equal(a.text, "10.0.0.1");
	assert_false(src_same(&a, &b));
	assert_true(src_same(&a, &m));
	assert_string_equal(m.text, "10.0.0.1");
	assert_true(src_same(&x, &y)); /* one /64 */
	assert_false(src_same(&x, &z));
	assert_string_equal(x.text, "2001:db8:1:2::/64");
	assert_true(src_hash(&a) == src_hash(&m));
	assert_true(src_hash(&a) != src_hash(&b));
}

/* Run fn with the log (stderr) going to a file; the file's text into out. */
static void logged(void (*fn)(struct src_log *), struct src_log *l, char *out, size_t cap)
{
	FILE *f = tmpfile();
	int saved = dup(STDERR_FILENO);
	size_t n;

	assert_non_null(f);
	assert_true(saved >= 0);
	assert_true(dup2(fileno(f), STDERR_FILENO) >= 0);
	fn(l);
	assert_true(dup2(saved, STDERR_FILENO) >= 0);
	close(saved);
	rewind(f);
	n = fread(out, 1, cap - 1, f);
	out[n] = '\0';
	fclose(f);
}

/* Every refusal the log's lines account for: 1 a line, N a summary's, N the suppressed line's. */
static unsigned long accounted(const char *log, int *lines)
{
	unsigned long sum = 0, n;
	const char *p = log;
	char line[512], *q;

	*lines = 0;
	while (*p) {
		const char *eol = strchr(p, '\n');

		assert_non_null(eol);
		snprintf(line, sizeof(line), "%.*s", (int)(eol - p), p);
		(*lines)++;
		if (strstr(line, ": refused: "))
			sum++;
		else if ((q = strstr(line, ": refused ")) && sscanf(q, ": refused %lu more", &n) == 1)
			sum += n;
		else if (strstr(line, "sources suppressed") && sscanf(line, "busypoll agent: %lu more", &n) == 1)
			sum += n;
		else
			fail_msg("a line that accounts for nothing: %s", line);
		p = eol + 1;
	}
	return sum;
}

static void one_source(struct src_log *l)
{
	struct src a = src_at("10.0.0.1");

	for (int i = 0; i < 5; i++)
		src_log_refused(l, &a, "10.0.0.1:4000", "stalled");
	src_log_flush(l);
}

static void many_sources(struct src_log *l)
{
	for (int i = 0; i < 30; i++) {
		char ip[32];
		struct src s;

		snprintf(ip, sizeof(ip), "10.1.0.%d", i + 1);
		s = src_at(ip);
		for (int k = 0; k < 3; k++)
			src_log_refused(l, &s, ip, "garbage");
	}
	src_log_flush(l);
}

static void test_refusal_log(void **state)
{
	static struct src_log l;
	char out[8192];
	int lines;

	logged(one_source, &l, out, sizeof(out));
	assert_string_equal(out, "busypoll agent: 10.0.0.1:4000: refused: stalled\n"
			    "busypoll agent: 10.0.0.1: refused 4 more connection(s) in the last 10 s (the last: "
			    "stalled)\n");
	/* the next interval starts afresh */
	logged(one_source, &l, out, sizeof(out));
	assert_non_null(strstr(out, "refused: stalled\n"));
	memset(&l, 0, sizeof(l));
	logged(many_sources, &l, out, sizeof(out));
	if (accounted(out, &lines) != 90)
		fail_msg("%lu refusals accounted for, not 90:\n%s", accounted(out, &lines), out);
	assert_true(lines <= 2 * SRC_LOG_LINES + 1);
	assert_non_null(strstr(out, "sources suppressed in the last 10 s"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sources),
		cmocka_unit_test(test_refusal_log),
	};

	if (sodium_init() < 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
