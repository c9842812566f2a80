/* SPDX-License-Identifier: MIT */
/*
 * The initiator's queue: one TCP connection on one loop (contract in
 * include/busypoll/nvme/host.h). It checks what a controller sends as strictly
 * as the target checks the host: a C2HData or R2T that names no outstanding
 * command, lands outside the command's buffer, arrives out of order, or an ICResp
 * that does not echo our digests, fails the queue; it never writes outside the
 * caller's buffer.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <busypoll/nvme/host.h>

#include "base/bytes.h"

#define HQ_TXB_SIZE (64u * 1024)
#define HQ_MAX_C2H_DATA (32u << 20)   /* largest C2HData we will buffer (kernel targets send a read in one) */
#define HQ_ADMIN_INCAPSULE 8192u      /* Linux's NVME_TCP_ADMIN_CCSZ: admin and fabrics commands */

enum hq_sub { HQ_TCP = 0, HQ_IC, HQ_CONNECT, HQ_LIVE };

struct hcmd {
	bp_nvmeh_done_fn done;
	void *arg;
	uint8_t *buf;
	uint32_t len;
	uint32_t rcvd;          /* C2HData bytes so far */
	uint32_t sent;          /* H2CData bytes so far */
	uint64_t start_ns;
	uint16_t cid;
	uint16_t status;        /* a data digest failure seen before the response */
	uint8_t gen;
	uint8_t opc;
	bool busy, to_ctrl;
	uint16_t next_free;
};

struct bp_nvmeh_queue {
	struct bp_loop *loop;
	struct bp_conn *conn;
	struct bp_nvmeh_opts o;
	uint16_t qid, cntlid_req, cntlid;
	uint32_t depth;
	enum bp_nvmeh_qstate state;
	enum hq_sub sub;
	int err;
	uint16_t connect_status;
	char errmsg[512];
	struct bp_nvme_tcp_rx_cfg rx;
	bool hdgst, ddgst;
	uint8_t cpda;
	uint32_t maxh2cdata;
	uint32_t incapsule;
	struct hcmd *cmds;
	uint16_t free_head;
	uint32_t inflight;
	uint8_t *txb;
	size_t txlen;
	int corked;
	uint8_t connect_data[BP_NVMF_CONNECT_DATA_LEN];
	struct bp_timer tmo_timer, ka_timer;
	bool ka_outstanding;
	int in_cb;              /* >0 inside our callbacks: a close waits until they unwind */
	bool free_requested;
	uint32_t finished_in_pass;  /* commands completed in the current receive pass */
	bp_nvmeh_batch_fn batch_fn;
	void *batch_arg;
};

static void hq_free(struct bp_nvmeh_queue *q);

void bp_nvmeh_opts_defaults(struct bp_nvmeh_opts *o)
{
	uint8_t r[16] = { 0 };

	memset(o, 0, sizeof(*o));
	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r)) {
		uint64_t t = bp_now_ns();

		memcpy(r, &t, sizeof(t));
	}
	r[6] = (uint8_t)((r[6] & 0x0f) | 0x40);
	r[8] = (uint8_t)((r[8] & 0x3f) | 0x80);
	memcpy(o->hostid, r, 16);
	snprintf(o->hostnqn, sizeof(o->hostnqn),
		 "nqn.2014-08.org.nvmexpress:uuid:%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11], r[12], r[13], r[14], r[15]);
	o->kato_ms = 5000;
	o->io_queue_size = 128;
	o->timeout_ms = 30000;
}

/* ---- sending ---- */

static void hq_flush(struct bp_nvmeh_queue *q)
{
	if (!q->txlen || !q->conn)
		return;
	bp_conn_send(q->conn, q->txb, q->txlen);
	q->txlen = 0;
}

static uint8_t *hq_reserve(struct bp_nvmeh_queue *q, size_t n)
{
	if (q->txlen + n > HQ_TXB_SIZE)
		hq_flush(q);
	return q->txb + q->txlen;
}

static void hq_data(struct bp_nvmeh_queue *q, const uint8_t *buf, size_t n)
{
	if (q->txlen + n <= HQ_TXB_SIZE || n <= 16384) {
		memcpy(hq_reserve(q, n), buf, n);
		q->txlen += n;
		return;
	}
	hq_flush(q);
	if (q->conn)
		bp_conn_send(q->conn, buf, n);
}

/* ---- failing ---- */

static void hq_fail(struct bp_nvmeh_queue *q, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void hq_fail(struct bp_nvmeh_queue *q, int err, const char *fmt, ...)
{
	va_list ap;

	if (q->state == BP_NVMEH_FAILED || q->state == BP_NVMEH_CLOSED)
		return;
	va_start(ap, fmt);
	vsnprintf(q->errmsg, sizeof(q->errmsg), fmt, ap);
	va_end(ap);
	q->state = BP_NVMEH_FAILED;
	q->err = err;
	if (bp_timer_armed(&q->tmo_timer))
		bp_timer_stop(q->loop, &q->tmo_timer);
	if (bp_timer_armed(&q->ka_timer))
		bp_timer_stop(q->loop, &q->ka_timer);
	if (q->conn) {
		bp_conn_close(q->conn);
		q->conn = NULL;
	}
	q->in_cb++;
	for (uint32_t i = 0; i < q->depth; i++) {
		struct hcmd *c = &q->cmds[i];

		if (c->busy) {
			c->busy = false;
			q->inflight--;
			if (c->done)
				c->done(c->arg, NULL, err);
		}
	}
	q->in_cb--;
}

/* Leave a callback: free the queue if someone closed it meanwhile. Returns false if gone. */
static bool hq_cb_exit(struct bp_nvmeh_queue *q)
{
	if (--q->in_cb == 0 && q->free_requested) {
		hq_free(q);
		return false;
	}
	return true;
}

/* ---- commands ---- */

static struct hcmd *cmd_of(struct bp_nvmeh_queue *q, uint16_t cid)
{
	uint16_t idx = cid & 0x0fff;

	if (idx >= q->depth || !q->cmds[idx].busy || q->cmds[idx].cid != cid)
		return NULL;
	return &q->cmds[idx];
}

static void cmd_finish(struct bp_nvmeh_queue *q, struct hcmd *c, const struct bp_nvme_cqe *cqe)
{
	bp_nvmeh_done_fn done = c->done;
	void *arg = c->arg;

	c->busy = false;
	c->next_free = q->free_head;
	q->free_head = (uint16_t)(c - q->cmds);
	q->inflight--;
	q->finished_in_pass++;
	if (done)
		done(arg, cqe, 0);
}

static void tmo_check(struct bp_loop *loop, void *arg);

static void tmo_arm(struct bp_nvmeh_queue *q)
{
	uint32_t every = q->o.timeout_ms / 4 ? q->o.timeout_ms / 4 : 1;

	if (q->o.timeout_ms && !bp_timer_armed(&q->tmo_timer))
		bp_timer_start(q->loop, &q->tmo_timer, (uint64_t)(every < 100 ? every : 100) * 1000, tmo_check, q);
}

static void tmo_check(struct bp_loop *loop, void *arg)
{
	struct bp_nvmeh_queue *q = arg;
	uint64_t now = bp_now_ns(), limit = (uint64_t)q->o.timeout_ms * 1000000ull;

	(void)loop;
	if (q->state == BP_NVMEH_FAILED || q->state == BP_NVMEH_CLOSED)
		return;
	for (uint32_t i = 0; i < q->depth; i++) {
		struct hcmd *c = &q->cmds[i];

		if (c->busy && now - c->start_ns > limit) {
			q->in_cb++;
			hq_fail(q, -ETIMEDOUT, "queue %u: command 0x%04x (opcode 0x%02x) got no answer in %u ms", q->qid,
				c->cid, c->opc, q->o.timeout_ms);
			hq_cb_exit(q);
			return;
		}
	}
	if (q->inflight || q->state == BP_NVMEH_CONNECTING)
		tmo_arm(q);
}

static int submit(struct bp_nvmeh_queue *q, const uint8_t sqe_in[64], void *buf, uint32_t len, bool to_ctrl,
		  bp_nvmeh_done_fn done, void *arg)
{
	uint8_t sqe[BP_NVME_SQE_LEN], *p;
	struct hcmd *c;
	bool inl;
	size_t hl;

	if (!q->conn)
		return -ENOTCONN;
	if (q->free_head == 0xffff)
		return -EBUSY;
	if (len && !buf)
		return -EINVAL;
	c = &q->cmds[q->free_head];
	q->free_head = c->next_free;
	q->inflight++;
	c->gen = (uint8_t)((c->gen + 1) & 0xf);
	c->cid = (uint16_t)((c - q->cmds) | (uint16_t)c->gen << 12);
	c->busy = true;
	c->done = done;
	c->arg = arg;
	c->buf = buf;
	c->len = len;
	c->rcvd = c->sent = 0;
	c->status = 0;
	c->to_ctrl = to_ctrl;
	c->opc = sqe_in[0];
	c->start_ns = bp_now_ns();

	memcpy(sqe, sqe_in, sizeof(sqe));
	bp_nvme_sqe_set_cid(sqe, c->cid);
	inl = to_ctrl && len && len <= q->incapsule;
	sqe[1] = (uint8_t)((sqe[1] & ~0xc0) | BP_NVME_SQE_FLAG_SGL);
	memset(sqe + 24, 0, 16);
	bp_nvme_sqe_set_dw(sqe, 8, len);
	sqe[39] = inl ? BP_NVME_SGL_DATA_BLOCK_OFFSET : BP_NVME_SGL_TRANSPORT_BLOCK;

	p = hq_reserve(q, BP_NVME_TCP_MAX_HDR);
	hl = bp_nvme_tcp_cmd_encode(p, sqe, inl ? len : 0, q->hdgst, q->ddgst, q->cpda);
	q->txlen += hl;
	if (inl) {
		hq_data(q, buf, len);
		if (q->ddgst) {
			p = hq_reserve(q, 4);
			bp_nvme_tcp_put_digest(p, buf, len);
			q->txlen += 4;
		}
		c->sent = len;
	}
	if (!q->corked)
		hq_flush(q);
	tmo_arm(q);
	return 0;
}

int bp_nvmeh_submit(struct bp_nvmeh_queue *q, const uint8_t sqe[64], void *buf, uint32_t len, bool to_ctrl,
		    bp_nvmeh_done_fn done, void *arg)
{
	if (q->state != BP_NVMEH_READY)
		return -ENOTCONN;
	return submit(q, sqe, buf, len, to_ctrl, done, arg);
}

void bp_nvmeh_cork(struct bp_nvmeh_queue *q)
{
	q->corked++;
}

void bp_nvmeh_uncork(struct bp_nvmeh_queue *q)
{
	if (q->corked && --q->corked == 0)
		hq_flush(q);
}

/* ---- keep alive ---- */

static void ka_done(void *arg, const struct bp_nvme_cqe *cqe, int err)
{
	struct bp_nvmeh_queue *q = arg;

	(void)cqe;
	if (!err)
		q->ka_outstanding = false;
}

static void ka_tick(struct bp_loop *loop, void *arg)
{
	struct bp_nvmeh_queue *q = arg;
	uint8_t sqe[64];

	if (q->state != BP_NVMEH_READY)
		return;
	if (!q->ka_outstanding) {
		bp_nvme_sqe_init(sqe, BP_NVME_ADM_KEEP_ALIVE, 0, 0, 0, false);
		if (!submit(q, sqe, NULL, 0, false, ka_done, q))
			q->ka_outstanding = true;
	}
	bp_timer_start(loop, &q->ka_timer, (uint64_t)q->o.kato_ms * 1000 / 2, ka_tick, q);
}

/* ---- receiving ---- */

/*
 * connect_refusal - why Connect was refused, in words: the status and, for
 * Invalid Parameters, which parameter the controller pointed at (the result's
 * IATTR/IPO: an offset in the Connect data or in the SQE).
 */
static void connect_refusal(struct bp_nvmeh_queue *q, uint16_t status, uint32_t result)
{
	char s[96];
	uint32_t ipo = result & 0xffff;
	bool in_data = result >> 16 & 1;
	const char *what = NULL;

	bp_nvme_status_str(status, s, sizeof(s));
	if ((status & 0x7ff) == BP_NVME_SC_CONNECT_INVALID_HOST) {
		snprintf(q->errmsg, sizeof(q->errmsg), "queue %u: Connect refused: host NQN '%.120s' is not allowed into '%.120s' (%s)",
			 q->qid, q->o.hostnqn, q->o.subnqn, s);
		return;
	}
	if ((status & 0x7ff) == BP_NVME_SC_CONNECT_INVALID_PARAM) {
		if (in_data && ipo >= BP_NVMF_CD_SUBNQN && ipo < BP_NVMF_CD_SUBNQN + BP_NVMF_NQN_LEN) {
			snprintf(q->errmsg, sizeof(q->errmsg),
				 "queue %u: Connect refused: the controller does not serve subsystem NQN '%.120s' (%s)", q->qid,
				 q->o.subnqn, s);
			return;
		}
		if (in_data && ipo >= BP_NVMF_CD_HOSTNQN && ipo < BP_NVMF_CD_HOSTNQN + BP_NVMF_NQN_LEN)
			what = "the host NQN";
		else if (in_data && ipo >= BP_NVMF_CD_CNTLID && ipo < BP_NVMF_CD_CNTLID + 2)
			what = "the controller ID (no such controller)";
		else if (in_data && ipo < BP_NVMF_CD_CNTLID)
			what = "the host identifier";
		else if (!in_data && ipo == 42)
			what = "the queue ID (more I/O queues than the controller granted)";
		else if (!in_data && ipo == 44)
			what = "the queue size (deeper than the controller allows)";
		else if (!in_data && ipo == 40)
			what = "the record format";
	}
	if (what)
		snprintf(q->errmsg, sizeof(q->errmsg), "queue %u: Connect refused: %s (%s)", q->qid, what, s);
	else
		snprintf(q->errmsg, sizeof(q->errmsg), "queue %u: Connect refused: %s (result 0x%08x)", q->qid, s, result);
}

static void connect_done(void *arg, const struct bp_nvme_cqe *cqe, int err)
{
	struct bp_nvmeh_queue *q = arg;

	if (err)
		return;
	if (cqe->status) {
		char msg[sizeof(q->errmsg)];

		q->connect_status = cqe->status;
		connect_refusal(q, cqe->status, (uint32_t)cqe->result);
		memcpy(msg, q->errmsg, sizeof(msg));
		hq_fail(q, -ECONNREFUSED, "%s", msg);
		return;
	}
	q->cntlid = (uint16_t)cqe->result;
	q->state = BP_NVMEH_READY;
	q->sub = HQ_LIVE;
	q->incapsule = q->qid ? 0 : HQ_ADMIN_INCAPSULE;
	if (q->qid == 0 && q->o.kato_ms)
		bp_timer_start(q->loop, &q->ka_timer, (uint64_t)q->o.kato_ms * 1000 / 2, ka_tick, q);
}

static void send_connect(struct bp_nvmeh_queue *q)
{
	uint8_t sqe[64];

	bp_nvme_sqe_init(sqe, BP_NVME_FABRICS, 0, 0, BP_NVMF_CONNECT_DATA_LEN, true);
	sqe[4] = BP_NVMF_CONNECT;
	bp_put_le16(sqe + 40, 0);                              /* RECFMT */
	bp_put_le16(sqe + 42, q->qid);
	bp_put_le16(sqe + 44, (uint16_t)(q->depth - 1));       /* SQSIZE, 0's based */
	sqe[46] = q->o.disable_sqflow ? BP_NVMF_CATTR_DISABLE_SQFLOW : 0;
	bp_put_le32(sqe + 48, q->qid ? 0 : q->o.kato_ms);
	memset(q->connect_data, 0, sizeof(q->connect_data));
	memcpy(q->connect_data + BP_NVMF_CD_HOSTID, q->o.hostid, 16);
	bp_put_le16(q->connect_data + BP_NVMF_CD_CNTLID, q->cntlid_req);
	snprintf((char *)q->connect_data + BP_NVMF_CD_SUBNQN, 256, "%s", q->o.subnqn);
	snprintf((char *)q->connect_data + BP_NVMF_CD_HOSTNQN, 256, "%s", q->o.hostnqn);
	q->incapsule = BP_NVMF_CONNECT_DATA_LEN; /* Connect's data always rides in the capsule */
	q->sub = HQ_CONNECT;
	if (submit(q, sqe, q->connect_data, sizeof(q->connect_data), true, connect_done, q))
		hq_fail(q, -ENOMEM, "queue %u: cannot send Connect", q->qid);
}

static void handle_icresp(struct bp_nvmeh_queue *q, const struct bp_nvme_tcp_pdu *pdu)
{
	struct bp_nvme_tcp_ic ic;
	uint8_t want = (uint8_t)((q->o.hdgst ? BP_NVME_TCP_DIGEST_HDR : 0) | (q->o.ddgst ? BP_NVME_TCP_DIGEST_DATA : 0));

	bp_nvme_tcp_ic_decode(pdu->hdr, &ic);
	if (ic.pfv != 0 || ic.digest != want || ic.maxdata % 4 || ic.maxdata < BP_NVME_TCP_MIN_MAXH2CDATA ||
	    ic.pda > BP_NVME_TCP_MAX_PDA) {
		hq_fail(q, -EPROTO, "queue %u: ICResp not acceptable (pfv %u, digest %u for %u asked, maxh2cdata %u)",
			q->qid, ic.pfv, ic.digest, want, ic.maxdata);
		return;
	}
	q->hdgst = q->o.hdgst;
	q->ddgst = q->o.ddgst;
	q->cpda = ic.pda;
	q->maxh2cdata = ic.maxdata;
	q->rx.connected = true;
	q->rx.hdgst = q->hdgst;
	q->rx.ddgst = q->ddgst;
	send_connect(q);
}

static void handle_rsp(struct bp_nvmeh_queue *q, const struct bp_nvme_tcp_pdu *pdu)
{
	struct bp_nvme_cqe cqe;
	struct hcmd *c;

	bp_nvme_cqe_decode(pdu->hdr + 8, &cqe);
	c = cmd_of(q, cqe.cid);
	if (!c) {
		hq_fail(q, -EPROTO, "queue %u: CapsuleResp for command 0x%04x, which is not outstanding", q->qid, cqe.cid);
		return;
	}
	if (!cqe.status && c->status)
		cqe.status = c->status;
	else if (!cqe.status && !c->to_ctrl && c->rcvd != c->len)
		cqe.status = BP_NVME_SC_DATA_XFER_ERROR; /* success, but the data did not all come */
	cmd_finish(q, c, &cqe);
}

static void handle_c2h(struct bp_nvmeh_queue *q, const struct bp_nvme_tcp_pdu *pdu)
{
	struct bp_nvme_tcp_data d;
	struct hcmd *c;
	uint8_t flags = pdu->ch.flags;

	bp_nvme_tcp_data_decode(pdu->hdr, &d);
	c = cmd_of(q, d.cccid);
	if (!c || c->to_ctrl) {
		hq_fail(q, -EPROTO, "queue %u: C2HData for command 0x%04x, which is not an outstanding read", q->qid,
			d.cccid);
		return;
	}
	if (d.offset != c->rcvd || (uint64_t)d.offset + d.length > c->len) {
		hq_fail(q, -EPROTO, "queue %u: C2HData offset %u length %u for a %u-byte buffer (%u received)", q->qid,
			d.offset, d.length, c->len, c->rcvd);
		return;
	}
	if ((flags & BP_NVME_TCP_F_SUCCESS) && !(flags & BP_NVME_TCP_F_LAST)) {
		hq_fail(q, -EPROTO, "queue %u: C2HData with SUCCESS but not LAST", q->qid);
		return;
	}
	memcpy(c->buf + d.offset, pdu->data, d.length);
	c->rcvd += d.length;
	if (pdu->ddgst_bad)
		c->status = BP_NVME_SC_TRANSIENT_TR_ERR;
	if (flags & BP_NVME_TCP_F_SUCCESS) {
		struct bp_nvme_cqe cqe = { .cid = c->cid, .sqid = q->qid, .sqhd = 0xffff };

		cqe.status = c->status ? c->status : (c->rcvd == c->len ? 0 : BP_NVME_SC_DATA_XFER_ERROR);
		cmd_finish(q, c, &cqe);
	}
}

static void handle_r2t(struct bp_nvmeh_queue *q, const struct bp_nvme_tcp_pdu *pdu)
{
	struct bp_nvme_tcp_data r2t;
	struct hcmd *c;

	bp_nvme_tcp_data_decode(pdu->hdr, &r2t);
	c = cmd_of(q, r2t.cccid);
	if (!c || !c->to_ctrl) {
		hq_fail(q, -EPROTO, "queue %u: R2T for command 0x%04x, which is not an outstanding write", q->qid,
			r2t.cccid);
		return;
	}
	if (!r2t.length || r2t.offset != c->sent || (uint64_t)r2t.offset + r2t.length > c->len) {
		hq_fail(q, -EPROTO, "queue %u: R2T offset %u length %u for %u bytes (%u sent)", q->qid, r2t.offset,
			r2t.length, c->len, c->sent);
		return;
	}
	/* Answer with H2CData PDUs of at most maxh2cdata each; LAST on the final one. */
	for (uint32_t off = r2t.offset, end = r2t.offset + r2t.length; off < end;) {
		uint32_t n = end - off < q->maxh2cdata ? end - off : q->maxh2cdata;
		struct bp_nvme_tcp_data d = { .cccid = c->cid, .ttag = r2t.ttag, .offset = off, .length = n };
		uint8_t *p = hq_reserve(q, BP_NVME_TCP_MAX_HDR);

		q->txlen += bp_nvme_tcp_data_encode(p, BP_NVME_TCP_H2C_DATA, &d,
						    off + n == end ? BP_NVME_TCP_F_LAST : 0, q->hdgst, q->ddgst, q->cpda);
		hq_data(q, c->buf + off, n);
		if (q->ddgst) {
			p = hq_reserve(q, 4);
			bp_nvme_tcp_put_digest(p, c->buf + off, n);
			q->txlen += 4;
		}
		off += n;
	}
	c->sent = r2t.offset + r2t.length;
	hq_flush(q);
}

static size_t hq_recv(struct bp_conn *conn, const uint8_t *data, size_t len)
{
	struct bp_nvmeh_queue *q = bp_conn_data(conn);
	size_t off = 0;

	q->in_cb++;
	q->finished_in_pass = 0;
	while (off < len && q->conn) {
		struct bp_nvme_tcp_pdu pdu;
		struct bp_nvme_tcp_err err;
		int n = bp_nvme_tcp_frame(data + off, len - off, &q->rx, &pdu, &err);

		if (n == 0)
			break;
		if (n < 0) {
			uint8_t term[BP_NVME_TCP_TERM_MAX_PLEN];
			size_t tl = bp_nvme_tcp_term_encode(term, BP_NVME_TCP_H2C_TERM, err.fes, err.fei, data + off,
							    len - off < 24 ? len - off : 24);

			hq_flush(q);
			bp_conn_send(q->conn, term, tl);
			hq_fail(q, -EPROTO, "queue %u: %s", q->qid, err.msg);
			break;
		}
		off += (size_t)n;
		switch (pdu.ch.type) {
		case BP_NVME_TCP_ICRESP:
			handle_icresp(q, &pdu);
			break;
		case BP_NVME_TCP_C2H_TERM: {
			struct bp_nvme_tcp_term t;

			bp_nvme_tcp_term_decode(&pdu, &t);
			hq_fail(q, -ECONNABORTED, "queue %u: the controller sent C2HTermReq: %s (fei %u)", q->qid,
				bp_nvme_tcp_fes_name(t.fes), t.fei);
			break;
		}
		case BP_NVME_TCP_RSP:
			handle_rsp(q, &pdu);
			break;
		case BP_NVME_TCP_C2H_DATA:
			handle_c2h(q, &pdu);
			break;
		case BP_NVME_TCP_R2T:
			handle_r2t(q, &pdu);
			break;
		default:
			break;
		}
	}
	if (q->finished_in_pass && q->batch_fn && q->state == BP_NVMEH_READY)
		q->batch_fn(q->batch_arg);
	if (q->conn && !q->corked)
		hq_flush(q);
	if (!hq_cb_exit(q) || !q->conn)
		return len;
	return off;
}

static void hq_connected(struct bp_conn *conn)
{
	struct bp_nvmeh_queue *q = bp_conn_data(conn);
	struct bp_nvme_tcp_ic ic = { .pfv = 0, .pda = q->o.hpda, .maxdata = 0 };
	uint8_t buf[BP_NVME_TCP_IC_LEN];

	ic.digest = (uint8_t)((q->o.hdgst ? BP_NVME_TCP_DIGEST_HDR : 0) | (q->o.ddgst ? BP_NVME_TCP_DIGEST_DATA : 0));
	bp_nvme_tcp_ic_encode(buf, BP_NVME_TCP_ICREQ, &ic);
	q->sub = HQ_IC;
	bp_conn_send(conn, buf, sizeof(buf));
}

static void hq_closed(struct bp_conn *conn, int err, const char *syscall)
{
	struct bp_nvmeh_queue *q = bp_conn_data(conn);

	q->conn = NULL; /* the engine frees it after this returns */
	q->in_cb++;
	if (err)
		hq_fail(q, err, "queue %u: %s: %s", q->qid, syscall, strerror(-err));
	else
		hq_fail(q, -ECONNRESET, "queue %u: the controller closed the connection", q->qid);
	hq_cb_exit(q);
}

static const struct bp_conn_ops hq_ops = { .on_recv = hq_recv, .on_connect = hq_connected, .on_close = hq_closed };

/* ---- life ---- */

int bp_nvmeh_queue_open(struct bp_loop *loop, const struct sockaddr *addr, socklen_t addrlen,
			const struct bp_nvmeh_opts *o, uint16_t qid, uint16_t cntlid, uint32_t depth,
			struct bp_nvmeh_queue **qp)
{
	struct bp_nvmeh_queue *q;
	int ret;

	if (depth < 2 || depth > 4096)
		return bp_set_last_error(-EINVAL, "queue depth %u: 2..4096", depth);
	q = calloc(1, sizeof(*q));
	if (q) {
		q->cmds = calloc(depth, sizeof(*q->cmds));
		q->txb = malloc(HQ_TXB_SIZE);
	}
	if (!q || !q->cmds || !q->txb) {
		if (q) {
			free(q->cmds);
			free(q->txb);
		}
		free(q);
		return bp_set_last_error(-ENOMEM, "out of memory for an NVMe/TCP queue");
	}
	q->loop = loop;
	q->o = *o;
	q->qid = qid;
	q->cntlid_req = cntlid;
	q->depth = depth;
	for (uint32_t i = 0; i < depth; i++)
		q->cmds[i].next_free = (uint16_t)(i + 1 < depth ? i + 1 : 0xffff);
	q->free_head = 0;
	q->rx.is_target = false;
	q->rx.pda = o->hpda;
	q->rx.max_data = HQ_MAX_C2H_DATA;
	q->state = BP_NVMEH_CONNECTING;
	ret = bp_conn_connect(loop, addr, addrlen, SOCK_STREAM, &hq_ops, q, &q->conn);
	if (ret) {
		free(q->cmds);
		free(q->txb);
		free(q);
		return ret;
	}
	tmo_arm(q);
	*qp = q;
	return 0;
}

enum bp_nvmeh_qstate bp_nvmeh_queue_state(const struct bp_nvmeh_queue *q) { return q->state; }
uint16_t bp_nvmeh_queue_cntlid(const struct bp_nvmeh_queue *q) { return q->cntlid; }
void bp_nvmeh_queue_set_incapsule(struct bp_nvmeh_queue *q, uint32_t bytes) { q->incapsule = bytes; }
uint32_t bp_nvmeh_queue_maxh2cdata(const struct bp_nvmeh_queue *q) { return q->maxh2cdata; }
uint32_t bp_nvmeh_queue_inflight(const struct bp_nvmeh_queue *q) { return q->inflight; }
uint32_t bp_nvmeh_queue_depth(const struct bp_nvmeh_queue *q) { return q->depth; }
struct bp_loop *bp_nvmeh_queue_loop(const struct bp_nvmeh_queue *q) { return q->loop; }
const char *bp_nvmeh_queue_error(const struct bp_nvmeh_queue *q) { return q->errmsg; }
int bp_nvmeh_queue_fd(const struct bp_nvmeh_queue *q) { return q->conn ? bp_conn_fd(q->conn) : -1; }

void bp_nvmeh_queue_set_batch_fn(struct bp_nvmeh_queue *q, bp_nvmeh_batch_fn fn, void *arg)
{
	q->batch_fn = fn;
	q->batch_arg = arg;
}

static bool ready_or_failed(const struct bp_nvmeh_queue *q)
{
	return q->state != BP_NVMEH_CONNECTING;
}

int bp_nvmeh_queue_wait_ready(struct bp_nvmeh_queue *q, uint32_t timeout_ms)
{
	uint64_t end = bp_now_ns() + (uint64_t)timeout_ms * 1000000ull;

	while (!ready_or_failed(q)) {
		uint64_t now = bp_now_ns();
		int ret;

		if (now >= end) {
			hq_fail(q, -ETIMEDOUT, "queue %u: not connected after %u ms", q->qid, timeout_ms);
			break;
		}
		ret = bp_loop_run_once(q->loop, (int64_t)((end - now) / 1000 < 100000 ? (end - now) / 1000 : 100000));
		if (ret < 0)
			return ret;
	}
	if (q->state == BP_NVMEH_READY)
		return 0;
	bp_set_last_error(q->err ? q->err : -EIO, "%s", q->errmsg);
	if (q->connect_status)
		return q->connect_status;
	return q->err ? q->err : -EIO;
}

static void hq_free(struct bp_nvmeh_queue *q)
{
	if (bp_timer_armed(&q->tmo_timer))
		bp_timer_stop(q->loop, &q->tmo_timer);
	if (bp_timer_armed(&q->ka_timer))
		bp_timer_stop(q->loop, &q->ka_timer);
	free(q->cmds);
	free(q->txb);
	free(q);
}

void bp_nvmeh_queue_close(struct bp_nvmeh_queue *q)
{
	if (!q)
		return;
	q->in_cb++;
	if (q->state != BP_NVMEH_FAILED && q->state != BP_NVMEH_CLOSED) {
		hq_flush(q);
		hq_fail(q, -ECANCELED, "queue %u: closed", q->qid);
		q->state = BP_NVMEH_CLOSED;
	}
	q->free_requested = true;
	hq_cb_exit(q);
}

void bp_nvmeh_sqe_rw(uint8_t sqe[64], bool write, uint32_t nsid, uint64_t slba, uint32_t nlb)
{
	bp_nvme_sqe_init(sqe, write ? BP_NVME_CMD_WRITE : BP_NVME_CMD_READ, 0, nsid, 0, false);
	bp_nvme_sqe_set_dw(sqe, 10, (uint32_t)slba);
	bp_nvme_sqe_set_dw(sqe, 11, (uint32_t)(slba >> 32));
	bp_nvme_sqe_set_dw(sqe, 12, (nlb - 1) & 0xffff);
}

void bp_nvmeh_sqe_flush(uint8_t sqe[64], uint32_t nsid)
{
	bp_nvme_sqe_init(sqe, BP_NVME_CMD_FLUSH, 0, nsid, 0, false);
}

void bp_nvmeh_sqe_fua(uint8_t sqe[64])
{
	bp_nvme_sqe_set_dw(sqe, 12, bp_nvme_sqe_dw(sqe, 12) | BP_NVME_RW_FUA);
}

void bp_nvmeh_sqe_write_zeroes(uint8_t sqe[64], uint32_t nsid, uint64_t slba, uint32_t nlb, bool deac)
{
	bp_nvme_sqe_init(sqe, BP_NVME_CMD_WRITE_ZEROES, 0, nsid, 0, false);
	bp_nvme_sqe_set_dw(sqe, 10, (uint32_t)slba);
	bp_nvme_sqe_set_dw(sqe, 11, (uint32_t)(slba >> 32));
	bp_nvme_sqe_set_dw(sqe, 12, ((nlb - 1) & 0xffff) | (deac ? BP_NVME_WZ_DEAC : 0));
}

void bp_nvmeh_sqe_dsm(uint8_t sqe[64], uint32_t nsid, uint32_t nranges)
{
	bp_nvme_sqe_init(sqe, BP_NVME_CMD_DSM, 0, nsid, 0, false);
	bp_nvme_sqe_set_dw(sqe, 10, (nranges - 1) & 0xff);
	bp_nvme_sqe_set_dw(sqe, 11, BP_NVME_DSM_AD);
}

void bp_nvmeh_dsm_range(uint8_t *r, uint64_t slba, uint32_t nlb)
{
	memset(r, 0, BP_NVME_DSM_RANGE_LEN);
	bp_put_le32(r + 4, nlb);
	bp_put_le64(r + 8, slba);
}
