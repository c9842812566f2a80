/* SPDX-License-Identifier: MIT */
/* A busypoll server as a child process over a control session (contract in tools/harness/spawn.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tools/harness/spawn.h"

#define MAX_ARGS 300

int spawn_split_args(const char *args, char *buf, char **words, int max)
{
	const char *p = args;
	char *w = buf;
	int n = 0;

	for (;;) {
		char quote = 0;

		while (*p == ' ' || *p == '\t' || *p == '\n')
			p++;
		if (!*p)
			break;
		if (n == max)
			return -EINVAL;
		words[n] = w;
		while (*p && (quote || (*p != ' ' && *p != '\t' && *p != '\n'))) {
			if (quote && *p == quote)
				quote = 0;
			else if (!quote && (*p == '\'' || *p == '"'))
				quote = *p;
			else if (*p == '\\' && quote != '\'' && p[1])
				*w++ = *++p;
			else
				*w++ = *p;
			p++;
		}
		if (quote)
			return -EINVAL;
		*w++ = 0;
		n++;
	}
	return n;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

bool spawn_alive(struct spawn *sp)
{
	if (sp->pid > 0 && !sp->reaped && waitpid(sp->pid, &sp->status, WNOHANG) == sp->pid)
		sp->reaped = true;
	return sp->pid > 0 && !sp->reaped;
}

int spawn_exit_status(struct spawn *sp)
{
	if (spawn_alive(sp) || sp->pid <= 0)
		return -1;
	return WIFEXITED(sp->status) ? WEXITSTATUS(sp->status) : 128 + WTERMSIG(sp->status);
}

void spawn_last_line(struct spawn *sp, char *buf, size_t len)
{
	char tmp[4096];
	ssize_t n = sp->err_fd >= 0 ? pread(sp->err_fd, tmp, sizeof(tmp) - 1, 0) : -1;
	char *end, *start;

	buf[0] = 0;
	if (n <= 0 || !len)
		return;
	tmp[n] = 0;
	end = tmp + n;
	while (end > tmp && (end[-1] == '\n' || end[-1] == '\r'))
		*--end = 0;
	start = strrchr(tmp, '\n');
	start = start ? start + 1 : tmp;
	snprintf(buf, len, "%s", start);
}

/* fail_reason - why the child is gone (its status, its last stderr line), or that it never answered. */
static int fail_reason(struct spawn *sp, const char *what, int timeout_ms, char *err, size_t errlen)
{
	char line[600];
	int status;

	for (int waited = 0; waited < timeout_ms && spawn_alive(sp); waited += 10)
		sleep_ms(10);
	if (spawn_alive(sp)) {
		snprintf(err, errlen, "the spawned %s did not answer its control session within %d s", what,
			 (timeout_ms + 999) / 1000);
		return -ETIMEDOUT;
	}
	spawn_last_line(sp, line, sizeof(line));
	status = spawn_exit_status(sp);
	snprintf(err, errlen, "the spawned %s exited (status %d): %s", what, status, line[0] ? line : "(no message)");
	return status == 2 ? -EINVAL : -ECHILD;
}

/* child - in the forked child: its own group, death with the parent, the descriptors, the exec. */
static void child(const char *exe, char *const argv[], int err_fd, int ctl_fd, pid_t parent, const cpu_set_t *cpus)
{
	sigset_t none;
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(127); /* the parent died before the prctl took */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	if (null >= 0) {
		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
	}
	dup2(err_fd, STDERR_FILENO);
	/* before the exec: every thread it will run, and the kernel's helpers of its rings, inherit it */
	if (cpus && sched_setaffinity(0, sizeof(*cpus), cpus) < 0) {
		dprintf(STDERR_FILENO, "busypoll: cannot bind to the allowed CPUs: %s\n", strerror(errno));
		_exit(127);
	}
	fcntl(ctl_fd, F_SETFD, 0); /* the control session's end survives the exec */
	execv(exe, argv);
	dprintf(STDERR_FILENO, "busypoll: exec %s: %s\n", exe, strerror(errno));
	_exit(127);
}

int spawn_start(struct spawn *sp, char *const argv[], const char *what, const char *tool, int timeout_ms,
		struct ctl_msg *hello_ok, char *err, size_t errlen)
{
	return spawn_start_on(sp, argv, NULL, what, tool, timeout_ms, hello_ok, err, errlen);
}

int spawn_start_on(struct spawn *sp, char *const argv[], const cpu_set_t *cpus, const char *what, const char *tool,
		   int timeout_ms, struct ctl_msg *hello_ok, char *err, size_t errlen)
{
	static char exe[4096];
	char *args[MAX_ARGS + 4], fdtext[16], tmpl[] = "/tmp/busypoll-spawn-XXXXXX";
	struct ctl_msg *m = malloc(sizeof(*m));
	int sv[2] = { -1, -1 }, n = 0, ret;
	pid_t parent = getpid();
	ssize_t el;

	memset(sp, 0, sizeof(*sp));
	sp->err_fd = -1;
	sp->ctl.fd = -1;
	if (!m) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	el = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (el <= 0) {
		ret = -errno;
		snprintf(err, errlen, "cannot find our own program (/proc/self/exe): %s", strerror(errno));
		goto fail;
	}
	exe[el] = 0;
	args[n++] = "busypoll";
	for (int i = 0; argv[i]; i++) {
		if (n == MAX_ARGS) {
			ret = -E2BIG;
			snprintf(err, errlen, "the spawned %s: more than %d arguments", what, MAX_ARGS);
			goto fail;
		}
		args[n++] = argv[i];
	}
	sp->err_fd = mkstemp(tmpl);
	if (sp->err_fd < 0 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
		ret = -errno;
		snprintf(err, errlen, "the spawned %s: %s", what, strerror(errno));
		goto fail;
	}
	unlink(tmpl);
	fcntl(sp->err_fd, F_SETFD, FD_CLOEXEC);
	snprintf(fdtext, sizeof(fdtext), "%d", sv[1]);
	args[n++] = "--control-fd";
	args[n++] = fdtext;
	args[n] = NULL;
	fflush(NULL);
	sp->pid = fork();
	if (sp->pid < 0) {
		ret = -errno;
		snprintf(err, errlen, "the spawned %s: fork: %s", what, strerror(errno));
		goto fail;
	}
	if (sp->pid == 0)
		child(exe, args, sp->err_fd, sv[1], parent, cpus);
	close(sv[1]);
	sv[1] = -1;
	ret = ctl_session_fd(&sp->ctl, sv[0], what, timeout_ms);
	sv[0] = -1;
	if (ret) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	/* It answers once it serves: the HELLO waits in the socket until then. */
	ctl_msg_init(m, CTL_HELLO);
	ctl_put_text(m, CTL_T_TOOL, tool);
	ret = ctl_call(&sp->ctl, m, CTL_HELLO_OK, hello_ok, err, errlen);
	if (ret) {
		/* its end closed (it exited before or while we sent, or never answered): say why */
		if (ret == -ECONNRESET || ret == -EPIPE || ret == -ETIMEDOUT)
			ret = fail_reason(sp, what, 5000, err, errlen);
		goto fail;
	}
	free(m);
	return 0;
fail:
	for (int i = 0; i < 2; i++)
		if (sv[i] >= 0)
			close(sv[i]);
	if (sp->pid > 0)
		spawn_stop(sp, 2000);
	else if (sp->err_fd >= 0)
		close(sp->err_fd);
	sp->err_fd = -1;
	free(m);
	return ret;
}

/* task_stat - utime and stime (clock ticks) from /proc/PID/task/TID/stat, after the comm's ")". */
static int task_stat(const char *path, unsigned long long *ut, unsigned long long *st)
{
	char buf[1024], *p;
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return -errno;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strrchr(buf, ')');
	/* state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime stime */
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", ut, st) != 2)
		return -EIO;
	return 0;
}

int spawn_threads(const struct spawn *sp, struct evidence *ev)
{
	long hz = sysconf(_SC_CLK_TCK);
	char dir[64], path[128], line[128];
	struct dirent *d;
	DIR *td;

	snprintf(dir, sizeof(dir), "/proc/%d/task", (int)sp->pid);
	td = sp->pid > 0 && !sp->reaped ? opendir(dir) : NULL;
	if (!td)
		return -ESRCH;
	if (hz <= 0)
		hz = 100;
	while ((d = readdir(td))) {
		int tid = atoi(d->d_name);
		unsigned long long ut = 0, st = 0, ns = 0;
		char comm[EV_COMM_LEN + 8] = "?";
		struct ev_thread *t;

		if (tid <= 0)
			continue;
		snprintf(path, sizeof(path), "%s/%d/comm", dir, tid);
		ev_read_line(path, comm, sizeof(comm));
		snprintf(path, sizeof(path), "%s/%d/stat", dir, tid);
		if (task_stat(path, &ut, &st))
			continue; /* exited between the readdir and now */
		snprintf(path, sizeof(path), "%s/%d/schedstat", dir, tid);
		if (ev_read_line(path, line, sizeof(line)) || sscanf(line, "%llu", &ns) != 1)
			ns = (ut + st) * (1000000000ull / (unsigned long long)hz);
		ev->utime_us += ut * (1000000ull / (unsigned long long)hz);
		ev->stime_us += st * (1000000ull / (unsigned long long)hz);
		if (!strncmp(comm, "iou-", 4))
			ev->helper_cpu_us += ns / 1000;
		ev->threads++;
		if (ev->nthr == EV_MAX_THREADS)
			continue;
		t = &ev->thr[ev->nthr++];
		t->tid = tid;
		memcpy(t->comm, comm, EV_COMM_LEN - 1);
		t->comm[EV_COMM_LEN - 1] = 0;
		t->cpu_us = ns / 1000;
	}
	closedir(td);
	return 0;
}

int spawn_stop(struct spawn *sp, int timeout_ms)
{
	/* its control session closes first: a server ends when it does, SIGTERM or not */
	ctl_session_close(&sp->ctl);
	if (spawn_alive(sp)) {
		kill(sp->pid, SIGTERM);
		for (int waited = 0; waited < timeout_ms && spawn_alive(sp); waited += 10)
			sleep_ms(10);
		if (spawn_alive(sp)) {
			kill(sp->pid, SIGKILL);
			waitpid(sp->pid, &sp->status, 0);
			sp->reaped = true;
		}
	}
	if (sp->err_fd >= 0)
		close(sp->err_fd);
	sp->err_fd = -1;
	return spawn_exit_status(sp);
}
