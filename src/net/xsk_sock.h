/* SPDX-License-Identifier: MIT */
/*
 * One AF_XDP socket with its umem on one device queue, through libxdp's xsk API
 * (the rings' helpers are its inline functions). The umem holds BP_XSK_NFRAMES
 * frames: the first half lent to the kernel for receiving (the fill ring), the
 * second half kept for sending. Bound zero-copy where the driver offers it, in
 * copy mode otherwise, with need_wakeup either way. Never loads libxdp's default
 * XDP program: ours (net/xdp_prog.c) is attached by the caller.
 */
#ifndef BP_NET_XSK_SOCK_H
#define BP_NET_XSK_SOCK_H

#include <linux/if_xdp.h>
#include <stdbool.h>
#include <stdint.h>
#include <xdp/xsk.h>

#define BP_XSK_FRAME 2048u
#define BP_XSK_NFRAMES 1024u
#define BP_XSK_RING 512u          /* each ring; the rx half of the umem fills the fill ring */
#define BP_XSK_TX_FRAMES (BP_XSK_NFRAMES / 2)

struct bp_xsk_sock {
	struct xsk_umem *umem;
	struct xsk_socket *xsk;
	struct xsk_ring_prod fill, tx;
	struct xsk_ring_cons comp, rx;
	uint8_t *area;                /* the umem: BP_XSK_NFRAMES x BP_XSK_FRAME bytes */
	int fd;
	int ifindex;
	uint32_t queue;
	bool zerocopy;
	uint64_t tx_free[BP_XSK_TX_FRAMES]; /* frames free for sending (umem offsets) */
	uint32_t ntx_free;
};

/*
 * bp_xsk_sock_open - *s on device ifindex (named dev, for messages), queue. 0, or
 * -errno with one line in the last error: -ENOBUFS the umem cannot be locked
 * (RLIMIT_MEMLOCK without CAP_IPC_LOCK), -EINVAL/-ENXIO no such queue, -EBUSY
 * another socket is bound there, -EAFNOSUPPORT no AF_XDP in this kernel.
 */
int bp_xsk_sock_open(struct bp_xsk_sock *s, int ifindex, const char *dev, uint32_t queue);
/* bp_xsk_sock_close - the socket and its umem; a closed or zeroed *s is a no-op. */
void bp_xsk_sock_close(struct bp_xsk_sock *s);
/* bp_xsk_sock_stats - the kernel's statistics of the socket (XDP_STATISTICS). 0 or -errno. */
int bp_xsk_sock_stats(const struct bp_xsk_sock *s, struct xdp_statistics *st);

#endif
