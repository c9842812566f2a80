/* SPDX-License-Identifier: MIT */
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

#include "bptest.h"

const char *const bpt_all_modes[] = {
	"epoll:block",
	"epoll:napi,usecs=50,budget=8",
	"epoll:napi,usecs=50,budget=8,prefer",
	"epoll:spin",
	"epoll:hybrid,period=100",
	"epoll:suspend",
	"uring:block",
	"uring:block,setup=plain",
	"uring:napi,usecs=50",
	"uring:napi,usecs=50,tracking=static",
	"uring:spin",
	"uring:spin,setup=plain",
	"uring:hybrid,period=100",
	"uring:sqpoll",
	"uring:sqpoll,napi=50",
};
const size_t bpt_n_modes = sizeof(bpt_all_modes) / sizeof(bpt_all_modes[0]);

bool bpt_mode_usable(const char *text, struct bp_mode *m)
{
	char err[256];

	BPT_CHECK(bp_mode_parse(text, m, err, sizeof(err)) == 0, "mode %s: %s", text, err);
	if (bp_mode_check(m, err, sizeof(err)) != 0) {
		bpt_skip_part("%s: %s", text, err);
		return false;
	}
	return true;
}

#define BPT_SKIP_LIST 16
static int n_skipped;
static char skipped[BPT_SKIP_LIST][512];

void bpt_skip_part(const char *fmt, ...)
{
	char what[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	printf("SKIP %s\n", what);
	fflush(stdout);
	if (n_skipped < BPT_SKIP_LIST)
		snprintf(skipped[n_skipped], sizeof(skipped[0]), "%s", what);
	n_skipped++;
}

int bpt_skipped_parts(void)
{
	return n_skipped;
}

int bpt_exit_status(void)
{
	if (!n_skipped)
		return 0;
	printf("SKIP: %d part%s of this test could not run here, so it is not a pass:\n", n_skipped,
	       n_skipped == 1 ? "" : "s");
	for (int i = 0; i < n_skipped && i < BPT_SKIP_LIST; i++)
		printf("  - %s\n", skipped[i]);
	if (n_skipped > BPT_SKIP_LIST)
		printf("  - and %d more\n", n_skipped - BPT_SKIP_LIST);
	fflush(stdout);
	return BPT_SKIP;
}

int bpt_unit_exit(int cmocka_failures)
{
	return cmocka_failures ? 1 : bpt_exit_status();
}

bool bpt_is_root(void)
{
	return geteuid() == 0;
}

#include <time.h>
uint64_t bpt_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void bpt_nap(void)
{
	struct timespec ts = { 0, 2000000 };

	nanosleep(&ts, NULL);
}
