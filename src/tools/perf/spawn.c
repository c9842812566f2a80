/* SPDX-License-Identifier: MIT */
/*
 * busypoll perf --spawn-target: our own target as a child process, and its
 * counters (contract in tools/perf.h).
 *
 * The child is `busypoll target` from our own binary (/proc/self/exe), in its own
 * process group (a Ctrl-C meant for perf must not stop the target under a run
 * that is about to print partial results) and killed if perf dies
 * (PR_SET_PDEATHSIG). It gets one end of a socketpair as its control session
 * (--control-fd; the protocol every busypoll tool speaks, tools/common/control.h):
 * its HELLO_OK says it listens, a SAMPLE brings its evidence and one record per
 * queue, matched to our queues by peer address. Its stderr goes to an unlinked
 * file, whose last line says why when it exits early; its stdout (the counter
 * table it prints at exit) to /dev/null.
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

#include "tools/common/control.h"
#include "tools/common/evidence.h"
#include "tools/perf/perf.h"

#define MAX_WORDS 128
#define START_TIMEOUT_MS 10000
#define SAMPLE_TIMEOUT_MS 3000
#define STOP_TIMEOUT_MS 5000

struct perf_spawn {
	pid_t pid;
	struct ctl_session ctl;  /* our end of the child's control session */
	int err_fd;              /* the child's stderr (an unlinked file) */
	bool reaped;
	int status;
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

/* spawn_fail_reason - why the child is gone, from its status and its last stderr line. */
static int spawn_fail_reason(struct perf_spawn *sp, char *err, size_t errlen)
{
	char line[600];

	for (int waited = 0; waited < STOP_TIMEOUT_MS && perf_spawn_alive(sp); waited += 10)
		sleep_ms(10);
	if (perf_spawn_alive(sp)) {
		snprintf(err, errlen, "the spawned target did not answer its control session within %d s",
			 START_TIMEOUT_MS / 1000);
		return -ETIMEDOUT;
	}
	last_err_line(sp, line, sizeof(line));
	snprintf(err, errlen, "the spawned target exited (status %d): %s",
		 WIFEXITED(sp->status) ? WEXITSTATUS(sp->status) : 128 + WTERMSIG(sp->status),
		 line[0] ? line : "(no message)");
	return WIFEXITED(sp->status) && WEXITSTATUS(sp->status) == 2 ? -EINVAL : -ECHILD;
}

int perf_spawn_start(const struct perf_opts *o, const char *config, struct perf_spawn **spp, char *err,
		     size_t errlen)
{
	static char exe[4096];
	char *buf1 = malloc(strlen(o->spawn_args) + 1), *buf2 = malloc(strlen(config ? config : "") + 1);
	char *argv[2 * MAX_WORDS + 10], fdtext[16];
	char tmpl[] = "/tmp/busypoll-perf-target-XXXXXX";
	struct perf_spawn *sp = calloc(1, sizeof(*sp));
	struct ctl_msg *m = malloc(2 * sizeof(*m));
	int sv[2] = { -1, -1 }, n1, n2, argc = 0, ret = -EINVAL;
	ssize_t el;

	*spp = NULL;
	if (!sp || !buf1 || !buf2 || !m) {
		snprintf(err, errlen, "out of memory");
		ret = -ENOMEM;
		goto fail;
	}
	sp->err_fd = -1;
	sp->ctl.fd = -1;
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
	sp->err_fd = mkstemp(tmpl);
	if (sp->err_fd < 0 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
		snprintf(err, errlen, "--spawn-target: %s", strerror(errno));
		ret = -errno;
		goto fail;
	}
	unlink(tmpl);
	snprintf(fdtext, sizeof(fdtext), "%d", sv[1]);
	argv[argc++] = "--control-fd";
	argv[argc++] = fdtext;
	argv[argc] = NULL;
	fflush(NULL);
	sp->pid = fork();
	if (sp->pid < 0) {
		snprintf(err, errlen, "--spawn-target: fork: %s", strerror(errno));
		ret = -errno;
		goto fail;
	}
	if (sp->pid == 0) {
		sigset_t none;
		int null = open("/dev/null", O_WRONLY | O_CLOEXEC);

		setpgid(0, 0);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		if (null >= 0)
			dup2(null, STDOUT_FILENO);
		dup2(sp->err_fd, STDERR_FILENO);
		fcntl(sv[1], F_SETFD, 0); /* the control session's end survives the exec */
		execv(exe, argv);
		dprintf(STDERR_FILENO, "busypoll target: exec %s: %s\n", exe, strerror(errno));
		_exit(127);
	}
	close(sv[1]);
	sv[1] = -1;
	ret = ctl_session_fd(&sp->ctl, sv[0], "the spawned target", START_TIMEOUT_MS);
	sv[0] = -1;
	if (ret) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	/* It answers once it listens: the HELLO waits in the socket until then. */
	ctl_msg_init(&m[0], CTL_HELLO);
	ctl_put_text(&m[0], CTL_T_TOOL, "perf");
	ret = ctl_call(&sp->ctl, &m[0], CTL_HELLO_OK, &m[1], err, errlen);
	if (ret) {
		/* its end closed (it exited before or while we sent, or never answered): say why */
		ret = ret == -ECONNRESET || ret == -EPIPE || ret == -ETIMEDOUT ? spawn_fail_reason(sp, err, errlen) : ret;
		goto fail;
	}
	sp->ctl.timeout_ms = SAMPLE_TIMEOUT_MS;
	free(buf1);
	free(buf2);
	free(m);
	*spp = sp;
	return 0;
fail:
	for (int i = 0; i < 2; i++)
		if (sv[i] >= 0)
			close(sv[i]);
	if (sp && sp->pid > 0 && !sp->reaped) {
		perf_spawn_stop(sp);
	} else if (sp) {
		ctl_session_close(&sp->ctl);
		if (sp->err_fd >= 0)
			close(sp->err_fd);
		free(sp);
	}
	free(buf1);
	free(buf2);
	free(m);
	return ret;
}

int perf_target_add_queues(const struct ctl_msg *m, char peers[][64], size_t npeers, struct perf_target_stats *st)
{
	struct ctl_iter it;
	const uint8_t *val;
	uint16_t tag;
	size_t len;
	int added = 0;

	ctl_iter_body(&it, m);
	while (ctl_next(&it, &tag, &val, &len)) {
		char peer[64];
		uint64_t v[10] = { 0 };
		static const uint16_t tags[10] = { CTL_T_Q_COMMANDS, CTL_T_Q_READS, CTL_T_Q_WRITES, CTL_T_Q_R2TS,
						   CTL_T_Q_BYTES_IN, CTL_T_Q_BYTES_OUT, CTL_T_Q_ERRORS,
						   CTL_T_Q_POLL_PASSES, CTL_T_Q_IDLE_EXITS, CTL_T_Q_FLUSHES };

		if (tag != CTL_T_Q || ctl_rec_text(val, len, CTL_T_Q_PEER, peer, sizeof(peer)))
			continue;
		for (size_t i = 0; i < npeers; i++) {
			if (strcmp(peer, peers[i]))
				continue;
			for (int k = 0; k < 10; k++)
				ctl_rec_u64(val, len, tags[k], &v[k]);
			st->commands += v[0];
			st->reads += v[1];
			st->writes += v[2];
			st->r2ts += v[3];
			st->bytes_in += v[4];
			st->bytes_out += v[5];
			st->errors += v[6];
			st->poll_passes += v[7];
			st->idle_exits += v[8];
			st->queues++;
			added++;
			break;
		}
	}
	return added;
}

int perf_spawn_sample(struct perf_spawn *sp, char peers[][64], size_t npeers, struct perf_target_stats *st)
{
	struct ctl_msg *m = malloc(2 * sizeof(*m));
	struct evidence ev;
	char err[256];
	int ret;

	memset(st, 0, sizeof(*st));
	if (!m)
		return -ENOMEM;
	if (!perf_spawn_alive(sp)) {
		free(m);
		return -ECHILD;
	}
	ctl_msg_init(&m[0], CTL_SAMPLE);
	ret = ctl_call(&sp->ctl, &m[0], CTL_EVIDENCE, &m[1], err, sizeof(err));
	if (!ret && ev_decode(&m[1], &ev))
		ret = -EPROTO;
	if (!ret) {
		st->cpu_us = ev_cpu_us(&ev);
		perf_target_add_queues(&m[1], peers, npeers, st);
		st->valid = true;
		st->pid = sp->pid;
	}
	free(m);
	return ret;
}

void perf_spawn_stop(struct perf_spawn *sp)
{
	if (!sp)
		return;
	if (sp->pid > 0 && perf_spawn_alive(sp)) {
		kill(sp->pid, SIGTERM);
		for (int waited = 0; waited < STOP_TIMEOUT_MS && perf_spawn_alive(sp); waited += 10)
			sleep_ms(10);
		if (perf_spawn_alive(sp)) {
			kill(sp->pid, SIGKILL);
			waitpid(sp->pid, &sp->status, 0);
			sp->reaped = true;
		}
	}
	ctl_session_close(&sp->ctl);
	if (sp->err_fd >= 0)
		close(sp->err_fd);
	free(sp);
}
