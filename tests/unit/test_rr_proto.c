/* SPDX-License-Identifier: MIT */
/*
 * The rr wire protocol: exact bytes of the hello (two implementations must agree on
 * them, not just this one with itself), round trips, and every reason to refuse.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "tools/rr/proto.h"

#include "base/bytes.h"

static struct bp_rr_hello good_hello(void)
{
	struct bp_rr_hello h = {
		.version = BP_RR_VERSION,
		.kind = BP_RR_KIND_DATA,
		.flags = 0,
		.request_size = 0x00f10203, /* below 16 MiB, every byte distinct */
		.response_size = 0x00a0b0c0,
		.run_id = 0x1122334455667788ull,
		.flow_id = 0xdeadbeef,
	};
	return h;
}

static void test_hello_bytes(void **state)
{
	struct bp_rr_hello h = good_hello();
	uint8_t b[BP_RR_HELLO_LEN];

	memset(b, 0xff, sizeof(b)); /* the encoder must write every byte, reserved ones too */
	bp_rr_hello_encode(&h, b);
	assert_int_equal(b[0], 'B');
	assert_int_equal(b[1], 'P');
	assert_int_equal(b[2], 'R');
	assert_int_equal(b[3], 'R');
	assert_int_equal(b[4], BP_RR_VERSION & 0xff);
	assert_int_equal(b[5], BP_RR_VERSION >> 8);
	assert_int_equal(b[6], BP_RR_KIND_DATA);
	assert_int_equal(b[7], 0);
	/* request_size at 8, response_size at 12, little-endian */
	assert_int_equal(b[8], 0x03);
	assert_int_equal(b[9], 0x02);
	assert_int_equal(b[10], 0xf1);
	assert_int_equal(b[11], 0x00);
	assert_int_equal(b[12], 0xc0);
	assert_int_equal(b[13], 0xb0);
	assert_int_equal(b[14], 0xa0);
	assert_int_equal(b[15], 0x00);
	/* run_id at 16, flow_id at 24, reserved zero at 28 */
	assert_int_equal(b[16], 0x88);
	assert_int_equal(b[23], 0x11);
	assert_int_equal(b[24], 0xef);
	assert_int_equal(b[27], 0xde);
	for (int i = 28; i < 32; i++)
		assert_int_equal(b[i], 0);
}

static void test_hello_round_trip(void **state)
{
	struct bp_rr_hello h = good_hello(), d;
	uint8_t b[BP_RR_HELLO_LEN];

	bp_rr_hello_encode(&h, b);
	memset(&d, 0x5a, sizeof(d));
	assert_int_equal(bp_rr_hello_decode(b, &d), BP_RR_OK);
	assert_int_equal(d.version, h.version);
	assert_int_equal(d.kind, h.kind);
	assert_int_equal(d.flags, h.flags);
	assert_int_equal(d.request_size, h.request_size);
	assert_int_equal(d.response_size, h.response_size);
	assert_true(d.run_id == h.run_id);
	assert_int_equal(d.flow_id, h.flow_id);

	/* TCP at its limits: 1 byte and 16 MiB. */
	h = good_hello();
	h.request_size = 1;
	h.response_size = BP_RR_MAX_SIZE;
	bp_rr_hello_encode(&h, b);
	assert_int_equal(bp_rr_hello_decode(b, &d), BP_RR_OK);
	assert_int_equal(d.response_size, 16u << 20);
}

/* decode - encode h, set byte patch_at (if >= 0) to patch_val, return the verdict. */
static int decode(const struct bp_rr_hello *h, int patch_at, uint8_t patch_val)
{
	uint8_t b[BP_RR_HELLO_LEN];
	struct bp_rr_hello d;

	bp_rr_hello_encode(h, b);
	if (patch_at >= 0)
		b[patch_at] = patch_val;
	return bp_rr_hello_decode(b, &d);
}

static void test_hello_rejections(void **state)
{
	struct bp_rr_hello h = good_hello();

	assert_int_equal(decode(&h, -1, 0), BP_RR_OK);
	/* magic: any byte of it */
	for (int i = 0; i < 4; i++)
		assert_int_equal(decode(&h, i, 'X'), BP_RR_REFUSE_MAGIC);
	/* version */
	h.version = BP_RR_VERSION + 1;
	assert_int_equal(decode(&h, -1, 0), BP_RR_REFUSE_VERSION);
	h.version = 0;
	assert_int_equal(decode(&h, -1, 0), BP_RR_REFUSE_VERSION);
	h = good_hello();
	/* kind: only data flows (1, version 1's control kind, is gone: control is tools/harness/control.h) */
	h.kind = 1;
	assert_int_equal(decode(&h, -1, 0), BP_RR_REFUSE_KIND);
	h.kind = 2;
	assert_int_equal(decode(&h, -1, 0), BP_RR_REFUSE_KIND);
	h.kind = 0xff;
	assert_int_equal(decode(&h, -1, 0), BP_RR_REFUSE_KIND);
	h = good_hello();
	/* sizes: 0 either way, above 16 MiB either way */
	h.request_size = 0;
	assert_int_equal(decode(&h, -1, 0), BP_RR_REFUSE_SIZE);
	h = good_hello();
	h.response_size = 0;
	assert_int_equal(decode(&h, -1, 0), BP_RR_REFUSE_SIZE);
	h = good_hello();
	h.request_size = BP_RR_MAX_SIZE + 1;
	assert_int_equal(decode(&h, -1, 0), BP_RR_REFUSE_SIZE);
	h = good_hello();
	h.response_size = BP_RR_MAX_SIZE + 1;
	assert_int_equal(decode(&h, -1, 0), BP_RR_REFUSE_SIZE);
	h.response_size = UINT32_MAX;
	assert_int_equal(decode(&h, -1, 0), BP_RR_REFUSE_SIZE);
	/* reserved: any flag bit (a data flow has none), any byte of the reserved field */
	h = good_hello();
	h.flags = 0x01;
	assert_int_equal(decode(&h, -1, 0), BP_RR_REFUSE_RESERVED);
	h.flags = 0x80;
	assert_int_equal(decode(&h, -1, 0), BP_RR_REFUSE_RESERVED);
	h = good_hello();
	for (int i = 28; i < 32; i++)
		assert_int_equal(decode(&h, i, 1), BP_RR_REFUSE_RESERVED);
}

static void test_refuse_reasons(void **state)
{
	/* Every status has its own text; unknown ones still get one. */
	for (int s = BP_RR_OK; s <= BP_RR_REFUSE_BUSY; s++) {
		assert_non_null(bp_rr_refuse_reason(s));
		for (int t = BP_RR_OK; t < s; t++)
			assert_string_not_equal(bp_rr_refuse_reason(s), bp_rr_refuse_reason(t));
	}
	assert_non_null(bp_rr_refuse_reason(999));
}

static void test_ack(void **state)
{
	struct bp_rr_ack a = { .status = BP_RR_REFUSE_BUSY, .napi_id = 0x12345678 }, d;
	uint8_t b[BP_RR_ACK_LEN];

	memset(b, 0xff, sizeof(b));
	bp_rr_ack_encode(&a, b);
	assert_memory_equal(b, "BPRR", 4);
	assert_int_equal(bp_get_le16(b + 4), BP_RR_VERSION);
	assert_int_equal(bp_get_le16(b + 6), BP_RR_REFUSE_BUSY);
	assert_int_equal(bp_get_le32(b + 8), 0x12345678);
	assert_int_equal(bp_get_le32(b + 12), 0);
	memset(&d, 0, sizeof(d));
	assert_int_equal(bp_rr_ack_decode(b, &d), 0);
	assert_int_equal(d.status, BP_RR_REFUSE_BUSY);
	assert_int_equal(d.napi_id, 0x12345678);

	b[0] = 'b';
	assert_int_equal(bp_rr_ack_decode(b, &d), -EPROTO);
	bp_rr_ack_encode(&a, b);
	bp_put_le16(b + 4, BP_RR_VERSION + 1);
	assert_int_equal(bp_rr_ack_decode(b, &d), -EPROTO);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hello_bytes),
		cmocka_unit_test(test_hello_round_trip),
		cmocka_unit_test(test_hello_rejections),
		cmocka_unit_test(test_refuse_reasons),
		cmocka_unit_test(test_ack),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
