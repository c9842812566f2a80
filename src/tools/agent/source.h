/* SPDX-License-Identifier: MIT */
/*
 * Where the standing agent's connections come from, and how their refusals are
 * logged (door.c). A source is an IPv4 address, or an IPv6 /64 (one host's whole
 * SLAAC range: a peer that owns a /64 is one source, as OpenSSH's
 * PerSourceNetBlockSize counts it by default). Sources are hashed with a keyed hash
 * (libsodium's crypto_shorthash, SipHash-2-4, under a random key drawn at start), so
 * a peer cannot choose addresses that collide.
 *
 * The refusal log: a flood of refused connections must not flood the log, nor stop
 * the loop thread on a stderr nobody reads. Per source, the first refusal of an
 * interval is one line (the peer and why); the rest of that interval are counted and
 * summed in one line when the interval ends ("N more refusals in the last 10 s, the
 * last: WHY"). At most SRC_LOG_LINES refusal lines are written per interval in all;
 * what is over is summed in one line "N more refusals from M sources suppressed".
 */
#ifndef BP_TOOLS_AGENT_SOURCE_H
#define BP_TOOLS_AGENT_SOURCE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#define SRC_LOG_INTERVAL_S 10
#define SRC_LOG_LINES 10    /* refusal lines per interval, all sources together */
#define SRC_LOG_SLOTS 512   /* sources remembered by the log (a direct-mapped table) */

struct src {
	uint8_t b[16];      /* IPv4 as ::ffff:a.b.c.d; IPv6: its /64, the rest 0 */
	char text[48];      /* "a.b.c.d", or "x:x:x:x::/64" */
};

/* src_of - the source of sa (AF_INET or AF_INET6; anything else is one source "other"). */
void src_of(const struct sockaddr *sa, struct src *s);

/* src_same - a and b are one source. */
bool src_same(const struct src *a, const struct src *b);

/* src_hash - the keyed hash of s (the key drawn at the first call). Needs sodium_init. */
uint64_t src_hash(const struct src *s);

struct src_log_slot {
	struct src src;
	bool used;
	bool written;           /* its line of this interval was written */
	uint64_t held;          /* refusals counted, not written, since */
	char last_why[96];
};

struct src_log {
	struct src_log_slot slot[SRC_LOG_SLOTS];
	int lines;              /* refusal lines written this interval */
	uint64_t over, over_sources; /* what the cap held back this interval */
};

/*
 * src_log_refused - one refusal of peer (its "ADDR:PORT") from source s: written as
 * "PEER: refused: WHY" (agent_log) when it is the source's first this interval and
 * the interval's cap allows, else counted for src_log_flush.
 */
void src_log_refused(struct src_log *l, const struct src *s, const char *peer, const char *why);

/*
 * src_log_flush - the interval ends (a timer, and when the agent stops): one line per
 * source with refusals counted (up to the cap), then one line for the rest.
 */
void src_log_flush(struct src_log *l);

#endif
