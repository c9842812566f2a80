/* SPDX-License-Identifier: MIT */
/*
 * Test beds whose maker is gone (contract in tools/bed/testbed.h). A bed records
 * the process that made it: compare names its bed after its pid (cmpPID), and
 * `testbed up` keeps a pid file under /run/busypoll while it builds one. A bed
 * whose maker is no longer running (SIGKILL, a closed terminal before SIGHUP was
 * caught) is stale: found by its name or its file, removed, and said.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "tools/bed/testbed.h"

#define NETNS_DIR "/run/netns"
#define PID_DIR "/run/busypoll"

/* alive - is pid a busypoll still running (a reused pid of another program is not its maker)? */
static bool alive(pid_t pid)
{
	char path[64], comm[32] = "";
	FILE *f;

	if (pid <= 0 || (kill(pid, 0) < 0 && errno == ESRCH))
		return false;
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	if (!fgets(comm, sizeof(comm), f))
		comm[0] = 0;
	fclose(f);
	comm[strcspn(comm, "\n")] = 0;
	/* a thread renames itself, the process keeps its name */
	return !strcmp(comm, "busypoll");
}

/* pid_file - where `testbed up` says who is building bed name. */
static void pid_file(const char *name, char *buf, size_t len)
{
	snprintf(buf, len, PID_DIR "/testbed-%s.pid", name);
}

int bp_testbed_mark_building(const char *name, bool building)
{
	char path[128];
	FILE *f;

	pid_file(name, path, sizeof(path));
	if (!building) {
		if (unlink(path) < 0 && errno != ENOENT)
			return bp_err_set(-errno, "unlink(%s): %s", path, strerror(errno));
		return 0;
	}
	if (mkdir(PID_DIR, 0755) < 0 && errno != EEXIST)
		return bp_err_set(-errno, "mkdir(%s): %s", PID_DIR, strerror(errno));
	f = fopen(path, "we");
	if (!f)
		return bp_err_set(-errno, "%s: %s", path, strerror(errno));
	fprintf(f, "%d\n", (int)getpid());
	if (fclose(f))
		return bp_err_set(-errno, "%s: %s", path, strerror(errno));
	return 0;
}

/* reap - remove bed name (whichever of its namespaces exist), and say why. */
static int reap(const char *name, pid_t maker, const char *who, bp_stale_fn report, void *ctx)
{
	char line[256], path[128];
	int ret = bp_testbed_down_by_name(name);

	if (ret && ret != -ENOENT)
		snprintf(line, sizeof(line), "found test bed '%s' left by %s %d, which is gone, and could not remove it: %s",
			 name, who, (int)maker, bp_last_error());
	else
		snprintf(line, sizeof(line), "removed test bed '%s' (bp-%s-a, bp-%s-b) left by %s %d, which is gone",
			 name, name, name, who, (int)maker);
	pid_file(name, path, sizeof(path));
	unlink(path);
	if (report)
		report(ctx, line);
	return ret == -ENOENT ? 0 : ret;
}

int bp_testbed_reap_stale(bp_stale_fn report, void *ctx)
{
	char names[64][BP_TESTBED_NAME_MAX + 1];
	pid_t makers[64];
	const char *who[64];
	struct dirent *d;
	int n = 0, reaped = 0;
	DIR *dir = opendir(NETNS_DIR);

	/* compare's beds: bp-cmpPID-a/b */
	while (dir && (d = readdir(dir)) && n < 64) {
		int pid = 0, len = 0;

		if (sscanf(d->d_name, "bp-cmp%d-%*1[ab]%n", &pid, &len) != 1 || d->d_name[len] || alive(pid))
			continue;
		snprintf(names[n], sizeof(names[n]), "cmp%d", pid);
		for (int i = 0; i < n; i++)
			if (!strcmp(names[i], names[n]))
				goto next;
		makers[n] = pid;
		who[n++] = "compare";
next:;
	}
	if (dir)
		closedir(dir);
	/* beds whose `testbed up` died half way: its pid file is still there */
	dir = opendir(PID_DIR);
	while (dir && (d = readdir(dir)) && n < 64) {
		char path[300], name[BP_TESTBED_NAME_MAX + 1];
		int pid = 0, len = 0;
		FILE *f;

		if (sscanf(d->d_name, "testbed-%31[A-Za-z0-9_-]%n", name, &len) != 1 || strcmp(d->d_name + len, ".pid"))
			continue;
		snprintf(path, sizeof(path), PID_DIR "/%s", d->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		if (fscanf(f, "%d", &pid) != 1)
			pid = 0;
		fclose(f);
		if (alive(pid))
			continue;
		snprintf(names[n], sizeof(names[n]), "%s", name);
		makers[n] = pid;
		who[n++] = "testbed up";
	}
	if (dir)
		closedir(dir);
	for (int i = 0; i < n; i++)
		if (reap(names[i], makers[i], who[i], report, ctx) == 0)
			reaped++;
	return reaped;
}
