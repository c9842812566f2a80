/* SPDX-License-Identifier: MIT */
/* The options every subcommand has (contract in tools/common/common_opts.h). */
#include "tools/common/common_opts.h"

const char *const tool_format_names[] = { "table", "json", "csv", NULL };

static const struct opt_spec common_specs[] = {
	{ .name = "quiet", .shortname = 'q', .kind = OPT_FLAG, OPT_FIELD(struct tool_common, quiet),
	  .help = "no progress or log lines" },
	{ .name = "format", .kind = OPT_CHOICE, OPT_FIELD(struct tool_common, format), .choices = tool_format_names,
	  .arg = "F", .help = "table, json or csv", .dflt = "table" },
};

const struct opt_table tool_common_table = OPT_TABLE(common_specs, NULL);
