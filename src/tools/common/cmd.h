/* SPDX-License-Identifier: MIT */
/*
 * The skeleton every subcommand shares: its exit statuses and the one table that
 * says which errors are bad input, its one-line error to the user, and the host
 * context its report prints (kernel, busy-poll sysctls, hostname, CPUs).
 */
#ifndef BP_TOOLS_COMMON_CMD_H
#define BP_TOOLS_COMMON_CMD_H

#include <stdbool.h>
#include <stddef.h>

#include "tools/common/emit.h"

/* Exit statuses shared by every subcommand. */
enum {
	BP_EXIT_OK = 0,
	BP_EXIT_FAIL = 1,      /* the run failed (peer gone, syscall error) */
	BP_EXIT_USAGE = 2,     /* bad input: option, mode, address; or a mode this kernel/process cannot use */
	BP_EXIT_INTERRUPTED = 130,
};

/* One errno that is bad input (exit 2), and what it means to the user. */
struct bp_usage_errno {
	int err;          /* positive errno */
	const char *name; /* "EINVAL" */
	const char *why;  /* what the user gave that this says is wrong */
};

/* The table (docs/cli.md lists it): every errno a failed start turns into exit 2. */
extern const struct bp_usage_errno bp_usage_errnos[];
extern const size_t bp_n_usage_errnos;

/*
 * bp_exit_for - the exit status for a failed call's result: 0 for 0, BP_EXIT_USAGE
 * when the errno (negative or positive) is in bp_usage_errnos, else BP_EXIT_FAIL.
 */
int bp_exit_for(int err);

/*
 * bp_opts_exit - the exit status for an option parser's nonzero result: 1 (--help
 * or --version printed) is BP_EXIT_OK; anything else is bad input, err said as
 * SUB's one line, BP_EXIT_USAGE.
 */
int bp_opts_exit(const char *sub, int ret, const char *err);

/* bp_tool_error - "busypoll SUB: message" on one line, to the sink (stderr unless set). */
void bp_tool_error(const char *sub, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * bp_tool_error_sink - where bp_tool_error's lines go from now on: fn gets each
 * line without its newline. NULL restores stderr. For tests that check what the
 * user would have read.
 */
void bp_tool_error_sink(void (*fn)(const char *line));

/* Unknown, for the host's integers: internal only, printed as null (em_known_int). */
#define BP_UNKNOWN (-1)

/* The host a run ran on, as the reports print it. */
struct bp_host {
	char hostname[64]; /* "" when unknown */
	char kernel[128];  /* the release (uname -r); "" when unknown */
	int busy_poll;     /* net.core.busy_poll in us, BP_UNKNOWN when unreadable */
	int busy_read;     /* net.core.busy_read in us, BP_UNKNOWN when unreadable */
	int ncpus;         /* CPUs online, BP_UNKNOWN when unreadable */
	char sysctl_why[160]; /* why busy_poll or busy_read is unknown; "" when both were read */
};

/*
 * bp_host_read - this host's context into h. The sysctls exist in the first network
 * namespace only; from another one they are read there (tool_read_net_sysctl).
 * Anything unreadable is unknown; never fails.
 */
void bp_host_read(struct bp_host *h);

/*
 * bp_host_read_at - the same from the files under root (a fake /proc and /sys for
 * tests): ROOT/proc/sys/kernel/{hostname,osrelease}, ROOT/proc/sys/net/core/
 * {busy_poll,busy_read}, ROOT/sys/devices/system/cpu/online. No namespace fallback.
 */
void bp_host_read_at(struct bp_host *h, const char *root);

/* bp_known_text - v in decimal into buf, or "unknown" when it is BP_UNKNOWN; returns buf. */
const char *bp_known_text(int v, char *buf, size_t len);

/* em_known_int - v, or null when it is BP_UNKNOWN. */
void em_known_int(struct emit *e, const char *key, int v);

/* em_known_string - s (a char array of max bytes), or null when it is empty. */
void em_known_string(struct emit *e, const char *key, const char *s, size_t max);

#endif
