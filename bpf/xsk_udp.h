/* SPDX-License-Identifier: MIT */
/*
 * What busypoll's XDP program (bpf/xsk_udp.bpf.c) and its loader (net/xdp_prog.c)
 * share: the maps' sizes and the owner record. Plain fixed-size types only: the
 * program's compiler (clang -target bpf) and the library's lay it out the same.
 */
#ifndef BP_BPF_XSK_UDP_H
#define BP_BPF_XSK_UDP_H

#include <linux/types.h>

#define BP_XDP_PROG_NAME "bp_xsk_udp"
#define BP_XDP_MAX_QUEUES 64
#define BP_XDP_MAX_PORTS 64
#define BP_XDP_MAX_NAPI 4
#define BP_XDP_QUEUE_NONE 0xffffffffu /* a port claimed, its frames still passed to the kernel */

/* One NAPI whose settings the run changed, as they were before. */
struct bp_xdp_napi_saved {
	__u32 napi_id;               /* 0: slot unused */
	__u32 defer_hard_irqs;
	__u64 gro_flush_timeout_ns;
};

/* bp_owner[0]: who attached the program, and what to put back if it dies. */
struct bp_xdp_owner {
	__u32 pid;
	__u32 pad;
	__u64 start_time;            /* the owner's start time (/proc/PID/stat field 22): a reused pid is not it */
	struct bp_xdp_napi_saved napi[BP_XDP_MAX_NAPI];
	__u64 passed_not_ip;         /* frames neither IPv4 nor IPv6 (ARP, ...) passed to the kernel */
};

#endif
