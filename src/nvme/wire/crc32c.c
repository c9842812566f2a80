/* SPDX-License-Identifier: MIT */
/*
 * CRC32C (Castagnoli, reflected polynomial 0x82F63B78), the NVMe/TCP digest.
 * Slice-by-8 tables for any CPU; the SSE4.2 crc32 instruction when the CPU has
 * it, decided once. Both give the same value (tests check them against each
 * other and against the digests in a Linux host's capture).
 */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include <busypoll/nvme/tcp.h>

#define CRC32C_POLY 0x82f63b78u

static uint32_t table[8][256];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void table_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = (c & 1) ? (c >> 1) ^ CRC32C_POLY : c >> 1;
		table[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			table[t][i] = (table[t - 1][i] >> 8) ^ table[0][table[t - 1][i] & 0xff];
}

uint32_t bp_crc32c_sw(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	pthread_once(&table_once, table_init);
	crc = ~crc;
	while (len && ((uintptr_t)p & 7)) {
		crc = (crc >> 8) ^ table[0][(crc ^ *p++) & 0xff];
		len--;
	}
	while (len >= 8) {
		uint32_t lo, hi;

		memcpy(&lo, p, 4);
		memcpy(&hi, p + 4, 4);
		/* Little-endian host assumed for the word loads (x86-64, arm64 LE). */
		lo ^= crc;
		crc = table[7][lo & 0xff] ^ table[6][(lo >> 8) & 0xff] ^ table[5][(lo >> 16) & 0xff] ^
		      table[4][lo >> 24] ^ table[3][hi & 0xff] ^ table[2][(hi >> 8) & 0xff] ^
		      table[1][(hi >> 16) & 0xff] ^ table[0][hi >> 24];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = (crc >> 8) ^ table[0][(crc ^ *p++) & 0xff];
	return ~crc;
}

#if defined(__x86_64__)
#include <nmmintrin.h>

__attribute__((target("sse4.2"))) static uint32_t crc32c_sse42(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint64_t c = ~crc;

	while (len && ((uintptr_t)p & 7)) {
		c = _mm_crc32_u8((uint32_t)c, *p++);
		len--;
	}
	while (len >= 8) {
		uint64_t w;

		memcpy(&w, p, 8);
		c = _mm_crc32_u64(c, w);
		p += 8;
		len -= 8;
	}
	while (len--)
		c = _mm_crc32_u8((uint32_t)c, *p++);
	return ~(uint32_t)c;
}

static bool have_sse42(void)
{
	static int cached = -1;

	if (cached < 0) {
		__builtin_cpu_init();
		cached = __builtin_cpu_supports("sse4.2") ? 1 : 0;
	}
	return cached == 1;
}
#else
static bool have_sse42(void) { return false; }
#endif

uint32_t bp_crc32c_hw(uint32_t crc, const void *buf, size_t len)
{
#if defined(__x86_64__)
	if (have_sse42())
		return crc32c_sse42(crc, buf, len);
#endif
	return bp_crc32c_sw(crc, buf, len);
}

/* The implementation, picked on the first call (a benign race: every thread picks the same). */
static uint32_t (*volatile crc_impl)(uint32_t, const void *, size_t);

uint32_t bp_crc32c(uint32_t crc, const void *buf, size_t len)
{
	uint32_t (*fn)(uint32_t, const void *, size_t) = crc_impl;

	if (!fn) {
		fn = have_sse42() ? bp_crc32c_hw : bp_crc32c_sw;
		crc_impl = fn;
	}
	return fn(crc, buf, len);
}

const char *bp_crc32c_impl(void)
{
	return have_sse42() ? "sse4.2" : "slice-by-8";
}
