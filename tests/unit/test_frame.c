/* SPDX-License-Identifier: MIT */
/*
 * The AF_XDP path's frames (src/net/frame.h): built frames checked byte for byte
 * against headers and checksums computed here independently (RFC 1071 over the
 * bytes), parsed back; every refusal reason on a frame made for it; every cut of a
 * good frame refused, never read past.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "net/frame.h"

static const uint8_t mac_a[6] = { 0x02, 0, 0, 0, 0, 0x0a }, mac_b[6] = { 0x02, 0, 0, 0, 0, 0x0b };

/* An independent Internet checksum: the 16-bit ones' complement of the ones' complement sum. */
static uint16_t rfc1071(const uint8_t *p, size_t n, uint32_t acc)
{
	for (size_t i = 0; i < n; i += 2)
		acc += (uint32_t)p[i] << 8 | (i + 1 < n ? p[i + 1] : 0);
	while (acc >> 16)
		acc = (acc & 0xffff) + (acc >> 16);
	return (uint16_t)~acc;
}

static void flow4(struct bp_frame_flow *f)
{
	struct sockaddr_in *s = (struct sockaddr_in *)&f->src, *d = (struct sockaddr_in *)&f->dst;

	memset(f, 0, sizeof(*f));
	memcpy(f->src_mac, mac_a, 6);
	memcpy(f->dst_mac, mac_b, 6);
	s->sin_family = d->sin_family = AF_INET;
	s->sin_port = htons(40000);
	d->sin_port = htons(12868);
	inet_pton(AF_INET, "10.99.0.1", &s->sin_addr);
	inet_pton(AF_INET, "10.99.0.2", &d->sin_addr);
}

static void flow6(struct bp_frame_flow *f)
{
	struct sockaddr_in6 *s = (struct sockaddr_in6 *)&f->src, *d = (struct sockaddr_in6 *)&f->dst;

	memset(f, 0, sizeof(*f));
	memcpy(f->src_mac, mac_a, 6);
	memcpy(f->dst_mac, mac_b, 6);
	s->sin6_family = d->sin6_family = AF_INET6;
	s->sin6_port = htons(40001);
	d->sin6_port = htons(12869);
	inet_pton(AF_INET6, "fd00::1", &s->sin6_addr);
	inet_pton(AF_INET6, "fd00::2", &d->sin6_addr);
}

static uint16_t be16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }

/* The UDP checksum over the pseudo-header, computed here from the frame's own fields. */
static uint16_t udp_sum_here(const uint8_t *fr, bool v6, size_t ulen)
{
	uint8_t pseudo[40];
	const uint8_t *ip = fr + 14, *udp = ip + (v6 ? 40 : 20);
	size_t alen = v6 ? 16 : 4;
	uint32_t acc = 0;

	memcpy(pseudo, ip + (v6 ? 8 : 12), alen);
	memcpy(pseudo + alen, ip + (v6 ? 24 : 16), alen);
	for (size_t i = 0; i < 2 * alen; i += 2)
		acc += (uint32_t)pseudo[i] << 8 | pseudo[i + 1];
	acc += 17 + (uint32_t)ulen;
	return rfc1071(udp, ulen, acc);
}

static void test_build_ipv4(void **state)
{
	struct bp_frame_flow f;
	struct bp_frame_udp u;
	uint8_t fr[256], payload[64];
	int n;

	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 7 + 1);
	flow4(&f);
	n = bp_frame_build(fr, sizeof(fr), &f, payload, sizeof(payload));
	assert_int_equal(n, 14 + 20 + 8 + 64);
	assert_memory_equal(fr, mac_b, 6);
	assert_memory_equal(fr + 6, mac_a, 6);
	assert_int_equal(be16(fr + 12), 0x0800);
	assert_int_equal(fr[14], 0x45);
	assert_int_equal(be16(fr + 16), 20 + 8 + 64);   /* IP total length */
	assert_int_equal(fr[14 + 9], 17);
	assert_int_equal(fr[14 + 8], 64);               /* TTL */
	assert_int_equal(rfc1071(fr + 14, 20, 0), 0);   /* the header's checksum is right */
	assert_int_equal(be16(fr + 34), 40000);
	assert_int_equal(be16(fr + 36), 12868);
	assert_int_equal(be16(fr + 38), 8 + 64);
	assert_int_not_equal(be16(fr + 40), 0);
	assert_int_equal(udp_sum_here(fr, false, 72), 0); /* the UDP checksum is right */
	assert_memory_equal(fr + 42, payload, 64);
	assert_true(bp_frame_udp_csum_ok(fr, (size_t)n));

	assert_int_equal(bp_frame_parse(fr, (size_t)n, &u), 0);
	assert_int_equal(u.len, 64);
	assert_memory_equal(u.payload, payload, 64);
	assert_memory_equal(u.src_mac, mac_a, 6);
	assert_memory_equal(u.dst_mac, mac_b, 6);
	assert_memory_equal(&u.src, &f.src, sizeof(struct sockaddr_in));
	assert_memory_equal(&u.dst, &f.dst, sizeof(struct sockaddr_in));

	/* One bit flipped in the payload: the checksum says so. */
	fr[50] ^= 1;
	assert_false(bp_frame_udp_csum_ok(fr, (size_t)n));
}

static void test_build_ipv6(void **state)
{
	struct bp_frame_flow f;
	struct bp_frame_udp u;
	uint8_t fr[256];
	int n;

	flow6(&f);
	n = bp_frame_build(fr, sizeof(fr), &f, "hello", 5);
	assert_int_equal(n, 14 + 40 + 8 + 5);
	assert_int_equal(be16(fr + 12), 0x86dd);
	assert_int_equal(fr[14] >> 4, 6);
	assert_int_equal(be16(fr + 18), 8 + 5);          /* payload length */
	assert_int_equal(fr[20], 17);                     /* next header */
	assert_int_equal(be16(fr + 54), 40001);
	assert_int_equal(be16(fr + 56), 12869);
	assert_int_not_equal(be16(fr + 60), 0);           /* IPv6 UDP always has a checksum */
	assert_int_equal(udp_sum_here(fr, true, 13), 0);
	assert_int_equal(bp_frame_parse(fr, (size_t)n, &u), 0);
	assert_int_equal(u.len, 5);
	assert_memory_equal(u.payload, "hello", 5);
	assert_memory_equal(&u.src, &f.src, sizeof(struct sockaddr_in6));
	assert_memory_equal(&u.dst, &f.dst, sizeof(struct sockaddr_in6));
}

static void test_build_refusals(void **state)
{
	struct bp_frame_flow f;
	uint8_t fr[128], payload[64] = { 0 };

	flow4(&f);
	assert_int_equal(bp_frame_build(fr, 14 + 20 + 8 + 63, &f, payload, 64), -EMSGSIZE);
	assert_int_equal(bp_frame_build(fr, 14 + 20 + 8 + 64, &f, payload, 64), 14 + 20 + 8 + 64);
	f.dst.ss_family = AF_INET6;
	assert_int_equal(bp_frame_build(fr, sizeof(fr), &f, "x", 1), -EAFNOSUPPORT);
	f.src.ss_family = f.dst.ss_family = AF_UNIX;
	assert_int_equal(bp_frame_build(fr, sizeof(fr), &f, "x", 1), -EAFNOSUPPORT);
}

/* Every cut of a good frame is refused as short or as inconsistent, never accepted. */
static void test_short_frames(void **state)
{
	struct bp_frame_flow f;
	struct bp_frame_udp u;
	uint8_t fr[128];
	int n;

	for (int v6 = 0; v6 < 2; v6++) {
		v6 ? flow6(&f) : flow4(&f);
		n = bp_frame_build(fr, sizeof(fr), &f, "abcdefgh", 8);
		for (int cut = 0; cut < n; cut++) {
			uint8_t *b = malloc((size_t)cut + 1); /* exact size: ASan sees a read past it */
			int ret;

			memcpy(b, fr, (size_t)cut);
			ret = bp_frame_parse(b, (size_t)cut, &u);
			if (ret != BP_FRAME_SHORT && ret != BP_FRAME_BAD_IP && ret != BP_FRAME_BAD_UDP)
				fail_msg("v6=%d cut at %d: got %d", v6, cut, ret);
			if (cut < 14 + (v6 ? 40 : 20))
				assert_int_equal(ret, BP_FRAME_SHORT);
			free(b);
		}
		assert_int_equal(bp_frame_parse(fr, (size_t)n, &u), 0);
	}
}

/* Ethernet pads short frames to 60 bytes: the IP length, not the frame's, says where UDP ends. */
static void test_padding(void **state)
{
	struct bp_frame_flow f;
	struct bp_frame_udp u;
	uint8_t fr[128] = { 0 };
	int n;

	flow4(&f);
	n = bp_frame_build(fr, sizeof(fr), &f, "ab", 2);
	assert_true(n < 60);
	assert_int_equal(bp_frame_parse(fr, 60, &u), 0);
	assert_int_equal(u.len, 2);
	assert_memory_equal(u.payload, "ab", 2);
}

static void test_refusal_reasons(void **state)
{
	struct bp_frame_flow f;
	struct bp_frame_udp u;
	uint8_t fr[128], b[128];
	int n;

	flow4(&f);
	n = bp_frame_build(fr, sizeof(fr), &f, "abcdefgh", 8);

	memcpy(b, fr, (size_t)n);
	b[12] = 0x08, b[13] = 0x06; /* ARP */
	assert_int_equal(bp_frame_parse(b, (size_t)n, &u), BP_FRAME_NOT_IP);
	memcpy(b, fr, (size_t)n);
	b[14 + 9] = 6; /* TCP */
	assert_int_equal(bp_frame_parse(b, (size_t)n, &u), BP_FRAME_NOT_UDP);
	memcpy(b, fr, (size_t)n);
	b[14 + 10] ^= 0xff; /* the header checksum */
	assert_int_equal(bp_frame_parse(b, (size_t)n, &u), BP_FRAME_BAD_IP);
	memcpy(b, fr, (size_t)n);
	b[14] = 0x46; /* options */
	assert_int_equal(bp_frame_parse(b, (size_t)n, &u), BP_FRAME_BAD_IP);
	memcpy(b, fr, (size_t)n);
	b[14 + 6] = 0x20; /* more fragments */
	assert_int_equal(bp_frame_parse(b, (size_t)n, &u), BP_FRAME_FRAGMENT);
	memcpy(b, fr, (size_t)n);
	b[14 + 3] = (uint8_t)(b[14 + 3] + 1); /* IP total length past the frame */
	assert_int_equal(bp_frame_parse(b, (size_t)n, &u), BP_FRAME_BAD_IP);
	memcpy(b, fr, (size_t)n);
	b[14 + 20 + 5] = 7; /* UDP length below its header */
	assert_int_equal(bp_frame_parse(b, (size_t)n, &u), BP_FRAME_BAD_UDP);
	memcpy(b, fr, (size_t)n);
	b[14 + 20 + 5] = 17; /* UDP length past the IP payload */
	assert_int_equal(bp_frame_parse(b, (size_t)n, &u), BP_FRAME_BAD_UDP);

	flow6(&f);
	n = bp_frame_build(fr, sizeof(fr), &f, "x", 1);
	memcpy(b, fr, (size_t)n);
	b[14 + 6] = 0; /* a hop-by-hop header first */
	assert_int_equal(bp_frame_parse(b, (size_t)n, &u), BP_FRAME_NOT_UDP);
	memcpy(b, fr, (size_t)n);
	b[14] = 0x40; /* version 4 in an IPv6 EtherType */
	assert_int_equal(bp_frame_parse(b, (size_t)n, &u), BP_FRAME_BAD_IP);

	assert_string_equal(bp_frame_why_name(BP_FRAME_FRAGMENT), "IP fragment");
	assert_string_equal(bp_frame_why_name(1), "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_build_ipv4),
		cmocka_unit_test(test_build_ipv6),
		cmocka_unit_test(test_build_refusals),
		cmocka_unit_test(test_short_frames),
		cmocka_unit_test(test_padding),
		cmocka_unit_test(test_refusal_reasons),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
