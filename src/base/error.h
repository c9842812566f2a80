/* SPDX-License-Identifier: MIT */
/*
 * The thread's last error (base/error.c): every library function that fails sets a
 * one-line reason here and returns -errno; bp_last_error() (include/busypoll/loop.h)
 * reads it. The base layer: includes nothing of ours.
 */
#ifndef BP_BASE_ERROR_H
#define BP_BASE_ERROR_H

/* bp_err_set - format the thread's last-error message; returns err unchanged. */
int bp_err_set(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The public pair (declared for users in include/busypoll/loop.h). */
const char *bp_last_error(void);
int bp_set_last_error(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* bp_err_sys - "syscall: strerror(-err)"; returns err (negative errno). */
int bp_err_sys(const char *syscall, int err);

#endif
