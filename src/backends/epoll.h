/* SPDX-License-Identifier: MIT */
/* Insides of the epoll backend, shared by its files (epoll.c, epoll_modes.c). */
#ifndef BP_BACKENDS_EPOLL_H
#define BP_BACKENDS_EPOLL_H

#include <stdint.h>
#include <sys/epoll.h>

#include "backends/backend.h"

#define EPOLL_BATCH 256

/*
 * The epoll backend's state, bl->data. Another backend that keeps its sockets in an
 * epoll set (xsk: its AF_XDP rings beside them) embeds it first in its own state,
 * opens it with bp_epoll_open and calls bp_backend_epoll's operations on the loop.
 */
struct epoll_backend {
	int epfd;
	struct epoll_event evs[EPOLL_BATCH];
};

extern const struct bp_backend_ops bp_backend_epoll;

/*
 * bp_epoll_open - the epoll set of b (caller-allocated, zeroed) for loop bl, with
 * the busy-poll parameters of bl->mode's policy; sets bl->data = b. 0 or -errno
 * with the last error set (bl->data NULL then). Closed with close(b->epfd).
 */
int bp_epoll_open(struct bp_backend_loop *bl, struct epoll_backend *b);

/* epoll_modes.c: the grammar's epoll families (ended by a NULL name) and their check. */
extern const struct bp_mode_family bp_epoll_families[];
int bp_epoll_check(const struct bp_mode *mode, char *err, size_t errlen);

/*
 * bp_epoll_set_params - EPIOCSPARAMS on epoll fd epfd (Linux 6.9): the one place
 * this ioctl is made, for a loop's busy polling and for the probe. Returns 0 or
 * the raw -errno (-ENOTTY or -EINVAL before 6.9, -EPERM for a budget above
 * NAPI_POLL_WEIGHT without CAP_NET_ADMIN); names nothing in the last error.
 */
int bp_epoll_set_params(int epfd, uint32_t usecs, uint16_t budget, uint8_t prefer);

#endif
