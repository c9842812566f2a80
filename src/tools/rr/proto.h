/* SPDX-License-Identifier: MIT */
/*
 * The rr wire protocol (busypoll rr). All integers little-endian.
 *
 * A TCP connection is a data flow or the run's control session, told apart by its
 * first four bytes: 'BPRR' starts a data flow's 32-byte hello,
 *   magic u32 'BPRR' | version u16 | kind u8 (data) | flags u8 (0)
 *   request_size u32 | response_size u32 | run_id u64 | flow_id u32 | reserved u32 (0)
 * which the server answers with a 16-byte ack:
 *   magic u32 | version u16 | status u16 (0 = accepted, else BP_RR_REFUSE_*) | napi_id u32 | reserved u32
 * then request_size bytes up, response_size bytes down, repeated. 'BPCT' starts a
 * control session (tools/harness/control.h): HELLO (tool "rr", the run id, the
 * sizes, CTL_F_UDP for a UDP run), then START and STOP around the measured
 * interval, answered with the server's evidence.
 * UDP flows: each request datagram starts with the run_id (u64), so request_size >= 8;
 * the run and its response size are announced by the control session's HELLO, and
 * the server answers each datagram with that many bytes.
 */
#ifndef BP_TOOLS_RR_PROTO_H
#define BP_TOOLS_RR_PROTO_H

#include <stddef.h>
#include <stdint.h>

#define BP_RR_MAGIC 0x52525042u /* "BPRR" little-endian */
#define BP_RR_VERSION 2 /* 2: the control session speaks tools/harness/control.h */
#define BP_RR_HELLO_LEN 32
#define BP_RR_ACK_LEN 16
#define BP_RR_MAX_SIZE (16u << 20) /* larger requests or responses are refused */
#define BP_RR_UDP_MAX_SIZE 65507u

enum bp_rr_kind {
	BP_RR_KIND_DATA = 0,      /* (1 was the control kind of version 1) */
};

enum bp_rr_refuse {
	BP_RR_OK = 0,
	BP_RR_REFUSE_MAGIC = 1,
	BP_RR_REFUSE_VERSION = 2,
	BP_RR_REFUSE_KIND = 3,
	BP_RR_REFUSE_SIZE = 4,
	BP_RR_REFUSE_RESERVED = 5,
	BP_RR_REFUSE_BUSY = 6,   /* server at its limit */
};

struct bp_rr_hello {
	uint16_t version;
	uint8_t kind;
	uint8_t flags;
	uint32_t request_size;
	uint32_t response_size;
	uint64_t run_id;
	uint32_t flow_id;
};

struct bp_rr_ack {
	uint16_t status;
	uint32_t napi_id;
};

/* bp_rr_hello_encode - 32 bytes into buf. */
void bp_rr_hello_encode(const struct bp_rr_hello *h, uint8_t buf[BP_RR_HELLO_LEN]);
/*
 * bp_rr_hello_decode - parse and validate 32 bytes. Returns BP_RR_OK or the
 * reason to refuse (magic, version, kind, reserved bits, size: 0 or above
 * BP_RR_MAX_SIZE).
 */
int bp_rr_hello_decode(const uint8_t buf[BP_RR_HELLO_LEN], struct bp_rr_hello *h);
void bp_rr_ack_encode(const struct bp_rr_ack *a, uint8_t buf[BP_RR_ACK_LEN]);
/* bp_rr_ack_decode - 0, or -EPROTO on a bad magic/version. */
int bp_rr_ack_decode(const uint8_t buf[BP_RR_ACK_LEN], struct bp_rr_ack *a);
/* bp_rr_refuse_reason - text for a BP_RR_REFUSE_* status. */
const char *bp_rr_refuse_reason(int status);

#endif
