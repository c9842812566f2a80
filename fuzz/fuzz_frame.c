/* SPDX-License-Identifier: MIT */
/*
 * The AF_XDP path's frame parser (src/net/frame.h): every frame the rx ring brings
 * goes through it. The input is the frame, in an exact-size buffer. Properties:
 *  - the parser returns 0 or one of its documented reasons, and never reads past
 *    the frame (ASan);
 *  - what it accepts lies inside the frame: the payload and its length;
 *  - an accepted frame, built again from what was parsed (same MACs, addresses,
 *    ports, payload), parses to the same flow and payload, and the built frame's
 *    UDP checksum is right.
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "net/frame.h"

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t out[BP_FRAME_HDR_MAX + 65536];
	struct bp_frame_udp u, v;
	struct bp_frame_flow f;
	uint8_t *b = malloc(size ? size : 1);
	int ret, n;

	if (!b)
		abort();
	if (size)
		memcpy(b, data, size);
	ret = bp_frame_parse(b, size, &u);
	FUZZ_CHECK(ret <= 0 && ret >= BP_FRAME_BAD_UDP, "parse returned %d", ret);
	FUZZ_CHECK(strcmp(bp_frame_why_name(ret), "unknown"), "reason %d has no name", ret);
	if (ret == 0) {
		FUZZ_CHECK(u.payload >= b && u.payload + u.len <= b + size, "payload outside the frame");
		FUZZ_CHECK(u.src.ss_family == u.dst.ss_family, "mixed families");
		memcpy(f.src_mac, u.src_mac, 6);
		memcpy(f.dst_mac, u.dst_mac, 6);
		f.src = u.src;
		f.dst = u.dst;
		n = bp_frame_build(out, sizeof(out), &f, u.payload, u.len);
		FUZZ_CHECK(n > 0, "an accepted frame does not build again: %d", n);
		FUZZ_CHECK(bp_frame_parse(out, (size_t)n, &v) == 0, "a built frame does not parse");
		FUZZ_CHECK(v.len == u.len && !memcmp(v.payload, u.payload, u.len), "payload changed");
		FUZZ_CHECK(!memcmp(&v.src, &u.src, sizeof(v.src)) && !memcmp(&v.dst, &u.dst, sizeof(v.dst)),
			   "addresses changed");
		FUZZ_CHECK(bp_frame_udp_csum_ok(out, (size_t)n), "a built frame's UDP checksum is wrong");
	}
	free(b);
	return 0;
}
