/* SPDX-License-Identifier: MIT */
/*
 * Small helpers shared by the busypoll subcommands: strict number parsing and
 * JSON string output. Pure functions with no state, so any command (and its unit
 * test) can use them.
 */
#ifndef BP_TOOLS_TOOL_UTIL_H
#define BP_TOOLS_TOOL_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * tool_parse_u64 - a whole decimal number, nothing before or after it. strtoull
 * alone would take " 5", "+5" and "-1" (as 2^64-1); an option never means those.
 * Returns 0, -EINVAL (not a number; *neg set when it looked negative) or -ERANGE.
 */
int tool_parse_u64(const char *s, uint64_t *v, bool *neg);

/* tool_utf8_len - length of the valid UTF-8 sequence at s (at most n bytes, n >= 1), 0 if invalid. */
size_t tool_utf8_len(const unsigned char *s, size_t n);

/*
 * tool_json_string - s (at most max bytes, NUL or not) as a JSON string, quotes
 * included. Text may come from a peer or the kernel: control characters are
 * escaped and invalid UTF-8 becomes U+FFFD, so the document stays valid JSON
 * whatever the text holds.
 */
void tool_json_string(FILE *out, const char *s, size_t max);

#endif
