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

	/* A control hello announcing a UDP run, at the UDP limits. */
	h.kind = BP_RR_KIND_CONTROL;
	h.flags = BP_RR_FLAG_UDP;
	h.request_size = 8;
	h.response_size = BP_RR_UDP_MAX_SIZE;
	bp_rr_hello_encode(&h, b);
	assert_int_equal(bp_rr_hello_decode(b, &d), BP_RR_OK);
	assert_int_equal(d.kind, BP_RR_KIND_CONTROL);
	assert_int_equal(d.flags, BP_RR_FLAG_UDP);
	assert_int_equal(d.request_size, 8);
	assert_int_equal(d.response_size, BP_RR_UDP_MAX_SIZE);

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
	/* kind */
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
	/* UDP: request < 8 (no room for the run id), sizes above a datagram */
	h = good_hello();
	h.flags = BP_RR_FLAG_UDP;
	h.request_size = 7;
	h.response_size = 1;
	assert_int_equal(decode(&h, -1, 0), BP_RR_REFUSE_SIZE);
	h.request_size = 8;
	assert_int_equal(decode(&h, -1, 0), BP_RR_OK);
	h.request_size = BP_RR_UDP_MAX_SIZE + 1;
	assert_int_equal(decode(&h, -1, 0), BP_RR_REFUSE_SIZE);
	h.request_size = 8;
	h.response_size = BP_RR_UDP_MAX_SIZE + 1;
	assert_int_equal(decode(&h, -1, 0), BP_RR_REFUSE_SIZE);
	/* ... which TCP allows */
	h.flags = 0;
	assert_int_equal(decode(&h, -1, 0), BP_RR_OK);
	/* reserved: unknown flag bits, any byte of the reserved field */
	h = good_hello();
	h.flags = 0x02;
	assert_int_equal(decode(&h, -1, 0), BP_RR_REFUSE_RESERVED);
	h.flags = 0x80 | BP_RR_FLAG_UDP;
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

static void test_cmd(void **state)
{
	uint8_t b[BP_RR_CMD_LEN];
	uint32_t cmd = 0;
	uint64_t run = 0;

	bp_rr_cmd_encode(BP_RR_CMD_START, 0xa1b2c3d4e5f60718ull, b);
	assert_memory_equal(b, "BPRR", 4);
	assert_int_equal(bp_rr_cmd_decode(b, &cmd, &run), 0);
	assert_int_equal(cmd, BP_RR_CMD_START);
	assert_true(run == 0xa1b2c3d4e5f60718ull);
	bp_rr_cmd_encode(BP_RR_CMD_STOP, 7, b);
	assert_int_equal(bp_rr_cmd_decode(b, &cmd, &run), 0);
	assert_int_equal(cmd, BP_RR_CMD_STOP);
	assert_true(run == 7);

	bp_rr_cmd_encode(3, 7, b);
	assert_int_equal(bp_rr_cmd_decode(b, &cmd, &run), -EPROTO);
	bp_rr_cmd_encode(0, 7, b);
	assert_int_equal(bp_rr_cmd_decode(b, &cmd, &run), -EPROTO);
	bp_rr_cmd_encode(BP_RR_CMD_START, 7, b);
	b[3] = 0;
	assert_int_equal(bp_rr_cmd_decode(b, &cmd, &run), -EPROTO);
}

static struct bp_rr_stats sample_stats(void)
{
	struct bp_rr_stats s;

	/* Distinct values in every byte, so a swapped or misplaced field shows. */
	memset(&s, 0, sizeof(s));
	s.transactions = 0x0101010101010101ull;
	s.interval_ns = 0x0202020202020202ull;
	s.utime_us = 3;
	s.stime_us = 4;
	s.nvcsw = 5;
	s.nivcsw = 6;
	s.busy_poll_rx = 7;
	s.net_rx = 8;
	s.syscalls = 9;
	s.empty_polls = 10;
	s.wakeups = 11;
	s.waits = 12;
	s.completions = 0xfedcba9876543210ull;
	s.threads = 64;
	s.n_napi_ids = 8;
	for (int i = 0; i < 8; i++)
		s.napi_ids[i] = 8193 + (uint32_t)i;
	snprintf(s.mode, sizeof(s.mode), "epoll:napi,usecs=64,budget=8,prefer");
	return s;
}

static void test_stats_round_trip(void **state)
{
	struct bp_rr_stats s = sample_stats(), d;
	uint8_t b[BP_RR_STATS_LEN];

	bp_rr_stats_encode(&s, b);
	assert_memory_equal(b, "BPRR", 4);
	memset(&d, 0x5a, sizeof(d));
	assert_int_equal(bp_rr_stats_decode(b, &d), 0);
	assert_true(d.transactions == s.transactions);
	assert_true(d.interval_ns == s.interval_ns);
	assert_true(d.utime_us == 3);
	assert_true(d.stime_us == 4);
	assert_true(d.nvcsw == 5);
	assert_true(d.nivcsw == 6);
	assert_true(d.busy_poll_rx == 7);
	assert_true(d.net_rx == 8);
	assert_true(d.syscalls == 9);
	assert_true(d.empty_polls == 10);
	assert_true(d.wakeups == 11);
	assert_true(d.waits == 12);
	assert_true(d.completions == s.completions);
	assert_int_equal(d.threads, 64);
	assert_int_equal(d.n_napi_ids, 8);
	for (int i = 0; i < 8; i++)
		assert_int_equal(d.napi_ids[i], 8193 + i);
	assert_string_equal(d.mode, s.mode);

	/* The first u64 sits right after the 8-byte header. */
	assert_true(bp_get_le64(b + 8) == s.transactions);

	/* A mode text that fills the array comes back NUL-terminated. */
	memset(s.mode, 'x', sizeof(s.mode));
	bp_rr_stats_encode(&s, b);
	assert_int_equal(bp_rr_stats_decode(b, &d), 0);
	assert_int_equal(strlen(d.mode), sizeof(d.mode) - 1);
}

static void test_stats_rejections(void **state)
{
	struct bp_rr_stats s = sample_stats(), d;
	uint8_t b[BP_RR_STATS_LEN];
	/* n_napi_ids follows the 13 u64s and threads */
	size_t n_at = 8 + 13 * 8 + 4;

	bp_rr_stats_encode(&s, b);
	assert_int_equal(bp_get_le32(b + n_at), 8);
	bp_put_le32(b + n_at, 9);
	assert_int_equal(bp_rr_stats_decode(b, &d), -EPROTO);
	bp_put_le32(b + n_at, UINT32_MAX);
	assert_int_equal(bp_rr_stats_decode(b, &d), -EPROTO);

	bp_rr_stats_encode(&s, b);
	b[1] = 'X';
	assert_int_equal(bp_rr_stats_decode(b, &d), -EPROTO);
	bp_rr_stats_encode(&s, b);
	bp_put_le16(b + 4, BP_RR_VERSION + 1);
	assert_int_equal(bp_rr_stats_decode(b, &d), -EPROTO);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hello_bytes),
		cmocka_unit_test(test_hello_round_trip),
		cmocka_unit_test(test_hello_rejections),
		cmocka_unit_test(test_refuse_reasons),
		cmocka_unit_test(test_ack),
		cmocka_unit_test(test_cmd),
		cmocka_unit_test(test_stats_round_trip),
		cmocka_unit_test(test_stats_rejections),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
