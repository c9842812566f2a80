/* SPDX-License-Identifier: MIT */
/*
 * The xsk backend: UDP datagram conns over AF_XDP, every other fd over epoll.
 *
 * A readiness backend that embeds the epoll backend (its state first in ours, its
 * operations called on the loop) for listeners, stream conns, the wake fd and the
 * AF_XDP socket's own fd, and carries each datagram conn itself (->pkt_add): its
 * socket keeps the address and port, and its datagrams go through one AF_XDP
 * socket per loop, bound to mode.queue of the device that has the conn's local
 * address, with busypoll's XDP program there (net/xdp_prog.c) redirecting only
 * the conns' UDP ports to it. Frames are built and parsed by net/frame.c; replies
 * go to the MAC the request came from, a connected conn's frames to its peer's MAC
 * from the neighbour table.
 *
 * The wait: the rx ring is read first, without a syscall; while it brings work the
 * epoll set is asked only every EPOLL_EVERY_NS (spin asks it as seldom when nothing
 * comes), so a spinning loop reads the ring and little else. Otherwise
 * epoll_wait sleeps with the socket in the set (block), after busy-polling the
 * socket's NAPI for usecs (napi: EPIOCSPARAMS on the set, and SO_BUSY_POLL,
 * SO_BUSY_POLL_BUDGET, SO_PREFER_BUSY_POLL on the socket for its sendto kicks).
 * The kernel is kicked (sendto, recvfrom) only when a ring's need_wakeup flag asks.
 *
 * A conn's first datagram takes the kernel's path to its socket (the XDP program
 * passes its port until then): its NAPI id names the NAPI the socket's frames are
 * served by. Linux 6.13 on gives an AF_XDP socket a NAPI id only when bound
 * zero-copy, so in copy mode (veth) the conn's socket, in the epoll set, is what
 * lets epoll busy-poll that NAPI (xsk:napi), and what prefer's per-NAPI settings
 * go to. Datagrams that reach the socket later (another queue, a frame the
 * program passed) are read from it too: nothing of the conn's is lost.
 */
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <busypoll/napi.h>
#include <busypoll/net.h>
#include <busypoll/nic.h>

#include "backends/epoll.h"
#include "backends/xsk.h"
#include "net/frame.h"
#include "net/neigh.h"
#include "net/xdp_prog.h"
#include "net/xsk_sock.h"

#define XSK_MAX_PORTS 64          /* as many as the XDP program's port map holds (BP_XDP_MAX_PORTS) */
#define PORT_QLEN 256u          /* frames waiting per conn (a power of two) */
#define RX_BATCH 64
#define MAC_CACHE 16
#define EPOLL_EVERY_NS 20000   /* between looks at the epoll set while the rings have the loop's attention */
#define NEIGH_TIMEOUT_MS 3000   /* a connected conn's peer: how long its MAC may take to resolve */

/* One datagram conn the rings carry. */
struct xsk_port {
	struct bp_io *io;                 /* NULL: a free slot */
	uint16_t port;                    /* host order */
	bool connected, want_write, posted;
	bool learned;                     /* a datagram came through the socket: the port is redirected */
	struct sockaddr_storage local, peer;
	uint8_t peer_mac[6];
	uint64_t q_addr[PORT_QLEN];       /* frames waiting to be read, umem offsets */
	uint32_t q_head, q_tail;
};

struct xsk_backend {
	struct epoll_backend ep;          /* first: bp_backend_epoll's operations take bl->data as theirs */
	struct bp_xsk_sock sk;
	bool open;
	struct bp_xdp *xdp;
	struct bp_io xio;                 /* the AF_XDP socket in the epoll set */
	char dev[IF_NAMESIZE];
	uint8_t mac[6];
	struct xsk_port ports[XSK_MAX_PORTS];
	struct {
		struct sockaddr_storage ip;
		uint8_t mac[6];
	} macs[MAC_CACHE];                /* the source MACs of recent requests, for replies */
	unsigned mac_next;
	uint32_t napi_id;
	bp_napi_settings napi_was;        /* what the NAPI had before prefer changed it */
	bool napi_changed;
	uint64_t epoll_ns;                /* when the epoll set was last asked */
};

static struct xsk_backend *xb(const struct bp_backend_loop *bl)
{
	return bl->data;
}

static socklen_t addr_len(const struct sockaddr_storage *a)
{
	return a->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
}

static uint16_t addr_port(const struct sockaddr_storage *a)
{
	return ntohs(a->ss_family == AF_INET6 ? ((const struct sockaddr_in6 *)a)->sin6_port
					      : ((const struct sockaddr_in *)a)->sin_port);
}

/* same_ip - a and b hold the same address (ports aside). */
static bool same_ip(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr == ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr, &((const struct sockaddr_in6 *)b)->sin6_addr, 16);
}

static bool is_any(const struct sockaddr_storage *a)
{
	static const struct in6_addr any6 = IN6ADDR_ANY_INIT;

	if (a->ss_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr == htonl(INADDR_ANY);
	return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr, &any6, sizeof(any6));
}

/* ---- frames back to the kernel, frames sent ---- */

/* recycle - a received frame back on the fill ring (it was taken off it, so there is room). */
static void recycle(struct xsk_backend *x, uint64_t addr)
{
	uint32_t idx;

	if (xsk_ring_prod__reserve(&x->sk.fill, 1, &idx) != 1)
		return; /* cannot happen: the fill ring holds every receive frame */
	*xsk_ring_prod__fill_addr(&x->sk.fill, idx) = addr & ~(uint64_t)(BP_XSK_FRAME - 1);
	xsk_ring_prod__submit(&x->sk.fill, 1);
}

/* reap - frames the kernel has sent, back to the free list. */
static void reap(struct xsk_backend *x)
{
	uint32_t idx, n = xsk_ring_cons__peek(&x->sk.comp, BP_XSK_RING, &idx);

	for (uint32_t i = 0; i < n; i++)
		x->sk.tx_free[x->sk.ntx_free++] =
			*xsk_ring_cons__comp_addr(&x->sk.comp, idx + i) & ~(uint64_t)(BP_XSK_FRAME - 1);
	if (n)
		xsk_ring_cons__release(&x->sk.comp, n);
}

/* kick_tx - wake the kernel to send (copy mode always asks; zero-copy when its driver sleeps). */
static int kick_tx(struct bp_backend_loop *bl, struct xsk_backend *x)
{
	bl->ctr.syscalls++;
	if (sendto(x->sk.fd, NULL, 0, MSG_DONTWAIT, NULL, 0) >= 0)
		return 0;
	if (errno == EAGAIN || errno == EBUSY || errno == ENOBUFS || errno == EINTR)
		return 0; /* the kernel is at it, or will be: the frames stay on the ring */
	return -errno;
}

/* ---- receiving ---- */

static struct xsk_port *port_of_dst(struct xsk_backend *x, const struct bp_frame_udp *u)
{
	uint16_t dport = addr_port(&u->dst);

	for (int i = 0; i < XSK_MAX_PORTS; i++) {
		struct xsk_port *p = &x->ports[i];

		if (p->io && p->port == dport && same_ip(&p->local, &u->dst))
			return p;
	}
	return NULL;
}

/* mac_learn - remember where a request came from, for the reply. */
static void mac_learn(struct xsk_backend *x, const struct sockaddr_storage *ip, const uint8_t mac[6])
{
	unsigned i;

	for (i = 0; i < MAC_CACHE; i++)
		if (same_ip(&x->macs[i].ip, ip))
			break;
	if (i == MAC_CACHE)
		i = x->mac_next++ % MAC_CACHE;
	x->macs[i].ip = *ip;
	memcpy(x->macs[i].mac, mac, 6);
}

/* napi_learned - the NAPI the conns' frames come from is known: prefer's settings on it. */
static void napi_learned(struct bp_backend_loop *bl, struct xsk_backend *x, uint32_t id)
{
	const struct bp_mode *m = &bl->mode;
	bp_napi_settings s = { 0 };

	if (x->napi_id || !id)
		return;
	x->napi_id = id;
	if (m->policy != BP_POLICY_NAPI || !m->prefer)
		return;
	/* Noted where a killed run's successor finds it, before it is changed. */
	if (bp_napi_get(id, &x->napi_was) || bp_xdp_napi_saved(x->xdp, id, &x->napi_was))
		return;
	s.defer_hard_irqs = BP_XSK_PREFER_DEFER;
	s.gro_flush_timeout_ns = BP_XSK_PREFER_GRO_FLUSH_NS;
	s.has = BP_NAPI_HAS_DEFER | BP_NAPI_HAS_GRO_FLUSH;
	bl->ctr.syscalls++;
	x->napi_changed = bp_napi_set(id, &s) == 0;
}

/* learn - p's first datagram came through its socket: its NAPI is known; redirect the port now. */
static int learn(struct bp_backend_loop *bl, struct xsk_backend *x, struct xsk_port *p, int fd)
{
	uint32_t id = 0;
	int ret;

	bl->ctr.syscalls++;
	if (!bp_sock_napi_id(fd, &id))
		napi_learned(bl, x, id);
	ret = bp_xdp_port_set(x->xdp, p->port, x->sk.queue);
	if (!ret)
		p->learned = true;
	return ret;
}

/* rx_burst - frames off the rx ring onto their conns' queues; the rest counted and recycled. */
static void rx_burst(struct bp_backend_loop *bl, struct xsk_backend *x)
{
	uint32_t idx, n;

	if (xsk_ring_prod__needs_wakeup(&x->sk.fill)) {
		bl->ctr.syscalls++;
		(void)recvfrom(x->sk.fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
	}
	n = xsk_ring_cons__peek(&x->sk.rx, RX_BATCH, &idx);
	if (!n)
		return;
	for (uint32_t i = 0; i < n; i++) {
		const struct xdp_desc *d = xsk_ring_cons__rx_desc(&x->sk.rx, idx + i);
		uint64_t addr = xsk_umem__add_offset_to_addr(d->addr);
		struct bp_frame_udp u;
		struct xsk_port *p = NULL;

		if (d->len <= BP_XSK_FRAME && addr + d->len <= (uint64_t)BP_XSK_NFRAMES * BP_XSK_FRAME &&
		    bp_frame_parse(xsk_umem__get_data(x->sk.area, addr), d->len, &u) == 0)
			p = port_of_dst(x, &u);
		if (!p || p->q_tail - p->q_head == PORT_QLEN) {
			bl->ctr.pkt_dropped++;
			recycle(x, addr);
			continue;
		}
		p->q_addr[p->q_tail++ % PORT_QLEN] = addr | (uint64_t)d->len << 32;
		bl->ctr.pkt_rx++;
	}
	xsk_ring_cons__release(&x->sk.rx, n);
}

/* post - READABLE for each conn with frames waiting, WRITABLE for one that asked and can send. */
static int post(struct bp_backend_loop *bl, struct xsk_backend *x)
{
	int added = 0;

	for (int i = 0; i < XSK_MAX_PORTS && bl->nev < BP_MAX_EVENTS; i++) {
		struct xsk_port *p = &x->ports[i];

		if (!p->io || p->posted)
			continue;
		if (p->q_tail != p->q_head) {
			bl->ev[bl->nev++] = (struct bp_event){ p->io, BP_EV_READABLE, 0, 0, NULL };
			p->posted = true;
			added++;
		}
		if (p->want_write && x->sk.ntx_free && bl->nev < BP_MAX_EVENTS) {
			bl->ev[bl->nev++] = (struct bp_event){ p->io, BP_EV_WRITABLE, 0, 0, NULL };
			p->posted = true;
			added++;
		}
	}
	return added;
}

static ssize_t xsk_pkt_recv(struct bp_backend_loop *bl, struct bp_io *io, void *buf, size_t cap,
			    struct sockaddr_storage *from, socklen_t *fromlen)
{
	struct xsk_backend *x = xb(bl);
	struct xsk_port *p = &x->ports[io->bindex - 1];
	struct bp_frame_udp u;
	uint64_t e, addr;
	size_t n;

	if (p->q_head == p->q_tail) {
		/* Nothing from the ring: the socket's own datagrams (the first, or strays). */
		ssize_t r;

		bl->ctr.syscalls++;
		r = recvfrom(io->fd, buf, cap, MSG_DONTWAIT, (struct sockaddr *)from, fromlen);
		if (r < 0)
			return -errno;
		if (!p->learned) {
			int ret = learn(bl, x, p, io->fd);

			if (ret)
				return ret;
		}
		return r;
	}
	e = p->q_addr[p->q_head++ % PORT_QLEN];
	addr = e & 0xffffffffu;
	/* It parsed when it came; the frame has not moved since. */
	(void)bp_frame_parse(xsk_umem__get_data(x->sk.area, addr), (size_t)(e >> 32), &u);
	n = u.len < cap ? u.len : cap;
	memcpy(buf, u.payload, n);
	*from = u.src;
	*fromlen = addr_len(&u.src);
	mac_learn(x, &u.src, u.src_mac);
	recycle(x, addr);
	return (ssize_t)n;
}

/* ---- sending ---- */

/* dst_mac - where frames to ip go: a request's source, else the neighbour table (not waiting). */
static int dst_mac(struct xsk_backend *x, const struct sockaddr_storage *ip, uint8_t mac[6])
{
	for (unsigned i = 0; i < MAC_CACHE; i++)
		if (same_ip(&x->macs[i].ip, ip)) {
			memcpy(mac, x->macs[i].mac, 6);
			return 0;
		}
	if (bp_neigh_mac(x->sk.ifindex, ip, mac, 0))
		return -EHOSTUNREACH;
	mac_learn(x, ip, mac);
	return 0;
}

static ssize_t xsk_pkt_send(struct bp_backend_loop *bl, struct bp_io *io, const void *buf, size_t len,
			    const struct sockaddr_storage *to, socklen_t tolen)
{
	struct xsk_backend *x = xb(bl);
	struct xsk_port *p = &x->ports[io->bindex - 1];
	struct bp_frame_flow f;
	uint64_t addr;
	uint32_t idx;
	int flen, ret;

	memcpy(f.src_mac, x->mac, 6);
	f.src = p->local;
	if (to) {
		memset(&f.dst, 0, sizeof(f.dst));
		memcpy(&f.dst, to, tolen < sizeof(f.dst) ? tolen : sizeof(f.dst));
		if (dst_mac(x, &f.dst, f.dst_mac))
			return -EHOSTUNREACH;
	} else {
		f.dst = p->peer;
		memcpy(f.dst_mac, p->peer_mac, 6);
	}
	reap(x);
	if (!x->sk.ntx_free) {
		ret = kick_tx(bl, x); /* what is on the ring goes out and comes back */
		return ret ? ret : -EAGAIN;
	}
	addr = x->sk.tx_free[x->sk.ntx_free - 1];
	flen = bp_frame_build(xsk_umem__get_data(x->sk.area, addr), BP_XSK_FRAME, &f, buf, len);
	if (flen < 0)
		return flen;
	if (xsk_ring_prod__reserve(&x->sk.tx, 1, &idx) != 1) {
		ret = kick_tx(bl, x);
		return ret ? ret : -EAGAIN;
	}
	x->sk.ntx_free--;
	xsk_ring_prod__tx_desc(&x->sk.tx, idx)->addr = addr;
	xsk_ring_prod__tx_desc(&x->sk.tx, idx)->len = (uint32_t)flen;
	xsk_ring_prod__submit(&x->sk.tx, 1);
	bl->ctr.pkt_tx++;
	if (xsk_ring_prod__needs_wakeup(&x->sk.tx) && (ret = kick_tx(bl, x)) != 0)
		return ret;
	return (ssize_t)len;
}

/* ---- the socket, opened for the first conn ---- */

/* steer_check - the conns' flows must arrive on the bound queue: refuse a device whose
 * flows could arrive on another (no steering is set for them). */
static int steer_check(struct xsk_backend *x, uint32_t queue)
{
	struct bp_nic_channels ch;
	uint32_t rxq;

	if (bp_nic_channels_get(x->dev, &ch))
		return 0; /* no channels to ask about: one queue */
	rxq = ch.count[BP_CHAN_RX] + ch.count[BP_CHAN_COMBINED];
	if (rxq <= 1)
		return 0;
	return bp_err_set(-EXDEV, "xsk: %s has %u receive queues and the flows are not steered: they may arrive on "
			  "any of queues 0-%u, not only queue %u; give it one queue (ethtool -L %s %s 1) or use "
			  "a NIC with ntuple rules", x->dev, rxq, rxq - 1, queue, x->dev,
			  ch.count[BP_CHAN_COMBINED] ? "combined" : "rx");
}

static int path_open(struct bp_backend_loop *bl, struct xsk_backend *x, const struct sockaddr_storage *local)
{
	const struct bp_mode *m = &bl->mode;
	int ifindex = 0, ret;

	ret = bp_dev_of_addr(local, &ifindex, x->dev);
	if (ret)
		return bp_err_set(ret, "xsk: no device here has the conn's address: %s", strerror(-ret));
	ret = steer_check(x, m->queue);
	if (!ret)
		ret = bp_xdp_acquire(ifindex, &x->xdp);
	if (ret)
		return ret;
	ret = bp_xsk_sock_open(&x->sk, ifindex, x->dev, m->queue);
	if (!ret)
		ret = bp_dev_mac(ifindex, x->mac) ? bp_err_sys("ioctl(SIOCGIFHWADDR)", -errno) : 0;
	if (!ret && m->policy == BP_POLICY_NAPI) {
		bl->ctr.syscalls += 3;
		ret = bp_sock_set_busy_poll(x->sk.fd, m->busy_usecs);
		if (!ret)
			ret = bp_sock_set_busy_poll_budget(x->sk.fd, m->budget);
		if (!ret && m->prefer)
			ret = bp_sock_set_prefer_busy_poll(x->sk.fd, true);
	}
	if (!ret)
		ret = bp_xdp_xsk_set(x->xdp, m->queue, x->sk.fd);
	if (!ret) {
		x->xio.fd = x->sk.fd;
		ret = bp_backend_epoll.add(bl, &x->xio);
	}
	if (ret) {
		bp_xsk_sock_close(&x->sk);
		bp_xdp_release(x->xdp);
		x->xdp = NULL;
		return ret;
	}
	x->open = true;
	return 0;
}

static int xsk_pkt_add(struct bp_backend_loop *bl, struct bp_io *io)
{
	struct xsk_backend *x = xb(bl);
	struct sockaddr_storage local = { 0 }, peer = { 0 };
	socklen_t ll = sizeof(local), pl = sizeof(peer);
	struct xsk_port *p = NULL;
	char dev[IF_NAMESIZE];
	int ifindex, ret;

	if (getsockname(io->fd, (struct sockaddr *)&local, &ll) < 0)
		return bp_err_sys("getsockname", -errno);
	if (local.ss_family != AF_INET && local.ss_family != AF_INET6)
		return 0;
	if (is_any(&local))
		return bp_err_set(-EINVAL, "xsk: the UDP socket is bound to any address; bind it to an "
				  "address of the device to serve (e.g. --bind ADDR)");
	if (!x->open && (ret = path_open(bl, x, &local)) != 0)
		return ret;
	if (bp_dev_of_addr(&local, &ifindex, dev) || ifindex != x->sk.ifindex)
		return bp_err_set(-EXDEV, "xsk: one device per loop: this conn's address is not on %s", x->dev);
	for (int i = 0; i < XSK_MAX_PORTS && !p; i++)
		if (!x->ports[i].io)
			p = &x->ports[i];
	if (!p)
		return bp_err_set(-ENOSPC, "xsk: a loop carries at most %d datagram conns", XSK_MAX_PORTS);
	memset(p, 0, sizeof(*p));
	p->local = local;
	p->port = addr_port(&local);
	if (getpeername(io->fd, (struct sockaddr *)&peer, &pl) == 0) {
		p->connected = true;
		p->peer = peer;
		ret = bp_neigh_mac(x->sk.ifindex, &peer, p->peer_mac, NEIGH_TIMEOUT_MS);
		if (ret)
			return ret;
	}
	/* Claimed now, redirected once the first datagram came through the socket (learn). */
	ret = bp_xdp_port_add(x->xdp, p->port);
	if (!ret && (ret = bp_backend_epoll.add(bl, io)) != 0)
		bp_xdp_port_del(x->xdp, p->port);
	if (ret)
		return ret;
	p->io = io;
	io->bindex = (uint32_t)(p - x->ports) + 1;
	return 1;
}

static void port_close(struct xsk_backend *x, struct bp_io *io)
{
	struct xsk_port *p = &x->ports[io->bindex - 1];

	bp_xdp_port_del(x->xdp, p->port);
	while (p->q_head != p->q_tail)
		recycle(x, p->q_addr[p->q_head++ % PORT_QLEN] & 0xffffffffu);
	p->io = NULL;
	io->bindex = 0;
}

/* ---- the operations ---- */

static int xsk_init(struct bp_backend_loop *bl)
{
	struct xsk_backend *x = calloc(1, sizeof(*x));
	int ret;

	if (!x)
		return bp_err_set(-ENOMEM, "xsk backend: out of memory");
	x->sk.fd = -1;
	ret = bp_epoll_open(bl, &x->ep);
	if (ret)
		free(x);
	return ret;
}

static void xsk_fini(struct bp_backend_loop *bl)
{
	struct xsk_backend *x = xb(bl);

	if (!x)
		return;
	for (int i = 0; i < XSK_MAX_PORTS; i++)
		if (x->ports[i].io)
			port_close(x, x->ports[i].io);
	if (x->napi_changed) {
		x->napi_was.has = BP_NAPI_HAS_DEFER | BP_NAPI_HAS_GRO_FLUSH;
		(void)bp_napi_set(x->napi_id, &x->napi_was);
	}
	if (x->open) {
		(void)bp_xdp_xsk_set(x->xdp, x->sk.queue, -1);
		bp_xsk_sock_close(&x->sk);
		bp_xdp_release(x->xdp);
	}
	close(x->ep.epfd);
	free(x);
	bl->data = NULL;
}

static int xsk_add(struct bp_backend_loop *bl, struct bp_io *io)
{
	return bp_backend_epoll.add(bl, io);
}

static int xsk_want_write(struct bp_backend_loop *bl, struct bp_io *io, bool on)
{
	if (io->bindex && io->kind == BP_IO_CONN && xb(bl)->ports[io->bindex - 1].io == io) {
		xb(bl)->ports[io->bindex - 1].want_write = on;
		return 0;
	}
	return bp_backend_epoll.want_write(bl, io, on);
}

static int xsk_del(struct bp_backend_loop *bl, struct bp_io *io)
{
	if (io->bindex && io->kind == BP_IO_CONN && xb(bl)->ports[io->bindex - 1].io == io) {
		port_close(xb(bl), io);
		return 0;
	}
	return bp_backend_epoll.del(bl, io);
}

/* strip - the AF_XDP socket's own events out of ev[from...]: the rings are read instead. */
static int strip(struct bp_backend_loop *bl, struct xsk_backend *x, int from)
{
	int out = from, n = 0;

	for (int i = from; i < bl->nev; i++) {
		if (bl->ev[i].io == &x->xio) {
			n++;
			continue;
		}
		bl->ev[out++] = bl->ev[i];
	}
	bl->nev = out;
	return n;
}

/*
 * rearm_napi - xsk:napi: give the epoll set its NAPI id back. epoll forgets the id
 * when a busy poll times out and learns it again only from an event on a socket
 * that has one; the conns' sockets see no more events once their frames come up
 * the ring, so after a wait that outlasted the busy poll, one of them goes out of
 * the set and in again (its insertion records the id).
 */
static void rearm_napi(struct bp_backend_loop *bl, struct xsk_backend *x)
{
	for (int i = 0; i < XSK_MAX_PORTS; i++) {
		struct xsk_port *p = &x->ports[i];
		struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP };

		if (!p->io || !p->learned)
			continue;
		ev.data.ptr = p->io;
		bl->ctr.syscalls += 2;
		(void)epoll_ctl(x->ep.epfd, EPOLL_CTL_DEL, p->io->fd, NULL);
		(void)epoll_ctl(x->ep.epfd, EPOLL_CTL_ADD, p->io->fd, &ev);
		return;
	}
}

static int xsk_wait(struct bp_backend_loop *bl, int64_t timeout_ns)
{
	struct xsk_backend *x = xb(bl);
	bool napi = bl->mode.policy == BP_POLICY_NAPI && x->napi_id;
	int added = 0, n, from;
	uint64_t t0 = 0;

	for (int i = 0; i < XSK_MAX_PORTS; i++)
		x->ports[i].posted = false;
	if (x->open) {
		rx_burst(bl, x);
		reap(x);
		added = post(bl, x);
		if (added || timeout_ns == 0) {
			uint64_t now = bp_now_ns();

			if (now - x->epoll_ns < EPOLL_EVERY_NS)
				return added;
			x->epoll_ns = now;
			timeout_ns = 0;
		}
	}
	from = bl->nev;
	if (napi && timeout_ns != 0)
		t0 = bp_now_ns();
	n = bp_backend_epoll.wait(bl, timeout_ns);
	if (n < 0)
		return n;
	if (t0 && bp_now_ns() - t0 > (uint64_t)bl->mode.busy_usecs * 1000)
		rearm_napi(bl, x);
	if (x->open) {
		n -= strip(bl, x, from);
		rx_burst(bl, x);
		reap(x);
		n += post(bl, x);
	}
	return added + n;
}

static uint32_t xsk_pkt_napi_id(struct bp_backend_loop *bl)
{
	return xb(bl)->napi_id;
}

static void xsk_pkt_counters(const struct bp_backend_loop *bl, struct bp_loop_counters *out)
{
	struct xsk_backend *x = xb(bl);
	struct xdp_statistics st;

	if (!x || !x->open || bp_xsk_sock_stats(&x->sk, &st))
		return;
	out->xsk_rx_dropped = st.rx_dropped + st.rx_invalid_descs;
	out->xsk_rx_ring_full = st.rx_ring_full;
	out->xsk_fill_empty = st.rx_fill_ring_empty_descs;
	out->xsk_tx_empty = st.tx_ring_empty_descs;
}

static int xsk_pkt_info(const struct bp_backend_loop *bl, struct bp_xsk_info *out)
{
	struct xsk_backend *x = xb(bl);

	if (!x || !x->open)
		return -ENOENT;
	snprintf(out->ifname, sizeof(out->ifname), "%s", x->dev);
	out->ifindex = x->sk.ifindex;
	out->queue = x->sk.queue;
	out->zerocopy = x->sk.zerocopy;
	out->prog_id = bp_xdp_prog_id(x->sk.ifindex);
	out->napi_id = x->napi_id;
	return 0;
}

const struct bp_backend_ops bp_backend_xsk = {
	.name = "xsk",
	.kind = BP_BACKEND_XSK,
	.completion = false,
	.families = bp_xsk_families,
	.check = bp_xsk_check,
	.init = xsk_init,
	.fini = xsk_fini,
	.add = xsk_add,
	.want_write = xsk_want_write,
	.del = xsk_del,
	.wait = xsk_wait,
	.pkt_add = xsk_pkt_add,
	.pkt_recv = xsk_pkt_recv,
	.pkt_send = xsk_pkt_send,
	.pkt_napi_id = xsk_pkt_napi_id,
	.pkt_counters = xsk_pkt_counters,
	.pkt_info = xsk_pkt_info,
};
