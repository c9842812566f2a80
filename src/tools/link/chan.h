/* SPDX-License-Identifier: MIT */
/*
 * The secure channel of an authenticated agent session (after link/auth.h's
 * handshake): each message is one libsodium crypto_secretstream_xchacha20poly1305
 * record, framed on the stream as
 *
 *   length u32 little-endian (the record's bytes: message + CHAN_ABYTES) | record
 *
 * One stream per direction, each with its own key and header (exchanged in the
 * handshake). The stream authenticates every record and its place in the
 * sequence, so a changed, dropped, reordered, replayed or reflected record fails
 * to open. A length above CHAN_MAX_MSG + CHAN_ABYTES is refused before any byte
 * of it is read, so an authenticated peer cannot make us buffer more than that
 * either. No I/O here: the callers own the sockets.
 */
#ifndef BP_TOOLS_LINK_CHAN_H
#define BP_TOOLS_LINK_CHAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sodium.h>

#define CHAN_KEY_BYTES crypto_secretstream_xchacha20poly1305_KEYBYTES     /* 32 */
#define CHAN_HEADER_BYTES crypto_secretstream_xchacha20poly1305_HEADERBYTES /* 24 */
#define CHAN_ABYTES crypto_secretstream_xchacha20poly1305_ABYTES          /* 17 */
/* The largest message: the control protocol's (16-byte header, 64 KiB body). */
#define CHAN_MAX_MSG (16 + 65536)
#define CHAN_FRAME_MAX (4 + CHAN_MAX_MSG + CHAN_ABYTES)

struct chan {
	crypto_secretstream_xchacha20poly1305_state tx, rx;
	uint64_t sealed, opened; /* records so far, each way */
};

/*
 * chan_init_tx - start our direction with key; writes the stream header (for the
 * peer) to header. chan_init_rx - start the peer's direction from its key and
 * header. 0, or -EPROTO for a header the library refuses.
 */
int chan_init_tx(struct chan *c, const uint8_t key[CHAN_KEY_BYTES],
		 uint8_t header[CHAN_HEADER_BYTES]);
int chan_init_rx(struct chan *c, const uint8_t key[CHAN_KEY_BYTES],
		 const uint8_t header[CHAN_HEADER_BYTES]);

/*
 * chan_seal - msg (len at most CHAN_MAX_MSG) as one framed record into out (cap
 * bytes, at least len + 4 + CHAN_ABYTES). Returns the frame's length, or -EMSGSIZE.
 */
int chan_seal(struct chan *c, const void *msg, size_t len, uint8_t *out, size_t cap);

/*
 * chan_open - the first framed record in in[0..avail): opened into out (cap at
 * least CHAN_MAX_MSG), *len its length. Returns the bytes of in it took, 0 when
 * the record is not all there yet, -EMSGSIZE for a length above the limit, or
 * -EBADMSG for a record that does not open (tampered, out of order, another key,
 * shorter than its MAC).
 */
int chan_open(struct chan *c, const uint8_t *in, size_t avail, uint8_t *out, size_t cap,
	      size_t *len);

/* chan_wipe - zero both streams' state. */
void chan_wipe(struct chan *c);

#endif
