/* SPDX-License-Identifier: MIT */
/*
 * NVMe/TCP PDUs: framing with every length check, encoders and decoders
 * (contract in include/busypoll/nvme/tcp.h). Pure functions over caller buffers.
 *
 * Why so strict: a receiver waits for plen bytes before it acts on a PDU, so a
 * length that is not checked against the negotiated limits first lets a peer make
 * it buffer gigabytes; and a PDO or digest flag that does not match what was
 * negotiated means the two ends disagree about where data starts, which can only
 * end in data landing in the wrong place. Both are fatal (TermReq and close), the
 * way the NVMe/TCP specification and nvmet treat them.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <busypoll/nvme/tcp.h>

#include "base/bytes.h"

const char *bp_nvme_tcp_type_name(uint8_t type)
{
	switch (type) {
	case BP_NVME_TCP_ICREQ: return "ICReq";
	case BP_NVME_TCP_ICRESP: return "ICResp";
	case BP_NVME_TCP_H2C_TERM: return "H2CTermReq";
	case BP_NVME_TCP_C2H_TERM: return "C2HTermReq";
	case BP_NVME_TCP_CMD: return "CapsuleCmd";
	case BP_NVME_TCP_RSP: return "CapsuleResp";
	case BP_NVME_TCP_H2C_DATA: return "H2CData";
	case BP_NVME_TCP_C2H_DATA: return "C2HData";
	case BP_NVME_TCP_R2T: return "R2T";
	default: return "unknown";
	}
}

const char *bp_nvme_tcp_fes_name(uint16_t fes)
{
	switch (fes) {
	case BP_NVME_TCP_FES_INVALID_HEADER: return "invalid PDU header field";
	case BP_NVME_TCP_FES_PDU_SEQUENCE: return "PDU sequence error";
	case BP_NVME_TCP_FES_HDGST: return "header digest error";
	case BP_NVME_TCP_FES_DATA_OUT_OF_RANGE: return "data transfer out of range";
	case BP_NVME_TCP_FES_DATA_LIMIT: return "data transfer limit exceeded";
	case BP_NVME_TCP_FES_UNSUPPORTED_PARAM: return "unsupported parameter";
	default: return "unknown error";
	}
}

void bp_nvme_tcp_ch_encode(uint8_t *buf, const struct bp_nvme_tcp_ch *ch)
{
	buf[0] = ch->type;
	buf[1] = ch->flags;
	buf[2] = ch->hlen;
	buf[3] = ch->pdo;
	bp_put_le32(buf + 4, ch->plen);
}

void bp_nvme_tcp_ch_decode(const uint8_t *buf, struct bp_nvme_tcp_ch *ch)
{
	ch->type = buf[0];
	ch->flags = buf[1];
	ch->hlen = buf[2];
	ch->pdo = buf[3];
	ch->plen = bp_get_le32(buf + 4);
}

uint32_t bp_nvme_tcp_hdr_len(uint8_t hlen, bool hdgst, uint8_t pda, bool has_data)
{
	uint32_t n = hlen + (hdgst ? BP_NVME_TCP_DIGEST_LEN : 0);
	uint32_t align = ((uint32_t)pda + 1) * 4;

	if (has_data && n % align)
		n += align - n % align;
	return n;
}

size_t bp_nvme_tcp_put_digest(uint8_t *out, const void *data, size_t len)
{
	bp_put_le32(out, bp_crc32c(0, data, len));
	return BP_NVME_TCP_DIGEST_LEN;
}

/* ---- framing ---- */

static int frame_fail(struct bp_nvme_tcp_err *err, uint16_t fes, uint32_t fei, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int frame_fail(struct bp_nvme_tcp_err *err, uint16_t fes, uint32_t fei, const char *fmt, ...)
{
	va_list ap;

	err->fes = fes;
	err->fei = fei;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return -EPROTO;
}

/* The header length each type must have; 0 for a type that does not exist. */
static uint8_t expected_hlen(uint8_t type)
{
	switch (type) {
	case BP_NVME_TCP_ICREQ:
	case BP_NVME_TCP_ICRESP: return BP_NVME_TCP_IC_LEN;
	case BP_NVME_TCP_H2C_TERM:
	case BP_NVME_TCP_C2H_TERM: return BP_NVME_TCP_TERM_HLEN;
	case BP_NVME_TCP_CMD: return BP_NVME_TCP_CMD_HLEN;
	case BP_NVME_TCP_RSP: return BP_NVME_TCP_RSP_HLEN;
	case BP_NVME_TCP_H2C_DATA:
	case BP_NVME_TCP_C2H_DATA:
	case BP_NVME_TCP_R2T: return BP_NVME_TCP_DATA_HLEN;
	default: return 0;
	}
}

/* Is this type one this end may receive at all (ignoring sequence)? */
static bool type_for_me(uint8_t type, bool is_target)
{
	if (is_target)
		return type == BP_NVME_TCP_ICREQ || type == BP_NVME_TCP_H2C_TERM ||
		       type == BP_NVME_TCP_CMD || type == BP_NVME_TCP_H2C_DATA;
	return type == BP_NVME_TCP_ICRESP || type == BP_NVME_TCP_C2H_TERM || type == BP_NVME_TCP_RSP ||
	       type == BP_NVME_TCP_C2H_DATA || type == BP_NVME_TCP_R2T;
}

int bp_nvme_tcp_frame(const uint8_t *buf, size_t len, const struct bp_nvme_tcp_rx_cfg *cfg,
		      struct bp_nvme_tcp_pdu *pdu, struct bp_nvme_tcp_err *err)
{
	struct bp_nvme_tcp_ch ch;
	bool is_ic, is_term, hd, dd = false, has_data = false;
	uint32_t hdr_end, want_pdo = 0, data_len = 0;

	if (len < BP_NVME_TCP_CH_LEN)
		return 0;
	bp_nvme_tcp_ch_decode(buf, &ch);
	if (!type_for_me(ch.type, cfg->is_target))
		return frame_fail(err, BP_NVME_TCP_FES_INVALID_HEADER, 0, "%s PDU type 0x%02x",
				  expected_hlen(ch.type) ? "wrong-direction" : "unknown", ch.type);
	is_ic = ch.type == BP_NVME_TCP_ICREQ || ch.type == BP_NVME_TCP_ICRESP;
	is_term = ch.type == BP_NVME_TCP_H2C_TERM || ch.type == BP_NVME_TCP_C2H_TERM;
	if (is_ic == cfg->connected && !is_term)
		return frame_fail(err, BP_NVME_TCP_FES_PDU_SEQUENCE, 0, "%s %s the connection is initialized",
				  bp_nvme_tcp_type_name(ch.type), is_ic ? "after" : "before");
	if (ch.hlen != expected_hlen(ch.type))
		return frame_fail(err, BP_NVME_TCP_FES_INVALID_HEADER, 2, "%s with header length %u (must be %u)",
				  bp_nvme_tcp_type_name(ch.type), ch.hlen, expected_hlen(ch.type));

	if (is_ic || is_term) {
		/* No digests or data offsets: the IC exchange precedes them, TermReqs carry none. */
		if (is_ic && ch.plen != BP_NVME_TCP_IC_LEN)
			return frame_fail(err, BP_NVME_TCP_FES_INVALID_HEADER, 4, "%s with PDU length %u (must be 128)",
					  bp_nvme_tcp_type_name(ch.type), ch.plen);
		if (is_ic && ch.pdo)
			return frame_fail(err, BP_NVME_TCP_FES_INVALID_HEADER, 3, "%s with PDO %u (must be 0)",
					  bp_nvme_tcp_type_name(ch.type), ch.pdo);
		if (is_term && (ch.plen < BP_NVME_TCP_TERM_HLEN || ch.plen > BP_NVME_TCP_TERM_MAX_PLEN))
			return frame_fail(err, BP_NVME_TCP_FES_INVALID_HEADER, 4, "%s with PDU length %u (24..152)",
					  bp_nvme_tcp_type_name(ch.type), ch.plen);
		if (len < ch.plen)
			return 0;
		memset(pdu, 0, sizeof(*pdu));
		pdu->ch = ch;
		pdu->hdr = buf;
		if (is_term && ch.plen > BP_NVME_TCP_TERM_HLEN) {
			pdu->data = buf + BP_NVME_TCP_TERM_HLEN;
			pdu->data_len = ch.plen - BP_NVME_TCP_TERM_HLEN;
		}
		return (int)ch.plen;
	}

	hd = ch.flags & BP_NVME_TCP_F_HDGST;
	if (hd != cfg->hdgst)
		return frame_fail(err, BP_NVME_TCP_FES_INVALID_HEADER, 1, "%s with header digest flag %s, negotiated %s",
				  bp_nvme_tcp_type_name(ch.type), hd ? "set" : "clear", cfg->hdgst ? "on" : "off");
	if ((ch.flags & BP_NVME_TCP_F_DDGST) && !cfg->ddgst)
		return frame_fail(err, BP_NVME_TCP_FES_INVALID_HEADER, 1,
				  "%s with data digest flag set, data digest not negotiated",
				  bp_nvme_tcp_type_name(ch.type));
	hdr_end = ch.hlen + (hd ? BP_NVME_TCP_DIGEST_LEN : 0);

	switch (ch.type) {
	case BP_NVME_TCP_RSP:
	case BP_NVME_TCP_R2T:
		if (ch.pdo)
			return frame_fail(err, BP_NVME_TCP_FES_INVALID_HEADER, 3, "%s with PDO %u (must be 0)",
					  bp_nvme_tcp_type_name(ch.type), ch.pdo);
		if (ch.plen != hdr_end)
			return frame_fail(err, BP_NVME_TCP_FES_INVALID_HEADER, 4, "%s with PDU length %u (must be %u)",
					  bp_nvme_tcp_type_name(ch.type), ch.plen, hdr_end);
		break;
	case BP_NVME_TCP_CMD:
	case BP_NVME_TCP_H2C_DATA:
	case BP_NVME_TCP_C2H_DATA: {
		uint32_t limit = ch.type == BP_NVME_TCP_CMD ? cfg->max_cmd_data : cfg->max_data;

		has_data = ch.plen != hdr_end;
		if (!has_data && ch.type != BP_NVME_TCP_CMD)
			return frame_fail(err, BP_NVME_TCP_FES_INVALID_HEADER, 4, "%s without data",
					  bp_nvme_tcp_type_name(ch.type));
		if (!has_data) {
			if (ch.pdo)
				return frame_fail(err, BP_NVME_TCP_FES_INVALID_HEADER, 3,
						  "CapsuleCmd without data and PDO %u (must be 0)", ch.pdo);
			break;
		}
		dd = cfg->ddgst;
		if (dd && !(ch.flags & BP_NVME_TCP_F_DDGST))
			return frame_fail(err, BP_NVME_TCP_FES_INVALID_HEADER, 1,
					  "%s with data but data digest flag clear, negotiated on",
					  bp_nvme_tcp_type_name(ch.type));
		want_pdo = bp_nvme_tcp_hdr_len(ch.hlen, hd, cfg->pda, true);
		if (ch.pdo != want_pdo)
			return frame_fail(err, BP_NVME_TCP_FES_INVALID_HEADER, 3, "%s with PDO %u (must be %u)",
					  bp_nvme_tcp_type_name(ch.type), ch.pdo, want_pdo);
		if (ch.plen < want_pdo + (dd ? BP_NVME_TCP_DIGEST_LEN : 0) + 1)
			return frame_fail(err, BP_NVME_TCP_FES_INVALID_HEADER, 4, "%s with PDU length %u below PDO %u",
					  bp_nvme_tcp_type_name(ch.type), ch.plen, ch.pdo);
		data_len = ch.plen - want_pdo - (dd ? BP_NVME_TCP_DIGEST_LEN : 0);
		if (data_len > limit)
			return frame_fail(err, BP_NVME_TCP_FES_DATA_LIMIT, 0, "%s with %u data bytes (limit %u)",
					  bp_nvme_tcp_type_name(ch.type), data_len, limit);
		if (ch.type != BP_NVME_TCP_CMD && len >= 20 && bp_get_le32(buf + 16) != data_len)
			return frame_fail(err, BP_NVME_TCP_FES_INVALID_HEADER, 16,
					  "%s with DATAL %u but %u data bytes in the PDU",
					  bp_nvme_tcp_type_name(ch.type), bp_get_le32(buf + 16), data_len);
		break;
	}
	default:
		break;
	}

	if (len < ch.plen)
		return 0;
	if (hd && bp_get_le32(buf + ch.hlen) != bp_crc32c(0, buf, ch.hlen))
		return frame_fail(err, BP_NVME_TCP_FES_HDGST, 0, "%s header digest mismatch",
				  bp_nvme_tcp_type_name(ch.type));
	memset(pdu, 0, sizeof(*pdu));
	pdu->ch = ch;
	pdu->hdr = buf;
	if (has_data) {
		pdu->data = buf + want_pdo;
		pdu->data_len = data_len;
		if (dd && bp_get_le32(buf + want_pdo + data_len) != bp_crc32c(0, pdu->data, data_len))
			pdu->ddgst_bad = true;
	}
	return (int)ch.plen;
}

/* ---- IC ---- */

size_t bp_nvme_tcp_ic_encode(uint8_t *buf, uint8_t type, const struct bp_nvme_tcp_ic *ic)
{
	struct bp_nvme_tcp_ch ch = { .type = type, .hlen = BP_NVME_TCP_IC_LEN, .plen = BP_NVME_TCP_IC_LEN };

	memset(buf, 0, BP_NVME_TCP_IC_LEN);
	bp_nvme_tcp_ch_encode(buf, &ch);
	bp_put_le16(buf + 8, ic->pfv);
	buf[10] = ic->pda;
	buf[11] = ic->digest;
	bp_put_le32(buf + 12, ic->maxdata);
	return BP_NVME_TCP_IC_LEN;
}

void bp_nvme_tcp_ic_decode(const uint8_t *hdr, struct bp_nvme_tcp_ic *ic)
{
	ic->pfv = bp_get_le16(hdr + 8);
	ic->pda = hdr[10];
	ic->digest = hdr[11];
	ic->maxdata = bp_get_le32(hdr + 12);
}

/* ---- capsules ---- */

size_t bp_nvme_tcp_cmd_encode(uint8_t *buf, const uint8_t sqe[64], uint32_t data_len, bool hdgst,
			      bool ddgst, uint8_t pda)
{
	uint32_t hdr_len = bp_nvme_tcp_hdr_len(BP_NVME_TCP_CMD_HLEN, hdgst, pda, data_len > 0);
	struct bp_nvme_tcp_ch ch = {
		.type = BP_NVME_TCP_CMD,
		.flags = (uint8_t)((hdgst ? BP_NVME_TCP_F_HDGST : 0) | (ddgst && data_len ? BP_NVME_TCP_F_DDGST : 0)),
		.hlen = BP_NVME_TCP_CMD_HLEN,
		.pdo = (uint8_t)(data_len ? hdr_len : 0),
		.plen = hdr_len + data_len + (ddgst && data_len ? BP_NVME_TCP_DIGEST_LEN : 0),
	};

	memset(buf, 0, hdr_len);
	bp_nvme_tcp_ch_encode(buf, &ch);
	memcpy(buf + 8, sqe, BP_NVME_SQE_LEN);
	if (hdgst)
		bp_nvme_tcp_put_digest(buf + BP_NVME_TCP_CMD_HLEN, buf, BP_NVME_TCP_CMD_HLEN);
	return hdr_len;
}

void bp_nvme_cqe_encode(uint8_t cqe16[16], const struct bp_nvme_cqe *cqe)
{
	bp_put_le64(cqe16, cqe->result);
	bp_put_le16(cqe16 + 8, cqe->sqhd);
	bp_put_le16(cqe16 + 10, cqe->sqid);
	bp_put_le16(cqe16 + 12, cqe->cid);
	/* Phase tag (bit 0) is meaningless on fabrics: always 0. */
	bp_put_le16(cqe16 + 14, (uint16_t)(cqe->status << 1));
}

void bp_nvme_cqe_decode(const uint8_t cqe16[16], struct bp_nvme_cqe *cqe)
{
	cqe->result = bp_get_le64(cqe16);
	cqe->sqhd = bp_get_le16(cqe16 + 8);
	cqe->sqid = bp_get_le16(cqe16 + 10);
	cqe->cid = bp_get_le16(cqe16 + 12);
	cqe->status = bp_get_le16(cqe16 + 14) >> 1;
}

size_t bp_nvme_tcp_rsp_encode(uint8_t *buf, const struct bp_nvme_cqe *cqe, bool hdgst)
{
	struct bp_nvme_tcp_ch ch = {
		.type = BP_NVME_TCP_RSP,
		.flags = hdgst ? BP_NVME_TCP_F_HDGST : 0,
		.hlen = BP_NVME_TCP_RSP_HLEN,
		.plen = BP_NVME_TCP_RSP_HLEN + (hdgst ? BP_NVME_TCP_DIGEST_LEN : 0),
	};

	bp_nvme_tcp_ch_encode(buf, &ch);
	bp_nvme_cqe_encode(buf + 8, cqe);
	if (hdgst)
		bp_nvme_tcp_put_digest(buf + BP_NVME_TCP_RSP_HLEN, buf, BP_NVME_TCP_RSP_HLEN);
	return ch.plen;
}

/* ---- data ---- */

static void data_fields(uint8_t *buf, const struct bp_nvme_tcp_data *d)
{
	bp_put_le16(buf + 8, d->cccid);
	bp_put_le16(buf + 10, d->ttag);
	bp_put_le32(buf + 12, d->offset);
	bp_put_le32(buf + 16, d->length);
	memset(buf + 20, 0, 4);
}

size_t bp_nvme_tcp_data_encode(uint8_t *buf, uint8_t type, const struct bp_nvme_tcp_data *d,
			       uint8_t extra_flags, bool hdgst, bool ddgst, uint8_t pda)
{
	uint32_t hdr_len = bp_nvme_tcp_hdr_len(BP_NVME_TCP_DATA_HLEN, hdgst, pda, true);
	struct bp_nvme_tcp_ch ch = {
		.type = type,
		.flags = (uint8_t)((hdgst ? BP_NVME_TCP_F_HDGST : 0) | (ddgst ? BP_NVME_TCP_F_DDGST : 0) | extra_flags),
		.hlen = BP_NVME_TCP_DATA_HLEN,
		.pdo = (uint8_t)hdr_len,
		.plen = hdr_len + d->length + (ddgst ? BP_NVME_TCP_DIGEST_LEN : 0),
	};

	memset(buf, 0, hdr_len);
	bp_nvme_tcp_ch_encode(buf, &ch);
	data_fields(buf, d);
	if (hdgst)
		bp_nvme_tcp_put_digest(buf + BP_NVME_TCP_DATA_HLEN, buf, BP_NVME_TCP_DATA_HLEN);
	return hdr_len;
}

size_t bp_nvme_tcp_r2t_encode(uint8_t *buf, const struct bp_nvme_tcp_data *d, bool hdgst)
{
	struct bp_nvme_tcp_ch ch = {
		.type = BP_NVME_TCP_R2T,
		.flags = hdgst ? BP_NVME_TCP_F_HDGST : 0,
		.hlen = BP_NVME_TCP_DATA_HLEN,
		.plen = BP_NVME_TCP_DATA_HLEN + (hdgst ? BP_NVME_TCP_DIGEST_LEN : 0),
	};

	bp_nvme_tcp_ch_encode(buf, &ch);
	data_fields(buf, d);
	if (hdgst)
		bp_nvme_tcp_put_digest(buf + BP_NVME_TCP_DATA_HLEN, buf, BP_NVME_TCP_DATA_HLEN);
	return ch.plen;
}

void bp_nvme_tcp_data_decode(const uint8_t *hdr, struct bp_nvme_tcp_data *d)
{
	d->cccid = bp_get_le16(hdr + 8);
	d->ttag = bp_get_le16(hdr + 10);
	d->offset = bp_get_le32(hdr + 12);
	d->length = bp_get_le32(hdr + 16);
}

/* ---- TermReq ---- */

size_t bp_nvme_tcp_term_encode(uint8_t *buf, uint8_t type, uint16_t fes, uint32_t fei,
			       const uint8_t *bad_hdr, size_t bad_len)
{
	struct bp_nvme_tcp_ch ch = { .type = type, .hlen = BP_NVME_TCP_TERM_HLEN };

	if (bad_len > BP_NVME_TCP_TERM_MAX_PLEN - BP_NVME_TCP_TERM_HLEN)
		bad_len = BP_NVME_TCP_TERM_MAX_PLEN - BP_NVME_TCP_TERM_HLEN;
	if (!bad_hdr)
		bad_len = 0;
	ch.plen = (uint32_t)(BP_NVME_TCP_TERM_HLEN + bad_len);
	memset(buf, 0, BP_NVME_TCP_TERM_HLEN);
	bp_nvme_tcp_ch_encode(buf, &ch);
	bp_put_le16(buf + 8, fes);
	bp_put_le32(buf + 10, fei);
	if (bad_len)
		memmove(buf + BP_NVME_TCP_TERM_HLEN, bad_hdr, bad_len);
	return ch.plen;
}

void bp_nvme_tcp_term_decode(const struct bp_nvme_tcp_pdu *pdu, struct bp_nvme_tcp_term *t)
{
	t->fes = bp_get_le16(pdu->hdr + 8);
	t->fei = bp_get_le32(pdu->hdr + 10);
	t->bad_hdr = pdu->data;
	t->bad_len = pdu->data_len;
}

/* ---- SQE and status ---- */

void bp_nvme_sqe_init(uint8_t *s, uint8_t opc, uint16_t cid, uint32_t nsid, uint32_t data_len,
		      bool in_capsule)
{
	memset(s, 0, BP_NVME_SQE_LEN);
	s[0] = opc;
	s[1] = BP_NVME_SQE_FLAG_SGL;
	bp_nvme_sqe_set_cid(s, cid);
	bp_nvme_sqe_set_dw(s, 1, nsid);
	bp_nvme_sqe_set_dw(s, 8, data_len);
	s[39] = in_capsule ? BP_NVME_SGL_DATA_BLOCK_OFFSET : BP_NVME_SGL_TRANSPORT_BLOCK;
}

static const char *status_name(uint16_t sct_sc)
{
	switch (sct_sc) {
	case BP_NVME_SC_SUCCESS: return "Success";
	case BP_NVME_SC_INVALID_OPCODE: return "Invalid Command Opcode";
	case BP_NVME_SC_INVALID_FIELD: return "Invalid Field in Command";
	case BP_NVME_SC_CMDID_CONFLICT: return "Command ID Conflict";
	case BP_NVME_SC_DATA_XFER_ERROR: return "Data Transfer Error";
	case BP_NVME_SC_INTERNAL: return "Internal Error";
	case BP_NVME_SC_ABORT_REQ: return "Command Abort Requested";
	case BP_NVME_SC_INVALID_NS: return "Invalid Namespace or Format";
	case BP_NVME_SC_CMD_SEQ_ERROR: return "Command Sequence Error";
	case BP_NVME_SC_SGL_INVALID_DATA: return "Data SGL Length Invalid";
	case BP_NVME_SC_SGL_INVALID_TYPE: return "SGL Descriptor Type Invalid";
	case BP_NVME_SC_SGL_INVALID_OFFSET: return "SGL Offset Invalid";
	case BP_NVME_SC_TRANSIENT_TR_ERR: return "Transient Transport Error";
	case BP_NVME_SC_LBA_RANGE: return "LBA Out of Range";
	case BP_NVME_SC_CAP_EXCEEDED: return "Capacity Exceeded";
	case BP_NVME_SC_NS_NOT_READY: return "Namespace Not Ready";
	case BP_NVME_SC_NS_WRITE_PROTECTED: return "Namespace is Write Protected";
	case BP_NVME_SC_INVALID_LOG_PAGE: return "Invalid Log Page";
	case BP_NVME_SC_FEAT_NOT_SAVEABLE: return "Feature Identifier Not Saveable";
	case BP_NVME_SC_FEAT_NOT_CHANGEABLE: return "Feature Not Changeable";
	case BP_NVME_SC_CONNECT_FORMAT: return "Connect Incompatible Format";
	case BP_NVME_SC_CONNECT_CTRL_BUSY: return "Connect Controller Busy";
	case BP_NVME_SC_CONNECT_INVALID_PARAM: return "Connect Invalid Parameters";
	case BP_NVME_SC_CONNECT_RESTART_DISC: return "Connect Restart Discovery";
	case BP_NVME_SC_CONNECT_INVALID_HOST: return "Connect Invalid Host";
	case BP_NVME_SC_WRITE_FAULT: return "Write Fault";
	case BP_NVME_SC_READ_ERROR: return "Unrecovered Read Error";
	default: return "status";
	}
}

char *bp_nvme_status_str(uint16_t status, char *buf, size_t len)
{
	uint16_t sct_sc = status & 0x7ff;

	snprintf(buf, len, "%s (sct %u sc 0x%02x%s)", status_name(sct_sc), (sct_sc >> 8) & 7, sct_sc & 0xff,
		 (status & BP_NVME_DNR) ? ", DNR" : "");
	return buf;
}
