/* SPDX-License-Identifier: MIT */
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
		printf("SKIP %s: %s\n", text, err);
		return false;
	}
	return true;
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
