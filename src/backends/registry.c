/* SPDX-License-Identifier: MIT */
/*
 * The one table of backends. Adding a backend: its own file with its struct
 * bp_backend_ops (families, check, operations), one line below, and its name in
 * enum bp_backend_kind (include/busypoll/mode.h), the value a mode carries.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "backends/backend.h"

extern const struct bp_backend_ops bp_backend_epoll;
extern const struct bp_backend_ops bp_backend_uring;
extern const struct bp_backend_ops bp_backend_xsk;

/* In the order `busypoll modes` shows them. */
static const struct bp_backend_ops *const backends[] = {
	&bp_backend_epoll,
	&bp_backend_uring,
	&bp_backend_xsk,
};
#define N_BACKENDS (sizeof(backends) / sizeof(backends[0]))

size_t bp_backend_count(void)
{
	return N_BACKENDS;
}

const struct bp_backend_ops *bp_backend_at(size_t i)
{
	return i < N_BACKENDS ? backends[i] : NULL;
}

const struct bp_backend_ops *bp_backend_of(enum bp_backend_kind kind)
{
	for (size_t i = 0; i < N_BACKENDS; i++)
		if (backends[i]->kind == kind)
			return backends[i];
	return NULL;
}

int bp_check_vsay(int ret, char *err, size_t errlen, const char *fmt, va_list ap)
{
	char msg[256];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (err && errlen)
		snprintf(err, errlen, "%s", msg);
	return bp_err_set(ret, "%s", msg);
}

int bp_check_say(int ret, char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ret = bp_check_vsay(ret, err, errlen, fmt, ap);
	va_end(ap);
	return ret;
}

int bp_check_probe_failed(int ret, const char *what, char *err, size_t errlen)
{
	return bp_check_say(ret, err, errlen, "cannot probe %s: %s", what, strerror(-ret));
}
