/* SPDX-License-Identifier: MIT */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bpt_faults.h"
#include "bptest.h"

int bpt_fd_count(pid_t pid)
{
	return bpt_fd_count_below(pid, -1);
}

int bpt_fd_count_below(pid_t pid, int below)
{
	char path[64];
	struct dirent *e;
	DIR *d;
	int n = 0, self = -1;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/fd");
	d = opendir(path);
	if (!d)
		return -1;
	if (!pid)
		self = dirfd(d); /* not the directory's own descriptor */
	while ((e = readdir(d))) {
		int fd = atoi(e->d_name);

		if (e->d_name[0] != '.' && fd != self && (below < 0 || fd < below))
			n++;
	}
	closedir(d);
	return n;
}

int bpt_fd_settle(pid_t pid, int want, int timeout_ms)
{
	uint64_t end = bpt_now_ns() + (uint64_t)timeout_ms * 1000000;
	int n;

	while ((n = bpt_fd_count(pid)) > want && bpt_now_ns() < end)
		bpt_sleep_ms(5);
	return n;
}

static struct sockaddr_in loopback(uint16_t port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return a;
}

int bpt_connect(uint16_t port)
{
	struct sockaddr_in a = loopback(port);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	BPT_CHECK(fd >= 0, "socket: %s", strerror(errno));
	BPT_CHECK(connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0, "connect to port %u: %s", port,
		  strerror(errno));
	return fd;
}

int bpt_connect_rcvbuf(uint16_t port, int rcvbuf)
{
	struct sockaddr_in a = loopback(port);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	BPT_CHECK(fd >= 0, "socket: %s", strerror(errno));
	BPT_CHECK(setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf)) == 0, "SO_RCVBUF: %s",
		  strerror(errno));
	BPT_CHECK(connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0, "connect to port %u: %s", port,
		  strerror(errno));
	return fd;
}

int bpt_rx_queued(int fd)
{
	int n = 0;

	return ioctl(fd, FIONREAD, &n) == 0 ? n : -1;
}

int bpt_connect_nb(uint16_t port)
{
	struct sockaddr_in a = loopback(port);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), err;

	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0 && errno != EINPROGRESS) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

const char *bpt_vanish_name(enum bpt_vanish how)
{
	return how == BPT_RST ? "RST" : how == BPT_FIN ? "FIN" : "forgotten (half-open)";
}

bool bpt_vanish(int fd, enum bpt_vanish how)
{
	bool ok = true;

	if (how == BPT_RST) {
		struct linger l = { .l_onoff = 1, .l_linger = 0 };

		BPT_CHECK(setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l)) == 0, "SO_LINGER: %s", strerror(errno));
	} else if (how == BPT_FORGET) {
		int one = 1;
		struct tcp_info ti;
		socklen_t tl = sizeof(ti);
		uint64_t end = bpt_now_ns() + 1000000000ull;

		/*
		 * Settle the connection first, or TCP itself finds the half-open state
		 * out: an ACK we still owe makes the server retransmit, and our kernel
		 * answers that with a RST. So: the owed ACK now (TCP_QUICKACK), and
		 * everything we sent acknowledged.
		 */
		setsockopt(fd, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof(one));
		while (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &tl) == 0 && ti.tcpi_unacked && bpt_now_ns() < end)
			bpt_sleep_ms(1);
		bpt_sleep_ms(20);
		/* In repair mode close() tears the socket down without a FIN or a RST. */
		ok = setsockopt(fd, IPPROTO_TCP, TCP_REPAIR, &one, sizeof(one)) == 0;
	}
	close(fd);
	return ok;
}

bool bpt_can_forget(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	bool ok;

	if (fd < 0)
		return false;
	ok = setsockopt(fd, IPPROTO_TCP, TCP_REPAIR, &one, sizeof(one)) == 0;
	close(fd);
	return ok;
}

void bpt_send_all(int fd, const void *buf, size_t n)
{
	const uint8_t *p = buf;

	while (n) {
		ssize_t r = send(fd, p, n, MSG_NOSIGNAL);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno == EAGAIN) {
			struct pollfd pf = { .fd = fd, .events = POLLOUT };

			poll(&pf, 1, 1000);
			continue;
		}
		BPT_CHECK(r > 0, "send: %s", strerror(errno));
		p += r;
		n -= (size_t)r;
	}
}

bool bpt_recv_all(int fd, void *buf, size_t n, int timeout_ms)
{
	uint64_t end = bpt_now_ns() + (uint64_t)timeout_ms * 1000000;
	uint8_t *p = buf;

	while (n) {
		struct pollfd pf = { .fd = fd, .events = POLLIN };
		uint64_t now = bpt_now_ns();
		ssize_t r;

		if (now >= end)
			return false;
		if (poll(&pf, 1, (int)((end - now) / 1000000) + 1) <= 0)
			continue;
		r = recv(fd, p, n, MSG_DONTWAIT);
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (r <= 0)
			return false;
		p += r;
		n -= (size_t)r;
	}
	return true;
}

int bpt_wait_closed(int fd, int timeout_ms)
{
	uint64_t start = bpt_now_ns(), end = start + (uint64_t)timeout_ms * 1000000;
	uint8_t b[4096];

	for (;;) {
		struct pollfd pf = { .fd = fd, .events = POLLIN };
		uint64_t now = bpt_now_ns();
		ssize_t r;

		if (poll(&pf, 1, now < end ? (int)((end - now) / 1000000) + 1 : 0) == 1) {
			r = recv(fd, b, sizeof(b), MSG_DONTWAIT);
			if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR))
				return (int)((bpt_now_ns() - start) / 1000000);
			if (r > 0)
				continue;
		}
		if (bpt_now_ns() >= end)
			return -1;
	}
}

bool bpt_raise_nofile(rlim_t n)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return false;
	if (rl.rlim_cur >= n)
		return true;
	if (rl.rlim_max < n)
		rl.rlim_max = n; /* root (CAP_SYS_RESOURCE) may raise the hard limit, up to fs.nr_open */
	rl.rlim_cur = n;
	if (setrlimit(RLIMIT_NOFILE, &rl) == 0)
		return true;
	getrlimit(RLIMIT_NOFILE, &rl);
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
	return rl.rlim_cur >= n;
}

void bpt_sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

bool bpt_file_has(const char *path, const char *text)
{
	FILE *f = fopen(path, "r");
	char line[4096];
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, text) != NULL;
	fclose(f);
	return found;
}

/* ---- cleaning up on every exit path ---- */

#define BPT_MAX_CLEANUPS 16
static pid_t cleanup_owner;
static pid_t children[BPT_MAX_CLEANUPS];
static char dirs[BPT_MAX_CLEANUPS][256];
static int n_dirs;

static void cleanup_at_exit(void)
{
	if (getpid() != cleanup_owner)
		return; /* a forked child leaving: not its to clean */
	for (int i = 0; i < BPT_MAX_CLEANUPS; i++)
		if (children[i] > 0) {
			kill(children[i], SIGKILL);
			waitpid(children[i], NULL, 0);
			children[i] = 0;
		}
	for (int i = n_dirs - 1; i >= 0; i--) {
		DIR *d = opendir(dirs[i]);
		struct dirent *e;
		char path[600];

		while (d && (e = readdir(d)))
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
				snprintf(path, sizeof(path), "%s/%s", dirs[i], e->d_name);
				unlink(path);
			}
		if (d)
			closedir(d);
		rmdir(dirs[i]);
	}
	n_dirs = 0;
}

static void cleanup_register(void)
{
	if (cleanup_owner != getpid()) {
		cleanup_owner = getpid();
		atexit(cleanup_at_exit);
	}
}

void bpt_reap_at_exit(pid_t pid)
{
	cleanup_register();
	for (int i = 0; i < BPT_MAX_CLEANUPS; i++)
		if (children[i] <= 0) {
			children[i] = pid;
			return;
		}
}

void bpt_reaped(pid_t pid)
{
	for (int i = 0; i < BPT_MAX_CLEANUPS; i++)
		if (children[i] == pid)
			children[i] = 0;
}

void bpt_die_with_parent(pid_t parent)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(1); /* the parent died before the line above */
}

void bpt_rmdir_at_exit(const char *dir)
{
	cleanup_register();
	if (n_dirs < BPT_MAX_CLEANUPS)
		snprintf(dirs[n_dirs++], sizeof(dirs[0]), "%s", dir);
}
