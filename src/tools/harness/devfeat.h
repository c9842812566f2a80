/* SPDX-License-Identifier: MIT */
/*
 * A device's GRO and TSO state, as the diagnosis (tools/harness/diagnose.h) needs
 * it: read with the ethtool ioctl (ETHTOOL_GGRO, ETHTOOL_GTSO) in the calling
 * thread's network namespace (enter a bed's first). A state that cannot be read
 * (no such device, no permission) is DIAG_UNKNOWN, never a guess.
 */
#ifndef BP_TOOLS_HARNESS_DEVFEAT_H
#define BP_TOOLS_HARNESS_DEVFEAT_H

#include "tools/harness/diagnose.h"

/* devfeat_read - dev's GRO into *gro and TSO into *tso (DIAG_ON, DIAG_OFF or DIAG_UNKNOWN). */
void devfeat_read(const char *dev, enum diag_tri *gro, enum diag_tri *tso);
/* devfeat_text - a feature for people: "on", "off", "unknown". */
const char *devfeat_text(enum diag_tri t);
struct emit;
/* devfeat_emit - a feature in json as key: true, false, or null when not known. */
void devfeat_emit(struct emit *e, const char *key, enum diag_tri t);

#endif
