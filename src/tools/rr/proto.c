/* SPDX-License-Identifier: MIT */
/* rr hello and ack: fixed-size little-endian records (contract in tools/rr/proto.h). */
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
	if (h->kind != BP_RR_KIND_DATA)
		return BP_RR_REFUSE_KIND;
	if (bp_get_le32(b + 28) != 0 || h->flags)
		return BP_RR_REFUSE_RESERVED;
	if (h->request_size == 0 || h->response_size == 0 || h->request_size > BP_RR_MAX_SIZE ||
	    h->response_size > BP_RR_MAX_SIZE)
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

