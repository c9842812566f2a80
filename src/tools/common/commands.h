/* SPDX-License-Identifier: MIT */
/* The busypoll program's subcommands: one file each, one entry in main.c's table. */
#ifndef BP_TOOLS_COMMON_COMMANDS_H
#define BP_TOOLS_COMMON_COMMANDS_H

/* The program's version: BP_VERSION, from project() in CMakeLists.txt. */
#ifndef BP_VERSION
#error "BP_VERSION comes from the build (CMakeLists.txt)"
#endif

/* Exit statuses, bp_exit_for and bp_tool_error: the skeleton every subcommand shares. */
#include "tools/common/cmd.h"

int cmd_modes(int argc, char **argv);
int cmd_rr(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_tune(int argc, char **argv);
int cmd_testbed(int argc, char **argv);
int cmd_napi(int argc, char **argv);
int cmd_pingpong(int argc, char **argv);
int cmd_target(int argc, char **argv);
int cmd_perf(int argc, char **argv);
int cmd_agent(int argc, char **argv);

#endif
