/* SPDX-License-Identifier: MIT */
/*
 * I/O commands: Read, Write (in-capsule, or R2T then H2CData; FUA), Flush, Write
 * Zeroes, Dataset Management (deallocate).
 *
 * Every LBA range is checked against the namespace before any byte moves, and
 * every H2CData against the R2T it answers (tag, command id, offset, length), so
 * nothing a host sends can reach bytes outside the namespace or outside the
 * command's own range.
 *
 * ram namespaces are served on the spot (reads go to the socket straight from the
 * namespace). File and block-device namespaces go through this thread's storage
 * queue for the namespace (th->nsq, busypoll/aio.h), never blocking the loop: the
 * command's data sits in its own aligned buffer (O_DIRECT): write data is copied
 * there from the receive buffer (in-capsule, or each H2CData as it arrives), a
 * read is read into it and sent from it. The command waits (CMD_STORAGE) while the
 * device works and the loop serves everything else; the completion queues the
 * response, and the batch hook sends every queue's responses once per batch of
 * completions (nvmet_thread_flush_dirty).
 *
 * Flush covers the writes the host saw complete before it sent the Flush (what
 * NVMe asks): each of them completed in the kernel before its response left, so
 * an fdatasync submitted now covers it. Writes still in flight when the Flush
 * arrives are not covered, and nothing waits for them. With FUA, or once the host
 * turned the volatile write cache off (Set Features), writes go RWF_DSYNC.
 *
 * A read waits (deferred) while the socket is backed up, so a host cannot make us
 * queue unbounded data. Storage errors become statuses (nvmet_storage_status),
 * logged once per queue; the queue and every other one go on.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvme/target/internal.h"
#include "base/bytes.h"

static void log_once(struct nvmet_queue *q, uint32_t kind, const char *what, const struct nvmet_cmd *cmd)
{
	if (q->logged & kind)
		return;
	q->logged |= kind;
	nvmet_log(q->t, BP_NVMET_LOG_WARN, "%s (cntlid %u qid %u): %s (opcode 0x%02x cid 0x%04x nsid %u); "
		  "logged once per queue", q->peer, q->ctrl ? q->ctrl->cntlid : 0, q->qid, what,
		  bp_nvme_sqe_opc(cmd->sqe), cmd->cid, bp_nvme_sqe_nsid(cmd->sqe));
}

static const char *op_name(uint8_t opc)
{
	switch (opc) {
	case BP_NVME_CMD_READ: return "read";
	case BP_NVME_CMD_WRITE: return "write";
	case BP_NVME_CMD_FLUSH: return "flush";
	case BP_NVME_CMD_WRITE_ZEROES: return "write zeroes";
	case BP_NVME_CMD_DSM: return "deallocate";
	default: return "I/O";
	}
}

/* The host turned the write cache off: every write must be durable when it completes. */
static bool write_through(const struct nvmet_queue *q)
{
	return q->ctrl && !atomic_load(&q->ctrl->feat_vwc);
}

/* A storage error on ns: its status, logged once per queue (and kind). */
static uint16_t storage_failed(struct nvmet_queue *q, struct nvmet_cmd *cmd, const struct nvmet_ns *ns, int err)
{
	uint8_t opc = bp_nvme_sqe_opc(cmd->sqe);
	uint16_t status = nvmet_storage_status(err, opc);
	uint32_t kind = LOGGED_IO;
	char what[1400], st[96];

	if ((status & 0x7ff) == BP_NVME_SC_CAP_EXCEEDED)
		kind = LOGGED_NOSPC;
	else if ((status & 0x7ff) == BP_NVME_SC_NS_WRITE_PROTECTED)
		kind = LOGGED_RO;
	bp_nvme_status_str(status, st, sizeof(st));
	snprintf(what, sizeof(what), "%s on %s failed: %s; %s", op_name(opc), ns->desc, strerror(-err), st);
	log_once(q, kind, what, cmd);
	q->st.storage_errors++;
	return status;
}

/* A write to a read-only namespace: Namespace Write Protected, never retried. */
static void write_protected(struct nvmet_queue *q, struct nvmet_cmd *cmd)
{
	log_once(q, LOGGED_RO, "write to a read-only namespace; Namespace is Write Protected", cmd);
	nvmet_complete(q, cmd, BP_NVME_SC_NS_WRITE_PROTECTED | BP_NVME_DNR, 0);
}

static void io_done(struct bp_aio *a, int res);

/* storage_submit - cmd's storage I/O on ns's queue of this thread; a refusal completes cmd. */
static void storage_submit(struct nvmet_queue *q, struct nvmet_cmd *cmd, const struct nvmet_ns *ns, uint8_t op,
			   void *buf, uint64_t off, uint64_t len, uint32_t flags, int mode)
{
	struct bp_aio *a = &cmd->aio;

	*a = (struct bp_aio){ .op = op, .flags = flags, .mode = mode, .fd = ns->fd, .buf = buf, .off = off,
			      .len = len, .done = io_done, .arg = cmd };
	if (bp_aio_submit(&q->th->nsq[ns->nsid - 1], a) < 0) {
		char what[400];

		snprintf(what, sizeof(what), "storage I/O could not start: %s; Internal Error", bp_last_error());
		log_once(q, LOGGED_IO, what, cmd);
		q->st.storage_errors++;
		nvmet_complete(q, cmd, BP_NVME_SC_INTERNAL, 0);
		return;
	}
	cmd->state = CMD_STORAGE;
	q->io_inflight++;
}

/* ---- Read ---- */

void nvmet_read_resume(struct nvmet_queue *q, struct nvmet_cmd *cmd)
{
	struct nvmet_ns *ns = cmd->ns;
	uint8_t *buf;

	cmd->state = CMD_FREE;
	if (ns->ram) {
		nvmet_send_c2h(q, cmd, ns->ram + cmd->off, cmd->len, cmd->len);
		return;
	}
	buf = nvmet_cmd_buf(cmd, cmd->len);
	if (!buf) {
		nvmet_complete(q, cmd, BP_NVME_SC_INTERNAL, 0);
		return;
	}
	storage_submit(q, cmd, ns, BP_AIO_READ, buf, cmd->off, cmd->len, 0, 0);
}

static void read_done(struct nvmet_queue *q, struct nvmet_cmd *cmd, int res)
{
	if (res == (int)cmd->len) {
		nvmet_send_c2h(q, cmd, cmd->buf, cmd->len, cmd->len);
		return;
	}
	if (res >= 0) {
		/* The end of the file came first: what the namespace says is there, is not. */
		log_once(q, LOGGED_SHORT, "read past the end of the file: it is shorter than the namespace "
			 "(truncated under the target?); Unrecovered Read Error", cmd);
		q->st.storage_errors++;
		nvmet_complete(q, cmd, BP_NVME_SC_READ_ERROR | BP_NVME_DNR, 0);
		return;
	}
	nvmet_complete(q, cmd, storage_failed(q, cmd, cmd->ns, res), 0);
}

static void do_read(struct nvmet_queue *q, struct nvmet_cmd *cmd)
{
	q->st.reads++;
	if (q->def_head != 0xffff || bp_conn_pending(q->conn) + q->txlen > NVMET_TX_HIGH) {
		/* Backed up: park it, in order; the send pass restarts it as the socket drains. */
		cmd->state = CMD_DEFERRED;
		cmd->next_deferred = 0xffff;
		if (q->def_tail != 0xffff)
			q->cmds[q->def_tail].next_deferred = cmd->idx;
		else
			q->def_head = cmd->idx;
		q->def_tail = cmd->idx;
		return;
	}
	nvmet_read_resume(q, cmd);
}

/* ---- Write ---- */

/* The write's data is all in cmd->buf (file, block device): to the device. */
static void write_start(struct nvmet_queue *q, struct nvmet_cmd *cmd)
{
	bool fua = (bp_nvme_sqe_dw(cmd->sqe, 12) & BP_NVME_RW_FUA) || write_through(q);

	storage_submit(q, cmd, cmd->ns, BP_AIO_WRITE, cmd->buf, cmd->off, cmd->len, fua ? BP_AIO_FUA : 0, 0);
}

static void write_done(struct nvmet_queue *q, struct nvmet_cmd *cmd, int res)
{
	if (res == (int)cmd->len)
		nvmet_complete(q, cmd, 0, 0);
	else
		nvmet_complete(q, cmd, storage_failed(q, cmd, cmd->ns, res < 0 ? res : -EIO), 0);
}

/* Ask for the data of cmd (beyond the in-capsule size): all of it in one R2T, as nvmet. */
static void send_r2t(struct nvmet_queue *q, struct nvmet_cmd *cmd)
{
	struct bp_nvme_tcp_data r2t = { .cccid = cmd->cid, .ttag = cmd->idx, .offset = 0, .length = cmd->len };
	uint8_t *p = nvmet_tx_reserve(q, BP_NVME_TCP_DATA_HLEN + 4);

	cmd->state = CMD_WAIT_DATA;
	cmd->done = 0;
	nvmet_tx_commit(q, bp_nvme_tcp_r2t_encode(p, &r2t, q->hdgst));
	q->st.r2ts++;
	q->pass_ops++;
}

static void do_write(struct nvmet_queue *q, struct nvmet_cmd *cmd, const uint8_t *data, uint32_t data_len)
{
	struct nvmet_ns *ns = cmd->ns;

	q->st.writes++;
	if (ns->readonly) {
		write_protected(q, cmd);
		return;
	}
	if (!ns->ram && !nvmet_cmd_buf(cmd, cmd->len)) {
		nvmet_complete(q, cmd, BP_NVME_SC_INTERNAL, 0);
		return;
	}
	if (!data_len) {
		send_r2t(q, cmd);
		return;
	}
	q->st.bytes_in += cmd->len;
	if (ns->ram) {
		memcpy(ns->ram + cmd->off, data, cmd->len);
		nvmet_complete(q, cmd, 0, 0);
		return;
	}
	memcpy(cmd->buf, data, cmd->len); /* from the receive buffer into aligned memory */
	write_start(q, cmd);
}

/* ---- Flush ---- */

static bool needs_flush(const struct nvmet_ns *ns)
{
	return ns->fd >= 0 && ns->vwc && !ns->readonly;
}

/*
 * The next namespace to fdatasync, or the completion. cmd->step counts what was
 * started: a single namespace (cmd->ns), or every one for the broadcast nsid.
 */
static void flush_next(struct nvmet_queue *q, struct nvmet_cmd *cmd)
{
	struct bp_nvmet *t = q->t;

	if (cmd->ns) {
		if (!cmd->step++ && needs_flush(cmd->ns)) {
			storage_submit(q, cmd, cmd->ns, BP_AIO_FDATASYNC, NULL, 0, 0, 0, 0);
			return;
		}
	} else {
		while (cmd->step < (uint32_t)t->n_ns) {
			struct nvmet_ns *ns = &t->ns[cmd->step++];

			if (needs_flush(ns)) {
				storage_submit(q, cmd, ns, BP_AIO_FDATASYNC, NULL, 0, 0, 0, 0);
				return;
			}
		}
	}
	nvmet_complete(q, cmd, 0, 0);
}

static void flush_done(struct nvmet_queue *q, struct nvmet_cmd *cmd, int res)
{
	if (res < 0) {
		struct nvmet_ns *ns = cmd->ns ? cmd->ns : &q->t->ns[cmd->step - 1];

		nvmet_complete(q, cmd, storage_failed(q, cmd, ns, res), 0);
		return;
	}
	flush_next(q, cmd);
}

static void do_flush(struct nvmet_queue *q, struct nvmet_cmd *cmd)
{
	struct bp_nvmet *t = q->t;
	uint32_t nsid = bp_nvme_sqe_nsid(cmd->sqe);

	q->st.flushes++;
	if (nsid != 0xffffffffu && (nsid < 1 || nsid > (uint32_t)t->n_ns)) {
		nvmet_complete(q, cmd, BP_NVME_SC_INVALID_NS | BP_NVME_DNR, 0);
		return;
	}
	cmd->ns = nsid == 0xffffffffu ? NULL : &t->ns[nsid - 1];
	cmd->step = 0;
	flush_next(q, cmd);
}

/* ---- Write Zeroes ---- */

static void do_write_zeroes(struct nvmet_queue *q, struct nvmet_cmd *cmd)
{
	struct nvmet_ns *ns = cmd->ns;
	uint32_t dw12 = bp_nvme_sqe_dw(cmd->sqe, 12);
	bool deac = dw12 & BP_NVME_WZ_DEAC;

	q->st.write_zeroes++;
	if (ns->readonly) {
		write_protected(q, cmd);
		return;
	}
	if (!ns->can_zero) {
		log_once(q, LOGGED_INVALID, "Write Zeroes on a namespace whose file system cannot zero; Invalid Field", cmd);
		nvmet_complete(q, cmd, BP_NVME_SC_INVALID_FIELD | BP_NVME_DNR, 0);
		return;
	}
	if (ns->ram) {
		nvmet_ns_ram_zero(ns, cmd->off, cmd->len);
		nvmet_complete(q, cmd, 0, 0);
		return;
	}
	/* DEAC may deallocate, where deallocated blocks read as zeros. */
	cmd->step = 0;
	storage_submit(q, cmd, ns, BP_AIO_FALLOCATE, NULL, cmd->off, cmd->len, 0,
		       deac && ns->can_dealloc && ns->dealloc_zeroes ? ns->dealloc_mode : ns->zero_mode);
}

static void write_zeroes_done(struct nvmet_queue *q, struct nvmet_cmd *cmd, int res)
{
	if (res < 0) {
		nvmet_complete(q, cmd, storage_failed(q, cmd, cmd->ns, res), 0);
		return;
	}
	/* FUA (or no write cache wanted): the zeroed range on stable storage before the answer. */
	if (!cmd->step++ && ((bp_nvme_sqe_dw(cmd->sqe, 12) & BP_NVME_RW_FUA) || write_through(q)) &&
	    needs_flush(cmd->ns)) {
		storage_submit(q, cmd, cmd->ns, BP_AIO_FDATASYNC, NULL, 0, 0, 0, 0);
		return;
	}
	nvmet_complete(q, cmd, 0, 0);
}

/* ---- Dataset Management ---- */

static uint32_t dsm_ranges(const struct nvmet_cmd *cmd)
{
	return (bp_nvme_sqe_dw(cmd->sqe, 10) & 0xff) + 1;
}

/* The next range to deallocate (cmd->step), or the completion. */
static void dsm_next(struct nvmet_queue *q, struct nvmet_cmd *cmd)
{
	struct nvmet_ns *ns = cmd->ns;

	while (cmd->step < dsm_ranges(cmd)) {
		const uint8_t *r = cmd->buf + BP_NVME_DSM_RANGE_LEN * cmd->step++;
		uint64_t nlb = bp_get_le32(r + 4), slba = bp_get_le64(r + 8);

		if (!nlb)
			continue;
		if (ns->ram) {
			nvmet_ns_ram_zero(ns, slba << ns->lba_shift, nlb << ns->lba_shift);
			continue;
		}
		storage_submit(q, cmd, ns, BP_AIO_FALLOCATE, NULL, slba << ns->lba_shift, nlb << ns->lba_shift, 0,
			       ns->dealloc_mode);
		return;
	}
	nvmet_complete(q, cmd, 0, 0);
}

static void dsm_done(struct nvmet_queue *q, struct nvmet_cmd *cmd, int res)
{
	/* Deallocation is advisory: a file system that will not punch here does no harm. */
	if (res < 0 && res != -EOPNOTSUPP) {
		nvmet_complete(q, cmd, storage_failed(q, cmd, cmd->ns, res), 0);
		return;
	}
	dsm_next(q, cmd);
}

/* The ranges are in cmd->buf: check them all, then deallocate them one after the other. */
static void dsm_start(struct nvmet_queue *q, struct nvmet_cmd *cmd)
{
	struct nvmet_ns *ns = cmd->ns;
	uint32_t n = dsm_ranges(cmd);

	if (!(bp_nvme_sqe_dw(cmd->sqe, 11) & BP_NVME_DSM_AD)) {
		nvmet_complete(q, cmd, 0, 0); /* only hints (IDR/IDW): nothing to do */
		return;
	}
	if (ns->readonly) {
		write_protected(q, cmd);
		return;
	}
	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *r = cmd->buf + BP_NVME_DSM_RANGE_LEN * i;
		uint64_t nlb = bp_get_le32(r + 4), slba = bp_get_le64(r + 8);

		if (nlb && (slba >= ns->nblocks || nlb > ns->nblocks - slba)) {
			log_once(q, LOGGED_LBA, "deallocate range past the end of the namespace; LBA Out of Range", cmd);
			nvmet_complete(q, cmd, BP_NVME_SC_LBA_RANGE | BP_NVME_DNR, 0);
			return;
		}
	}
	if (!ns->can_dealloc) {
		nvmet_complete(q, cmd, 0, 0);
		return;
	}
	cmd->step = 0;
	dsm_next(q, cmd);
}

static void do_dsm(struct nvmet_queue *q, struct nvmet_cmd *cmd, const uint8_t *data, uint32_t data_len)
{
	uint32_t need = dsm_ranges(cmd) * BP_NVME_DSM_RANGE_LEN, sgl_len;
	uint16_t status = nvmet_check_sgl(q, cmd, data_len, true, &sgl_len);

	q->st.deallocs++;
	if (!status && (sgl_len < need || sgl_len > BP_NVME_DSM_MAX_RANGES * BP_NVME_DSM_RANGE_LEN))
		status = BP_NVME_SC_SGL_INVALID_DATA | BP_NVME_DNR; /* the ranges, and no more than a page */
	if (status) {
		log_once(q, LOGGED_INVALID, "bad data descriptor for the Dataset Management ranges", cmd);
		nvmet_complete(q, cmd, status, 0);
		return;
	}
	if (!nvmet_cmd_buf(cmd, sgl_len)) {
		nvmet_complete(q, cmd, BP_NVME_SC_INTERNAL, 0);
		return;
	}
	cmd->len = sgl_len;
	cmd->off = 0;
	if (!data_len) {
		send_r2t(q, cmd);
		return;
	}
	memcpy(cmd->buf, data, sgl_len);
	dsm_start(q, cmd);
}

/* ---- completions, dispatch ---- */

/* A storage I/O of a command came back: the next step of that command, on its queue. */
static void io_done(struct bp_aio *a, int res)
{
	struct nvmet_cmd *cmd = a->arg;
	struct nvmet_queue *q = cmd->q;

	if (!nvmet_queue_io_end(q, cmd))
		return; /* the queue closed meanwhile */
	nvmet_queue_work_begin(q);
	cmd->state = CMD_FREE;
	switch (bp_nvme_sqe_opc(cmd->sqe)) {
	case BP_NVME_CMD_READ:
		read_done(q, cmd, res);
		break;
	case BP_NVME_CMD_WRITE:
		write_done(q, cmd, res);
		break;
	case BP_NVME_CMD_FLUSH:
		flush_done(q, cmd, res);
		break;
	case BP_NVME_CMD_WRITE_ZEROES:
		write_zeroes_done(q, cmd, res);
		break;
	default:
		dsm_done(q, cmd, res);
		break;
	}
	nvmet_queue_mark_dirty(q);
	nvmet_queue_work_end(q);
}

void nvmet_exec_io(struct nvmet_queue *q, struct nvmet_cmd *cmd, const uint8_t *data, uint32_t data_len)
{
	struct bp_nvmet *t = q->t;
	const uint8_t *s = cmd->sqe;
	uint8_t opc = bp_nvme_sqe_opc(s);
	uint32_t nsid = bp_nvme_sqe_nsid(s), sgl_len;
	uint64_t slba, nlb, bytes;
	struct nvmet_ns *ns;
	uint16_t status;

	if (opc == BP_NVME_CMD_FLUSH) {
		do_flush(q, cmd);
		return;
	}
	if (opc != BP_NVME_CMD_READ && opc != BP_NVME_CMD_WRITE && opc != BP_NVME_CMD_WRITE_ZEROES &&
	    opc != BP_NVME_CMD_DSM) {
		log_once(q, LOGGED_INVALID, "unsupported I/O opcode; Invalid Command Opcode", cmd);
		nvmet_complete(q, cmd, BP_NVME_SC_INVALID_OPCODE | BP_NVME_DNR, 0);
		return;
	}
	if (nsid < 1 || nsid > (uint32_t)t->n_ns) {
		nvmet_complete(q, cmd, BP_NVME_SC_INVALID_NS | BP_NVME_DNR, 0);
		return;
	}
	ns = &t->ns[nsid - 1];
	cmd->ns = ns;
	if (opc == BP_NVME_CMD_DSM) {
		do_dsm(q, cmd, data, data_len);
		return;
	}
	slba = (uint64_t)bp_nvme_sqe_dw(s, 11) << 32 | bp_nvme_sqe_dw(s, 10);
	nlb = (uint64_t)(bp_nvme_sqe_dw(s, 12) & 0xffff) + 1;
	if (slba >= ns->nblocks || nlb > ns->nblocks - slba) {
		log_once(q, LOGGED_LBA, "LBA range past the end of the namespace; LBA Out of Range", cmd);
		nvmet_complete(q, cmd, BP_NVME_SC_LBA_RANGE | BP_NVME_DNR, 0);
		return;
	}
	bytes = nlb << ns->lba_shift;
	cmd->off = slba << ns->lba_shift;
	if (opc == BP_NVME_CMD_WRITE_ZEROES) {
		cmd->len = (uint32_t)bytes; /* no data moves: not bound by MDTS */
		do_write_zeroes(q, cmd);
		return;
	}
	status = nvmet_check_sgl(q, cmd, data_len, opc == BP_NVME_CMD_WRITE, &sgl_len);
	if (!status && sgl_len != bytes)
		status = BP_NVME_SC_SGL_INVALID_DATA | BP_NVME_DNR; /* the SGL must cover the blocks exactly */
	if (!status && bytes > t->cfg.max_transfer)
		status = BP_NVME_SC_INVALID_FIELD | BP_NVME_DNR;
	if (status) {
		log_once(q, LOGGED_INVALID, "bad data descriptor for the transfer", cmd);
		nvmet_complete(q, cmd, status, 0);
		return;
	}
	cmd->len = (uint32_t)bytes;
	if (opc == BP_NVME_CMD_READ)
		do_read(q, cmd);
	else
		do_write(q, cmd, data, data_len);
}

void nvmet_h2c_data(struct nvmet_queue *q, const struct bp_nvme_tcp_pdu *pdu)
{
	struct bp_nvme_tcp_data d;
	struct nvmet_cmd *cmd;
	bool last = pdu->ch.flags & BP_NVME_TCP_F_LAST, to_ram;

	bp_nvme_tcp_data_decode(pdu->hdr, &d);
	if (d.ttag >= q->ncmds || q->cmds[d.ttag].state != CMD_WAIT_DATA) {
		nvmet_queue_fatal(q, BP_NVME_TCP_FES_INVALID_HEADER, 10, pdu->hdr, pdu->ch.hlen,
				  "H2CData with a transfer tag no R2T is outstanding for");
		return;
	}
	cmd = &q->cmds[d.ttag];
	if (d.cccid != cmd->cid) {
		nvmet_queue_fatal(q, BP_NVME_TCP_FES_INVALID_HEADER, 8, pdu->hdr, pdu->ch.hlen,
				  "H2CData whose command id does not match its transfer tag");
		return;
	}
	if ((uint64_t)d.offset + d.length > cmd->len) {
		nvmet_queue_fatal(q, BP_NVME_TCP_FES_DATA_OUT_OF_RANGE, 0, pdu->hdr, pdu->ch.hlen,
				  "H2CData beyond what the R2T asked for");
		return;
	}
	if (d.offset != cmd->done) {
		nvmet_queue_fatal(q, BP_NVME_TCP_FES_INVALID_HEADER, 12, pdu->hdr, pdu->ch.hlen,
				  "H2CData out of order (unexpected data offset)");
		return;
	}
	if (last && d.offset + d.length != cmd->len) {
		nvmet_queue_fatal(q, BP_NVME_TCP_FES_PDU_SEQUENCE, 0, pdu->hdr, pdu->ch.hlen,
				  "H2CData marked last before all the data the R2T asked for");
		return;
	}
	if (pdu->ddgst_bad && !cmd->status) {
		/* Nothing of a PDU with a bad digest is written; the command fails, the queue lives. */
		cmd->status = BP_NVME_SC_TRANSIENT_TR_ERR;
		log_once(q, LOGGED_DDGST, "data digest mismatch in H2CData; Transient Transport Error", cmd);
	}
	/* A write to ram lands in the namespace at once; anything else collects in the command's buffer. */
	to_ram = bp_nvme_sqe_opc(cmd->sqe) == BP_NVME_CMD_WRITE && cmd->ns->ram;
	if (!cmd->status)
		memcpy((to_ram ? cmd->ns->ram + cmd->off : cmd->buf) + d.offset, pdu->data, d.length);
	cmd->done += d.length;
	if (bp_nvme_sqe_opc(cmd->sqe) == BP_NVME_CMD_WRITE)
		q->st.bytes_in += d.length;
	if (cmd->done < cmd->len)
		return;
	cmd->state = CMD_FREE;
	if (cmd->status)
		nvmet_complete(q, cmd, cmd->status, 0);
	else if (bp_nvme_sqe_opc(cmd->sqe) == BP_NVME_CMD_DSM)
		dsm_start(q, cmd);
	else if (to_ram)
		nvmet_complete(q, cmd, 0, 0);
	else
		write_start(q, cmd);
}
