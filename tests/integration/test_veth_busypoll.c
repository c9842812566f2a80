/* SPDX-License-Identifier: MIT */
/*
 * As root, over a veth pair between two namespaces (GRO on, so veth has NAPI):
 * echo round trips in each mode, asserting the kernel's own evidence: the accepted
 * socket has a NAPI id, TcpExt BusyPollRxPackets rises on both sides in the
 * *:napi and uring:sqpoll,napi=.. modes, and stays 0 in *:block and *:spin.
 * Not root: skipped with the reason. Usage: integ_test_veth_busypoll [--mode MODE]
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include <busypoll/busypoll.h>
#include "tools/bed/testbed.h"

#include "bpt_testbed.h"
#include "bptest.h"

#define ROUNDS 2000
#define MSG 64
#define DEADLINE_NS (20ull * 1000000000ull)

static const char *const veth_modes[] = {
	"epoll:block",
	"epoll:spin",
	"epoll:napi,usecs=100,budget=8",
	"epoll:napi,usecs=100,budget=8,prefer",
	"uring:block",
	"uring:napi,usecs=100",
	"uring:napi,usecs=100,tracking=static",
	"uring:sqpoll,napi=100",
};

static struct bp_testbed tb;

struct server {
	struct sockaddr_in addr;
	struct bp_listener *l;
	atomic_uint napi_id;
	atomic_int conns;
};

static size_t echo_recv(struct bp_conn *c, const uint8_t *data, size_t len)
{
	struct server *s = bp_loop_data(bp_conn_loop(c));

	BPT_CHECK(bp_conn_send(c, data, len) == 0, "echo: %s", bp_last_error());
	if (!atomic_load(&s->napi_id))
		atomic_store(&s->napi_id, bp_conn_napi_id(c));
	return len;
}

static void echo_close(struct bp_conn *c, int err, const char *sc)
{
}

static const struct bp_conn_ops echo_ops = { .on_recv = echo_recv, .on_close = echo_close };

static void on_accept(struct bp_listener *l, int fd, void *arg)
{
	struct server *s = arg;

	BPT_CHECK(bp_conn_adopt(bp_listener_loop(l), fd, &echo_ops, NULL, NULL) == 0, "adopt: %s",
		  bp_last_error());
	atomic_fetch_add(&s->conns, 1);
}

static int server_setup(struct bp_loop *loop, void *arg)
{
	struct server *s = arg;
	int ret = bp_testbed_enter(&tb, 1);

	if (ret)
		return ret;
	bp_loop_set_data(loop, s);
	return bp_listener_create(loop, (struct sockaddr *)&s->addr, sizeof(s->addr), on_accept, s, &s->l);
}

struct client {
	int rounds;
	size_t got;
	uint8_t msg[MSG];
	bool done;
};

static size_t client_recv(struct bp_conn *c, const uint8_t *data, size_t len)
{
	struct client *cl = bp_conn_data(c);

	cl->got += len;
	if (cl->got == MSG) {
		cl->got = 0;
		if (++cl->rounds == ROUNDS)
			cl->done = true;
		else
			BPT_CHECK(bp_conn_send(c, cl->msg, MSG) == 0, "send: %s", bp_last_error());
	}
	return len;
}

static void client_connect(struct bp_conn *c)
{
	struct client *cl = bp_conn_data(c);

	BPT_CHECK(bp_conn_send(c, cl->msg, MSG) == 0, "send: %s", bp_last_error());
}

static void client_close(struct bp_conn *c, int err, const char *sc)
{
	BPT_CHECK(0, "client conn closed: %s: %s", sc, strerror(-err));
}

static const struct bp_conn_ops client_ops = {
	.on_recv = client_recv, .on_connect = client_connect, .on_close = client_close,
};

static uint64_t busy_poll_rx_in(int side)
{
	struct bp_kstats k;
	int home;

	BPT_CHECK(bp_netns_save(&home) == 0, "save netns: %s", bp_last_error());
	BPT_CHECK(bp_testbed_enter(&tb, side) == 0, "enter: %s", bp_last_error());
	BPT_CHECK(bp_kstats_read(&k) == 0, "kstats: %s", bp_last_error());
	BPT_CHECK(bp_netns_restore(home) == 0, "restore netns: %s", bp_last_error());
	return k.busy_poll_rx;
}

static bool expect_busy_poll(const struct bp_mode *m)
{
	return bp_mode_is_busy_poll(m);
}

static void run_mode(const char *text)
{
	struct bp_mode m;
	struct server s = { 0 };
	struct client cl = { 0 };
	struct bp_loop_thread *st;
	struct bp_loop *cloop;
	struct bp_conn *conn;
	uint64_t a0, b0, a1, b1, start;
	int home;

	if (!bpt_mode_usable(text, &m))
		return;
	s.addr.sin_family = AF_INET;
	s.addr.sin_port = htons(7000);
	BPT_CHECK(inet_pton(AF_INET, tb.addr[1], &s.addr.sin_addr) == 1, "addr");
	/* Client on CPU 0 in side a, server on CPU 1 in side b. */
	BPT_CHECK(bp_loop_thread_start(&st, &m, 1, server_setup, &s) == 0, "%s: server: %s", text, bp_last_error());
	a0 = busy_poll_rx_in(0);
	b0 = busy_poll_rx_in(1);

	BPT_CHECK(bp_netns_save(&home) == 0, "save");
	BPT_CHECK(bp_testbed_enter(&tb, 0) == 0, "enter a: %s", bp_last_error());
	BPT_CHECK(bp_pin_thread(0) == 0, "pin: %s", bp_last_error());
	BPT_CHECK(bp_loop_create(&cloop, &m) == 0, "%s: client loop: %s", text, bp_last_error());
	BPT_CHECK(bp_conn_connect(cloop, (struct sockaddr *)&s.addr, sizeof(s.addr), SOCK_STREAM, &client_ops, &cl,
				  &conn) == 0, "connect: %s", bp_last_error());
	start = bp_now_ns();
	while (!cl.done) {
		BPT_CHECK(bp_loop_run_once(cloop, 100000) >= 0, "client loop: %s", bp_last_error());
		BPT_CHECK(bp_now_ns() - start < DEADLINE_NS, "%s: stuck after %d rounds", text, cl.rounds);
	}
	{
		uint32_t ids[4];
		size_t n = bp_loop_napi_ids(cloop, ids, 4);

		BPT_CHECK(bp_conn_napi_id(conn) >= 256, "%s: client socket NAPI id %u", text, bp_conn_napi_id(conn));
		BPT_CHECK(n == 1 && ids[0] == bp_conn_napi_id(conn), "%s: loop tracked %zu NAPI ids", text, n);
	}
	bp_conn_close(conn);
	bp_loop_destroy(cloop);
	BPT_CHECK(bp_netns_restore(home) == 0, "restore");
	bp_loop_thread_join(st, NULL, NULL);

	a1 = busy_poll_rx_in(0);
	b1 = busy_poll_rx_in(1);
	BPT_CHECK(atomic_load(&s.napi_id) >= 256, "%s: accepted socket NAPI id %u (GRO on gives veth a NAPI)", text,
		  atomic_load(&s.napi_id));
	printf("ok   %-40s napi id %u  BusyPollRxPackets client %llu server %llu\n", text, atomic_load(&s.napi_id),
	       (unsigned long long)(a1 - a0), (unsigned long long)(b1 - b0));
	if (expect_busy_poll(&m)) {
		/*
		 * napi modes: most of the 2000 packets each side received come by busy
		 * polling. SQPOLL: the SQ thread makes one busy-poll pass per loop of its
		 * own and the sender's softirq often gets the packet first, so only a
		 * share does (hundreds here): assert that it rises, not how much.
		 */
		uint64_t need = m.policy == BP_POLICY_SQPOLL ? 1 : ROUNDS / 4;

		BPT_CHECK(a1 - a0 >= need, "%s: client BusyPollRxPackets rose by %llu only", text,
			  (unsigned long long)(a1 - a0));
		BPT_CHECK(b1 - b0 >= need, "%s: server BusyPollRxPackets rose by %llu only", text,
			  (unsigned long long)(b1 - b0));
	} else {
		BPT_CHECK(a1 == a0 && b1 == b0, "%s: BusyPollRxPackets rose (%llu, %llu) in a mode that does not busy poll",
			  text, (unsigned long long)(a1 - a0), (unsigned long long)(b1 - b0));
	}
}

int main(int argc, char **argv)
{
	char name[32];
	const char *only = NULL;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--mode") && i + 1 < argc)
			only = argv[++i];
		else {
			fprintf(stderr, "usage: %s [--mode MODE]\n", argv[0]);
			return 2;
		}
	}
	bpt_require_root("the veth test bed needs network namespaces");
	bpt_testbed_name("tv", name, sizeof(name));
	bpt_testbed_guard(name);
	BPT_CHECK(bp_testbed_up(&tb, name, 1, false) == 0, "testbed: %s", bp_last_error());
	if (only) {
		run_mode(only);
	} else {
		for (size_t i = 0; i < sizeof(veth_modes) / sizeof(veth_modes[0]); i++)
			run_mode(veth_modes[i]);
	}
	BPT_CHECK(bp_testbed_down(&tb) == 0, "testbed down: %s", bp_last_error());
	return bpt_exit_status();
}
