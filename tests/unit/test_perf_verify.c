/* SPDX-License-Identifier: MIT */
/*
 * busypoll perf --verify's stamp: a block stamped as (LBA, generation, run)
 * checks as exactly that, and every way a target can get it wrong is caught and
 * named: never written, any corrupted byte (header or payload), another LBA's
 * block, another run's block, a stale or a newer generation.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <busypoll/nvme/tcp.h>

#include "base/bytes.h"
#include "tools/perf/perf.h"

static uint8_t blk[4096], other[4096];
static char why[300];

static void expect(enum perf_stamp_err want, const uint8_t *b, uint32_t bs, uint64_t lba, uint32_t gen,
		   uint32_t run, const char *text)
{
	enum perf_stamp_err got = perf_stamp_check(b, bs, lba, gen, run, why, sizeof(why));

	if (got != want)
		fail_msg("check gave %d, want %d (%s)", got, want, why);
	if (text && !strstr(why, text))
		fail_msg("'%s' does not say '%s'", why, text);
}

static void test_round_trip(void **state)
{
	for (uint32_t bs = 512; bs <= 4096; bs *= 8) {
		perf_stamp_fill(blk, bs, 123456789012ull, 7, 0xabcdef01u);
		assert_int_equal(bp_get_le32(blk), PERF_STAMP_MAGIC);
		assert_true(bp_get_le64(blk + 8) == 123456789012ull);
		assert_int_equal(bp_get_le32(blk + 16), 7);
		assert_int_equal(bp_get_le32(blk + 20), 0xabcdef01u);
		assert_int_equal(bp_get_le32(blk + 4), bp_crc32c(0, blk + 8, bs - 8));
		expect(PERF_STAMP_OK, blk, bs, 123456789012ull, 7, 0xabcdef01u, NULL);
	}
}

static void test_payload_differs(void **state)
{
	/* The payload depends on LBA, generation and run: no two stamps share bytes 24.. */
	perf_stamp_fill(blk, 512, 10, 1, 1);
	perf_stamp_fill(other, 512, 11, 1, 1);
	assert_memory_not_equal(blk + 24, other + 24, 512 - 24);
	perf_stamp_fill(other, 512, 10, 2, 1);
	assert_memory_not_equal(blk + 24, other + 24, 512 - 24);
	perf_stamp_fill(other, 512, 10, 1, 2);
	assert_memory_not_equal(blk + 24, other + 24, 512 - 24);
}

static void test_faults(void **state)
{
	perf_stamp_fill(blk, 4096, 42, 3, 99);

	/* never written: zeros (a fresh ram namespace) */
	memset(other, 0, sizeof(other));
	expect(PERF_STAMP_MAGIC_BAD, other, 4096, 42, 3, 99, "LBA 42: no stamp");

	/* any byte flipped: the header after the CRC, the payload's first and last byte */
	for (size_t off = 8; off < 4096; off += 4087 / 3) {
		memcpy(other, blk, sizeof(other));
		other[off] ^= 0x01;
		expect(PERF_STAMP_CRC_BAD, other, 4096, 42, 3, 99, "LBA 42: CRC32C mismatch");
	}
	memcpy(other, blk, sizeof(other));
	other[4095] ^= 0x80;
	expect(PERF_STAMP_CRC_BAD, other, 4096, 42, 3, 99, "corrupted");

	/* a block of another LBA (misdirected write or read) */
	perf_stamp_fill(other, 4096, 43, 3, 99);
	expect(PERF_STAMP_LBA_BAD, other, 4096, 42, 3, 99, "LBA 42: holds the block of LBA 43");

	/* another run's block (a previous run, or another host writing the namespace) */
	perf_stamp_fill(other, 4096, 42, 3, 98);
	expect(PERF_STAMP_RUN_BAD, other, 4096, 42, 3, 99, "another run");

	/* stale: the last completed write is missing */
	perf_stamp_fill(other, 4096, 42, 2, 99);
	expect(PERF_STAMP_GEN_BAD, other, 4096, 42, 3, 99, "LBA 42: generation 2, expected 3 (stale data");

	/* newer than anything completed */
	perf_stamp_fill(other, 4096, 42, 4, 99);
	expect(PERF_STAMP_GEN_BAD, other, 4096, 42, 3, 99, "newer");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_payload_differs),
		cmocka_unit_test(test_faults),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
