/* SPDX-License-Identifier: MIT */
/*
 * Readers for the kernel's own counters. They refuse to guess: a section whose
 * value line is missing, shorter than its header or cut off at end of file (every
 * /proc line ends in '\n') is -EIO, never a partial number.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <busypoll/kstats.h>

#include "base/error.h"

/*
 * Per-thread, because /proc/self/net is the main thread's network namespace while
 * a thread that called setns() wants its own (the test bed does exactly that).
 */
#define NETSTAT_PATH "/proc/thread-self/net/netstat"
#define SOFTIRQS_PATH "/proc/softirqs"

/*
 * A line read whole. Returns its length without the '\n', -1 at end of file;
 * *complete says whether the '\n' was there.
 */
static ssize_t read_line(FILE *f, char **buf, size_t *cap, bool *complete)
{
	ssize_t n = getline(buf, cap, f);

	if (n < 0)
		return -1;
	*complete = n > 0 && (*buf)[n - 1] == '\n';
	if (*complete)
		(*buf)[--n] = '\0';
	return n;
}

/* "Section: rest": the rest if the line's prefix is section, else NULL. */
static char *after_prefix(char *line, const char *section)
{
	size_t n = strlen(section);

	if (strncmp(line, section, n) || line[n] != ':')
		return NULL;
	return line + n + 1;
}

/* Index of token name in a space-separated list, -1 when absent. */
static int token_index(char *list, const char *name)
{
	char *save = NULL;
	int i = 0;

	for (char *t = strtok_r(list, " \t", &save); t; t = strtok_r(NULL, " \t", &save), i++)
		if (!strcmp(t, name))
			return i;
	return -1;
}

static int count_tokens(const char *s)
{
	int n = 0;

	while (*s) {
		while (*s == ' ' || *s == '\t')
			s++;
		if (!*s)
			break;
		n++;
		while (*s && *s != ' ' && *s != '\t')
			s++;
	}
	return n;
}

/* An unsigned decimal token; -ERANGE for negatives and overflow, -EIO for junk. */
static int parse_u64(const char *tok, uint64_t *v)
{
	char *end;

	if (*tok == '-')
		return -ERANGE;
	if (*tok < '0' || *tok > '9')
		return -EIO;
	errno = 0;
	*v = strtoull(tok, &end, 10);
	if (errno == ERANGE)
		return -ERANGE;
	if (*end && *end != ' ' && *end != '\t')
		return -EIO;
	return 0;
}

/* The idx-th token of s (0-based), or NULL. */
static const char *nth_token(const char *s, int idx)
{
	for (int i = 0;; i++) {
		while (*s == ' ' || *s == '\t')
			s++;
		if (!*s)
			return NULL;
		if (i == idx)
			return s;
		while (*s && *s != ' ' && *s != '\t')
			s++;
	}
}

static FILE *open_proc(const char *path, int *err)
{
	FILE *f = fopen(path, "re");

	if (!f)
		*err = bp_err_set(-errno, "open(%s): %s", path, strerror(errno));
	return f;
}

int bp_read_netstat_field(const char *path, const char *section, const char *field,
			  uint64_t *value)
{
	char *line = NULL;
	size_t cap = 0;
	bool complete, seen_section = false;
	int err = 0;
	FILE *f = open_proc(path, &err);

	if (!f)
		return err;
	/* Lines come in pairs, names then values, both with the section's prefix. */
	for (;;) {
		ssize_t n = read_line(f, &line, &cap, &complete);
		char *rest;
		int idx, ntok_names, ntok_vals;

		if (n < 0) {
			err = seen_section
				? bp_err_set(-ENOENT, "%s: %s has no field %s", path, section, field)
				: bp_err_set(-ENOENT, "%s: no section %s", path, section);
			break;
		}
		rest = after_prefix(line, section);
		if (!rest)
			continue;
		seen_section = true;
		ntok_names = count_tokens(rest);
		idx = token_index(rest, field); /* cuts line up: count first */
		n = read_line(f, &line, &cap, &complete);
		rest = n < 0 ? NULL : after_prefix(line, section);
		if (!rest || !complete) {
			if (idx < 0)
				continue; /* not our field: a later pair might still have it */
			err = bp_err_set(-EIO, "%s: %s value line is %s", path, section,
					 !rest ? "missing" : "cut off (truncated file)");
			break;
		}
		ntok_vals = count_tokens(rest);
		if (idx < 0)
			continue;
		if (ntok_vals != ntok_names) {
			err = bp_err_set(-EIO, "%s: %s has %d names but %d values", path, section,
					 ntok_names, ntok_vals);
			break;
		}
		err = parse_u64(nth_token(rest, idx), value);
		if (err)
			bp_err_set(err, "%s: %s %s is not an unsigned number", path, section, field);
		break;
	}
	free(line);
	fclose(f);
	return err;
}

int bp_read_softirq(const char *path, const char *row, uint64_t *value)
{
	char *line = NULL;
	size_t cap = 0;
	bool complete;
	int ncpu, err = 0;
	FILE *f = open_proc(path, &err);

	if (!f)
		return err;
	/* header: "                    CPU0       CPU1       " */
	if (read_line(f, &line, &cap, &complete) < 0 || !complete ||
	    (ncpu = count_tokens(line)) == 0 || strncmp(nth_token(line, 0), "CPU", 3)) {
		err = bp_err_set(-EIO, "%s: no CPU header line", path);
		goto out;
	}
	for (;;) {
		const char *p;
		uint64_t sum = 0;

		if (read_line(f, &line, &cap, &complete) < 0) {
			err = bp_err_set(-ENOENT, "%s: no row %s", path, row);
			break;
		}
		p = line + strspn(line, " \t");
		if (!(p = after_prefix((char *)p, row)))
			continue;
		if (!complete || count_tokens(p) != ncpu) {
			err = bp_err_set(-EIO, "%s: row %s has %d values for %d CPUs%s", path, row,
					 count_tokens(p), ncpu, complete ? "" : " (truncated file)");
			break;
		}
		for (int i = 0; i < ncpu; i++) {
			uint64_t v;
			if ((err = parse_u64(nth_token(p, i), &v))) {
				bp_err_set(err, "%s: row %s value %d is not an unsigned number", path, row, i);
				goto out;
			}
			sum += v;
		}
		*value = sum;
		break;
	}
out:
	free(line);
	fclose(f);
	return err;
}

static uint64_t tv_us(struct timeval tv)
{
	return (uint64_t)tv.tv_sec * 1000000u + (uint64_t)tv.tv_usec;
}

int bp_kstats_read(struct bp_kstats *s)
{
	struct rusage ru;
	int rc, err = 0;

	memset(s, 0, sizeof(*s));
	/*
	 * Read everything even after a failure, so one missing counter costs only
	 * itself; the error returned is the last one, whose message bp_last_error() has.
	 */
	rc = bp_read_netstat_field(NETSTAT_PATH, "TcpExt", "BusyPollRxPackets", &s->busy_poll_rx);
	if (rc)
		err = rc;
	rc = bp_read_softirq(SOFTIRQS_PATH, "NET_RX", &s->net_rx);
	if (rc)
		err = rc;
	if (getrusage(RUSAGE_SELF, &ru) < 0)
		return bp_err_sys("getrusage", -errno);
	s->utime_us = tv_us(ru.ru_utime);
	s->stime_us = tv_us(ru.ru_stime);
	s->nvcsw = (uint64_t)ru.ru_nvcsw;
	s->nivcsw = (uint64_t)ru.ru_nivcsw;
	return err;
}

void bp_kstats_delta(const struct bp_kstats *after, const struct bp_kstats *before,
		     struct bp_kstats *delta)
{
	/* by value first: delta may be after or before */
	struct bp_kstats d = {
		.busy_poll_rx = after->busy_poll_rx - before->busy_poll_rx,
		.net_rx = after->net_rx - before->net_rx,
		.utime_us = after->utime_us - before->utime_us,
		.stime_us = after->stime_us - before->stime_us,
		.nvcsw = after->nvcsw - before->nvcsw,
		.nivcsw = after->nivcsw - before->nivcsw,
	};
	*delta = d;
}

/*
 * The kernel's per-thread CPU clock (CPUCLOCK_SCHED of a thread, as
 * MAKE_THREAD_CPUCLOCK builds it in the kernel's linux/include/linux/posix-timers.h):
 * any thread of our own thread group, io_uring's kernel threads included, at ns
 * resolution.
 */
#define THREAD_CPUCLOCK(tid) ((clockid_t)((~(unsigned)(tid) << 3) | 2 | 4))

int bp_thread_cpu_ns(int tid, uint64_t *ns)
{
	struct timespec ts;

	if (tid <= 0)
		return bp_err_set(-EINVAL, "thread cpu time: bad tid %d", tid);
	if (clock_gettime(THREAD_CPUCLOCK(tid), &ts) < 0) {
		/* EINVAL: no such thread in this process any more */
		int err = errno == EINVAL ? -ESRCH : -errno;

		return bp_err_set(err, "clock_gettime(thread %d cpu clock): %s", tid, strerror(-err));
	}
	*ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	return 0;
}
