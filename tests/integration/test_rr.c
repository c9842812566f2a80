/* SPDX-License-Identifier: MIT */
/*
 * busypoll rr over loopback: every mode with client and server counts equal;
 * sizes honoured; UDP; 1,000 flows on one thread; refused hellos and a client
 * killed mid-run leave the server serving the next client; an SQPOLL mode's CPU
 * counts its SQ thread.
 * Usage: integ_test_rr [--mode MODE]
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bptest.h"
#include "base/bytes.h"
#include "tools/rr/rr.h"

static struct rr_result res;

static void base_opts(struct rr_opts *o, const struct bp_mode *m, const char *mode_text)
{
	rr_opts_defaults(o);
	o->mode = *m;
	snprintf(o->mode_text, sizeof(o->mode_text), "%s", mode_text);
	o->quiet = true;
	o->warmup_s = 0.05;
	o->duration_s = 0.3;
}

static struct rr_server *server_up(const struct bp_mode *m, const char *text, int threads)
{
	struct rr_opts so;
	struct rr_server *s;
	char err[256];

	base_opts(&so, m, text);
	so.server = true;
	so.port = 0; /* any free port */
	so.threads = threads;
	so.hello_timeout_ms = 500; /* the silent-client check below waits for it */
	snprintf(so.host, sizeof(so.host), "127.0.0.1");
	BPT_CHECK(rr_server_start(&so, &s, err, sizeof(err)) == 0, "%s: server: %s", text, err);
	return s;
}

static void client_run(struct rr_opts *o, struct rr_server *s, const char *what)
{
	char err[256];

	o->server = false;
	snprintf(o->host, sizeof(o->host), "127.0.0.1");
	o->port = rr_server_port(s);
	BPT_CHECK(rr_client_run(o, NULL, &res, err, sizeof(err)) == 0, "%s: client: %s", what, err);
	BPT_CHECK(res.server.valid, "%s: no stats from the server", what);
	BPT_CHECK(res.transactions > 0, "%s: no transactions measured", what);
	BPT_CHECK(res.client.transactions == res.server.transactions,
		  "%s: client counted %llu transactions, server %llu", what,
		  (unsigned long long)res.client.transactions, (unsigned long long)res.server.transactions);
	BPT_CHECK(res.hist.count == res.transactions, "%s: %llu latencies for %llu transactions", what,
		  (unsigned long long)res.hist.count, (unsigned long long)res.transactions);
	BPT_CHECK(res.tps > 0 && res.hist.min > 0 && res.hist.max >= res.hist.min, "%s: figures", what);
}

/* The server's byte counters prove the sizes: each transaction moved Q up and R down. */
static void sizes_honoured(const struct bp_mode *m, const char *text, struct rr_server *s)
{
	static const uint32_t qr[][2] = { { 1, 1 }, { 64, 4096 }, { 4096, 64 } };

	for (size_t i = 0; i < 3; i++) {
		struct rr_opts o;
		char what[160];

		base_opts(&o, m, text);
		o.request_size = qr[i][0];
		o.response_size = qr[i][1];
		o.flows = 3;
		o.duration_s = 0;
		o.transactions = 200;
		snprintf(what, sizeof(what), "%s Q=%u R=%u", text, qr[i][0], qr[i][1]);
		client_run(&o, s, what);
		BPT_CHECK(res.transactions == 200, "%s: -n 200 measured %llu", what,
			  (unsigned long long)res.transactions);
	}
}

/* Raw hellos that must be refused, each with the right status, server unharmed. */
static void refused_hellos(uint16_t port)
{
	struct {
		const char *what;
		uint32_t magic;
		uint16_t version;
		uint32_t req;
		int status;
	} cases[] = {
		{ "wrong magic", 0xdeadbeef, BP_RR_VERSION, 1, BP_RR_REFUSE_MAGIC },
		{ "wrong version", BP_RR_MAGIC, 99, 1, BP_RR_REFUSE_VERSION },
		{ "absurd size", BP_RR_MAGIC, BP_RR_VERSION, 0x7fffffff, BP_RR_REFUSE_SIZE },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port),
					 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
		uint8_t hello[BP_RR_HELLO_LEN] = { 0 }, ack[BP_RR_ACK_LEN];
		struct pollfd p;
		size_t got = 0;
		int fd = socket(AF_INET, SOCK_STREAM, 0);

		BPT_CHECK(fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0, "connect: %s", strerror(errno));
		bp_put_le32(hello, cases[i].magic);
		bp_put_le16(hello + 4, cases[i].version);
		bp_put_le32(hello + 8, cases[i].req);
		bp_put_le32(hello + 12, 1);
		BPT_CHECK(send(fd, hello, sizeof(hello), 0) == (ssize_t)sizeof(hello), "send hello");
		while (got < sizeof(ack)) {
			ssize_t n;

			p = (struct pollfd){ .fd = fd, .events = POLLIN };
			BPT_CHECK(poll(&p, 1, 5000) == 1, "%s: no answer", cases[i].what);
			n = recv(fd, ack + got, sizeof(ack) - got, 0);
			BPT_CHECK(n > 0, "%s: closed without an ack", cases[i].what);
			got += (size_t)n;
		}
		BPT_CHECK(bp_get_le16(ack + 6) == cases[i].status, "%s: status %u, expected %d", cases[i].what,
			  bp_get_le16(ack + 6), cases[i].status);
		/* ...and then the server closes the connection. */
		p = (struct pollfd){ .fd = fd, .events = POLLIN };
		BPT_CHECK(poll(&p, 1, 5000) == 1 && recv(fd, ack, 1, 0) == 0, "%s: connection left open", cases[i].what);
		close(fd);
	}
}

/* A client that connects and says nothing is closed at the hello deadline. */
static void silent_client_closed(uint16_t port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct pollfd p;
	uint64_t t0 = bpt_now_ns();
	char b;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	BPT_CHECK(fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0, "connect: %s", strerror(errno));
	p = (struct pollfd){ .fd = fd, .events = POLLIN };
	BPT_CHECK(poll(&p, 1, 30000) == 1 && recv(fd, &b, 1, 0) == 0, "a silent client was not closed within 30 s");
	/* t0 precedes the server's accept and so its timer: never early; late only by what a loaded machine adds. */
	BPT_CHECK(bpt_now_ns() - t0 >= 500000000ull, "closed after %.0f ms, before the 500 ms hello deadline",
		  (double)(bpt_now_ns() - t0) / 1e6);
	BPT_CHECK(bpt_now_ns() - t0 <= 30000000000ull, "closed after %.0f ms, more than 29.5 s past the 500 ms hello deadline",
		  (double)(bpt_now_ns() - t0) / 1e6);
	close(fd);
}

/* A client process killed mid-run (no STOP, flows torn down by the kernel). */
static void client_killed_mid_run(const struct bp_mode *m, const char *text, struct rr_server *s)
{
	pid_t pid = fork();

	BPT_CHECK(pid >= 0, "fork");
	if (pid == 0) {
		struct rr_opts o;
		char err[256];

		base_opts(&o, m, text);
		o.flows = 4;
		o.duration_s = 30;
		snprintf(o.host, sizeof(o.host), "127.0.0.1");
		o.port = rr_server_port(s);
		rr_client_run(&o, NULL, &res, err, sizeof(err));
		_exit(0);
	}
	/* Mid-run: its run holds a slot once its control connection and flows said hello. */
	BPT_CHECK(BPT_WAIT_UNTIL(rr_server_runs_live(s) >= 1, 30000), "the client never started its run");
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static void run_mode(const struct bp_mode *m, const char *text)
{
	struct rr_server *s = server_up(m, text, 2);
	struct rr_opts o;

	base_opts(&o, m, text);
	o.flows = 4;
	o.threads = 1;
	client_run(&o, s, text);
	printf("ok   %-40s %8.0f tx/s p50 %6.1f us\n", text, res.tps,
	       (double)bp_hist_percentile(&res.hist, 50) / 1000.0);
	rr_server_stop(s);
}

/* find_thread - the first thread of side ev whose name starts with prefix, NULL if none. */
static const struct ev_thread *find_thread(const struct evidence *ev, const char *prefix)
{
	for (uint32_t i = 0; i < ev->nthr; i++)
		if (!strncmp(ev->thr[i].comm, prefix, strlen(prefix)))
			return &ev->thr[i];
	return NULL;
}

/*
 * An SQPOLL mode's CPU includes its SQ thread: a kernel thread that spins for
 * the loop thread whose tid it carries. Over a 2 s run it burns far more than the
 * loop thread (which sleeps in each wait), and both sides name it.
 */
static void sqpoll_cpu_counted(void)
{
	struct bp_mode m;
	struct rr_server *s;
	struct rr_opts o;
	const struct ev_thread *loop, *sq;
	char want[EV_COMM_LEN];

	if (!bpt_mode_usable("uring:sqpoll", &m)) {
		printf("skip SQPOLL CPU: uring:sqpoll is not usable here\n");
		return;
	}
	s = server_up(&m, "uring:sqpoll", 1);
	base_opts(&o, &m, "uring:sqpoll");
	o.duration_s = 2;
	client_run(&o, s, "uring:sqpoll");
	rr_server_stop(s);
	for (int side = 0; side < 2; side++) {
		const struct evidence *ev = side ? &res.server : &res.client;

		loop = find_thread(ev, side ? "rr-server-" : "rr-client-");
		sq = find_thread(ev, "iou-sqp-");
		BPT_CHECK(loop && sq, "%s: the SQ thread is not among the threads counted (%u named)",
			  side ? "server" : "client", ev->nthr);
		snprintf(want, sizeof(want), "iou-sqp-%d", (int)loop->tid);
		BPT_CHECK(!strcmp(sq->comm, want), "%s: %s counted for loop thread %d", side ? "server" : "client",
			  sq->comm, (int)loop->tid);
		BPT_CHECK(2 * sq->cpu_us > 3 * loop->cpu_us && sq->cpu_us > 200000,
			  "%s: SQ thread %llu us, loop thread %llu us over 2 s: the SQ thread's spin is missing",
			  side ? "server" : "client", (unsigned long long)sq->cpu_us, (unsigned long long)loop->cpu_us);
		BPT_CHECK(ev->helper_cpu_us == sq->cpu_us && ev_cpu_us(ev) >= loop->cpu_us + sq->cpu_us,
			  "%s: the side's CPU (%llu us) leaves out its SQ thread (%llu us)", side ? "server" : "client",
			  (unsigned long long)ev_cpu_us(ev), (unsigned long long)sq->cpu_us);
		printf("ok   uring:sqpoll %s: loop thread %llu us + %s %llu us counted\n", side ? "server" : "client",
		       (unsigned long long)loop->cpu_us, sq->comm, (unsigned long long)sq->cpu_us);
	}
}

int main(int argc, char **argv)
{
	const char *only = NULL;
	struct bp_mode m;
	struct rr_server *s;
	struct rr_opts o;
	int ran = 0;

	signal(SIGPIPE, SIG_IGN);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--mode") && i + 1 < argc)
			only = argv[++i];
		else {
			fprintf(stderr, "usage: %s [--mode MODE]\n", argv[0]);
			return 2;
		}
	}
	/* Every mode: counts equal on both sides. */
	for (size_t i = 0; i < bpt_n_modes; i++) {
		const char *text = only ? only : bpt_all_modes[i];

		if (bpt_mode_usable(text, &m)) {
			run_mode(&m, text);
			ran++;
		}
		if (only)
			break;
	}
	if (!ran)
		return bpt_exit_status();
	if (only)
		return bpt_exit_status();

	/* The rest on the baseline mode. */
	BPT_CHECK(bpt_mode_usable("epoll:block", &m), "epoll:block must work everywhere");
	s = server_up(&m, "epoll:block", 2);
	sizes_honoured(&m, "epoll:block", s);
	printf("ok   sizes Q=1 R=1, Q=64 R=4096, Q=4096 R=64\n");

	base_opts(&o, &m, "epoll:block");
	o.udp = true;
	o.request_size = 16;
	o.response_size = 100;
	o.flows = 8;
	client_run(&o, s, "udp");
	printf("ok   udp: %llu transactions, %llu lost\n", (unsigned long long)res.transactions,
	       (unsigned long long)res.udp_lost);

	base_opts(&o, &m, "epoll:block");
	o.flows = 1000;
	o.threads = 1;
	o.duration_s = 0.5;
	client_run(&o, s, "1000 flows");
	printf("ok   1000 flows on one thread: %llu transactions\n", (unsigned long long)res.transactions);

	refused_hellos(rr_server_port(s));
	silent_client_closed(rr_server_port(s));
	client_killed_mid_run(&m, "epoll:block", s);
	base_opts(&o, &m, "epoll:block");
	client_run(&o, s, "after refused hellos and a killed client");
	/* Every client is gone, the killed one too: no run keeps its slot. */
	BPT_CHECK(BPT_WAIT_UNTIL(rr_server_runs_live(s) == 0, 30000), "%u run slots still held after every client left",
		  rr_server_runs_live(s));
	printf("ok   server still serving after refused hellos and a killed client; no run slot held\n");
	rr_server_stop(s);
	sqpoll_cpu_counted();
	printf("%d modes passed\n", ran);
	return bpt_exit_status();
}
