/* SPDX-License-Identifier: MIT */
/* A connection's send queue; see sendq.h for the pinning rule. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/sendq.h"

#define SENDQ_MIN_CAP 4096u

/* Room for len more bytes at the tail without moving what is queued. */
static int sendq_grow_to_new(struct bp_sendq *q, size_t need)
{
	size_t cap = q->cap ? q->cap : SENDQ_MIN_CAP;
	size_t live = q->tail - q->head;
	uint8_t *nbuf;

	while (cap < need)
		cap *= 2;
	nbuf = malloc(cap);
	if (!nbuf)
		return -ENOMEM;
	if (live)
		memcpy(nbuf, q->buf + q->head, live);
	if (q->pinned) {
		/* The kernel may still read the in-flight bytes: keep the buffer they live
		 * in until unpin. If that one is already retired, the current buffer was
		 * made after the send was submitted and holds no in-flight bytes. */
		if (q->retired)
			free(q->buf);
		else
			q->retired = q->buf;
	} else {
		free(q->buf);
	}
	q->buf = nbuf;
	q->cap = cap;
	q->head = 0;
	q->tail = live;
	return 0;
}

int bp_sendq_push(struct bp_sendq *q, const void *data, size_t len)
{
	size_t live = q->tail - q->head;

	if (q->tail + len > q->cap) {
		if (!q->pinned && live + len <= q->cap) {
			/* Slide the live bytes to the front: no allocation. */
			memmove(q->buf, q->buf + q->head, live);
			q->head = 0;
			q->tail = live;
		} else {
			int ret = sendq_grow_to_new(q, live + len);
			if (ret)
				return ret;
		}
	}
	memcpy(q->buf + q->tail, data, len);
	q->tail += len;
	return 0;
}

void bp_sendq_consume(struct bp_sendq *q, size_t n)
{
	q->head += n;
	if (q->head >= q->tail && !q->pinned)
		q->head = q->tail = 0;
}

void bp_sendq_unpin(struct bp_sendq *q)
{
	q->pinned = false;
	free(q->retired);
	q->retired = NULL;
	if (q->head >= q->tail)
		q->head = q->tail = 0;
}

void bp_sendq_free(struct bp_sendq *q)
{
	free(q->buf);
	free(q->retired);
	memset(q, 0, sizeof(*q));
}
