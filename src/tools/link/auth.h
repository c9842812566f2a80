/* SPDX-License-Identifier: MIT */
/*
 * Authentication for a standing agent (`busypoll agent --listen ADDR:PORT
 * --key-file FILE`) and its clients: a shared 32-byte key in a file only its owner
 * can read, and a mutual challenge-response handshake over a byte stream with
 * libsodium (HMAC-SHA-256 over the transcript, keys derived with crypto_kdf; no
 * cryptography of our own). Both sides run this same module: the agent on each
 * accepted socket from its event loop, the client with auth_client_run().
 *
 * The handshake (all fixed sizes, so an unauthenticated peer reaches no parser):
 *
 *   client -> agent  HELLO      "BPAU" ver=1 role=1 0 0 | Nc (32 random bytes)        40
 *   agent -> client  CHALLENGE  "BPAU" ver=1 role=2 0 0 | Na (32) | MACa (32)         72
 *   client -> agent  RESPONSE   "BPAU" ver=1 role=1 0 0 | MACc (32) | stream hdr (24) 64
 *   agent -> client  ACCEPT     "BPAU" ver=1 role=2 0 0 | stream hdr (24)             32
 *
 *   T    = HELLO || the first 40 bytes of CHALLENGE  (both nonces, roles, version)
 *   MACa = HMAC(Kauth, "agent"  || T)                 the agent proves the key first
 *   MACc = HMAC(Kauth, "client" || T || MACa)
 *   Kauth, Ksess = crypto_kdf_derive_from_key(K, ids 1 and 2, context "bpagent1")
 *   keys = HMAC(Ksess, "c2a" || T) and HMAC(Ksess, "a2c" || T): one per direction
 *
 * An agent that refuses a new connection for load (too many unauthenticated ones)
 * sends BUSY instead of CHALLENGE and closes:
 *
 *   agent -> client  BUSY       "BPAU" ver=1 role=2 'B' 0                              8
 *
 * BUSY is not authenticated (nothing is before CHALLENGE): whoever can forge it can
 * as well drop the connection, so it tells the client only to try again later.
 *
 * A replayed transcript fails because Na is new for every connection; a reflected
 * MAC fails because the roles are in it; the agent also remembers recent client
 * nonces, so a replayed HELLO is named as such in its log. After ACCEPT every
 * message travels in a crypto_secretstream record (link/chan.h) under the
 * direction's key: confidential, authenticated, in order; anything tampered,
 * reordered, replayed or reflected fails to open and ends the session.
 *
 * The agent answers a wrong MAC by closing (no ACCEPT); the client, which checks
 * MACa first, knows an agent without the key from an agent with it.
 */
#ifndef BP_TOOLS_LINK_AUTH_H
#define BP_TOOLS_LINK_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tools/link/chan.h"

#define AUTH_KEY_BYTES 32
#define AUTH_NONCE_BYTES 32
#define AUTH_MAC_BYTES 32
#define AUTH_VERSION 1
#define AUTH_HELLO_LEN 40
#define AUTH_CHALLENGE_LEN 72
#define AUTH_RESPONSE_LEN 64
#define AUTH_ACCEPT_LEN 32
#define AUTH_BUSY_LEN 8
#define AUTH_MSG_MAX 72

/* auth_busy_msg - the agent's BUSY message into out. */
void auth_busy_msg(uint8_t out[AUTH_BUSY_LEN]);

struct auth_key {
	uint8_t k[AUTH_KEY_BYTES];
};

/*
 * auth_key_new - write a new random key to path: created with O_EXCL and mode 0600
 * (never over an existing file), fsynced. 0, or -errno with one line in err naming
 * the file and what to do.
 */
int auth_key_new(const char *path, char *err, size_t errlen);

/*
 * auth_key_load - read the key in path. Refused (-EACCES, one line in err) when the
 * file is readable or writable by group or others, is not a regular file (a FIFO is
 * refused at once: opened O_NONBLOCK, never waited on; a symlink is not followed), or
 * is owned by another user than this process's; -ELOOP (a line too) for a symbolic link;
 * -EINVAL when it holds no key.
 */
int auth_key_load(const char *path, struct auth_key *key, char *err, size_t errlen);

/* auth_key_wipe - zero the key in memory (sodium_memzero). */
void auth_key_wipe(struct auth_key *key);

enum auth_role { AUTH_CLIENT = 1, AUTH_AGENT = 2 };
enum auth_state { AUTH_RUNNING, AUTH_DONE, AUTH_FAILED };

/*
 * One side of one handshake. Feed it the peer's bytes with auth_input, send what
 * auth_output gives; when state is AUTH_DONE, chan is the session's secure channel.
 * On AUTH_FAILED, err and why say what happened, in words for the log:
 *   -EPROTO        garbage (not "BPAU"), or a message of the wrong role
 *   -EPROTONOSUPPORT  another version of the handshake
 *   -EACCES        the peer's MAC is wrong (wrong key, or a replayed transcript)
 *   -EBUSY         (client) the agent sent BUSY: it refused us for load, not for our key
 */
struct auth {
	enum auth_role role;
	enum auth_state state;
	int step;                          /* messages received so far */
	int err;
	char why[160];
	uint8_t kauth[AUTH_KEY_BYTES], ksess[AUTH_KEY_BYTES];
	uint8_t nonce[AUTH_NONCE_BYTES];   /* ours */
	uint8_t peer_nonce[AUTH_NONCE_BYTES];
	uint8_t transcript[AUTH_HELLO_LEN + 40];
	uint8_t mac_a[AUTH_MAC_BYTES];
	uint8_t rx_key[CHAN_KEY_BYTES];    /* client: the agent's stream key until ACCEPT */
	uint8_t in[AUTH_MSG_MAX];          /* the peer's message being read */
	size_t in_len;
	uint8_t out[AUTH_MSG_MAX];         /* ours, to send */
	size_t out_len;
	struct chan chan;                  /* ready when state is AUTH_DONE */
};

/*
 * auth_start - begin one handshake in role with key (copied into derived keys; the
 * caller may wipe its own). A client has its HELLO to send right away. 0, or
 * -errno when libsodium cannot start.
 */
int auth_start(struct auth *a, enum auth_role role, const struct auth_key *key);

/*
 * auth_input - take the peer's bytes, at most up to the end of the handshake
 * (whatever follows belongs to the channel: the caller keeps it). Returns how many
 * bytes it took. state, err, why and the output tell what came of them.
 */
size_t auth_input(struct auth *a, const uint8_t *data, size_t len);

/* auth_output - the bytes to send now (len 0: none); auth_output_sent - they went. */
const uint8_t *auth_output(const struct auth *a, size_t *len);
void auth_output_sent(struct auth *a);

/*
 * auth_nonce_seen - the agent's memory of recent client nonces: true if n was seen
 * before; remembered either way. O(1): one slot of a fixed table, for the log's words.
 */
bool auth_nonce_seen(const uint8_t n[AUTH_NONCE_BYTES]);

/* auth_wipe - zero every secret the handshake holds (the channel's too). */
void auth_wipe(struct auth *a);

/*
 * auth_client_run - the client's whole handshake on connected fd (blocking waits,
 * each up to timeout_ms), leaving the channel in *ch. 0, or -errno with one line in
 * err: -EACCES "the agent at PEER does not hold this key" or "refused our key",
 * -EBUSY "the agent at PEER is busy (too many unauthenticated connections); try
 * again", -ETIMEDOUT, -ECONNRESET, -EPROTO.
 */
int auth_client_run(int fd, const struct auth_key *key, const char *peer, int timeout_ms,
		    struct chan *ch, char *err, size_t errlen);

#endif
