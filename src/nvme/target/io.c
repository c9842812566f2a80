/* SPDX-License-Identifier: MIT */
/*
 * I/O commands: Read, Write (in-capsule, or R2T then H2CData), Flush.
 *
 * Every LBA range is checked against the namespace before any byte moves, and
 * every H2CData against the R2T it answers (tag, command id, offset, length), so
 * nothing a host sends can reach bytes outside the namespace or outside the
 * command's own range. Reads from ram go to the socket straight from the
 * namespace; reads from files go through the queue's bounce buffer in chunks.
 * A read waits (deferred) while the socket is backed up, so a host cannot make
 * us queue unbounded data.
 */
#include <stdlib.h>
#include <string.h>

#include "nvme/target/internal.h"
#include "base/bytes.h"

#define RW_FUA (1u << 30)

static void log_once(struct nvmet_queue *q, uint32_t kind, const char *what, const struct nvmet_cmd *cmd)
{
	if (q->logged & kind)
		return;
	q->logged |= kind;
	nvmet_log(q->t, BP_NVMET_LOG_WARN, "%s (cntlid %u qid %u): %s (opcode 0x%02x cid 0x%04x nsid %u); "
		  "logged once per queue", q->peer, q->ctrl ? q->ctrl->cntlid : 0, q->qid, what,
		  bp_nvme_sqe_opc(cmd->sqe), cmd->cid, bp_nvme_sqe_nsid(cmd->sqe));
}

/* Stream a file read larger than the bounce buffer: header, chunks, digest, then the status. */
static void read_file_stream(struct nvmet_queue *q, struct nvmet_cmd *cmd)
{
	struct bp_nvme_tcp_data d = { .cccid = cmd->cid, .length = cmd->len };
	uint8_t *p = nvmet_tx_reserve(q, BP_NVME_TCP_MAX_HDR);
	uint16_t status = 0;
	uint32_t crc = 0;

	nvmet_tx_commit(q, bp_nvme_tcp_data_encode(p, BP_NVME_TCP_C2H_DATA, &d, BP_NVME_TCP_F_LAST, q->hdgst,
						   q->ddgst, q->hpda));
	for (uint32_t done = 0; done < cmd->len;) {
		uint32_t n = cmd->len - done < NVMET_BOUNCE_SIZE ? cmd->len - done : NVMET_BOUNCE_SIZE;

		if (!status)
			status = nvmet_ns_read(cmd->ns, cmd->off + done, q->bounce, n);
		if (status)
			memset(q->bounce, 0, n); /* the rest goes as zeros; the status tells the host */
		nvmet_tx_data(q, q->bounce, n);
		if (q->ddgst)
			crc = bp_crc32c(crc, q->bounce, n);
		done += n;
	}
	if (q->ddgst) {
		p = nvmet_tx_reserve(q, 4);
		bp_put_le32(p, crc);
		nvmet_tx_commit(q, 4);
	}
	q->st.bytes_out += cmd->len;
	if (status)
		log_once(q, LOGGED_IO, "read error from the namespace file", cmd);
	nvmet_complete(q, cmd, status, 0);
}

void nvmet_read_resume(struct nvmet_queue *q, struct nvmet_cmd *cmd)
{
	struct nvmet_ns *ns = cmd->ns;
	uint16_t status;

	cmd->state = CMD_FREE;
	if (ns->ram) {
		nvmet_send_c2h(q, cmd, ns->ram + cmd->off, cmd->len, cmd->len);
		return;
	}
	if (!q->bounce)
		q->bounce = malloc(NVMET_BOUNCE_SIZE);
	if (!q->bounce) {
		nvmet_complete(q, cmd, BP_NVME_SC_INTERNAL, 0);
		return;
	}
	if (cmd->len > NVMET_BOUNCE_SIZE) {
		read_file_stream(q, cmd);
		return;
	}
	status = nvmet_ns_read(ns, cmd->off, q->bounce, cmd->len);
	if (status) {
		log_once(q, LOGGED_IO, "read error from the namespace file", cmd);
		nvmet_complete(q, cmd, status, 0);
		return;
	}
	nvmet_send_c2h(q, cmd, q->bounce, cmd->len, cmd->len);
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

static void do_write(struct nvmet_queue *q, struct nvmet_cmd *cmd, const uint8_t *data, uint32_t data_len)
{
	uint16_t status;

	q->st.writes++;
	if (!data_len) {
		/* Beyond the in-capsule size: ask for the data, all of it in one R2T (as nvmet). */
		struct bp_nvme_tcp_data r2t = { .cccid = cmd->cid, .ttag = cmd->idx, .offset = 0, .length = cmd->len };
		uint8_t *p = nvmet_tx_reserve(q, BP_NVME_TCP_DATA_HLEN + 4);

		cmd->state = CMD_WAIT_DATA;
		cmd->done = 0;
		nvmet_tx_commit(q, bp_nvme_tcp_r2t_encode(p, &r2t, q->hdgst));
		q->st.r2ts++;
		q->pass_ops++;
		return;
	}
	status = nvmet_ns_write(cmd->ns, cmd->off, data, cmd->len);
	if (!status && (bp_nvme_sqe_dw(cmd->sqe, 12) & RW_FUA))
		status = nvmet_ns_flush(cmd->ns);
	if (status)
		log_once(q, LOGGED_IO, "write error on the namespace file", cmd);
	q->st.bytes_in += cmd->len;
	nvmet_complete(q, cmd, status, 0);
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
		q->st.flushes++;
		status = 0;
		if (nsid == 0xffffffffu) {
			for (int i = 0; i < t->n_ns && !status; i++)
				status = nvmet_ns_flush(&t->ns[i]);
		} else if (nsid >= 1 && nsid <= (uint32_t)t->n_ns) {
			status = nvmet_ns_flush(&t->ns[nsid - 1]);
		} else {
			status = BP_NVME_SC_INVALID_NS | BP_NVME_DNR;
		}
		nvmet_complete(q, cmd, status, 0);
		return;
	}
	if (opc != BP_NVME_CMD_READ && opc != BP_NVME_CMD_WRITE) {
		log_once(q, LOGGED_INVALID, "unsupported I/O opcode; Invalid Command Opcode", cmd);
		nvmet_complete(q, cmd, BP_NVME_SC_INVALID_OPCODE | BP_NVME_DNR, 0);
		return;
	}
	if (nsid < 1 || nsid > (uint32_t)t->n_ns) {
		nvmet_complete(q, cmd, BP_NVME_SC_INVALID_NS | BP_NVME_DNR, 0);
		return;
	}
	ns = &t->ns[nsid - 1];
	slba = (uint64_t)bp_nvme_sqe_dw(s, 11) << 32 | bp_nvme_sqe_dw(s, 10);
	nlb = (uint64_t)(bp_nvme_sqe_dw(s, 12) & 0xffff) + 1;
	if (slba >= ns->nblocks || nlb > ns->nblocks - slba) {
		log_once(q, LOGGED_LBA, "LBA range past the end of the namespace; LBA Out of Range", cmd);
		nvmet_complete(q, cmd, BP_NVME_SC_LBA_RANGE | BP_NVME_DNR, 0);
		return;
	}
	bytes = nlb << ns->lba_shift;
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
	cmd->ns = ns;
	cmd->off = slba << ns->lba_shift;
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
	bool last = pdu->ch.flags & BP_NVME_TCP_F_LAST;

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
	if (!cmd->status) {
		cmd->status = nvmet_ns_write(cmd->ns, cmd->off + d.offset, pdu->data, d.length);
		if (cmd->status)
			log_once(q, LOGGED_IO, "write error on the namespace file", cmd);
	}
	cmd->done += d.length;
	q->st.bytes_in += d.length;
	if (cmd->done < cmd->len)
		return;
	if (!cmd->status && (bp_nvme_sqe_dw(cmd->sqe, 12) & RW_FUA))
		cmd->status = nvmet_ns_flush(cmd->ns);
	cmd->state = CMD_FREE;
	nvmet_complete(q, cmd, cmd->status, 0);
}
