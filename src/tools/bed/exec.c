/* SPDX-License-Identifier: MIT */
/*
 * fork+execvp with the child's stderr captured, so that a failed `ip` shows up in
 * bp_last_error() as the user would have seen it on the terminal.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/error.h"
#include "tools/bed/exec.h"

/* "ip -n x link ...", cut to fit. */
static void join_argv(const char *const argv[], char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (int i = 0; argv[i] && off + 1 < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? " " : "", argv[i]);
	if (off >= len && len > 4)
		memcpy(buf + len - 4, "...", 4);
}

/* Child side: never returns. Only async-signal-safe calls between fork and exec. */
static void child(const char *const argv[], int errfd)
{
	sigset_t none;
	int null = open("/dev/null", O_RDWR);

	/* a caller's blocked signals and ignored SIGPIPE would be inherited by exec */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	if (null >= 0) {
		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
	}
	dup2(errfd, STDERR_FILENO);
	execvp(argv[0], (char *const *)argv);
	{
		const char *why = errno == ENOENT ? "not found" : "cannot execute";
		(void)!write(STDERR_FILENO, argv[0], strlen(argv[0]));
		(void)!write(STDERR_FILENO, ": ", 2);
		(void)!write(STDERR_FILENO, why, strlen(why));
	}
	_exit(127);
}

int bp_run(const char *const argv[])
{
	char out[200], cmd[96], scratch[256];
	size_t got = 0;
	int pfd[2], status, err;
	pid_t pid;
	ssize_t n;

	join_argv(argv, cmd, sizeof(cmd));
	if (pipe2(pfd, O_CLOEXEC) < 0)
		return bp_err_sys("pipe2", -errno);
	pid = fork();
	if (pid < 0) {
		err = -errno;
		close(pfd[0]);
		close(pfd[1]);
		return bp_err_sys("fork", err);
	}
	if (pid == 0)
		child(argv, pfd[1]);
	close(pfd[1]);
	/* keep the start of stderr, drain the rest so the child never blocks on it */
	for (;;) {
		if (got < sizeof(out) - 1)
			n = read(pfd[0], out + got, sizeof(out) - 1 - got);
		else
			n = read(pfd[0], scratch, sizeof(scratch));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (got < sizeof(out) - 1)
			got += (size_t)n;
	}
	close(pfd[0]);
	out[got] = '\0';
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return bp_err_sys("waitpid", -errno);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	/* one line for the message */
	while (got && (out[got - 1] == '\n' || out[got - 1] == ' '))
		out[--got] = '\0';
	for (char *p = out; *p; p++)
		if (*p == '\n')
			*p = ' ';
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
		err = -ENOENT;
	else if (strstr(out, "File exists"))
		err = -EEXIST;
	else if (strstr(out, "Operation not permitted"))
		err = -EPERM;
	else
		err = -EIO;
	if (WIFSIGNALED(status))
		return bp_err_set(err, "`%s` killed by signal %d: %s", cmd, WTERMSIG(status), out);
	return bp_err_set(err, "`%s` failed (exit %d): %s", cmd, WEXITSTATUS(status),
			  out[0] ? out : "(no message)");
}
