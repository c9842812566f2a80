/* SPDX-License-Identifier: MIT */
/*
 * The subcommands' skeleton (tools/common/cmd.c): the one table from error to
 * exit status, and docs/cli.md listing exactly that table; bp_tool_error's one
 * line through a sink; the host context read from a fake root (a missing or
 * garbled sysctl is unknown, printed null and "unknown", never -1) and from
 * this host (hostname and kernel known).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "bpt_agent.h"

#include "tools/common/cmd.h"

/* Every errno of the table is bad input, in either sign; 0 is done; the rest a failed run. */
static void test_exit_table(void **state)
{
	static const int runs[] = { EIO, ETIMEDOUT, ECONNREFUSED, ECONNRESET, EPIPE, ENOMEM, EPROTO, EAGAIN };

	(void)state;
	assert_true(bp_n_usage_errnos >= 9);
	assert_int_equal(bp_exit_for(0), BP_EXIT_OK);
	for (size_t i = 0; i < bp_n_usage_errnos; i++) {
		const struct bp_usage_errno *u = &bp_usage_errnos[i];

		assert_int_equal(bp_exit_for(-u->err), BP_EXIT_USAGE);
		assert_int_equal(bp_exit_for(u->err), BP_EXIT_USAGE);
		assert_true(u->name[0] == 'E' && u->why[0]);
		for (size_t j = 0; j < i; j++)
			if (bp_usage_errnos[j].err == u->err)
				fail_msg("%s is in the table twice", u->name);
	}
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++)
		if (bp_exit_for(-runs[i]) != BP_EXIT_FAIL)
			fail_msg("%s: exit %d, want %d (a failed run)", strerror(runs[i]), bp_exit_for(-runs[i]),
				 BP_EXIT_FAIL);
}

/* slurp - a whole file, NUL-terminated; fails the test when it cannot be read. */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "re");
	char *buf;
	long n;

	if (!f)
		fail_msg("cannot read %s: %s", path, strerror(errno));
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, (size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	return buf;
}

/* docs/cli.md's errno table: a row per entry of the table, and no row the table lacks. */
static void test_exit_table_documented(void **state)
{
	char *doc = slurp(BP_TEST_DATA "/../../../docs/cli.md"), row[64];
	const char *p;
	int rows = 0;

	(void)state;
	for (size_t i = 0; i < bp_n_usage_errnos; i++) {
		snprintf(row, sizeof(row), "| `%s` |", bp_usage_errnos[i].name);
		if (!strstr(doc, row))
			fail_msg("docs/cli.md has no row %s: list it with the exit statuses", row);
	}
	for (p = doc; (p = strstr(p, "\n| `E")); p++)
		rows++;
	if (rows != (int)bp_n_usage_errnos)
		fail_msg("docs/cli.md lists %d errnos, cmd.c's table %zu", rows, bp_n_usage_errnos);
	free(doc);
}

static char lines[4][1200];
static int nlines;

static void keep(const char *line)
{
	if (nlines < 4)
		snprintf(lines[nlines++], sizeof(lines[0]), "%s", line);
}

/* One line, prefixed with the subcommand, even when the message is too long to keep whole. */
static void test_tool_error_sink(void **state)
{
	char big[3000];

	(void)state;
	nlines = 0;
	bp_tool_error_sink(keep);
	bp_tool_error("rr", "--port %d: in use", 80);
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	bp_tool_error("compare", "%s", big);
	bp_tool_error_sink(NULL);
	assert_int_equal(nlines, 2);
	assert_string_equal(lines[0], "busypoll rr: --port 80: in use");
	assert_int_equal(strncmp(lines[1], "busypoll compare: xxx", 21), 0);
	assert_null(strchr(lines[1], '\n'));
}

/* put - ROOT/REL with text, the directories on the way made. */
static void put(const char *root, const char *rel, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (char *s = path + strlen(root) + 1; (s = strchr(s, '/')); s++) {
		*s = 0;
		mkdir(path, 0700);
		*s = '/';
	}
	f = fopen(path, "we");
	if (!f)
		fail_msg("cannot write %s: %s", path, strerror(errno));
	fputs(text, f);
	fclose(f);
}

/* json - the host's fields as emitted, into buf. */
static void json(const struct bp_host *h, char *buf, size_t len)
{
	char *out = NULL;
	size_t n = 0;
	FILE *m = open_memstream(&out, &n);
	struct emit e = { .kind = EMIT_JSON, .out = m };

	assert_non_null(m);
	em_begin(&e, NULL, false);
	em_known_string(&e, "kernel", h->kernel, sizeof(h->kernel));
	em_known_int(&e, "busy_poll", h->busy_poll);
	em_known_int(&e, "busy_read", h->busy_read);
	em_end(&e);
	fclose(m);
	snprintf(buf, len, "%s", out);
	free(out);
}

/* A fake root: what is there is read, a missing or garbled file is unknown and prints as such. */
static void test_host_fake_root(void **state)
{
	char root[96], out[512], t[16];
	struct bp_host h;

	(void)state;
	bpt_tmpdir("cmd-host", root, sizeof(root));
	put(root, "proc/sys/kernel/hostname", "fakehost\n");
	put(root, "proc/sys/kernel/osrelease", "6.1.0-test\n");
	put(root, "proc/sys/net/core/busy_poll", "50\n");
	put(root, "sys/devices/system/cpu/online", "0-3,6\n");
	bp_host_read_at(&h, root);
	assert_string_equal(h.hostname, "fakehost");
	assert_string_equal(h.kernel, "6.1.0-test");
	assert_int_equal(h.busy_poll, 50);
	assert_int_equal(h.busy_read, BP_UNKNOWN); /* no such file */
	assert_int_equal(h.ncpus, 5);
	json(&h, out, sizeof(out));
	if (!strstr(out, "\"busy_poll\": 50") || !strstr(out, "\"busy_read\": null") || strstr(out, "-1"))
		fail_msg("an unknown sysctl must print null, not -1: %s", out);
	assert_string_equal(bp_known_text(h.busy_read, t, sizeof(t)), "unknown");
	assert_string_equal(bp_known_text(h.busy_poll, t, sizeof(t)), "50");

	put(root, "proc/sys/net/core/busy_poll", "fifty\n");
	put(root, "proc/sys/net/core/busy_read", "-1\n");
	put(root, "proc/sys/kernel/osrelease", "");
	bp_host_read_at(&h, root);
	assert_int_equal(h.busy_poll, BP_UNKNOWN);
	assert_int_equal(h.busy_read, BP_UNKNOWN);
	json(&h, out, sizeof(out));
	if (!strstr(out, "\"kernel\": null") || !strstr(out, "\"busy_poll\": null") || strstr(out, "-1"))
		fail_msg("an empty kernel and garbled sysctls must print null: %s", out);
}

/* This host: its name, kernel and CPUs are always readable; the sysctls are a number or unknown. */
static void test_host_here(void **state)
{
	struct bp_host h;

	(void)state;
	bp_host_read(&h);
	assert_true(h.hostname[0]);
	assert_true(h.kernel[0]);
	assert_true(h.ncpus >= 1);
	assert_true(h.busy_poll >= 0 || h.busy_poll == BP_UNKNOWN);
	assert_true(h.busy_read >= 0 || h.busy_read == BP_UNKNOWN);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exit_table),
		cmocka_unit_test(test_exit_table_documented),
		cmocka_unit_test(test_tool_error_sink),
		cmocka_unit_test(test_host_fake_root),
		cmocka_unit_test(test_host_here),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
