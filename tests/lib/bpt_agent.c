/* SPDX-License-Identifier: MIT */
/* Running `busypoll agent` from a test (bpt_agent.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bpt_agent.h"
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

const char *bpt_tmpdir(const char *prefix, char *buf, size_t len)
{
	snprintf(buf, len, "/tmp/bp-%s-XXXXXX", prefix);
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

bool bpt_agent_call(struct bpt_agent *a, const char *req, char *buf, size_t cap, int timeout_ms)
{
	size_t len = strlen(req);
	uint8_t hdr[4] = { (uint8_t)len, (uint8_t)(len >> 8), (uint8_t)(len >> 16), (uint8_t)(len >> 24) };
	uint32_t rlen;

	if (write(a->in_fd, hdr, 4) != 4 || write(a->in_fd, req, len) != (ssize_t)len)
		return false;
	if (!bpt_recv_all(a->out_fd, hdr, 4, timeout_ms))
		return false;
	rlen = (uint32_t)hdr[0] | (uint32_t)hdr[1] << 8 | (uint32_t)hdr[2] << 16 | (uint32_t)hdr[3] << 24;
	if (rlen >= cap || !bpt_recv_all(a->out_fd, buf, rlen, timeout_ms))
		return false;
	buf[rlen] = '\0';
	return true;
}
