/* SPDX-License-Identifier: MIT */
/*
 * bench_echo - the engine's own 1-byte echo in one mode: the figure to hold
 * against bench_floor (raw recv spin) on the same path and pinning.
 *
 *   bench_echo --server --mode MODE [--bind ADDR] [--port P] [--cpu N]
 *   bench_echo --client HOST --mode MODE [--port P] [--cpu N] [-n ROUNDS] [--warmup N]
 *
 * The server serves one client and exits when it disconnects. The client prints
 * one line: mode, rounds, p50, p99, mean RTT in microseconds, and its loop's
 * syscalls and empty polls per round trip.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <busypoll/busypoll.h>

struct opts {
	bool server;
	const char *host, *bind, *mode_text;
	int port, cpu;
	long rounds, warmup;
};

static struct bp_mode mode;
static struct bp_hist hist;

/* ---- server ---- */

static size_t echo_recv(struct bp_conn *c, const uint8_t *d, size_t n)
{
	if (bp_conn_send(c, d, n))
		bp_loop_stop(bp_conn_loop(c));
	return n;
}

static void echo_close(struct bp_conn *c, int err, const char *sc)
{
	bp_loop_stop(bp_conn_loop(c));
}

static const struct bp_conn_ops echo_ops = { .on_recv = echo_recv, .on_close = echo_close };

static void on_accept(struct bp_listener *l, int fd, void *arg)
{
	if (bp_conn_adopt(bp_listener_loop(l), fd, &echo_ops, NULL, NULL))
		fprintf(stderr, "bench_echo: %s\n", bp_last_error());
}

/* ---- client ---- */

struct client {
	long done, rounds, warmup;
	uint64_t t0;
	struct bp_loop *loop;
};

static void ping(struct bp_conn *c)
{
	struct client *cl = bp_conn_data(c);
	uint8_t b = 1;

	cl->t0 = bp_now_ns();
	if (bp_conn_send(c, &b, 1))
		bp_loop_stop(cl->loop);
}

static size_t pong(struct bp_conn *c, const uint8_t *d, size_t n)
{
	struct client *cl = bp_conn_data(c);

	if (cl->done++ >= cl->warmup)
		bp_hist_record(&hist, bp_now_ns() - cl->t0);
	if (cl->done == cl->rounds + cl->warmup)
		bp_loop_stop(cl->loop);
	else
		ping(c);
	return n;
}

static void client_close(struct bp_conn *c, int err, const char *sc)
{
	fprintf(stderr, "bench_echo: connection lost: %s: %s\n", sc, strerror(-err));
	exit(1);
}

static const struct bp_conn_ops client_ops = { .on_recv = pong, .on_connect = ping, .on_close = client_close };

static void die(const char *what)
{
	fprintf(stderr, "bench_echo: %s: %s\n", what, bp_last_error());
	exit(1);
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "server", no_argument, 0, 's' }, { "client", required_argument, 0, 'c' },
		{ "mode", required_argument, 0, 'm' }, { "bind", required_argument, 0, 'b' },
		{ "port", required_argument, 0, 'p' }, { "cpu", required_argument, 0, 'C' },
		{ "warmup", required_argument, 0, 'w' }, { 0, 0, 0, 0 },
	};
	struct opts o = { .mode_text = "epoll:block", .port = 7100, .cpu = -1, .rounds = 20000, .warmup = 1000 };
	struct sockaddr_storage ss;
	socklen_t sl;
	struct bp_loop *loop;
	char err[256];
	int c;

	while ((c = getopt_long(argc, argv, "n:", lopts, NULL)) != -1) {
		switch (c) {
		case 's': o.server = true; break;
		case 'c': o.host = optarg; break;
		case 'm': o.mode_text = optarg; break;
		case 'b': o.bind = optarg; break;
		case 'p': o.port = atoi(optarg); break;
		case 'C': o.cpu = atoi(optarg); break;
		case 'n': o.rounds = atol(optarg); break;
		case 'w': o.warmup = atol(optarg); break;
		default:
			fprintf(stderr, "usage: bench_echo --server|--client HOST --mode MODE [--port P] [--cpu N] [-n N]\n");
			return 2;
		}
	}
	if (o.server == !!o.host || o.rounds <= 0 || o.port <= 0 || o.port > 65535) {
		fprintf(stderr, "bench_echo: give exactly one of --server and --client HOST, rounds > 0, a port\n");
		return 2;
	}
	if (bp_mode_parse(o.mode_text, &mode, err, sizeof(err)) || bp_mode_check(&mode, err, sizeof(err))) {
		fprintf(stderr, "bench_echo: %s\n", err);
		return 2;
	}
	if (o.cpu >= 0 && bp_pin_thread(o.cpu))
		die("pin");
	if (bp_loop_create(&loop, &mode))
		die("loop");
	if (bp_parse_addr(o.server ? (o.bind ? o.bind : "0.0.0.0") : o.host, (uint16_t)o.port, &ss, &sl))
		die("address");
	if (o.server) {
		struct bp_listener *l;

		if (bp_listener_create(loop, (struct sockaddr *)&ss, sl, on_accept, NULL, &l))
			die("listen");
		bp_loop_run(loop);
	} else {
		struct client cl = { .rounds = o.rounds, .warmup = o.warmup, .loop = loop };
		const struct bp_loop_counters *k = bp_loop_counters(loop);

		bp_hist_init(&hist);
		if (bp_conn_connect(loop, (struct sockaddr *)&ss, sl, SOCK_STREAM, &client_ops, &cl, NULL))
			die("connect");
		bp_loop_run(loop);
		printf("%-34s rounds %ld  p50 %7.2f us  p99 %7.2f us  mean %7.2f us  syscalls/rt %.2f  empty/rt %.1f\n",
		       o.mode_text, (long)hist.count, bp_hist_percentile(&hist, 50) / 1e3,
		       bp_hist_percentile(&hist, 99) / 1e3, bp_hist_mean(&hist) / 1e3,
		       (double)k->syscalls / (double)(o.rounds + o.warmup),
		       (double)k->empty_polls / (double)(o.rounds + o.warmup));
	}
	bp_loop_destroy(loop);
	return 0;
}
