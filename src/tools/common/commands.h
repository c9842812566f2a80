/* SPDX-License-Identifier: MIT */
/* The busypoll program's subcommands: one file each, one entry in main.c's table. */
#ifndef BP_TOOLS_COMMON_COMMANDS_H
#define BP_TOOLS_COMMON_COMMANDS_H

/* The program's version: BP_VERSION, from project() in CMakeLists.txt. */
#ifndef BP_VERSION
#error "BP_VERSION comes from the build (CMakeLists.txt)"
#endif

/* Exit statuses shared by every subcommand. */
enum {
	BP_EXIT_OK = 0,
	BP_EXIT_FAIL = 1,      /* the run failed (peer gone, syscall error) */
	BP_EXIT_USAGE = 2,     /* bad input: option, mode, address; or a mode this kernel/process cannot use */
	BP_EXIT_INTERRUPTED = 130,
};

int cmd_modes(int argc, char **argv);
int cmd_rr(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_testbed(int argc, char **argv);
int cmd_napi(int argc, char **argv);
int cmd_pingpong(int argc, char **argv);
int cmd_target(int argc, char **argv);
int cmd_perf(int argc, char **argv);
int cmd_agent(int argc, char **argv);

/* bp_tool_error - print "busypoll SUB: message" on one line to stderr. */
void bp_tool_error(const char *sub, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
