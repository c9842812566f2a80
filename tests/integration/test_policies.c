/* SPDX-License-Identifier: MIT */
/*
 * Each wait policy does what it claims, on the kernel's own evidence:
 *  - prefer_busy_poll is on only where a mode says `prefer` (or is suspend):
 *    EPIOCGPARAMS of every epoll loop's instance (usecs, budget, prefer), the
 *    NAPI lines of every io_uring loop's ring in /proc/self/fdinfo, and
 *    SO_PREFER_BUSY_POLL of their sockets never set;
 *  - block (and napi, whose busy polling is inside the kernel's wait) never
 *    polls from userspace: a wait for a timer sleeps in one syscall (time that
 *    could sleep, no time polling, a voluntary context switch), and bytes that
 *    came count as a wake-up, not an empty poll;
 *  - hybrid polls while work came within its period and then blocks: the
 *    engine's counters (polls, time polling, time that could sleep) and the
 *    thread's voluntary context switches (RUSAGE_THREAD), on both backends;
 *  - sqpoll: the ring's kernel SQ thread (iou-sqp-PID) is there while the loop
 *    is, and no other uring mode has one;
 * and as root, over veth test beds where busy polling engages:
 *  - epoll:suspend: once the server has seen its connections' NAPI id, that
 *    NAPI's settings (netdev netlink napi-get) are the mode's, where they were 0
 *    before; with eight flows keeping it busy, the server end receives by busy
 *    polling (BusyPollRxPackets rise), the blocking client's end does not;
 *  - placement with two NAPIs (a bed with two queues per end): 16 connections
 *    through a placer over two loops: each loop serves one NAPI id, and the two
 *    ids are on different loops.
 * Timing is never asserted. Not root: the veth parts are skipped (exit 77).
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <busypoll/busypoll.h>
#include "base/compat.h"
#include "tools/bed/testbed.h"

#include "bpt_testbed.h"
#include "bptest.h"

#define MAX_FD 4096

/* ---- descriptors a loop opened: found by what /proc says they are ---- */

static void fds_open(bool *open)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;

	BPT_CHECK(d, "/proc/self/fd: %s", strerror(errno));
	memset(open, 0, MAX_FD);
	while ((e = readdir(d))) {
		int fd = atoi(e->d_name);

		if (e->d_name[0] != '.' && fd >= 0 && fd < MAX_FD)
			open[fd] = true;
	}
	closedir(d);
}

/* new_fd - the one descriptor open now, not in before, that links to what ("anon_inode:[eventpoll]"). */
static int new_fd(const bool *before, const char *what)
{
	static bool now[MAX_FD];
	int found = -1;

	fds_open(now);
	for (int fd = 0; fd < MAX_FD; fd++) {
		char path[64], link[128];
		ssize_t n;

		if (!now[fd] || before[fd])
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n = readlink(path, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = 0;
		if (strcmp(link, what))
			continue;
		BPT_CHECK(found < 0, "the loop opened two %s descriptors (%d and %d)", what, found, fd);
		found = fd;
	}
	BPT_CHECK(found >= 0, "the loop opened no %s descriptor", what);
	return found;
}

/* fdinfo_value - the value of "key:\t..." in /proc/self/fdinfo/fd into out; false if absent. */
static bool fdinfo_value(int fd, const char *key, char *out, size_t len)
{
	char path[64], line[256];
	size_t kl = strlen(key);
	FILE *f;
	bool found = false;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	BPT_CHECK(f, "%s: %s", path, strerror(errno));
	while (!found && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, kl) && line[kl] == ':') {
			char *v = line + kl + 1;

			v += strspn(v, " \t");
			v[strcspn(v, "\n")] = 0;
			snprintf(out, len, "%s", v);
			found = true;
		}
	fclose(f);
	return found;
}

/* A TCP pair over loopback: *mine for the loop, *peer a plain blocking socket. */
static void tcp_pair(int *mine, int *peer)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	BPT_CHECK(l >= 0 && bind(l, (struct sockaddr *)&a, sizeof(a)) == 0 && listen(l, 1) == 0 &&
			  getsockname(l, (struct sockaddr *)&a, &al) == 0,
		  "listen: %s", strerror(errno));
	*peer = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	BPT_CHECK(*peer >= 0 && connect(*peer, (struct sockaddr *)&a, sizeof(a)) == 0, "connect: %s", strerror(errno));
	*mine = accept4(l, NULL, NULL, SOCK_CLOEXEC);
	BPT_CHECK(*mine >= 0, "accept: %s", strerror(errno));
	close(l);
}

struct sink {
	size_t got;
};

static size_t sink_recv(struct bp_conn *c, const uint8_t *data, size_t len)
{
	struct sink *s = bp_conn_data(c);

	s->got += len;
	return len;
}

static void sink_close(struct bp_conn *c, int err, const char *sc)
{
}

static const struct bp_conn_ops sink_ops = { .on_recv = sink_recv, .on_close = sink_close };

/*
 * A loop in mode m on this thread serving one loopback connection into *s;
 * *peer is the other end, a plain socket. Returns the loop.
 */
static struct bp_loop *loop_with_peer(const char *text, const struct bp_mode *m, struct sink *s, int *peer)
{
	struct bp_loop *loop;
	int mine;

	BPT_CHECK(bp_loop_create(&loop, m) == 0, "%s: loop: %s", text, bp_last_error());
	tcp_pair(&mine, peer);
	BPT_CHECK(bp_conn_adopt(loop, mine, &sink_ops, s, NULL) == 0, "%s: adopt: %s", text, bp_last_error());
	return loop;
}

/* One byte from the peer, and the loop run until it is in. */
static void byte_in(struct bp_loop *loop, int peer, struct sink *s, const char *text)
{
	size_t had = s->got;

	BPT_CHECK(send(peer, "x", 1, 0) == 1, "send: %s", strerror(errno));
	while (s->got == had)
		BPT_CHECK(bp_loop_run_once(loop, -1) >= 0, "%s: run: %s", text, bp_last_error());
}

static int prefer_of(int fd)
{
	int v = -1;
	socklen_t l = sizeof(v);

	BPT_CHECK(getsockopt(fd, SOL_SOCKET, SO_PREFER_BUSY_POLL, &v, &l) == 0, "getsockopt(SO_PREFER_BUSY_POLL): %s",
		  strerror(errno));
	return v;
}

/* ---- 1. prefer_busy_poll only with prefer ---- */

static void prefer(const char *text)
{
	static bool before[MAX_FD];
	struct bp_mode m;
	struct bp_loop *loop;
	struct bp_conn *c;
	struct sink s = { 0 };
	int mine, peer, fd;
	bool want_prefer, napi;

	if (!bpt_mode_usable(text, &m))
		return;
	want_prefer = m.prefer || m.policy == BP_POLICY_SUSPEND;
	napi = m.policy == BP_POLICY_NAPI || m.policy == BP_POLICY_SUSPEND ||
	       (m.policy == BP_POLICY_SQPOLL && m.busy_usecs);
	fds_open(before);
	BPT_CHECK(bp_loop_create(&loop, &m) == 0, "%s: loop: %s", text, bp_last_error());
	if (m.backend == BP_BACKEND_EPOLL) {
		struct epoll_params p;

		fd = new_fd(before, "anon_inode:[eventpoll]");
		memset(&p, 0xff, sizeof(p));
		BPT_CHECK(ioctl(fd, EPIOCGPARAMS, &p) == 0, "%s: EPIOCGPARAMS: %s", text, strerror(errno));
		BPT_CHECK(p.prefer_busy_poll == want_prefer, "%s: the epoll instance has prefer_busy_poll %u, want %u", text,
			  p.prefer_busy_poll, want_prefer);
		BPT_CHECK(p.busy_poll_usecs == (napi ? m.busy_usecs : 0u) && p.busy_poll_budget == (napi ? m.budget : 0u),
			  "%s: the epoll instance busy polls %u us, budget %u; want %u us, budget %u", text,
			  p.busy_poll_usecs, p.busy_poll_budget, napi ? m.busy_usecs : 0u, napi ? m.budget : 0u);
		printf("ok   %-40s EPIOCGPARAMS: usecs %u budget %u prefer %u\n", text, p.busy_poll_usecs,
		       p.busy_poll_budget, p.prefer_busy_poll);
	} else {
		char v[64];

		fd = new_fd(before, "anon_inode:[io_uring]");
		BPT_CHECK(fdinfo_value(fd, "NAPI", v, sizeof(v)), "%s: the ring's fdinfo has no NAPI line", text);
		BPT_CHECK(!strcmp(v, napi ? "enabled" : "disabled"), "%s: ring NAPI %s, want %s", text, v,
			  napi ? "enabled" : "disabled");
		if (napi) {
			BPT_CHECK(fdinfo_value(fd, "napi_prefer_busy_poll", v, sizeof(v)),
				  "%s: the ring's fdinfo has no napi_prefer_busy_poll line", text);
			BPT_CHECK(!strcmp(v, want_prefer ? "true" : "false"), "%s: ring napi_prefer_busy_poll %s, want %s",
				  text, v, want_prefer ? "true" : "false");
		}
		printf("ok   %-40s ring fdinfo: NAPI %s%s%s\n", text, napi ? "enabled" : "disabled",
		       napi ? ", prefer " : "", napi ? v : "");
	}
	/* The sockets themselves never get it: prefer is per epoll instance or ring. */
	tcp_pair(&mine, &peer);
	BPT_CHECK(bp_conn_adopt(loop, mine, &sink_ops, &s, &c) == 0, "%s: adopt: %s", text, bp_last_error());
	BPT_CHECK(prefer_of(bp_conn_fd(c)) == 0, "%s: a connection's socket has SO_PREFER_BUSY_POLL set", text);
	bp_conn_close(c);
	close(peer);
	bp_loop_destroy(loop);
}

/* ---- 2. hybrid: polls within the period, then blocks ---- */

#define HYBRID_PERIOD_US 100000

static uint64_t thread_nvcsw(void)
{
	struct rusage ru;

	BPT_CHECK(getrusage(RUSAGE_THREAD, &ru) == 0, "getrusage: %s", strerror(errno));
	return (uint64_t)ru.ru_nvcsw;
}

static void timer_flag(struct bp_loop *loop, void *arg)
{
	*(bool *)arg = true;
}

static void post_flag(struct bp_loop *loop, void *arg)
{
	*(bool *)arg = true;
}

/*
 * Direct reads (core/loop.c). Bounds, each checked on its own:
 * - an idle connection (nothing came, nothing sent) is never read directly;
 * - one that got a byte is read directly at most its policy's bound of misses in a
 *   row, then only through epoll (it costs nothing for ever after);
 * - a hot connection read directly never keeps epoll from the rest: idle connections'
 *   bytes, a new connection on a listener, posted work (the wake fd) and a timer are all
 *   served beside it (the run bound);
 * - napi: SO_BUSY_POLL is set on a connection read directly, so its read busy polls;
 * - with more than 4 connections nothing is read directly.
 */
#define DIRECT_IDLE 3

static void accept_flag(struct bp_listener *l, int fd, void *arg)
{
	*(int *)arg = fd;
}

static int busy_poll_of(int fd)
{
	int v = -1;
	socklen_t l = sizeof(v);

	BPT_CHECK(getsockopt(fd, SOL_SOCKET, SO_BUSY_POLL, &v, &l) == 0, "getsockopt(SO_BUSY_POLL): %s",
		  strerror(errno));
	return v;
}

/* run_idle - n passes that find nothing (timeout 0); returns the direct reads they tried. */
static uint64_t run_idle(struct bp_loop *loop, int n, const char *text)
{
	uint64_t before = bp_loop_counters(loop)->direct_tried;

	for (int i = 0; i < n; i++)
		BPT_CHECK(bp_loop_run_once(loop, 0) >= 0, "%s: run: %s", text, bp_last_error());
	return bp_loop_counters(loop)->direct_tried - before;
}

static void direct_reads(const char *text, bool on, int want_busy_poll)
{
	struct bp_mode m;
	struct bp_loop *loop;
	struct bp_conn *hot;
	struct bp_listener *l;
	struct sink s[1 + DIRECT_IDLE] = { 0 }, fifth = { 0 };
	struct bp_timer t = { 0 };
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int peer[1 + DIRECT_IDLE], mine, newcomer, accepted = -1;
	size_t hot_sent = 50; /* byte_in's, each in before it returns */
	bool fired = false, posted = false, all;
	uint64_t deadline, tried, later;
	const struct bp_loop_counters *c;

	if (!bpt_mode_usable(text, &m))
		return;
	BPT_CHECK(bp_loop_create(&loop, &m) == 0, "%s: loop: %s", text, bp_last_error());
	for (int i = 0; i <= DIRECT_IDLE; i++) {
		tcp_pair(&mine, &peer[i]);
		BPT_CHECK(bp_conn_adopt(loop, mine, &sink_ops, &s[i], i ? NULL : &hot) == 0, "%s: adopt: %s", text,
			  bp_last_error());
	}
	BPT_CHECK(bp_listener_create(loop, (struct sockaddr *)&a, sizeof(a), accept_flag, &accepted, &l) == 0,
		  "%s: listener: %s", text, bp_last_error());

	/* idle connections, nothing in or out: never read directly */
	tried = run_idle(loop, 100, text);
	BPT_CHECK(tried == 0, "%s: %llu direct reads tried in 100 passes over %d connections that never had a "
		  "byte: idle connections are read directly", text, (unsigned long long)tried, 1 + DIRECT_IDLE);

	/* the hot one: a byte on every pass, and still the rest is served */
	for (int i = 0; i < 50; i++)
		byte_in(loop, peer[0], &s[0], text);
	for (int i = 1; i <= DIRECT_IDLE; i++)
		BPT_CHECK(send(peer[i], "y", 1, 0) == 1, "send: %s", strerror(errno));
	a.sin_port = htons(bp_listener_port(l));
	newcomer = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	BPT_CHECK(newcomer >= 0 && connect(newcomer, (struct sockaddr *)&a, sizeof(a)) == 0, "connect: %s",
		  strerror(errno));
	BPT_CHECK(bp_timer_start(loop, &t, 1000, timer_flag, &fired) == 0, "timer");
	/* posted work comes through the wake fd, which only epoll reports */
	BPT_CHECK(bp_loop_post(loop, post_flag, &posted) == 0, "post: %s", bp_last_error());
	deadline = bp_now_ns() + 30000000000ull;
	do {
		BPT_CHECK(send(peer[0], "x", 1, 0) == 1, "send: %s", strerror(errno));
		hot_sent++;
		BPT_CHECK(bp_loop_run_once(loop, -1) >= 0, "%s: run: %s", text, bp_last_error());
		all = fired && posted && accepted >= 0;
		for (int i = 1; i <= DIRECT_IDLE; i++)
			all = all && s[i].got;
	} while (!all && bp_now_ns() < deadline);
	BPT_CHECK(all, "%s: in 30 s beside a hot connection: timer %s, posted work %s, new connection %s, idle "
		  "connections got %zu %zu %zu bytes: direct reads starved them", text, fired ? "fired" : "never fired",
		  posted ? "ran" : "never ran", accepted >= 0 ? "accepted" : "never accepted", s[1].got, s[2].got,
		  s[3].got);
	c = bp_loop_counters(loop);
	if (on)
		BPT_CHECK(c->direct_hit > 0 && c->direct_tried >= c->direct_hit,
			  "%s: %llu direct reads tried, %llu hit: the hot connection was never read directly", text,
			  (unsigned long long)c->direct_tried, (unsigned long long)c->direct_hit);
	else
		BPT_CHECK(c->direct_tried == 0, "%s: direct=0 yet %llu direct reads tried", text,
			  (unsigned long long)c->direct_tried);
	BPT_CHECK(busy_poll_of(bp_conn_fd(hot)) == want_busy_poll, "%s: SO_BUSY_POLL %d on the hot connection, want %d",
		  text, busy_poll_of(bp_conn_fd(hot)), want_busy_poll);

	/* every byte of the hot one in first (on a loaded machine loopback may deliver late) */
	deadline = bp_now_ns() + 30000000000ull;
	while (s[0].got < hot_sent && bp_now_ns() < deadline)
		BPT_CHECK(bp_loop_run_once(loop, 1000) >= 0, "%s: run: %s", text, bp_last_error());
	BPT_CHECK(s[0].got == hot_sent, "%s: the hot connection got %zu of %zu bytes in 30 s", text, s[0].got,
		  hot_sent);
	/* all quiet again: a few misses per connection that had bytes, then none for good */
	tried = run_idle(loop, 600, text);
	later = run_idle(loop, 600, text);
	BPT_CHECK(tried <= (1 + DIRECT_IDLE) * 64, "%s: %llu direct reads tried in 600 quiet passes over %d "
		  "connections: no bound on misses per connection", text, (unsigned long long)tried, 1 + DIRECT_IDLE);
	BPT_CHECK(later == 0, "%s: still %llu direct reads tried in 600 more quiet passes: connections that stopped "
		  "paying are read directly for ever", text, (unsigned long long)later);
	printf("ok   %-40s every connection, a new one, posted work and the timer served; %llu direct reads tried, "
	       "%llu hit, %llu when quiet then none; SO_BUSY_POLL %d\n", text,
	       (unsigned long long)c->direct_tried, (unsigned long long)c->direct_hit, (unsigned long long)tried,
	       want_busy_poll);

	/* a fifth connection: epoll's one call beats five reads, none is read directly */
	BPT_CHECK(bp_conn_adopt(loop, accepted, &sink_ops, &fifth, NULL) == 0, "%s: adopt: %s", text,
		  bp_last_error());
	tried = c->direct_tried;
	for (int i = 0; i < 50; i++)
		byte_in(loop, peer[0], &s[0], text);
	BPT_CHECK(c->direct_tried == tried, "%s: %llu direct reads tried over 5 connections", text,
		  (unsigned long long)(c->direct_tried - tried));
	printf("ok   %-40s 5 connections: none read directly\n", text);
	close(newcomer);
	for (int i = 0; i <= DIRECT_IDLE; i++)
		close(peer[i]);
	bp_loop_destroy(loop);
}

/*
 * refuse_busy_poll - from now on this thread's setsockopt(SOL_SOCKET, SO_BUSY_POLL) fails
 * with EPERM, as kernels before 6.18 refuse it without CAP_NET_ADMIN above
 * net.core.busy_read (this one lets anybody set it): a seccomp filter.
 */
static void refuse_busy_poll(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_setsockopt, 0, 5),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SOL_SOCKET, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SO_BUSY_POLL, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	BPT_CHECK(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 && prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0,
		  "seccomp filter: %s", strerror(errno));
}

/*
 * direct_refused - napi where SO_BUSY_POLL is refused: a read would not busy poll, so
 * the connection is left to epoll, never read directly, and still served. In a child,
 * which the filter that refuses it stays in.
 */
static void direct_refused(const char *text)
{
	struct bp_mode m;
	pid_t pid;
	int st = 0;

	if (!bpt_mode_usable(text, &m))
		return;
	fflush(NULL);
	pid = fork();
	BPT_CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		struct sink s = { 0 };
		struct bp_conn *c;
		struct bp_loop *loop;
		int mine, peer;

		refuse_busy_poll();
		BPT_CHECK(bp_loop_create(&loop, &m) == 0, "%s: loop: %s", text, bp_last_error());
		tcp_pair(&mine, &peer);
		BPT_CHECK(bp_conn_adopt(loop, mine, &sink_ops, &s, &c) == 0, "%s: adopt: %s", text, bp_last_error());
		for (int i = 0; i < 50; i++)
			byte_in(loop, peer, &s, text);
		BPT_CHECK(busy_poll_of(bp_conn_fd(c)) == 0, "%s: SO_BUSY_POLL %d though refused", text,
			  busy_poll_of(bp_conn_fd(c)));
		BPT_CHECK(bp_loop_counters(loop)->direct_tried == 0,
			  "%s: SO_BUSY_POLL refused, yet %llu direct reads tried: a read that cannot busy poll only "
			  "delays epoll's", text, (unsigned long long)bp_loop_counters(loop)->direct_tried);
		printf("ok   %-40s SO_BUSY_POLL refused: 50 bytes served by epoll, none read directly\n", text);
		fflush(stdout);
		_exit(0);
	}
	BPT_CHECK(waitpid(pid, &st, 0) == pid, "waitpid: %s", strerror(errno));
	BPT_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: the unprivileged child failed (status %d)", text, st);
}

static void hybrid(const char *backend)
{
	char text[64];
	struct bp_mode m;
	struct bp_loop *loop;
	struct bp_loop_counters c0, c1, c2;
	struct bp_timer guard = { 0 };
	struct sink s = { 0 };
	uint64_t t_act, v1, v2;
	int peer;
	bool fired = false;

	snprintf(text, sizeof(text), "%s:hybrid,period=%u", backend, HYBRID_PERIOD_US);
	if (!bpt_mode_usable(text, &m))
		return;
	loop = loop_with_peer(text, &m, &s, &peer);
	byte_in(loop, peer, &s, text); /* work arrives */
	t_act = bpt_now_ns();
	/*
	 * Within the first quarter of the period every wait is a poll. The guard
	 * timer ends a wait that blocks when it should not have (it must not hang).
	 * It is due after the period: a timer due within the period makes hybrid
	 * poll by itself (the open-loop rule), which would hide a period ignored.
	 */
	BPT_CHECK(bp_timer_start(loop, &guard, 2 * HYBRID_PERIOD_US, timer_flag, &fired) == 0, "timer");
	c0 = *bp_loop_counters(loop);
	while (bpt_now_ns() < t_act + HYBRID_PERIOD_US * 1000ull / 4 && !fired)
		BPT_CHECK(bp_loop_run_once(loop, -1) >= 0, "%s: run: %s", text, bp_last_error());
	c1 = *bp_loop_counters(loop);
	BPT_CHECK(c1.sleep_ns == c0.sleep_ns && !fired,
		  "%s: a wait that could sleep %llu ns within the period after work came: it should poll", text,
		  (unsigned long long)(c1.sleep_ns - c0.sleep_ns));
	BPT_CHECK(c1.empty_polls > c0.empty_polls && c1.poll_ns > c0.poll_ns,
		  "%s: no empty poll (%llu) within the period after work came", text,
		  (unsigned long long)(c1.empty_polls - c0.empty_polls));
	/* Then, with nothing more, it blocks: until the timer, sleeping in the kernel. */
	bp_timer_stop(loop, &guard);
	fired = false;
	BPT_CHECK(bp_timer_start(loop, &guard, 2 * HYBRID_PERIOD_US, timer_flag, &fired) == 0, "timer");
	v1 = thread_nvcsw();
	while (!fired)
		BPT_CHECK(bp_loop_run_once(loop, -1) >= 0, "%s: run: %s", text, bp_last_error());
	v2 = thread_nvcsw();
	c2 = *bp_loop_counters(loop);
	BPT_CHECK(c2.sleep_ns > c1.sleep_ns, "%s: no wait that could sleep once the period had passed: it spun",
		  text);
	BPT_CHECK(v2 > v1, "%s: the loop thread never blocked (no voluntary context switch) once the period had "
		  "passed", text);
	printf("ok   %-40s %llu polls within the period, then blocked (%llu ns in waits that could sleep, %llu "
	       "voluntary switches)\n", text, (unsigned long long)(c1.empty_polls - c0.empty_polls),
	       (unsigned long long)(c2.sleep_ns - c1.sleep_ns), (unsigned long long)(v2 - v1));
	close(peer);
	bp_loop_destroy(loop);
}

/* ---- 2b. block: every wait sleeps ---- */

static void blocks(const char *text)
{
	struct bp_mode m;
	struct bp_loop *loop;
	struct bp_loop_counters c0, c1, c2;
	struct bp_timer t = { 0 };
	struct sink s = { 0 };
	uint64_t v0, v1;
	int peer;
	bool fired = false;

	if (!bpt_mode_usable(text, &m))
		return;
	loop = loop_with_peer(text, &m, &s, &peer);
	/* Bytes coming: a wait that could sleep, returning with work. */
	c0 = *bp_loop_counters(loop);
	byte_in(loop, peer, &s, text);
	c1 = *bp_loop_counters(loop);
	BPT_CHECK(c1.wakeups > c0.wakeups && c1.poll_ns == c0.poll_ns,
		  "%s: bytes that came were %llu wake-ups, %llu ns polling: a blocking wait must return with them",
		  text, (unsigned long long)(c1.wakeups - c0.wakeups), (unsigned long long)(c1.poll_ns - c0.poll_ns));
	BPT_CHECK(c1.syscalls >= c0.syscalls + (c1.waits - c0.waits),
		  "%s: %llu waits counted only %llu syscalls", text, (unsigned long long)(c1.waits - c0.waits),
		  (unsigned long long)(c1.syscalls - c0.syscalls));
	/* Nothing to do until a timer: it sleeps, it does not poll. */
	BPT_CHECK(bp_timer_start(loop, &t, 50000, timer_flag, &fired) == 0, "timer");
	v0 = thread_nvcsw();
	while (!fired)
		BPT_CHECK(bp_loop_run_once(loop, -1) >= 0, "%s: run: %s", text, bp_last_error());
	v1 = thread_nvcsw();
	c2 = *bp_loop_counters(loop);
	BPT_CHECK(c2.poll_ns == c1.poll_ns && c2.sleep_ns > c1.sleep_ns && v1 > v0,
		  "%s: waiting for a timer polled %llu ns, could sleep %llu ns, %llu voluntary switches: it must sleep",
		  text, (unsigned long long)(c2.poll_ns - c1.poll_ns), (unsigned long long)(c2.sleep_ns - c1.sleep_ns),
		  (unsigned long long)(v1 - v0));
	BPT_CHECK(c2.syscalls >= c1.syscalls + (c2.waits - c1.waits), "%s: a wait for a timer was no syscall", text);
	printf("ok   %-40s a wait with work is a wake-up; a wait for a timer sleeps (%llu wait%s, %llu voluntary "
	       "switch%s)\n", text, (unsigned long long)(c2.waits - c1.waits), c2.waits - c1.waits == 1 ? "" : "s",
	       (unsigned long long)(v1 - v0), v1 - v0 == 1 ? "" : "es");
	close(peer);
	bp_loop_destroy(loop);
}

/* ---- 3. sqpoll: the kernel's SQ thread ---- */

static int sq_threads(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	char want[32];
	int n = 0;

	BPT_CHECK(d, "/proc/self/task: %s", strerror(errno));
	snprintf(want, sizeof(want), "iou-sqp-%d", (int)getpid());
	while ((e = readdir(d))) {
		char path[300], comm[64] = "";
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue; /* a thread that just ended */
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = 0;
		fclose(f);
		n += !strcmp(comm, want);
	}
	closedir(d);
	return n;
}

static void sqpoll(const char *text)
{
	struct bp_mode m;
	struct bp_loop *loop;
	bool sq;

	if (!bpt_mode_usable(text, &m))
		return;
	sq = m.policy == BP_POLICY_SQPOLL;
	BPT_CHECK(BPT_WAIT_UNTIL(sq_threads() == 0, 30000), "an SQ thread of an earlier ring is still there");
	BPT_CHECK(bp_loop_create(&loop, &m) == 0, "%s: loop: %s", text, bp_last_error());
	/* The SQ thread names itself once it runs. */
	if (sq)
		BPT_WAIT_UNTIL(sq_threads() == 1, 30000);
	BPT_CHECK(sq_threads() == (sq ? 1 : 0), "%s: %d kernel SQ threads (iou-sqp-%d), want %d", text, sq_threads(),
		  (int)getpid(), sq ? 1 : 0);
	bp_loop_destroy(loop);
	BPT_CHECK(BPT_WAIT_UNTIL(sq_threads() == 0, 30000), "%s: the SQ thread outlived its loop", text);
	printf("ok   %-40s %s\n", text, sq ? "one kernel SQ thread while the loop lives" : "no SQ thread");
}

/* ---- on a veth test bed: an echo server in side b, clients in side a ---- */

#define ROUNDS 2000
#define PLACE_CONNS 16
#define SERVER_LOOPS 2

static struct bp_testbed tb;

struct server {
	struct sockaddr_in addr;
	struct bp_loop *loops[SERVER_LOOPS];
	struct bp_loop_thread *threads[SERVER_LOOPS];
	int nloops;
	struct bp_placer *placer;
	struct bp_listener *listener;
	atomic_int accepted;
	/* per loop: the NAPI ids its connections arrived on (written on that loop's thread only) */
	uint32_t ids[SERVER_LOOPS][PLACE_CONNS];
	int nids[SERVER_LOOPS];
	uint32_t loop_ids[SERVER_LOOPS][4]; /* bp_loop_napi_ids, read on each loop at the end */
	size_t n_loop_ids[SERVER_LOOPS];
};

static int loop_index(struct server *s, struct bp_loop *loop)
{
	for (int i = 0; i < s->nloops; i++)
		if (s->loops[i] == loop)
			return i;
	BPT_CHECK(0, "a loop the server does not know");
	return -1;
}

static size_t echo_recv(struct bp_conn *c, const uint8_t *data, size_t len)
{
	struct server *s = bp_loop_data(bp_conn_loop(c));
	int li = loop_index(s, bp_conn_loop(c));
	uint32_t id = bp_conn_napi_id(c);
	bool seen = false;

	for (int i = 0; i < s->nids[li]; i++)
		seen |= s->ids[li][i] == id;
	if (!seen && s->nids[li] < PLACE_CONNS)
		s->ids[li][s->nids[li]++] = id;
	BPT_CHECK(bp_conn_send(c, data, len) == 0, "echo: %s", bp_last_error());
	return len;
}

static void echo_close(struct bp_conn *c, int err, const char *sc)
{
}

static const struct bp_conn_ops echo_ops = { .on_recv = echo_recv, .on_close = echo_close };

static void adopt_echo(struct bp_loop *loop, int fd, void *arg)
{
	BPT_CHECK(bp_conn_adopt(loop, fd, &echo_ops, NULL, NULL) == 0, "adopt: %s", bp_last_error());
}

static void on_accept(struct bp_listener *l, int fd, void *arg)
{
	struct server *s = arg;

	atomic_fetch_add(&s->accepted, 1);
	if (s->placer)
		BPT_CHECK(bp_placer_dispatch(s->placer, fd, adopt_echo, s) >= 0, "place: %s", bp_last_error());
	else
		adopt_echo(bp_listener_loop(l), fd, s);
}

static int server_setup(struct bp_loop *loop, void *arg)
{
	struct server *s = arg;
	int ret = bp_testbed_enter(&tb, 1), idx = s->nloops++;

	if (ret)
		return ret;
	s->loops[idx] = loop;
	bp_loop_set_data(loop, s);
	if (idx)
		return 0;
	return bp_listener_create(loop, (struct sockaddr *)&s->addr, sizeof(s->addr), on_accept, s, &s->listener);
}

static void server_teardown(struct bp_loop *loop, void *arg)
{
	struct server *s = arg;
	int li = loop_index(s, loop);

	s->n_loop_ids[li] = bp_loop_napi_ids(loop, s->loop_ids[li], 4);
}

static void server_up(struct server *s, const struct bp_mode *m, int nloops, uint16_t port)
{
	memset(s, 0, sizeof(*s));
	s->addr.sin_family = AF_INET;
	s->addr.sin_port = htons(port);
	BPT_CHECK(inet_pton(AF_INET, tb.addr[1], &s->addr.sin_addr) == 1, "addr");
	for (int i = 0; i < nloops; i++)
		BPT_CHECK(bp_loop_thread_start(&s->threads[i], m, 1, server_setup, s) == 0, "server loop: %s",
			  bp_last_error());
	if (nloops > 1)
		BPT_CHECK(bp_placer_create(&s->placer, s->loops, (size_t)nloops) == 0, "placer: %s", bp_last_error());
}

static void server_down(struct server *s)
{
	for (int i = s->nloops - 1; i >= 0; i--)
		bp_loop_thread_join(s->threads[i], server_teardown, s);
	if (s->placer)
		bp_placer_destroy(s->placer);
}

/* Clients in side a, on this thread: n connections, rounds 1-byte round trips each. */
struct cconn {
	int rounds, want;
	bool done;
};

static size_t client_recv(struct bp_conn *c, const uint8_t *data, size_t len)
{
	struct cconn *cc = bp_conn_data(c);

	for (size_t i = 0; i < len; i++)
		if (++cc->rounds == cc->want)
			cc->done = true;
		else
			BPT_CHECK(bp_conn_send(c, "r", 1) == 0, "send: %s", bp_last_error());
	return len;
}

static void client_connect(struct bp_conn *c)
{
	BPT_CHECK(bp_conn_send(c, "r", 1) == 0, "send: %s", bp_last_error());
}

static void client_close(struct bp_conn *c, int err, const char *sc)
{
	BPT_CHECK(0, "client connection closed: %s: %s", sc, strerror(-err));
}

static const struct bp_conn_ops client_ops = {
	.on_recv = client_recv, .on_connect = client_connect, .on_close = client_close,
};

static void clients(const struct server *s, int n, int rounds)
{
	struct cconn cc[PLACE_CONNS] = { 0 };
	struct bp_conn *conn[PLACE_CONNS];
	struct bp_mode m;
	struct bp_loop *loop;
	uint64_t end = bpt_now_ns() + 20000000000ull;
	int home, done = 0;

	BPT_CHECK(n <= PLACE_CONNS, "too many clients");
	BPT_CHECK(bpt_mode_usable("epoll:block", &m), "epoll:block");
	BPT_CHECK(bp_netns_save(&home) == 0 && bp_testbed_enter(&tb, 0) == 0, "enter a: %s", bp_last_error());
	BPT_CHECK(bp_pin_thread(0) == 0, "pin: %s", bp_last_error());
	BPT_CHECK(bp_loop_create(&loop, &m) == 0, "client loop: %s", bp_last_error());
	for (int i = 0; i < n; i++) {
		cc[i].want = rounds;
		BPT_CHECK(bp_conn_connect(loop, (const struct sockaddr *)&s->addr, sizeof(s->addr), SOCK_STREAM,
					  &client_ops, &cc[i], &conn[i]) == 0, "connect: %s", bp_last_error());
	}
	while (done < n) {
		BPT_CHECK(bpt_now_ns() < end, "round trips stuck: %d of %d connections done", done, n);
		BPT_CHECK(bp_loop_run_once(loop, 100000) >= 0, "client loop: %s", bp_last_error());
		done = 0;
		for (int i = 0; i < n; i++)
			done += cc[i].done;
	}
	for (int i = 0; i < n; i++)
		bp_conn_close(conn[i]);
	bp_loop_destroy(loop);
	BPT_CHECK(bp_netns_restore(home) == 0, "restore netns: %s", bp_last_error());
}

static void napi_of_side(int side, struct bp_napi_info *info)
{
	uint32_t ids[4];
	int home, n = bp_testbed_napi_ids(&tb, side, ids, 4);

	BPT_CHECK(n == 1, "side %d has %d NAPIs, want 1", side, n);
	BPT_CHECK(bp_netns_save(&home) == 0 && bp_testbed_enter(&tb, side) == 0, "enter: %s", bp_last_error());
	BPT_CHECK(bp_napi_get(ids[0], info) == 0, "napi-get %u: %s", ids[0], bp_last_error());
	BPT_CHECK(bp_netns_restore(home) == 0, "restore: %s", bp_last_error());
}

/* ---- 4. epoll:suspend on a real NAPI ---- */

#define SUSPEND_MODE "epoll:suspend,defer=7,gro-flush=30000,suspend=3000000"

static void suspend(void)
{
	struct bp_mode m;
	struct bp_napi_info before, after;
	struct server s;
	uint64_t a0, b0, a1, b1;

	if (!bpt_mode_usable(SUSPEND_MODE, &m))
		return;
	napi_of_side(1, &before);
	BPT_CHECK(before.defer_hard_irqs == 0 && before.gro_flush_timeout_ns == 0 && before.irq_suspend_timeout_ns == 0,
		  "a fresh bed's server NAPI %u has defer %u gro-flush %llu suspend %llu, want 0", before.id,
		  before.defer_hard_irqs, (unsigned long long)before.gro_flush_timeout_ns,
		  (unsigned long long)before.irq_suspend_timeout_ns);
	a0 = bpt_testbed_busy_poll_rx(&tb, 0);
	b0 = bpt_testbed_busy_poll_rx(&tb, 1);
	/*
	 * Eight flows at once keep the server busy, so its epoll_wait finds events in
	 * its prefer-busy-poll pass and IRQs stay suspended (napi.rst); one flow's
	 * ping-pong would find none each time and fall back to interrupts.
	 */
	server_up(&s, &m, 1, 7100);
	clients(&s, 8, ROUNDS / 8);
	/* The server saw the NAPI id with its first bytes: that NAPI now has the mode's settings. */
	napi_of_side(1, &after);
	BPT_CHECK(after.defer_hard_irqs == m.defer_hard_irqs && after.gro_flush_timeout_ns == m.gro_flush_ns &&
			  after.irq_suspend_timeout_ns == m.irq_suspend_ns,
		  "%s: the server's NAPI %u has defer %u gro-flush %llu suspend %llu, want the mode's %u %llu %llu",
		  SUSPEND_MODE, after.id, after.defer_hard_irqs, (unsigned long long)after.gro_flush_timeout_ns,
		  (unsigned long long)after.irq_suspend_timeout_ns, m.defer_hard_irqs,
		  (unsigned long long)m.gro_flush_ns, (unsigned long long)m.irq_suspend_ns);
	server_down(&s);
	a1 = bpt_testbed_busy_poll_rx(&tb, 0);
	b1 = bpt_testbed_busy_poll_rx(&tb, 1);
	BPT_CHECK(b1 - b0 >= ROUNDS / 4, "%s: the server's BusyPollRxPackets rose by %llu in %d round trips on 8 flows",
		  SUSPEND_MODE, (unsigned long long)(b1 - b0), ROUNDS);
	BPT_CHECK(a1 == a0, "the blocking client's BusyPollRxPackets rose by %llu", (unsigned long long)(a1 - a0));
	printf("ok   %s: NAPI %u set to the mode's values when first seen (from 0); server BusyPollRxPackets "
	       "+%llu, client +0\n", SUSPEND_MODE, after.id, (unsigned long long)(b1 - b0));
}

/* ---- 5. placement with two NAPIs ---- */

static void placement(void)
{
	struct bp_mode m;
	struct server s;
	uint32_t ids[4];
	int n = bp_testbed_napi_ids(&tb, 1, ids, 4), owner[2] = { -1, -1 };

	BPT_CHECK(n == 2, "a bed with two queues has %d NAPIs on the server end", n);
	BPT_CHECK(bpt_mode_usable("epoll:napi,usecs=50,budget=8", &m), "epoll:napi");
	server_up(&s, &m, SERVER_LOOPS, 7200);
	clients(&s, PLACE_CONNS, 20);
	server_down(&s);
	BPT_CHECK(atomic_load(&s.accepted) == PLACE_CONNS, "%d accepted", atomic_load(&s.accepted));
	for (int li = 0; li < SERVER_LOOPS; li++) {
		BPT_CHECK(s.nids[li] <= 1, "loop %d served connections of %d NAPI ids (%u, %u): busy polling one epoll "
			  "instance covers one", li, s.nids[li], s.ids[li][0], s.ids[li][1]);
		BPT_CHECK(s.n_loop_ids[li] == (size_t)s.nids[li], "loop %d tracked %zu NAPI ids, its connections %d", li,
			  s.n_loop_ids[li], s.nids[li]);
		for (int k = 0; k < s.nids[li]; k++)
			for (int j = 0; j < 2; j++)
				if (s.ids[li][k] == ids[j])
					owner[j] = li;
	}
	BPT_CHECK(owner[0] >= 0 && owner[1] >= 0,
		  "16 connections arrived on one NAPI only (%u on loop %d, %u on loop %d): veth spreads flows over its "
		  "queues by hash", ids[0], owner[0], ids[1], owner[1]);
	BPT_CHECK(owner[0] != owner[1], "both NAPI ids (%u, %u) on loop %d", ids[0], ids[1], owner[0]);
	printf("ok   placement: 16 connections over NAPIs %u and %u, each NAPI on its own loop (%d, %d)\n", ids[0],
	       ids[1], owner[0], owner[1]);
}

int main(void)
{
	static const char *const prefer_modes[] = {
		"epoll:block", "epoll:spin", "epoll:hybrid", "epoll:napi,usecs=50,budget=8",
		"epoll:napi,usecs=50,budget=8,prefer", "epoll:suspend", "uring:block", "uring:napi,usecs=50",
		"uring:napi,usecs=50,prefer", "uring:sqpoll,napi=50",
	};
	static const char *const sq_modes[] = { "uring:block", "uring:spin", "uring:sqpoll", "uring:sqpoll,napi=50" };
	char name[32];

	for (size_t i = 0; i < sizeof(prefer_modes) / sizeof(prefer_modes[0]); i++)
		prefer(prefer_modes[i]);
	blocks("epoll:block");
	blocks("uring:block");
	blocks("uring:block,setup=plain");
	blocks("epoll:napi,usecs=50,budget=8");
	blocks("uring:napi,usecs=50");
	hybrid("epoll");
	hybrid("uring");
	direct_reads("epoll:spin", true, 0);
	direct_reads("epoll:napi,usecs=50,direct=1", true, 50);
	direct_reads("epoll:napi,usecs=50", false, 0); /* napi: off unless asked for */
	direct_reads("epoll:spin,direct=0", false, 0);
	direct_reads("epoll:hybrid,period=1000000", true, 0);
	direct_refused("epoll:napi,usecs=50,direct=1");
	for (size_t i = 0; i < sizeof(sq_modes) / sizeof(sq_modes[0]); i++)
		sqpoll(sq_modes[i]);

	if (!bpt_is_root()) {
		bpt_skip_part("epoll:suspend and placement on a veth test bed: not root (it creates network namespaces)");
		return bpt_exit_status();
	}
	bpt_testbed_name("tp", name, sizeof(name));
	bpt_testbed_guard(name);
	BPT_CHECK(bp_testbed_up(&tb, name, 1, false) == 0, "testbed: %s", bp_last_error());
	suspend();
	BPT_CHECK(bp_testbed_down(&tb) == 0, "testbed down: %s", bp_last_error());
	bpt_testbed_name("tq", name, sizeof(name));
	bpt_testbed_guard(name);
	BPT_CHECK(bp_testbed_up(&tb, name, 2, false) == 0, "testbed (2 queues): %s", bp_last_error());
	placement();
	BPT_CHECK(bp_testbed_down(&tb) == 0, "testbed down: %s", bp_last_error());
	printf("PASS\n");
	return bpt_exit_status();
}
