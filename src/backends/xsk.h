/* SPDX-License-Identifier: MIT */
/* Insides of the xsk backend, shared by its files (xsk.c, xsk_modes.c). */
#ifndef BP_BACKENDS_XSK_H
#define BP_BACKENDS_XSK_H

#include "backends/backend.h"

/* xsk_modes.c: the grammar's xsk families (ended by a NULL name) and their check. */
extern const struct bp_mode_family bp_xsk_families[];
int bp_xsk_check(const struct bp_mode *mode, char *err, size_t errlen);

/* xsk:napi,prefer: what each NAPI the socket is served by gets for the run (napi.rst). */
#define BP_XSK_PREFER_DEFER 2
#define BP_XSK_PREFER_GRO_FLUSH_NS 200000ull

#endif
