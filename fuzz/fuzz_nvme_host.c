/* SPDX-License-Identifier: MIT */
/*
 * The NVMe/TCP initiator's response parsing (nvme_host.h), fed a controller's bytes.
 *
 * The initiator only talks over a socket, so this plays the controller on loopback:
 * each input opens one queue (bp_nvmeh_queue_open) on a loop run here, on the
 * fuzzer's thread, and the harness accepts the connection and answers with the input.
 * Input:
 *   byte 0      bit 0 ask for header digest, bit 1 data digest, bits 2-3 HPDA,
 *               bit 4 an I/O queue (qid 1, cntlid 1) rather than the admin queue,
 *               bit 5 writes in the capsule (else every write waits for an R2T)
 *   bytes 1-2   n, little-endian
 *   then        n bytes sent first (ICResp, the Connect's CapsuleResp), and once the
 *               queue is ready (or the host is waiting for more), the rest, then FIN.
 * Once ready, the harness submits a 4 KiB read, an 8 KiB write, a flush and a 512-byte
 * read (exact-size buffers), so C2HData, R2T and CapsuleResp in the rest can match them
 * (CIDs are slot | generation << 12: the Connect is 0x1000, then 0x2000, 0x1001...).
 * Properties: no sanitizer report; every submitted command's callback runs exactly
 * once (a CQE with err 0, or NULL with err < 0) by the time the queue is closed; the
 * host notices the controller's FIN; a failed queue says why in one terminated line.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <busypoll/busypoll.h>
#include <busypoll/nvme/host.h>
#include <busypoll/nvme/tcp.h>

#include "fuzz.h"

#define MAX_INPUT (256u * 1024)
#define HANG_MS 5000

static struct bp_loop *loop;
static int lfd = -1;
static struct sockaddr_in addr;

struct cmd {
	int calls;
	int err;
	uint16_t status;
};

/* FUZZ_VERBOSE=1: one line per input: how far the queue got and how each command ended. */
static bool verbose;

static void done_cb(void *arg, const struct bp_nvme_cqe *cqe, int err)
{
	struct cmd *c = arg;

	c->calls++;
	c->err = err;
	c->status = cqe ? cqe->status : 0;
	FUZZ_CHECK((err == 0) == (cqe != NULL), "callback with err %d and cqe %p", err, (const void *)cqe);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct bp_mode mode;
	socklen_t len = sizeof(addr);
	char err[128];

	(void)argc;
	(void)argv;
	signal(SIGPIPE, SIG_IGN);
	verbose = getenv("FUZZ_VERBOSE") != NULL;
	if (bp_mode_parse("epoll:block", &mode, err, sizeof(err)) || bp_loop_create(&loop, &mode)) {
		fprintf(stderr, "fuzz_nvme_host: loop: %s\n", bp_last_error());
		exit(1);
	}
	addr.sin_family = AF_INET;
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&addr, sizeof(addr)) || listen(lfd, 16) ||
	    getsockname(lfd, (struct sockaddr *)&addr, &len)) {
		fprintf(stderr, "fuzz_nvme_host: listen: %s\n", strerror(errno));
		exit(1);
	}
	return 0;
}

/* Run the host's loop until nothing is ready (on loopback, what was sent has arrived). */
static void run_idle(void)
{
	for (int i = 0; i < 100000; i++)
		if (bp_loop_run_once(loop, 0) <= 0)
			return;
}

/* Send buf to the host, running its loop whenever the socket is full. */
static void feed(int fd, const uint8_t *buf, size_t len)
{
	size_t off = 0;

	while (off < len) {
		ssize_t n = send(fd, buf + off, len - off, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n > 0) {
			off += (size_t)n;
		} else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
			if (bp_loop_run_once(loop, 1000) < 0)
				return;
		} else {
			return; /* the host closed on us */
		}
	}
	run_idle();
}

static bool queue_done(struct bp_nvmeh_queue *q)
{
	enum bp_nvmeh_qstate st = bp_nvmeh_queue_state(q);

	return st == BP_NVMEH_FAILED || st == BP_NVMEH_CLOSED;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bp_nvmeh_opts o;
	struct bp_nvmeh_queue *q;
	struct cmd cmds[4] = { 0 };
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	struct pollfd p = { .fd = lfd, .events = POLLIN };
	uint8_t *rbuf = NULL, *wbuf = NULL, *sbuf = NULL, sqe[64];
	bool submitted[4] = { false };
	size_t n1;
	int fd, r;
	bool io;

	if (size < 3 || size > MAX_INPUT)
		return 0;
	bp_nvmeh_opts_defaults(&o);
	o.hdgst = data[0] & 1;
	o.ddgst = data[0] & 2;
	o.hpda = (data[0] >> 2) & 3;
	o.kato_ms = 0;
	o.timeout_ms = 0; /* no timers: the controller's FIN ends every input */
	io = data[0] & 0x10;
	n1 = (size_t)(data[1] | data[2] << 8);
	data += 3;
	size -= 3;
	if (n1 > size)
		n1 = size;

	r = bp_nvmeh_queue_open(loop, (struct sockaddr *)&addr, sizeof(addr), &o, io ? 1 : 0, io ? 1 : 0xffff, 8,
				&q);
	FUZZ_CHECK(r == 0, "queue_open: %s", bp_last_error());
	do
		r = poll(&p, 1, HANG_MS);
	while (r < 0 && errno == EINTR);
	FUZZ_CHECK(r == 1, "the host did not connect");
	fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	FUZZ_CHECK(fd >= 0, "accept: %s", strerror(errno));

	/* ICResp, Connect's response: the host answers as it goes (ICReq, Connect). */
	run_idle();
	feed(fd, data, n1);
	if (verbose)
		fprintf(stderr, "after %zu bytes: %s;", n1,
			bp_nvmeh_queue_state(q) == BP_NVMEH_READY ? "ready" : bp_nvmeh_queue_error(q));
	if (bp_nvmeh_queue_state(q) == BP_NVMEH_READY) {
		rbuf = malloc(4096);
		wbuf = malloc(8192);
		sbuf = malloc(512);
		if (!rbuf || !wbuf || !sbuf)
			abort();
		memset(wbuf, 0x5a, 8192);
		bp_nvmeh_queue_set_incapsule(q, data[-3] & 0x20 ? 8192 : 0);
		bp_nvmeh_sqe_rw(sqe, false, 1, 0, 8);
		submitted[0] = bp_nvmeh_submit(q, sqe, rbuf, 4096, false, done_cb, &cmds[0]) == 0;
		bp_nvmeh_sqe_rw(sqe, true, 1, 8, 16);
		submitted[1] = bp_nvmeh_submit(q, sqe, wbuf, 8192, true, done_cb, &cmds[1]) == 0;
		bp_nvmeh_sqe_flush(sqe, 1);
		submitted[2] = bp_nvmeh_submit(q, sqe, NULL, 0, false, done_cb, &cmds[2]) == 0;
		bp_nvmeh_sqe_rw(sqe, false, 1, 24, 1);
		submitted[3] = bp_nvmeh_submit(q, sqe, sbuf, 512, false, done_cb, &cmds[3]) == 0;
		for (int i = 0; i < 4; i++)
			FUZZ_CHECK(submitted[i] || queue_done(q), "a ready queue refused submission %d", i);
		run_idle();
	}
	/* The rest of the controller's side, then its FIN: the host must notice. */
	feed(fd, data + n1, size - n1);
	shutdown(fd, SHUT_WR);
	for (uint64_t end = bp_now_ns() + HANG_MS * 1000000ull; !queue_done(q);) {
		FUZZ_CHECK(bp_now_ns() < end, "the host did not notice the controller's FIN in %d ms", HANG_MS);
		if (bp_loop_run_once(loop, 10000) < 0)
			break;
	}
	if (queue_done(q)) {
		const char *why = bp_nvmeh_queue_error(q);

		FUZZ_CHECK(why[0] && memchr(why, 0, 200) && !strchr(why, '\n'), "failed queue without a one-line reason");
	}
	if (verbose) {
		for (int i = 0; i < 4; i++)
			if (submitted[i])
				fprintf(stderr, " cmd %d: err %d status %#x;", i, cmds[i].err, cmds[i].status);
		fprintf(stderr, " end: %s\n", bp_nvmeh_queue_error(q));
	}
	bp_nvmeh_queue_close(q);
	for (int i = 0; i < 4; i++)
		FUZZ_CHECK(cmds[i].calls == (submitted[i] ? 1 : 0), "command %d: %d callbacks", i, cmds[i].calls);
	/* Whatever the host still sent is dropped: RST, no TIME_WAIT. */
	setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(fd);
	run_idle(); /* let the loop reap the closed conn */
	free(rbuf);
	free(wbuf);
	free(sbuf);
	return 0;
}
