/* SPDX-License-Identifier: MIT */
/* Insides of the io_uring backend, shared by its files (uring.c, uring_modes.c). */
#ifndef BP_BACKENDS_URING_H
#define BP_BACKENDS_URING_H

#include <stdint.h>

#include "backends/backend.h"

/* uring_modes.c: the grammar's uring families (ended by a NULL name) and their check. */
extern const struct bp_mode_family bp_uring_families[];
int bp_uring_check(const struct bp_mode *mode, char *err, size_t errlen);

/* bp_uring_setup_flags - the IORING_SETUP_* flags of a ring setup (enum bp_uring_setup). */
unsigned bp_uring_setup_flags(enum bp_uring_setup setup);

/*
 * bp_uring_register_napi - IORING_REGISTER_NAPI on ring_fd (raw syscall: liburing 2.3
 * has no helper; nr_args must be 1): the one place it is made, for a loop's busy
 * polling, its static NAPI ids, and the probe. Returns 0 or the raw -errno (-EINVAL:
 * the kernel lacks the opcode, or static tracking); names nothing in the last error.
 */
int bp_uring_register_napi(int ring_fd, struct bp_io_uring_napi *napi);

#endif
