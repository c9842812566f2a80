/* SPDX-License-Identifier: MIT */
/* Running `busypoll agent` from a test (bpt_agent.h). */
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bpt_agent.h"
#include "tools/remote/agent_client.h"
#include "tools/harness/control.h"
#include "bpt_faults.h"
#include "bptest.h"

const char *bpt_busypoll(void)
{
	const char *b = getenv("BUSYPOLL");

	if (!b || !*b) {
		fprintf(stderr, "SKIP: BUSYPOLL (the program under test) is not set: run through ctest\n");
		exit(BPT_SKIP);
	}
	return b;
}

/* rm_entry - nftw's visitor for remove_tree: each entry, children first. */
static int rm_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (type == FTW_DP ? rmdir(path) : unlink(path))
		fprintf(stderr, "note: could not remove %s: %s\n", path, strerror(errno));
	return 0;
}

/*
 * remove_stale - the /tmp/bp-PREFIX-PID-* directories of earlier runs whose PID is
 * gone (a test SIGKILLed by a timeout never runs its atexit cleanup), with all
 * they hold. Another run's directory, its PID alive, is left alone.
 */
static void remove_stale(const char *prefix)
{
	char head[80], path[600];
	size_t hl = (size_t)snprintf(head, sizeof(head), "bp-%s-", prefix);
	DIR *d = opendir("/tmp");
	struct dirent *e;

	while (d && (e = readdir(d))) {
		char *end;
		long pid;

		if (strncmp(e->d_name, head, hl))
			continue;
		pid = strtol(e->d_name + hl, &end, 10);
		if (end == e->d_name + hl || *end != '-' || pid <= 0 || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		snprintf(path, sizeof(path), "/tmp/%s", e->d_name);
		fprintf(stderr, "note: removing %s, left by a run that is gone (pid %ld)\n", path, pid);
		nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	}
	if (d)
		closedir(d);
}

const char *bpt_tmpdir(const char *prefix, char *buf, size_t len)
{
	remove_stale(prefix);
	snprintf(buf, len, "/tmp/bp-%s-%d-XXXXXX", prefix, (int)getpid());
	BPT_CHECK(mkdtemp(buf), "mkdtemp(%s): %s", buf, strerror(errno));
	bpt_rmdir_at_exit(buf);
	return buf;
}

void bpt_agent_start(struct bpt_agent *a, const char *netns, bool stdio, const char *const args[])
{
	const char *argv[48];
	int logp[2], sv[2] = { -1, -1 }, n = 0;
	pid_t parent = getpid();

	memset(a, 0, sizeof(*a));
	a->in_fd = a->out_fd = -1;
	if (netns) {
		argv[n++] = "ip";
		argv[n++] = "netns";
		argv[n++] = "exec";
		argv[n++] = netns;
	}
	argv[n++] = bpt_busypoll();
	argv[n++] = "agent";
	for (int i = 0; args[i]; i++) {
		BPT_CHECK(n < 47, "too many arguments");
		argv[n++] = args[i];
	}
	argv[n] = NULL;
	BPT_CHECK(pipe2(logp, O_CLOEXEC) == 0, "pipe: %s", strerror(errno));
	/* one socket as its stdin and stdout, as sshd gives a session without a tty */
	if (stdio)
		BPT_CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0, "socketpair: %s",
			  strerror(errno));
	a->pid = fork();
	BPT_CHECK(a->pid >= 0, "fork: %s", strerror(errno));
	if (a->pid == 0) {
		int null = open("/dev/null", O_RDWR);

		bpt_die_with_parent(parent);
		dup2(stdio ? sv[1] : null, STDIN_FILENO);
		dup2(stdio ? sv[1] : null, STDOUT_FILENO);
		dup2(logp[1], STDERR_FILENO);
		execvp(argv[0], (char *const *)argv);
		fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	bpt_reap_at_exit(a->pid);
	close(logp[1]);
	a->log_fd = logp[0];
	fcntl(a->log_fd, F_SETFL, O_NONBLOCK);
	if (stdio) {
		close(sv[1]);
		a->in_fd = a->out_fd = sv[0];
	}
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Read what the log has now, waiting up to ms for something. false at EOF. */
static bool read_log(struct bpt_agent *a, int ms)
{
	struct pollfd p = { .fd = a->log_fd, .events = POLLIN };
	ssize_t n;

	if (a->log_fd < 0 || poll(&p, 1, ms) <= 0)
		return a->log_fd >= 0;
	n = read(a->log_fd, a->log + a->log_len, sizeof(a->log) - 1 - a->log_len);
	if (n == 0) {
		close(a->log_fd);
		a->log_fd = -1;
		return false;
	}
	if (n > 0) {
		/* echo it: a failing test's output shows what the agent said */
		fwrite(a->log + a->log_len, 1, (size_t)n, stderr);
		a->log_len += (size_t)n;
		a->log[a->log_len] = '\0';
	}
	return true;
}

bool bpt_agent_wait_log(struct bpt_agent *a, const char *text, int timeout_ms)
{
	uint64_t end = now_ms() + (uint64_t)timeout_ms;

	while (!strstr(a->log, text)) {
		uint64_t t = now_ms();

		if (t >= end || !read_log(a, (int)(end - t)))
			return strstr(a->log, text) != NULL;
	}
	return true;
}

int bpt_agent_count(const struct bpt_agent *a, const char *text)
{
	int n = 0;

	for (const char *p = strstr(a->log, text); p; p = strstr(p + 1, text))
		n++;
	return n;
}

int bpt_agent_fd_settle(struct bpt_agent *a, int want, int timeout_ms)
{
	uint64_t end = now_ms() + (uint64_t)timeout_ms;
	int n;

	while ((n = bpt_fd_count(a->pid)) > want && now_ms() < end)
		read_log(a, 10);
	return n;
}

void bpt_agent_wait_listening(struct bpt_agent *a, int timeout_ms)
{
	const char *p, *colon;

	BPT_CHECK(bpt_agent_wait_log(a, "listening on ", timeout_ms) &&
		  bpt_agent_wait_log(a, " (pid ", timeout_ms), "the agent did not start listening");
	p = strstr(a->log, "listening on ") + strlen("listening on ");
	colon = strchr(p, ' ');
	while (colon > p && colon[-1] != ':')
		colon--;
	a->port = (uint16_t)atoi(colon);
	BPT_CHECK(a->port > 0, "no port in: %.80s", p);
}

int bpt_agent_end(struct bpt_agent *a, int sig, int timeout_ms)
{
	uint64_t end = now_ms() + (uint64_t)timeout_ms;
	int status = 0;

	if (sig)
		kill(a->pid, sig);
	else if (a->in_fd >= 0)
		shutdown(a->in_fd, SHUT_WR); /* its stdin ends: what a client going away looks like */
	for (;;) {
		pid_t w = waitpid(a->pid, &status, WNOHANG);

		if (w == a->pid)
			break;
		if (now_ms() >= end) {
			kill(a->pid, SIGKILL);
			waitpid(a->pid, &status, 0);
			bpt_reaped(a->pid);
			return -1;
		}
		read_log(a, 10);
	}
	bpt_reaped(a->pid);
	while (read_log(a, 100))
		;
	if (a->out_fd >= 0)
		close(a->out_fd);
	a->in_fd = a->out_fd = -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

void bpt_agent_conn(struct bpt_agent *a, struct agent_conn *c)
{
	char err[512];
	int fd = dup(a->in_fd);

	BPT_CHECK(fd >= 0, "dup: %s", strerror(errno));
	BPT_CHECK(agent_fd(c, fd, "the agent", err, sizeof(err)) == 0, "%s", err);
}

void bpt_req(struct ctl_msg *m, uint16_t type, uint32_t id, const char *dev, const char *set)
{
	ctl_msg_init(m, type);
	if (type == CTL_NAPI)
		ctl_put_u64(m, CTL_T_NAPI_ID, id);
	if (dev)
		ctl_put_text(m, CTL_T_DEV, dev);
	if (!set)
		return;
	ctl_put_u64(m, CTL_T_FLAGS, CTL_F_SET);
	if (type == CTL_KNOB) {
		char name[64];
		const char *eq = strchr(set, '=');

		BPT_CHECK(eq && eq - set < (int)sizeof(name), "KNOB's set is name=value");
		snprintf(name, sizeof(name), "%.*s", (int)(eq - set), set);
		ctl_put_text(m, CTL_T_KNOB, name);
		ctl_put_u64(m, CTL_T_VALUE, strtoull(eq + 1, NULL, 10));
	} else {
		ctl_put_text(m, CTL_T_SETTINGS, set);
	}
}

int bpt_ask(struct agent_conn *c, struct ctl_msg *m, struct ctl_msg *reply, char *why, size_t cap)
{
	char err[CTL_MAX_TEXT + 400];
	uint64_t e = 0;
	int rc;

	reply->type = 0;
	rc = agent_call(c, m, ctl_reply_type(m->type), reply, err, sizeof(err));
	if (!rc)
		return 0;
	/* the agent's refusal is an ERROR numbered as the request; anything else is the connection failing */
	BPT_CHECK(reply->type == CTL_ERROR && reply->seq == m->seq, "%s: %s", ctl_type_name(m->type), err);
	ctl_get_u64(reply, CTL_T_ERRNO, &e);
	if (why && cap)
		ctl_get_text(reply, CTL_T_REASON, why, cap);
	return (int)e;
}
