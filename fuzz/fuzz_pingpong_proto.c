/* SPDX-License-Identifier: MIT */
/*
 * The pingpong messages a peer sends (src/tools/pingpong/proto.h): the 48-byte
 * header on a stream or as a whole datagram and the in-place reply (its control
 * session is fuzz_control.c's). The first input byte picks how to decode (expected
 * type, datagram or stream); the rest is the message, in an exact-size buffer.
 * Properties:
 *  - the decoders return only BP_PP_OK or a BP_PP_ERR_* with a text, and never read
 *    past the bytes at hand (a short stream says SHORT or MAGIC, nothing more);
 *  - an accepted header obeys its contract (version, type against want_type, flags
 *    only on replies and only known ones, length within the limits, a datagram
 *    exactly its length) and re-encodes to the same 48 bytes;
 *  - a request turned into a reply in place decodes as that reply, same seq,
 *    client_ts, length and payload.
 */
#include <string.h>

#include "tools/pingpong/proto.h"

#include "fuzz.h"

static void check_err(int r)
{
	FUZZ_CHECK(r >= BP_PP_OK && r < BP_PP_ERR_COUNT, "decode returned %d", r);
	FUZZ_CHECK(strcmp(bp_pp_err_text(r), "unknown error"), "error %d has no text", r);
}

static void fuzz_hdr(const uint8_t *b, size_t len, int want_type, bool dgram)
{
	struct bp_pp_hdr h, h2;
	uint8_t out[BP_PP_HDR_LEN];
	int r = bp_pp_hdr_decode(b, len, want_type, dgram, &h);

	check_err(r);
	if (len < BP_PP_HDR_LEN)
		FUZZ_CHECK(r == BP_PP_ERR_SHORT || r == BP_PP_ERR_MAGIC, "short header gave %d", r);
	if (r != BP_PP_OK)
		return;
	FUZZ_CHECK(h.version == BP_PP_VERSION, "version %u accepted", h.version);
	FUZZ_CHECK(h.type == BP_PP_REQUEST || h.type == BP_PP_REPLY, "type %u", h.type);
	FUZZ_CHECK(!want_type || h.type == want_type, "type %u where %d was wanted", h.type, want_type);
	FUZZ_CHECK(h.type == BP_PP_REPLY ? !(h.flags & ~BP_PP_F_ALL) : !h.flags, "flags %#x on type %u",
		   h.flags, h.type);
	FUZZ_CHECK(h.length >= BP_PP_HDR_LEN && h.length <= BP_PP_MAX_LEN, "length %u", h.length);
	if (dgram)
		FUZZ_CHECK(h.length == len, "datagram of %zu accepted with length %u", len, h.length);
	bp_pp_hdr_encode(&h, out);
	FUZZ_CHECK(!memcmp(out, b, sizeof(out)), "accepted header does not re-encode to itself");

	if (h.type == BP_PP_REQUEST && h.length <= len) {
		uint8_t *msg = fuzz_dup(b, h.length);

		bp_pp_reply_fill(msg, BP_PP_F_SRV_TIMED | BP_PP_F_SRV_PREV, 1, 2, 3, h.seq - 1);
		r = bp_pp_hdr_decode(msg, h.length, BP_PP_REPLY, dgram, &h2);
		FUZZ_CHECK(r == BP_PP_OK, "reply made in place refused: %s", bp_pp_err_text(r));
		FUZZ_CHECK(h2.seq == h.seq && h2.client_ts == h.client_ts && h2.length == h.length,
			   "reply changed what it echoes");
		FUZZ_CHECK(!memcmp(msg + BP_PP_HDR_LEN, b + BP_PP_HDR_LEN, h.length - BP_PP_HDR_LEN),
			   "reply changed the payload");
		free(msg);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t sel;
	int want_type;
	uint8_t *b;

	if (size < 1 || size > BP_PP_MAX_LEN + 64)
		return 0;
	sel = data[0];
	want_type = (sel >> 1) % 5; /* 0 = any, else that type (3 and 4 are no type now: refused) */
	data++;
	size--;
	b = fuzz_dup(data, size);
	fuzz_hdr(b, size, want_type, sel & 1);
	free(b);
	return 0;
}
