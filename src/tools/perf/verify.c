/* SPDX-License-Identifier: MIT */
/*
 * busypoll perf --verify: the stamp every logical block carries (contract in
 * tools/perf/perf.h). Layout, little-endian:
 *
 *   0  magic "BPV1"     4  CRC32C of bytes 8..end
 *   8  LBA             16  generation (1 = pre-fill, +1 per write)
 *  20  run id          24  payload: a stream derived from (LBA, generation, run)
 *
 * The payload makes every byte of the block part of the check (the CRC covers
 * it and it differs per block, generation and run), so a block copied from
 * elsewhere, a torn write or stale data never passes by accident.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <busypoll/nvme/tcp.h>

#include "base/bytes.h"
#include "tools/perf/perf.h"

static inline uint64_t splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t seed_of(uint64_t lba, uint32_t gen, uint32_t run)
{
	return lba * 0x9e3779b97f4a7c15ull ^ ((uint64_t)gen << 32 | run);
}

void perf_stamp_fill(uint8_t *blk, uint32_t block_size, uint64_t lba, uint32_t gen, uint32_t run)
{
	uint64_t x = seed_of(lba, gen, run);

	bp_put_le32(blk, PERF_STAMP_MAGIC);
	bp_put_le64(blk + 8, lba);
	bp_put_le32(blk + 16, gen);
	bp_put_le32(blk + 20, run);
	for (uint32_t off = PERF_STAMP_HDR; off + 8 <= block_size; off += 8) {
		uint64_t v = splitmix(&x);

		memcpy(blk + off, &v, 8);
	}
	bp_put_le32(blk + 4, bp_crc32c(0, blk + 8, block_size - 8));
}

enum perf_stamp_err perf_stamp_check(const uint8_t *blk, uint32_t block_size, uint64_t lba, uint32_t gen,
				     uint32_t run, char *why, size_t whylen)
{
	uint64_t got_lba = bp_get_le64(blk + 8);
	uint32_t got_gen = bp_get_le32(blk + 16), got_run = bp_get_le32(blk + 20);

	if (bp_get_le32(blk) != PERF_STAMP_MAGIC) {
		snprintf(why, whylen, "LBA %" PRIu64 ": no stamp (first bytes %02x %02x %02x %02x): never written by perf, or overwritten",
			 lba, blk[0], blk[1], blk[2], blk[3]);
		return PERF_STAMP_MAGIC_BAD;
	}
	if (bp_get_le32(blk + 4) != bp_crc32c(0, blk + 8, block_size - 8)) {
		snprintf(why, whylen, "LBA %" PRIu64 ": CRC32C mismatch (stored 0x%08x, computed 0x%08x): the block is corrupted",
			 lba, bp_get_le32(blk + 4), bp_crc32c(0, blk + 8, block_size - 8));
		return PERF_STAMP_CRC_BAD;
	}
	if (got_lba != lba) {
		snprintf(why, whylen, "LBA %" PRIu64 ": holds the block of LBA %" PRIu64 " (misplaced data)", lba, got_lba);
		return PERF_STAMP_LBA_BAD;
	}
	if (got_run != run) {
		snprintf(why, whylen, "LBA %" PRIu64 ": written by another run (run id %08x, ours %08x): another host or job wrote it",
			 lba, got_run, run);
		return PERF_STAMP_RUN_BAD;
	}
	if (got_gen != gen) {
		snprintf(why, whylen, "LBA %" PRIu64 ": generation %" PRIu32 ", expected %" PRIu32 " (%s)", lba, got_gen, gen,
			 got_gen < gen ? "stale data: a completed write is missing" : "newer than any completed write");
		return PERF_STAMP_GEN_BAD;
	}
	return PERF_STAMP_OK;
}
