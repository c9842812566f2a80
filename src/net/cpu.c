/* SPDX-License-Identifier: MIT */
/* CPU pinning, CPU lists and capability checks. */
#include <errno.h>
#include <linux/capability.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <busypoll/net.h>

#include "base/error.h"

int bp_pin_thread(int cpu)
{
	cpu_set_t set;
	int rc;

	if (cpu < 0 || cpu >= CPU_SETSIZE)
		return bp_err_set(-EINVAL, "pin: cpu %d is out of range 0..%d", cpu, CPU_SETSIZE - 1);
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	/* returns the error number instead of setting errno */
	rc = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	if (rc)
		return bp_err_set(-rc, "pthread_setaffinity_np(cpu %d): %s%s", cpu, strerror(rc),
				  rc == EINVAL ? " (no such CPU online, or not in this cpuset)" : "");
	return 0;
}

/* One decimal CPU number at *p; advances *p. */
static int cpu_number(const char **p, int *out)
{
	long v = 0;
	const char *s = *p;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	while (*s >= '0' && *s <= '9') {
		v = v * 10 + (*s++ - '0');
		if (v >= CPU_SETSIZE)
			return -EINVAL;
	}
	*out = (int)v;
	*p = s;
	return 0;
}

int bp_parse_cpu_list(const char *text, int *cpus, size_t max)
{
	const char *p = text;
	size_t n = 0;

	if (!text)
		return bp_err_set(-EINVAL, "cpu list: empty");
	for (;;) {
		int lo, hi;

		if (cpu_number(&p, &lo))
			return bp_err_set(-EINVAL, "cpu list '%s': expected a CPU number (0..%d) at '%s'",
					  text, CPU_SETSIZE - 1, p);
		hi = lo;
		if (*p == '-') {
			p++;
			if (cpu_number(&p, &hi))
				return bp_err_set(-EINVAL, "cpu list '%s': bad range end at '%s'", text, p);
			if (hi < lo)
				return bp_err_set(-EINVAL, "cpu list '%s': range %d-%d goes backwards",
						  text, lo, hi);
		}
		for (int c = lo; c <= hi; c++) {
			if (n >= max)
				return bp_err_set(-EINVAL, "cpu list '%s': more than %zu CPUs", text, max);
			cpus[n++] = c;
		}
		if (*p == ',') {
			p++;
			continue;
		}
		/* a trailing newline is fine: lists are often read from /sys (cpu/online) */
		if (p[0] == '\n' && p[1] == '\0')
			p++;
		if (*p)
			return bp_err_set(-EINVAL, "cpu list '%s': unexpected '%c'", text, *p);
		return (int)n;
	}
}

/*
 * capget for the calling thread (capabilities are per thread); /proc/self/status
 * as a fallback describes the process's main thread, which is the same in practice.
 */
bool bp_have_cap(int cap)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	/* zeroed: the kernel fills both words, but a checker (valgrind) knows only one */
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = { { 0 } };
	unsigned long long eff = 0;
	char line[256];
	FILE *f;

	if (cap < 0 || cap > 63)
		return false;
	if (syscall(SYS_capget, &hdr, data) == 0)
		return data[cap / 32].effective & (1u << (cap % 32));
	f = fopen("/proc/self/status", "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			break;
	fclose(f);
	return eff & (1ull << cap);
}
