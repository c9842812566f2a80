/* SPDX-License-Identifier: MIT */
/*
 * NIC settings as text, the way the agent logs and journals them and the way
 * `--coalesce rx-usecs=0,rx-frames=1` takes them: comma-separated key=value lists
 * with ethtool's names. Pure functions (no I/O), so every command and its unit test
 * use them alike. Parsers return 0, or -EINVAL with one line in err naming the key
 * or value (unknown, repeated, out of range, no '=').
 */
#ifndef BP_TOOLS_COMMON_NIC_TEXT_H
#define BP_TOOLS_COMMON_NIC_TEXT_H

#include <stddef.h>

#include <busypoll/napi.h>
#include <busypoll/nic.h>

/*
 * nic_parse_coalesce - "rx-usecs=N,rx-frames=N,adaptive-rx=on|off,tx-usecs=N,
 * tx-frames=N,adaptive-tx=on|off" (any subset, any order) into *s (has set).
 */
int nic_parse_coalesce(const char *list, struct bp_nic_coalesce *s, char *err, size_t errlen);
/* nic_format_coalesce - the parameters in s->has, in that order, as the parser takes them ("" for none). */
void nic_format_coalesce(const struct bp_nic_coalesce *s, char *buf, size_t len);

/* nic_parse_channels - "rx=N,tx=N,other=N,combined=N" (any subset) into *s. */
int nic_parse_channels(const char *list, struct bp_nic_channels *s, char *err, size_t errlen);
/* nic_format_channels - the counts in s->has ("rx=4,tx=4"). */
void nic_format_channels(const struct bp_nic_channels *s, char *buf, size_t len);

/*
 * nic_parse_napi - "defer-hard-irqs=N,gro-flush-timeout=NS,..." into *s, each item
 * through napi_parse_setting (common/napi_show.h).
 */
int nic_parse_napi(const char *list, bp_napi_settings *s, char *err, size_t errlen);
/* nic_format_napi - the settable settings in s->has, as nic_parse_napi takes them. */
void nic_format_napi(const bp_napi_settings *s, char *buf, size_t len);

#endif
