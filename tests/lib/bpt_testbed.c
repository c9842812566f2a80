/* SPDX-License-Identifier: MIT */
/* Cleanup for test programs that build a veth test bed: see bpt_testbed.h. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include <busypoll/kstats.h>
#include <busypoll/loop.h>

#include "bpt_testbed.h"
#include "bptest.h"

#define GUARD_MAX 4
static char guard_name[GUARD_MAX][BP_TESTBED_NAME_MAX + 1];
/* prepared before any signal can come: the handler may not format strings */
static char guard_path[GUARD_MAX][2][128];
static volatile sig_atomic_t guard_count;

void bpt_require_root(const char *what)
{
	if (geteuid() == 0)
		return;
	fprintf(stderr, "SKIP: %s needs root (it creates network namespaces)\n", what);
	exit(77);
}

/* gone - has pid exited (a live pid, even a reused one, may be another test's maker)? */
static bool gone(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	return access(path, F_OK) < 0 && errno == ENOENT;
}

/*
 * remove_leftovers - the beds bp-PREFIXPID-a/b of earlier runs of this test whose PID
 * is gone (a SIGKILLed runner runs no cleanup): removed now, and said.
 */
static void remove_leftovers(const char *prefix)
{
	size_t pl = strlen(prefix);
	struct dirent *d;
	DIR *dir = opendir("/run/netns");

	while (dir && (d = readdir(dir))) {
		char name[BP_TESTBED_NAME_MAX + 1];
		int pid = 0, n = 0;

		if (strncmp(d->d_name, "bp-", 3) || strncmp(d->d_name + 3, prefix, pl) ||
		    sscanf(d->d_name + 3 + pl, "%d-%*1[ab]%n", &pid, &n) != 1 || d->d_name[3 + pl + n] ||
		    !isdigit((unsigned char)d->d_name[3 + pl]) || pid <= 0 || !gone(pid))
			continue;
		snprintf(name, sizeof(name), "%s%d", prefix, pid);
		if (!bp_testbed_exists(name))
			continue; /* its other half was this loop's earlier find */
		if (bp_testbed_down_by_name(name))
			fprintf(stderr, "leftover test bed %s (its run, pid %d, is gone): %s\n", name, pid,
				bp_last_error());
		else
			fprintf(stderr, "cleanup: removed test bed %s left by an earlier run (pid %d, gone)\n",
				name, pid);
	}
	if (dir)
		closedir(dir);
}

const char *bpt_testbed_name(const char *prefix, char *buf, size_t len)
{
	remove_leftovers(prefix);
	snprintf(buf, len, "%s%d", prefix, (int)getpid());
	return buf;
}

static void guard_atexit(void)
{
	for (int g = 0; g < guard_count; g++) {
		if (!bp_testbed_exists(guard_name[g]))
			continue;
		if (bp_testbed_down_by_name(guard_name[g]))
			fprintf(stderr, "cleanup of test bed %s: %s\n", guard_name[g], bp_last_error());
		else
			fprintf(stderr, "cleanup: removed test bed %s\n", guard_name[g]);
	}
}

static void guard_signal(int sig)
{
	for (int g = 0; g < guard_count; g++)
		for (int i = 0; i < 2; i++) {
			umount2(guard_path[g][i], MNT_DETACH);
			unlink(guard_path[g][i]);
		}
	signal(sig, SIG_DFL);
	raise(sig);
}

void bpt_testbed_guard(const char *name)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGABRT, SIGSEGV, SIGBUS };
	struct sigaction sa;
	int g = guard_count;

	if (g == GUARD_MAX) {
		fprintf(stderr, "bpt_testbed_guard: more than %d beds\n", GUARD_MAX);
		abort();
	}
	snprintf(guard_name[g], sizeof(guard_name[g]), "%s", name);
	for (int i = 0; i < 2; i++)
		snprintf(guard_path[g][i], sizeof(guard_path[g][i]), "/run/netns/bp-%s-%c", name,
			 'a' + i);
	guard_count = g + 1; /* only now can the handler see it */
	if (g > 0)
		return;
	atexit(guard_atexit);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = guard_signal;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}

uint64_t bpt_testbed_busy_poll_rx(const struct bp_testbed *tb, int side)
{
	struct bp_kstats k;
	int home;

	BPT_CHECK(bp_netns_save(&home) == 0 && bp_testbed_enter(tb, side) == 0, "enter: %s", bp_last_error());
	BPT_CHECK(bp_kstats_read(&k) == 0, "kstats: %s", bp_last_error());
	BPT_CHECK(bp_netns_restore(home) == 0, "restore: %s", bp_last_error());
	return k.busy_poll_rx;
}
