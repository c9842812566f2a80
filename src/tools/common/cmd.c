/* SPDX-License-Identifier: MIT */
/* The subcommands' skeleton: exit statuses, the one-line error, the host context (cmd.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <busypoll/net.h>

#include "tools/common/cmd.h"
#include "tools/common/values.h"

/*
 * Bad input, found when a run starts: what the user named, asked for or may not
 * use. Everything else a start or a run returns (a peer gone, a timeout, out of
 * memory, an I/O error) is a failed run, exit 1. docs/cli.md lists this table.
 */
const struct bp_usage_errno bp_usage_errnos[] = {
	{ EINVAL, "EINVAL", "a value, address or name that does not parse, or that the kernel refused" },
	{ EPERM, "EPERM", "a mode, priority or setting this process may not use (run it with sudo)" },
	{ EACCES, "EACCES", "a file, port or namespace this user may not use" },
	{ EOPNOTSUPP, "EOPNOTSUPP", "a wait mode or feature this kernel or build lacks" },
	{ EADDRINUSE, "EADDRINUSE", "a port another process listens on" },
	{ EADDRNOTAVAIL, "EADDRNOTAVAIL", "an address that is not on this host" },
	{ ENOENT, "ENOENT", "something named that does not exist (file, namespace, device, NAPI id)" },
	{ EISDIR, "EISDIR", "a directory where a file is named" },
	{ EEXIST, "EEXIST", "a file to create that already exists" },
	{ EBUSY, "EBUSY", "a device or namespace another user holds" },
	{ EMFILE, "EMFILE", "more connections than the descriptor limit (ulimit -n) allows" },
};
const size_t bp_n_usage_errnos = sizeof(bp_usage_errnos) / sizeof(bp_usage_errnos[0]);

int bp_exit_for(int err)
{
	if (!err)
		return BP_EXIT_OK;
	if (err < 0)
		err = -err;
	for (size_t i = 0; i < bp_n_usage_errnos; i++)
		if (bp_usage_errnos[i].err == err)
			return BP_EXIT_USAGE;
	return BP_EXIT_FAIL;
}

int bp_opts_exit(const char *sub, int ret, const char *err)
{
	if (ret == 1)
		return BP_EXIT_OK;
	bp_tool_error(sub, "%s", err);
	return BP_EXIT_USAGE;
}

static void (*error_sink)(const char *line);

void bp_tool_error_sink(void (*fn)(const char *line))
{
	error_sink = fn;
}

void bp_tool_error(const char *sub, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int n = snprintf(line, sizeof(line), "busypoll %s: ", sub);

	if (n < 0 || (size_t)n >= sizeof(line))
		n = 0;
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	va_end(ap);
	if (error_sink)
		error_sink(line);
	else
		fprintf(stderr, "%s\n", line);
}

/* read_line - the first line of ROOT/REL into buf without its newline; "" when unreadable. */
static void read_line(const char *root, const char *rel, char *buf, size_t len)
{
	char path[512];
	FILE *f;

	buf[0] = 0;
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "re");
	if (!f)
		return;
	if (!fgets(buf, (int)len, f))
		buf[0] = 0;
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
}

/* read_int - ROOT/REL as a non-negative int, BP_UNKNOWN when unreadable or not one. */
static int read_int(const char *root, const char *rel)
{
	char text[32], *end;
	long v;

	read_line(root, rel, text, sizeof(text));
	errno = 0;
	v = strtol(text, &end, 10);
	if (!text[0] || *end || errno || v < 0 || v > 1000000000L)
		return BP_UNKNOWN;
	return (int)v;
}

/* count_cpus - how many CPUs the list in ROOT/REL ("0-3,6") names, BP_UNKNOWN when unreadable. */
static int count_cpus(const char *root, const char *rel)
{
	static int cpus[4096];
	char text[512];
	int n;

	read_line(root, rel, text, sizeof(text));
	n = text[0] ? bp_parse_cpu_list(text, cpus, sizeof(cpus) / sizeof(cpus[0])) : -1;
	return n > 0 ? n : BP_UNKNOWN;
}

void bp_host_read_at(struct bp_host *h, const char *root)
{
	memset(h, 0, sizeof(*h));
	read_line(root, "proc/sys/kernel/hostname", h->hostname, sizeof(h->hostname));
	read_line(root, "proc/sys/kernel/osrelease", h->kernel, sizeof(h->kernel));
	h->busy_poll = read_int(root, "proc/sys/net/core/busy_poll");
	h->busy_read = read_int(root, "proc/sys/net/core/busy_read");
	h->ncpus = count_cpus(root, "sys/devices/system/cpu/online");
}

/* sysctl_why - why net.core.NAME could not be read (rc: tool_read_net_sysctl's), into the host's words. */
static void sysctl_why(struct bp_host *h, const char *name, int rc)
{
	if (h->sysctl_why[0])
		return;
	if (rc == -ENOENT)
		snprintf(h->sysctl_why, sizeof(h->sysctl_why), "net.core.%s is not in this network namespace, and "
			 "reading it in the first one needs CAP_SYS_ADMIN", name);
	else
		snprintf(h->sysctl_why, sizeof(h->sysctl_why), "net.core.%s cannot be read: %s", name,
			 rc ? strerror(-rc) : "not a number");
}

void bp_host_read(struct bp_host *h)
{
	int rc;

	bp_host_read_at(h, "");
	/* outside the first network namespace the sysctls are read there */
	if (h->busy_poll == BP_UNKNOWN && (rc = tool_read_net_sysctl("busy_poll", &h->busy_poll))) {
		h->busy_poll = BP_UNKNOWN;
		sysctl_why(h, "busy_poll", rc);
	}
	if (h->busy_read == BP_UNKNOWN && (rc = tool_read_net_sysctl("busy_read", &h->busy_read))) {
		h->busy_read = BP_UNKNOWN;
		sysctl_why(h, "busy_read", rc);
	}
}

const char *bp_known_text(int v, char *buf, size_t len)
{
	if (v == BP_UNKNOWN)
		snprintf(buf, len, "unknown");
	else
		snprintf(buf, len, "%d", v);
	return buf;
}

void em_known_int(struct emit *e, const char *key, int v)
{
	if (v == BP_UNKNOWN)
		em_null(e, key);
	else
		em_int(e, key, v);
}

void em_known_string(struct emit *e, const char *key, const char *s, size_t max)
{
	if (!max || !s[0])
		em_null(e, key);
	else
		em_string(e, key, s, max);
}
