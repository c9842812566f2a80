/* SPDX-License-Identifier: MIT */
/*
 * busypoll rr server against peers that misbehave, over loopback:
 *
 *  1. Peers that disappear (RST, and FIN) in the middle of a hello, in the middle
 *     of a request, with a 4 MiB response still queued, right after a control
 *     command, and after a few good transactions. On every engine mode: the
 *     server keeps serving the next client, every descriptor comes back, and no
 *     run slot leaks: the server's count of live run slots (rr_server_runs_live)
 *     is back to 0 once the peers are gone, and again after the next client.
 *  2. On epoll:block, at the same time: clients that connect and send nothing,
 *     that say hello and then nothing, half-open connections (the client's kernel
 *     forgets them: TCP_REPAIR then close sends neither FIN nor RST, as a peer
 *     that rebooted or lost power would), and two slow senders trickling one byte
 *     per second for 5 s (one in its hello, one in a request). Meanwhile an rr
 *     client runs: it must get at least a tenth of the rate measured just before
 *     (a blocked server would give ~1 tx/s), and the tricklers are answered
 *     correctly once they finish.
 *
 * Prints the faults injected and the connections held.
 * Usage: [--mode MODE] [--rounds N (of each fault per mode; default 14, make soak 100)]
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bpt_faults.h"
#include "bptest.h"
#include "tools/harness/control.h"
#include "tools/rr/rr.h"

static int rounds = 14;    /* per scenario and way of vanishing: 5 x 2 x 14 = 140 faults per mode */
#define SETTLE_MS 30000

static uint16_t port;
static const char *cur_mode = "";
static int cur_scenario = -1;
static uint64_t faults_total;
static struct rr_result res;

static void base_opts(struct rr_opts *o, const struct bp_mode *m, const char *mode_text)
{
	rr_opts_defaults(o);
	o->mode = *m;
	snprintf(o->mode_text, sizeof(o->mode_text), "%s", mode_text);
	o->quiet = true;
	o->warmup_s = 0.05;
	o->duration_s = 0.3;
	snprintf(o->host, sizeof(o->host), "127.0.0.1");
}

static void client_run(struct rr_opts *o, const char *what)
{
	char err[256];

	o->port = port;
	BPT_CHECK(rr_client_run(o, NULL, &res, err, sizeof(err)) == 0, "%s: client: %s", what, err);
	BPT_CHECK(res.server.valid, "%s: no stats from the server", what);
	BPT_CHECK(res.transactions > 0, "%s: no transactions measured", what);
	BPT_CHECK(res.client.transactions == res.server.transactions,
		  "%s: client counted %llu transactions, server %llu", what,
		  (unsigned long long)res.client.transactions, (unsigned long long)res.server.transactions);
}

static uint64_t random_id(void)
{
	uint64_t id = 0;

	while (!id)
		BPT_CHECK(getrandom(&id, sizeof(id), 0) == sizeof(id), "getrandom");
	return id;
}

static void hello_bytes(uint8_t *buf, uint8_t kind, uint32_t req, uint32_t resp, uint64_t run_id)
{
	struct bp_rr_hello h = {
		.version = BP_RR_VERSION, .kind = kind, .request_size = req, .response_size = resp,
		.run_id = run_id, .flow_id = 1,
	};

	bp_rr_hello_encode(&h, buf);
}

/* A flow past its hello: connected (with SO_RCVBUF rcvbuf unless 0), hello sent, ack OK. */
static int raw_flow_rcvbuf(uint8_t kind, uint32_t req, uint32_t resp, uint64_t run_id, int rcvbuf)
{
	uint8_t buf[BP_RR_HELLO_LEN];
	struct bp_rr_ack ack;
	int fd = rcvbuf ? bpt_connect_rcvbuf(port, rcvbuf) : bpt_connect(port);

	hello_bytes(buf, kind, req, resp, run_id);
	bpt_send_all(fd, buf, sizeof(buf));
	BPT_CHECK(bpt_recv_all(fd, buf, BP_RR_ACK_LEN, 5000), "no ack to a hello");
	BPT_CHECK(bp_rr_ack_decode(buf, &ack) == 0, "%s, scenario %d: bad ack: %02x%02x%02x%02x %02x%02x%02x%02x", cur_mode, cur_scenario, buf[0], buf[1], buf[2], buf[3], buf[4], buf[5], buf[6], buf[7]);
	BPT_CHECK(ack.status == BP_RR_OK, "hello refused: %s (a leaked run slot?)", bp_rr_refuse_reason(ack.status));
	return fd;
}

static int raw_flow(uint8_t kind, uint32_t req, uint32_t resp, uint64_t run_id)
{
	return raw_flow_rcvbuf(kind, req, resp, run_id, 0);
}

/* One transaction by hand: Q bytes up, R bytes back. */
static void raw_transaction(int fd, uint32_t q, uint32_t r)
{
	uint8_t buf[4096] = { 0 };

	BPT_CHECK(q <= sizeof(buf) && r <= sizeof(buf), "sizes");
	bpt_send_all(fd, buf, q);
	BPT_CHECK(bpt_recv_all(fd, buf, r, 5000), "no %u-byte response", r);
}

/* ---- 1. peers that disappear ---- */

enum scenario { MID_HELLO, MID_REQUEST, RESPONSE_QUEUED, AFTER_CONTROL, AFTER_GOOD_TX, N_SCENARIOS };
static const char *const scenario_name[] = {
	"mid-hello", "mid-request", "4 MiB response queued", "right after START/STOP", "after 3 transactions",
};

static void vanish_once(enum scenario sc, enum bpt_vanish how)
{
	uint8_t buf[64] = { 0 };  /* a hello, or the first bytes of a request */
	uint64_t run = random_id();
	int fd;

	cur_scenario = (int)sc;

	switch (sc) {
	case MID_HELLO:
		fd = bpt_connect(port);
		hello_bytes(buf, BP_RR_KIND_DATA, 64, 64, run);
		bpt_send_all(fd, buf, BP_RR_HELLO_LEN / 2);
		break;
	case MID_REQUEST:
		fd = raw_flow(BP_RR_KIND_DATA, 64, 64, run);
		bpt_send_all(fd, buf, 32);
		break;
	case RESPONSE_QUEUED:
		/*
		 * The server answers with 4 MiB into our 64 KiB receive buffer: once the
		 * first 32 KiB are here the rest waits in its send queue, and then we go.
		 */
		fd = raw_flow_rcvbuf(BP_RR_KIND_DATA, 1, 4u << 20, run, 65536);
		bpt_send_all(fd, buf, 1);
		BPT_CHECK(BPT_WAIT_UNTIL(bpt_rx_queued(fd) >= 32768, 30000), "%s: the 4 MiB response did not come (%d bytes)",
			  cur_mode, bpt_rx_queued(fd));
		break;
	case AFTER_CONTROL: {
		struct ctl_msg *m = malloc(sizeof(*m));
		uint8_t *cmd = malloc(3 * (CTL_HDR_LEN + 256));
		int n = 0;

		/* Snapshots are posted to every loop; the control session is gone before they report. */
		BPT_CHECK(m && cmd, "out of memory");
		fd = bpt_connect(port);
		ctl_msg_init(m, CTL_HELLO);
		ctl_put_text(m, CTL_T_TOOL, "rr");
		ctl_put_u64(m, CTL_T_RUN_ID, run);
		ctl_put_u64(m, CTL_T_RR_REQUEST_SIZE, 1);
		ctl_put_u64(m, CTL_T_RR_RESPONSE_SIZE, 1);
		n += ctl_encode(m, cmd + n, CTL_HDR_LEN + 256);
		ctl_msg_init(m, CTL_START);
		n += ctl_encode(m, cmd + n, CTL_HDR_LEN + 256);
		ctl_msg_init(m, CTL_STOP);
		n += ctl_encode(m, cmd + n, CTL_HDR_LEN + 256);
		bpt_send_all(fd, cmd, (size_t)n);
		free(cmd);
		free(m);
		break;
	}
	case AFTER_GOOD_TX:
		fd = raw_flow(BP_RR_KIND_DATA, 100, 300, run);
		for (int i = 0; i < 3; i++)
			raw_transaction(fd, 100, 300);
		bpt_send_all(fd, buf, 50);
		break;
	default:
		return;
	}
	if (how == BPT_FIN)
		shutdown(fd, SHUT_WR); /* a FIN even when unread bytes would turn close() into a RST */
	bpt_vanish(fd, how);
	faults_total++;
}

static void peers_vanish(const struct bp_mode *m, const char *text)
{
	struct rr_opts so, o;
	struct rr_server *s;
	char err[256];
	int base, after;
	uint64_t before = faults_total;

	base_opts(&so, m, text);
	so.server = true;
	so.port = 0;
	so.threads = 2;
	BPT_CHECK(rr_server_start(&so, &s, err, sizeof(err)) == 0, "%s: server: %s", text, err);
	port = rr_server_port(s);
	base = bpt_fd_count(0);
	cur_mode = text;

	for (int r = 0; r < rounds; r++)
		for (int sc = 0; sc < N_SCENARIOS; sc++) {
			vanish_once((enum scenario)sc, BPT_RST);
			vanish_once((enum scenario)sc, BPT_FIN);
		}
	after = bpt_fd_settle(0, base, SETTLE_MS);
	BPT_CHECK(after == base, "%s: %d descriptors before the faults, %d after (a leak)", text, base, after);
	BPT_CHECK(BPT_WAIT_UNTIL(rr_server_runs_live(s) == 0, SETTLE_MS),
		  "%s: %u run slots still held after every faulty peer left (a leak)", text, rr_server_runs_live(s));

	base_opts(&o, m, text);
	o.flows = 4;
	client_run(&o, text);
	/* A good flow by hand too: the server's state per run is clean. */
	{
		int fd = raw_flow(BP_RR_KIND_DATA, 64, 64, random_id());

		raw_transaction(fd, 64, 64);
		close(fd);
	}
	after = bpt_fd_settle(0, base, SETTLE_MS);
	BPT_CHECK(after == base, "%s: %d descriptors after the next client, %d before", text, after, base);
	BPT_CHECK(BPT_WAIT_UNTIL(rr_server_runs_live(s) == 0, SETTLE_MS),
		  "%s: %u run slots still held after the next client finished", text, rr_server_runs_live(s));
	rr_server_stop(s);
	printf("ok   %-38s %llu faults (RST and FIN x 5 scenarios), next client served, fds %d -> %d, "
	       "0 run slots held\n", text, (unsigned long long)(faults_total - before), base, after);
}

/* ---- 2. idle, half-open and slow peers while a client runs ---- */

struct trickler {
	bool in_hello;            /* trickle the hello itself, else a request after it */
	int seconds;
	bool closed_early;
	bool answered;
	atomic_bool trickling;    /* its first byte is sent */
	pthread_t th;
};

static void *trickle(void *arg)
{
	struct trickler *t = arg;
	uint8_t hello[BP_RR_HELLO_LEN], req[64] = { 0 }, ack[BP_RR_ACK_LEN];
	const uint8_t *src;
	size_t len, sent = 0;
	int fd;

	hello_bytes(hello, BP_RR_KIND_DATA, sizeof(req), 200, random_id());
	if (t->in_hello) {
		fd = bpt_connect(port);
		src = hello;
		len = sizeof(hello);
	} else {
		fd = raw_flow(BP_RR_KIND_DATA, sizeof(req), 200, random_id());
		src = req;
		len = sizeof(req);
	}
	/* One byte per second, bounded. */
	for (int i = 0; i < t->seconds && sent < len; i++) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		bpt_send_all(fd, src + sent++, 1);
		atomic_store(&t->trickling, true);
		if (poll(&p, 1, 1000) == 1) {
			t->closed_early = true; /* nothing is owed to us yet: only a close can arrive */
			close(fd);
			return NULL;
		}
	}
	/* Then the rest at once: the server must still answer correctly. */
	bpt_send_all(fd, src + sent, len - sent);
	if (t->in_hello) {
		struct bp_rr_ack a;

		t->answered = bpt_recv_all(fd, ack, sizeof(ack), 5000) && bp_rr_ack_decode(ack, &a) == 0 &&
			      a.status == BP_RR_OK;
		if (t->answered)
			raw_transaction(fd, sizeof(req), 200);
	} else {
		uint8_t resp[200];

		t->answered = bpt_recv_all(fd, resp, sizeof(resp), 5000);
	}
	close(fd);
	return NULL;
}

static void idle_and_slow_peers(void)
{
	struct bp_mode m;
	struct rr_opts so, o;
	struct rr_server *s;
	char err[256];
	enum { N_EACH = 25 };
	int silent[N_EACH], hello_only[N_EACH], base, held, n_forgotten = 0;
	struct trickler tr[2] = { { .in_hello = true, .seconds = 5 }, { .in_hello = false, .seconds = 5 } };
	double tps0, tps1;
	bool can_forget = bpt_can_forget();

	BPT_CHECK(bpt_mode_usable("epoll:block", &m), "epoll:block");
	base_opts(&so, &m, "epoll:block");
	so.server = true;
	so.port = 0;
	so.threads = 2;
	BPT_CHECK(rr_server_start(&so, &s, err, sizeof(err)) == 0, "server: %s", err);
	port = rr_server_port(s);
	base = bpt_fd_count(0);

	base_opts(&o, &m, "epoll:block");
	o.flows = 4;
	o.duration_s = 1;
	client_run(&o, "baseline");
	tps0 = res.tps;

	/* Silent clients, and clients that stop after their hello. */
	for (int i = 0; i < N_EACH; i++) {
		silent[i] = bpt_connect(port);
		hello_only[i] = raw_flow(BP_RR_KIND_DATA, 64, 64, random_id());
	}
	/* Half-open: before the hello, and after half a request. */
	if (can_forget) {
		for (int i = 0; i < N_EACH; i++) {
			int fd = bpt_connect(port), fd2 = raw_flow(BP_RR_KIND_DATA, 64, 64, random_id());
			uint8_t half[32] = { 0 };

			bpt_send_all(fd2, half, sizeof(half));
			BPT_CHECK(bpt_vanish(fd, BPT_FORGET) && bpt_vanish(fd2, BPT_FORGET), "TCP_REPAIR");
			n_forgotten += 2;
		}
	} else {
		bpt_skip_part("half-open connections: TCP_REPAIR needs CAP_NET_ADMIN (run as root)");
	}
	faults_total += 2 * N_EACH + (uint64_t)n_forgotten + 2;
	for (int i = 0; i < 2; i++)
		BPT_CHECK(pthread_create(&tr[i].th, NULL, trickle, &tr[i]) == 0, "pthread_create");

	/* Meanwhile, a client at full speed, once both slow senders are trickling. */
	BPT_CHECK(BPT_WAIT_UNTIL(atomic_load(&tr[0].trickling) && atomic_load(&tr[1].trickling), 30000),
		  "the slow senders did not start");
	base_opts(&o, &m, "epoll:block");
	o.flows = 4;
	o.duration_s = 3.5;
	client_run(&o, "alongside idle, half-open and slow peers");
	tps1 = res.tps;
	/* This process holds both ends: take away our side of the idle ones and of the tricklers. */
	held = bpt_fd_count(0) - base - 2 * N_EACH - 2;
	for (int i = 0; i < 2; i++) {
		pthread_join(tr[i].th, NULL);
		BPT_CHECK(!tr[i].closed_early, "the rr server closed a slow sender (%s)", tr[i].in_hello ? "hello" : "request");
		BPT_CHECK(tr[i].answered, "the slow sender's %s was not answered once complete",
			  tr[i].in_hello ? "hello" : "request");
	}
	BPT_CHECK(tps1 >= tps0 / 10, "the client got %.0f tx/s next to idle and slow peers, %.0f tx/s before", tps1,
		  tps0);
	printf("ok   alongside %d silent, %d hello-only, %d half-open and 2 slow senders (1 byte/s, 5 s): "
	       "%.0f tx/s (%.0f%% of %.0f before); the tricklers were answered once complete\n",
	       N_EACH, N_EACH, n_forgotten, tps1, 100 * tps1 / tps0, tps0);
	printf("connections held by the server at once (idle, half-open, slow): %d\n", held);

	/* The idle ones go; the half-open ones stay: the rr server has no idle limit (see the report). */
	for (int i = 0; i < N_EACH; i++) {
		close(silent[i]);
		close(hello_only[i]);
	}
	held = bpt_fd_settle(0, base + n_forgotten, SETTLE_MS) - base;
	BPT_CHECK(held <= n_forgotten, "%d descriptors over the baseline after the idle clients closed", held);
	/* Of the half-open ones, those past their hello (half of them) each hold their run's slot. */
	BPT_CHECK(BPT_WAIT_UNTIL(rr_server_runs_live(s) == (unsigned)n_forgotten / 2, SETTLE_MS),
		  "%u run slots held after the idle clients closed, expected the %d half-open flows' own",
		  rr_server_runs_live(s), n_forgotten / 2);
	printf("ok   idle clients gone: fds back to baseline + %d half-open the server still holds, "
	       "%u run slots (theirs)\n", held, rr_server_runs_live(s));
	rr_server_stop(s);
}

int main(int argc, char **argv)
{
	const char *only = NULL;
	struct bp_mode m;
	int ran = 0;

	signal(SIGPIPE, SIG_IGN);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--mode") && i + 1 < argc) {
			only = argv[++i];
		} else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) {
			rounds = atoi(argv[++i]);
		} else {
			fprintf(stderr, "usage: %s [--mode MODE] [--rounds N]\n", argv[0]);
			return 2;
		}
	}
	printf("peers vanish (RST, FIN):");
	for (int sc = 0; sc < N_SCENARIOS; sc++)
		printf("%s %s", sc ? "," : "", scenario_name[sc]);
	printf("\n");
	for (size_t i = 0; i < bpt_n_modes; i++) {
		const char *text = only ? only : bpt_all_modes[i];

		if (bpt_mode_usable(text, &m)) {
			peers_vanish(&m, text);
			ran++;
		}
		if (only)
			break;
	}
	if (!ran)
		return bpt_exit_status();
	idle_and_slow_peers();
	printf("faults injected: %llu\n", (unsigned long long)faults_total);
	printf("PASS\n");
	return bpt_exit_status();
}
