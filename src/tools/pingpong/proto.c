/* SPDX-License-Identifier: MIT */
/* pingpong header, in-place reply and control messages (contract in pingpong_proto.h). */
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
	if (h->type < BP_PP_REQUEST || h->type > BP_PP_CONTROL_REPLY ||
	    (want_type && h->type != want_type))
		return BP_PP_ERR_TYPE;
	if (h->type == BP_PP_REPLY ? (h->flags & ~BP_PP_F_ALL) != 0 : h->flags != 0)
		return BP_PP_ERR_FLAGS;
	if (h->length < BP_PP_HDR_LEN || h->length > BP_PP_MAX_LEN)
		return BP_PP_ERR_LENGTH;
	if ((h->type == BP_PP_CONTROL || h->type == BP_PP_CONTROL_REPLY) &&
	    h->length != BP_PP_CTL_MSG_LEN)
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

/* ---- control ---- */

/* The u64 stats in body order, after the six u32 fields. */
#define CTL_OFF_STATS 24
#define CTL_OFF_TEXT (CTL_OFF_STATS + 13 * 8)
#define STATS_FIELDS(X)                                                                      \
	X(requests) X(dropped) X(interval_ns) X(syscalls) X(empty_polls) X(waits) X(wakeups) \
	X(utime_us) X(stime_us) X(nvcsw) X(nivcsw) X(busy_poll_rx) X(net_rx)

_Static_assert(CTL_OFF_TEXT + BP_PP_CTL_TEXT_LEN == BP_PP_CTL_BODY_LEN,
	       "the control body is exactly 256 bytes");

void bp_pp_ctl_encode(uint8_t type, uint64_t seq, const struct bp_pp_ctl *c,
		      uint8_t buf[BP_PP_CTL_MSG_LEN])
{
	struct bp_pp_hdr h = { .type = type, .length = BP_PP_CTL_MSG_LEN, .seq = seq };
	uint8_t *b = buf + BP_PP_HDR_LEN;
	size_t off = CTL_OFF_STATS, tlen = strnlen(c->text, BP_PP_CTL_TEXT_LEN - 1);

	bp_pp_hdr_encode(&h, buf);
	bp_put_le32(b + 0, c->cmd);
	bp_put_le32(b + 4, c->status);
	bp_put_le32(b + 8, c->flags);
	bp_put_le32(b + 12, (uint32_t)c->cpu);
	bp_put_le32(b + 16, c->delay_us);
	bp_put_le32(b + 20, c->napi_id);
#define PUT(f)                                   \
	bp_put_le64(b + off, c->stats.f);        \
	off += 8;
	STATS_FIELDS(PUT)
#undef PUT
	/* Zero-padded: no stack bytes of ours ever go on the wire. */
	memset(b + CTL_OFF_TEXT, 0, BP_PP_CTL_TEXT_LEN);
	memcpy(b + CTL_OFF_TEXT, c->text, tlen);
}

int bp_pp_ctl_decode(const uint8_t buf[BP_PP_CTL_MSG_LEN], int want_type, uint64_t *seq,
		     struct bp_pp_ctl *c)
{
	struct bp_pp_hdr h;
	const uint8_t *b = buf + BP_PP_HDR_LEN;
	size_t off = CTL_OFF_STATS;
	int ret = bp_pp_hdr_decode(buf, BP_PP_CTL_MSG_LEN, want_type, false, &h);

	memset(c, 0, sizeof(*c));
	if (ret == BP_PP_OK && h.type != BP_PP_CONTROL && h.type != BP_PP_CONTROL_REPLY)
		ret = BP_PP_ERR_TYPE;
	if (ret != BP_PP_OK)
		return ret;
	*seq = h.seq;
	c->cmd = bp_get_le32(b + 0);
	c->status = bp_get_le32(b + 4);
	c->flags = bp_get_le32(b + 8);
	c->cpu = (int32_t)bp_get_le32(b + 12);
	c->delay_us = bp_get_le32(b + 16);
	c->napi_id = bp_get_le32(b + 20);
#define GET(f)                                   \
	c->stats.f = bp_get_le64(b + off);       \
	off += 8;
	STATS_FIELDS(GET)
#undef GET
	memcpy(c->text, b + CTL_OFF_TEXT, BP_PP_CTL_TEXT_LEN);
	c->text[BP_PP_CTL_TEXT_LEN - 1] = 0;
	if (c->cmd < BP_PP_CMD_HELLO || c->cmd > BP_PP_CMD_RUN_STOP)
		return BP_PP_ERR_TYPE;
	return BP_PP_OK;
}
