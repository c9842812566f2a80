/* SPDX-License-Identifier: MIT */
/* One AF_XDP socket and its umem (contract in net/xsk_sock.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/error.h"
#include "net/xsk_sock.h"

#define AREA_LEN ((size_t)BP_XSK_NFRAMES * BP_XSK_FRAME)
#define BUSY_WAIT_MS 2000

/* umem_make - the umem over s->area with its fill and completion rings. */
static int umem_make(struct bp_xsk_sock *s, const char *dev)
{
	struct xsk_umem_config uc = {
		.fill_size = BP_XSK_RING, .comp_size = BP_XSK_RING, .frame_size = BP_XSK_FRAME,
		.frame_headroom = 0, .flags = 0,
	};
	struct rlimit rl = { 0 };
	int ret = xsk_umem__create(&s->umem, s->area, AREA_LEN, &s->fill, &s->comp, &uc);

	if (!ret)
		return 0;
	s->umem = NULL;
	if (ret == -ENOBUFS || ret == -ENOMEM || ret == -EPERM) {
		getrlimit(RLIMIT_MEMLOCK, &rl);
		if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < AREA_LEN * 2)
			return bp_err_set(-ENOBUFS, "xsk: the umem (%zu KiB) cannot be registered on %s: the "
					  "locked-memory limit is %llu KiB; raise it (ulimit -l %zu) or run with "
					  "CAP_IPC_LOCK", AREA_LEN / 1024, dev, (unsigned long long)rl.rlim_cur / 1024,
					  AREA_LEN * 2 / 1024);
	}
	if (ret == -EAFNOSUPPORT)
		return bp_err_set(ret, "xsk: this kernel has no AF_XDP sockets (CONFIG_XDP_SOCKETS)");
	return bp_err_set(ret, "xsk: the umem cannot be registered on %s: %s", dev, strerror(-ret));
}

/* sock_bind - a fresh umem and the socket on dev's queue with bind_flags (XDP_ZEROCOPY
 * or XDP_COPY). A umem that a failed bind used is not reused: it goes with the failure. */
static int sock_bind(struct bp_xsk_sock *s, const char *dev, uint16_t bind_flags)
{
	struct xsk_socket_config sc = {
		.rx_size = BP_XSK_RING, .tx_size = BP_XSK_RING,
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD, /* ours is attached, never libxdp's */
		.xdp_flags = 0,
		.bind_flags = (uint16_t)(bind_flags | XDP_USE_NEED_WAKEUP),
	};
	int ret = umem_make(s, dev);

	if (ret)
		return ret;
	ret = xsk_socket__create(&s->xsk, dev, s->queue, s->umem, &s->rx, &s->tx, &sc);
	if (ret) {
		s->xsk = NULL;
		xsk_umem__delete(s->umem);
		s->umem = NULL;
	}
	return ret;
}

/* bind_any - zero-copy where the driver offers it, else copy mode. A queue whose last
 * socket was just closed stays busy until the kernel's deferred release has run (a
 * work item): -EBUSY is tried again for BUSY_WAIT_MS. */
static int bind_any(struct bp_xsk_sock *s, const char *dev)
{
	int ret;

	for (int waited = 0;; waited += 2) {
		ret = sock_bind(s, dev, XDP_ZEROCOPY);
		if (ret && ret != -ENOBUFS && ret != -EAFNOSUPPORT)
			ret = sock_bind(s, dev, XDP_COPY);
		if (ret != -EBUSY || waited >= BUSY_WAIT_MS)
			return ret;
		usleep(2000);
	}
}

int bp_xsk_sock_open(struct bp_xsk_sock *s, int ifindex, const char *dev, uint32_t queue)
{
	struct xdp_options opt = { 0 };
	socklen_t len = sizeof(opt);
	uint32_t idx = 0;
	int ret;

	memset(s, 0, sizeof(*s));
	s->fd = -1;
	s->ifindex = ifindex;
	s->queue = queue;
	s->area = mmap(NULL, AREA_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (s->area == MAP_FAILED) {
		s->area = NULL;
		return bp_err_sys("mmap(umem)", -errno);
	}
	ret = bind_any(s, dev);
	if (ret == -EINVAL || ret == -ENXIO || ret == -ENODEV)
		bp_err_set(ret, "xsk: %s has no receive queue %u (queue=N names one it has)", dev, queue);
	else if (ret == -EBUSY)
		bp_err_set(ret, "xsk: queue %u of %s has an AF_XDP socket already", queue, dev);
	else if (ret == -EPERM)
		bp_err_set(ret, "xsk: an AF_XDP socket needs CAP_NET_RAW");
	else if (ret == -EAFNOSUPPORT)
		bp_err_set(ret, "xsk: this kernel has no AF_XDP sockets (CONFIG_XDP_SOCKETS)");
	else if (ret && ret != -ENOBUFS)
		bp_err_set(ret, "xsk: binding an AF_XDP socket to %s queue %u: %s", dev, queue, strerror(-ret));
	if (ret) {
		bp_xsk_sock_close(s);
		return ret;
	}
	s->fd = xsk_socket__fd(s->xsk);
	if (!getsockopt(s->fd, SOL_XDP, XDP_OPTIONS, &opt, &len))
		s->zerocopy = opt.flags & XDP_OPTIONS_ZEROCOPY;
	/* The receive half of the umem to the kernel; the send half ours. */
	if (xsk_ring_prod__reserve(&s->fill, BP_XSK_RING, &idx) != BP_XSK_RING) {
		bp_xsk_sock_close(s);
		return bp_err_set(-ENOSPC, "xsk: the fill ring takes fewer than %u frames", BP_XSK_RING);
	}
	for (uint32_t i = 0; i < BP_XSK_RING; i++)
		*xsk_ring_prod__fill_addr(&s->fill, idx + i) = (uint64_t)i * BP_XSK_FRAME;
	xsk_ring_prod__submit(&s->fill, BP_XSK_RING);
	for (uint32_t i = 0; i < BP_XSK_TX_FRAMES; i++)
		s->tx_free[i] = (uint64_t)(BP_XSK_NFRAMES / 2 + i) * BP_XSK_FRAME;
	s->ntx_free = BP_XSK_TX_FRAMES;
	return 0;
}

void bp_xsk_sock_close(struct bp_xsk_sock *s)
{
	if (s->xsk)
		xsk_socket__delete(s->xsk);
	if (s->umem)
		xsk_umem__delete(s->umem);
	if (s->area)
		munmap(s->area, AREA_LEN);
	s->xsk = NULL;
	s->umem = NULL;
	s->area = NULL;
	s->fd = -1;
}

int bp_xsk_sock_stats(const struct bp_xsk_sock *s, struct xdp_statistics *st)
{
	socklen_t len = sizeof(*st);

	memset(st, 0, sizeof(*st));
	return getsockopt(s->fd, SOL_XDP, XDP_STATISTICS, st, &len) ? -errno : 0;
}
