/* SPDX-License-Identifier: MIT */
/*
 * busypoll's XDP program for the AF_XDP path (net/xdp_prog.c loads it; the build
 * compiles it with clang and embeds the object in the library).
 *
 * It redirects to the AF_XDP socket of its receive queue only the benchmark's UDP
 * flows: IPv4 without options and unfragmented, or IPv6 with UDP as the first next
 * header, whose destination port bp_ports names with this very queue. Everything
 * else (ARP, TCP, ssh, the runs' control sessions, a port on another queue, a
 * frame it cannot read) goes on to the kernel (XDP_PASS), and so does a flow whose
 * queue has no socket in bp_xsks (redirect's fallback). The userspace parser
 * (net/frame.c) takes the same frames, so what comes up the ring is ours.
 *
 * bp_owner holds the process that attached it and the NAPI settings that process
 * changed, so that the next start can remove a program a killed run left and put
 * the settings back (net/xdp_prog.c, xdp_sweep).
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "xsk_udp.h"

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, BP_XDP_MAX_QUEUES);
	__type(key, __u32);
	__type(value, __u32);
} bp_xsks SEC(".maps");

/* destination port (network order) -> the queue its socket is bound to (BP_XDP_QUEUE_NONE: not yet) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BP_XDP_MAX_PORTS);
	__type(key, __u16);
	__type(value, __u32);
} bp_ports SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bp_xdp_owner);
} bp_owner SEC(".maps");

SEC("xdp")
int bp_xsk_udp(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct udphdr *udp;
	__u16 port;
	__u32 *queue;

	if ((void *)(eth + 1) > end)
		return XDP_PASS;
	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = (void *)(eth + 1);

		if ((void *)(ip + 1) > end || ip->version != 4 || ip->ihl != 5 || ip->protocol != IPPROTO_UDP ||
		    (ip->frag_off & bpf_htons(0x3fff)))
			return XDP_PASS;
		udp = (void *)(ip + 1);
	} else if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = (void *)(eth + 1);

		if ((void *)(ip6 + 1) > end || ip6->version != 6 || ip6->nexthdr != IPPROTO_UDP)
			return XDP_PASS;
		udp = (void *)(ip6 + 1);
	} else {
		/* ARP and the rest: counted (the owner map is the program's own this way,
		 * so it lives as long as the program does) and passed. */
		__u32 zero = 0;
		struct bp_xdp_owner *o = bpf_map_lookup_elem(&bp_owner, &zero);

		if (o)
			__sync_fetch_and_add(&o->passed_not_ip, 1);
		return XDP_PASS;
	}
	if ((void *)(udp + 1) > end)
		return XDP_PASS;
	port = udp->dest;
	queue = bpf_map_lookup_elem(&bp_ports, &port);
	if (!queue || *queue != ctx->rx_queue_index)
		return XDP_PASS;
	return bpf_redirect_map(&bp_xsks, ctx->rx_queue_index, XDP_PASS);
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
