/* SPDX-License-Identifier: MIT */
/*
 * The NVMe/TCP target's command handling, fed a host's byte stream.
 *
 * The target has no entry point that takes bytes without a socket, so this runs the
 * real one in-process: LLVMFuzzerInitialize starts it (one loop thread, a 1 MiB ram
 * namespace and a 1 MiB file one on O_DIRECT asynchronous I/O (nsid 2, its file
 * unlinked at once), subsystem nqn.2024-01.io.example:sub1 as in the Linux host captures,
 * 127.0.0.1 on a free port) and connects one controller with the library's initiator
 * (the capture's host NQN and ID, no keep-alive timeout), which stays up for the whole
 * run: its cntlid is 1, so I/O queue Connects in the inputs (the captures' own among
 * them) attach to it. Each input is one new TCP connection: the input's bytes are
 * sent as the host's side of the stream, then a FIN, and everything the target
 * answers is read until it closes.
 *
 * Properties: no sanitizer report in the target's thread; the target closes the
 * connection after the host's FIN (within 10 s); everything it sends frames as valid
 * controller-to-host PDUs (ICResp first, digests and the host's PDA as negotiated)
 * and nothing follows a C2HTermReq. A stream may end inside a PDU: after the host's
 * FIN the target drops what it had not sent yet.
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
#include <busypoll/nvme/target.h>
#include <busypoll/nvme/tcp.h>

#include "fuzz.h"

#define SUBNQN "nqn.2024-01.io.example:sub1"
#define HOSTNQN "nqn.2014-08.org.nvmexpress:uuid:ae5e84c2-aa4a-415b-88b3-69bda852630a"
static const uint8_t hostid[16] = { 0xc9, 0xe8, 0x29, 0xdf, 0x7a, 0x23, 0x4d, 0xfe,
				    0x8c, 0xa4, 0xf8, 0x39, 0xf0, 0xf4, 0xaa, 0xda };

#define MAX_INPUT (256u * 1024)
#define KEEP_OUT (8u << 20) /* answer bytes kept for the checks; more are read and dropped */
#define HANG_MS 10000

static struct bp_nvmet *target;
static struct sockaddr_in target_addr;
static struct bp_loop *host_loop;
static struct bp_nvmeh_ctrl *host_ctrl;
static uint8_t *out;
/* FUZZ_VERBOSE=1: the target's debug log, and one line per input with the PDUs it answered. */
static bool verbose;

__attribute__((noreturn)) static void setup_fail(const char *what)
{
	fprintf(stderr, "fuzz_nvme_target: %s: %s\n", what, bp_last_error());
	exit(1);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct bp_nvmet_cfg cfg;
	struct bp_nvmeh_opts o;
	struct bp_mode mode;
	char err[256], file[96], spec[128];

	(void)argc;
	(void)argv;
	signal(SIGPIPE, SIG_IGN);
	bp_nvmet_cfg_defaults(&cfg);
	target_addr.sin_family = AF_INET;
	target_addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	target_addr.sin_port = 0;
	memcpy(&cfg.listen, &target_addr, sizeof(target_addr));
	cfg.listen_len = sizeof(target_addr);
	snprintf(cfg.nqn, sizeof(cfg.nqn), "%s", SUBNQN);
	if (bp_nvmet_ns_parse("ram:1M", &cfg.ns[0], err, sizeof(err))) {
		fprintf(stderr, "fuzz_nvme_target: namespace: %s\n", err);
		exit(1);
	}
	snprintf(file, sizeof(file), "/tmp/bp-fuzz-target-%d.img", (int)getpid());
	snprintf(spec, sizeof(spec), "file:%s,size=1M", file);
	if (bp_nvmet_ns_parse(spec, &cfg.ns[1], err, sizeof(err))) {
		fprintf(stderr, "fuzz_nvme_target: namespace: %s\n", err);
		exit(1);
	}
	cfg.n_ns = 2;
	verbose = getenv("FUZZ_VERBOSE") != NULL;
	cfg.log_level = verbose ? BP_NVMET_LOG_DEBUG : BP_NVMET_LOG_ERROR;
	cfg.log = verbose ? stderr : fopen("/dev/null", "w");
	if (bp_nvmet_start(&cfg, &target)) {
		unlink(file);
		setup_fail("target");
	}
	unlink(file); /* the target holds it open: nothing is left, whatever ends the run */
	target_addr.sin_port = htons(bp_nvmet_port(target));

	if (bp_mode_parse("epoll:block", &mode, err, sizeof(err)) || bp_loop_create(&host_loop, &mode))
		setup_fail("host loop");
	bp_nvmeh_opts_defaults(&o);
	snprintf(o.subnqn, sizeof(o.subnqn), "%s", SUBNQN);
	snprintf(o.hostnqn, sizeof(o.hostnqn), "%s", HOSTNQN);
	memcpy(o.hostid, hostid, sizeof(hostid));
	o.kato_ms = 0; /* the loop only runs in here: no keep-alive to miss */
	if (bp_nvmeh_ctrl_connect(host_loop, (struct sockaddr *)&target_addr, sizeof(target_addr), &o, 8,
				  &host_ctrl))
		setup_fail("controller");
	out = malloc(KEEP_OUT);
	if (!out)
		abort();
	return 0;
}

/* Send in, then FIN; read until the target closes. Returns the bytes kept in out. */
static size_t converse(const uint8_t *in, size_t len)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	size_t sent = 0, got = 0;
	bool shut = false;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	/* Non-blocking from the start: libFuzzer's timer signal interrupts a blocking
	 * connect (EINTR), and the first POLLOUT below tells when it is done. */
	if (fd < 0 || fcntl(fd, F_SETFL, O_NONBLOCK) ||
	    (connect(fd, (struct sockaddr *)&target_addr, sizeof(target_addr)) && errno != EINPROGRESS)) {
		fprintf(stderr, "fuzz_nvme_target: connect: %s\n", strerror(errno));
		abort();
	}
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN | (shut ? 0 : POLLOUT) };
		int r;

		if (!shut && sent == len) {
			shutdown(fd, SHUT_WR);
			shut = true;
			continue;
		}
		do
			r = poll(&p, 1, HANG_MS);
		while (r < 0 && errno == EINTR);
		FUZZ_CHECK(r > 0, "the target neither read nor answered nor closed for %d ms (%zu of %zu bytes sent)",
			   HANG_MS, sent, len);
		if (p.revents & POLLIN || p.revents & (POLLHUP | POLLERR)) {
			uint8_t sink[65536];
			uint8_t *dst = got < KEEP_OUT ? out + got : sink;
			size_t room = got < KEEP_OUT ? KEEP_OUT - got : sizeof(sink);
			ssize_t n = recv(fd, dst, room, 0);

			if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
				break; /* closed (or reset after a TermReq) */
			if (n > 0 && got < KEEP_OUT)
				got += (size_t)n;
		}
		if (!shut && p.revents & POLLOUT) {
			ssize_t n = send(fd, in + sent, len - sent, MSG_NOSIGNAL);

			if (n > 0)
				sent += (size_t)n;
			else if (n < 0 && errno != EAGAIN && errno != EINTR)
				sent = len; /* the target closed on us: just read what it said */
		}
	}
	/* RST instead of FIN from our side: no TIME_WAIT per input. */
	setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(fd);
	return got;
}

static void check_answers(const uint8_t *in, size_t in_len, const uint8_t *buf, size_t len)
{
	struct bp_nvme_tcp_rx_cfg rx = { .is_target = false, .max_data = 1u << 24 };
	size_t off = 0;

	if (verbose)
		fprintf(stderr, "input %zu bytes, answer %zu bytes:", in_len, len);

	/* The host's alignment for the data it receives: the HPDA of its ICReq. */
	if (in_len >= BP_NVME_TCP_IC_LEN && in[0] == BP_NVME_TCP_ICREQ && in[10] <= BP_NVME_TCP_MAX_PDA)
		rx.pda = in[10];
	while (off < len) {
		struct bp_nvme_tcp_pdu pdu;
		struct bp_nvme_tcp_err err;
		int n = bp_nvme_tcp_frame(buf + off, len - off, &rx, &pdu, &err);

		if (n == 0)
			break; /* cut at the close: allowed */
		FUZZ_CHECK(n > 0, "the target sent a malformed PDU at byte %zu of its answer: %s", off, err.msg);
		if (pdu.ch.type == BP_NVME_TCP_ICRESP) {
			struct bp_nvme_tcp_ic ic;

			bp_nvme_tcp_ic_decode(pdu.hdr, &ic);
			rx.connected = true;
			rx.hdgst = ic.digest & BP_NVME_TCP_DIGEST_HDR;
			rx.ddgst = ic.digest & BP_NVME_TCP_DIGEST_DATA;
		}
		FUZZ_CHECK(!pdu.ddgst_bad, "the target sent a %s with a wrong data digest",
			   bp_nvme_tcp_type_name(pdu.ch.type));
		if (verbose && pdu.ch.type == BP_NVME_TCP_RSP) {
			struct bp_nvme_cqe cqe;

			bp_nvme_cqe_decode(pdu.hdr + 8, &cqe);
			fprintf(stderr, " Resp(cid %#x st %#x)", cqe.cid, cqe.status);
		} else if (verbose) {
			fprintf(stderr, " %s", bp_nvme_tcp_type_name(pdu.ch.type));
		}
		off += (size_t)n;
		if (pdu.ch.type == BP_NVME_TCP_C2H_TERM) {
			FUZZ_CHECK(off == len, "%zu bytes after the target's C2HTermReq", len - off);
			break;
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t got;

	if (size == 0 || size > MAX_INPUT)
		return 0;
	got = converse(data, size);
	check_answers(data, size, out, got);
	if (verbose)
		fputc('\n', stderr);
	return 0;
}
