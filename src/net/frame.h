/* SPDX-License-Identifier: MIT */
/*
 * UDP frames on the wire for the AF_XDP path (backends/xsk*.c): Ethernet, then IPv4
 * (no options) or IPv6 (UDP the first next header), then UDP. Pure functions over
 * caller-owned bytes: no allocation, no syscalls, so the unit test and the fuzz
 * target drive them directly.
 *
 * The parser takes only what the XDP program (bpf/xsk_udp.bpf.c) redirects and
 * checks the same way: anything else it refuses with a reason, which the backend
 * counts as a dropped frame. It checks the IPv4 header checksum and every length,
 * not the UDP checksum: a frame the sender's kernel made on a device with checksum
 * offload (veth) carries only the pseudo-header sum there (CHECKSUM_PARTIAL), and
 * the kernel's own UDP path would not check it either.
 */
#ifndef BP_NET_FRAME_H
#define BP_NET_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define BP_FRAME_ETH_LEN 14
#define BP_FRAME_HDR4 (BP_FRAME_ETH_LEN + 20 + 8)
#define BP_FRAME_HDR6 (BP_FRAME_ETH_LEN + 40 + 8)
#define BP_FRAME_HDR_MAX BP_FRAME_HDR6

/* One UDP flow's two ends as the wire carries them (addresses with their ports). */
struct bp_frame_flow {
	uint8_t src_mac[6], dst_mac[6];
	struct sockaddr_storage src, dst; /* both AF_INET or both AF_INET6 */
};

/* Why a frame was refused (bp_frame_parse); 0 is a frame of ours. */
enum bp_frame_why {
	BP_FRAME_OK = 0,
	BP_FRAME_SHORT = -1,     /* shorter than its headers */
	BP_FRAME_NOT_IP = -2,    /* an EtherType other than IPv4 and IPv6 (ARP, VLAN, ...) */
	BP_FRAME_NOT_UDP = -3,   /* IPv4 protocol or IPv6 next header not UDP (TCP, ICMP, extension headers) */
	BP_FRAME_BAD_IP = -4,    /* IPv4 version/IHL/options/length/checksum, IPv6 version/length */
	BP_FRAME_FRAGMENT = -5,  /* an IPv4 fragment */
	BP_FRAME_BAD_UDP = -6,   /* UDP length below 8 or past the IP payload */
};

/* A frame of ours, parsed: every pointer points into the frame. */
struct bp_frame_udp {
	uint8_t src_mac[6], dst_mac[6];
	struct sockaddr_storage src, dst; /* with the UDP ports */
	const uint8_t *payload;
	size_t len;                       /* the UDP payload's length */
};

/*
 * bp_frame_build - the frame of len payload bytes on flow f into buf (cap bytes):
 * headers with lengths and checksums (IPv4 header, UDP over the pseudo-header; an
 * IPv4 UDP sum of 0 is sent as 0xffff), then the payload. Returns the frame's
 * length, -EAFNOSUPPORT for a family other than IPv4/IPv6 or mixed, -EMSGSIZE when
 * it does not fit cap or the IP length field.
 */
int bp_frame_build(uint8_t *buf, size_t cap, const struct bp_frame_flow *f, const void *payload, size_t len);

/* bp_frame_parse - a frame into *out: 0, or a negative enum bp_frame_why (out undefined). */
int bp_frame_parse(const uint8_t *frame, size_t len, struct bp_frame_udp *out);

/* bp_frame_why_name - "short", "not IP", ... for counters and messages (never NULL). */
const char *bp_frame_why_name(int why);

/*
 * bp_frame_udp_csum_ok - is the UDP checksum of a frame bp_frame_parse accepted
 * right (an IPv4 sum of 0, "none", counts as right)? For tests and diagnostics.
 */
bool bp_frame_udp_csum_ok(const uint8_t *frame, size_t len);

#endif
