/* SPDX-License-Identifier: MIT */
/* The per-thread last-error string behind bp_last_error(). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"

static __thread char last_error[512];

const char *bp_last_error(void)
{
	return last_error[0] ? last_error : "no error";
}

static int err_vset(int err, const char *fmt, va_list ap)
{
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	return err;
}

int bp_err_set(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	err = err_vset(err, fmt, ap);
	va_end(ap);
	return err;
}

int bp_set_last_error(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	err = err_vset(err, fmt, ap);
	va_end(ap);
	return err;
}

int bp_err_sys(const char *syscall, int err)
{
	return bp_err_set(err, "%s: %s", syscall, strerror(err < 0 ? -err : err));
}
