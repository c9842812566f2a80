/* SPDX-License-Identifier: MIT */
/*
 * The options every subcommand has (besides --help and --version, which the
 * parser itself answers): -q/--quiet and --format table|json|csv. A command's
 * options struct carries them as TOOL_COMMON, so its code reads o->quiet and
 * o->format while the shared table fills o->common.
 */
#ifndef BP_TOOLS_COMMON_OPTS_H
#define BP_TOOLS_COMMON_OPTS_H

#include <stdbool.h>

#include "tools/common/opt.h"

/* The output formats, in --format's order. */
enum tool_format { TOOL_FORMAT_TABLE = 0, TOOL_FORMAT_JSON, TOOL_FORMAT_CSV };

#define TOOL_COMMON_FIELDS                                                              \
	bool quiet;               /* -q: no progress or log lines */                   \
	enum tool_format format;  /* --format */
struct tool_common {
	TOOL_COMMON_FIELDS
};
/* In a command's options struct: o->quiet and o->format, and o->common for the table. */
#define TOOL_COMMON                                                                     \
	union {                                                                         \
		struct tool_common common;                                              \
		struct {                                                                \
			TOOL_COMMON_FIELDS                                              \
		};                                                                      \
	}

/* The common layer: -q/--quiet and --format table|json|csv (base: struct tool_common). */
extern const struct opt_table tool_common_table;
/* tool_format_names - "table", "json", "csv", NULL. */
extern const char *const tool_format_names[];

#endif
