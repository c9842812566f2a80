/* SPDX-License-Identifier: MIT */
/*
 * busypoll target held to the specification by a strict raw-socket host: plain
 * blocking sockets and the PDU framer, not the project's own initiator (which
 * accepts both of the target's answers where the specification allows only one,
 * so a target judged by it is judged by a lenient peer). Over loopback, in process:
 *
 *  1. C2HData: on a queue whose Connect left SQ flow control on, a read's data
 *     comes with LAST and without SUCCESS, then a CapsuleResp for it (status 0,
 *     its cid, SQHD counting the queue's entries); on one whose Connect disabled
 *     it (CATTR bit 2) the data comes with LAST|SUCCESS and no CapsuleResp follows
 *     (the next PDU answers the next command).
 *  2. The controller's life: CSTS.RDY 0 and commands refused (Command Sequence
 *     Error) before CC.EN; EN 0->1 sets RDY; EN 1->0 resets (I/O queues closed,
 *     the admin queue stays, RDY 0); EN with a memory page size we lack sets
 *     CSTS.CFS, not RDY; shutdown (CC.SHN) reports SHST complete.
 *  3. The documented error table: an opcode it does not serve (admin, I/O, a
 *     fabrics type on an I/O queue), an SGL that does not cover the blocks and a
 *     transfer over MDTS, sqsize over the queue depth (I/O and admin),
 *     an I/O queue for a controller that is gone, more commands outstanding than
 *     the queue's sqsize + 1 entries, H2CData with a wrong command id, offset or length, LAST
 *     before all the data; --max-conns refusing the next connection until one
 *     closes; SO_PRIORITY set on accepted sockets before the first answer (read
 *     back from the target's own socket, which lives in this process).
 * Timing is never asserted.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <busypoll/busypoll.h>
#include <busypoll/nvme/target.h>

#include "bpt_faults.h"
#include "bpt_nvmet.h"
#include "bptest.h"
#include "base/bytes.h"

#define NQN "nqn.2024-01.io.busypoll:spec"
#define HOSTNQN "nqn.2014-08.org.nvmexpress:uuid:5bec0000-0000-4000-8000-000000000001"
#define DEPTH 16          /* --queue-depth: I/O queues hold at most 16 entries */
#define MAX_CONNS 6
#define PRIORITY 5
#define IO_TIMEOUT_MS 5000

#define CC_EN 1u
#define CC_IOSQES_64 (6u << 16)
#define CC_IOCQES_16 (4u << 20)
#define CC_MPS(n) ((uint32_t)(n) << 7)
#define CC_SHN_NORMAL (1u << 14)
#define CSTS_RDY 1u
#define CSTS_CFS 2u
#define CSTS_SHST(v) (((v) >> 2) & 3u)

static struct bp_nvmet *t;
static uint16_t port;

static void target_up(void)
{
	struct bp_nvmet_cfg cfg;
	char err[160];

	bp_nvmet_cfg_defaults(&cfg);
	((struct sockaddr_in *)&cfg.listen)->sin_port = 0;
	snprintf(cfg.nqn, sizeof(cfg.nqn), NQN);
	BPT_CHECK(bp_nvmet_ns_parse("ram:16M", &cfg.ns[0], err, sizeof(err)) == 0, "%s", err);
	cfg.n_ns = 1;
	cfg.threads = 2;
	cfg.queue_depth = 32; /* the admin queue's own size is the least allowed */
	cfg.max_conns = MAX_CONNS;
	cfg.so_priority = PRIORITY;
	cfg.log_level = getenv("BPT_VERBOSE") ? BP_NVMET_LOG_DEBUG : BP_NVMET_LOG_ERROR;
	BPT_CHECK(bp_nvmet_start(&cfg, &t) == 0, "target: %s", bp_last_error());
	port = bp_nvmet_port(t);
}

/* target_idle - wait until the target has seen every earlier connection of this test close. */
static void target_idle(void)
{
	BPT_CHECK(BPT_WAIT_UNTIL(bpt_nvmet_sum(t, false).live == 0, 30000), "%d queues still live 30 s after their hosts left",
		  bpt_nvmet_sum(t, false).live);
}

/* ---- a strict host, by hand ---- */

struct rq {
	int fd;
	bool digests;
	uint8_t buf[1 << 17]; /* received bytes not yet framed */
	size_t len;
	uint8_t pdu[1 << 17]; /* the last PDU taken */
	struct bp_nvme_tcp_pdu p;
	uint16_t qid;
};

static struct rq *rq_open(bool digests)
{
	struct rq *q = calloc(1, sizeof(*q));
	struct bp_nvme_tcp_ic ic = { .digest = digests ? 3 : 0 };
	uint8_t b[BP_NVME_TCP_IC_LEN];

	BPT_CHECK(q, "oom");
	q->digests = digests;
	q->fd = bpt_connect(port);
	bp_nvme_tcp_ic_encode(b, BP_NVME_TCP_ICREQ, &ic);
	bpt_send_all(q->fd, b, sizeof(b));
	BPT_CHECK(bpt_recv_all(q->fd, b, sizeof(b), IO_TIMEOUT_MS) && b[0] == BP_NVME_TCP_ICRESP, "no ICResp");
	bp_nvme_tcp_ic_decode(b, &ic);
	BPT_CHECK(ic.digest == (digests ? 3 : 0), "ICResp digests %u", ic.digest);
	return q;
}

static void rq_close(struct rq *q)
{
	close(q->fd);
	free(q);
}

/*
 * rq_next - the next whole PDU, framed as a host must (types a controller may
 * send, digests as negotiated, lengths); 0 at EOF, else its type. A framing
 * error fails the test: the target sent what no host may be sent.
 */
static int rq_next(struct rq *q)
{
	struct bp_nvme_tcp_rx_cfg cfg = { .is_target = false, .connected = true, .hdgst = q->digests,
					  .ddgst = q->digests, .max_data = 1u << 20 };
	struct bp_nvme_tcp_err err;

	for (;;) {
		int n = bp_nvme_tcp_frame(q->buf, q->len, &cfg, &q->p, &err);
		struct pollfd pf = { .fd = q->fd, .events = POLLIN };
		ssize_t r;

		BPT_CHECK(n >= 0, "qid %u: the target sent a PDU no host accepts: %s (FES %u FEI %u)", q->qid, err.msg,
			  err.fes, err.fei);
		if (n > 0) {
			/* Keep the PDU apart from the buffer that moves on. */
			memcpy(q->pdu, q->buf, (size_t)n);
			q->p.hdr = q->pdu + (q->p.hdr - q->buf);
			if (q->p.data)
				q->p.data = q->pdu + (q->p.data - q->buf);
			memmove(q->buf, q->buf + n, q->len - (size_t)n);
			q->len -= (size_t)n;
			BPT_CHECK(!q->p.ddgst_bad, "qid %u: a data digest from the target does not match", q->qid);
			return q->p.ch.type;
		}
		BPT_CHECK(q->len < sizeof(q->buf), "qid %u: a PDU larger than %zu bytes", q->qid, sizeof(q->buf));
		BPT_CHECK(poll(&pf, 1, IO_TIMEOUT_MS) == 1, "qid %u: no PDU from the target within %d ms", q->qid,
			  IO_TIMEOUT_MS);
		r = recv(q->fd, q->buf + q->len, sizeof(q->buf) - q->len, 0);
		if (r == 0 || (r < 0 && errno == ECONNRESET)) {
			BPT_CHECK(q->len == 0, "qid %u: the target closed in the middle of a PDU", q->qid);
			return 0;
		}
		BPT_CHECK(r > 0, "recv: %s", strerror(errno));
		q->len += (size_t)r;
	}
}

/* rq_send_cmd - a CapsuleCmd with len bytes of in-capsule data (digests as negotiated). */
static void rq_send_cmd(struct rq *q, const uint8_t sqe[64], const void *data, uint32_t len)
{
	uint8_t b[256 + 8192];
	size_t h = bp_nvme_tcp_cmd_encode(b, sqe, len, q->digests, q->digests, 0);

	BPT_CHECK(h + len + 4 <= sizeof(b), "capsule too large");
	if (len)
		memcpy(b + h, data, len);
	if (len && q->digests)
		bp_nvme_tcp_put_digest(b + h + len, data, len);
	bpt_send_all(q->fd, b, h + len + (len && q->digests ? 4 : 0));
}

/* rq_resp - the next PDU must be a CapsuleResp: its CQE. */
static struct bp_nvme_cqe rq_resp(struct rq *q, const char *what)
{
	struct bp_nvme_cqe cqe;
	int type = rq_next(q);

	BPT_CHECK(type == BP_NVME_TCP_RSP, "%s: expected a CapsuleResp, got %s (%d)", what,
		  type ? bp_nvme_tcp_type_name((uint8_t)type) : "EOF", type);
	bp_nvme_cqe_decode(q->p.hdr + 8, &cqe);
	return cqe;
}

/* rq_connect - Connect this queue (admin when qid 0); returns the CQE. */
static struct bp_nvme_cqe rq_connect(struct rq *q, uint16_t qid, uint16_t cntlid, uint16_t sqsize, uint8_t cattr)
{
	uint8_t sqe[64], cd[1024] = { 0 };

	bp_nvme_sqe_init(sqe, BP_NVME_FABRICS, 0x0c0c, 0, 1024, true);
	sqe[4] = BP_NVMF_CONNECT;
	bp_put_le16(sqe + 42, qid);
	bp_put_le16(sqe + 44, sqsize);
	sqe[46] = cattr;
	bp_put_le16(cd + BP_NVMF_CD_CNTLID, cntlid);
	snprintf((char *)cd + BP_NVMF_CD_SUBNQN, 256, NQN);
	snprintf((char *)cd + BP_NVMF_CD_HOSTNQN, 256, HOSTNQN);
	q->qid = qid;
	rq_send_cmd(q, sqe, cd, sizeof(cd));
	return rq_resp(q, "Connect");
}

/* An admin queue connected (controller enabled when enable): its cntlid. */
static struct rq *admin_up(bool enable, uint16_t *cntlid);

static struct bp_nvme_cqe rq_prop(struct rq *q, bool set, uint32_t off, uint64_t val, bool eight)
{
	uint8_t sqe[64];

	bp_nvme_sqe_init(sqe, BP_NVME_FABRICS, 0x0d0d, 0, 0, false);
	sqe[4] = set ? BP_NVMF_PROP_SET : BP_NVMF_PROP_GET;
	sqe[40] = eight ? 1 : 0;
	bp_put_le32(sqe + 44, off);
	bp_put_le64(sqe + 48, val);
	rq_send_cmd(q, sqe, NULL, 0);
	return rq_resp(q, set ? "Property Set" : "Property Get");
}

static uint32_t csts(struct rq *admin)
{
	struct bp_nvme_cqe c = rq_prop(admin, false, BP_NVME_REG_CSTS, 0, false);

	BPT_CHECK(c.status == 0, "Property Get CSTS: status 0x%x", c.status);
	return (uint32_t)c.result;
}

static void set_cc(struct rq *admin, uint32_t cc)
{
	struct bp_nvme_cqe c = rq_prop(admin, true, BP_NVME_REG_CC, cc, false);

	BPT_CHECK(c.status == 0, "Property Set CC 0x%x: status 0x%x", cc, c.status);
}

static struct rq *admin_up(bool enable, uint16_t *cntlid)
{
	struct rq *q = rq_open(false);
	struct bp_nvme_cqe c = rq_connect(q, 0, 0xffff, 31, 0);

	BPT_CHECK(c.status == 0, "admin Connect: status 0x%x", c.status);
	*cntlid = (uint16_t)c.result;
	if (enable) {
		set_cc(q, CC_EN | CC_IOSQES_64 | CC_IOCQES_16);
		BPT_CHECK(csts(q) & CSTS_RDY, "CSTS.RDY not set after CC.EN");
	}
	return q;
}

static struct rq *ioq_up(uint16_t cntlid, uint16_t qid, uint8_t cattr, bool digests)
{
	struct rq *q = rq_open(digests);
	struct bp_nvme_cqe c = rq_connect(q, qid, cntlid, DEPTH - 1, cattr);

	BPT_CHECK(c.status == 0, "I/O queue %u Connect: status 0x%x", qid, c.status);
	return q;
}

static void sqe_rw(uint8_t *sqe, uint8_t opc, uint16_t cid, uint64_t slba, uint32_t len, bool in_capsule)
{
	bp_nvme_sqe_init(sqe, opc, cid, 1, len, in_capsule);
	bp_nvme_sqe_set_dw(sqe, 10, (uint32_t)slba);
	bp_nvme_sqe_set_dw(sqe, 11, (uint32_t)(slba >> 32));
	bp_nvme_sqe_set_dw(sqe, 12, len / 512 - 1);
}

static void fill(uint8_t *b, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1664525u + 1013904223u;
		b[i] = (uint8_t)(seed >> 24);
	}
}

/* Expect a C2HTermReq with fes (and fei when >= 0), then the connection closed. */
static void expect_term(struct rq *q, uint16_t fes, long fei, const char *what)
{
	int type = rq_next(q);

	BPT_CHECK(type == BP_NVME_TCP_C2H_TERM, "%s: expected a C2HTermReq, got %s", what,
		  type ? bp_nvme_tcp_type_name((uint8_t)type) : "EOF");
	BPT_CHECK(bp_get_le16(q->p.hdr + 8) == fes, "%s: FES %u, expected %u", what, bp_get_le16(q->p.hdr + 8), fes);
	if (fei >= 0)
		BPT_CHECK(bp_get_le32(q->p.hdr + 10) == (uint32_t)fei, "%s: FEI %u, expected %ld", what,
			  bp_get_le32(q->p.hdr + 10), fei);
	BPT_CHECK(rq_next(q) == 0, "%s: the queue must close after the C2HTermReq", what);
	rq_close(q);
}

/* ---- 1. C2HData SUCCESS only when the Connect disabled SQ flow control ---- */

static void c2h_success(bool digests)
{
	uint16_t cntlid;
	struct rq *a = admin_up(true, &cntlid), *q;
	uint8_t sqe[64], w[4096];
	struct bp_nvme_cqe c;
	struct bp_nvme_tcp_data d;
	const char *how = digests ? "with digests" : "plain";

	fill(w, sizeof(w), 7);
	/* SQ flow control on (CATTR 0): data with LAST only, then a CapsuleResp. */
	q = ioq_up(cntlid, 1, 0, digests);
	sqe_rw(sqe, BP_NVME_CMD_WRITE, 0x11, 64, sizeof(w), true);
	rq_send_cmd(q, sqe, w, sizeof(w));
	c = rq_resp(q, "in-capsule write");
	BPT_CHECK(c.status == 0 && c.cid == 0x11, "write: status 0x%x cid 0x%x", c.status, c.cid);
	/* The Connect and the write took an entry each. */
	BPT_CHECK(c.sqhd == 2, "%s: SQHD %u after Connect and one write, want 2", how, c.sqhd);
	sqe_rw(sqe, BP_NVME_CMD_READ, 0x22, 64, sizeof(w), false);
	rq_send_cmd(q, sqe, NULL, 0);
	BPT_CHECK(rq_next(q) == BP_NVME_TCP_C2H_DATA, "%s: a read's answer is not C2HData", how);
	bp_nvme_tcp_data_decode(q->p.hdr, &d);
	BPT_CHECK(d.cccid == 0x22 && d.offset == 0 && d.length == sizeof(w) && q->p.data_len == sizeof(w),
		  "%s: C2HData cccid 0x%x offset %u length %u", how, d.cccid, d.offset, d.length);
	BPT_CHECK(!memcmp(q->p.data, w, sizeof(w)), "%s: C2HData differs from what was written", how);
	BPT_CHECK(q->p.ch.flags & BP_NVME_TCP_F_LAST, "%s: the only C2HData of a read lacks LAST", how);
	BPT_CHECK(!(q->p.ch.flags & BP_NVME_TCP_F_SUCCESS),
		  "%s: C2HData with SUCCESS on a queue whose Connect kept SQ flow control (flags 0x%x)", how,
		  q->p.ch.flags);
	c = rq_resp(q, "the read after its C2HData (no SUCCESS)");
	BPT_CHECK(c.status == 0 && c.cid == 0x22 && c.sqid == 1, "read: status 0x%x cid 0x%x sqid %u", c.status, c.cid,
		  c.sqid);
	BPT_CHECK(c.sqhd == 3, "%s: SQHD %u after three entries, want 3", how, c.sqhd);
	rq_close(q);

	/* SQ flow control disabled (CATTR bit 2): LAST|SUCCESS, no CapsuleResp. */
	q = ioq_up(cntlid, 2, BP_NVMF_CATTR_DISABLE_SQFLOW, digests);
	sqe_rw(sqe, BP_NVME_CMD_READ, 0x33, 64, sizeof(w), false);
	rq_send_cmd(q, sqe, NULL, 0);
	BPT_CHECK(rq_next(q) == BP_NVME_TCP_C2H_DATA, "%s, SQ flow control off: no C2HData", how);
	bp_nvme_tcp_data_decode(q->p.hdr, &d);
	BPT_CHECK(d.cccid == 0x33 && !memcmp(q->p.data, w, sizeof(w)), "%s, SQ flow control off: wrong data", how);
	BPT_CHECK((q->p.ch.flags & (BP_NVME_TCP_F_LAST | BP_NVME_TCP_F_SUCCESS)) ==
			  (BP_NVME_TCP_F_LAST | BP_NVME_TCP_F_SUCCESS),
		  "%s: C2HData flags 0x%x on a queue whose Connect disabled SQ flow control, want LAST|SUCCESS", how,
		  q->p.ch.flags);
	/* The next PDU answers the next command: nothing more for the read. */
	bp_nvme_sqe_init(sqe, BP_NVME_CMD_FLUSH, 0x44, 1, 0, false);
	rq_send_cmd(q, sqe, NULL, 0);
	c = rq_resp(q, "a Flush after a SUCCESS read");
	BPT_CHECK(c.cid == 0x44, "%s: a CapsuleResp for cid 0x%x followed C2HData with SUCCESS", how, c.cid);
	BPT_CHECK(c.status == 0, "flush: status 0x%x", c.status);
	rq_close(q);
	rq_close(a);
	printf("ok   C2HData %s: LAST and a CapsuleResp (SQHD 2, 3) with SQ flow control; LAST|SUCCESS and no "
	       "CapsuleResp without it\n", how);
}

/* ---- 2. the controller's life ---- */

/* eof_within - the target closed fd's connection within ms (reading and dropping what comes first). */
static bool closed_within(int fd, int ms)
{
	return bpt_wait_closed(fd, ms) >= 0;
}

static void lifecycle(void)
{
	uint16_t cntlid;
	struct rq *a = admin_up(false, &cntlid), *q;
	uint8_t sqe[64], id[4096];
	struct bp_nvme_cqe c;
	uint32_t v;

	/* Before CC.EN: not ready, and only fabrics commands are served. */
	BPT_CHECK(csts(a) == 0, "CSTS 0x%x before CC.EN, want 0", csts(a));
	bp_nvme_sqe_init(sqe, BP_NVME_ADM_IDENTIFY, 0x55, 0, sizeof(id), false);
	bp_nvme_sqe_set_dw(sqe, 10, BP_NVME_ID_CNS_CTRL);
	rq_send_cmd(a, sqe, NULL, 0);
	c = rq_resp(a, "Identify before CC.EN");
	BPT_CHECK(c.status == (BP_NVME_SC_CMD_SEQ_ERROR | BP_NVME_DNR),
		  "Identify before CC.EN: status 0x%x, want Command Sequence Error", c.status);

	/* EN 0 -> 1 with a memory page size we lack (MPS 1 = 8 KiB): fatal status, not ready. */
	set_cc(a, CC_EN | CC_MPS(1) | CC_IOSQES_64 | CC_IOCQES_16);
	v = csts(a);
	BPT_CHECK((v & CSTS_CFS) && !(v & CSTS_RDY), "CC.EN with MPS 8 KiB: CSTS 0x%x, want CFS and not RDY", v);
	set_cc(a, 0);
	BPT_CHECK(csts(a) == 0, "CSTS 0x%x after CC.EN 1 -> 0, want 0", csts(a));

	/* EN 0 -> 1: ready; an I/O queue works. */
	set_cc(a, CC_EN | CC_IOSQES_64 | CC_IOCQES_16);
	BPT_CHECK(csts(a) == CSTS_RDY, "CSTS 0x%x after CC.EN, want RDY only", csts(a));
	q = ioq_up(cntlid, 1, 0, false);
	bp_nvme_sqe_init(sqe, BP_NVME_CMD_FLUSH, 0x66, 1, 0, false);
	rq_send_cmd(q, sqe, NULL, 0);
	BPT_CHECK(rq_resp(q, "Flush").status == 0, "Flush on a ready controller failed");

	/* EN 1 -> 0: a reset. The I/O queue goes, the admin queue stays and is not ready. */
	set_cc(a, CC_IOSQES_64 | CC_IOCQES_16);
	BPT_CHECK(closed_within(q->fd, IO_TIMEOUT_MS), "the I/O queue is still open after CC.EN 1 -> 0 (reset)");
	rq_close(q);
	BPT_CHECK(!(csts(a) & CSTS_RDY), "CSTS.RDY still set after a reset");
	rq_send_cmd(a, sqe, NULL, 0); /* any command but fabrics and Keep Alive: refused again */
	c = rq_resp(a, "a command after the reset");
	BPT_CHECK(c.status == (BP_NVME_SC_CMD_SEQ_ERROR | BP_NVME_DNR), "after a reset: status 0x%x", c.status);

	/* Enabled again, then shut down: SHST says complete. */
	set_cc(a, CC_EN | CC_IOSQES_64 | CC_IOCQES_16);
	BPT_CHECK(csts(a) & CSTS_RDY, "not ready after the reset and a new CC.EN");
	q = ioq_up(cntlid, 1, 0, false); /* qid 1 again: the reset freed it */
	rq_close(q);
	set_cc(a, CC_EN | CC_SHN_NORMAL | CC_IOSQES_64 | CC_IOCQES_16);
	v = csts(a);
	BPT_CHECK(CSTS_SHST(v) == 2, "CSTS 0x%x after CC.SHN normal: SHST %u, want 2 (complete)", v, CSTS_SHST(v));
	rq_close(a);
	printf("ok   controller life: commands refused before CC.EN, CFS for MPS 8 KiB, RDY on EN, reset closes the "
	       "I/O queue and keeps the admin queue, SHST complete on shutdown\n");
}

/* ---- 3. the error table ---- */

static void connect_refusals(void)
{
	uint16_t cntlid, dead;
	struct rq *a = admin_up(true, &cntlid), *gone, *q;
	struct bp_nvme_cqe c;

	/* sqsize over the depth: I/O queue (32 entries here), admin queue (32). */
	q = rq_open(false);
	c = rq_connect(q, 1, cntlid, 32, 0);
	BPT_CHECK(c.status == (BP_NVME_SC_CONNECT_INVALID_PARAM | BP_NVME_DNR) && c.result == BP_NVMF_IPO(0, 44),
		  "I/O Connect with sqsize 32 (33 entries, depth 32): status 0x%x result 0x%llx, want Invalid Parameter "
		  "at SQE byte 44", c.status, (unsigned long long)c.result);
	rq_close(q);
	q = rq_open(false);
	c = rq_connect(q, 0, 0xffff, 32, 0);
	BPT_CHECK(c.status == (BP_NVME_SC_CONNECT_INVALID_PARAM | BP_NVME_DNR) && c.result == BP_NVMF_IPO(0, 44),
		  "admin Connect with sqsize 32: status 0x%x result 0x%llx", c.status, (unsigned long long)c.result);
	rq_close(q);
	/* qid beyond those granted (the default 64). */
	q = rq_open(false);
	c = rq_connect(q, 65, cntlid, DEPTH - 1, 0);
	BPT_CHECK(c.status == (BP_NVME_SC_CONNECT_INVALID_PARAM | BP_NVME_DNR) && c.result == BP_NVMF_IPO(0, 42),
		  "I/O Connect qid 65: status 0x%x result 0x%llx, want Invalid Parameter at SQE byte 42", c.status,
		  (unsigned long long)c.result);
	rq_close(q);
	/* A controller that is gone: its admin queue closed. */
	gone = admin_up(true, &dead);
	rq_close(gone);
	BPT_CHECK(BPT_WAIT_UNTIL(({
			  struct rq *x = rq_open(false);
			  struct bp_nvme_cqe cx = rq_connect(x, 1, dead, DEPTH - 1, 0);

			  rq_close(x);
			  c = cx;
			  cx.status != 0;
		  }), IO_TIMEOUT_MS),
		  "an I/O queue for controller %u is still accepted 5 s after its admin queue closed", dead);
	BPT_CHECK(c.status == (BP_NVME_SC_CONNECT_INVALID_PARAM | BP_NVME_DNR) &&
			  c.result == BP_NVMF_IPO(1, BP_NVMF_CD_CNTLID),
		  "I/O Connect for dead controller %u: status 0x%x result 0x%llx, want Invalid Parameter at data byte "
		  "16", dead, c.status, (unsigned long long)c.result);
	rq_close(a);
	printf("ok   Connect refused: sqsize over the depth (I/O, admin), qid beyond the grant, a dead cntlid; each "
	       "Invalid Parameter with its locator\n");
}

/* Opcodes the target does not serve: Invalid Command Opcode, DNR, the queue lives. */
static void opcodes(void)
{
	uint16_t cntlid;
	struct rq *a = admin_up(true, &cntlid), *q = ioq_up(cntlid, 1, 0, false);
	static const struct {
		bool admin;
		uint8_t opc, fctype;
		const char *what;
	} cases[] = {
		{ true, 0x80, 0, "admin Format NVM" },
		{ true, 0x81, 0, "admin Security Send" },
		{ false, 0x05, 0, "I/O Compare" },
		{ false, 0x04, 0, "I/O Write Uncorrectable" }, /* (Write Zeroes, 0x08, is served: issue 15) */
		{ false, BP_NVME_FABRICS, BP_NVMF_PROP_GET, "Property Get on an I/O queue" },
	};
	uint8_t sqe[64];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rq *x = cases[i].admin ? a : q;
		struct bp_nvme_cqe c;

		bp_nvme_sqe_init(sqe, cases[i].opc, (uint16_t)(0x900 + i), cases[i].admin ? 0 : 1, 0, false);
		sqe[4] = cases[i].fctype;
		rq_send_cmd(x, sqe, NULL, 0);
		c = rq_resp(x, cases[i].what);
		BPT_CHECK(c.cid == 0x900 + i && c.status == (BP_NVME_SC_INVALID_OPCODE | BP_NVME_DNR),
			  "%s: cid 0x%x status 0x%x, want Invalid Command Opcode with DNR", cases[i].what, c.cid, c.status);
	}
	/* Data descriptors: an SGL shorter than the blocks, a transfer beyond MDTS (1 MiB). */
	{
		static const struct {
			uint32_t blocks, sgl;
			uint16_t status;
			const char *what;
		} bad[] = {
			{ 8, 2048, BP_NVME_SC_SGL_INVALID_DATA | BP_NVME_DNR, "a 4 KiB read with a 2 KiB SGL" },
			{ 8, 8192, BP_NVME_SC_SGL_INVALID_DATA | BP_NVME_DNR, "a 4 KiB read with an 8 KiB SGL" },
			{ 4096, 2u << 20, BP_NVME_SC_INVALID_FIELD | BP_NVME_DNR, "a 2 MiB read (MDTS 1 MiB)" },
		};

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			struct bp_nvme_cqe c;

			sqe_rw(sqe, BP_NVME_CMD_READ, (uint16_t)(0x980 + i), 0, bad[i].blocks * 512, false);
			bp_nvme_sqe_set_dw(sqe, 8, bad[i].sgl);
			rq_send_cmd(q, sqe, NULL, 0);
			c = rq_resp(q, bad[i].what);
			BPT_CHECK(c.cid == 0x980 + i && c.status == bad[i].status, "%s: status 0x%x, want 0x%x", bad[i].what,
				  c.status, bad[i].status);
		}
	}
	/* Both queues still serve. */
	bp_nvme_sqe_init(sqe, BP_NVME_CMD_FLUSH, 0x9ff, 1, 0, false);
	rq_send_cmd(q, sqe, NULL, 0);
	BPT_CHECK(rq_resp(q, "Flush after refused opcodes").status == 0, "the I/O queue stopped serving");
	BPT_CHECK(csts(a) & CSTS_RDY, "the admin queue stopped serving");
	rq_close(q);
	rq_close(a);
	printf("ok   Invalid Command Opcode (DNR) for admin 0x80 and 0x81, I/O 0x05 and 0x08, a fabrics command on an "
	       "I/O queue; Data SGL Length Invalid for an SGL that is not the blocks' size, Invalid Field over MDTS; "
	       "both queues serve on\n");
}

/* A write beyond in-capsule on q: the R2T it gets (checked against the command). */
static struct bp_nvme_tcp_data write_r2t(struct rq *q, uint16_t cid, uint64_t slba, uint32_t len)
{
	uint8_t sqe[64];
	struct bp_nvme_tcp_data r2t;

	sqe_rw(sqe, BP_NVME_CMD_WRITE, cid, slba, len, false);
	rq_send_cmd(q, sqe, NULL, 0);
	BPT_CHECK(rq_next(q) == BP_NVME_TCP_R2T, "a %u-byte write got no R2T", len);
	bp_nvme_tcp_data_decode(q->p.hdr, &r2t);
	BPT_CHECK(r2t.cccid == cid && r2t.offset == 0 && r2t.length == len, "R2T cccid 0x%x offset %u length %u",
		  r2t.cccid, r2t.offset, r2t.length);
	return r2t;
}

static void send_h2c(struct rq *q, uint16_t cccid, uint16_t ttag, uint32_t off, uint32_t len, bool last)
{
	static uint8_t data[65536];
	struct bp_nvme_tcp_data d = { .cccid = cccid, .ttag = ttag, .offset = off, .length = len };
	uint8_t h[64];
	size_t hl = bp_nvme_tcp_data_encode(h, BP_NVME_TCP_H2C_DATA, &d, last ? BP_NVME_TCP_F_LAST : 0, false, false,
					    0);

	BPT_CHECK(len <= sizeof(data), "H2CData too long");
	memset(data, 0x5a, len);
	bpt_send_all(q->fd, h, hl);
	bpt_send_all(q->fd, data, len);
}

static void pdu_errors(void)
{
	uint16_t cntlid;
	struct rq *a = admin_up(true, &cntlid), *q;
	struct bp_nvme_tcp_data r2t;

	/* H2CData whose command id is not its transfer tag's. */
	q = ioq_up(cntlid, 1, 0, false);
	r2t = write_r2t(q, 0x70, 0, 16384);
	send_h2c(q, 0x71, r2t.ttag, 0, 16384, true);
	expect_term(q, BP_NVME_TCP_FES_INVALID_HEADER, 8, "H2CData with the wrong command id");
	/* H2CData out of order: the first one at offset 4096. */
	q = ioq_up(cntlid, 1, 0, false);
	r2t = write_r2t(q, 0x72, 0, 16384);
	send_h2c(q, 0x72, r2t.ttag, 4096, 4096, false);
	expect_term(q, BP_NVME_TCP_FES_INVALID_HEADER, 12, "H2CData at an offset out of order");
	/* H2CData longer than what the R2T asked for. */
	q = ioq_up(cntlid, 1, 0, false);
	r2t = write_r2t(q, 0x73, 0, 16384);
	send_h2c(q, 0x73, r2t.ttag, 0, 20480, true);
	expect_term(q, BP_NVME_TCP_FES_DATA_OUT_OF_RANGE, -1, "H2CData longer than the R2T");
	/* H2CData marked LAST before all of it came. */
	q = ioq_up(cntlid, 1, 0, false);
	r2t = write_r2t(q, 0x74, 0, 16384);
	send_h2c(q, 0x74, r2t.ttag, 0, 8192, true);
	expect_term(q, BP_NVME_TCP_FES_PDU_SEQUENCE, -1, "H2CData with LAST before all the data");
	/* The right H2CData, in two PDUs: written, a CapsuleResp. */
	q = ioq_up(cntlid, 1, 0, false);
	r2t = write_r2t(q, 0x75, 0, 16384);
	send_h2c(q, 0x75, r2t.ttag, 0, 8192, false);
	send_h2c(q, 0x75, r2t.ttag, 8192, 8192, true);
	{
		struct bp_nvme_cqe c = rq_resp(q, "a write whose data came in two H2CData");

		BPT_CHECK(c.cid == 0x75 && c.status == 0, "two-part write: cid 0x%x status 0x%x", c.cid, c.status);
	}
	/*
	 * More commands outstanding than the queue holds: sqsize 15 is 16 entries
	 * (0's based; the Linux host fills all of them), so 16 writes may wait for
	 * their data at once and the 17th overruns the queue.
	 */
	rq_close(q);
	q = ioq_up(cntlid, 1, 0, false);
	for (uint16_t i = 0; i < DEPTH; i++)
		write_r2t(q, (uint16_t)(0x100 + i), (uint64_t)i * 64, 16384);
	{
		uint8_t sqe[64];

		sqe_rw(sqe, BP_NVME_CMD_WRITE, 0x1ff, 2048, 16384, false);
		rq_send_cmd(q, sqe, NULL, 0);
	}
	expect_term(q, BP_NVME_TCP_FES_PDU_SEQUENCE, -1, "a command beyond sqsize");
	rq_close(a);
	printf("ok   C2HTermReq for H2CData with a wrong cccid (FEI 8), offset (FEI 12), length (FES 4), early "
	       "LAST (FES 2), and for a 17th command outstanding on 16 entries (FES 2); right H2CData in two PDUs served\n");
}

/* A TCP connection refused by --max-conns: closed without an ICResp. */
static bool refused(int fd)
{
	uint8_t b[BP_NVME_TCP_IC_LEN];
	struct bp_nvme_tcp_ic ic = { 0 };

	bp_nvme_tcp_ic_encode(b, BP_NVME_TCP_ICREQ, &ic);
	if (send(fd, b, sizeof(b), MSG_NOSIGNAL) != (ssize_t)sizeof(b))
		return true;
	return !bpt_recv_all(fd, b, sizeof(b), IO_TIMEOUT_MS);
}

static void max_conns(void)
{
	struct rq *held[MAX_CONNS];
	int fd;

	target_idle();
	for (int i = 0; i < MAX_CONNS; i++)
		held[i] = rq_open(false);
	fd = bpt_connect(port);
	BPT_CHECK(refused(fd), "connection %d of --max-conns %d was served", MAX_CONNS + 1, MAX_CONNS);
	close(fd);
	/* One closes: the count comes down as the target sees the close, then a new one is served. */
	rq_close(held[0]);
	BPT_CHECK(BPT_WAIT_UNTIL(({
			  int f = bpt_connect(port);
			  bool ok = !refused(f);

			  close(f);
			  ok;
		  }), IO_TIMEOUT_MS),
		  "after one of %d connections closed, a new one is still refused", MAX_CONNS);
	for (int i = 1; i < MAX_CONNS; i++)
		rq_close(held[i]);
	printf("ok   --max-conns %d: connection %d closed unanswered; served again once one closed\n", MAX_CONNS,
	       MAX_CONNS + 1);
}

/*
 * The target's accepted sockets live in this process: every socket descriptor
 * here whose local port is the target's and that is not the listener.
 */
static int accepted_priorities(int *prio, int max)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	BPT_CHECK(d, "/proc/self/fd: %s", strerror(errno));
	while ((e = readdir(d)) && n < max) {
		int fd = atoi(e->d_name), listening = 0, p = -1;
		struct sockaddr_in sa;
		socklen_t sl = sizeof(sa), il = sizeof(int);

		if (e->d_name[0] == '.' || fd == dirfd(d))
			continue;
		if (getsockname(fd, (struct sockaddr *)&sa, &sl) || sa.sin_family != AF_INET || ntohs(sa.sin_port) != port)
			continue;
		if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &il) || listening)
			continue;
		il = sizeof(int);
		BPT_CHECK(getsockopt(fd, SOL_SOCKET, SO_PRIORITY, &p, &il) == 0, "SO_PRIORITY: %s", strerror(errno));
		prio[n++] = p;
	}
	closedir(d);
	return n;
}

static void so_priority(void)
{
	struct rq *q;
	int prio[16], n, mine = 0, p = -1;
	socklen_t il = sizeof(int);

	target_idle();
	q = rq_open(false); /* its ICResp is in: the socket was set up before answering */
	n = accepted_priorities(prio, 16);
	BPT_CHECK(n == 1, "%d accepted sockets of the target in this process, want 1", n);
	BPT_CHECK(prio[0] == PRIORITY, "the target's accepted socket has SO_PRIORITY %d, want %d (--priority)",
		  prio[0], PRIORITY);
	BPT_CHECK(getsockopt(q->fd, SOL_SOCKET, SO_PRIORITY, &p, &il) == 0 && p == mine,
		  "the host's own socket has SO_PRIORITY %d: the check reads the wrong end", p);
	rq_close(q);
	printf("ok   --priority %d on the accepted socket before its ICResp\n", PRIORITY);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	target_up();
	c2h_success(false);
	c2h_success(true);
	lifecycle();
	opcodes();
	connect_refusals();
	pdu_errors();
	so_priority();
	max_conns();
	bp_nvmet_stop(t);
	printf("PASS\n");
	return bpt_exit_status();
}
