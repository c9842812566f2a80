/* SPDX-License-Identifier: MIT */
/*
 * Small helpers shared by the busypoll subcommands. Pure functions with no state,
 * so any command (and its unit test) can use them. (JSON/csv strings and numbers
 * are in tools/emit.h.)
 */
#ifndef BP_TOOLS_TOOL_UTIL_H
#define BP_TOOLS_TOOL_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * tool_parse_u64 - a whole decimal number, nothing before or after it. strtoull
 * alone would take " 5", "+5" and "-1" (as 2^64-1); an option never means those.
 * Returns 0, -EINVAL (not a number; *neg set when it looked negative) or -ERANGE.
 */
int tool_parse_u64(const char *s, uint64_t *v, bool *neg);

#endif
