/* SPDX-License-Identifier: MIT */
/*
 * A connection's send queue: bytes not yet taken by the kernel, in order.
 * While pinned (a completion backend has a send in flight that points into it),
 * the queued bytes never move: a push that needs room moves to a new buffer and
 * keeps the old one alive until bp_sendq_unpin().
 */
#ifndef BP_CORE_SENDQ_H
#define BP_CORE_SENDQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bp_sendq {
	uint8_t *buf;
	size_t head, tail, cap;
	uint8_t *retired;   /* old buffer kept alive while pinned */
	bool pinned;
};

/* bp_sendq_push - append len bytes. 0 or -ENOMEM. */
int bp_sendq_push(struct bp_sendq *q, const void *data, size_t len);
static inline size_t bp_sendq_len(const struct bp_sendq *q) { return q->tail - q->head; }
static inline const uint8_t *bp_sendq_data(const struct bp_sendq *q) { return q->buf + q->head; }
/* bp_sendq_consume - drop the first n bytes (n <= len). */
void bp_sendq_consume(struct bp_sendq *q, size_t n);
/* bp_sendq_pin / unpin - see above. */
static inline void bp_sendq_pin(struct bp_sendq *q) { q->pinned = true; }
void bp_sendq_unpin(struct bp_sendq *q);
void bp_sendq_free(struct bp_sendq *q);

#endif
