/* SPDX-License-Identifier: MIT */
/*
 * A tiny pcapng reader for the tests: TCP payloads of an Ethernet capture,
 * reassembled per direction (one stream per source/destination port pair, in
 * order of first appearance), so PDU tests can run on real captures without
 * tshark at run time.
 */
#ifndef BPT_PCAPNG_H
#define BPT_PCAPNG_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#define BPT_PCAP_MAX_STREAMS 64

struct bpt_tcp_stream {
	uint16_t sport, dport;
	uint8_t *data;
	size_t len, cap;
	uint32_t next_seq;
	bool have_seq;
};

struct bpt_pcap {
	struct bpt_tcp_stream s[BPT_PCAP_MAX_STREAMS];
	size_t n;
};

/*
 * bpt_pcapng_streams - read path (pcapng, link type Ethernet) into *out.
 * Retransmitted bytes are dropped; a gap in a stream is an error.
 * Returns 0, or -errno with a message on stderr.
 */
int bpt_pcapng_streams(const char *path, struct bpt_pcap *out);
void bpt_pcap_free(struct bpt_pcap *p);
/* bpt_pcap_find - the n-th stream (0-based, by first appearance) with this destination port; NULL if none. */
struct bpt_tcp_stream *bpt_pcap_find(struct bpt_pcap *p, uint16_t dport, size_t n);
/* bpt_pcap_reverse - the stream going the other way. */
struct bpt_tcp_stream *bpt_pcap_reverse(struct bpt_pcap *p, const struct bpt_tcp_stream *s);

#endif
