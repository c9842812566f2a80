/* SPDX-License-Identifier: MIT */
/* Test-program helpers around the veth test bed (tests/lib/bpt_testbed.c). */
#ifndef BPT_TESTBED_H
#define BPT_TESTBED_H

#include "tools/bed/testbed.h"

/*
 * bpt_require_root - exit(77) (ctest: skipped) with the reason on stderr unless
 * this process runs as root. what says what needs it.
 */
void bpt_require_root(const char *what);

/*
 * bpt_testbed_name - a name unique to this process: "<prefix><pid>". First removes the
 * beds of earlier runs with this prefix whose pid is gone (a SIGKILLed runner), saying so.
 */
const char *bpt_testbed_name(const char *prefix, char *buf, size_t len);

/*
 * bpt_testbed_guard - make sure bed NAME is removed however the program ends:
 * normal exit (atexit) and SIGINT/SIGTERM/SIGHUP/SIGABRT/SIGSEGV/SIGBUS (a failed
 * assert raises SIGABRT). The signal path removes the namespaces with umount2 and
 * unlink only (async-signal-safe), then dies of the same signal. Up to 4 beds
 * per process; call it before bp_testbed_up so that a crash halfway is covered too.
 */
void bpt_testbed_guard(const char *name);

/*
 * bpt_testbed_busy_poll_rx - TcpExt BusyPollRxPackets of side's namespace of tb, read
 * from inside it (the calling thread is back in its own namespace afterwards). A
 * failure to enter or read fails the test.
 */
uint64_t bpt_testbed_busy_poll_rx(const struct bp_testbed *tb, int side);

#endif
