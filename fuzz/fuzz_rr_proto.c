/* SPDX-License-Identifier: MIT */
/*
 * The rr records a peer sends (src/tools/rr/proto.h): the server decodes data
 * hellos, the client acks (the control session is fuzz_control.c's). The first input byte picks
 * the record; the rest, cut or zero-padded to the record's size, is handed over in
 * an exact-size buffer. Properties:
 *  - decoders return only their documented values and never read past the record;
 *  - where the format is canonical, an accepted record re-encodes to the same bytes:
 *    hello exactly; ack except its reserved u32, which the decoder ignores;
 *  - decoded values are in range: hello kind and sizes.
 */
#include <errno.h>
#include <string.h>

#include "tools/rr/proto.h"

#include "fuzz.h"

enum { REC_HELLO, REC_ACK, N_REC };

static const size_t rec_len[N_REC] = { BP_RR_HELLO_LEN, BP_RR_ACK_LEN };

static void fuzz_hello(const uint8_t *b)
{
	struct bp_rr_hello h;
	uint8_t out[BP_RR_HELLO_LEN];
	int st = bp_rr_hello_decode(b, &h);

	FUZZ_CHECK(st >= BP_RR_OK && st <= BP_RR_REFUSE_BUSY, "hello status %d", st);
	FUZZ_CHECK(strcmp(bp_rr_refuse_reason(st), "unknown refusal"), "status %d has no reason", st);
	if (st != BP_RR_OK)
		return;
	FUZZ_CHECK(h.version == BP_RR_VERSION, "version %u accepted", h.version);
	FUZZ_CHECK(h.kind == BP_RR_KIND_DATA && h.flags == 0, "kind %u flags %u", h.kind, h.flags);
	FUZZ_CHECK(h.request_size >= 1 && h.request_size <= BP_RR_MAX_SIZE &&
		   h.response_size >= 1 && h.response_size <= BP_RR_MAX_SIZE,
		   "sizes %u/%u accepted", h.request_size, h.response_size);
	bp_rr_hello_encode(&h, out);
	FUZZ_CHECK(!memcmp(out, b, sizeof(out)), "accepted hello does not re-encode to itself");
}

static void fuzz_ack(const uint8_t *b)
{
	struct bp_rr_ack a;
	uint8_t out[BP_RR_ACK_LEN];
	int r = bp_rr_ack_decode(b, &a);

	FUZZ_CHECK(r == 0 || r == -EPROTO, "ack decode %d", r);
	if (r)
		return;
	(void)bp_rr_refuse_reason(a.status); /* any status: the client prints it */
	bp_rr_ack_encode(&a, out);
	FUZZ_CHECK(!memcmp(out, b, 12), "accepted ack does not re-encode to itself");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned rec;
	size_t len, take;
	uint8_t *b;

	if (size < 1)
		return 0;
	rec = data[0] % N_REC;
	len = rec_len[rec];
	take = size - 1 < len ? size - 1 : len;
	b = malloc(len); /* exactly the record: a read past it is an ASan report */
	if (!b)
		abort();
	memset(b, 0, len);
	memcpy(b, data + 1, take);
	switch (rec) {
	case REC_HELLO: fuzz_hello(b); break;
	case REC_ACK: fuzz_ack(b); break;
	}
	free(b);
	return 0;
}
