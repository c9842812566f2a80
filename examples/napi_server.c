/* SPDX-License-Identifier: MIT */
/*
 * napi_server MODE LOOPS [ADDR:PORT]: an echo server with LOOPS loop threads in
 * MODE. The main thread accepts; a placer hands each connection to a loop by its
 * NAPI id (the receive queue it arrives on), so every connection of one NAPI id
 * is served, and busy polled, by the same thread. NAPI id 0 (loopback, which has
 * no NAPI) goes round robin.
 *
 *   cc napi_server.c $(pkg-config --cflags --libs busypoll) -o napi_server
 *   ./napi_server epoll:napi,usecs=50 2 0.0.0.0:7000
 *
 * Prints each placement; on SIGINT/SIGTERM each loop's bytes and NAPI ids.
 */
#include <busypoll/busypoll.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_LOOPS 64

static struct bp_loop_thread *threads[MAX_LOOPS];
static struct bp_loop *loops[MAX_LOOPS];
static struct bp_placer *placer;
static struct bp_loop *accept_loop;

static size_t echo_recv(struct bp_conn *c, const uint8_t *data, size_t len)
{
	if (bp_conn_send(c, data, len) < 0)
		bp_conn_close(c);
	return len;
}

static void echo_close(struct bp_conn *c, int err, const char *syscall)
{
	if (err)
		fprintf(stderr, "napi_server: a connection failed: %s: %s\n", syscall, strerror(-err));
}

static const struct bp_conn_ops echo_ops = { .on_recv = echo_recv, .on_close = echo_close };

/* Runs on the chosen loop's own thread: the connection lives there from now on. */
static void adopt(struct bp_loop *loop, int fd, void *arg)
{
	if (bp_conn_adopt(loop, fd, &echo_ops, NULL, NULL) < 0)
		fprintf(stderr, "napi_server: %s\n", bp_last_error());
}

static void on_accept(struct bp_listener *l, int fd, void *arg)
{
	uint32_t id = 0;

	bp_sock_napi_id(fd, &id);
	int idx = bp_placer_dispatch(placer, fd, adopt, NULL); /* reads the same id */
	if (idx < 0) {
		fprintf(stderr, "napi_server: %s\n", bp_last_error());
		close(fd);
	} else {
		printf("napi_server: NAPI id %u -> loop %d\n", id, idx);
		fflush(stdout);
	}
}

/* On each loop's thread as it stops: what it served. */
static void report(struct bp_loop *loop, void *arg)
{
	uint32_t ids[16];
	size_t n = bp_loop_napi_ids(loop, ids, 16);

	printf("napi_server: loop %ld: %llu bytes, NAPI ids:", (long)(intptr_t)arg,
	       (unsigned long long)bp_loop_counters(loop)->bytes_in);
	for (size_t i = 0; i < n; i++)
		printf(" %u", ids[i]);
	printf("%s\n", n ? "" : " none");
}

static void on_signal(int sig) { bp_loop_stop(accept_loop); }

int main(int argc, char **argv)
{
	struct bp_mode mode, block;
	struct sockaddr_storage addr;
	int nloops = argc > 2 ? atoi(argv[2]) : 0, ret = 1;
	struct bp_listener *l;
	socklen_t alen;
	char err[256];

	if (argc < 3 || argc > 4 || nloops < 1 || nloops > MAX_LOOPS) {
		fprintf(stderr, "usage: napi_server MODE LOOPS(1..%d) [ADDR:PORT]\n", MAX_LOOPS);
		return 2;
	}
	if (bp_mode_parse(argv[1], &mode, err, sizeof(err)) < 0 || bp_mode_check(&mode, err, sizeof(err)) < 0) {
		fprintf(stderr, "napi_server: %s\n", err);
		return 2;
	}
	if (bp_parse_addr(argc > 3 ? argv[3] : "127.0.0.1:0", 0, &addr, &alen) < 0) {
		fprintf(stderr, "napi_server: %s\n", bp_last_error());
		return 2;
	}
	/* One thread per loop, each creating its own loop (cpu -1: not pinned). */
	for (int i = 0; i < nloops; i++) {
		if (bp_loop_thread_start(&threads[i], &mode, -1, NULL, NULL) < 0)
			goto out;
		loops[i] = bp_loop_thread_loop(threads[i]);
	}
	/* Accepting only needs to sleep until a connection comes: epoll:block. */
	bp_mode_parse("epoll:block", &block, err, sizeof(err));
	if (bp_placer_create(&placer, loops, (size_t)nloops) < 0 || bp_loop_create(&accept_loop, &block) < 0 ||
	    bp_listener_create(accept_loop, (struct sockaddr *)&addr, alen, on_accept, NULL, &l) < 0)
		goto out;
	printf("napi_server: port %u, %d loops\n", bp_listener_port(l), nloops);
	fflush(stdout);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	ret = bp_loop_run(accept_loop) < 0;
out:
	if (ret)
		fprintf(stderr, "napi_server: %s\n", bp_last_error());
	if (accept_loop)
		bp_loop_destroy(accept_loop); /* no more posts to the loops after this */
	for (int i = 0; i < nloops && threads[i]; i++)
		bp_loop_thread_join(threads[i], report, (void *)(intptr_t)i);
	bp_placer_destroy(placer);
	return ret;
}
