/* SPDX-License-Identifier: MIT */
/*
 * Why busy polling did not run: one line naming the likely cause on one side of
 * a cell and what to change, from facts about the path alone (no I/O here), so
 * that every rule is tested on facts made by hand (tests/unit/test_diagnose.c).
 * The caller gathers the facts (the device's NAPIs and features, the NAPI ids
 * the sockets were served by, the sysctls, the mode) for the test bed, the
 * user's own device or the remote end, and says which in `where`.
 *
 * The rules, first match wins (docs/cli.md "Why busy polling did not run"):
 * GRO off on veth (it then has no NAPI, nor its packets an id), no NAPI on the
 * device (loopback), TSO on
 * (TSO-sized packets skip the veth NAPI), sockets with no NAPI id, no busy-poll
 * time (the mode gives none and net.core.busy_poll/busy_read are 0), a suspend
 * mode with usecs=0, threaded NAPI (its kthread takes the packets first), a
 * busy-poll timeout shorter than the transaction's mean latency (each wait stops
 * polling before the packet comes), the flows arriving on more queues (NAPIs) than
 * the side has threads (a loop busy-polls one NAPI at a time), more flows than
 * threads (work always ready). None of these: says so, with the facts it went by
 * (the NAPI the flows arrive on, the busy-poll budget and timeout).
 */
#ifndef BP_TOOLS_HARNESS_DIAGNOSE_H
#define BP_TOOLS_HARNESS_DIAGNOSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tools/harness/evidence.h"

/* A tri-state fact: read and false, read and true, or not known. */
enum diag_tri { DIAG_UNKNOWN = -1, DIAG_OFF = 0, DIAG_ON = 1 };

/* What is known about one side of one cell. Unknown facts never fire a rule. */
struct diag_facts {
	const char *side;          /* "client", "server" */
	const char *where;         /* "test bed", "your device", "remote end" */
	const char *dev;           /* the device the flows arrive on ("lo" for loopback) */
	bool veth;                 /* dev is a veth (GRO and TSO decide its NAPI path) */
	bool busy_poll_mode;       /* the side ran a busy-poll mode (napi, suspend, busy-poll) */
	bool suspend_mode;         /* ... an IRQ-suspend one */
	uint32_t mode_usecs;       /* the busy-poll time the mode sets itself (0: none) */
	uint32_t mode_budget;      /* packets per busy poll the mode sets (0: the kernel's, 8) */
	double mean_us;            /* the transaction's mean latency (NaN unknown) */
	double bprx_per_tx;        /* TcpExt BusyPollRxPackets per transaction measured */
	int dev_napis;             /* NAPIs the device has (-1 unknown) */
	int served_napis;          /* distinct NAPI ids the side's sockets were served by (-1 unknown) */
	uint32_t served_id;        /* one of them: the queue the flows arrive on (0 unknown) */
	enum diag_tri gro, tso, threaded;
	int sysctl_busy_poll, sysctl_busy_read; /* net.core.*, -1 unknown */
	int flows, threads;        /* the cell's flows and the side's loop threads */
};

/*
 * diag_explain - when f is a busy-poll side that shows under EV_PROOF_MIN
 * BusyPollRxPackets per transaction, write into buf (len bytes, always
 * terminated) one line without a newline: "client on the test bed: CAUSE; FIX".
 * Returns true when a line was written, false (buf "") when busy polling ran or
 * the side does not busy-poll: nothing to explain.
 */
bool diag_explain(const struct diag_facts *f, char *buf, size_t len);

#endif
