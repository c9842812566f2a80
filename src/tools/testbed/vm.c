/* SPDX-License-Identifier: MIT */
#include "tools/testbed/vm.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tools/common/cmd.h"

#define SUB "testbed"
#define MAX_ARGS 256

/*
 * script_path - the bed's script: $BP_VMBED_DIR/vmbed.sh when set, else the source
 * tree's (a build that has its sources beside it), else the installed one. Returns 0,
 * or -ENOENT when none is there.
 */
static int script_path(char *buf, size_t len)
{
	const char *dirs[3] = { getenv("BP_VMBED_DIR"), BP_VMBED_SRC_DIR, BP_VMBED_INSTALL_DIR };

	for (int i = 0; i < 3; i++) {
		if (!dirs[i] || !*dirs[i])
			continue;
		if ((size_t)snprintf(buf, len, "%s/vmbed.sh", dirs[i]) < len && access(buf, R_OK) == 0)
			return 0;
		if (i == 0)
			return -ENOENT; /* asked for: do not fall back past it */
	}
	return -ENOENT;
}

/*
 * spawn - run bash SCRIPT argv...; its exit status, or -errno when it cannot be run.
 * Like system(): a Ctrl-C reaches the script (same process group), which removes what
 * it was making, while this process waits for it. Should this process die (SIGKILL),
 * the script gets SIGTERM (PR_SET_PDEATHSIG) and does the same, so a killed
 * `testbed up` leaves no guests behind.
 */
static int spawn(char *const *argv)
{
	struct sigaction ign = { .sa_handler = SIG_IGN }, oint, oquit;
	int st, rc = 0;
	pid_t parent = getpid(), pid;

	sigemptyset(&ign.sa_mask);
	sigaction(SIGINT, &ign, &oint);
	sigaction(SIGQUIT, &ign, &oquit);
	pid = fork();
	if (pid < 0) {
		rc = -errno;
	} else if (pid == 0) {
		sigaction(SIGINT, &oint, NULL);
		sigaction(SIGQUIT, &oquit, NULL);
		if (prctl(PR_SET_PDEATHSIG, SIGTERM) || getppid() != parent)
			_exit(126); /* the caller is gone already */
		execv("/bin/bash", argv);
		_exit(127);
	} else {
		while (waitpid(pid, &st, 0) < 0)
			if (errno != EINTR) {
				rc = -errno;
				break;
			}
	}
	sigaction(SIGINT, &oint, NULL);
	sigaction(SIGQUIT, &oquit, NULL);
	if (rc)
		return rc;
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return WEXITSTATUS(st) == 127 ? -ENOEXEC : WEXITSTATUS(st);
}

bool tb_vm_exists(const char *name)
{
	char path[PATH_MAX];
	char *argv[] = { "bash", path, "exists", (char *)name, NULL };

	return script_path(path, sizeof(path)) == 0 && spawn(argv) == 0;
}

int tb_vm_run(const char *action, const char *name, char *const *args, int n)
{
	char path[PATH_MAX];
	char *argv[MAX_ARGS + 5];
	int rc;

	if (script_path(path, sizeof(path))) {
		bp_tool_error(SUB, "the VM bed's script vmbed.sh is not in %s nor %s; reinstall busypoll "
			      "(or set BP_VMBED_DIR to its folder)", BP_VMBED_SRC_DIR, BP_VMBED_INSTALL_DIR);
		return BP_EXIT_FAIL;
	}
	if (n > MAX_ARGS) {
		bp_tool_error(SUB, "exec: %d words is too many (at most %d)", n, MAX_ARGS);
		return BP_EXIT_USAGE;
	}
	argv[0] = "bash";
	argv[1] = path;
	argv[2] = (char *)action;
	argv[3] = (char *)name;
	for (int i = 0; i < n; i++)
		argv[4 + i] = args[i];
	argv[4 + n] = NULL;
	fflush(stdout);
	rc = spawn(argv);
	if (rc < 0) {
		bp_tool_error(SUB, "cannot run /bin/bash %s: %s", path, strerror(-rc));
		return BP_EXIT_FAIL;
	}
	return rc;
}
