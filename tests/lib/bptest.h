/* SPDX-License-Identifier: MIT */
/* Helpers for the test programs: checks that name what failed, the mode matrix, skips. */
#ifndef BPTEST_H
#define BPTEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <busypoll/mode.h>

#define BPT_SKIP 77

/* Fail the whole test program with where and why. */
#define BPT_CHECK(cond, ...)                                                          \
	do {                                                                          \
		if (!(cond)) {                                                        \
			fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);   \
			fprintf(stderr, __VA_ARGS__);                                 \
			fputc('\n', stderr);                                          \
			exit(1);                                                      \
		}                                                                     \
	} while (0)

/* Every mode the engine offers, one representative setting each (the test matrix). */
extern const char *const bpt_all_modes[];
extern const size_t bpt_n_modes;

/*
 * bpt_mode_usable - parse text into *m and check it against this kernel and
 * process. Returns true if usable; otherwise prints "SKIP text: reason" and
 * returns false. A parse error fails the test (the matrix must parse).
 */
bool bpt_mode_usable(const char *text, struct bp_mode *m);

/* bpt_is_root - effective uid 0 (namespaces, CAP_NET_ADMIN). */
bool bpt_is_root(void);

/* bpt_now_ns - CLOCK_MONOTONIC in ns. */
uint64_t bpt_now_ns(void);

#endif
