/* SPDX-License-Identifier: MIT */
/* pingpong header and in-place reply (contract in tools/pingpong/proto.h). */
#include <string.h>

#include "tools/pingpong/proto.h"

#include "base/bytes.h"

/* Byte offsets of the header fields. */
enum {
	OFF_MAGIC = 0,
	OFF_VERSION = 4,
	OFF_TYPE = 5,
	OFF_FLAGS = 6,
	OFF_LENGTH = 8,
	OFF_SRV_RX = 12,
	OFF_SEQ = 16,
	OFF_CLIENT_TS = 24,
	OFF_SRV_PROC = 32,
	OFF_SRV_SEND = 36,
	OFF_PREV_SEQ = 40,
};

void bp_pp_hdr_encode(const struct bp_pp_hdr *h, uint8_t b[BP_PP_HDR_LEN])
{
	bp_put_le32(b + OFF_MAGIC, BP_PP_MAGIC);
	b[OFF_VERSION] = BP_PP_VERSION;
	b[OFF_TYPE] = h->type;
	bp_put_le16(b + OFF_FLAGS, h->flags);
	bp_put_le32(b + OFF_LENGTH, h->length);
	bp_put_le32(b + OFF_SRV_RX, h->srv_rx_ns);
	bp_put_le64(b + OFF_SEQ, h->seq);
	bp_put_le64(b + OFF_CLIENT_TS, h->client_ts);
	bp_put_le32(b + OFF_SRV_PROC, h->srv_proc_ns);
	bp_put_le32(b + OFF_SRV_SEND, h->srv_send_ns);
	bp_put_le64(b + OFF_PREV_SEQ, h->prev_seq);
}

int bp_pp_hdr_decode(const uint8_t *b, size_t avail, int want_type, bool dgram,
		     struct bp_pp_hdr *h)
{
	memset(h, 0, sizeof(*h));
	if (avail < BP_PP_HDR_LEN) {
		/* Say "garbage" rather than "short" when even the magic is wrong. */
		if (avail >= 4 && bp_get_le32(b) != BP_PP_MAGIC)
			return BP_PP_ERR_MAGIC;
		return BP_PP_ERR_SHORT;
	}
	if (bp_get_le32(b + OFF_MAGIC) != BP_PP_MAGIC)
		return BP_PP_ERR_MAGIC;
	h->version = b[OFF_VERSION];
	h->type = b[OFF_TYPE];
	h->flags = bp_get_le16(b + OFF_FLAGS);
	h->length = bp_get_le32(b + OFF_LENGTH);
	h->srv_rx_ns = bp_get_le32(b + OFF_SRV_RX);
	h->seq = bp_get_le64(b + OFF_SEQ);
	h->client_ts = bp_get_le64(b + OFF_CLIENT_TS);
	h->srv_proc_ns = bp_get_le32(b + OFF_SRV_PROC);
	h->srv_send_ns = bp_get_le32(b + OFF_SRV_SEND);
	h->prev_seq = bp_get_le64(b + OFF_PREV_SEQ);
	if (h->version != BP_PP_VERSION)
		return BP_PP_ERR_VERSION;
	if (h->type < BP_PP_REQUEST || h->type > BP_PP_REPLY || (want_type && h->type != want_type))
		return BP_PP_ERR_TYPE;
	if (h->type == BP_PP_REPLY ? (h->flags & ~BP_PP_F_ALL) != 0 : h->flags != 0)
		return BP_PP_ERR_FLAGS;
	if (h->length < BP_PP_HDR_LEN || h->length > BP_PP_MAX_LEN)
		return BP_PP_ERR_LENGTH;
	if (dgram && avail > h->length)
		return BP_PP_ERR_OVERSIZED;
	if (dgram && avail < h->length)
		return BP_PP_ERR_TRUNCATED;
	return BP_PP_OK;
}

const char *bp_pp_err_text(int err)
{
	switch (err) {
	case BP_PP_OK: return "ok";
	case BP_PP_ERR_SHORT: return "shorter than the 48-byte header";
	case BP_PP_ERR_MAGIC: return "wrong magic (not busypoll pingpong)";
	case BP_PP_ERR_VERSION: return "unsupported protocol version";
	case BP_PP_ERR_TYPE: return "unexpected message type";
	case BP_PP_ERR_FLAGS: return "unknown or misplaced flags";
	case BP_PP_ERR_LENGTH: return "length field out of range";
	case BP_PP_ERR_OVERSIZED: return "datagram longer than its length field";
	case BP_PP_ERR_TRUNCATED: return "datagram shorter than its length field";
	default: return "unknown error";
	}
}

void bp_pp_reply_fill(uint8_t *msg, uint16_t flags, uint32_t srv_rx_ns, uint32_t srv_proc_ns,
		      uint32_t srv_send_ns, uint64_t prev_seq)
{
	msg[OFF_TYPE] = BP_PP_REPLY;
	bp_put_le16(msg + OFF_FLAGS, flags);
	bp_put_le32(msg + OFF_SRV_RX, srv_rx_ns);
	bp_put_le32(msg + OFF_SRV_PROC, srv_proc_ns);
	bp_put_le32(msg + OFF_SRV_SEND, srv_send_ns);
	bp_put_le64(msg + OFF_PREV_SEQ, prev_seq);
}

