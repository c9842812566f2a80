/* SPDX-License-Identifier: MIT */
/*
 * One side's evidence over a measured interval, the same for every tool (rr,
 * pingpong, perf, compare) and on every path from a server to its client: CPU
 * time and context switches of every thread the side ran (named), the engine's
 * loop counters, the kernel's own evidence (TcpExt BusyPollRxPackets and NET_RX
 * softirqs of the side's network namespace), and the NAPI ids it served.
 *
 * Threads: a loop thread's CPU is its own (RUSAGE_THREAD) plus that of the
 * io_uring kernel threads working for its loop, as the engine lists them
 * (bp_loop_kthreads: the SQPOLL thread "iou-sqp-TID", the io-wq workers of the
 * submitter "iou-wrk-TID"), read from their CPU clocks (bp_thread_cpu_ns) and
 * counted as system time of that loop thread. A worker that exits inside the interval takes its CPU with it:
 * the evidence counts the threads alive at both ends (and names them), never less
 * than the loop thread itself.
 *
 * Utilisation: CPU time over the side's interval as a percent of one CPU, user and
 * system apart, for the side (every thread counted: a side of two busy threads is
 * 200%) and for each thread named; over no interval it does not exist (null).
 *
 * Units: every per-unit figure is per transaction, "_per_tx": one request and its
 * response, which is rr's transaction and pingpong's round trip, or per I/O,
 * "_per_io", for perf (an NVMe command and its completion). A figure over no unit
 * does not exist: json null, csv empty, table "-".
 *
 * Use: ev_snap_take on each loop thread at both ends of the interval,
 * ev_add_interval for each thread into the side's struct evidence, the kernel
 * counters and NAPI ids beside; ev_encode/ev_decode carry it over the control
 * protocol (tools/harness/control.h); ev_emit prints it.
 */
#ifndef BP_TOOLS_HARNESS_EVIDENCE_H
#define BP_TOOLS_HARNESS_EVIDENCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <busypoll/busypoll.h>

/* BusyPollRxPackets per transaction (or per I/O) below which a side that ran a busy-poll
 * mode is unproven: busy polling (almost) never ran. The one threshold of every tool
 * (compare's '!', the diagnosis, tune's proof rule). */
#define EV_PROOF_MIN 0.01

#define EV_MAX_NAPI 8
#define EV_MAX_THREADS 16     /* threads named per side (all are counted) */
#define EV_MAX_HELPERS 8      /* io_uring helper threads per loop thread */
#define EV_MODE_LEN 128
#define EV_COMM_LEN 16

/* A thread counted, as the kernel names it. */
struct ev_thread {
	int32_t tid;
	char comm[EV_COMM_LEN];
	uint64_t cpu_us;          /* over the interval: utime_us + stime_us */
	uint64_t utime_us, stime_us; /* the split (an io_uring helper's is all system) */
	bool split;               /* the split is known (a peer that predates it sends cpu_us only) */
};

/* What one loop thread has done up to an instant (on its own thread). */
struct ev_snap {
	struct bp_loop_snapshot loop;   /* the thread's own CPU, switches and loop counters */
	int32_t tid;
	bool sched;                     /* run_delay_ns and steal_us were read */
	uint64_t run_delay_ns;          /* schedstat's 2nd field: time it waited on a run queue */
	int cpu;                        /* the CPU it ran on when taken */
	uint64_t steal_us;              /* that CPU's steal time (/proc/stat) */
	bool pinned;                    /* its affinity is that one CPU (then cpu_busy_us means something) */
	uint64_t cpu_busy_us;           /* that CPU's task time, every task's (/proc/stat user+nice+system) */
	char comm[EV_COMM_LEN];
	uint8_t xsk;                    /* enum ev_xsk: the loop's AF_XDP socket, if any */
	int nhelpers;
	struct {
		int32_t tid;
		char comm[EV_COMM_LEN];
		uint64_t cpu_ns;
	} helper[EV_MAX_HELPERS];
};

/* A side's AF_XDP socket (xsk modes): none, or how it was bound. */
enum ev_xsk { EV_XSK_NONE = 0, EV_XSK_COPY = 1, EV_XSK_ZEROCOPY = 2 };

/* The xsk path's counters (struct bp_loop_counters), in output order. */
#define EV_XSK_U64(X)                                                                    \
	X(pkt_rx) X(pkt_tx) X(pkt_dropped) X(xsk_rx_dropped) X(xsk_rx_ring_full)            \
	X(xsk_fill_empty) X(xsk_tx_empty)

struct evidence {
	bool valid;
	char mode[EV_MODE_LEN];   /* canonical text */
	uint32_t threads;         /* loop threads */
	uint64_t transactions;    /* units the side counted (see each tool) */
	uint64_t interval_ns;
	uint64_t utime_us, stime_us;  /* every thread counted */
	uint64_t nvcsw, nivcsw;
	uint64_t busy_poll_rx, net_rx;
	uint64_t syscalls, empty_polls, wakeups, waits, completions;
	uint32_t napi_ids[EV_MAX_NAPI];
	uint32_t n_napi_ids;
	uint32_t nthr;            /* threads named in thr[] */
	struct ev_thread thr[EV_MAX_THREADS];
	uint64_t helper_cpu_us;   /* of that, io_uring helper threads' */
	/* the machine's disturbance of the loop threads (tools/harness/disturb.h): optional on
	 * the wire, so a peer that predates them leaves them not known (sched_known false) */
	bool sched_known;
	uint64_t run_delay_ns;    /* loop threads' run-queue wait, summed */
	uint64_t steal_us;        /* steal on the loop threads' CPUs, summed per thread */
	/* other tasks' CPU time on the loop threads' pinned CPUs (their CPUs' task time less
	 * the loop threads' and their helpers'), summed per thread; known only while every
	 * loop thread was pinned and read at both ends; optional on the wire */
	bool other_known;
	uint64_t other_us;
	/* the loops' direct reads (core/loop.c; bp_loop_counters): optional on the wire, so a
	 * peer that predates them leaves them not known (direct_known false, json null) */
	bool direct_known;
	uint64_t direct_tried, direct_hit;
	/* xsk modes: the binding and the frames' counters, the kernel's statistics of the
	 * socket among them (rx dropped, rx ring full, fill ring empty, tx ring empty);
	 * optional on the wire: a side without an AF_XDP socket has EV_XSK_NONE */
	uint8_t xsk;              /* enum ev_xsk */
	uint64_t pkt_rx, pkt_tx, pkt_dropped;
	uint64_t xsk_rx_dropped, xsk_rx_ring_full, xsk_fill_empty, xsk_tx_empty;
};

/*
 * ev_snap_take - the calling loop thread's snapshot (bp_loop_snapshot_take) and
 * the CPU of the io_uring helper threads that carry its tid. On the loop's thread.
 */
void ev_snap_take(const struct bp_loop *loop, struct ev_snap *s);

/*
 * ev_read_line - the first line of a small /proc file (a thread's comm, stat or
 * schedstat) into buf, without its newline. Returns 0, or -errno (-EIO: empty).
 */
int ev_read_line(const char *path, char *buf, size_t len);

/*
 * ev_add_interval - add what one loop thread did from a to b into ev: CPU (its own
 * and its helpers' present at both ends), switches, loop counters, and the threads
 * by name. Does not touch transactions, interval, kernel counters or NAPI ids.
 */
void ev_add_interval(struct evidence *ev, const struct ev_snap *a, const struct ev_snap *b);
/*
 * ev_add - acc += x (a side of many parts: runs, threads); NAPI ids merged;
 * threads named once per role (the same name; io_uring helpers by kind).
 */
void ev_add(struct evidence *acc, const struct evidence *x);
/* ev_add_napi - add NAPI id id (0 ignored) to ev's set, if there is room. */
void ev_add_napi(struct evidence *ev, uint32_t id);
/* ev_add_kstats - the kernel counters from a to b (this namespace) into ev. */
void ev_add_kstats(struct evidence *ev, const struct bp_kstats *a, const struct bp_kstats *b);
/* ev_name_thread - name the calling thread "PREFIX-I" (comm, 15 bytes): what the evidence lists. */
void ev_name_thread(const char *prefix, int i);

/* ev_xsk_name - "copy", "zero-copy", or NULL for a side without an AF_XDP socket. */
const char *ev_xsk_name(uint8_t xsk);
/*
 * ev_xsk_text - the xsk counters in one line for a table ("copy; dropped 0, rx ring
 * full 0, fill ring empty 0, tx ring empty 0"), or "-" without an AF_XDP socket.
 * Lost frames are any of the four.
 */
const char *ev_xsk_text(const struct evidence *ev, char *buf, size_t len);
/* ev_xsk_lost - frames the side lost on its rings: dropped, rx ring full, and ours dropped. */
uint64_t ev_xsk_lost(const struct evidence *ev);

/* ev_per - value per unit: NaN when there are no units (the figure does not exist). */
double ev_per(uint64_t value, uint64_t units);
/* ev_cpu_us - user + system CPU. */
uint64_t ev_cpu_us(const struct evidence *ev);
/* ev_util_pct - cpu_us over interval_ns as a percent of one CPU; NaN over no interval. */
double ev_util_pct(uint64_t cpu_us, uint64_t interval_ns);
/*
 * ev_per_text - a per-unit figure for a table: 2 decimals, or 2 significant digits
 * when small and not zero (0.00 context switches/tx would hide 0.00025), "-" for NaN.
 */
const char *ev_per_text(char *buf, size_t len, double v);
/* ev_threads_text - "loop 1234 + iou-sqp-1234" style list of the threads counted, into buf. */
const char *ev_threads_text(const struct evidence *ev, char *buf, size_t len);
/*
 * ev_threads_util_text - each thread counted with its utilisation over the side's
 * interval: "rr-client-0(1234) 61.0% (user 20.5%, system 40.5%) + iou-sqp-1234(1240)
 * 3.0% (user 0.0%, system 3.0%)" (no split when a peer did not send it), into buf;
 * "-" when there is no thread or no interval.
 */
const char *ev_threads_util_text(const struct evidence *ev, char *buf, size_t len);

struct emit;
/*
 * ev_emit - the side as object key: valid, mode, threads, the counters, napi_ids,
 * each counter per unit ("<name>_per_<unit>", unit "tx" or "io", divided by units),
 * cpu_us_per_<unit>, context_switches_per_<unit>, cpu_threads (the threads
 * counted), cpu_util_pct {user, system, total} over the interval, and
 * cpu_threads_util (ev_threads_util_text: each thread's, as text so that csv, whose
 * columns cannot depend on how many threads ran, holds the same).
 * is_null: a json null, csv empty fields (same columns).
 */
void ev_emit(struct emit *e, const char *key, const struct evidence *ev, uint64_t units, const char *unit,
	     bool is_null);

struct ctl_msg;
/* ev_encode - the evidence into a control message body (tools/harness/control.h). 0 or -ENOSPC. */
int ev_encode(struct ctl_msg *m, const struct evidence *ev);
/* ev_decode - the evidence from a message: 0, or -EPROTO (a field malformed or missing). */
int ev_decode(const struct ctl_msg *m, struct evidence *ev);

#endif
