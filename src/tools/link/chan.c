/* SPDX-License-Identifier: MIT */
/* The secure channel of an agent session: framed secretstream records (see chan.h). */
#include <errno.h>
#include <string.h>

#include "tools/link/chan.h"

int chan_init_tx(struct chan *c, const uint8_t key[CHAN_KEY_BYTES],
		 uint8_t header[CHAN_HEADER_BYTES])
{
	c->sealed = 0;
	crypto_secretstream_xchacha20poly1305_init_push(&c->tx, header, key);
	return 0;
}

int chan_init_rx(struct chan *c, const uint8_t key[CHAN_KEY_BYTES],
		 const uint8_t header[CHAN_HEADER_BYTES])
{
	c->opened = 0;
	return crypto_secretstream_xchacha20poly1305_init_pull(&c->rx, header, key) ? -EPROTO : 0;
}

static void put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int chan_seal(struct chan *c, const void *msg, size_t len, uint8_t *out, size_t cap)
{
	unsigned long long clen;

	if (len > CHAN_MAX_MSG || cap < 4 + len + CHAN_ABYTES)
		return -EMSGSIZE;
	crypto_secretstream_xchacha20poly1305_push(&c->tx, out + 4, &clen, msg, len, NULL, 0,
						   crypto_secretstream_xchacha20poly1305_TAG_MESSAGE);
	put_le32(out, (uint32_t)clen);
	c->sealed++;
	return (int)(4 + clen);
}

int chan_open(struct chan *c, const uint8_t *in, size_t avail, uint8_t *out, size_t cap,
	      size_t *len)
{
	unsigned long long mlen;
	unsigned char tag;
	uint32_t rlen;

	if (avail < 4)
		return 0;
	rlen = get_le32(in);
	if (rlen < CHAN_ABYTES)
		return -EBADMSG; /* not even the tag and MAC */
	if (rlen > CHAN_MAX_MSG + CHAN_ABYTES || cap < rlen - CHAN_ABYTES)
		return -EMSGSIZE;
	if (avail - 4 < rlen)
		return 0;
	if (crypto_secretstream_xchacha20poly1305_pull(&c->rx, out, &mlen, &tag, in + 4, rlen, NULL,
						       0) != 0 ||
	    tag != crypto_secretstream_xchacha20poly1305_TAG_MESSAGE)
		return -EBADMSG;
	*len = (size_t)mlen;
	c->opened++;
	return (int)(4 + rlen);
}

void chan_wipe(struct chan *c)
{
	sodium_memzero(c, sizeof(*c));
}
