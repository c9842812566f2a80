/* SPDX-License-Identifier: MIT */
/* Insides of the epoll backend, shared by its files (epoll.c, epoll_modes.c). */
#ifndef BP_BACKENDS_EPOLL_H
#define BP_BACKENDS_EPOLL_H

#include <stdint.h>

#include "backends/backend.h"

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
