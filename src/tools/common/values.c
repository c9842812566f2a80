/* SPDX-License-Identifier: MIT */
/* The option values' parsers and their helpers (contract in tools/common/values.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include <unistd.h>

#include <busypoll/net.h>

#include "tools/common/values.h"

int tool_parse_u64(const char *s, uint64_t *v, bool *neg)
{
	char *end;

	*neg = s[0] == '-' && s[1] >= '0' && s[1] <= '9';
	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	*v = strtoull(s, &end, 10);
	if (*end)
		return -EINVAL;
	return errno == ERANGE ? -ERANGE : 0;
}

int tool_fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

int tool_opt_int(const char *name, const char *s, long long lo, long long hi, long long *out, char *err,
		 size_t errlen)
{
	uint64_t v;
	bool neg;
	int r = tool_parse_u64(s, &v, &neg);

	if (r == -EINVAL && !neg)
		return tool_fail(err, errlen, "%s %s: not a whole number", name, s);
	if (neg || r == -ERANGE || v < (uint64_t)lo || v > (uint64_t)hi) {
		if (hi == INT64_MAX) /* "no upper limit" to a user */
			return tool_fail(err, errlen, "%s %s: must be at least %lld", name, s, lo);
		return tool_fail(err, errlen, "%s %s: must be between %lld and %lld", name, s, lo, hi);
	}
	*out = (long long)v;
	return 0;
}

int tool_opt_size(const char *name, const char *s, uint64_t max, uint32_t *out, char *err, size_t errlen)
{
	char num[32];
	size_t len = strlen(s);
	uint64_t v, mult = 1;
	bool neg;
	int r;

	if (len && (s[len - 1] == 'k' || s[len - 1] == 'K'))
		mult = 1024;
	else if (len && (s[len - 1] == 'm' || s[len - 1] == 'M'))
		mult = 1024 * 1024;
	if (mult > 1)
		len--;
	if (len == 0 || len >= sizeof(num))
		return tool_fail(err, errlen, "%s %s: not a size (bytes, or with a k or M suffix)", name, s);
	memcpy(num, s, len);
	num[len] = 0;
	r = tool_parse_u64(num, &v, &neg);
	if (r == -EINVAL && !neg)
		return tool_fail(err, errlen, "%s %s: not a size (bytes, or with a k or M suffix)", name, s);
	if (neg || r == -ERANGE || v == 0 || v > max / mult) {
		if (max % (1024 * 1024) == 0)
			return tool_fail(err, errlen, "%s %s: must be between 1 and %lluM (%llu bytes)", name, s,
					 (unsigned long long)(max >> 20), (unsigned long long)max);
		return tool_fail(err, errlen, "%s %s: must be between 1 and %llu bytes", name, s,
				 (unsigned long long)max);
	}
	*out = (uint32_t)(v * mult);
	return 0;
}

/* seconds_text - max in words for a message: "60 seconds", "an hour", "a week". */
static const char *seconds_text(double max, char *buf, size_t len)
{
	if (max == 3600)
		return "an hour";
	if (max == 604800)
		return "a week";
	snprintf(buf, len, "%.0f seconds", max);
	return buf;
}

/* decimal_end - where the plain decimal at the start of s ends (digits, one '.' at most); *digits how many. */
static const char *decimal_end(const char *s, int *digits)
{
	int dots = 0;

	*digits = 0;
	for (; *s; s++) {
		if (*s >= '0' && *s <= '9')
			(*digits)++;
		else if (*s == '.' && !dots)
			dots++;
		else
			break;
	}
	return s;
}

/* negative - s is a negative number ("-5", "-.5"), not merely text starting with '-'. */
static bool negative(const char *s)
{
	return s[0] == '-' && s[1] && ((s[1] >= '0' && s[1] <= '9') || s[1] == '.');
}

int tool_opt_seconds(const char *name, const char *s, bool zero_ok, double max, double *out, char *err,
		     size_t errlen)
{
	int digits;
	const char *p = decimal_end(s, &digits);
	double v, mult = 1;
	char words[32];

	if (negative(s))
		return tool_fail(err, errlen, "%s %s: must not be negative", name, s);
	/* fio's time units: none or s seconds, ms, m minutes, h hours */
	if (!strcmp(p, "ms"))
		mult = 1e-3;
	else if (!strcmp(p, "m"))
		mult = 60;
	else if (!strcmp(p, "h"))
		mult = 3600;
	else if (*p && strcmp(p, "s"))
		digits = 0;
	if (!digits)
		return tool_fail(err, errlen, "%s %s: not a time (seconds, or with s, ms, m or h)", name, s);
	v = strtod(s, NULL) * mult;
	if (v > max)
		return tool_fail(err, errlen, "%s %s: at most %s", name, s, seconds_text(max, words, sizeof(words)));
	if (v == 0 && !zero_ok)
		return tool_fail(err, errlen, "%s %s: must be more than 0 seconds", name, s);
	*out = v;
	return 0;
}

int tool_opt_rate(const char *name, const char *s, double max, double *out, char *err, size_t errlen)
{
	int digits;
	const char *p = decimal_end(s, &digits);
	double v, mult = 1;

	if (negative(s))
		return tool_fail(err, errlen, "%s %s: must not be negative", name, s);
	if (!strcmp(p, "k"))
		mult = 1e3;
	else if (!strcmp(p, "M"))
		mult = 1e6;
	else if (*p)
		digits = 0;
	if (!digits)
		return tool_fail(err, errlen, "%s %s: not a rate (per second, e.g. 2000, 2.5k or 1M)", name, s);
	v = strtod(s, NULL) * mult;
	if (v <= 0)
		return tool_fail(err, errlen, "%s %s: must be more than 0 per second", name, s);
	if (v > max)
		return tool_fail(err, errlen, "%s %s: at most %.0f per second", name, s, max);
	*out = v;
	return 0;
}

int tool_opt_choice(const char *name, const char *s, const char *const *names, char *err, size_t errlen)
{
	char list[160] = "";
	size_t len = 0;
	int n = 0;

	for (int i = 0; names[i]; i++, n++)
		if (!strcmp(s, names[i]))
			return i;
	for (int i = 0; i < n; i++)
		len += (size_t)snprintf(list + len, len < sizeof(list) ? sizeof(list) - len : 0, "%s%s",
					i == 0 ? "" : i == n - 1 ? " or " : ", ", names[i]);
	return tool_fail(err, errlen, "%s %s: must be %s", name, s, list);
}

int tool_opt_cpus(const char *name, const char *s, int *cpus, int max, int *n, char *err,
		  size_t errlen)
{
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	int got = bp_parse_cpu_list(s, cpus, (size_t)max);

	if (got < 0)
		return tool_fail(err, errlen, "%s %s: not a CPU list (like 0,2-3; at most %d CPUs)",
				 name, s, max);
	if (got == 0)
		return tool_fail(err, errlen, "%s %s: lists no CPU", name, s);
	for (int i = 0; i < got; i++) {
		if (cpus[i] < 0 || (ncpu > 0 && cpus[i] >= ncpu))
			return tool_fail(err, errlen,
					 "%s %s: CPU %d does not exist (this machine has 0-%ld)", name,
					 s, cpus[i], ncpu - 1);
		for (int j = 0; j < i; j++)
			if (cpus[j] == cpus[i])
				return tool_fail(err, errlen,
						 "%s %s: CPU %d is listed twice (to stack threads on one CPU, give "
						 "fewer CPUs than threads: the list repeats)", name, s, cpus[i]);
	}
	*n = got;
	return 0;
}

int tool_opt_hostport(const char *name, const char *s, char *err, size_t errlen)
{
	const char *colon = strchr(s, ':'), *port;
	size_t n;

	/* "::1:4490" would be one IPv6 address (::0.1.68.144), not ::1 port 4490 */
	if (s[0] != '[' && colon && strchr(colon + 1, ':'))
		return tool_fail(err, errlen,
				 "%s %s: an IPv6 address with a port goes in brackets, like [::1]:4420 "
				 "([%s] for this address on the default port)", name, s, s);
	/* the port, when all digits, said out of range as such (not "not an address") */
	port = s[0] == '[' ? strstr(s, "]:") : colon;
	if (port) {
		port += s[0] == '[' ? 2 : 1;
		n = strspn(port, "0123456789");
		if (n && !port[n] && (n > 5 || atoi(port) > 65535))
			return tool_fail(err, errlen, "%s %s: port %s is out of range 1..65535", name, s, port);
	}
	return 0;
}

int tool_opt_svg_file(const char *name, const char *v, char *out, size_t outlen, char *err, size_t errlen)
{
	char dir[PATH_MAX];
	char *slash;
	size_t n = strlen(v);

	if (!*v || n >= outlen || n >= sizeof(dir))
		return tool_fail(err, errlen, "%s '%s': a file name, shorter than %zu characters", name, v,
				 outlen < sizeof(dir) ? outlen : sizeof(dir));
	if (n < 5 || strcasecmp(v + n - 4, ".svg") || v[n - 5] == '/')
		return tool_fail(err, errlen, "%s %s: the plot is SVG, give a name ending in .svg", name, v);
	snprintf(dir, sizeof(dir), "%s", v);
	slash = strrchr(dir, '/');
	if (slash)
		*(slash == dir ? slash + 1 : slash) = 0;
	else
		snprintf(dir, sizeof(dir), ".");
	if (access(v, F_OK) == 0 ? access(v, W_OK) != 0 : access(dir, W_OK | X_OK) != 0)
		return tool_fail(err, errlen, "%s %s: cannot write there: %s", name, v, strerror(errno));
	snprintf(out, outlen, "%s", v);
	return 0;
}

int tool_check_list(const char *name, const char *s, char sep, char *err, size_t errlen)
{
	size_t n = strlen(s);

	if (!n)
		return tool_fail(err, errlen, "%s: an empty list", name);
	if (s[0] == sep || s[n - 1] == sep)
		return tool_fail(err, errlen, "%s %s: an empty item at the %s", name, s, s[0] == sep ? "start" : "end");
	for (size_t i = 1; i < n; i++)
		if (s[i] == sep && s[i - 1] == sep)
			return tool_fail(err, errlen, "%s %s: an empty item (two '%c' in a row)", name, s, sep);
	return 0;
}

/* ---- getopt_long's refusals, worded the same for every command ---- */

/*
 * For an option getopt knows (missing or unexpected value) optind has moved past
 * its argument, so argv[optind - 1] is it; for an unknown character inside a
 * cluster ("-qZ") optind may not have moved, so name the character.
 */
const char *tool_bad_option_name(int argc, char **argv, const struct option *opts, char *buf,
				 size_t len)
{
	bool known = false;

	for (const struct option *lo = opts; lo->name; lo++)
		known |= optopt != 0 && lo->val == optopt;
	if ((optopt == 0 || known) && optind > 0 && optind <= argc &&
	    !strncmp(argv[optind - 1], "--", 2)) {
		snprintf(buf, len, "%.*s", (int)strcspn(argv[optind - 1], "="), argv[optind - 1]);
		return buf;
	}
	snprintf(buf, len, "-%c", optopt ? optopt : '?');
	return buf;
}

/* getopt refuses an abbreviation that fits two long options just as it refuses a misspelling. */
int tool_unknown_option(const char *sub, const struct option *opts, const char *name, char *err,
			size_t errlen)
{
	char alts[128] = "";
	size_t len = strncmp(name, "--", 2) ? 0 : strlen(name + 2), used = 0;
	int n = 0;

	if (len)
		for (const struct option *lo = opts; lo->name; lo++)
			if (!strncmp(lo->name, name + 2, len) && used < sizeof(alts))
				used += (size_t)snprintf(alts + used, sizeof(alts) - used, "%s--%s",
							 n++ ? ", " : "", lo->name);
	if (n > 1)
		return tool_fail(err, errlen, "ambiguous option '%s' (%s)", name, alts);
	return tool_fail(err, errlen, "unknown option '%s'; see busypoll %s --help", name, sub);
}

/* read_int_file - the first integer in a small file. */
static int read_int_file(const char *path, int *out)
{
	FILE *f = fopen(path, "re");
	int ret = 0;

	if (!f)
		return -errno;
	if (fscanf(f, "%d", out) != 1)
		ret = -EIO;
	fclose(f);
	return ret;
}

struct sysctl_read {
	const char *path;
	int value, ret;
};

/* parent_of - pid's parent from /proc/PID/stat, or 0. */
static pid_t parent_of(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	int ppid = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')) && sscanf(p + 1, " %*c %d", &ppid) != 1)
		ppid = 0;
	fclose(f);
	return (pid_t)ppid;
}

/*
 * in_init_net - on a thread of its own (setns moves only it): into the first
 * namespace, read. Found through pid 1, else through our parents (`ip netns exec`
 * was started from a shell in it; pid 1's links may be closed to us in a container).
 */
static void *in_init_net(void *arg)
{
	struct sysctl_read *r = arg;
	pid_t pid = 1, up = getppid();

	r->ret = -ENOENT;
	for (int hops = 0; pid > 0 && hops < 64 && r->ret == -ENOENT; hops++) {
		char path[64];
		int fd;

		snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0 && setns(fd, CLONE_NEWNET) == 0)
			r->ret = read_int_file(r->path, &r->value);
		if (fd >= 0)
			close(fd);
		pid = up; /* after pid 1: our parent, its parent, ... */
		up = pid > 1 ? parent_of(pid) : 0;
	}
	if (r->ret)
		r->ret = -ENOENT;
	return NULL;
}

int tool_read_net_sysctl(const char *name, int *out)
{
	struct sysctl_read r = { 0 };
	char path[128];
	pthread_t tid;
	int ret;

	snprintf(path, sizeof(path), "/proc/sys/net/core/%s", name);
	ret = read_int_file(path, out);
	if (ret != -ENOENT)
		return ret;
	/* a network namespace other than the first: the global value lives there */
	r.path = path;
	if (pthread_create(&tid, NULL, in_init_net, &r))
		return -ENOENT;
	pthread_join(tid, NULL);
	if (!r.ret)
		*out = r.value;
	return r.ret;
}

static volatile sig_atomic_t stop_flag;

static void on_stop_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

volatile sig_atomic_t *tool_catch_stop_signals(void)
{
	struct sigaction sa = { .sa_handler = on_stop_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL); /* a closed terminal or a dropped ssh session: stop as asked */
	signal(SIGPIPE, SIG_IGN);
	return &stop_flag;
}

int tool_wait_fd(int fd, short events, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = events };
	int n = poll(&p, 1, timeout_ms);

	if (n < 0)
		return -errno;
	return n == 0 ? -ETIMEDOUT : 0;
}

int tool_read_full(int fd, uint8_t *buf, size_t len, int timeout_ms)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n;
		int ret = tool_wait_fd(fd, POLLIN, timeout_ms);

		if (ret)
			return ret;
		n = recv(fd, buf + got, len - got, MSG_DONTWAIT);
		if (n == 0)
			return -ECONNRESET;
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return -errno;
		if (n > 0)
			got += (size_t)n;
	}
	return 0;
}

int tool_option_refused(const char *sub, int argc, char **argv, const struct option *opts, char *err,
			size_t errlen)
{
	char name[64];

	tool_bad_option_name(argc, argv, opts, name, sizeof(name));
	/* A known long option refused with optopt set was given a value it does not take. */
	if (optopt && strncmp(name, "--", 2) == 0)
		return tool_fail(err, errlen, "%s takes no value", name);
	return tool_unknown_option(sub, opts, name, err, errlen);
}

int tool_pick_role(bool server, bool client, char *err, size_t errlen)
{
	if (server && client)
		return tool_fail(err, errlen, "--server and --client are exclusive: pick one");
	if (!server && !client)
		return tool_fail(err, errlen, "one of --server or --client HOST is required");
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

void tool_sort_doubles(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
}

double tool_median_doubles(double *v, size_t n)
{
	tool_sort_doubles(v, n);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}
