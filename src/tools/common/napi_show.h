/* SPDX-License-Identifier: MIT */
/*
 * The per-NAPI settings as `busypoll napi` and `busypoll testbed status` show and
 * take them: key=value parsing for `napi set` (per NAPI, over netlink, and the
 * device-wide sysfs knobs), and one table row / JSON object per NAPI so that both
 * commands print a NAPI the same way. No I/O other than the FILE given.
 */
#ifndef BP_TOOLS_COMMON_NAPI_SHOW_H
#define BP_TOOLS_COMMON_NAPI_SHOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <busypoll/napi.h>

/*
 * napi_parse_setting - one "key=value" of `napi set ID` into *s (sets the value and
 * its BP_NAPI_HAS_* bit). Keys: defer-hard-irqs (0..2^31-1), gro-flush-timeout and
 * irq-suspend-timeout (ns, 0..2^64-1), threaded (0|1). Returns 0, or -EINVAL with
 * one line in err that names the key (unknown, read-only, given twice, no '=') or
 * the value (not a whole number, out of range).
 */
int napi_parse_setting(const char *arg, bp_napi_settings *s, char *err, size_t errlen);

/* The device-wide sysfs knobs, /sys/class/net/DEV/<name>, in output order. */
enum { NAPI_KNOB_DEFER, NAPI_KNOB_GRO_FLUSH, NAPI_NKNOBS };
extern const char *const napi_knob_names[NAPI_NKNOBS]; /* "napi_defer_hard_irqs", "gro_flush_timeout" */

struct napi_knobs {
	bool has[NAPI_NKNOBS];
	uint64_t value[NAPI_NKNOBS];
};

/*
 * napi_parse_knob - one "knob=value" of `napi set --device DEV` into *k:
 * napi_defer_hard_irqs (0..2^31-1, the kernel's limit) or gro_flush_timeout (ns).
 * Returns 0 or -EINVAL with one line in err naming the knob or value.
 */
int napi_parse_knob(const char *arg, struct napi_knobs *k, char *err, size_t errlen);

/*
 * napi_table_header / napi_table_row - a NAPI as one line of a table. lead is an
 * extra first column ("SIDE" / "a"), NULL for none; dev is the device name, NULL
 * or "" when unknown. Attributes the kernel did not send print as "-".
 */
void napi_table_header(FILE *out, const char *lead);
void napi_table_row(FILE *out, const char *lead, const struct bp_napi_info *n, const char *dev);

/*
 * napi_emit - the NAPI's fields into the current object of e (json, csv header or
 * row): "id", "ifindex", "device" (when dev is not NULL), "irq", "pid",
 * "defer_hard_irqs", "gro_flush_timeout_ns", "irq_suspend_timeout_ns", "threaded";
 * null (csv: empty) for what the kernel did not send.
 */
struct emit;
void napi_emit(struct emit *e, const struct bp_napi_info *n, const char *dev);

#endif
