/* SPDX-License-Identifier: MIT */
/* rr hello, ack, control commands and stats: fixed-size little-endian records. */
#include <errno.h>
#include <string.h>

#include "tools/rr/proto.h"

#include "base/bytes.h"

void bp_rr_hello_encode(const struct bp_rr_hello *h, uint8_t b[BP_RR_HELLO_LEN])
{
	memset(b, 0, BP_RR_HELLO_LEN);
	bp_put_le32(b, BP_RR_MAGIC);
	bp_put_le16(b + 4, h->version);
	b[6] = h->kind;
	b[7] = h->flags;
	bp_put_le32(b + 8, h->request_size);
	bp_put_le32(b + 12, h->response_size);
	bp_put_le64(b + 16, h->run_id);
	bp_put_le32(b + 24, h->flow_id);
}

int bp_rr_hello_decode(const uint8_t b[BP_RR_HELLO_LEN], struct bp_rr_hello *h)
{
	uint32_t max;

	if (bp_get_le32(b) != BP_RR_MAGIC)
		return BP_RR_REFUSE_MAGIC;
	h->version = bp_get_le16(b + 4);
	h->kind = b[6];
	h->flags = b[7];
	h->request_size = bp_get_le32(b + 8);
	h->response_size = bp_get_le32(b + 12);
	h->run_id = bp_get_le64(b + 16);
	h->flow_id = bp_get_le32(b + 24);
	if (h->version != BP_RR_VERSION)
		return BP_RR_REFUSE_VERSION;
	if (h->kind != BP_RR_KIND_DATA && h->kind != BP_RR_KIND_CONTROL)
		return BP_RR_REFUSE_KIND;
	if (bp_get_le32(b + 28) != 0 || (h->flags & ~BP_RR_FLAG_UDP))
		return BP_RR_REFUSE_RESERVED;
	max = (h->flags & BP_RR_FLAG_UDP) ? BP_RR_UDP_MAX_SIZE : BP_RR_MAX_SIZE;
	if (h->request_size == 0 || h->response_size == 0 || h->request_size > max ||
	    h->response_size > max)
		return BP_RR_REFUSE_SIZE;
	if ((h->flags & BP_RR_FLAG_UDP) && h->request_size < 8)
		return BP_RR_REFUSE_SIZE;
	return BP_RR_OK;
}

void bp_rr_ack_encode(const struct bp_rr_ack *a, uint8_t b[BP_RR_ACK_LEN])
{
	memset(b, 0, BP_RR_ACK_LEN);
	bp_put_le32(b, BP_RR_MAGIC);
	bp_put_le16(b + 4, BP_RR_VERSION);
	bp_put_le16(b + 6, a->status);
	bp_put_le32(b + 8, a->napi_id);
}

int bp_rr_ack_decode(const uint8_t b[BP_RR_ACK_LEN], struct bp_rr_ack *a)
{
	if (bp_get_le32(b) != BP_RR_MAGIC || bp_get_le16(b + 4) != BP_RR_VERSION)
		return -EPROTO;
	a->status = bp_get_le16(b + 6);
	a->napi_id = bp_get_le32(b + 8);
	return 0;
}

const char *bp_rr_refuse_reason(int status)
{
	switch (status) {
	case BP_RR_OK: return "accepted";
	case BP_RR_REFUSE_MAGIC: return "wrong magic (not a busypoll rr client)";
	case BP_RR_REFUSE_VERSION: return "unsupported protocol version";
	case BP_RR_REFUSE_KIND: return "unknown connection kind";
	case BP_RR_REFUSE_SIZE: return "request or response size out of range";
	case BP_RR_REFUSE_RESERVED: return "reserved bits set";
	case BP_RR_REFUSE_BUSY: return "server at its limit";
	default: return "unknown refusal";
	}
}

void bp_rr_cmd_encode(uint32_t cmd, uint64_t run_id, uint8_t b[BP_RR_CMD_LEN])
{
	bp_put_le32(b, BP_RR_MAGIC);
	bp_put_le32(b + 4, cmd);
	bp_put_le64(b + 8, run_id);
}

int bp_rr_cmd_decode(const uint8_t b[BP_RR_CMD_LEN], uint32_t *cmd, uint64_t *run_id)
{
	if (bp_get_le32(b) != BP_RR_MAGIC)
		return -EPROTO;
	*cmd = bp_get_le32(b + 4);
	*run_id = bp_get_le64(b + 8);
	if (*cmd != BP_RR_CMD_START && *cmd != BP_RR_CMD_STOP)
		return -EPROTO;
	return 0;
}

/* The u64 fields of bp_rr_stats in wire order. */
#define STATS_U64_FIELDS(X) \
	X(transactions) X(interval_ns) X(utime_us) X(stime_us) X(nvcsw) X(nivcsw) \
	X(busy_poll_rx) X(net_rx) X(syscalls) X(empty_polls) X(wakeups) X(waits) X(completions)

void bp_rr_stats_encode(const struct bp_rr_stats *s, uint8_t b[BP_RR_STATS_LEN])
{
	uint8_t *p = b + 8;

	memset(b, 0, BP_RR_STATS_LEN);
	bp_put_le32(b, BP_RR_MAGIC);
	bp_put_le16(b + 4, BP_RR_VERSION);
#define PUT(f) bp_put_le64(p, s->f); p += 8;
	STATS_U64_FIELDS(PUT)
#undef PUT
	bp_put_le32(p, s->threads);
	bp_put_le32(p + 4, s->n_napi_ids);
	p += 8;
	for (int i = 0; i < 8; i++, p += 4)
		bp_put_le32(p, s->napi_ids[i]);
	memcpy(p, s->mode, sizeof(s->mode));
	p[sizeof(s->mode) - 1] = 0;
}

int bp_rr_stats_decode(const uint8_t b[BP_RR_STATS_LEN], struct bp_rr_stats *s)
{
	const uint8_t *p = b + 8;

	if (bp_get_le32(b) != BP_RR_MAGIC || bp_get_le16(b + 4) != BP_RR_VERSION)
		return -EPROTO;
#define GET(f) s->f = bp_get_le64(p); p += 8;
	STATS_U64_FIELDS(GET)
#undef GET
	s->threads = bp_get_le32(p);
	s->n_napi_ids = bp_get_le32(p + 4);
	p += 8;
	if (s->n_napi_ids > 8)
		return -EPROTO;
	for (int i = 0; i < 8; i++, p += 4)
		s->napi_ids[i] = bp_get_le32(p);
	memcpy(s->mode, p, sizeof(s->mode));
	s->mode[sizeof(s->mode) - 1] = 0;
	return 0;
}
