/* SPDX-License-Identifier: MIT */
/*
 * rr_client ADDR:PORT [MODE [COUNT [SIZE]]]: request/response against an echo
 * server (echo_server.c, napi_server.c): COUNT requests of SIZE bytes, one at a
 * time, each checked when it comes back; prints latency percentiles.
 *
 *   cc rr_client.c $(pkg-config --cflags --libs busypoll) -o rr_client
 *   ./rr_client 127.0.0.1:7000 epoll:spin 10000 64
 *
 * Defaults: epoll:block, 1000 requests, 32 bytes. Exit 1 if the server closes,
 * answers wrongly or is silent for 2 s (a timer, re-armed by every answer).
 */
#include <busypoll/busypoll.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct client {
	uint8_t req[65536];
	size_t size, got;
	long left;
	uint64_t sent_ns;
	struct bp_hist hist;
	struct bp_timer silence;
	const char *failed;
};

static void fail(struct bp_loop *loop, struct client *cl, const char *why)
{
	cl->failed = why;
	bp_loop_stop(loop);
}

static void on_silence(struct bp_loop *loop, void *arg) { fail(loop, arg, "no answer for 2 s"); }

/* Send the next request, or stop when all were answered. */
static void send_next(struct bp_conn *c, struct client *cl)
{
	if (cl->left-- == 0) {
		bp_loop_stop(bp_conn_loop(c));
		return;
	}
	cl->req[0]++; /* every request differs from the one before */
	cl->got = 0;
	cl->sent_ns = bp_now_ns();
	if (bp_timer_start(bp_conn_loop(c), &cl->silence, 2000000, on_silence, cl) < 0 ||
	    bp_conn_send(c, cl->req, cl->size) < 0)
		fail(bp_conn_loop(c), cl, bp_last_error());
}

static void on_connect(struct bp_conn *c) { send_next(c, bp_conn_data(c)); }

/* Bytes of the answer: check them; a complete answer is one transaction. */
static size_t on_recv(struct bp_conn *c, const uint8_t *data, size_t len)
{
	struct client *cl = bp_conn_data(c);

	if (cl->got + len > cl->size || memcmp(cl->req + cl->got, data, len)) {
		fail(bp_conn_loop(c), cl, "the answer differs from the request");
		return len;
	}
	cl->got += len;
	if (cl->got == cl->size) {
		bp_hist_record(&cl->hist, bp_now_ns() - cl->sent_ns);
		send_next(c, cl);
	}
	return len;
}

static void on_close(struct bp_conn *c, int err, const char *syscall)
{
	static char why[128];

	snprintf(why, sizeof(why), "%s: %s", syscall, err ? strerror(-err) : "closed by the server");
	fail(bp_conn_loop(c), bp_conn_data(c), why);
}

static const struct bp_conn_ops ops = { .on_recv = on_recv, .on_connect = on_connect, .on_close = on_close };

int main(int argc, char **argv)
{
	static struct client cl = { .size = 32, .left = 1000 };
	struct sockaddr_storage addr;
	struct bp_loop *loop = NULL;
	struct bp_mode mode;
	socklen_t alen;
	char err[256];

	if (argc < 2 || argc > 5 || (argc > 3 && (cl.left = atol(argv[3])) < 1) ||
	    (argc > 4 && ((cl.size = strtoul(argv[4], NULL, 10)) < 1 || cl.size > sizeof(cl.req)))) {
		fprintf(stderr, "usage: rr_client ADDR:PORT [MODE [COUNT>0 [SIZE 1..65536]]]\n");
		return 2;
	}
	if (bp_mode_parse(argc > 2 ? argv[2] : "epoll:block", &mode, err, sizeof(err)) < 0 ||
	    bp_mode_check(&mode, err, sizeof(err)) < 0) {
		fprintf(stderr, "rr_client: %s\n", err);
		return 2;
	}
	if (bp_parse_addr(argv[1], 0, &addr, &alen) < 0) {
		fprintf(stderr, "rr_client: %s\n", bp_last_error());
		return 2;
	}
	for (size_t i = 0; i < cl.size; i++)
		cl.req[i] = (uint8_t)(i * 131 + 7); /* a pattern, so a wrong answer shows */
	bp_hist_init(&cl.hist);
	long count = cl.left;
	if (bp_loop_create(&loop, &mode) < 0 ||
	    bp_timer_start(loop, &cl.silence, 2000000, on_silence, &cl) < 0 || /* the connect too */
	    bp_conn_connect(loop, (struct sockaddr *)&addr, alen, SOCK_STREAM, &ops, &cl, NULL) < 0 ||
	    bp_loop_run(loop) < 0)
		cl.failed = bp_last_error();
	if (!cl.failed)
		printf("rr_client: %ld transactions of %zu bytes, latency us: p50 %.1f p99 %.1f max %.1f\n",
		       count, cl.size, bp_hist_percentile(&cl.hist, 50) / 1e3,
		       bp_hist_percentile(&cl.hist, 99) / 1e3, cl.hist.max / 1e3);
	else
		fprintf(stderr, "rr_client: %s after %llu transactions\n", cl.failed,
			(unsigned long long)cl.hist.count);
	if (loop)
		bp_loop_destroy(loop);
	return cl.failed ? 1 : 0;
}
