/* SPDX-License-Identifier: MIT */
/*
 * The io_uring backend's optional features, over loopback, asserting the engine's
 * counters and the kernel's own evidence (the ring's fdinfo):
 *
 *   multishot   at 15 flows a receive is armed well under once per 10 messages
 *               (bp_loop_counters.recv_arms), on both sides;
 *   direct      every conn's socket sits in its ring's registered file table,
 *               and leaves it when the conn closes;
 *   exhaustion  with a 4-buffer ring (BP_URING_BUFS=4x1024) 1 MiB messages echo
 *               intact, byte for byte, while the receives are re-armed many
 *               times (the ring ran dry), also to a user that consumes whole
 *               1000-byte units only; datagrams stay intact beside them;
 *   close       a conn closed with its multishot receive armed, one closed from
 *               inside its on_recv, one closed by the peer, one left to the
 *               loop's destroy: each peer sees the close, no slot is left over;
 *   fallback    BP_URING_FEATURES=none: bp_features says so, every message
 *               re-arms its receive, no socket is registered.
 *
 * The variants that need other environment variables run in a forked child,
 * which probes again (the probe is once per process).
 * Usage: integ_test_uring_features
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <busypoll/busypoll.h>

#include "bptest.h"

#define DEADLINE_NS (30ull * 1000000000ull)
#define MAX_FLOWS 16

/* ---- the kernel's evidence: which sockets sit in some ring's file table ---- */

static ino_t socket_inode(int fd)
{
	struct stat st;

	BPT_CHECK(fstat(fd, &st) == 0, "fstat: %s", strerror(errno));
	return st.st_ino;
}

/* Is "socket:[ino]" listed under UserFiles in the fdinfo of any io_uring fd of ours? */
static bool registered_anywhere(ino_t ino)
{
	char want[64], path[300], target[64], line[256];
	struct dirent *d;
	bool found = false;
	DIR *dir = opendir("/proc/self/fd");

	BPT_CHECK(dir, "opendir /proc/self/fd");
	snprintf(want, sizeof(want), "socket:[%llu]", (unsigned long long)ino);
	while (!found && (d = readdir(dir))) {
		ssize_t n;
		FILE *f;

		snprintf(path, sizeof(path), "/proc/self/fd/%s", d->d_name);
		n = readlink(path, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		if (strcmp(target, "anon_inode:[io_uring]"))
			continue;
		snprintf(path, sizeof(path), "/proc/self/fdinfo/%s", d->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f))
			if (strstr(line, want))
				found = true;
		fclose(f);
	}
	closedir(dir);
	return found;
}

/* ---- an echo server on its own loop thread ---- */

struct server {
	struct sockaddr_in addr;
	struct bp_listener *l;
	uint16_t udp_port;
	atomic_int conns, closed_clean;
	atomic_int close_next;          /* close the next conn that receives, from on_recv */
	struct bp_conn *conns_list[MAX_FLOWS];
	struct bp_loop_counters end;    /* read on the loop's thread at the join */
};

static size_t echo_recv(struct bp_conn *c, const uint8_t *data, size_t len)
{
	struct server *s = bp_loop_data(bp_conn_loop(c));

	BPT_CHECK(bp_conn_send(c, data, len) == 0, "echo send: %s", bp_last_error());
	if (atomic_exchange(&s->close_next, 0))
		bp_conn_close_after_send(c); /* peer closes: the client must see it */
	return len;
}

static void echo_close(struct bp_conn *c, int err, const char *syscall)
{
	struct server *s = bp_loop_data(bp_conn_loop(c));

	if (err == 0)
		atomic_fetch_add(&s->closed_clean, 1);
}

static const struct bp_conn_ops echo_ops = { .on_recv = echo_recv, .on_close = echo_close };

static void on_accept(struct bp_listener *l, int fd, void *arg)
{
	struct server *s = arg;
	int i = atomic_fetch_add(&s->conns, 1);

	BPT_CHECK(bp_conn_adopt(bp_listener_loop(l), fd, &echo_ops, NULL,
				i < MAX_FLOWS ? &s->conns_list[i] : NULL) == 0, "adopt: %s", bp_last_error());
}

static int server_setup(struct bp_loop *loop, void *arg)
{
	struct server *s = arg;
	struct sockaddr_in b;
	socklen_t bl = sizeof(b);
	int ufd, ret;

	bp_loop_set_data(loop, s);
	ret = bp_listener_create(loop, (struct sockaddr *)&s->addr, sizeof(s->addr), on_accept, s, &s->l);
	if (ret)
		return ret;
	s->addr.sin_port = htons(bp_listener_port(s->l));
	ufd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	b = s->addr;
	b.sin_port = 0;
	BPT_CHECK(ufd >= 0 && bind(ufd, (struct sockaddr *)&b, sizeof(b)) == 0, "udp bind");
	getsockname(ufd, (struct sockaddr *)&b, &bl);
	s->udp_port = ntohs(b.sin_port);
	return bp_conn_adopt(loop, ufd, &echo_ops, NULL, NULL);
}

static void server_end(struct bp_loop *loop, void *arg)
{
	((struct server *)arg)->end = *bp_loop_counters(loop);
}

static void server_start(struct server *s, const struct bp_mode *m, struct bp_loop_thread **t)
{
	memset(s, 0, sizeof(*s));
	s->addr.sin_family = AF_INET;
	s->addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	BPT_CHECK(bp_loop_thread_start(t, m, -1, server_setup, s) == 0, "server: %s", bp_last_error());
}

/* ---- the client: flows of request/echo rounds, patterns checked ---- */

struct flow {
	struct bp_conn *conn;
	size_t msg, got;
	int rounds, left;
	bool open, closed, peer_closed;
	bool close_in_recv;  /* close the conn from inside the next on_recv */
	size_t unit;         /* consume whole units only (the rest is presented again), 0: all */
};

static uint8_t pattern_at(size_t i, int round)
{
	return (uint8_t)(i * 131 + (size_t)round * 7 + 1);
}

static uint8_t *pattern(size_t len, int round)
{
	uint8_t *p = malloc(len ? len : 1);

	BPT_CHECK(p, "malloc");
	for (size_t i = 0; i < len; i++)
		p[i] = pattern_at(i, round);
	return p;
}

static void flow_send(struct flow *f)
{
	uint8_t *p = pattern(f->msg, f->rounds);

	BPT_CHECK(bp_conn_send(f->conn, p, f->msg) == 0, "send: %s", bp_last_error());
	free(p);
}

static size_t flow_recv(struct bp_conn *c, const uint8_t *data, size_t len)
{
	struct flow *f = bp_conn_data(c);

	if (f->close_in_recv) {
		f->closed = true;
		bp_conn_close(c);
		return len;
	}
	BPT_CHECK(f->got + len <= f->msg, "echo returned %zu bytes more than sent", f->got + len - f->msg);
	/* A framing user: leave the tail of a unit for later, it comes again in front. */
	if (f->unit && f->got + len < f->msg)
		len -= len % f->unit;
	for (size_t i = 0; i < len; i++)
		BPT_CHECK(data[i] == pattern_at(f->got + i, f->rounds),
			  "echo byte %zu of round %d is %u, want %u", f->got + i, f->rounds, data[i],
			  pattern_at(f->got + i, f->rounds));
	f->got += len;
	if (f->got == f->msg) {
		f->got = 0;
		f->rounds++;
		if (--f->left > 0)
			flow_send(f);
	}
	return len;
}

static void flow_connect(struct bp_conn *c)
{
	struct flow *f = bp_conn_data(c);

	f->open = true;
	flow_send(f);
}

static void flow_close(struct bp_conn *c, int err, const char *syscall)
{
	struct flow *f = bp_conn_data(c);

	BPT_CHECK(err == 0, "client conn closed: %s: %s", syscall, strerror(-err));
	f->peer_closed = true;
	f->closed = true;
}

static const struct bp_conn_ops flow_ops = {
	.on_recv = flow_recv, .on_connect = flow_connect, .on_close = flow_close,
};

static void run_until(struct bp_loop *loop, bool (*done)(void *), void *arg, const char *what)
{
	uint64_t start = bp_now_ns();

	while (!done(arg)) {
		BPT_CHECK(bp_loop_run_once(loop, 10000) >= 0, "%s: loop: %s", what, bp_last_error());
		BPT_CHECK(bp_now_ns() - start < DEADLINE_NS, "%s: no progress", what);
	}
}

struct flows {
	struct flow f[MAX_FLOWS];
	int n;
};

static bool flows_done(void *arg)
{
	struct flows *fl = arg;

	for (int i = 0; i < fl->n; i++)
		if (fl->f[i].left > 0 && !fl->f[i].closed)
			return false;
	return true;
}

static void flows_start(struct flows *fl, struct bp_loop *loop, const struct sockaddr_in *to, int n,
			size_t msg, int rounds)
{
	memset(fl, 0, sizeof(*fl));
	fl->n = n;
	for (int i = 0; i < n; i++) {
		fl->f[i].msg = msg;
		fl->f[i].left = rounds;
		BPT_CHECK(bp_conn_connect(loop, (const struct sockaddr *)to, sizeof(*to), SOCK_STREAM, &flow_ops,
					  &fl->f[i], &fl->f[i].conn) == 0, "connect: %s", bp_last_error());
	}
}

/* ---- UDP beside it ---- */

struct udp {
	struct bp_conn *conn;
	int round, rounds;
};

static size_t udp_len(int round)
{
	return 1 + (size_t)round * 97 % 1400;
}

static void udp_send(struct udp *u)
{
	uint8_t *p = pattern(udp_len(u->round), u->round);

	BPT_CHECK(bp_conn_send(u->conn, p, udp_len(u->round)) == 0, "udp send: %s", bp_last_error());
	free(p);
}

static size_t udp_recv(struct bp_conn *c, const uint8_t *data, size_t len)
{
	struct udp *u = bp_conn_data(c);

	BPT_CHECK(len == udp_len(u->round), "datagram %d has %zu bytes, want %zu", u->round, len, udp_len(u->round));
	for (size_t i = 0; i < len; i++)
		BPT_CHECK(data[i] == pattern_at(i, u->round), "datagram %d differs at byte %zu", u->round, i);
	if (++u->round < u->rounds)
		udp_send(u);
	return len;
}

static void udp_connect(struct bp_conn *c)
{
	udp_send(bp_conn_data(c));
}

static bool udp_done(void *arg)
{
	struct udp *u = arg;

	return u->round == u->rounds;
}

static const struct bp_conn_ops udp_ops = { .on_recv = udp_recv, .on_connect = udp_connect,
					    .on_close = flow_close };

/* ---- the scenarios ---- */

static struct bp_mode mode_of(const char *text)
{
	struct bp_mode m;

	if (!bpt_mode_usable(text, &m)) {
		printf("SKIP: %s is not usable here\n", text);
		exit(BPT_SKIP);
	}
	return m;
}

static int feature_status(const char *name)
{
	struct bp_feature f[16];
	size_t n = bp_features(f, 16);

	for (size_t i = 0; i < n && i < 16; i++)
		if (!strcmp(f[i].name, name))
			return f[i].status;
	BPT_CHECK(0, "bp_features lists no %s", name);
	return 0;
}

/* 15 flows of 64-byte rounds: the re-arm rate per message on both sides, and where each socket sits. */
static void scenario_rate(bool want_features)
{
	struct bp_mode m = mode_of("uring:block");
	const int flows = 15, rounds = 400;
	struct bp_loop_thread *st;
	struct server s;
	struct flows fl;
	struct bp_loop *loop;
	double srv_rate, cli_rate, msgs = (double)flows * rounds;
	int registered = 0;

	server_start(&s, &m, &st);
	BPT_CHECK(bp_loop_create(&loop, &m) == 0, "client loop: %s", bp_last_error());
	flows_start(&fl, loop, &s.addr, flows, 64, rounds);
	run_until(loop, flows_done, &fl, "15 flows");
	for (int i = 0; i < flows; i++)
		registered += registered_anywhere(socket_inode(bp_conn_fd(fl.f[i].conn)));
	cli_rate = (double)bp_loop_counters(loop)->recv_arms / msgs;
	for (int i = 0; i < flows; i++)
		bp_conn_close(fl.f[i].conn);
	bp_loop_destroy(loop);
	bp_loop_thread_join(st, server_end, &s);
	srv_rate = (double)s.end.recv_arms / msgs;
	printf("%-9s re-arms per message: client %.4f server %.4f; %d of %d client sockets registered\n",
	       want_features ? "features" : "fallback", cli_rate, srv_rate, registered, flows);
	if (want_features) {
		BPT_CHECK(cli_rate < 0.1 && srv_rate < 0.1, "multishot: re-arm rate client %.3f server %.3f, want < 0.1",
			  cli_rate, srv_rate);
		BPT_CHECK(registered == flows, "direct: %d of %d sockets in a ring's file table", registered, flows);
	} else {
		BPT_CHECK(cli_rate >= 0.9 && srv_rate >= 0.9, "fallback: re-arm rate client %.3f server %.3f, want ~1",
			  cli_rate, srv_rate);
		BPT_CHECK(registered == 0, "fallback: %d sockets registered", registered);
	}
}

/* A 4-buffer ring and 1 MiB messages both ways; datagrams beside them. */
static void scenario_exhaustion(void)
{
	struct bp_mode m = mode_of("uring:block");
	const int flows = 2, rounds = 6;
	struct sockaddr_in uaddr;
	struct bp_loop_thread *st;
	struct server s;
	struct flows fl;
	struct udp u = { .rounds = 200 };
	struct bp_loop *loop;
	uint64_t arms;

	BPT_CHECK(feature_status("multishot") == 0, "multishot is not in use with BP_URING_BUFS=4x1024");
	server_start(&s, &m, &st);
	BPT_CHECK(bp_loop_create(&loop, &m) == 0, "client loop: %s", bp_last_error());
	flows_start(&fl, loop, &s.addr, flows, 1u << 20, rounds);
	fl.f[1].unit = 1000; /* one flow keeps leftovers: lent bytes copied behind them */
	uaddr = s.addr;
	uaddr.sin_port = htons(s.udp_port);
	BPT_CHECK(bp_conn_connect(loop, (struct sockaddr *)&uaddr, sizeof(uaddr), SOCK_DGRAM, &udp_ops, &u, &u.conn) == 0,
		  "udp connect: %s", bp_last_error());
	run_until(loop, flows_done, &fl, "1 MiB rounds");
	run_until(loop, udp_done, &u, "datagrams");
	arms = bp_loop_counters(loop)->recv_arms;
	for (int i = 0; i < flows; i++)
		bp_conn_close(fl.f[i].conn);
	bp_conn_close(u.conn);
	bp_loop_destroy(loop);
	bp_loop_thread_join(st, server_end, &s);
	printf("exhaustion: %d flows x %d rounds of 1 MiB echoed intact, %d datagrams; receives armed: client %llu server %llu\n",
	       flows, rounds, u.rounds, (unsigned long long)arms, (unsigned long long)s.end.recv_arms);
	/* Beyond one arm per conn (and the datagram socket's, one per datagram): the ring ran dry. */
	BPT_CHECK(arms > (uint64_t)(flows + u.rounds) + 10, "client: %llu receives armed: the ring never ran dry",
		  (unsigned long long)arms);
	BPT_CHECK(s.end.recv_arms > (uint64_t)(flows + u.rounds) + 10,
		  "server: %llu receives armed: the ring never ran dry", (unsigned long long)s.end.recv_arms);
}

struct close_wait {
	struct server *s;
	int want;
	struct flow *peer;
};

static bool closes_seen(void *arg)
{
	struct close_wait *w = arg;

	return atomic_load(&w->s->closed_clean) >= w->want && (!w->peer || w->peer->peer_closed);
}

/* One more round on an idle flow. */
static void flow_again(struct flow *f)
{
	f->left = 1;
	flow_send(f);
}

/* Conns go away with their multishot receives armed, four ways. */
static void scenario_close(void)
{
	struct bp_mode m = mode_of("uring:block");
	struct bp_loop_thread *st;
	struct server s;
	struct flows fl;
	struct bp_loop *loop;
	struct close_wait w;
	ino_t ino[4];

	server_start(&s, &m, &st);
	BPT_CHECK(bp_loop_create(&loop, &m) == 0, "client loop: %s", bp_last_error());
	/* one round each: every receive on both sides has delivered and stays armed */
	flows_start(&fl, loop, &s.addr, 4, 100, 1);
	run_until(loop, flows_done, &fl, "first rounds");
	for (int i = 0; i < 4; i++)
		ino[i] = socket_inode(bp_conn_fd(fl.f[i].conn));

	/* 0: closed by us while idle */
	bp_conn_close(fl.f[0].conn);
	w = (struct close_wait){ &s, 1, NULL };
	run_until(loop, closes_seen, &w, "server sees the close of conn 0");

	/* 1: closed from inside its own on_recv, with the receive armed under it */
	fl.f[1].close_in_recv = true;
	flow_again(&fl.f[1]);
	w = (struct close_wait){ &s, 2, NULL };
	run_until(loop, closes_seen, &w, "server sees the close of conn 1");
	BPT_CHECK(fl.f[1].closed, "conn 1 did not close from on_recv");

	/* 2: the peer closes, after echoing one more message */
	atomic_store(&s.close_next, 1);
	flow_again(&fl.f[2]);
	w = (struct close_wait){ &s, 3, &fl.f[2] };
	run_until(loop, closes_seen, &w, "client sees the peer close conn 2");

	/* 3: left open; the loop's destroy takes it down with its receive armed */
	bp_loop_destroy(loop);
	w = (struct close_wait){ &s, 4, NULL };
	{
		uint64_t start = bp_now_ns();

		while (!closes_seen(&w)) {
			BPT_CHECK(bp_now_ns() - start < DEADLINE_NS, "server saw %d clean closes, want 4",
				  atomic_load(&s.closed_clean));
			usleep(1000);
		}
	}
	bp_loop_thread_join(st, server_end, &s);
	for (int i = 0; i < 4; i++)
		BPT_CHECK(!registered_anywhere(ino[i]), "conn %d's socket is still in a ring's file table", i);
	printf("close: 4 conns with multishot receives armed closed 4 ways; each peer saw it, no slot left\n");
}

/* Run fn in a child with the environment variable set; it must exit 0. */
static void in_child(const char *var, const char *value, void (*fn)(void))
{
	pid_t pid = fork();
	int st;

	BPT_CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		setenv(var, value, 1);
		fn();
		fflush(stdout);
		_exit(0);
	}
	BPT_CHECK(waitpid(pid, &st, 0) == pid, "waitpid");
	BPT_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s=%s: the child failed (status %d)", var, value, st);
}

static void fallback(void)
{
	static const char *const names[] = { "multishot", "direct", "regring", "nosqarray" };

	for (size_t i = 0; i < 4; i++)
		BPT_CHECK(feature_status(names[i]) == -ECANCELED || feature_status(names[i]) == -EOPNOTSUPP,
			  "BP_URING_FEATURES=none: %s has status %d", names[i], feature_status(names[i]));
	scenario_rate(false);
}

static void exhaustion(void)
{
	scenario_exhaustion();
}

int main(void)
{
	(void)mode_of("uring:block");
	if (feature_status("multishot") || feature_status("direct")) {
		printf("SKIP: this kernel lacks multishot receives or registered descriptors (statuses %d, %d)\n",
		       feature_status("multishot"), feature_status("direct"));
		return BPT_SKIP;
	}
	scenario_rate(true);
	scenario_close();
	fflush(stdout);
	in_child("BP_URING_BUFS", "4x1024", exhaustion);
	in_child("BP_URING_FEATURES", "none", fallback);
	printf("uring features: all passed\n");
	return 0;
}
