/* SPDX-License-Identifier: MIT */
/* A tiny pcapng reader: TCP payloads per direction (contract in bpt_pcapng.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpt_pcapng.h"

static uint16_t be16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static uint32_t be32(const uint8_t *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }
static uint32_t le32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }

static struct bpt_tcp_stream *stream_get(struct bpt_pcap *p, uint16_t sport, uint16_t dport)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->s[i].sport == sport && p->s[i].dport == dport)
			return &p->s[i];
	if (p->n == BPT_PCAP_MAX_STREAMS)
		return NULL;
	p->s[p->n] = (struct bpt_tcp_stream){ .sport = sport, .dport = dport };
	return &p->s[p->n++];
}

static int stream_add(struct bpt_tcp_stream *s, uint32_t seq, bool syn, const uint8_t *pl, size_t n)
{
	if (syn) {
		s->next_seq = seq + 1;
		s->have_seq = true;
	}
	if (!n)
		return 0;
	if (!s->have_seq) {
		s->next_seq = seq;
		s->have_seq = true;
	}
	if ((int32_t)(seq - s->next_seq) > 0)
		return -EPROTO; /* a gap: bytes missing from the capture */
	if ((int32_t)(seq + (uint32_t)n - s->next_seq) <= 0)
		return 0;   /* a retransmission of bytes we have */
	{
		size_t skip = s->next_seq - seq;

		pl += skip;
		n -= skip;
	}
	if (s->len + n > s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 65536;
		uint8_t *d;

		while (cap < s->len + n)
			cap *= 2;
		d = realloc(s->data, cap);
		if (!d)
			return -ENOMEM;
		s->data = d;
		s->cap = cap;
	}
	memcpy(s->data + s->len, pl, n);
	s->len += n;
	s->next_seq += (uint32_t)n;
	return 0;
}

/* One Ethernet frame. */
static int frame(struct bpt_pcap *p, const uint8_t *f, size_t len)
{
	uint16_t et;
	const uint8_t *ip;
	size_t iplen, ihl;
	uint8_t proto;
	const uint8_t *tcp;
	size_t tcplen, thl;
	struct bpt_tcp_stream *s;

	if (len < 14)
		return 0;
	et = be16(f + 12);
	ip = f + 14;
	iplen = len - 14;
	if (et == 0x0800) {
		if (iplen < 20)
			return 0;
		ihl = (size_t)(ip[0] & 0x0f) * 4;
		proto = ip[9];
		if (be16(ip + 2) < iplen)
			iplen = be16(ip + 2); /* Ethernet padding */
	} else if (et == 0x86dd) {
		if (iplen < 40)
			return 0;
		ihl = 40;
		proto = ip[6];
		if ((size_t)be16(ip + 4) + 40 < iplen)
			iplen = be16(ip + 4) + 40;
	} else {
		return 0;
	}
	if (proto != 6 || iplen < ihl + 20)
		return 0;
	tcp = ip + ihl;
	tcplen = iplen - ihl;
	thl = (size_t)(tcp[12] >> 4) * 4;
	if (thl < 20 || thl > tcplen)
		return 0;
	s = stream_get(p, be16(tcp), be16(tcp + 2));
	if (!s)
		return -ENOSPC;
	return stream_add(s, be32(tcp + 4), tcp[13] & 0x02, tcp + thl, tcplen - thl);
}

int bpt_pcapng_streams(const char *path, struct bpt_pcap *out)
{
	FILE *f = fopen(path, "rb");
	uint8_t *d = NULL;
	long size;
	size_t off = 0;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	if (!f) {
		fprintf(stderr, "pcapng: %s: %s\n", path, strerror(errno));
		return -errno;
	}
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	fseek(f, 0, SEEK_SET);
	d = malloc(size > 0 ? (size_t)size : 1);
	if (!d || fread(d, 1, (size_t)size, f) != (size_t)size) {
		fclose(f);
		free(d);
		return -EIO;
	}
	fclose(f);
	while (off + 12 <= (size_t)size) {
		uint32_t type = le32(d + off), blen = le32(d + off + 4);

		if (blen < 12 || off + blen > (size_t)size) {
			ret = -EPROTO;
			break;
		}
		if (type == 1 && le32(d + off + 8) != 1) { /* IDB: link type must be Ethernet */
			fprintf(stderr, "pcapng: %s: link type %u, only Ethernet (1) is read\n", path,
				le32(d + off + 8) & 0xffff);
			ret = -EPROTO;
			break;
		}
		if (type == 6 && blen >= 32) { /* EPB */
			uint32_t caplen = le32(d + off + 20);

			if (28 + caplen <= blen) {
				ret = frame(out, d + off + 28, caplen);
				if (ret) {
					fprintf(stderr, "pcapng: %s: TCP stream %s\n", path,
						ret == -EPROTO ? "has a gap" : "table full");
					break;
				}
			}
		}
		off += blen;
	}
	free(d);
	if (ret)
		bpt_pcap_free(out);
	return ret;
}

void bpt_pcap_free(struct bpt_pcap *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->s[i].data);
	memset(p, 0, sizeof(*p));
}

struct bpt_tcp_stream *bpt_pcap_find(struct bpt_pcap *p, uint16_t dport, size_t n)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->s[i].dport == dport && p->s[i].len && n-- == 0)
			return &p->s[i];
	return NULL;
}

struct bpt_tcp_stream *bpt_pcap_reverse(struct bpt_pcap *p, const struct bpt_tcp_stream *s)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->s[i].sport == s->dport && p->s[i].dport == s->sport)
			return &p->s[i];
	return NULL;
}
