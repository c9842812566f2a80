/* SPDX-License-Identifier: MIT */
/*
 * echo_server MODE [ADDR:PORT]: a TCP echo server on one busypoll loop.
 *
 *   cc echo_server.c $(pkg-config --cflags --libs busypoll) -o echo_server
 *   ./echo_server epoll:napi,usecs=50 0.0.0.0:7000
 *
 * MODE is any wait mode `busypoll modes` lists; the address defaults to
 * 127.0.0.1:0 (port 0: the kernel picks one, printed at start). SIGINT or
 * SIGTERM stops the loop; the loop's counters are printed on the way out.
 */
#include <busypoll/busypoll.h>

#include <signal.h>
#include <stdio.h>
#include <string.h>

static struct bp_loop *loop;

/* Bytes arrived: send them straight back; all of them were consumed. */
static size_t echo_recv(struct bp_conn *c, const uint8_t *data, size_t len)
{
	if (bp_conn_send(c, data, len) < 0)
		bp_conn_close(c); /* out of memory for the send queue: drop this client */
	return len;
}

/* The connection is gone (err 0: the client closed it). The library frees it. */
static void echo_close(struct bp_conn *c, int err, const char *syscall)
{
	if (err)
		fprintf(stderr, "echo_server: a connection failed: %s: %s\n", syscall, strerror(-err));
}

static const struct bp_conn_ops echo_ops = { .on_recv = echo_recv, .on_close = echo_close };

/* A client connected: serve its socket on the listener's loop. */
static void on_accept(struct bp_listener *l, int fd, void *arg)
{
	if (bp_conn_adopt(bp_listener_loop(l), fd, &echo_ops, NULL, NULL) < 0)
		fprintf(stderr, "echo_server: %s\n", bp_last_error());
}

static void on_signal(int sig) { bp_loop_stop(loop); } /* async-signal-safe */

int main(int argc, char **argv)
{
	struct sockaddr_storage addr;
	struct bp_listener *l;
	struct bp_mode mode;
	socklen_t alen;
	char err[256];

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: echo_server MODE [ADDR:PORT]   (e.g. epoll:block)\n");
		return 2;
	}
	/* Parse the mode, then ask whether this kernel and process can use it. */
	if (bp_mode_parse(argv[1], &mode, err, sizeof(err)) < 0 ||
	    bp_mode_check(&mode, err, sizeof(err)) < 0) {
		fprintf(stderr, "echo_server: %s\n", err);
		return 2;
	}
	if (bp_parse_addr(argc > 2 ? argv[2] : "127.0.0.1:0", 0, &addr, &alen) < 0) {
		fprintf(stderr, "echo_server: %s\n", bp_last_error());
		return 2;
	}
	if (bp_loop_create(&loop, &mode) < 0 ||
	    bp_listener_create(loop, (struct sockaddr *)&addr, alen, on_accept, NULL, &l) < 0) {
		fprintf(stderr, "echo_server: %s\n", bp_last_error());
		return 1;
	}
	bp_mode_format(&mode, err, sizeof(err));
	printf("echo_server: port %u, mode %s\n", bp_listener_port(l), err);
	fflush(stdout);

	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	int ret = bp_loop_run(loop);
	const struct bp_loop_counters *ctr = bp_loop_counters(loop);
	printf("echo_server: %llu bytes echoed, %llu waits, %llu wake-ups, %llu syscalls\n",
	       (unsigned long long)ctr->bytes_out, (unsigned long long)ctr->waits,
	       (unsigned long long)ctr->wakeups, (unsigned long long)ctr->syscalls);
	if (ret < 0)
		fprintf(stderr, "echo_server: %s\n", bp_last_error());
	bp_loop_destroy(loop);
	return ret < 0 ? 1 : 0;
}
