/* SPDX-License-Identifier: MIT */
/*
 * busypoll target with the project's own initiator, over loopback:
 * connect, identify, 4 KiB and 1 MiB writes and reads with verification on a ram
 * and a file namespace, flush, digests on, C2HData SUCCESS, the data still there
 * after the target restarts on the same file; a disallowed host and an unknown
 * NQN refused with the right status; every malformed PDU answered with a
 * C2HTermReq that closes only that queue while the others keep working; keep-alive
 * expiry; poll mode's counters. Timing is never asserted.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <busypoll/busypoll.h>
#include <busypoll/nvme/host.h>
#include <busypoll/nvme/target.h>

#include "bpt_nvmet.h"
#include "bptest.h"
#include "base/bytes.h"

#define NQN "nqn.2024-01.io.busypoll:itest"
#define HOST_A "nqn.2014-08.org.nvmexpress:uuid:aaaaaaaa-0000-4000-8000-000000000001"
#define HOST_B "nqn.2014-08.org.nvmexpress:uuid:bbbbbbbb-0000-4000-8000-000000000002"
#define HOST_X "nqn.2014-08.org.nvmexpress:uuid:dddddddd-0000-4000-8000-000000000003"
#define MIB (1u << 20)

static char file_path[256];
static struct bp_loop *loop;
static struct sockaddr_in taddr;

static struct bp_nvmet *target_up(uint32_t poll_us, const char *mode)
{
	struct bp_nvmet_cfg cfg;
	struct bp_nvmet *t;
	char err[160];

	bp_nvmet_cfg_defaults(&cfg);
	((struct sockaddr_in *)&cfg.listen)->sin_port = 0;
	snprintf(cfg.nqn, sizeof(cfg.nqn), NQN);
	BPT_CHECK(bp_nvmet_ns_parse("ram:64M", &cfg.ns[0], err, sizeof(err)) == 0, "%s", err);
	{
		char spec[300];

		snprintf(spec, sizeof(spec), "file:%s,size=32M", file_path);
		BPT_CHECK(bp_nvmet_ns_parse(spec, &cfg.ns[1], err, sizeof(err)) == 0, "%s", err);
	}
	cfg.n_ns = 2;
	snprintf(cfg.allow_hosts[0], sizeof(cfg.allow_hosts[0]), HOST_A);
	snprintf(cfg.allow_hosts[1], sizeof(cfg.allow_hosts[1]), HOST_B);
	cfg.n_allow = 2;
	cfg.threads = 2;
	cfg.poll_period_us = poll_us;
	cfg.log_level = getenv("BPT_VERBOSE") ? BP_NVMET_LOG_DEBUG : BP_NVMET_LOG_ERROR;
	if (mode)
		BPT_CHECK(bp_mode_parse(mode, &cfg.mode, err, sizeof(err)) == 0, "%s", err);
	BPT_CHECK(bp_nvmet_start(&cfg, &t) == 0, "target: %s", bp_last_error());
	taddr.sin_family = AF_INET;
	taddr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	taddr.sin_port = htons(bp_nvmet_port(t));
	return t;
}

static struct bp_nvmeh_opts host_opts(const char *hostnqn, bool digests)
{
	struct bp_nvmeh_opts o;

	bp_nvmeh_opts_defaults(&o);
	snprintf(o.subnqn, sizeof(o.subnqn), NQN);
	snprintf(o.hostnqn, sizeof(o.hostnqn), "%s", hostnqn);
	o.hdgst = o.ddgst = digests;
	o.timeout_ms = 10000;
	return o;
}

static struct bp_nvmeh_ctrl *ctrl_up(const struct bp_nvmeh_opts *o, uint16_t nq)
{
	struct bp_nvmeh_ctrl *c = NULL;
	int ret = bp_nvmeh_ctrl_connect(loop, (struct sockaddr *)&taddr, sizeof(taddr), o, nq, &c);

	BPT_CHECK(ret == 0, "connect: %d: %s", ret, bp_last_error());
	return c;
}

static void fill(uint8_t *b, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1664525u + 1013904223u;
		b[i] = (uint8_t)(seed >> 24);
	}
}

static int rw(struct bp_nvmeh_queue *q, bool write, uint32_t nsid, uint64_t slba, void *buf, uint32_t len)
{
	uint8_t sqe[64];

	bp_nvmeh_sqe_rw(sqe, write, nsid, slba, len / 512);
	return bp_nvmeh_sync(q, sqe, buf, len, write, NULL, 10000);
}

/* Write len bytes at slba and read them back, byte for byte. */
static void write_read_verify(struct bp_nvmeh_queue *wq, struct bp_nvmeh_queue *rq, uint32_t nsid, uint64_t slba,
			      uint32_t len, uint32_t seed, const char *what)
{
	uint8_t *w = malloc(len), *r = malloc(len);
	int ret;

	BPT_CHECK(w && r, "oom");
	fill(w, len, seed);
	memset(r, 0xee, len);
	ret = rw(wq, true, nsid, slba, w, len);
	BPT_CHECK(ret == 0, "%s: write %u bytes at %llu on ns %u: %d %s", what, len, (unsigned long long)slba, nsid,
		  ret, ret < 0 ? bp_last_error() : "");
	ret = rw(rq, false, nsid, slba, r, len);
	BPT_CHECK(ret == 0, "%s: read %u bytes: %d %s", what, len, ret, ret < 0 ? bp_last_error() : "");
	BPT_CHECK(memcmp(w, r, len) == 0, "%s: data read back differs from data written (%u bytes, ns %u)", what,
		  len, nsid);
	free(w);
	free(r);
}

static void test_basic(struct bp_nvmet *t, bool digests, bool sqflow_off)
{
	struct bp_nvmeh_opts o = host_opts(HOST_A, digests);
	struct bp_nvmeh_ctrl *c;
	struct bp_nvmeh_queue *q1, *q2;
	struct bp_nvmeh_ns_info ns1, ns2;
	const char *what = digests ? "digests" : sqflow_off ? "sqflow-off" : "plain";
	uint8_t sqe[64], buf[4096];
	int ret;

	o.disable_sqflow = sqflow_off;
	c = ctrl_up(&o, 2);
	/* What the Linux host insists on in Identify Controller. */
	BPT_CHECK(bp_get_le16(c->id + 78) == c->cntlid, "cntlid");
	BPT_CHECK(c->nn == 2, "nn %u", c->nn);
	BPT_CHECK(c->id[512] == 0x66 && c->id[513] == 0x44, "sqes/cqes");
	BPT_CHECK(bp_get_le16(c->id + 320) != 0, "kas must be non-zero on fabrics");
	BPT_CHECK(bp_get_le16(c->id + 1800) == 0, "icdoff");
	BPT_CHECK(bp_get_le32(c->id + 536) & 3, "sgls");
	BPT_CHECK(bp_get_le32(c->id + 1792) >= 4 && bp_get_le32(c->id + 1796) >= 1, "ioccsz/iorcsz");
	BPT_CHECK(c->id[111] == 1, "cntrltype");
	BPT_CHECK(!strcmp((char *)c->id + 768, NQN), "subnqn '%s'", (char *)c->id + 768);
	BPT_CHECK(c->vs == 0x00010300, "vs 0x%x", c->vs);
	BPT_CHECK((c->cap & 0xffff) == 127 && (c->cap >> 37 & 1), "cap 0x%llx", (unsigned long long)c->cap);
	BPT_CHECK(c->max_transfer == MIB, "max transfer %u", c->max_transfer);
	BPT_CHECK(c->nr_io_queues == 2, "io queues %u", c->nr_io_queues);
	BPT_CHECK(c->incapsule == 8192, "in-capsule %u", c->incapsule);

	BPT_CHECK(bp_nvmeh_identify_ns(c, 1, &ns1) == 0, "identify ns 1: %s", bp_last_error());
	BPT_CHECK(bp_nvmeh_identify_ns(c, 2, &ns2) == 0, "identify ns 2: %s", bp_last_error());
	BPT_CHECK(ns1.nblocks == 64 * MIB / 512 && ns1.block_size == 512, "ns1 %llu blocks of %u",
		  (unsigned long long)ns1.nblocks, ns1.block_size);
	BPT_CHECK(ns2.nblocks == 32 * MIB / 512, "ns2 %llu blocks", (unsigned long long)ns2.nblocks);
	/* Namespace 3 does not exist. */
	{
		struct bp_nvmeh_ns_info x;

		ret = bp_nvmeh_identify_ns(c, 3, &x);
		BPT_CHECK(ret == (BP_NVME_SC_INVALID_NS | BP_NVME_DNR), "identify ns 3: %d", ret);
	}
	/* Active namespace list and descriptors, as the Linux host's scan reads them. */
	bp_nvme_sqe_init(sqe, BP_NVME_ADM_IDENTIFY, 0, 0, 0, false);
	bp_nvme_sqe_set_dw(sqe, 10, BP_NVME_ID_CNS_NS_ACTIVE_LIST);
	BPT_CHECK(bp_nvmeh_admin_sync(c, sqe, buf, 4096, false, NULL) == 0, "active ns list");
	BPT_CHECK(bp_get_le32(buf) == 1 && bp_get_le32(buf + 4) == 2 && bp_get_le32(buf + 8) == 0, "active list");
	bp_nvme_sqe_init(sqe, BP_NVME_ADM_IDENTIFY, 0, 1, 0, false);
	bp_nvme_sqe_set_dw(sqe, 10, BP_NVME_ID_CNS_NS_DESC_LIST);
	BPT_CHECK(bp_nvmeh_admin_sync(c, sqe, buf, 4096, false, NULL) == 0, "ns descriptors");
	BPT_CHECK(buf[0] == 2 && buf[1] == 16 && !memcmp(buf + 4, ns1.nguid, 16), "NGUID descriptor matches Identify");
	/* SMART log: zeros, 512 bytes. */
	bp_nvme_sqe_init(sqe, BP_NVME_ADM_GET_LOG_PAGE, 0, 0xffffffff, 0, false);
	bp_nvme_sqe_set_dw(sqe, 10, BP_NVME_LOG_SMART | (127u << 16));
	memset(buf, 0xaa, 512);
	BPT_CHECK(bp_nvmeh_admin_sync(c, sqe, buf, 512, false, NULL) == 0, "smart log");
	BPT_CHECK(buf[0] == 0 && buf[511] == 0, "smart zeros");
	/* An unsupported admin opcode gets a status, not silence. */
	bp_nvme_sqe_init(sqe, 0x80, 0, 0, 0, false);
	ret = bp_nvmeh_admin_sync(c, sqe, NULL, 0, false, NULL);
	BPT_CHECK(ret == (BP_NVME_SC_INVALID_OPCODE | BP_NVME_DNR), "format nvm: %d", ret);

	BPT_CHECK(bp_nvmeh_ctrl_io_queue(c, loop, 1, &q1) == 0, "io queue 1: %s", bp_last_error());
	BPT_CHECK(bp_nvmeh_ctrl_io_queue(c, loop, 2, &q2) == 0, "io queue 2: %s", bp_last_error());
	/* qid 3 was not granted. */
	{
		struct bp_nvmeh_queue *q3;

		ret = bp_nvmeh_ctrl_io_queue(c, loop, 3, &q3);
		BPT_CHECK(ret == (BP_NVME_SC_CONNECT_INVALID_PARAM | BP_NVME_DNR), "qid 3: %d", ret);
	}
	for (uint32_t nsid = 1; nsid <= 2; nsid++) {
		write_read_verify(q1, q2, nsid, 0, 4096, 1 + nsid, what);              /* in-capsule */
		write_read_verify(q2, q1, nsid, 2048, MIB, 100 + nsid, what);          /* R2T + H2CData x8 */
		write_read_verify(q1, q1, nsid, 8, 16384, 7 + nsid, what);             /* R2T, one PDU */
	}
	/* The last block of a namespace, and one past it. */
	write_read_verify(q1, q2, 2, 32 * MIB / 512 - 8, 4096, 55, what);
	{
		uint8_t b[4096];

		ret = rw(q1, false, 2, 32 * MIB / 512 - 7, b, 4096);
		BPT_CHECK(ret == (BP_NVME_SC_LBA_RANGE | BP_NVME_DNR), "read past the end: status 0x%x", ret);
		ret = rw(q1, true, 1, 0xffffffffffffull, b, 4096);
		BPT_CHECK(ret == (BP_NVME_SC_LBA_RANGE | BP_NVME_DNR), "write far past the end: 0x%x", ret);
		ret = rw(q1, false, 9, 0, b, 4096);
		BPT_CHECK(ret == (BP_NVME_SC_INVALID_NS | BP_NVME_DNR), "read on ns 9: 0x%x", ret);
	}
	/* Flush: fdatasync on the file namespace. */
	bp_nvmeh_sqe_flush(sqe, 2);
	BPT_CHECK(bp_nvmeh_sync(q1, sqe, NULL, 0, false, NULL, 10000) == 0, "flush");
	/* Still good after the errors. */
	write_read_verify(q2, q1, 1, 4096, 4096, 77, what);

	bp_nvmeh_queue_close(q1);
	bp_nvmeh_queue_close(q2);
	bp_nvmeh_ctrl_disconnect(c);
}

static void test_refusals(void)
{
	struct bp_nvmeh_opts o = host_opts(HOST_X, false);
	struct bp_nvmeh_ctrl *c = NULL;
	int ret;

	ret = bp_nvmeh_ctrl_connect(loop, (struct sockaddr *)&taddr, sizeof(taddr), &o, 1, &c);
	BPT_CHECK(ret == (BP_NVME_SC_CONNECT_INVALID_HOST | BP_NVME_DNR), "disallowed host: got %d (%s)", ret,
		  bp_last_error());
	o = host_opts(HOST_B, false);
	snprintf(o.subnqn, sizeof(o.subnqn), "nqn.2024-01.io.busypoll:nope");
	ret = bp_nvmeh_ctrl_connect(loop, (struct sockaddr *)&taddr, sizeof(taddr), &o, 1, &c);
	BPT_CHECK(ret == (BP_NVME_SC_CONNECT_INVALID_PARAM | BP_NVME_DNR), "unknown NQN: got %d (%s)", ret,
		  bp_last_error());
	/* The discovery controller lists the subsystem for an allowed host. */
	o = host_opts(HOST_B, false);
	snprintf(o.subnqn, sizeof(o.subnqn), BP_NVME_DISC_NQN);
	o.kato_ms = 0;
	ret = bp_nvmeh_ctrl_connect(loop, (struct sockaddr *)&taddr, sizeof(taddr), &o, 0, &c);
	BPT_CHECK(ret == 0, "discovery connect: %d %s", ret, bp_last_error());
	BPT_CHECK(c->id[111] == 2, "discovery cntrltype");
	{
		uint8_t sqe[64], *log = calloc(1, 4096);

		bp_nvme_sqe_init(sqe, BP_NVME_ADM_GET_LOG_PAGE, 0, 0, 0, false);
		bp_nvme_sqe_set_dw(sqe, 10, BP_NVME_LOG_DISC | (1023u << 16));
		ret = bp_nvmeh_admin_sync(c, sqe, log, 4096, false, NULL);
		BPT_CHECK(ret == 0, "discovery log: %d", ret);
		BPT_CHECK(bp_get_le64(log + 8) == 1, "numrec %llu", (unsigned long long)bp_get_le64(log + 8));
		BPT_CHECK(log[1024] == 3 && log[1026] == 2, "trtype tcp, subtype nvm");
		BPT_CHECK(!strcmp((char *)log + 1024 + 256, NQN), "subnqn in the discovery log");
		BPT_CHECK(!strcmp((char *)log + 1024 + 512, "127.0.0.1"), "traddr '%s'", (char *)log + 1024 + 512);
		free(log);
	}
	bp_nvmeh_ctrl_disconnect(c);
}

/* ---- raw sockets: malformed PDUs ---- */

static int raw_fd(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct timeval tv = { 5, 0 };

	BPT_CHECK(fd >= 0, "socket");
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	BPT_CHECK(connect(fd, (struct sockaddr *)&taddr, sizeof(taddr)) == 0, "connect: %s", strerror(errno));
	return fd;
}

static void send_all(int fd, const void *b, size_t n)
{
	BPT_CHECK(send(fd, b, n, MSG_NOSIGNAL) == (ssize_t)n, "send: %s", strerror(errno));
}

static bool recv_all(int fd, uint8_t *b, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = recv(fd, b + got, n - got, 0);

		if (r <= 0)
			return false;
		got += (size_t)r;
	}
	return true;
}

/* One PDU into b (up to cap); returns its length, 0 at EOF. */
static size_t read_pdu(int fd, uint8_t *b, size_t cap)
{
	uint32_t plen;

	if (!recv_all(fd, b, 8))
		return 0;
	plen = bp_get_le32(b + 4);
	BPT_CHECK(plen >= 8 && plen <= cap, "PDU length %u", plen);
	BPT_CHECK(recv_all(fd, b + 8, plen - 8), "PDU body");
	return plen;
}

static bool at_eof(int fd)
{
	uint8_t b[16];

	return recv(fd, b, sizeof(b), 0) == 0;
}

static int raw_ic(bool digests)
{
	int fd = raw_fd();
	uint8_t b[256];
	struct bp_nvme_tcp_ic ic = { .digest = digests ? 3 : 0 };

	bp_nvme_tcp_ic_encode(b, BP_NVME_TCP_ICREQ, &ic);
	send_all(fd, b, 128);
	BPT_CHECK(read_pdu(fd, b, sizeof(b)) == 128 && b[0] == BP_NVME_TCP_ICRESP, "ICResp");
	bp_nvme_tcp_ic_decode(b, &ic);
	BPT_CHECK(ic.digest == (digests ? 3 : 0) && ic.pda == 0 && ic.maxdata >= 4096 && ic.maxdata % 4 == 0,
		  "ICResp fields");
	return fd;
}

/* A raw Connect (admin, or I/O queue qid of cntlid); returns the status. */
static uint16_t raw_connect(int fd, uint16_t qid, uint16_t cntlid, const char *hostnqn, bool digests)
{
	uint8_t sqe[64], b[2048], cd[1024] = { 0 };
	size_t h;
	struct bp_nvme_cqe cqe;

	bp_nvme_sqe_init(sqe, BP_NVME_FABRICS, 0x1234, 0, 1024, true);
	sqe[4] = BP_NVMF_CONNECT;
	bp_put_le16(sqe + 42, qid);
	bp_put_le16(sqe + 44, 31);
	bp_put_le16(cd + 16, cntlid);
	snprintf((char *)cd + 256, 256, NQN);
	snprintf((char *)cd + 512, 256, "%s", hostnqn);
	h = bp_nvme_tcp_cmd_encode(b, sqe, 1024, digests, digests, 0);
	memcpy(b + h, cd, 1024);
	if (digests)
		bp_nvme_tcp_put_digest(b + h + 1024, cd, 1024);
	send_all(fd, b, h + 1024 + (digests ? 4 : 0));
	BPT_CHECK(read_pdu(fd, b, sizeof(b)) && b[0] == BP_NVME_TCP_RSP, "Connect response");
	bp_nvme_cqe_decode(b + 8, &cqe);
	BPT_CHECK(cqe.cid == 0x1234, "cid echoed");
	return cqe.status;
}

/* Expect a C2HTermReq with fes (and fei when >= 0), then the connection closed. */
static void expect_term(int fd, uint16_t fes, long fei, const char *what)
{
	uint8_t b[512];
	size_t n = read_pdu(fd, b, sizeof(b));

	BPT_CHECK(n >= 24 && b[0] == BP_NVME_TCP_C2H_TERM, "%s: expected C2HTermReq, got type %u len %zu", what,
		  n ? b[0] : 0xff, n);
	BPT_CHECK(bp_get_le16(b + 8) == fes, "%s: FES %u, expected %u", what, bp_get_le16(b + 8), fes);
	if (fei >= 0)
		BPT_CHECK(bp_get_le32(b + 10) == (uint32_t)fei, "%s: FEI %u, expected %ld", what, bp_get_le32(b + 10),
			  fei);
	BPT_CHECK(at_eof(fd), "%s: the queue must close after the C2HTermReq", what);
	close(fd);
}

static void raw_send_cmd(int fd, uint8_t *sqe, const uint8_t *data, uint32_t len, bool digests, bool corrupt_ddgst)
{
	uint8_t b[16384 + 256];
	size_t h = bp_nvme_tcp_cmd_encode(b, sqe, len, digests, digests, 0);

	if (len)
		memcpy(b + h, data, len);
	if (len && digests) {
		bp_nvme_tcp_put_digest(b + h + len, data, len);
		if (corrupt_ddgst)
			b[h + len] ^= 0xff;
	}
	send_all(fd, b, h + len + (len && digests ? 4 : 0));
}

static uint16_t raw_status(int fd)
{
	uint8_t b[512];
	struct bp_nvme_cqe cqe;

	BPT_CHECK(read_pdu(fd, b, sizeof(b)) && b[0] == BP_NVME_TCP_RSP, "expected a CapsuleResp, got type %u", b[0]);
	bp_nvme_cqe_decode(b + 8, &cqe);
	return cqe.status;
}

static void test_malformed(struct bp_nvmet *t)
{
	struct bp_nvmeh_opts o = host_opts(HOST_A, false);
	struct bp_nvmeh_ctrl *c = ctrl_up(&o, 4);
	struct bp_nvmeh_queue *q1;
	uint8_t b[1024], sqe[64], data[4096]; /* b: up to a 24-byte H2CData header + 512 bytes */
	int fd;

	BPT_CHECK(bp_nvmeh_ctrl_io_queue(c, loop, 1, &q1) == 0, "io queue 1");
	write_read_verify(q1, q1, 1, 100, 4096, 9, "before malformed");

	/* Bad PDU type. */
	fd = raw_ic(false);
	memset(b, 0, 72);
	b[0] = 0x0a;
	b[2] = 72;
	bp_put_le32(b + 4, 72);
	send_all(fd, b, 72);
	expect_term(fd, BP_NVME_TCP_FES_INVALID_HEADER, 0, "bad type");
	/* A PDU type only a controller sends. */
	fd = raw_ic(false);
	b[0] = BP_NVME_TCP_RSP;
	b[2] = 24;
	bp_put_le32(b + 4, 24);
	send_all(fd, b, 24);
	expect_term(fd, BP_NVME_TCP_FES_INVALID_HEADER, 0, "controller-only type");
	/* Bad header length. */
	fd = raw_ic(false);
	bp_nvme_sqe_init(sqe, BP_NVME_ADM_KEEP_ALIVE, 1, 0, 0, false);
	bp_nvme_tcp_cmd_encode(b, sqe, 0, false, false, 0);
	b[2] = 70;
	send_all(fd, b, 72);
	expect_term(fd, BP_NVME_TCP_FES_INVALID_HEADER, 2, "bad hlen");
	/* Bad PDU length: more in-capsule data than allowed, refused before it is read. */
	fd = raw_ic(false);
	bp_nvme_tcp_cmd_encode(b, sqe, 0, false, false, 0);
	b[3] = 72;
	bp_put_le32(b + 4, 72 + (1u << 30));
	send_all(fd, b, 72);
	expect_term(fd, BP_NVME_TCP_FES_DATA_LIMIT, 0, "huge plen");
	/* Bad data offset. */
	fd = raw_ic(false);
	bp_nvme_tcp_cmd_encode(b, sqe, 0, false, false, 0);
	b[3] = 80;
	bp_put_le32(b + 4, 72 + 64);
	send_all(fd, b, 72 + 64);
	expect_term(fd, BP_NVME_TCP_FES_INVALID_HEADER, 3, "bad pdo");
	/* Header digest mismatch. */
	fd = raw_ic(true);
	bp_nvme_tcp_cmd_encode(b, sqe, 0, true, true, 0);
	b[72] ^= 1;
	send_all(fd, b, 76);
	expect_term(fd, BP_NVME_TCP_FES_HDGST, -1, "header digest");
	/* ICReq twice. */
	fd = raw_ic(false);
	{
		struct bp_nvme_tcp_ic ic = { 0 };

		bp_nvme_tcp_ic_encode(b, BP_NVME_TCP_ICREQ, &ic);
		send_all(fd, b, 128);
	}
	expect_term(fd, BP_NVME_TCP_FES_PDU_SEQUENCE, -1, "second ICReq");
	/* A command on a queue that is not connected: Command Sequence Error, the queue stays. */
	fd = raw_ic(false);
	bp_nvme_sqe_init(sqe, BP_NVME_CMD_READ, 0x42, 1, 4096, false);
	raw_send_cmd(fd, sqe, NULL, 0, false, false);
	BPT_CHECK(raw_status(fd) == (BP_NVME_SC_CMD_SEQ_ERROR | BP_NVME_DNR), "read before Connect");
	BPT_CHECK(raw_connect(fd, 0, 0xffff, HOST_B, false) == 0, "admin Connect after the refused command");
	close(fd);
	/* Disallowed host over raw bytes: Connect Invalid Host. */
	fd = raw_ic(false);
	BPT_CHECK(raw_connect(fd, 0, 0xffff, HOST_X, false) == (BP_NVME_SC_CONNECT_INVALID_HOST | BP_NVME_DNR),
		  "raw disallowed host");
	close(fd);

	/* I/O queue 3 by hand: data digest mismatch (status, queue lives), then H2CData abuses. */
	fd = raw_ic(true);
	BPT_CHECK(raw_connect(fd, 3, c->cntlid, HOST_A, true) == 0, "raw I/O queue connect");
	fill(data, sizeof(data), 3);
	bp_nvmeh_sqe_rw(sqe, true, 1, 0, 8);
	bp_nvme_sqe_set_cid(sqe, 1);
	sqe[39] = BP_NVME_SGL_DATA_BLOCK_OFFSET;
	raw_send_cmd(fd, sqe, data, 4096, true, true);
	BPT_CHECK(raw_status(fd) == BP_NVME_SC_TRANSIENT_TR_ERR, "data digest mismatch: Transient Transport Error");
	/* A write beyond in-capsule: R2T, then H2CData beyond what the R2T asked for. */
	bp_nvmeh_sqe_rw(sqe, true, 1, 0, 32);
	bp_nvme_sqe_set_cid(sqe, 2);
	bp_nvme_sqe_set_dw(sqe, 8, 16384);
	raw_send_cmd(fd, sqe, NULL, 0, true, false);
	{
		struct bp_nvme_tcp_data r2t, d;
		uint8_t h2c[512];
		size_t h;

		BPT_CHECK(read_pdu(fd, b, sizeof(b)) && b[0] == BP_NVME_TCP_R2T, "R2T, got %u", b[0]);
		bp_nvme_tcp_data_decode(b, &r2t);
		BPT_CHECK(r2t.cccid == 2 && r2t.offset == 0 && r2t.length == 16384, "R2T fields");
		d = (struct bp_nvme_tcp_data){ .cccid = 2, .ttag = r2t.ttag, .offset = 16384 - 256, .length = 512 };
		h = bp_nvme_tcp_data_encode(h2c, BP_NVME_TCP_H2C_DATA, &d, BP_NVME_TCP_F_LAST, true, true, 0);
		memset(h2c + h, 0x11, 512 - h);
		send_all(fd, h2c, h);
		memset(data, 0x11, 512);
		send_all(fd, data, 512);
		bp_nvme_tcp_put_digest(b, data, 512);
		send_all(fd, b, 4);
	}
	expect_term(fd, BP_NVME_TCP_FES_DATA_OUT_OF_RANGE, -1, "data beyond the R2T");
	/* H2CData with a transfer tag nobody asked for. */
	fd = raw_ic(false);
	BPT_CHECK(raw_connect(fd, 4, c->cntlid, HOST_A, false) == 0, "raw I/O queue 4");
	{
		struct bp_nvme_tcp_data d = { .cccid = 9, .ttag = 77, .offset = 0, .length = 512 };
		size_t h = bp_nvme_tcp_data_encode(b, BP_NVME_TCP_H2C_DATA, &d, BP_NVME_TCP_F_LAST, false, false, 0);

		memset(b + h, 0, 512);
		send_all(fd, b, h + 512);
	}
	expect_term(fd, BP_NVME_TCP_FES_INVALID_HEADER, 10, "unknown ttag");

	/* Through all of it, the well-behaved queue kept working. */
	write_read_verify(q1, q1, 1, 100, 4096, 10, "after malformed");
	write_read_verify(q1, q1, 2, 300, MIB, 11, "after malformed, 1 MiB");
	bp_nvmeh_queue_close(q1);
	bp_nvmeh_ctrl_disconnect(c);
	(void)t;
}

/*
 * KATO 1 s and no Keep Alive: the target closes the controller, never before
 * KATO (counted from before the Connect, which precedes its timer) and at most
 * KA_SLACK_MS after it (counted from the host's last admin command, which any
 * admin command renews). The upper bound only proves the expiry comes at all: a
 * loaded machine may be seconds late.
 */
#define KA_SLACK_MS 25000
static void test_keep_alive_expiry(struct bp_nvmet *t)
{
	struct bp_nvmeh_opts o = host_opts(HOST_A, false);
	struct bp_nvmeh_ctrl *c;
	uint64_t v, t0, t1, gone;
	int ret;

	o.kato_ms = 1000;
	t0 = bpt_now_ns();
	c = ctrl_up(&o, 1);
	t1 = bpt_now_ns();
	/* Stop our keep-alives by not running the loop: the target must give up on us. */
	BPT_CHECK(BPT_WAIT_UNTIL(!bpt_nvmet_queue(t, c->cntlid, 0, NULL), 30000),
		  "KATO 1 s: the controller is still served 30 s after its last Keep Alive");
	gone = bpt_now_ns();
	BPT_CHECK(gone - t0 >= 1000000000ull, "KATO 1 s: the controller was closed after %.0f ms, before its KATO",
		  (double)(gone - t0) / 1e6);
	BPT_CHECK(gone - t1 <= (1000ull + KA_SLACK_MS) * 1000000ull,
		  "KATO 1 s: the controller was closed %.0f ms after the host's last command, more than %d ms late",
		  (double)(gone - t1) / 1e6, KA_SLACK_MS);
	ret = bp_nvmeh_prop_get(c, BP_NVME_REG_CSTS, 4, &v);
	BPT_CHECK(ret < 0, "the controller should be gone after KATO, got %d", ret);
	bp_nvmeh_ctrl_disconnect(c);
}

/* Keep Alives every KATO/2 under continuous I/O: the controller must never expire. */
struct ka_io {
	struct bp_nvmeh_queue *q;
	uint8_t buf[4096];
	uint64_t done, errs;
	bool stop;
};

static void ka_io_done(void *arg, const struct bp_nvme_cqe *cqe, int err)
{
	struct ka_io *io = arg;
	uint8_t sqe[64];

	if (err || cqe->status) {
		io->errs++;
		if (err)
			return;
	}
	io->done++;
	if (io->stop)
		return;
	bp_nvmeh_sqe_rw(sqe, false, 1, (io->done * 8) % 100000, 8);
	if (bp_nvmeh_submit(io->q, sqe, io->buf, 4096, false, ka_io_done, io))
		io->errs++;
}

static void test_keep_alive_under_load(void)
{
	struct bp_nvmeh_opts o = host_opts(HOST_A, false);
	struct bp_nvmeh_ctrl *c;
	struct bp_nvmeh_queue *q;
	static struct ka_io io[4];
	uint64_t end, total = 0;

	o.kato_ms = 1000;
	c = ctrl_up(&o, 1);
	BPT_CHECK(bp_nvmeh_ctrl_io_queue(c, loop, 1, &q) == 0, "io queue");
	for (int i = 0; i < 4; i++) {
		io[i].q = q;
		io[i].stop = false;
		ka_io_done(&io[i], &(struct bp_nvme_cqe){ 0 }, 0);
	}
	/* Over three KATO periods: Keep Alives and the target's checks coincide at least once. */
	end = bp_now_ns() + 3500000000ull;
	while (bp_now_ns() < end)
		bp_loop_run_once(loop, 1000);
	for (int i = 0; i < 4; i++)
		io[i].stop = true;
	while (bp_nvmeh_queue_inflight(q) && bp_nvmeh_queue_state(q) == BP_NVMEH_READY)
		bp_loop_run_once(loop, 1000);
	for (int i = 0; i < 4; i++) {
		BPT_CHECK(io[i].errs == 0, "I/O failed while keep-alives were flowing: %s", bp_nvmeh_queue_error(q));
		total += io[i].done;
	}
	BPT_CHECK(bp_nvmeh_queue_state(q) == BP_NVMEH_READY && bp_nvmeh_queue_state(c->admin) == BP_NVMEH_READY,
		  "the controller expired although the host kept it alive: %s", bp_nvmeh_queue_error(c->admin));
	BPT_CHECK(total > 100, "I/O ran (%llu)", (unsigned long long)total);
	bp_nvmeh_queue_close(q);
	bp_nvmeh_ctrl_disconnect(c);
}

static void test_counters_and_poll(struct bp_nvmet *t, bool poll)
{
	struct bpt_nvmet_sum sum = bpt_nvmet_sum(t, false);
	uint64_t cmds = sum.total.commands, passes = sum.total.poll_passes, idle = sum.total.idle_exits;

	BPT_CHECK(sum.queues > 0, "the target lists no queues");
	BPT_CHECK(cmds > 20, "commands counted: %llu", (unsigned long long)cmds);
	BPT_CHECK(passes > 0, "passes counted");
	if (poll)
		BPT_CHECK(idle > 0, "poll mode: queues went idle and returned to waiting");
	else
		BPT_CHECK(idle == 0, "no poll mode: no idle exits");
	if (getenv("BPT_VERBOSE"))
		bp_nvmet_print_stats(t, stderr);
}

int main(void)
{
	struct bp_mode m;
	struct bp_nvmet *t;
	char dir[] = "/tmp/bpt-nvmet-XXXXXX";
	uint8_t keep[4096];

	signal(SIGPIPE, SIG_IGN);
	BPT_CHECK(mkdtemp(dir), "mkdtemp");
	snprintf(file_path, sizeof(file_path), "%s/ns.img", dir);
	BPT_CHECK(bpt_mode_usable("epoll:block", &m), "epoll:block");
	BPT_CHECK(bp_loop_create(&loop, &m) == 0, "loop: %s", bp_last_error());

	t = target_up(0, NULL);
	test_basic(t, false, false);
	test_basic(t, true, false);
	test_basic(t, false, true);
	test_refusals();
	test_malformed(t);
	test_keep_alive_expiry(t);
	test_keep_alive_under_load();
	test_counters_and_poll(t, false);
	/* Leave something on the file namespace, flush, and restart the target on it. */
	{
		struct bp_nvmeh_opts o = host_opts(HOST_A, false);
		struct bp_nvmeh_ctrl *c = ctrl_up(&o, 1);
		struct bp_nvmeh_queue *q;
		uint8_t sqe[64];

		BPT_CHECK(bp_nvmeh_ctrl_io_queue(c, loop, 1, &q) == 0, "io queue");
		fill(keep, sizeof(keep), 4242);
		BPT_CHECK(rw(q, true, 2, 5000, keep, sizeof(keep)) == 0, "write to keep");
		bp_nvmeh_sqe_flush(sqe, 2);
		BPT_CHECK(bp_nvmeh_sync(q, sqe, NULL, 0, false, NULL, 10000) == 0, "flush");
		bp_nvmeh_queue_close(q);
		bp_nvmeh_ctrl_disconnect(c);
	}
	bp_nvmet_stop(t);

	/* Poll mode on, restarted on the same file: the data is there. */
	t = target_up(200, NULL);
	{
		struct bp_nvmeh_opts o = host_opts(HOST_B, true);
		struct bp_nvmeh_ctrl *c = ctrl_up(&o, 2);
		struct bp_nvmeh_queue *q;
		uint8_t back[4096];

		BPT_CHECK(bp_nvmeh_ctrl_io_queue(c, loop, 1, &q) == 0, "io queue");
		BPT_CHECK(rw(q, false, 2, 5000, back, sizeof(back)) == 0, "read after restart");
		BPT_CHECK(memcmp(back, keep, sizeof(keep)) == 0, "data written before the restart is there after it");
		for (int i = 0; i < 20; i++)
			write_read_verify(q, q, 1, (uint64_t)i * 8, 4096, (uint32_t)i, "poll mode");
		write_read_verify(q, q, 2, 0, MIB, 5, "poll mode 1 MiB");
		bp_nvmeh_queue_close(q);
		bp_nvmeh_ctrl_disconnect(c);
	}
	/* Poll mode: with nothing to do, the queues end their polling (an idle exit). */
	BPT_CHECK(BPT_WAIT_UNTIL(bpt_nvmet_sum(t, false).total.idle_exits > 0, 30000),
		  "poll mode: no queue went idle within 30 s");
	test_basic(t, false, false);
	test_counters_and_poll(t, true);
	bp_nvmet_stop(t);

	/* Every engine mode this machine can run serves the target too. */
	for (size_t i = 0; i < bpt_n_modes; i++) {
		struct bp_mode mm;

		if (!bpt_mode_usable(bpt_all_modes[i], &mm))
			continue;
		t = target_up(i % 2 ? 50 : 0, bpt_all_modes[i]);
		{
			struct bp_nvmeh_opts o = host_opts(HOST_A, i % 2);
			struct bp_nvmeh_ctrl *c = ctrl_up(&o, 1);
			struct bp_nvmeh_queue *q;

			BPT_CHECK(bp_nvmeh_ctrl_io_queue(c, loop, 1, &q) == 0, "%s: io queue", bpt_all_modes[i]);
			write_read_verify(q, q, 1, 0, 4096, 1, bpt_all_modes[i]);
			write_read_verify(q, q, 2, 64, MIB, 2, bpt_all_modes[i]);
			bp_nvmeh_queue_close(q);
			bp_nvmeh_ctrl_disconnect(c);
		}
		bp_nvmet_stop(t);
		fprintf(stderr, "ok %s\n", bpt_all_modes[i]);
	}

	bp_loop_destroy(loop);
	unlink(file_path);
	rmdir(dir);
	fprintf(stderr, "PASS\n");
	return bpt_exit_status();
}
