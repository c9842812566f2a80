/* SPDX-License-Identifier: MIT */
/*
 * The pingpong wire format: exact bytes of the header (a second implementation
 * must agree with them, not just this one with itself), the reply filled in
 * place, control messages, and every reason to refuse a message.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "tools/pingpong/proto.h"

#include "base/bytes.h"

static struct bp_pp_hdr good_request(void)
{
	struct bp_pp_hdr h = {
		.type = BP_PP_REQUEST,
		.length = 64,
		.seq = 0x1122334455667788ull,
		.client_ts = 0x0102030405060708ull,
	};
	return h;
}

static void test_header_bytes(void **state)
{
	struct bp_pp_hdr h = good_request();
	uint8_t b[BP_PP_HDR_LEN];

	h.flags = 0xa1b2;
	h.srv_rx_ns = 0xc0c1c2c3;
	h.srv_proc_ns = 0xd0d1d2d3;
	h.srv_send_ns = 0xe0e1e2e3;
	h.prev_seq = 0xf0f1f2f3f4f5f6f7ull;
	memset(b, 0xee, sizeof(b)); /* the encoder must write every byte */
	bp_pp_hdr_encode(&h, b);
	assert_memory_equal(b, "BPPG", 4);
	assert_int_equal(b[4], BP_PP_VERSION);
	assert_int_equal(b[5], BP_PP_REQUEST);
	assert_int_equal(b[6], 0xb2);
	assert_int_equal(b[7], 0xa1);
	assert_int_equal(bp_get_le32(b + 8), 64);
	assert_int_equal(b[8], 64); /* little-endian */
	assert_int_equal(bp_get_le32(b + 12), 0xc0c1c2c3);
	assert_int_equal(b[16], 0x88);
	assert_int_equal(b[23], 0x11);
	assert_true(bp_get_le64(b + 16) == 0x1122334455667788ull);
	assert_true(bp_get_le64(b + 24) == 0x0102030405060708ull);
	assert_int_equal(bp_get_le32(b + 32), 0xd0d1d2d3);
	assert_int_equal(bp_get_le32(b + 36), 0xe0e1e2e3);
	assert_true(bp_get_le64(b + 40) == 0xf0f1f2f3f4f5f6f7ull);
}

static void test_request_round_trip(void **state)
{
	struct bp_pp_hdr h = good_request(), d;
	uint8_t b[64] = { 0 };

	bp_pp_hdr_encode(&h, b);
	assert_int_equal(bp_pp_hdr_decode(b, sizeof(b), BP_PP_REQUEST, true, &d), BP_PP_OK);
	assert_int_equal(d.version, BP_PP_VERSION);
	assert_int_equal(d.type, BP_PP_REQUEST);
	assert_int_equal(d.length, 64);
	assert_true(d.seq == h.seq);
	assert_true(d.client_ts == h.client_ts);
	/* a stream may hold only the header so far: fine, the caller waits for length */
	assert_int_equal(bp_pp_hdr_decode(b, BP_PP_HDR_LEN, BP_PP_REQUEST, false, &d), BP_PP_OK);
	/* any type when asked for none */
	assert_int_equal(bp_pp_hdr_decode(b, sizeof(b), 0, true, &d), BP_PP_OK);
}

/* The server turns a request into its reply in place; the client's bytes stay. */
static void test_reply_fill(void **state)
{
	struct bp_pp_hdr h = good_request(), d;
	uint8_t b[64], orig[64];

	for (size_t i = 0; i < sizeof(b); i++)
		b[i] = (uint8_t)(i * 7);
	bp_pp_hdr_encode(&h, b);
	memcpy(orig, b, sizeof(b));
	bp_pp_reply_fill(b, BP_PP_F_SRV_TIMED | BP_PP_F_SRV_PREV, 111, 222, 333, 0x42);
	assert_int_equal(bp_pp_hdr_decode(b, sizeof(b), BP_PP_REPLY, true, &d), BP_PP_OK);
	assert_int_equal(d.flags, BP_PP_F_SRV_TIMED | BP_PP_F_SRV_PREV);
	assert_int_equal(d.srv_rx_ns, 111);
	assert_int_equal(d.srv_proc_ns, 222);
	assert_int_equal(d.srv_send_ns, 333);
	assert_true(d.prev_seq == 0x42);
	assert_true(d.seq == h.seq && d.client_ts == h.client_ts && d.length == 64);
	assert_memory_equal(b + BP_PP_HDR_LEN, orig + BP_PP_HDR_LEN, sizeof(b) - BP_PP_HDR_LEN);
	assert_memory_equal(b, orig, 5); /* magic and version */
	assert_memory_equal(b + 8, orig + 8, 4);   /* length */
	assert_memory_equal(b + 16, orig + 16, 16); /* seq and client timestamp */
}

static int decode_req(const uint8_t *b, size_t n, bool dgram)
{
	struct bp_pp_hdr d;

	return bp_pp_hdr_decode(b, n, BP_PP_REQUEST, dgram, &d);
}

static void test_refusals(void **state)
{
	struct bp_pp_hdr h = good_request();
	uint8_t b[128], c[128];

	memset(b, 0, sizeof(b));
	bp_pp_hdr_encode(&h, b);

	/* short: fewer bytes than a header (and 0 bytes) */
	assert_int_equal(decode_req(b, BP_PP_HDR_LEN - 1, true), BP_PP_ERR_SHORT);
	assert_int_equal(decode_req(b, 0, true), BP_PP_ERR_SHORT);
	assert_int_equal(decode_req(b, 3, false), BP_PP_ERR_SHORT);
	/* garbage: wrong magic, even in a short message */
	memcpy(c, b, sizeof(c));
	c[0] = 'X';
	assert_int_equal(decode_req(c, 64, true), BP_PP_ERR_MAGIC);
	assert_int_equal(decode_req(c, 10, true), BP_PP_ERR_MAGIC);
	/* version */
	memcpy(c, b, sizeof(c));
	c[4] = BP_PP_VERSION + 1;
	assert_int_equal(decode_req(c, 64, true), BP_PP_ERR_VERSION);
	/* type: unknown, and known but not the one expected */
	memcpy(c, b, sizeof(c));
	c[5] = 9;
	assert_int_equal(decode_req(c, 64, true), BP_PP_ERR_TYPE);
	c[5] = 0;
	assert_int_equal(decode_req(c, 64, true), BP_PP_ERR_TYPE);
	c[5] = BP_PP_REPLY;
	assert_int_equal(decode_req(c, 64, true), BP_PP_ERR_TYPE);
	/* flags: none in a request; only known ones in a reply */
	memcpy(c, b, sizeof(c));
	bp_put_le16(c + 6, BP_PP_F_SRV_TIMED);
	assert_int_equal(decode_req(c, 64, true), BP_PP_ERR_FLAGS);
	c[5] = BP_PP_REPLY;
	{
		struct bp_pp_hdr d;

		assert_int_equal(bp_pp_hdr_decode(c, 64, BP_PP_REPLY, true, &d), BP_PP_OK);
		bp_put_le16(c + 6, 0x8000);
		assert_int_equal(bp_pp_hdr_decode(c, 64, BP_PP_REPLY, true, &d), BP_PP_ERR_FLAGS);
	}
	/* length field: below the header, above the maximum */
	memcpy(c, b, sizeof(c));
	bp_put_le32(c + 8, BP_PP_HDR_LEN - 1);
	assert_int_equal(decode_req(c, BP_PP_HDR_LEN, false), BP_PP_ERR_LENGTH);
	bp_put_le32(c + 8, BP_PP_MAX_LEN + 1);
	assert_int_equal(decode_req(c, BP_PP_HDR_LEN, false), BP_PP_ERR_LENGTH);
	bp_put_le32(c + 8, 0xffffffffu);
	assert_int_equal(decode_req(c, BP_PP_HDR_LEN, false), BP_PP_ERR_LENGTH);
	/* datagram size against the length field */
	assert_int_equal(decode_req(b, 65, true), BP_PP_ERR_OVERSIZED);
	assert_int_equal(decode_req(b, 128, true), BP_PP_ERR_OVERSIZED);
	assert_int_equal(decode_req(b, 63, true), BP_PP_ERR_TRUNCATED);
	assert_int_equal(decode_req(b, BP_PP_HDR_LEN, true), BP_PP_ERR_TRUNCATED);
	/* ...which a stream does not check (more may come, or the next message follows) */
	assert_int_equal(decode_req(b, 63, false), BP_PP_OK);
	assert_int_equal(decode_req(b, 128, false), BP_PP_OK);
	/* version 1's control types (3, 4) are no type now: control is tools/harness/control.h */
	memcpy(c, b, sizeof(c));
	for (uint8_t t = 3; t <= 4; t++) {
		struct bp_pp_hdr d;

		c[5] = t;
		assert_int_equal(bp_pp_hdr_decode(c, 64, 0, false, &d), BP_PP_ERR_TYPE);
	}
	for (int e = 0; e <= BP_PP_ERR_COUNT; e++)
		assert_non_null(bp_pp_err_text(e));
	assert_string_equal(bp_pp_err_text(BP_PP_ERR_MAGIC), "wrong magic (not busypoll pingpong)");
}

static void test_sat32(void **state)
{
	assert_int_equal(bp_pp_sat32(0), 0);
	assert_int_equal(bp_pp_sat32(12345), 12345);
	assert_true(bp_pp_sat32(UINT32_MAX) == UINT32_MAX);
	assert_true(bp_pp_sat32((uint64_t)UINT32_MAX + 1) == UINT32_MAX);
	assert_true(bp_pp_sat32(UINT64_MAX) == UINT32_MAX);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_header_bytes),
		cmocka_unit_test(test_request_round_trip),
		cmocka_unit_test(test_reply_fill),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_sat32),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
