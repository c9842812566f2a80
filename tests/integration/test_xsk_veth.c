/* SPDX-License-Identifier: MIT */
/*
 * The xsk modes on the veth test bed (root; native XDP, copy mode): a UDP echo
 * server in namespace b and a client in a, each in its own mode, every xsk mode
 * against every xsk mode and against the socket modes both ways. Every datagram
 * (8..1407 bytes, each different) comes back byte for byte. What the kernel says:
 *  - an xsk side is bound, in copy mode (veth has no zero-copy);
 *  - xsk:napi busy-polls: BusyPollRxPackets rises in its namespace;
 *  - the frames went through the rings (pkt_rx counted);
 *  - ARP and a TCP connection across the same veth work while both ends carry
 *    their XDP programs (the neighbour table flushed first);
 *  - frames with a bad IP checksum or a UDP length past the IP payload, sent to
 *    the served port with a packet socket, are dropped and counted, and the server
 *    goes on echoing;
 *  - no XDP program is left on either device afterwards.
 * Never timings. Not root: skipped with the reason.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <busypoll/busypoll.h>

#include "net/frame.h"
#include "net/neigh.h"
#include "net/xdp_prog.h"
#include "tools/bed/testbed.h"

#include "bpt_testbed.h"
#include "bptest.h"

#define PORT 12990
#define TCP_PORT 12991
#define RESEND_US 100000
#define DEADLINE_NS (30ull * 1000000000ull)

static struct bp_testbed tb;

/* What a side's loop says at its end: its counters and its AF_XDP socket. */
struct end {
	struct bp_loop_counters ctr;
	struct bp_xsk_info xi;
	int xsk;                       /* bp_loop_xsk_info's answer */
};

/* end_read - a join's teardown: the loop's end, on its thread. */
static void end_read(struct bp_loop *loop, void *arg)
{
	struct end *e = arg;
	struct bp_loop_snapshot snap;

	bp_loop_snapshot_take(loop, &snap);
	e->ctr = snap.ctr;
	e->xsk = bp_loop_xsk_info(loop, &e->xi);
}

/* ---- the echo server: one UDP socket on b's address ---- */

struct srv {
	struct end end;                /* first: the teardown reads into it */
	struct bp_conn *c;
};

static size_t srv_recv(struct bp_conn *c, const uint8_t *data, size_t len)
{
	bp_conn_send(c, data, len);
	return len;
}

static const struct bp_conn_ops srv_ops = { .on_recv = srv_recv };

static int srv_setup(struct bp_loop *loop, void *arg)
{
	struct srv *s = arg;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(PORT) };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	inet_pton(AF_INET, tb.addr[1], &a.sin_addr);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
		return bp_set_last_error(-errno, "server socket: %s", strerror(errno));
	return bp_conn_adopt(loop, fd, &srv_ops, s, &s->c);
}

/* ---- the client: n datagrams, each checked byte for byte ---- */

struct cli {
	struct end end;                /* first: the teardown reads into it */
	uint64_t n, seq, resent, bad;
	uint64_t deadline;
	struct bp_conn *c;
	struct bp_loop *loop;
	struct bp_timer resend;
	atomic_int done;               /* 1 all came back, -errno failed */
	uint8_t buf[2048];
};

static size_t payload(uint64_t seq, uint8_t *b)
{
	size_t len = 8 + (size_t)(seq * 97 % 1400);

	memcpy(b, &seq, 8);
	for (size_t i = 8; i < len; i++)
		b[i] = (uint8_t)(seq * 31 + i * 7);
	return len;
}

static void cli_resend(struct bp_loop *loop, void *arg);

static void cli_send(struct cli *k)
{
	size_t len = payload(k->seq, k->buf);

	if (bp_conn_send(k->c, k->buf, len))
		atomic_store(&k->done, -EIO);
	bp_timer_start(k->loop, &k->resend, RESEND_US, cli_resend, k);
}

static void cli_resend(struct bp_loop *loop, void *arg)
{
	struct cli *k = arg;

	if (atomic_load(&k->done))
		return;
	if (bpt_now_ns() > k->deadline) {
		atomic_store(&k->done, -ETIMEDOUT);
		return;
	}
	k->resent++; /* UDP may lose one: the same datagram again */
	cli_send(k);
}

static void cli_connect(struct bp_conn *c)
{
	cli_send(bp_conn_data(c));
}

static size_t cli_recv(struct bp_conn *c, const uint8_t *data, size_t len)
{
	struct cli *k = bp_conn_data(c);
	uint8_t want[2048];
	size_t wl;
	uint64_t seq;

	if (len < 8 || atomic_load(&k->done))
		return len;
	memcpy(&seq, data, 8);
	if (seq < k->seq)
		return len; /* the echo of a resent one */
	wl = payload(k->seq, want);
	if (seq != k->seq || len != wl || memcmp(data, want, wl)) {
		k->bad++;
		atomic_store(&k->done, -EBADMSG);
		return len;
	}
	if (++k->seq == k->n) {
		bp_timer_stop(k->loop, &k->resend);
		atomic_store(&k->done, 1);
		return len;
	}
	cli_send(k);
	return len;
}

static const struct bp_conn_ops cli_ops = { .on_recv = cli_recv, .on_connect = cli_connect };

static int cli_setup(struct bp_loop *loop, void *arg)
{
	struct cli *k = arg;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(PORT) };

	inet_pton(AF_INET, tb.addr[1], &a.sin_addr);
	k->loop = loop;
	k->deadline = bpt_now_ns() + DEADLINE_NS;
	return bp_conn_connect(loop, (struct sockaddr *)&a, sizeof(a), SOCK_DGRAM, &cli_ops, k, &k->c);
}

/* ---- the sides ---- */

/* start_in - a loop thread in side's namespace, on CPU side. */
static struct bp_loop_thread *start_in(int side, const struct bp_mode *m, bp_loop_setup_fn fn, void *arg)
{
	struct bp_loop_thread *t;
	int home;

	BPT_CHECK(bp_netns_save(&home) == 0 && bp_testbed_enter(&tb, side) == 0, "enter: %s", bp_last_error());
	BPT_CHECK(bp_loop_thread_start(&t, m, side, fn, arg) == 0, "%s side %d: %s", bp_mode_name(m), side,
		  bp_last_error());
	BPT_CHECK(bp_netns_restore(home) == 0, "restore: %s", bp_last_error());
	return t;
}

static uint32_t prog_on(int side)
{
	uint32_t id;
	int home;

	BPT_CHECK(bp_netns_save(&home) == 0 && bp_testbed_enter(&tb, side) == 0, "enter: %s", bp_last_error());
	id = bp_xdp_prog_id((int)tb.ifindex[side]);
	BPT_CHECK(bp_netns_restore(home) == 0, "restore: %s", bp_last_error());
	return id;
}

static void check_side(const char *who, const struct bp_mode *m, const struct end *e, uint64_t n)
{
	if (m->backend != BP_BACKEND_XSK) {
		BPT_CHECK(e->xsk == -ENOENT, "%s (%s) says it has an AF_XDP socket", who, bp_mode_name(m));
		return;
	}
	BPT_CHECK(e->xsk == 0, "%s (%s) has no AF_XDP socket", who, bp_mode_name(m));
	BPT_CHECK(!e->xi.zerocopy, "%s bound zero-copy on veth", who);
	BPT_CHECK(e->xi.prog_id != 0 && e->xi.napi_id != 0, "%s: prog %u napi %u", who, e->xi.prog_id,
		  e->xi.napi_id);
	/* all but the first came up the ring (the first names the NAPI through the socket) */
	BPT_CHECK(e->ctr.pkt_rx + 1 >= n && e->ctr.pkt_tx >= n, "%s: %llu frames in, %llu out of %llu", who,
		  (unsigned long long)e->ctr.pkt_rx, (unsigned long long)e->ctr.pkt_tx, (unsigned long long)n);
}

/* pair - n datagrams from a client in cm to a server in sm, each back byte for byte. */
static void pair(const char *cm_text, const char *sm_text, uint64_t n)
{
	struct bp_mode cm, sm;
	struct srv s = { 0 };
	struct cli *k = calloc(1, sizeof(*k));
	struct bp_loop_thread *st, *ct;
	uint64_t bp0[2], bp1[2];

	BPT_CHECK(k, "calloc");
	if (!bpt_mode_usable(cm_text, &cm) || !bpt_mode_usable(sm_text, &sm)) {
		free(k);
		return;
	}
	k->n = n;
	bp0[0] = bpt_testbed_busy_poll_rx(&tb, 0);
	bp0[1] = bpt_testbed_busy_poll_rx(&tb, 1);
	st = start_in(1, &sm, srv_setup, &s);
	ct = start_in(0, &cm, cli_setup, k);
	BPT_CHECK(BPT_WAIT_UNTIL(atomic_load(&k->done) != 0, 60000), "%s -> %s: %llu of %llu came back", cm_text,
		  sm_text, (unsigned long long)k->seq, (unsigned long long)n);
	bp_loop_thread_join(ct, end_read, &k->end);
	bp_loop_thread_join(st, end_read, &s.end);
	bp1[0] = bpt_testbed_busy_poll_rx(&tb, 0);
	bp1[1] = bpt_testbed_busy_poll_rx(&tb, 1);
	BPT_CHECK(atomic_load(&k->done) == 1, "%s -> %s: %s after %llu of %llu (%llu bad)", cm_text, sm_text,
		  strerror(-atomic_load(&k->done)), (unsigned long long)k->seq, (unsigned long long)n,
		  (unsigned long long)k->bad);
	check_side("client", &cm, &k->end, n);
	check_side("server", &sm, &s.end, n);
	if (cm.backend == BP_BACKEND_XSK && cm.policy == BP_POLICY_NAPI)
		BPT_CHECK(bp1[0] > bp0[0], "client %s: BusyPollRxPackets did not rise", cm_text);
	if (sm.backend == BP_BACKEND_XSK && sm.policy == BP_POLICY_NAPI)
		BPT_CHECK(bp1[1] > bp0[1], "server %s: BusyPollRxPackets did not rise", sm_text);
	BPT_CHECK(prog_on(0) == 0 && prog_on(1) == 0, "an XDP program is left: a %u, b %u", prog_on(0), prog_on(1));
	printf("ok   %-22s -> %-22s %llu datagrams back byte for byte (%llu resent), BusyPollRxPackets +%llu / +%llu\n",
	       cm_text, sm_text, (unsigned long long)n, (unsigned long long)k->resent,
	       (unsigned long long)(bp1[0] - bp0[0]), (unsigned long long)(bp1[1] - bp0[1]));
	free(k);
}

/* ---- the host keeps working: ARP and TCP across the veth while both ends carry XDP ---- */

static void tcp_across(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(TCP_PORT) };
	struct timeval tv = { .tv_sec = 10 };
	char cmd[256], buf[8] = "";
	int home, lfd, cfd, afd;

	inet_pton(AF_INET, tb.addr[1], &a.sin_addr);
	BPT_CHECK(bp_netns_save(&home) == 0 && bp_testbed_enter(&tb, 1) == 0, "enter b");
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	BPT_CHECK(lfd >= 0 && bind(lfd, (struct sockaddr *)&a, sizeof(a)) == 0 && listen(lfd, 1) == 0,
		  "listener: %s", strerror(errno));
	BPT_CHECK(bp_testbed_enter(&tb, 0) == 0, "enter a");
	/* no MAC known for b: the connect needs ARP through both programs */
	snprintf(cmd, sizeof(cmd), "ip -n %s neigh flush dev %s >/dev/null 2>&1", tb.ns[0], tb.dev[0]);
	BPT_CHECK(system(cmd) == 0, "%s", cmd);
	cfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	setsockopt(cfd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(cfd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	BPT_CHECK(connect(cfd, (struct sockaddr *)&a, sizeof(a)) == 0, "TCP connect across the veth during a run: %s",
		  strerror(errno));
	afd = accept(lfd, NULL, NULL);
	BPT_CHECK(afd >= 0, "accept: %s", strerror(errno));
	BPT_CHECK(write(cfd, "ping", 4) == 4 && read(afd, buf, 4) == 4 && !memcmp(buf, "ping", 4), "TCP a -> b");
	BPT_CHECK(write(afd, "pong", 4) == 4 && read(cfd, buf, 4) == 4 && !memcmp(buf, "pong", 4), "TCP b -> a");
	close(cfd);
	close(afd);
	close(lfd);
	BPT_CHECK(bp_netns_restore(home) == 0, "restore");
}

static void host_keeps_working(void)
{
	struct bp_mode m;
	struct srv s = { 0 };
	struct cli *k = calloc(1, sizeof(*k));
	struct bp_loop_thread *st, *ct;

	BPT_CHECK(k, "calloc");
	if (!bpt_mode_usable("xsk:block", &m)) {
		free(k);
		return;
	}
	k->n = 1000000; /* running all along: stopped below */
	st = start_in(1, &m, srv_setup, &s);
	ct = start_in(0, &m, cli_setup, k);
	BPT_CHECK(BPT_WAIT_UNTIL(k->seq > 100, 30000), "the run did not start");
	BPT_CHECK(prog_on(0) && prog_on(1), "both ends carry their XDP program");
	tcp_across();
	BPT_CHECK(!atomic_load(&k->done), "the run stopped: %d", atomic_load(&k->done));
	bp_loop_thread_join(ct, end_read, &k->end);
	bp_loop_thread_join(st, end_read, &s.end);
	printf("ok   ARP and a TCP connection across the veth work while both ends run xsk:block (%llu echoed meanwhile)\n",
	       (unsigned long long)k->seq);
	free(k);
}

/* ---- frames that are not right: counted, and the server goes on ---- */

static void send_raw(const uint8_t *frame, size_t len)
{
	struct sockaddr_ll ll = { .sll_family = AF_PACKET, .sll_ifindex = (int)tb.ifindex[0], .sll_halen = 6 };
	int home, fd;

	BPT_CHECK(bp_netns_save(&home) == 0 && bp_testbed_enter(&tb, 0) == 0, "enter a");
	fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	BPT_CHECK(fd >= 0, "packet socket: %s", strerror(errno));
	memcpy(ll.sll_addr, frame, 6);
	BPT_CHECK(sendto(fd, frame, len, 0, (struct sockaddr *)&ll, sizeof(ll)) == (ssize_t)len, "send: %s",
		  strerror(errno));
	close(fd);
	BPT_CHECK(bp_netns_restore(home) == 0, "restore");
}

static void bad_frames(void)
{
	struct bp_mode sm, cm;
	struct srv s = { 0 };
	struct cli *k = calloc(1, sizeof(*k));
	struct bp_loop_thread *st, *ct;
	struct bp_frame_flow f = { 0 };
	struct sockaddr_in *src = (struct sockaddr_in *)&f.src, *dst = (struct sockaddr_in *)&f.dst;
	uint8_t fr[256];
	int n, home;

	BPT_CHECK(k, "calloc");
	if (!bpt_mode_usable("xsk:spin", &sm) || !bpt_mode_usable("epoll:block", &cm)) {
		free(k);
		return;
	}
	BPT_CHECK(bp_netns_save(&home) == 0 && bp_testbed_enter(&tb, 0) == 0, "enter a");
	BPT_CHECK(bp_dev_mac((int)tb.ifindex[0], f.src_mac) == 0, "mac a");
	BPT_CHECK(bp_testbed_enter(&tb, 1) == 0 && bp_dev_mac((int)tb.ifindex[1], f.dst_mac) == 0, "mac b");
	BPT_CHECK(bp_netns_restore(home) == 0, "restore");
	src->sin_family = dst->sin_family = AF_INET;
	inet_pton(AF_INET, tb.addr[0], &src->sin_addr);
	inet_pton(AF_INET, tb.addr[1], &dst->sin_addr);
	src->sin_port = htons(40000);
	dst->sin_port = htons(PORT);

	k->n = 50;
	st = start_in(1, &sm, srv_setup, &s);
	ct = start_in(0, &cm, cli_setup, k);
	BPT_CHECK(BPT_WAIT_UNTIL(atomic_load(&k->done) != 0, 60000), "the first run did not end");
	BPT_CHECK(atomic_load(&k->done) == 1, "the first run: %d", atomic_load(&k->done));
	bp_loop_thread_join(ct, NULL, NULL);

	n = bp_frame_build(fr, sizeof(fr), &f, "12345678", 8);
	fr[14 + 10] ^= 0x55;                 /* the IP header checksum */
	send_raw(fr, (size_t)n);
	n = bp_frame_build(fr, sizeof(fr), &f, "12345678", 8);
	fr[14 + 20 + 5] = 200;               /* a UDP length past the IP payload */
	send_raw(fr, (size_t)n);
	n = bp_frame_build(fr, sizeof(fr), &f, "1", 1);
	send_raw(fr, 14 + 20 + 4);           /* cut inside the UDP header: the program passes it */

	memset(k, 0, sizeof(*k));
	k->n = 50;
	ct = start_in(0, &cm, cli_setup, k);
	BPT_CHECK(BPT_WAIT_UNTIL(atomic_load(&k->done) != 0, 60000), "the second run did not end");
	BPT_CHECK(atomic_load(&k->done) == 1, "after the bad frames the server stopped echoing: %d",
		  atomic_load(&k->done));
	bp_loop_thread_join(ct, NULL, NULL);
	bp_loop_thread_join(st, end_read, &s.end);
	BPT_CHECK(s.end.ctr.pkt_dropped == 2, "the server counted %llu dropped frames, want 2 (bad checksum, bad length)",
		  (unsigned long long)s.end.ctr.pkt_dropped);
	printf("ok   a bad IP checksum and a bad UDP length are dropped and counted (2), a short frame passed on, "
	       "the server echoes on\n");
	free(k);
}

int main(void)
{
	static const char *const xsk[] = { "xsk:block", "xsk:napi,usecs=50", "xsk:spin" };
	static const char *const sock[] = { "epoll:block", "epoll:napi,usecs=50", "epoll:spin" };
	char name[32];

	bpt_require_root("the veth test bed and XDP");
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		fprintf(stderr, "SKIP: client and server need a CPU each\n");
		return BPT_SKIP;
	}
	bpt_testbed_name("txk", name, sizeof(name));
	bpt_testbed_guard(name);
	BPT_CHECK(bp_testbed_up(&tb, name, 1, false) == 0, "testbed: %s", bp_last_error());
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 3; j++)
			pair(xsk[i], xsk[j], 200);
	/* each xsk mode against a socket mode, both ways */
	for (int i = 0; i < 3; i++) {
		pair(xsk[i], sock[i], 200);
		pair(sock[i], xsk[i], 200);
	}
	host_keeps_working();
	bad_frames();
	BPT_CHECK(bp_testbed_down(&tb) == 0, "down: %s", bp_last_error());
	return bpt_exit_status();
}
