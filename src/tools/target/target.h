/* SPDX-License-Identifier: MIT */
/* busypoll target: option parsing (opts.c) around the library's bp_nvmet_*. */
#ifndef BP_TOOLS_TARGET_H
#define BP_TOOLS_TARGET_H

#include <stddef.h>

#include <busypoll/busypoll.h>
#include <busypoll/nvme/target.h>

#include "tools/common/opt.h"

struct target_opts {
	TOOL_COMMON;              /* -q: no start-up description or log lines; --format: the counters */
	struct bp_nvmet_cfg cfg;
	int control_fd;           /* --control-fd: a control session inherited from our parent, -1 none */
	char listen_text[300];    /* as given (or the default) */
	char mode_text[OPT_MODE_TEXT]; /* canonical */
	bool listen_given;
	bool ram_beyond_memory;   /* --ram-beyond-memory: ram namespaces larger than this machine's memory are meant */
	bool file_beyond_space;   /* --file-beyond-space: a file grown by size= beyond its file system's free space is meant */
};

/*
 * target_parse_opts - `busypoll target` options into *o (defaults first).
 * Returns 0; 1 when --help was printed; -EINVAL with a one-line message in err
 * (naming the option as typed: "--queue-depth 4: must be between 32 and 1024").
 * The mode is checked against this kernel and process; namespace files are not
 * opened here (bp_nvmet_start does, and says why it cannot).
 */
int target_parse_opts(int argc, char **argv, struct target_opts *o, char *err, size_t errlen);

/* A control session over --control-fd: bytes read, not yet a whole message. */
struct target_ctl {
	int fd;
	size_t len;
	uint8_t buf[16 + 65536];
};

/*
 * target_control - read what the control peer sent and answer every whole message
 * (HELLO: where we listen; SAMPLE: our evidence and queues; control_fd.c). Returns 0,
 * or -ECONNRESET when the peer is gone (the target then stops), -EPROTO, -errno.
 */
int target_control(struct bp_nvmet *t, const struct target_opts *o, struct target_ctl *c);

/* target_print_counters - every queue's counters and the total, in o->format (SIGUSR1, exit). */
void target_print_counters(FILE *out, struct bp_nvmet *t, const struct target_opts *o);

int cmd_target(int argc, char **argv);

#endif
