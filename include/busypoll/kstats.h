/* SPDX-License-Identifier: MIT */
/*
 * The kernel's own evidence: TcpExt BusyPollRxPackets from /proc/net/netstat (per
 * network namespace) and NET_RX from /proc/softirqs, plus process CPU time.
 */
#ifndef BUSYPOLL_KSTATS_H
#define BUSYPOLL_KSTATS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct bp_kstats {
	uint64_t busy_poll_rx;   /* TcpExt BusyPollRxPackets */
	uint64_t net_rx;         /* NET_RX softirqs, summed over CPUs */
	uint64_t utime_us;       /* this process, getrusage */
	uint64_t stime_us;
	uint64_t nvcsw;          /* voluntary context switches */
	uint64_t nivcsw;         /* involuntary */
};

/*
 * bp_read_netstat_field - value of "Section" "Field" (e.g. "TcpExt", "BusyPollRxPackets")
 * in a /proc/net/netstat-format file. Returns 0, -ENOENT when absent, -errno on I/O.
 */
int bp_read_netstat_field(const char *path, const char *section, const char *field,
			  uint64_t *value);
/* bp_read_softirq - a row of a /proc/softirqs-format file ("NET_RX"), summed over CPUs. */
int bp_read_softirq(const char *path, const char *row, uint64_t *value);
/* bp_kstats_read - all of the above for this namespace and process. 0 or -errno. */
int bp_kstats_read(struct bp_kstats *s);
/*
 * bp_thread_cpu_ns - CPU time (user + system) of thread tid of this process, in ns,
 * kernel threads of ours included (io_uring's SQPOLL thread, io-wq workers: see
 * bp_loop_kthreads). 0, or -errno (-ESRCH: no such thread, or it exited).
 */
int bp_thread_cpu_ns(int tid, uint64_t *ns);
/* bp_kstats_delta - after - before, field by field. */
void bp_kstats_delta(const struct bp_kstats *after, const struct bp_kstats *before,
		     struct bp_kstats *delta);

#ifdef __cplusplus
}
#endif
#endif
