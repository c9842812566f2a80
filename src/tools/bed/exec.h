/* SPDX-License-Identifier: MIT */
/* Running helper programs (ip, ethtool) for the test bed: bed/exec.c. */
#ifndef BP_TOOLS_BED_EXEC_H
#define BP_TOOLS_BED_EXEC_H

/*
 * bp_run - run argv (argv[0] looked up in PATH) with fork+execvp, no shell; stdin
 * and stdout on /dev/null, stderr captured. 0 when it exits 0. Otherwise -ENOENT
 * (program not found), -EEXIST / -EPERM (its stderr says "File exists" /
 * "Operation not permitted"), else -EIO; bp_last_error() has the command and its
 * stderr. The caller must not ignore SIGCHLD (the exit status would be lost).
 */
int bp_run(const char *const argv[]);

#endif
