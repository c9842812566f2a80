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
 * Skips that are skips. A part of a test that cannot run here (a mode this
 * kernel lacks, a capability this process has not) is said and remembered with
 * bpt_skip_part; the program then ends with bpt_exit_status(), which is
 * BPT_SKIP (ctest: skipped, never passed) when any part was skipped, listing
 * them, and 0 when everything ran. Never use cmocka's skip(): cmocka 1.1.5
 * reports a skipped test as passed and exits 0.
 */
/* bpt_skip_part - print "SKIP <what>" and count it (the verdict becomes BPT_SKIP). */
void bpt_skip_part(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* bpt_skipped_parts - how many parts were skipped so far. */
int bpt_skipped_parts(void);
/* bpt_exit_status - 0 when nothing was skipped; BPT_SKIP (the skipped parts listed on stdout) otherwise. */
int bpt_exit_status(void);
/* bpt_unit_exit - a cmocka main's status: 1 when any test failed, else bpt_exit_status(). */
int bpt_unit_exit(int cmocka_failures);

/*
 * bpt_mode_usable - parse text into *m and check it against this kernel and
 * process. Returns true if usable; otherwise bpt_skip_part("text: reason") and
 * returns false. A parse error fails the test (the matrix must parse).
 */
bool bpt_mode_usable(const char *text, struct bp_mode *m);

/* bpt_is_root - effective uid 0 (namespaces, CAP_NET_ADMIN). */
bool bpt_is_root(void);

/* bpt_now_ns - CLOCK_MONOTONIC in ns. */
uint64_t bpt_now_ns(void);

/* bpt_nap - sleep 2 ms (the step of BPT_WAIT_UNTIL). */
void bpt_nap(void);

/*
 * BPT_WAIT_UNTIL(cond, timeout_ms) - a state reached, never slept for: evaluates
 * cond every 2 ms until it holds or timeout_ms have passed, and is cond's last
 * value. The bound only says how long a failure takes to report; a pass never
 * depends on the machine being fast.
 */
#define BPT_WAIT_UNTIL(cond, timeout_ms)                                              \
	({                                                                            \
		uint64_t bpt_end_ = bpt_now_ns() + (uint64_t)(timeout_ms) * 1000000ull; \
		bool bpt_ok_;                                                         \
		while (!(bpt_ok_ = (cond)) && bpt_now_ns() < bpt_end_)                \
			bpt_nap();                                                    \
		bpt_ok_;                                                              \
	})

#endif
