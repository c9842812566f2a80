/* SPDX-License-Identifier: MIT */
/*
 * What the two-host agent and its clients put in control messages beyond the
 * protocol's own fields (tools/harness/control.h): a NAPI instance, the path report
 * (include/busypoll/nic.h's struct bp_path_report) and the agent's HELLO_OK. Both
 * ends use these, so a report read on the client is the same struct the agent
 * made and prints the same way (tools/agent/path_out.c). Decoders check every
 * value's range and never trust a count: fuzz/fuzz_control.c feeds them garbage.
 */
#ifndef BP_TOOLS_LINK_AGENT_WIRE_H
#define BP_TOOLS_LINK_AGENT_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <busypoll/napi.h>
#include <busypoll/nic.h>

#include "tools/harness/control.h"
#include "tools/harness/diagnose.h"

#define AW_MAX_CPUS 256

/* ---- a NAPI ---- */

/* aw_napi_put - n's fields into m's body (CTL_T_NAPI_ID, CTL_T_N_*). */
void aw_napi_put(struct ctl_msg *m, const struct bp_napi_info *n);
/* aw_napi_record - n as one record field of tag. */
void aw_napi_record(struct ctl_msg *m, uint16_t tag, const struct bp_napi_info *n);
/* aw_napi_get - from fields [val, val+len) (a body or a record): 0, or -EPROTO (missing, out of range). */
int aw_napi_get(const uint8_t *val, size_t len, struct bp_napi_info *n);

/* ---- the path report ---- */

/* aw_path_put - m made a PATH message holding r (m's previous content is dropped, as aw_hello_put). */
void aw_path_put(struct ctl_msg *m, const struct bp_path_report *r);
/* aw_path_get - the report from m: 0, or -EPROTO (a field missing or out of range). */
int aw_path_get(const struct ctl_msg *m, struct bp_path_report *r);

/*
 * The device's GRO and TSO beside its path report, for the diagnosis
 * (tools/harness/diagnose.h): each sent only when read (DIAG_ON, DIAG_OFF), so an
 * unreadable one and an agent that predates them both leave it DIAG_UNKNOWN.
 */
struct aw_features {
	enum diag_tri gro, tso;
};

/* aw_features_put - f's known features into m (after aw_path_put). */
void aw_features_put(struct ctl_msg *m, const struct aw_features *f);
/* aw_features_get - the features from m: 0 (absent ones DIAG_UNKNOWN), or -EPROTO (a value not 0 or 1). */
int aw_features_get(const struct ctl_msg *m, struct aw_features *f);

/* ---- the agent's HELLO_OK ---- */

struct aw_hello {
	char version[32];
	uint32_t pid;
	char hostname[64];
	char kernel[128];
	uint64_t netns;            /* its network namespace's inode */
	int busy_poll, busy_read;  /* net.core sysctls, BP_UNKNOWN (-1) unreadable: then not sent */
	char sysctl_why[160];      /* why one is unreadable there ("" both read) */
	int cpus[AW_MAX_CPUS];     /* --cpus: where its servers may run (none: any) */
	int ncpus;
};

/* aw_hello_put - the agent's HELLO_OK (tool "agent"). */
void aw_hello_put(struct ctl_msg *m, const struct aw_hello *h);
/* aw_hello_get - from a HELLO_OK: 0, or -EPROTO (not an agent's). */
int aw_hello_get(const struct ctl_msg *m, struct aw_hello *h);

/* aw_cpus - every CTL_T_CPU of fields [val, val+len) into cpus (at most max; -1 kept); returns the count. */
int aw_cpus(const uint8_t *val, size_t len, int *cpus, int max);

#endif
