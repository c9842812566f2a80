/* SPDX-License-Identifier: MIT */
/*
 * busypoll perf --spawn-target: our own target as a child process, and its
 * counters (contract in tools/perf.h).
 *
 * The child is `busypoll target` from our own binary (/proc/self/exe), in its own
 * process group (a Ctrl-C meant for perf must not stop the target under a run
 * that is about to print partial results) and killed if perf dies
 * (PR_SET_PDEATHSIG). Its stdout is a pipe: the counter table it prints on
 * SIGUSR1 is read there and matched to our queues by peer address. Its stderr
 * goes to an unlinked file: "listening on" there says it is ready, and its
 * last line says why when it exits early.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tools/perf/perf.h"

#define MAX_WORDS 128
#define START_TIMEOUT_MS 10000
#define SAMPLE_TIMEOUT_MS 3000
#define STOP_TIMEOUT_MS 5000

struct perf_spawn {
	pid_t pid;
	int out_fd;              /* the child's stdout (read end, non-blocking) */
	int err_fd;              /* the child's stderr (an unlinked file) */
	bool reaped;
	int status;
	char line[1024];         /* a partial stdout line carried to the next read */
	size_t line_len;
};

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static bool has_option(char **words, int n, const char *opt)
{
	size_t len = strlen(opt);

	for (int i = 0; i < n; i++)
		if (!strncmp(words[i], opt, len) && (words[i][len] == 0 || words[i][len] == '='))
			return true;
	return false;
}

/* last_err_line - the child's last stderr line (without the newline) into buf. */
static void last_err_line(struct perf_spawn *sp, char *buf, size_t len)
{
	char tmp[4096];
	ssize_t n = pread(sp->err_fd, tmp, sizeof(tmp) - 1, 0);
	char *end, *start;

	buf[0] = 0;
	if (n <= 0)
		return;
	tmp[n] = 0;
	end = tmp + n;
	while (end > tmp && (end[-1] == '\n' || end[-1] == '\r'))
		*--end = 0;
	start = strrchr(tmp, '\n');
	start = start ? start + 1 : tmp;
	if (strlen(start) >= len)
		start[len - 1] = 0;
	memcpy(buf, start, strlen(start) + 1);
}

static bool err_says(struct perf_spawn *sp, const char *what)
{
	char tmp[8192];
	ssize_t n = pread(sp->err_fd, tmp, sizeof(tmp) - 1, 0);

	if (n <= 0)
		return false;
	tmp[n] = 0;
	return strstr(tmp, what) != NULL;
}

bool perf_spawn_alive(struct perf_spawn *sp)
{
	if (!sp->reaped && waitpid(sp->pid, &sp->status, WNOHANG) == sp->pid)
		sp->reaped = true;
	return !sp->reaped;
}

pid_t perf_spawn_pid(const struct perf_spawn *sp)
{
	return sp->pid;
}

int perf_spawn_start(const struct perf_opts *o, const char *config, struct perf_spawn **spp, char *err,
		     size_t errlen)
{
	static char exe[4096];
	char *buf1 = malloc(strlen(o->spawn_args) + 1), *buf2 = malloc(strlen(config ? config : "") + 1);
	char *argv[2 * MAX_WORDS + 8];
	char tmpl[] = "/tmp/busypoll-perf-target-XXXXXX";
	struct perf_spawn *sp = calloc(1, sizeof(*sp));
	int pfd[2] = { -1, -1 }, n1, n2, argc = 0, ret = -EINVAL;
	ssize_t el;

	*spp = NULL;
	if (!sp || !buf1 || !buf2) {
		snprintf(err, errlen, "out of memory");
		ret = -ENOMEM;
		goto fail;
	}
	sp->out_fd = sp->err_fd = -1;
	n1 = perf_split_args(o->spawn_args, buf1, argv + 2, MAX_WORDS);
	if (n1 < 0) {
		snprintf(err, errlen, "--spawn-target '%s': unbalanced quotes or more than %d words", o->spawn_args,
			 MAX_WORDS);
		goto fail;
	}
	n2 = perf_split_args(config ? config : "", buf2, argv + 2 + n1, MAX_WORDS);
	if (n2 < 0) {
		snprintf(err, errlen, "--target-config '%s': unbalanced quotes or more than %d words", config, MAX_WORDS);
		goto fail;
	}
	el = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (el <= 0) {
		snprintf(err, errlen, "--spawn-target: cannot find our own program (/proc/self/exe): %s", strerror(errno));
		ret = -errno;
		goto fail;
	}
	exe[el] = 0;
	argv[0] = "busypoll";
	argv[1] = "target";
	argc = 2 + n1 + n2;
	if (!has_option(argv + 2, n1 + n2, "--listen")) {
		argv[argc++] = "--listen";
		argv[argc++] = (char *)o->target;
	}
	if (!has_option(argv + 2, n1 + n2, "--nqn")) {
		argv[argc++] = "--nqn";
		argv[argc++] = (char *)o->nqn;
	}
	argv[argc] = NULL;

	sp->err_fd = mkstemp(tmpl);
	if (sp->err_fd < 0 || pipe2(pfd, O_CLOEXEC) < 0) {
		snprintf(err, errlen, "--spawn-target: %s", strerror(errno));
		ret = -errno;
		goto fail;
	}
	unlink(tmpl);
	fflush(NULL);
	sp->pid = fork();
	if (sp->pid < 0) {
		snprintf(err, errlen, "--spawn-target: fork: %s", strerror(errno));
		ret = -errno;
		goto fail;
	}
	if (sp->pid == 0) {
		sigset_t none;

		setpgid(0, 0);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		dup2(pfd[1], STDOUT_FILENO);
		dup2(sp->err_fd, STDERR_FILENO);
		execv(exe, argv);
		dprintf(STDERR_FILENO, "busypoll target: exec %s: %s\n", exe, strerror(errno));
		_exit(127);
	}
	close(pfd[1]);
	pfd[1] = -1;
	sp->out_fd = pfd[0];
	fcntl(sp->out_fd, F_SETFL, fcntl(sp->out_fd, F_GETFL) | O_NONBLOCK);
	free(buf1);
	free(buf2);
	buf1 = buf2 = NULL;

	for (int waited = 0; waited < START_TIMEOUT_MS; waited += 20) {
		if (err_says(sp, "listening on")) {
			*spp = sp;
			return 0;
		}
		if (!perf_spawn_alive(sp)) {
			char line[600];

			last_err_line(sp, line, sizeof(line));
			snprintf(err, errlen, "the spawned target exited (status %d): %s",
				 WIFEXITED(sp->status) ? WEXITSTATUS(sp->status) : 128 + WTERMSIG(sp->status),
				 line[0] ? line : "(no message)");
			ret = WIFEXITED(sp->status) && WEXITSTATUS(sp->status) == 2 ? -EINVAL : -ECHILD;
			goto fail;
		}
		sleep_ms(20);
	}
	snprintf(err, errlen, "the spawned target did not say it listens within %d s", START_TIMEOUT_MS / 1000);
	ret = -ETIMEDOUT;
fail:
	if (pfd[1] >= 0)
		close(pfd[1]);
	if (sp && sp->pid > 0 && !sp->reaped)
		perf_spawn_stop(sp);
	else if (sp) {
		if (sp->out_fd >= 0)
			close(sp->out_fd);
		else if (pfd[0] >= 0)
			close(pfd[0]);
		if (sp->err_fd >= 0)
			close(sp->err_fd);
		free(sp);
	}
	free(buf1);
	free(buf2);
	return ret;
}

int perf_target_parse_line(const char *line, char peers[][64], size_t npeers, struct perf_target_stats *st)
{
	unsigned long long qn, commands, reads, writes, flushes, r2ts, bin, bout, errors, passes, idle;
	char cntlid[16], peer[64], state[16];
	unsigned qid;
	int thr;

	if (sscanf(line, "%llu %15s %u %d %63s %15s %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &qn, cntlid,
		   &qid, &thr, peer, state, &commands, &reads, &writes, &flushes, &r2ts, &bin, &bout, &errors, &passes,
		   &idle) != 16)
		return 0;
	for (size_t i = 0; i < npeers; i++) {
		if (strcmp(peer, peers[i]))
			continue;
		st->commands += commands;
		st->reads += reads;
		st->writes += writes;
		st->r2ts += r2ts;
		st->bytes_in += bin;
		st->bytes_out += bout;
		st->errors += errors;
		st->poll_passes += passes;
		st->idle_exits += idle;
		st->queues++;
		return 1;
	}
	return 0;
}

/* proc_cpu_us - utime + stime of pid from /proc/PID/stat, in us; 0 if unreadable. */
static uint64_t proc_cpu_us(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long ut = 0, st = 0;
	long hz = sysconf(_SC_CLK_TCK);
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strrchr(buf, ')');
	/* after ") ": state(3) ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime(14) stime(15) */
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2 || hz <= 0)
		return 0;
	return (ut + st) * 1000000ull / (unsigned long long)hz;
}

int perf_spawn_sample(struct perf_spawn *sp, char peers[][64], size_t npeers, struct perf_target_stats *st)
{
	char chunk[4096];
	int waited = 0;
	bool total = false;

	memset(st, 0, sizeof(*st));
	if (!perf_spawn_alive(sp))
		return -ECHILD;
	/* Whatever is left from before (the previous table) is not this answer. */
	while (read(sp->out_fd, chunk, sizeof(chunk)) > 0)
		;
	sp->line_len = 0;
	st->cpu_us = proc_cpu_us(sp->pid);
	if (kill(sp->pid, SIGUSR1) < 0)
		return -errno;
	while (!total && waited < SAMPLE_TIMEOUT_MS) {
		struct pollfd p = { .fd = sp->out_fd, .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, 50) <= 0) {
			waited += 50;
			continue;
		}
		n = read(sp->out_fd, chunk, sizeof(chunk));
		if (n <= 0) {
			if (n == 0)
				return -ECHILD;
			continue;
		}
		for (ssize_t i = 0; i < n; i++) {
			if (chunk[i] != '\n') {
				if (sp->line_len < sizeof(sp->line) - 1)
					sp->line[sp->line_len++] = chunk[i];
				continue;
			}
			sp->line[sp->line_len] = 0;
			sp->line_len = 0;
			if (!strncmp(sp->line, "total", 5))
				total = true;
			else
				perf_target_parse_line(sp->line, peers, npeers, st);
		}
	}
	if (!total)
		return -ETIMEDOUT;
	st->valid = true;
	st->pid = sp->pid;
	return 0;
}

void perf_spawn_stop(struct perf_spawn *sp)
{
	if (!sp)
		return;
	if (sp->pid > 0 && perf_spawn_alive(sp)) {
		kill(sp->pid, SIGTERM);
		for (int waited = 0; waited < STOP_TIMEOUT_MS && perf_spawn_alive(sp); waited += 10) {
			char chunk[4096];

			/* The target prints its counters as it exits: keep the pipe from filling. */
			while (read(sp->out_fd, chunk, sizeof(chunk)) > 0)
				;
			sleep_ms(10);
		}
		if (perf_spawn_alive(sp)) {
			kill(sp->pid, SIGKILL);
			waitpid(sp->pid, &sp->status, 0);
			sp->reaped = true;
		}
	}
	if (sp->out_fd >= 0)
		close(sp->out_fd);
	if (sp->err_fd >= 0)
		close(sp->err_fd);
	free(sp);
}
