/* SPDX-License-Identifier: MIT */
/*
 * The pingpong wire protocol (busypoll pingpong). All integers little-endian.
 *
 * Every message starts with the same 48-byte header:
 *
 *   off len field
 *    0   4  magic          'B' 'P' 'P' 'G'
 *    4   1  version        2
 *    5   1  type           request, reply
 *    6   2  flags          BP_PP_F_* (replies only; 0 in requests and control)
 *    8   4  length         the whole message, header included
 *   12   4  srv_rx_ns      reply: server receive wake-up (its rx timestamp to its
 *                          application having the bytes), ns on the server's clock
 *   16   8  seq            chosen by the client, echoed
 *   24   8  client_ts      the client's CLOCK_MONOTONIC at its send call, echoed
 *   32   4  srv_proc_ns    reply: server processing (bytes in hand to its send call)
 *   36   4  srv_send_ns    reply: server send path (send call to its software
 *                          transmit timestamp) of an EARLIER reply, prev_seq
 *   40   8  prev_seq       the reply srv_send_ns belongs to
 *
 * Why the send path of an earlier reply: the server learns when its reply left
 * only after sending it, so reply N carries the send path of reply N-1 (usually).
 * Each interval is measured on one host's clock, so the breakdown needs no clock
 * synchronisation between the two machines. Intervals saturate at 2^32-1 ns.
 *
 * Data: a request is `length` bytes (the header, then any payload); the server
 * answers with the same bytes, type REPLY and the server fields filled in. UDP: one
 * message per datagram and the datagram size must equal `length`. TCP: messages
 * back to back on the stream, framed by `length`.
 *
 * Control (TCP only, on the server's port): a connection whose first four bytes
 * are "BPCT" is the control session, in the protocol every busypoll tool shares
 * (tools/harness/control.h): HELLO (the server's mode, CPU, delay), SET_MODE (the
 * data loop's mode and timestamps), START and STOP around each run (the server's
 * evidence, its requests answered and bad messages dropped).
 */
#ifndef BP_TOOLS_PINGPONG_PROTO_H
#define BP_TOOLS_PINGPONG_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BP_PP_MAGIC 0x47505042u /* "BPPG" little-endian */
#define BP_PP_VERSION 2 /* 2: control moved to tools/harness/control.h */
#define BP_PP_HDR_LEN 48
/* The largest message: one UDP datagram over IPv4 (TCP uses the same limit). */
#define BP_PP_MAX_LEN 65507u

enum bp_pp_type {
	BP_PP_REQUEST = 1,
	BP_PP_REPLY = 2,
	/* 3 and 4 were version 1's control messages */
};

/* Reply flags. */
enum {
	BP_PP_F_SRV_TIMED = 1u << 0,   /* the server timestamps: srv_rx_ns, srv_proc_ns valid */
	BP_PP_F_SRV_NO_RXTS = 1u << 1, /* ... but the kernel gave no receive timestamp:
					* srv_rx_ns is 0 and means nothing */
	BP_PP_F_SRV_PREV = 1u << 2,    /* srv_send_ns and prev_seq are valid */
};
#define BP_PP_F_ALL (BP_PP_F_SRV_TIMED | BP_PP_F_SRV_NO_RXTS | BP_PP_F_SRV_PREV)

/* Why a message was refused (bp_pp_hdr_decode). */
enum bp_pp_err {
	BP_PP_OK = 0,
	BP_PP_ERR_SHORT,      /* fewer bytes than a header */
	BP_PP_ERR_MAGIC,      /* not a pingpong message (garbage) */
	BP_PP_ERR_VERSION,    /* another protocol version */
	BP_PP_ERR_TYPE,       /* unknown type, or not the type expected here */
	BP_PP_ERR_FLAGS,      /* unknown flag bits, or flags where none belong */
	BP_PP_ERR_LENGTH,     /* length field below the header or above BP_PP_MAX_LEN */
	BP_PP_ERR_OVERSIZED,  /* datagram longer than its length field */
	BP_PP_ERR_TRUNCATED,  /* datagram shorter than its length field */
	BP_PP_ERR_COUNT
};

struct bp_pp_hdr {
	uint8_t version;
	uint8_t type;
	uint16_t flags;
	uint32_t length;
	uint64_t seq;
	uint64_t client_ts;
	uint32_t srv_rx_ns;
	uint32_t srv_proc_ns;
	uint32_t srv_send_ns;
	uint64_t prev_seq;
};

/* bp_pp_hdr_encode - the 48 header bytes into buf (magic and version included). */
void bp_pp_hdr_encode(const struct bp_pp_hdr *h, uint8_t buf[BP_PP_HDR_LEN]);

/*
 * bp_pp_hdr_decode - parse and validate the header at buf, of which avail bytes
 * are at hand. want_type: the type expected here (0 = any known type).
 * dgram: avail is one whole datagram, so it must equal the length field
 * (BP_PP_ERR_OVERSIZED / _TRUNCATED); otherwise (a stream) avail may be anything
 * from the header up, and the caller waits for h->length bytes.
 * Requests must carry no flags. Returns BP_PP_OK or the reason (h is filled as far
 * as it could be read).
 */
int bp_pp_hdr_decode(const uint8_t *buf, size_t avail, int want_type, bool dgram,
		     struct bp_pp_hdr *h);

/* bp_pp_err_text - a few words for a BP_PP_ERR_* ("wrong magic (garbage)"). */
const char *bp_pp_err_text(int err);

/* bp_pp_sat32 - an interval in ns as the wire's u32 (saturating at 2^32-1). */
static inline uint32_t bp_pp_sat32(uint64_t ns)
{
	return ns > UINT32_MAX ? UINT32_MAX : (uint32_t)ns;
}

/* ---- reply fields in place ---- */

/*
 * bp_pp_reply_fill - turn the request at msg (already validated) into the reply in
 * place: type REPLY, flags, and the server fields; seq, client_ts, length and the
 * payload stay as the client sent them.
 */
void bp_pp_reply_fill(uint8_t *msg, uint16_t flags, uint32_t srv_rx_ns, uint32_t srv_proc_ns,
		      uint32_t srv_send_ns, uint64_t prev_seq);

#ifdef __cplusplus
}
#endif
#endif
