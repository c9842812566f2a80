/* SPDX-License-Identifier: MIT */
/*
 * UDP frames for the AF_XDP path: build and parse Ethernet + IPv4/IPv6 + UDP
 * (contract in net/frame.h). Network byte order throughout; the checksums are the
 * Internet checksum (RFC 1071) over the IPv4 header and, for UDP, over the
 * pseudo-header, the UDP header and the payload (RFC 768, RFC 8200 8.1).
 */
#include <errno.h>
#include <netinet/in.h>
#include <string.h>

#include "net/frame.h"

#define ETH_P_IPV4 0x0800
#define ETH_P_IPV6 0x86dd
#define IPPROTO_UDP_ 17

static inline void put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static inline uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }

/* sum16 - the ones' complement sum of n bytes at p (big-endian words), added to acc. */
static uint32_t sum16(uint32_t acc, const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i + 1 < n; i += 2)
		acc += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (i < n)
		acc += (uint32_t)p[i] << 8;
	return acc;
}

/* fold - the 16-bit ones' complement of the sum acc. */
static uint16_t fold(uint32_t acc)
{
	while (acc >> 16)
		acc = (acc & 0xffff) + (acc >> 16);
	return (uint16_t)~acc;
}

/* ip_bytes - the address bytes of a (4 or 16, by family) and its port (host order). */
static const uint8_t *ip_bytes(const struct sockaddr_storage *a, uint16_t *port)
{
	if (a->ss_family == AF_INET) {
		const struct sockaddr_in *s = (const struct sockaddr_in *)a;

		*port = ntohs(s->sin_port);
		return (const uint8_t *)&s->sin_addr;
	}
	*port = ntohs(((const struct sockaddr_in6 *)a)->sin6_port);
	return (const uint8_t *)&((const struct sockaddr_in6 *)a)->sin6_addr;
}

/* udp_sum - the UDP checksum over the pseudo-header and udp[0..ulen) (its sum field included). */
static uint16_t udp_sum(bool v6, const uint8_t *src, const uint8_t *dst, const uint8_t *udp, size_t ulen)
{
	size_t alen = v6 ? 16 : 4;
	uint32_t acc = 0;

	acc = sum16(acc, src, alen);
	acc = sum16(acc, dst, alen);
	acc += IPPROTO_UDP_;
	acc += (uint32_t)(ulen & 0xffff) + (uint32_t)(ulen >> 16);
	return fold(sum16(acc, udp, ulen));
}

int bp_frame_build(uint8_t *buf, size_t cap, const struct bp_frame_flow *f, const void *payload, size_t len)
{
	bool v6 = f->src.ss_family == AF_INET6;
	size_t iplen = v6 ? 40 : 20, ulen = 8 + len, total = BP_FRAME_ETH_LEN + iplen + ulen;
	const uint8_t *sip, *dip;
	uint16_t sport, dport, sum;
	uint8_t *ip = buf + BP_FRAME_ETH_LEN, *udp = ip + iplen;

	if ((f->src.ss_family != AF_INET && !v6) || f->dst.ss_family != f->src.ss_family)
		return -EAFNOSUPPORT;
	if (total > cap || ulen > 0xffff || (!v6 && iplen + ulen > 0xffff))
		return -EMSGSIZE;
	sip = ip_bytes(&f->src, &sport);
	dip = ip_bytes(&f->dst, &dport);

	memcpy(buf, f->dst_mac, 6);
	memcpy(buf + 6, f->src_mac, 6);
	put16(buf + 12, v6 ? ETH_P_IPV6 : ETH_P_IPV4);
	if (v6) {
		put16(ip, 0x6000);    /* version 6, traffic class 0, flow label 0 */
		put16(ip + 2, 0);
		put16(ip + 4, (uint16_t)ulen);
		ip[6] = IPPROTO_UDP_;
		ip[7] = 64;           /* hop limit */
		memcpy(ip + 8, sip, 16);
		memcpy(ip + 24, dip, 16);
	} else {
		ip[0] = 0x45;         /* version 4, IHL 5: no options */
		ip[1] = 0;
		put16(ip + 2, (uint16_t)(iplen + ulen));
		put16(ip + 4, 0);     /* id: unfragmented datagrams need none (RFC 6864) */
		put16(ip + 6, 0x4000); /* don't fragment */
		ip[8] = 64;           /* TTL */
		ip[9] = IPPROTO_UDP_;
		put16(ip + 10, 0);
		memcpy(ip + 12, sip, 4);
		memcpy(ip + 16, dip, 4);
		put16(ip + 10, fold(sum16(0, ip, 20)));
	}
	put16(udp, sport);
	put16(udp + 2, dport);
	put16(udp + 4, (uint16_t)ulen);
	put16(udp + 6, 0);
	if (len)
		memcpy(udp + 8, payload, len);
	sum = udp_sum(v6, sip, dip, udp, ulen);
	put16(udp + 6, sum ? sum : 0xffff); /* 0 means "no checksum": send its other form */
	return (int)total;
}

/* set_addr - a parsed address and port into a sockaddr_storage. */
static void set_addr(struct sockaddr_storage *a, bool v6, const uint8_t *ip, uint16_t port)
{
	memset(a, 0, sizeof(*a));
	if (v6) {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)a;

		s->sin6_family = AF_INET6;
		s->sin6_port = htons(port);
		memcpy(&s->sin6_addr, ip, 16);
	} else {
		struct sockaddr_in *s = (struct sockaddr_in *)a;

		s->sin_family = AF_INET;
		s->sin_port = htons(port);
		memcpy(&s->sin_addr, ip, 4);
	}
}

/*
 * frame_ip - where the UDP header starts and how long the IP payload is, or a
 * negative enum bp_frame_why. Sets *v6.
 */
static int frame_ip(const uint8_t *frame, size_t len, bool *v6, size_t *udp_off, size_t *ip_payload)
{
	const uint8_t *ip = frame + BP_FRAME_ETH_LEN;
	uint16_t type;

	if (len < BP_FRAME_ETH_LEN)
		return BP_FRAME_SHORT;
	type = get16(frame + 12);
	if (type == ETH_P_IPV4) {
		size_t tot;

		*v6 = false;
		if (len < BP_FRAME_ETH_LEN + 20)
			return BP_FRAME_SHORT;
		if (ip[0] != 0x45) /* version 4 without options: all the XDP program passes on */
			return BP_FRAME_BAD_IP;
		if (ip[9] != IPPROTO_UDP_)
			return BP_FRAME_NOT_UDP;
		if (get16(ip + 6) & 0x3fff) /* more fragments, or an offset */
			return BP_FRAME_FRAGMENT;
		tot = get16(ip + 2);
		if (tot < 20 || tot > len - BP_FRAME_ETH_LEN || fold(sum16(0, ip, 20)) != 0)
			return BP_FRAME_BAD_IP;
		*udp_off = BP_FRAME_ETH_LEN + 20;
		*ip_payload = tot - 20;
		return 0;
	}
	if (type == ETH_P_IPV6) {
		size_t plen;

		*v6 = true;
		if (len < BP_FRAME_ETH_LEN + 40)
			return BP_FRAME_SHORT;
		if ((ip[0] >> 4) != 6)
			return BP_FRAME_BAD_IP;
		if (ip[6] != IPPROTO_UDP_)
			return BP_FRAME_NOT_UDP;
		plen = get16(ip + 4);
		if (plen > len - BP_FRAME_ETH_LEN - 40)
			return BP_FRAME_BAD_IP;
		*udp_off = BP_FRAME_ETH_LEN + 40;
		*ip_payload = plen;
		return 0;
	}
	return BP_FRAME_NOT_IP;
}

int bp_frame_parse(const uint8_t *frame, size_t len, struct bp_frame_udp *out)
{
	size_t off, plen, ulen;
	const uint8_t *udp;
	bool v6;
	int ret = frame_ip(frame, len, &v6, &off, &plen);

	if (ret)
		return ret;
	if (len - off < 8)
		return BP_FRAME_SHORT;
	if (plen < 8)
		return BP_FRAME_BAD_UDP;
	udp = frame + off;
	ulen = get16(udp + 4);
	if (ulen < 8 || ulen > plen)
		return BP_FRAME_BAD_UDP;
	memcpy(out->dst_mac, frame, 6);
	memcpy(out->src_mac, frame + 6, 6);
	set_addr(&out->src, v6, frame + BP_FRAME_ETH_LEN + (v6 ? 8 : 12), get16(udp));
	set_addr(&out->dst, v6, frame + BP_FRAME_ETH_LEN + (v6 ? 24 : 16), get16(udp + 2));
	out->payload = udp + 8;
	out->len = ulen - 8;
	return 0;
}

bool bp_frame_udp_csum_ok(const uint8_t *frame, size_t len)
{
	struct bp_frame_udp u;
	const uint8_t *ip = frame + BP_FRAME_ETH_LEN, *udp;
	bool v6;

	if (bp_frame_parse(frame, len, &u))
		return false;
	v6 = u.src.ss_family == AF_INET6;
	udp = u.payload - 8;
	if (!v6 && get16(udp + 6) == 0)
		return true;
	return udp_sum(v6, ip + (v6 ? 8 : 12), ip + (v6 ? 24 : 16), udp, u.len + 8) == 0;
}

const char *bp_frame_why_name(int why)
{
	switch (why) {
	case BP_FRAME_OK: return "ok";
	case BP_FRAME_SHORT: return "short";
	case BP_FRAME_NOT_IP: return "not IP";
	case BP_FRAME_NOT_UDP: return "not UDP";
	case BP_FRAME_BAD_IP: return "bad IP header";
	case BP_FRAME_FRAGMENT: return "IP fragment";
	case BP_FRAME_BAD_UDP: return "bad UDP length";
	}
	return "unknown";
}
