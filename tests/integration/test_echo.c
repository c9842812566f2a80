/* SPDX-License-Identifier: MIT */
/*
 * Echo round trips over loopback in every mode: TCP (sizes from 1 byte to 1 MiB,
 * so partial sends and the send queue are exercised), connected UDP, a timer,
 * connections handed from the accepting loop to two serving loops, and the
 * counters adding up. Usage: integ_test_echo [--mode MODE]
 * With BP_URING_FEATURES=none (ctest integration/test_echo_uring_fallback) every
 * uring mode runs on the path of kernels without the backend's optional features.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <busypoll/busypoll.h>

#include "bptest.h"

#define SERVER_LOOPS 2
#define CLIENT_CONNS 2
#define ROUNDS 60
#define UDP_ROUNDS 50
#define DEADLINE_NS (20ull * 1000000000ull)

static const size_t sizes[] = { 1, 100, 4096, 65537, 1u << 20 };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

/* ---- server: loop 0 accepts and places; loops 0 and 1 echo ---- */

struct server {
	struct bp_loop *loops[SERVER_LOOPS];
	struct bp_loop_thread *threads[SERVER_LOOPS];
	struct sockaddr_in addr;
	struct bp_placer *placer;
	struct bp_listener *listener;
	atomic_int conns_on[SERVER_LOOPS];
	atomic_int closed;
	uint16_t udp_port;
};

static size_t echo_recv(struct bp_conn *c, const uint8_t *data, size_t len)
{
	BPT_CHECK(bp_conn_send(c, data, len) == 0, "echo send: %s", bp_last_error());
	return len;
}

static void echo_close(struct bp_conn *c, int err, const char *syscall)
{
	struct server *s = bp_loop_data(bp_conn_loop(c));

	BPT_CHECK(err == 0 || err == -ECONNRESET, "server conn closed: %s: %s", syscall, strerror(-err));
	atomic_fetch_add(&s->closed, 1);
}

static const struct bp_conn_ops echo_ops = { .on_recv = echo_recv, .on_close = echo_close };

static void adopt_echo(struct bp_loop *loop, int fd, void *arg)
{
	struct server *s = arg;

	BPT_CHECK(bp_conn_adopt(loop, fd, &echo_ops, NULL, NULL) == 0, "adopt: %s", bp_last_error());
	for (int i = 0; i < SERVER_LOOPS; i++)
		if (s->loops[i] == loop)
			atomic_fetch_add(&s->conns_on[i], 1);
}

static void on_accept(struct bp_listener *l, int fd, void *arg)
{
	struct server *s = arg;

	BPT_CHECK(bp_placer_dispatch(s->placer, fd, adopt_echo, s) >= 0, "place: %s", bp_last_error());
}

/* Loop 0 listens; loop 1 serves a bound, unconnected UDP socket (replies go to each source). */
static int server_setup(struct bp_loop *loop, void *arg)
{
	struct server *s = arg;
	int idx = s->loops[0] ? 1 : 0;
	struct sockaddr_in b;
	socklen_t bl = sizeof(b);
	int ufd;

	s->loops[idx] = loop;
	bp_loop_set_data(loop, s);
	if (idx == 0)
		return bp_listener_create(loop, (struct sockaddr *)&s->addr, sizeof(s->addr), on_accept, s,
					  &s->listener);
	ufd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	BPT_CHECK(ufd >= 0 && bind(ufd, (struct sockaddr *)&s->addr, sizeof(s->addr)) == 0, "udp bind");
	getsockname(ufd, (struct sockaddr *)&b, &bl);
	s->udp_port = ntohs(b.sin_port);
	return bp_conn_adopt(loop, ufd, &echo_ops, NULL, NULL);
}

/* ---- client: one loop in the test's thread ---- */

struct client_conn {
	struct bp_conn *conn;
	int round;
	size_t want, got;
	uint8_t *expect;
	bool connected, done;
};

struct client {
	struct client_conn cc[CLIENT_CONNS];
	struct bp_conn *udp;
	int udp_round, udp_got;
	bool udp_connected;
	bool timer_fired;
	struct bp_timer timer;
};

static uint8_t *pattern(size_t len, int seed)
{
	uint8_t *p = malloc(len);

	BPT_CHECK(p, "malloc");
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)(i * 131 + (size_t)seed * 7 + 1);
	return p;
}

static void client_next(struct client_conn *cc)
{
	if (cc->round == ROUNDS) {
		cc->done = true;
		return;
	}
	cc->want = sizes[cc->round % NSIZES];
	cc->got = 0;
	free(cc->expect);
	cc->expect = pattern(cc->want, cc->round);
	BPT_CHECK(bp_conn_send(cc->conn, cc->expect, cc->want) == 0, "client send: %s", bp_last_error());
}

static size_t client_recv(struct bp_conn *c, const uint8_t *data, size_t len)
{
	struct client_conn *cc = bp_conn_data(c);

	BPT_CHECK(cc->got + len <= cc->want, "echo returned %zu bytes more than sent", cc->got + len - cc->want);
	BPT_CHECK(memcmp(cc->expect + cc->got, data, len) == 0, "echo bytes differ at offset %zu of round %d",
		  cc->got, cc->round);
	cc->got += len;
	if (cc->got == cc->want) {
		cc->round++;
		client_next(cc);
	}
	return len;
}

static void client_connect(struct bp_conn *c)
{
	struct client_conn *cc = bp_conn_data(c);

	cc->connected = true;
	client_next(cc);
}

static void client_close(struct bp_conn *c, int err, const char *syscall)
{
	BPT_CHECK(0, "client conn closed early: %s: %s", syscall, strerror(-err));
}

static const struct bp_conn_ops client_ops = {
	.on_recv = client_recv, .on_connect = client_connect, .on_close = client_close,
};

/* UDP rounds of varied sizes, then one empty datagram: it is a datagram too. */
static size_t udp_size(int round)
{
	return round == UDP_ROUNDS - 1 ? 0 : 1 + (size_t)round * 7 % 512;
}

static void udp_send_next(struct client *cl)
{
	uint8_t buf[512];

	memset(buf, cl->udp_round & 0xff, sizeof(buf));
	BPT_CHECK(bp_conn_send(cl->udp, buf, udp_size(cl->udp_round)) == 0, "udp send: %s", bp_last_error());
}

static size_t udp_recv(struct bp_conn *c, const uint8_t *data, size_t len)
{
	struct client *cl = bp_conn_data(c);

	BPT_CHECK(len == udp_size(cl->udp_round), "udp datagram of %zu bytes, round %d", len, cl->udp_round);
	BPT_CHECK(len == 0 || data[0] == (cl->udp_round & 0xff), "udp payload mismatch");
	cl->udp_got++;
	if (++cl->udp_round < UDP_ROUNDS)
		udp_send_next(cl);
	return len;
}

static void udp_connect(struct bp_conn *c)
{
	struct client *cl = bp_conn_data(c);

	cl->udp_connected = true;
	udp_send_next(cl);
}

static const struct bp_conn_ops udp_client_ops = {
	.on_recv = udp_recv, .on_connect = udp_connect, .on_close = client_close,
};

static void timer_fired(struct bp_loop *loop, void *arg)
{
	((struct client *)arg)->timer_fired = true;
}

static bool client_done(const struct client *cl)
{
	for (int i = 0; i < CLIENT_CONNS; i++)
		if (!cl->cc[i].done)
			return false;
	return cl->udp_round == UDP_ROUNDS && cl->timer_fired;
}

static void check_server_counters(struct bp_loop *loop, void *arg)
{
	const struct bp_loop_counters *k = bp_loop_counters(loop);

	BPT_CHECK(k->bytes_in == k->bytes_out, "a server loop echoed %llu of %llu bytes",
		  (unsigned long long)k->bytes_out, (unsigned long long)k->bytes_in);
}

/* ---- one mode ---- */

static void run_mode(const struct bp_mode *mode, const char *text)
{
	struct sockaddr_in addr = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct server s = { 0 };
	struct client cl = { 0 };
	struct bp_loop *cloop;
	uint64_t start;

	s.addr = addr;
	/* Loops live on their own threads: io_uring rings belong to the creating thread. */
	for (int i = 0; i < SERVER_LOOPS; i++)
		BPT_CHECK(bp_loop_thread_start(&s.threads[i], mode, -1, server_setup, &s) == 0, "%s: server: %s",
			  text, bp_last_error());
	BPT_CHECK(bp_placer_create(&s.placer, s.loops, SERVER_LOOPS) == 0, "placer");

	BPT_CHECK(bp_loop_create(&cloop, mode) == 0, "%s: client loop: %s", text, bp_last_error());
	addr.sin_port = htons(bp_listener_port(s.listener));
	for (int i = 0; i < CLIENT_CONNS; i++)
		BPT_CHECK(bp_conn_connect(cloop, (struct sockaddr *)&addr, sizeof(addr), SOCK_STREAM, &client_ops,
					  &cl.cc[i], &cl.cc[i].conn) == 0, "connect: %s", bp_last_error());
	addr.sin_port = htons(s.udp_port);
	BPT_CHECK(bp_conn_connect(cloop, (struct sockaddr *)&addr, sizeof(addr), SOCK_DGRAM, &udp_client_ops,
				  &cl, &cl.udp) == 0, "udp connect: %s", bp_last_error());
	BPT_CHECK(bp_timer_start(cloop, &cl.timer, 1000, timer_fired, &cl) == 0, "timer");

	start = bp_loop_now_ns(cloop);
	while (!client_done(&cl)) {
		BPT_CHECK(bp_loop_run_once(cloop, 100000) >= 0, "client loop: %s", bp_last_error());
		BPT_CHECK(bp_loop_now_ns(cloop) - start < DEADLINE_NS,
			  "%s: no progress: conn0 round %d got %zu/%zu, conn1 round %d, udp %d, timer %d", text,
			  cl.cc[0].round, cl.cc[0].got, cl.cc[0].want, cl.cc[1].round, cl.udp_round, cl.timer_fired);
	}

	/* Closing the client's conns must reach the server as a clean close. */
	for (int i = 0; i < CLIENT_CONNS; i++) {
		bp_conn_close(cl.cc[i].conn);
		free(cl.cc[i].expect);
	}
	bp_conn_close(cl.udp);
	{
		const struct bp_loop_counters *k = bp_loop_counters(cloop);
		uint64_t expect_out = 0;

		for (int r = 0; r < ROUNDS; r++)
			expect_out += sizes[r % NSIZES];
		expect_out *= CLIENT_CONNS;
		BPT_CHECK(k->bytes_in >= expect_out && k->bytes_out >= expect_out,
			  "client counted in %llu out %llu, expected at least %llu",
			  (unsigned long long)k->bytes_in, (unsigned long long)k->bytes_out,
			  (unsigned long long)expect_out);
		BPT_CHECK(k->waits > 0 && k->completions > 0 && k->syscalls > 0, "client counters are zero");
		if (mode->policy == BP_POLICY_SPIN || (mode->policy == BP_POLICY_SQPOLL && mode->spin))
			BPT_CHECK(k->sleep_ns == 0 && k->wakeups == 0, "spin mode slept");
		printf("ok   %-40s waits %llu empty %llu syscalls %llu completions %llu\n", text,
		       (unsigned long long)k->waits, (unsigned long long)k->empty_polls,
		       (unsigned long long)k->syscalls, (unsigned long long)k->completions);
	}
	bp_loop_destroy(cloop);

	start = bpt_now_ns();
	while (atomic_load(&s.closed) < CLIENT_CONNS) {
		BPT_CHECK(bpt_now_ns() - start < DEADLINE_NS, "server saw %d closes", atomic_load(&s.closed));
		usleep(1000);
	}
	/* Two loopback conns (NAPI id 0) go round robin: one on each serving loop. */
	BPT_CHECK(atomic_load(&s.conns_on[0]) == 1 && atomic_load(&s.conns_on[1]) == 1,
		  "placement: %d and %d conns", atomic_load(&s.conns_on[0]), atomic_load(&s.conns_on[1]));
	for (int i = 0; i < SERVER_LOOPS; i++)
		bp_loop_thread_join(s.threads[i], check_server_counters, &s);
	bp_placer_destroy(s.placer);
}

/* BP_URING_FEATURES=none (ctest's test_echo_uring_fallback): make sure it took. */
static void check_uring_fallback(void)
{
	const char *env = getenv("BP_URING_FEATURES");
	struct bp_feature f[16];
	size_t n;

	if (!env || strcmp(env, "none"))
		return;
	n = bp_features(f, 16);
	for (size_t i = 0; i < n && i < 16; i++)
		if (!strcmp(f[i].backend, "uring") && strcmp(f[i].name, "defer-taskrun"))
			BPT_CHECK(f[i].status == -ECANCELED || f[i].status == -EOPNOTSUPP,
				  "BP_URING_FEATURES=none, yet uring feature %s has status %d", f[i].name, f[i].status);
	printf("uring: the path without optional features (BP_URING_FEATURES=none)\n");
}

int main(int argc, char **argv)
{
	const char *only = NULL;
	int ran = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--mode") && i + 1 < argc)
			only = argv[++i];
		else {
			fprintf(stderr, "usage: %s [--mode MODE]\n", argv[0]);
			return 2;
		}
	}
	check_uring_fallback();
	/* the shared matrix, then what only this test runs: uring:sqpoll,spin spins a loop
	 * and an SQ thread per loop, slow on 2 CPUs for the tests that time round trips */
	for (size_t i = 0; i < bpt_n_modes + 1; i++) {
		const char *text = only ? only : i < bpt_n_modes ? bpt_all_modes[i] : "uring:sqpoll,spin";
		struct bp_mode m;

		if (bpt_mode_usable(text, &m)) {
			run_mode(&m, text);
			ran++;
		}
		if (only)
			break;
	}
	if (!ran) {
		printf("SKIP: no mode is usable here\n");
		return BPT_SKIP;
	}
	printf("%d modes passed\n", ran);
	return bpt_exit_status();
}
