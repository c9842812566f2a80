/* SPDX-License-Identifier: MIT */
/*
 * The rr records a peer sends (src/tools/rr/proto.h): the server decodes
 * hellos and control commands, the client acks and STATS. The first input byte picks
 * the record; the rest, cut or zero-padded to the record's size, is handed over in
 * an exact-size buffer. Properties:
 *  - decoders return only their documented values and never read past the record;
 *  - where the format is canonical, an accepted record re-encodes to the same bytes:
 *    hello and command exactly; ack except its reserved u32, which the decoder
 *    ignores; STATS except the pad u16 and the mode text's last byte, which the
 *    decoder forces to NUL;
 *  - decoded values are in range: hello kind and sizes, STATS napi count and a
 *    NUL-terminated mode.
 */
#include <errno.h>
#include <string.h>

#include "tools/rr/proto.h"

#include "fuzz.h"

enum { REC_HELLO, REC_ACK, REC_CMD, REC_STATS, N_REC };

static const size_t rec_len[N_REC] = { BP_RR_HELLO_LEN, BP_RR_ACK_LEN, BP_RR_CMD_LEN,
				       BP_RR_STATS_LEN };

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
	FUZZ_CHECK(h.kind == BP_RR_KIND_DATA || h.kind == BP_RR_KIND_CONTROL, "kind %u", h.kind);
	FUZZ_CHECK(h.request_size >= 1 && h.request_size <= BP_RR_MAX_SIZE &&
		   h.response_size >= 1 && h.response_size <= BP_RR_MAX_SIZE,
		   "sizes %u/%u accepted", h.request_size, h.response_size);
	if (h.flags & BP_RR_FLAG_UDP)
		FUZZ_CHECK(h.request_size >= 8 && h.request_size <= BP_RR_UDP_MAX_SIZE &&
			   h.response_size <= BP_RR_UDP_MAX_SIZE,
			   "udp sizes %u/%u accepted", h.request_size, h.response_size);
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

static void fuzz_cmd(const uint8_t *b)
{
	uint32_t cmd;
	uint64_t run_id;
	uint8_t out[BP_RR_CMD_LEN];
	int r = bp_rr_cmd_decode(b, &cmd, &run_id);

	FUZZ_CHECK(r == 0 || r == -EPROTO, "cmd decode %d", r);
	if (r)
		return;
	FUZZ_CHECK(cmd == BP_RR_CMD_START || cmd == BP_RR_CMD_STOP, "command %u accepted", cmd);
	bp_rr_cmd_encode(cmd, run_id, out);
	FUZZ_CHECK(!memcmp(out, b, sizeof(out)), "accepted command does not re-encode to itself");
}

static void fuzz_stats(const uint8_t *b)
{
	struct bp_rr_stats s;
	uint8_t *out = malloc(BP_RR_STATS_LEN);
	int r;

	if (!out)
		abort();
	memset(&s, 0xa5, sizeof(s));
	r = bp_rr_stats_decode(b, &s);
	FUZZ_CHECK(r == 0 || r == -EPROTO, "stats decode %d", r);
	if (r == 0) {
		FUZZ_CHECK(s.n_napi_ids <= 8, "n_napi_ids %u accepted", s.n_napi_ids);
		FUZZ_CHECK(memchr(s.mode, 0, sizeof(s.mode)), "mode text not terminated");
		bp_rr_stats_encode(&s, out);
		FUZZ_CHECK(!memcmp(out, b, 6), "stats header differs");
		FUZZ_CHECK(!memcmp(out + 8, b + 8, BP_RR_STATS_LEN - 9),
			   "accepted STATS does not re-encode to itself");
	}
	free(out);
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
	case REC_CMD: fuzz_cmd(b); break;
	case REC_STATS: fuzz_stats(b); break;
	}
	free(b);
	return 0;
}
