/* SPDX-License-Identifier: MIT */
/*
 * The rr wire protocol (busypoll rr). All integers little-endian.
 *
 * Every TCP connection starts with a 32-byte hello from the client:
 *   magic u32 'BPRR' | version u16 | kind u8 (data/control) | flags u8
 *   request_size u32 | response_size u32 | run_id u64 | flow_id u32 | reserved u32 (0)
 * The server answers with a 16-byte ack:
 *   magic u32 | version u16 | status u16 (0 = accepted, else BP_RR_REFUSE_*) | napi_id u32 | reserved u32
 * Then on a data flow: request_size bytes up, response_size bytes down, repeated.
 * On a control connection: fixed 16-byte commands (START, STOP) and a fixed-size
 * STATS reply with the server's side of the interval.
 * UDP flows: each request datagram starts with the run_id (u64), so request_size >= 8;
 * the run and its response size are announced by the control connection's hello
 * (flags BP_RR_FLAG_UDP), and the server answers each datagram with that many bytes.
 */
#ifndef BUSYPOLL_RR_PROTO_H
#define BUSYPOLL_RR_PROTO_H

#include <stddef.h>
#include <stdint.h>

#define BP_RR_MAGIC 0x52525042u /* "BPRR" little-endian */
#define BP_RR_VERSION 1
#define BP_RR_HELLO_LEN 32
#define BP_RR_ACK_LEN 16
#define BP_RR_MAX_SIZE (16u << 20) /* larger requests or responses are refused */
#define BP_RR_UDP_MAX_SIZE 65507u

enum bp_rr_kind {
	BP_RR_KIND_DATA = 0,
	BP_RR_KIND_CONTROL = 1,
};

enum {
	BP_RR_FLAG_UDP = 1u << 0, /* control: this run's flows are UDP */
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
 * reason to refuse (magic, version, kind, size: 0, above BP_RR_MAX_SIZE, or a UDP
 * run with request_size < 8 or sizes above a datagram).
 */
int bp_rr_hello_decode(const uint8_t buf[BP_RR_HELLO_LEN], struct bp_rr_hello *h);
void bp_rr_ack_encode(const struct bp_rr_ack *a, uint8_t buf[BP_RR_ACK_LEN]);
/* bp_rr_ack_decode - 0, or -EPROTO on a bad magic/version. */
int bp_rr_ack_decode(const uint8_t buf[BP_RR_ACK_LEN], struct bp_rr_ack *a);
/* bp_rr_refuse_reason - text for a BP_RR_REFUSE_* status. */
const char *bp_rr_refuse_reason(int status);

/* ---- control ---- */
#define BP_RR_CMD_LEN 16
enum bp_rr_cmd {
	BP_RR_CMD_START = 1, /* snapshot the server's counters */
	BP_RR_CMD_STOP = 2,  /* snapshot again and reply with STATS */
};

/* The server's side of a run, between START and STOP (STATS reply). */
struct bp_rr_stats {
	uint64_t transactions;   /* served for this run_id since its first flow (all phases) */
	uint64_t interval_ns;    /* START to STOP on the server's clock */
	uint64_t utime_us, stime_us;
	uint64_t nvcsw, nivcsw;
	uint64_t busy_poll_rx, net_rx;
	uint64_t syscalls, empty_polls, wakeups, waits, completions;
	uint32_t threads;
	uint32_t n_napi_ids;
	uint32_t napi_ids[8];
	char mode[128];          /* the server's mode, canonical text */
};
#define BP_RR_STATS_LEN (8 + 13 * 8 + 4 + 4 + 8 * 4 + 128)

void bp_rr_cmd_encode(uint32_t cmd, uint64_t run_id, uint8_t buf[BP_RR_CMD_LEN]);
/* bp_rr_cmd_decode - 0, or -EPROTO (bad magic, unknown command). */
int bp_rr_cmd_decode(const uint8_t buf[BP_RR_CMD_LEN], uint32_t *cmd, uint64_t *run_id);
/* STATS: magic u32 | version u16 | pad u16 | fields in the order above. */
void bp_rr_stats_encode(const struct bp_rr_stats *s, uint8_t buf[BP_RR_STATS_LEN]);
int bp_rr_stats_decode(const uint8_t buf[BP_RR_STATS_LEN], struct bp_rr_stats *s);

#endif
