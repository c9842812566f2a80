/* SPDX-License-Identifier: MIT */
/*
 * One NVMe/TCP queue = one TCP connection, served by one loop.
 *
 * Receive pass: the engine hands us every unconsumed byte (on_recv); we frame
 * whole PDUs (bp_nvme_tcp_frame checks lengths before we wait for them) and act
 * on each at once, so a command's data is used straight from the receive buffer
 * (in-capsule writes land in the namespace without a copy of ours). Every
 * NVMET_RECV_BUDGET PDUs, a send pass, so responses go out while the rest of a
 * burst is still being parsed (nvmet's recv/send budgets, same numbers).
 *
 * Send pass: small PDUs (responses, R2Ts, small reads) collect in a transmit batch
 * and leave in one send; reads parked because the socket was backed up restart.
 *
 * Storage completions (io.c) queue their responses and put the queue on its
 * thread's dirty list; once the batch of completions is over, each dirty queue
 * gets a send pass. A queue closed with storage I/O in flight stays allocated (a
 * zombie, on the thread's zombie list only) until its last I/O is back: the kernel
 * is still writing into its buffers.
 *
 * Poll mode (--poll-period-us N), the heart of nvmet's idle_poll_period: once a
 * pass did work, the queue's work re-arms itself on its loop every iteration (a
 * zero timer plus a non-blocking wait) instead of going back to sleep; operations
 * are counted over a whole period of N us measured on CLOCK_MONOTONIC, and only a
 * period with none ends the polling (an "idle exit") and returns the queue to the
 * engine's normal wait. Other queues on the same loop get their turn every
 * iteration, so one busy queue never starves them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "nvme/target/internal.h"
#include "base/bytes.h"

static void queue_destroy(struct nvmet_queue *q);
static void queue_free(struct nvmet_queue *q);

/* ---- transmit batch ---- */

void nvmet_tx_flush(struct nvmet_queue *q)
{
	if (!q->txlen || q->state == Q_CLOSING)
		return;
	bp_conn_send(q->conn, q->txb, q->txlen); /* a failure closes the conn: on_close follows */
	q->txlen = 0;
}

uint8_t *nvmet_tx_reserve(struct nvmet_queue *q, size_t n)
{
	if (q->txlen + n > NVMET_TXB_SIZE)
		nvmet_tx_flush(q);
	return q->txb + q->txlen;
}

void nvmet_tx_commit(struct nvmet_queue *q, size_t n)
{
	q->txlen += n;
}

/* Data bytes of a C2HData: into the batch when they fit, else sent as they are. */
void nvmet_tx_data(struct nvmet_queue *q, const uint8_t *buf, size_t n)
{
	if (q->txlen + n <= NVMET_TXB_SIZE || n <= 16384) {
		memcpy(nvmet_tx_reserve(q, n), buf, n);
		nvmet_tx_commit(q, n);
		return;
	}
	nvmet_tx_flush(q);
	if (q->state != Q_CLOSING)
		bp_conn_send(q->conn, buf, n);
}

static const uint8_t zero_page[4096];

void nvmet_send_c2h(struct nvmet_queue *q, struct nvmet_cmd *cmd, const uint8_t *buf, size_t buf_len,
		    uint32_t data_len)
{
	struct bp_nvme_tcp_data d = { .cccid = cmd->cid, .offset = 0, .length = data_len };
	bool success = q->sqflow_off;
	uint8_t flags = BP_NVME_TCP_F_LAST | (success ? BP_NVME_TCP_F_SUCCESS : 0);
	uint8_t *p;
	size_t hl;
	uint32_t crc = 0;

	/* Nothing to transfer (an SGL of length 0): a C2HData must carry data, so the
	 * CapsuleResp alone completes the command. */
	if (!data_len) {
		nvmet_complete(q, cmd, 0, 0);
		return;
	}
	p = nvmet_tx_reserve(q, BP_NVME_TCP_MAX_HDR);
	hl = bp_nvme_tcp_data_encode(p, BP_NVME_TCP_C2H_DATA, &d, flags, q->hdgst, q->ddgst, q->hpda);
	nvmet_tx_commit(q, hl);
	if (buf_len > data_len)
		buf_len = data_len;
	if (buf_len) {
		nvmet_tx_data(q, buf, buf_len);
		if (q->ddgst)
			crc = bp_crc32c(crc, buf, buf_len);
	}
	for (size_t left = data_len - buf_len; left;) {
		size_t n = left < sizeof(zero_page) ? left : sizeof(zero_page);

		nvmet_tx_data(q, zero_page, n);
		if (q->ddgst)
			crc = bp_crc32c(crc, zero_page, n);
		left -= n;
	}
	if (q->ddgst) {
		p = nvmet_tx_reserve(q, 4);
		bp_put_le32(p, crc);
		nvmet_tx_commit(q, 4);
	}
	q->st.bytes_out += data_len;
	if (success) {
		/* SUCCESS with LAST: the host completes the command on the data; no CapsuleResp. */
		q->pass_ops++;
		nvmet_cmd_free(q, cmd);
	} else {
		nvmet_complete(q, cmd, 0, 0);
	}
}

/* ---- commands ---- */

uint8_t *nvmet_cmd_buf(struct nvmet_cmd *cmd, uint32_t len)
{
	void *p = NULL;
	uint32_t cap = (len + NVMET_BUF_ALIGN - 1) & ~(NVMET_BUF_ALIGN - 1);

	if (cmd->buf && cmd->buf_cap >= len)
		return cmd->buf;
	free(cmd->buf);
	cmd->buf = NULL;
	cmd->buf_cap = 0;
	if (posix_memalign(&p, NVMET_BUF_ALIGN, cap ? cap : NVMET_BUF_ALIGN))
		return NULL;
	cmd->buf = p;
	cmd->buf_cap = cap;
	return cmd->buf;
}

void nvmet_cmd_buf_release(struct nvmet_cmd *cmd)
{
	if (cmd->buf_cap <= NVMET_BUF_KEEP)
		return;
	free(cmd->buf);
	cmd->buf = NULL;
	cmd->buf_cap = 0;
}

void nvmet_cmd_free(struct nvmet_queue *q, struct nvmet_cmd *cmd)
{
	if (!q->cmds || cmd < q->cmds || cmd >= q->cmds + q->ncmds)
		return; /* the pre-Connect scratch command */
	nvmet_cmd_buf_release(cmd);
	cmd->state = CMD_FREE;
	cmd->next_free = q->free_head;
	q->free_head = cmd->idx;
	q->inflight--;
}

static struct nvmet_cmd *cmd_alloc(struct nvmet_queue *q)
{
	struct nvmet_cmd *cmd;

	if (q->free_head == 0xffff)
		return NULL;
	cmd = &q->cmds[q->free_head];
	q->free_head = cmd->next_free;
	q->inflight++;
	cmd->status = 0;
	cmd->done = 0;
	cmd->len = 0;
	cmd->ns = NULL;
	return cmd;
}

void nvmet_count_error(struct nvmet_queue *q, uint16_t status)
{
	(void)status;
	q->st.errors++;
}

void nvmet_complete(struct nvmet_queue *q, struct nvmet_cmd *cmd, uint16_t status, uint64_t result)
{
	struct bp_nvme_cqe cqe = {
		.result = result,
		.sqhd = q->sqflow_off ? 0xffff : q->sqhd,
		.sqid = q->qid,
		.cid = cmd->cid,
		.status = status,
	};
	uint8_t *p = nvmet_tx_reserve(q, BP_NVME_TCP_RSP_HLEN + 4);

	nvmet_tx_commit(q, bp_nvme_tcp_rsp_encode(p, &cqe, q->hdgst));
	if (status)
		nvmet_count_error(q, status);
	q->pass_ops++;
	nvmet_cmd_free(q, cmd);
}

/* ---- closing ---- */

void nvmet_queue_fatal(struct nvmet_queue *q, uint16_t fes, uint32_t fei, const uint8_t *hdr, size_t hdr_len,
		       const char *why)
{
	uint8_t term[BP_NVME_TCP_TERM_MAX_PLEN];
	size_t n;

	if (q->state == Q_CLOSING)
		return;
	nvmet_log(q->t, BP_NVMET_LOG_WARN, "%s (cntlid %d qid %u): %s; C2HTermReq (%s) and closing the queue",
		  q->peer, q->ctrl ? q->ctrl->cntlid : -1, q->qid, why, bp_nvme_tcp_fes_name(fes));
	q->st.errors++;
	nvmet_tx_flush(q);
	/* Copy at most the offending PDU's header, never bytes past what arrived. */
	if (hdr_len > BP_NVME_TCP_TERM_MAX_PLEN - BP_NVME_TCP_TERM_HLEN)
		hdr_len = BP_NVME_TCP_TERM_MAX_PLEN - BP_NVME_TCP_TERM_HLEN;
	n = bp_nvme_tcp_term_encode(term, BP_NVME_TCP_C2H_TERM, fes, fei, hdr, hdr_len);
	bp_conn_send(q->conn, term, n);
	q->state = Q_CLOSING;
	bp_conn_close_after_send(q->conn);
}

void nvmet_queue_kill(struct nvmet_queue *q, const char *why)
{
	if (q->killed)
		return;
	nvmet_log(q->t, BP_NVMET_LOG_INFO, "%s (cntlid %d qid %u): closing: %s", q->peer,
		  q->ctrl ? q->ctrl->cntlid : -1, q->qid, why);
	q->killed = true;
	q->state = Q_CLOSING;
	if (q->in_recv)
		return; /* the work under way finishes the job when it unwinds */
	bp_conn_close(q->conn);
	queue_destroy(q);
}

void nvmet_queue_work_begin(struct nvmet_queue *q)
{
	q->in_recv = true;
}

bool nvmet_queue_work_end(struct nvmet_queue *q)
{
	q->in_recv = false;
	if (!q->killed)
		return true;
	if (q->conn)
		bp_conn_close(q->conn); /* nothing if the conn already failed */
	queue_destroy(q);
	return false;
}

/* ---- PDUs ---- */

static void handle_icreq(struct nvmet_queue *q, const struct bp_nvme_tcp_pdu *pdu)
{
	struct bp_nvme_tcp_ic ic, resp = { 0 };
	uint8_t *p;

	bp_nvme_tcp_ic_decode(pdu->hdr, &ic);
	if (ic.pfv != 0) {
		nvmet_queue_fatal(q, BP_NVME_TCP_FES_UNSUPPORTED_PARAM, 8, pdu->hdr, pdu->ch.hlen,
				  "ICReq with an unknown PDU format version");
		return;
	}
	if (ic.pda > BP_NVME_TCP_MAX_PDA) {
		nvmet_queue_fatal(q, BP_NVME_TCP_FES_INVALID_HEADER, 10, pdu->hdr, pdu->ch.hlen,
				  "ICReq with HPDA above 31");
		return;
	}
	q->hdgst = ic.digest & BP_NVME_TCP_DIGEST_HDR;
	q->ddgst = ic.digest & BP_NVME_TCP_DIGEST_DATA;
	q->hpda = ic.pda;
	/* The Linux host insists on: pfv 0, cpda 0, digests echoed exactly, maxh2cdata %4 and >= 4096. */
	resp.pfv = 0;
	resp.pda = 0;
	resp.digest = ic.digest & (BP_NVME_TCP_DIGEST_HDR | BP_NVME_TCP_DIGEST_DATA);
	resp.maxdata = q->t->cfg.maxh2cdata;
	p = nvmet_tx_reserve(q, BP_NVME_TCP_IC_LEN);
	nvmet_tx_commit(q, bp_nvme_tcp_ic_encode(p, BP_NVME_TCP_ICRESP, &resp));
	q->rx.connected = true;
	q->rx.hdgst = q->hdgst;
	q->rx.ddgst = q->ddgst;
	q->state = Q_WAIT_CONNECT;
	q->pass_ops++;
}

static void handle_term(struct nvmet_queue *q, const struct bp_nvme_tcp_pdu *pdu)
{
	struct bp_nvme_tcp_term t;

	bp_nvme_tcp_term_decode(pdu, &t);
	nvmet_log(q->t, BP_NVMET_LOG_WARN, "%s (cntlid %d qid %u): host sent H2CTermReq: %s (fei %u); closing",
		  q->peer, q->ctrl ? q->ctrl->cntlid : -1, q->qid, bp_nvme_tcp_fes_name(t.fes), t.fei);
	q->st.errors++;
	q->state = Q_CLOSING;
	bp_conn_close_after_send(q->conn);
}

/* Allocate the command slots once the depth is known (at Connect): never per command. */
int nvmet_queue_set_depth(struct nvmet_queue *q, uint32_t depth)
{
	q->cmds = calloc(depth, sizeof(*q->cmds));
	if (!q->cmds)
		return -ENOMEM;
	q->ncmds = depth;
	q->depth = depth;
	for (uint32_t i = 0; i < depth; i++) {
		q->cmds[i].q = q;
		q->cmds[i].idx = (uint16_t)i;
		q->cmds[i].next_free = (uint16_t)(i + 1 < depth ? i + 1 : 0xffff);
	}
	q->free_head = 0;
	q->sqhd = 0;
	return 0;
}

static void handle_cmd(struct nvmet_queue *q, const struct bp_nvme_tcp_pdu *pdu)
{
	const uint8_t *sqe = pdu->hdr + 8;
	struct nvmet_cmd *cmd;

	q->st.commands++;
	if (!q->cmds) {
		cmd = &q->scratch;       /* before Connect: only Connect itself is served */
	} else {
		cmd = cmd_alloc(q);
		if (!cmd) {
			char why[96];

			snprintf(why, sizeof(why), "more than %u commands outstanding (sqsize %u)", q->ncmds,
				 q->ncmds - 1);
			nvmet_queue_fatal(q, BP_NVME_TCP_FES_PDU_SEQUENCE, 0, pdu->hdr, pdu->ch.hlen, why);
			return;
		}
		q->sqhd = (uint16_t)((q->sqhd + 1) % q->depth);
	}
	memcpy(cmd->sqe, sqe, BP_NVME_SQE_LEN);
	cmd->cid = bp_nvme_sqe_cid(sqe);
	cmd->state = CMD_FREE;
	if (pdu->ddgst_bad) {
		/* Not fatal (the header was good): the command fails, the queue lives. */
		if (!(q->logged & LOGGED_DDGST)) {
			q->logged |= LOGGED_DDGST;
			nvmet_log(q->t, BP_NVMET_LOG_WARN, "%s (qid %u): data digest mismatch in a CapsuleCmd "
				  "(cid 0x%04x); failing it with Transient Transport Error (logged once per queue)",
				  q->peer, q->qid, cmd->cid);
		}
		nvmet_complete(q, cmd, BP_NVME_SC_TRANSIENT_TR_ERR, 0);
		return;
	}
	nvmet_exec(q, cmd, pdu->data, pdu->data_len);
}

static void handle_pdu(struct nvmet_queue *q, const struct bp_nvme_tcp_pdu *pdu)
{
	switch (pdu->ch.type) {
	case BP_NVME_TCP_ICREQ:
		handle_icreq(q, pdu);
		break;
	case BP_NVME_TCP_H2C_TERM:
		handle_term(q, pdu);
		break;
	case BP_NVME_TCP_CMD:
		handle_cmd(q, pdu);
		break;
	case BP_NVME_TCP_H2C_DATA:
		if (q->state != Q_LIVE) {
			nvmet_queue_fatal(q, BP_NVME_TCP_FES_PDU_SEQUENCE, 0, pdu->hdr, pdu->ch.hlen,
					  "H2CData before the queue is connected");
			break;
		}
		q->pass_ops++;
		nvmet_h2c_data(q, pdu);
		break;
	default:
		break; /* framing lets no other type through */
	}
}

/* ---- passes and poll mode ---- */

static void send_pass(struct nvmet_queue *q)
{
	for (int i = 0; i < NVMET_SEND_BUDGET && q->def_head != 0xffff && q->state != Q_CLOSING; i++) {
		struct nvmet_cmd *cmd;

		if (bp_conn_pending(q->conn) + q->txlen > NVMET_TX_HIGH / 2)
			break;
		cmd = &q->cmds[q->def_head];
		q->def_head = cmd->next_deferred;
		if (q->def_head == 0xffff)
			q->def_tail = 0xffff;
		nvmet_read_resume(q, cmd);
	}
	nvmet_tx_flush(q);
}

static void poll_work(struct bp_loop *loop, void *arg);

static void poll_arm(struct nvmet_queue *q)
{
	struct bp_loop *loop = bp_conn_loop(q->conn);

	bp_timer_start(loop, &q->poll_timer, 0, poll_work, q);
	bp_loop_poll_next(loop);
}

/*
 * One pass is over: count it, and in poll mode decide whether the work keeps
 * running. Operations are summed over the whole period; only a period in which
 * none completed ends the polling.
 */
static void pass_done(struct nvmet_queue *q)
{
	uint64_t period_ns = (uint64_t)q->t->cfg.poll_period_us * 1000, now, ops;

	q->st.poll_passes++;
	ops = q->pass_ops;
	q->pass_ops = 0;
	if (!period_ns || q->state == Q_CLOSING)
		return;
	now = bp_now_ns();
	if (!q->polling) {
		if (!ops)
			return;
		q->polling = true;
		q->period_start_ns = now;
		q->period_ops = ops;
		poll_arm(q);
		return;
	}
	q->period_ops += ops;
	if (now - q->period_start_ns >= period_ns) {
		if (!q->period_ops) {
			q->polling = false;
			q->st.idle_exits++;
			bp_timer_stop(bp_conn_loop(q->conn), &q->poll_timer);
			return; /* back to the engine's normal wait until bytes arrive */
		}
		q->period_start_ns = now;
		q->period_ops = 0;
	}
	poll_arm(q);
}

/* The queue's work while polling: runs once per loop iteration, after the non-blocking wait. */
static void poll_work(struct bp_loop *loop, void *arg)
{
	struct nvmet_queue *q = arg;

	(void)loop;
	q->st.polls++;
	nvmet_queue_work_begin(q);
	send_pass(q);
	if (nvmet_queue_work_end(q))
		pass_done(q);
}

/* ---- storage completions ---- */

bool nvmet_queue_io_end(struct nvmet_queue *q, struct nvmet_cmd *cmd)
{
	q->io_inflight--;
	if (!q->zombie)
		return true;
	nvmet_cmd_buf_release(cmd);
	if (q->io_inflight)
		return false;
	if (q->prev)
		q->prev->next = q->next;
	else
		q->th->zombies = q->next;
	if (q->next)
		q->next->prev = q->prev;
	queue_free(q);
	return false;
}

void nvmet_queue_mark_dirty(struct nvmet_queue *q)
{
	if (q->dirty || q->zombie || q->state == Q_CLOSING)
		return;
	q->dirty = true;
	q->dirty_next = q->th->dirty;
	q->th->dirty = q;
}

void nvmet_thread_flush_dirty(struct nvmet_thread *th)
{
	struct nvmet_queue *q;

	while ((q = th->dirty)) {
		th->dirty = q->dirty_next;
		q->dirty = false;
		nvmet_queue_work_begin(q);
		send_pass(q);
		if (!nvmet_queue_work_end(q))
			continue;
		/* While polling, the poll work counts the pass (once per loop iteration). */
		if (!q->polling)
			pass_done(q);
	}
}

static void dirty_remove(struct nvmet_queue *q)
{
	for (struct nvmet_queue **pp = &q->th->dirty; *pp; pp = &(*pp)->dirty_next) {
		if (*pp == q) {
			*pp = q->dirty_next;
			break;
		}
	}
	q->dirty = false;
}

static size_t q_recv(struct bp_conn *c, const uint8_t *data, size_t len)
{
	struct nvmet_queue *q = bp_conn_data(c);
	size_t off = 0;
	unsigned handled = 0;

	if (q->state == Q_CLOSING)
		return len; /* a TermReq is on its way: nothing more is read */
	nvmet_queue_work_begin(q);
	while (off < len && q->state != Q_CLOSING) {
		struct bp_nvme_tcp_pdu pdu;
		struct bp_nvme_tcp_err err;
		int n = bp_nvme_tcp_frame(data + off, len - off, &q->rx, &pdu, &err);

		if (n == 0)
			break;
		if (n < 0) {
			size_t avail = len - off;
			size_t hl = data[off + 2] && data[off + 2] < avail ? data[off + 2] : avail;

			if (avail < BP_NVME_TCP_CH_LEN)
				hl = avail;
			nvmet_queue_fatal(q, err.fes, err.fei, data + off, hl, err.msg);
			break;
		}
		handle_pdu(q, &pdu);
		off += (size_t)n;
		if (++handled % NVMET_RECV_BUDGET == 0)
			send_pass(q);
	}
	if (!nvmet_queue_work_end(q))
		return len;
	send_pass(q);
	/* While polling, the poll work counts the pass (once per loop iteration). */
	if (!q->polling)
		pass_done(q);
	return q->state == Q_CLOSING ? len : off;
}

static void q_drain(struct bp_conn *c)
{
	struct nvmet_queue *q = bp_conn_data(c);

	if (q->def_head != 0xffff)
		send_pass(q);
}

static void q_close(struct bp_conn *c, int err, const char *syscall)
{
	struct nvmet_queue *q = bp_conn_data(c);

	if (err && err != -ECONNRESET && err != -EPIPE)
		nvmet_log(q->t, BP_NVMET_LOG_WARN, "%s (qid %u): %s: %s", q->peer, q->qid, syscall, strerror(-err));
	else
		nvmet_log(q->t, BP_NVMET_LOG_DEBUG, "%s (cntlid %d qid %u): connection closed", q->peer,
			  q->ctrl ? q->ctrl->cntlid : -1, q->qid);
	if (q->in_recv) {
		/* A send failed under work on q (a timer, a storage completion): it ends the queue. */
		q->killed = true;
		q->state = Q_CLOSING;
		return;
	}
	queue_destroy(q);
}

static const struct bp_conn_ops queue_ops = { .on_recv = q_recv, .on_drain = q_drain, .on_close = q_close };

/* ---- life ---- */

static void queue_free(struct nvmet_queue *q)
{
	for (uint32_t i = 0; i < q->ncmds; i++)
		free(q->cmds[i].buf);
	free(q->cmds);
	free(q->txb);
	free(q->bounce);
	free(q);
}

static void queue_destroy(struct nvmet_queue *q)
{
	struct nvmet_thread *th = q->th;

	if (bp_timer_armed(&q->poll_timer))
		bp_timer_stop(th->loop, &q->poll_timer);
	if (bp_timer_armed(&q->connect_timer))
		bp_timer_stop(th->loop, &q->connect_timer);
	q->st.live = false;
	nvmet_record_closed(q->t, &q->st);
	nvmet_ctrl_detach(q);
	if (q->prev)
		q->prev->next = q->next;
	else
		th->queues = q->next;
	if (q->next)
		q->next->prev = q->prev;
	th->nqueues--;
	if (q->dirty)
		dirty_remove(q);
	atomic_fetch_sub(&q->t->conns, 1);
	if (q->io_inflight) {
		/* The kernel still works on some of its commands' buffers: free it with the last. */
		q->zombie = true;
		q->conn = NULL;
		q->prev = NULL;
		q->next = th->zombies;
		if (q->next)
			q->next->prev = q;
		th->zombies = q;
		return;
	}
	queue_free(q);
}

void nvmet_queue_free_all(struct nvmet_thread *th)
{
	while (th->queues) {
		struct nvmet_queue *q = th->queues;

		q->killed = true;
		q->state = Q_CLOSING;
		bp_conn_close(q->conn);
		queue_destroy(q);
	}
}

/*
 * A connection that has not become a queue in time: it never sent its ICReq, or
 * its Connect (a client that connects and says nothing, one that trickles bytes,
 * a half-open connection whose host is gone). Keep-alive only covers a queue
 * once Connect made it part of a controller; until then this is the limit.
 */
static void connect_expired(struct bp_loop *loop, void *arg)
{
	struct nvmet_queue *q = arg;

	(void)loop;
	if (q->state != Q_WAIT_IC && q->state != Q_WAIT_CONNECT)
		return;
	nvmet_log(q->t, BP_NVMET_LOG_WARN, "%s: no %s within %u ms of connecting (--connect-timeout-ms); closing",
		  q->peer, q->state == Q_WAIT_IC ? "ICReq" : "Connect", q->t->cfg.connect_timeout_ms);
	nvmet_queue_kill(q, "connect timeout");
}

void nvmet_queue_adopt(struct bp_loop *loop, int fd, void *arg)
{
	struct nvmet_thread *th = bp_loop_data(loop);
	struct bp_nvmet *t = th->t;
	struct nvmet_queue *q = calloc(1, sizeof(*q));
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	(void)arg;
	if (q)
		q->txb = malloc(NVMET_TXB_SIZE);
	if (!q || !q->txb) {
		if (q)
			free(q);
		nvmet_log(t, BP_NVMET_LOG_ERROR, "out of memory for a new queue; connection refused");
		atomic_fetch_sub(&t->conns, 1);
		close(fd);
		return;
	}
	q->t = t;
	q->th = th;
	q->id = atomic_fetch_add(&t->next_queue_id, 1) + 1;
	snprintf(q->peer, sizeof(q->peer), "?");
	if (getpeername(fd, (struct sockaddr *)&ss, &sl) == 0)
		bp_format_addr((struct sockaddr *)&ss, q->peer, sizeof(q->peer));
	q->rx.is_target = true;
	q->rx.max_cmd_data = NVMET_ADMIN_INLINE;
	q->rx.max_data = t->cfg.maxh2cdata;
	q->free_head = 0xffff;
	q->def_head = q->def_tail = 0xffff;
	q->state = Q_WAIT_IC;
	q->st.queue_id = q->id;
	q->st.cntlid = 0xffff;
	q->st.thread = th->idx;
	q->st.live = true;
	snprintf(q->st.peer, sizeof(q->st.peer), "%s", q->peer);
	if (bp_conn_adopt(loop, fd, &queue_ops, q, &q->conn)) {
		nvmet_log(t, BP_NVMET_LOG_ERROR, "%s: %s", q->peer, bp_last_error());
		atomic_fetch_sub(&t->conns, 1);
		free(q->txb);
		free(q);
		return;
	}
	q->next = th->queues;
	if (q->next)
		q->next->prev = q;
	th->queues = q;
	th->nqueues++;
	if (t->cfg.connect_timeout_ms)
		bp_timer_start(loop, &q->connect_timer, (uint64_t)t->cfg.connect_timeout_ms * 1000, connect_expired, q);
	nvmet_log(t, BP_NVMET_LOG_DEBUG, "%s: connection on thread %d", q->peer, th->idx);
}
