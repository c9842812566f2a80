/* SPDX-License-Identifier: MIT */
/*
 * Connections: the same behaviour on readiness backends (the core does the
 * recv/send syscalls when told the socket is ready) and on completion backends
 * (the backend's ops did the I/O; the core consumes the results).
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/errqueue.h>
#include <linux/net_tstamp.h>
#include <unistd.h>

#include <busypoll/net.h>

#include "core/internal.h"

/* Receives on which to look for the NAPI id: it is 0 until traffic arrives. */
#define NAPI_PROBES 8
/* A stream message that does not fit in this much unconsumed data is an error. */
#define RBUF_MAX (64u << 20)
/* Readiness backends: receives per READABLE event before yielding to others. */
#define RECVS_PER_EVENT 4

/* Queued datagrams carry their destination (the peer when they were sent). */
struct dgram_hdr {
	uint32_t len;
	socklen_t addrlen;
	struct sockaddr_storage addr;
};

static bool conn_completion(const struct bp_conn *c)
{
	return c->loop->be->completion;
}

static bool conn_is_dgram(const struct bp_conn *c)
{
	return c->flags & BP_CONN_DGRAM;
}

/* ---- closing ---- */

static void conn_unlink(struct bp_conn *c)
{
	struct bp_loop *loop = c->loop;

	if (c->prev)
		c->prev->next = c->next;
	else
		loop->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	c->next = c->prev = NULL;
	c->next_dead = loop->dead_conns;
	loop->dead_conns = c;
}

/*
 * Close the socket; the struct is freed by the reaper once no op refers to it.
 * On a completion backend an op may still name the fd (an SQE queued in this
 * pass and not yet submitted resolves its fd number only when it is submitted):
 * closing now would let the next accept4 or socket get the same number, and the
 * queued send would then go to that other peer. So while ops are out the fd
 * stays open (the cancels ->del queued end them soon) and the reaper closes it.
 */
static void conn_teardown(struct bp_conn *c)
{
	c->io.dead = true;
	c->loop->be->del(&c->loop->bl, &c->io);
	if (!c->io.inflight) {
		close(c->io.fd);
		c->io.fd = -1;
		c->loop->bl.ctr.syscalls++;
	}
	conn_unlink(c);
}

/*
 * A conn failed or the peer closed: tell the user, then tear down. Inside a
 * callback of this conn the teardown waits until the callback returns, so the
 * user never sees its state vanish under it.
 */
static void conn_fail(struct bp_conn *c, int err, const char *syscall)
{
	if (c->io.dead)
		return;
	if (c->in_callback) {
		if (!c->fail_syscall) {
			c->fail_err = err;
			c->fail_syscall = syscall;
		}
		return;
	}
	if (c->ops->on_close) {
		c->in_callback++;
		c->ops->on_close(c, err, syscall);
		c->in_callback--;
	}
	if (!c->io.dead)
		conn_teardown(c);
}

/* After a callback: act on a failure it caused. Returns false if c is gone. */
static bool conn_after_callback(struct bp_conn *c)
{
	if (c->io.dead)
		return false;
	if (c->fail_syscall && !c->in_callback) {
		const char *sc = c->fail_syscall;

		c->fail_syscall = NULL;
		conn_fail(c, c->fail_err, sc);
		return false;
	}
	return true;
}

void bp_conn_close(struct bp_conn *c)
{
	if (!c->io.dead)
		conn_teardown(c);
}

void bp_conn_discard(struct bp_conn *c)
{
	bp_conn_close(c);
}

void bp_conn_close_after_send(struct bp_conn *c)
{
	if (bp_sendq_len(&c->sq) == 0 && !(c->flags & BP_CONN_SEND_INFLIGHT))
		conn_fail(c, 0, "close");
	else
		c->flags |= BP_CONN_CLOSE_AFTER_SEND;
}

/* ---- receiving ---- */

/* conn_sock_napi_id - the NAPI id c's datagrams or bytes come from: its socket's, or the packet path's. */
static int conn_sock_napi_id(struct bp_conn *c, uint32_t *id)
{
	if (c->flags & BP_CONN_PKT) {
		*id = c->loop->be->pkt_napi_id(&c->loop->bl);
		return 0;
	}
	c->loop->bl.ctr.syscalls++;
	return bp_sock_napi_id(c->io.fd, id);
}

static void conn_probe_napi(struct bp_conn *c)
{
	uint32_t id = 0;

	c->napi_probes--;
	if (conn_sock_napi_id(c, &id) == 0 && id) {
		c->napi_id = id;
		c->napi_probes = 0;
		bp_loop_note_napi(c->loop, id);
	}
}

/* Room for need unconsumed bytes in the receive buffer: doubling, within reason. */
static bool conn_rbuf_reserve(struct bp_conn *c, size_t need)
{
	size_t cap = c->rcap;
	uint8_t *nb;

	if (need <= cap)
		return true;
	while (cap < need && cap <= RBUF_MAX / 2)
		cap *= 2;
	nb = cap >= need ? realloc(c->rbuf, cap) : NULL;
	if (!nb) {
		conn_fail(c, -ENOBUFS, "recv");
		return false;
	}
	c->rbuf = nb;
	c->rcap = cap;
	c->riov.iov_base = nb;
	c->riov.iov_len = cap;
	return true;
}

/* n more bytes came in: count them, and look for the NAPI id while it is unknown. */
static void conn_count_in(struct bp_conn *c, size_t n)
{
	c->loop->bl.ctr.bytes_in += n;
	bp_conn_direct_rearm(c);
	if (c->napi_probes)
		conn_probe_napi(c);
}

/* Hand the unconsumed bytes [0, rlen) to the user; keep what it did not consume. */
static bool conn_present(struct bp_conn *c)
{
	size_t used;

	c->in_callback++;
	used = c->ops->on_recv(c, c->rbuf, c->rlen);
	c->in_callback--;
	if (!conn_after_callback(c))
		return false;
	if (used >= c->rlen) { /* all of it, the common case: nothing to move, room is there */
		c->rlen = 0;
		return true;
	}
	if (used) {
		memmove(c->rbuf, c->rbuf + used, c->rlen - used);
		c->rlen -= used;
	}
	/* The user needs more than fits: grow. */
	return conn_rbuf_reserve(c, c->rlen + 1);
}

/* n bytes landed in the receive buffer at rbuf + rlen (or at rbuf: a datagram). */
static bool conn_deliver(struct bp_conn *c, size_t n)
{
	conn_count_in(c, n);
	if (conn_is_dgram(c)) {
		c->in_callback++;
		c->ops->on_recv(c, c->rbuf, n);
		c->in_callback--;
		c->rlen = 0;
		return conn_after_callback(c);
	}
	c->rlen += n;
	return conn_present(c);
}

/*
 * n stream bytes landed in the backend's own buffer (a provided buffer ring), valid
 * until its next wait. With nothing unconsumed they are presented where they are, no
 * copy; only what the user leaves is copied into the conn's buffer, the framing buffer
 * that later bytes go behind.
 */
static bool conn_deliver_from(struct bp_conn *c, const uint8_t *data, size_t n)
{
	size_t used;

	conn_count_in(c, n);
	if (c->rlen) {
		if (!conn_rbuf_reserve(c, c->rlen + n))
			return false;
		memcpy(c->rbuf + c->rlen, data, n);
		c->rlen += n;
		return conn_present(c);
	}
	c->in_callback++;
	used = c->ops->on_recv(c, data, n);
	c->in_callback--;
	if (!conn_after_callback(c))
		return false;
	if (used >= n)
		return true;
	if (!conn_rbuf_reserve(c, n - used + 1))
		return false;
	memcpy(c->rbuf, data + used, n - used);
	c->rlen = n - used;
	return true;
}

/*
 * An unconnected datagram socket serves many peers: an error that concerns one
 * datagram or one peer (ICMP unreachable, too big) must not close it for all.
 */
static bool conn_dgram_error_is_per_peer(const struct bp_conn *c, int err)
{
	if (!conn_is_dgram(c) || (c->flags & BP_CONN_DGRAM_CONNECTED))
		return false;
	switch (-err) {
	case ECONNREFUSED: case EHOSTUNREACH: case ENETUNREACH: case EMSGSIZE:
	case EHOSTDOWN: case ENETDOWN: case EPERM: case EACCES: case ENOBUFS:
		return true;
	default:
		return false;
	}
}

/* ---- timestamps ---- */

static uint64_t ts_ns(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * 1000000000ull + (uint64_t)ts->tv_nsec;
}

/* The software receive timestamp from a receive's control messages. */
static void conn_parse_rx_cmsg(struct bp_conn *c, struct msghdr *msg)
{
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(msg); cm; cm = CMSG_NXTHDR(msg, cm)) {
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SO_TIMESTAMPING &&
		    cm->cmsg_len >= CMSG_LEN(sizeof(struct scm_timestamping))) {
			struct scm_timestamping t;

			memcpy(&t, CMSG_DATA(cm), sizeof(t));
			if (ts_ns(&t.ts[0]))
				c->rx_ts_ns = ts_ns(&t.ts[0]);
		}
	}
}

/* Prepare c->rmsg for a recvmsg into the free part of the receive buffer. */
static void conn_prepare_rmsg(struct bp_conn *c)
{
	bool dgram = conn_is_dgram(c);

	c->riov.iov_base = dgram ? c->rbuf : c->rbuf + c->rlen;
	c->riov.iov_len = dgram ? c->rcap : c->rcap - c->rlen;
	c->rmsg.msg_name = dgram ? &c->peer : NULL;
	c->rmsg.msg_namelen = dgram ? sizeof(c->peer) : 0;
	c->rmsg.msg_iov = &c->riov;
	c->rmsg.msg_iovlen = 1;
	c->rmsg.msg_control = (c->flags & BP_CONN_TIMESTAMPS) ? c->cmsg : NULL;
	c->rmsg.msg_controllen = (c->flags & BP_CONN_TIMESTAMPS) ? sizeof(c->cmsg) : 0;
	c->rmsg.msg_flags = 0;
}

int bp_conn_read_tx_timestamps(struct bp_conn *c)
{
	int found = 0;

	for (int i = 0; i < 64 && !c->io.dead; i++) {
		uint8_t control[256];
		char data[1];
		struct iovec iov = { data, sizeof(data) };
		struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control,
				      .msg_controllen = sizeof(control) };
		uint64_t ns = 0;
		bool have_key = false;
		uint32_t key = 0;

		c->loop->bl.ctr.syscalls++;
		if (recvmsg(c->io.fd, &msg, MSG_ERRQUEUE | MSG_DONTWAIT) < 0) {
			if (errno == EAGAIN || errno == EINTR)
				break;
			return bp_err_sys("recvmsg(MSG_ERRQUEUE)", -errno);
		}
		for (struct cmsghdr *cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
			if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SO_TIMESTAMPING &&
			    cm->cmsg_len >= CMSG_LEN(sizeof(struct scm_timestamping))) {
				struct scm_timestamping t;

				memcpy(&t, CMSG_DATA(cm), sizeof(t));
				ns = ts_ns(&t.ts[0]);
			} else if ((cm->cmsg_level == SOL_IP && cm->cmsg_type == IP_RECVERR) ||
				   (cm->cmsg_level == SOL_IPV6 && cm->cmsg_type == IPV6_RECVERR)) {
				struct sock_extended_err ee;

				memcpy(&ee, CMSG_DATA(cm), sizeof(ee));
				if (ee.ee_origin == SO_EE_ORIGIN_TIMESTAMPING && ee.ee_info == SCM_TSTAMP_SND) {
					key = ee.ee_data;
					have_key = true;
				}
			}
		}
		if (have_key && ns && c->ops->on_tx_timestamp) {
			c->in_callback++;
			c->ops->on_tx_timestamp(c, key, ns);
			c->in_callback--;
			found++;
			if (!conn_after_callback(c))
				break;
		}
	}
	return found;
}

int bp_conn_enable_timestamps(struct bp_conn *c)
{
	int flags = SOF_TIMESTAMPING_RX_SOFTWARE | SOF_TIMESTAMPING_TX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE |
		    SOF_TIMESTAMPING_OPT_ID | SOF_TIMESTAMPING_OPT_TSONLY;

	if (setsockopt(c->io.fd, SOL_SOCKET, SO_TIMESTAMPING, &flags, sizeof(flags)) < 0)
		return bp_err_sys("setsockopt(SO_TIMESTAMPING)", -errno);
	c->flags |= BP_CONN_TIMESTAMPS;
	/* A completion backend's receive armed without a control buffer (a multishot one
	 * would stay so for good): stop it, and the next one is a recvmsg. */
	if (conn_completion(c) && (c->flags & BP_CONN_RECV_ARMED) && c->loop->be->recv_stop) {
		int ret = c->loop->be->recv_stop(&c->loop->bl, &c->io);

		if (ret < 0)
			return ret;
		if (ret > 0)
			c->flags |= BP_CONN_RECV_RESTART;
	}
	return 0;
}

uint64_t bp_conn_rx_timestamp(const struct bp_conn *c)
{
	return c->rx_ts_ns;
}

static void conn_arm_recv(struct bp_conn *c)
{
	struct bp_recv r = { 0 };
	int ret;

	if (c->io.dead || (c->flags & (BP_CONN_RECV_ARMED | BP_CONN_CONNECTING)))
		return;
	if (conn_is_dgram(c) || (c->flags & BP_CONN_TIMESTAMPS)) {
		conn_prepare_rmsg(c);
		r.msg = &c->rmsg;
	} else {
		r.buf = c->rbuf + c->rlen;
		r.len = c->rcap - c->rlen;
	}
	c->flags |= BP_CONN_RECV_ARMED;
	c->loop->bl.ctr.recv_arms++;
	ret = c->loop->be->recv(&c->loop->bl, &c->io, &r);
	if (ret) {
		c->flags &= ~BP_CONN_RECV_ARMED;
		conn_fail(c, ret, "io_uring recv");
	}
}

/* The packet path: one datagram per event, as a socket's (the backend reports the rest). */
static void conn_read_pkt(struct bp_conn *c)
{
	ssize_t n;

	c->peerlen = sizeof(c->peer);
	n = c->loop->be->pkt_recv(&c->loop->bl, &c->io, c->rbuf, c->rcap, &c->peer, &c->peerlen);
	if (n >= 0)
		conn_deliver(c, (size_t)n);
	else if (n != -EAGAIN)
		conn_fail(c, (int)n, "xsk recv");
}

/* Readiness: read what is there, a few times at most, then let others run. */
static void conn_read_ready(struct bp_conn *c)
{
	if (c->flags & BP_CONN_PKT) {
		conn_read_pkt(c);
		return;
	}
	for (int i = 0; i < RECVS_PER_EVENT && !c->io.dead; i++) {
		ssize_t n;

		c->loop->bl.ctr.syscalls++;
		if (c->flags & BP_CONN_TIMESTAMPS) {
			conn_prepare_rmsg(c);
			n = recvmsg(c->io.fd, &c->rmsg, MSG_DONTWAIT);
			if (n >= 0) {
				conn_parse_rx_cmsg(c, &c->rmsg);
				if (conn_is_dgram(c))
					c->peerlen = c->rmsg.msg_namelen;
			}
		} else if (conn_is_dgram(c)) {
			c->peerlen = sizeof(c->peer);
			n = recvfrom(c->io.fd, c->rbuf, c->rcap, MSG_DONTWAIT,
				     (struct sockaddr *)&c->peer, &c->peerlen);
		} else {
			n = bp_sys_recv(c->io.fd, c->rbuf + c->rlen, c->rcap - c->rlen, MSG_DONTWAIT);
		}
		if (conn_is_dgram(c) && n >= 0) {
			/* One datagram per event, empty ones too: level triggering reports the
			 * rest, and a ping-pong never pays a recvfrom that finds nothing. */
			conn_deliver(c, (size_t)n);
			return;
		}
		if (n > 0) {
			size_t room = c->rcap - c->rlen;

			if (!conn_deliver(c, (size_t)n))
				return;
			/* A short read means the socket is drained: skip the EAGAIN syscall. */
			if ((size_t)n < room)
				return;
			continue;
		}
		if (n == 0) {
			conn_fail(c, 0, "recv");
			return;
		}
		if (errno == EAGAIN || errno == EINTR)
			return;
		/* An unconnected datagram socket outlives ICMP errors about one peer. */
		if (conn_dgram_error_is_per_peer(c, -errno))
			return;
		conn_fail(c, -errno, conn_is_dgram(c) ? "recvfrom" : "recv");
		return;
	}
}

bool bp_conn_read_direct(struct bp_conn *c, uint32_t busy_usecs)
{
	uint64_t before = c->loop->bl.ctr.bytes_in;
	int v = (int)busy_usecs;

	/* datagrams and timestamps need recvmsg's extras; a connect is not done yet */
	if (c->io.dead ||
	    (c->flags & (BP_CONN_CONNECTING | BP_CONN_DGRAM | BP_CONN_TIMESTAMPS | BP_CONN_NO_DIRECT))) {
		c->direct_misses = UINT8_MAX; /* no candidate until bytes come or it sends again */
		return false;
	}
	if (busy_usecs && !(c->flags & BP_CONN_BUSY_SET)) {
		c->loop->bl.ctr.syscalls++;
		/* Refused, a read would only read, and a miss would only delay epoll's own busy
		 * poll: the connection is left to epoll. */
		if (setsockopt(c->io.fd, SOL_SOCKET, SO_BUSY_POLL, &v, sizeof(v)) < 0) {
			c->flags |= BP_CONN_NO_DIRECT;
			c->direct_misses = UINT8_MAX;
			return false;
		}
		c->flags |= BP_CONN_BUSY_SET;
	}
	c->loop->bl.ctr.direct_tried++;
	conn_read_ready(c);
	if (c->loop->bl.ctr.bytes_in == before && !c->io.dead) {
		if (c->direct_misses < UINT8_MAX)
			c->direct_misses++;
		return false;
	}
	c->loop->bl.ctr.direct_hit++;
	return true;
}

/* ---- sending ---- */

static void conn_sent_all(struct bp_conn *c)
{
	if (c->flags & BP_CONN_CLOSE_AFTER_SEND) {
		conn_fail(c, 0, "close");
		return;
	}
	if (c->ops->on_drain) {
		c->in_callback++;
		c->ops->on_drain(c);
		c->in_callback--;
		conn_after_callback(c);
	}
}

static int conn_want_write(struct bp_conn *c, bool on)
{
	if (!!(c->flags & BP_CONN_WRITE_WANTED) == on)
		return 0;
	if (on)
		c->flags |= BP_CONN_WRITE_WANTED;
	else
		c->flags &= ~BP_CONN_WRITE_WANTED;
	return c->loop->be->want_write(&c->loop->bl, &c->io, on);
}

/* One datagram with a syscall; returns bytes, or -errno. */
static ssize_t dgram_send_now(struct bp_conn *c, const void *data, size_t len,
			      const struct sockaddr_storage *to, socklen_t tolen)
{
	ssize_t n;

	if (c->flags & BP_CONN_PKT) /* the backend counts the syscalls it makes */
		return c->loop->be->pkt_send(&c->loop->bl, &c->io, data, len,
					     (c->flags & BP_CONN_DGRAM_CONNECTED) ? NULL : to, tolen);
	c->loop->bl.ctr.syscalls++;
	if (c->flags & BP_CONN_DGRAM_CONNECTED)
		n = send(c->io.fd, data, len, MSG_DONTWAIT | MSG_NOSIGNAL);
	else
		n = sendto(c->io.fd, data, len, MSG_DONTWAIT | MSG_NOSIGNAL,
			   (const struct sockaddr *)to, tolen);
	return n < 0 ? -errno : n;
}

/* Readiness: push queued bytes until the socket is full or the queue is empty. */
static void conn_flush_ready(struct bp_conn *c)
{
	while (bp_sendq_len(&c->sq)) {
		ssize_t n;

		if (conn_is_dgram(c)) {
			struct dgram_hdr h;

			memcpy(&h, bp_sendq_data(&c->sq), sizeof(h));
			n = dgram_send_now(c, bp_sendq_data(&c->sq) + sizeof(h), h.len, &h.addr,
					   h.addrlen);
			if (n == -EAGAIN)
				return;
			if (n < 0 && !conn_dgram_error_is_per_peer(c, (int)n)) {
				conn_fail(c, (int)n, "sendto");
				return;
			}
			if (n < 0) {
				/* That datagram is lost; the socket goes on serving the others. */
				bp_sendq_consume(&c->sq, sizeof(h) + h.len);
				continue;
			}
			c->loop->bl.ctr.bytes_out += h.len;
			bp_sendq_consume(&c->sq, sizeof(h) + h.len);
			continue;
		}
		c->loop->bl.ctr.syscalls++;
		n = bp_sys_send(c->io.fd, bp_sendq_data(&c->sq), bp_sendq_len(&c->sq),
				MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return;
			conn_fail(c, -errno, "send");
			return;
		}
		c->loop->bl.ctr.bytes_out += (size_t)n;
		bp_sendq_consume(&c->sq, (size_t)n);
	}
	if (conn_want_write(c, false) < 0) {
		conn_fail(c, -errno, "epoll_ctl");
		return;
	}
	conn_sent_all(c);
}

/* Completion: start the next send from the queue if none is in flight. */
static void conn_start_send(struct bp_conn *c)
{
	int ret;

	if (c->io.dead || (c->flags & (BP_CONN_SEND_INFLIGHT | BP_CONN_CONNECTING)) ||
	    !bp_sendq_len(&c->sq))
		return;
	bp_sendq_pin(&c->sq);
	if (conn_is_dgram(c)) {
		struct dgram_hdr h;

		memcpy(&h, bp_sendq_data(&c->sq), sizeof(h));
		c->speer = h.addr;
		c->siov.iov_base = (void *)(bp_sendq_data(&c->sq) + sizeof(h));
		c->siov.iov_len = h.len;
		memset(&c->smsg, 0, sizeof(c->smsg));
		if (!(c->flags & BP_CONN_DGRAM_CONNECTED)) {
			c->smsg.msg_name = &c->speer;
			c->smsg.msg_namelen = h.addrlen;
		}
		c->smsg.msg_iov = &c->siov;
		c->smsg.msg_iovlen = 1;
		c->inflight_len = sizeof(h) + h.len;
		c->flags |= BP_CONN_SEND_INFLIGHT;
		ret = c->loop->be->send(&c->loop->bl, &c->io, NULL, 0, &c->smsg);
	} else {
		c->inflight_len = bp_sendq_len(&c->sq);
		c->flags |= BP_CONN_SEND_INFLIGHT;
		ret = c->loop->be->send(&c->loop->bl, &c->io, bp_sendq_data(&c->sq), c->inflight_len, NULL);
	}
	if (ret) {
		c->flags &= ~BP_CONN_SEND_INFLIGHT;
		bp_sendq_unpin(&c->sq);
		conn_fail(c, ret, "io_uring send");
	}
}

static void conn_send_done(struct bp_conn *c, int res)
{
	c->flags &= ~BP_CONN_SEND_INFLIGHT;
	if (res < 0 && conn_dgram_error_is_per_peer(c, res)) {
		/* That datagram is lost; the socket goes on serving the others. */
		res = 0;
	}
	if (res < 0) {
		bp_sendq_unpin(&c->sq);
		conn_fail(c, res, conn_is_dgram(c) ? "sendmsg" : "send");
		return;
	}
	if (conn_is_dgram(c)) {
		c->loop->bl.ctr.bytes_out += c->siov.iov_len;
		bp_sendq_consume(&c->sq, c->inflight_len);
	} else {
		c->loop->bl.ctr.bytes_out += (size_t)res;
		bp_sendq_consume(&c->sq, (size_t)res);
	}
	bp_sendq_unpin(&c->sq);
	if (bp_sendq_len(&c->sq))
		conn_start_send(c);
	else
		conn_sent_all(c);
}

static int dgram_queue(struct bp_conn *c, const void *data, size_t len)
{
	struct dgram_hdr h = { .len = (uint32_t)len, .addrlen = c->peerlen, .addr = c->peer };
	int ret = bp_sendq_push(&c->sq, &h, sizeof(h));

	if (!ret)
		ret = bp_sendq_push(&c->sq, data, len);
	return ret;
}

int bp_conn_send(struct bp_conn *c, const void *data, size_t len)
{
	bool idle = !bp_sendq_len(&c->sq) && !(c->flags & (BP_CONN_CONNECTING | BP_CONN_SEND_INFLIGHT));
	ssize_t n = 0;
	int ret;

	if (c->io.dead || c->fail_syscall || (c->flags & BP_CONN_CLOSE_AFTER_SEND))
		return -ENOTCONN;
	if (conn_is_dgram(c)) {
		if (!(c->flags & BP_CONN_DGRAM_CONNECTED) && !c->peerlen)
			return bp_err_set(-EDESTADDRREQ, "send: no datagram received yet to reply to");
		if (idle && !conn_completion(c)) {
			n = dgram_send_now(c, data, len, &c->peer, c->peerlen);
			if (n >= 0) {
				c->loop->bl.ctr.bytes_out += len;
				return 0;
			}
			if (n != -EAGAIN) {
				if (!conn_dgram_error_is_per_peer(c, (int)n))
					conn_fail(c, (int)n, "sendto");
				return bp_err_sys("sendto", (int)n);
			}
		}
		ret = dgram_queue(c, data, len);
		if (ret)
			return bp_err_set(ret, "send: out of memory for the send queue");
	} else {
		bp_conn_direct_rearm(c); /* a request out: its answer is expected */
		if (idle && !conn_completion(c)) {
			c->loop->bl.ctr.syscalls++;
			n = bp_sys_send(c->io.fd, data, len, MSG_DONTWAIT | MSG_NOSIGNAL);
			if (n < 0) {
				if (errno != EAGAIN && errno != EINTR) {
					int err = -errno;

					conn_fail(c, err, "send");
					return bp_err_sys("send", err);
				}
				n = 0;
			}
			c->loop->bl.ctr.bytes_out += (size_t)n;
			if ((size_t)n == len)
				return 0;
		}
		ret = bp_sendq_push(&c->sq, (const uint8_t *)data + n, len - (size_t)n);
		if (ret)
			return bp_err_set(ret, "send: out of memory for the send queue");
	}
	if (conn_completion(c)) {
		conn_start_send(c);
	} else if (!(c->flags & BP_CONN_CONNECTING)) {
		ret = conn_want_write(c, true);
		if (ret)
			conn_fail(c, ret, "epoll_ctl");
	}
	return 0;
}

/* ---- connect ---- */

static void conn_connected(struct bp_conn *c, int poll_res)
{
	int err = 0;
	socklen_t len = sizeof(err);

	c->loop->bl.ctr.syscalls++;
	if (getsockopt(c->io.fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
		err = errno;
	if (!err && poll_res < 0)
		err = -poll_res;
	if (err) {
		conn_fail(c, -err, "connect");
		return;
	}
	c->flags &= ~BP_CONN_CONNECTING;
	if (!conn_completion(c) && !bp_sendq_len(&c->sq) && conn_want_write(c, false)) {
		conn_fail(c, -errno, "epoll_ctl");
		return;
	}
	if (c->ops->on_connect) {
		c->in_callback++;
		c->ops->on_connect(c);
		c->in_callback--;
		if (!conn_after_callback(c))
			return;
	}
	if (conn_completion(c)) {
		conn_arm_recv(c);
		conn_start_send(c);
	}
}

/* ---- events from the backend ---- */

void bp_conn_on_event(struct bp_conn *c, const struct bp_event *ev)
{
	bool restart = false;

	switch (ev->kind) {
	case BP_EV_READABLE:
		if (c->flags & BP_CONN_CONNECTING) {
			conn_connected(c, (ev->flags & BP_EVF_ERR) ? -ECONNREFUSED : 0);
			break;
		}
		/* An error event on a timestamping socket is usually its transmit timestamps. */
		if ((ev->flags & BP_EVF_ERR) && (c->flags & BP_CONN_TIMESTAMPS))
			bp_conn_read_tx_timestamps(c);
		if (!c->io.dead)
			conn_read_ready(c);
		break;
	case BP_EV_WRITABLE:
		if (c->flags & BP_CONN_CONNECTING) {
			conn_connected(c, ev->res < 0 ? ev->res : 0);
			/* Bytes queued while connecting go now; otherwise nothing to flush. */
			if (c->io.dead || conn_completion(c) || !bp_sendq_len(&c->sq))
				break;
		}
		if (!conn_completion(c))
			conn_flush_ready(c);
		break;
	case BP_EV_RECV:
		/* A multishot receive stays armed until a completion without MORE. */
		if (!(ev->flags & BP_EVF_MORE)) {
			restart = c->flags & BP_CONN_RECV_RESTART;
			c->flags &= ~(BP_CONN_RECV_ARMED | BP_CONN_RECV_RESTART);
		}
		if (ev->res == -ECANCELED && restart) {
			conn_arm_recv(c);
		} else if (ev->res > 0) {
			bool ok;

			if (conn_is_dgram(c))
				c->peerlen = c->rmsg.msg_namelen;
			if (c->flags & BP_CONN_TIMESTAMPS)
				conn_parse_rx_cmsg(c, &c->rmsg);
			ok = ev->data ? conn_deliver_from(c, ev->data, (size_t)ev->res)
				      : conn_deliver(c, (size_t)ev->res);
			if (ok)
				conn_arm_recv(c);
		} else if (ev->res == 0 && !conn_is_dgram(c)) {
			conn_fail(c, 0, "recv");
		} else if (ev->res == 0) {
			/* An empty datagram is a datagram. */
			c->peerlen = c->rmsg.msg_namelen;
			if (conn_deliver(c, 0))
				conn_arm_recv(c);
		} else if (ev->res == -EAGAIN || ev->res == -EINTR || ev->res == -ENOBUFS ||
			   conn_dgram_error_is_per_peer(c, ev->res)) {
			conn_arm_recv(c);
		} else {
			conn_fail(c, ev->res, conn_is_dgram(c) ? "recvmsg" : "recv");
		}
		break;
	case BP_EV_SEND:
		conn_send_done(c, ev->res);
		break;
	}
}

/* ---- creating ---- */

static int conn_new(struct bp_loop *loop, int fd, int type, const struct bp_conn_ops *ops,
		    void *user, struct bp_conn **out)
{
	struct bp_conn *c = calloc(1, sizeof(*c));

	if (c)
		c->rbuf = malloc(BP_CONN_RBUF_INITIAL);
	if (!c || !c->rbuf) {
		free(c);
		return bp_err_set(-ENOMEM, "connection: out of memory");
	}
	c->io.fd = fd;
	c->io.kind = BP_IO_CONN;
	c->loop = loop;
	c->ops = ops;
	c->user = user;
	c->rcap = BP_CONN_RBUF_INITIAL;
	c->napi_probes = NAPI_PROBES;
	c->direct_misses = UINT8_MAX; /* not read directly until bytes come or it sends */
	if (type == SOCK_DGRAM)
		c->flags |= BP_CONN_DGRAM;
	c->next = loop->conns;
	if (loop->conns)
		loop->conns->prev = c;
	loop->conns = c;
	*out = c;
	return 0;
}

/* conn_register - start watching c: a datagram conn is offered to a packet path first. */
static int conn_register(struct bp_conn *c)
{
	struct bp_loop *loop = c->loop;
	int ret;

	if (conn_is_dgram(c) && loop->be->pkt_add) {
		ret = loop->be->pkt_add(&loop->bl, &c->io);
		if (ret < 0)
			return ret;
		if (ret > 0) {
			c->flags |= BP_CONN_PKT;
			return 0;
		}
	}
	return loop->be->add(&loop->bl, &c->io);
}

static bool fd_is_connected(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	return getpeername(fd, (struct sockaddr *)&ss, &len) == 0;
}

int bp_conn_adopt(struct bp_loop *loop, int fd, const struct bp_conn_ops *ops, void *user,
		  struct bp_conn **connp)
{
	struct bp_conn *c;
	int type = 0, ret;
	socklen_t len = sizeof(type);

	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0) {
		ret = bp_err_sys("getsockopt(SO_TYPE)", -errno);
		close(fd);
		return ret;
	}
	ret = bp_sock_set_nonblock(fd);
	if (!ret && type == SOCK_STREAM)
		bp_sock_set_nodelay(fd, true); /* a latency toolkit: never wait for Nagle */
	if (!ret)
		ret = conn_new(loop, fd, type, ops, user, &c);
	if (ret) {
		close(fd);
		return ret;
	}
	if (type == SOCK_DGRAM && fd_is_connected(fd))
		c->flags |= BP_CONN_DGRAM_CONNECTED;
	ret = conn_register(c);
	if (ret) {
		conn_teardown(c);
		return ret;
	}
	if (conn_completion(c))
		conn_arm_recv(c);
	if (connp)
		*connp = c;
	return 0;
}

int bp_conn_connect(struct bp_loop *loop, const struct sockaddr *addr, socklen_t addrlen,
		    int type, const struct bp_conn_ops *ops, void *user, struct bp_conn **connp)
{
	struct bp_conn *c;
	int fd, ret;

	fd = socket(addr->sa_family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return bp_err_sys("socket", -errno);
	if (type == SOCK_STREAM)
		bp_sock_set_nodelay(fd, true);
	if (connect(fd, addr, addrlen) < 0 && errno != EINPROGRESS) {
		ret = bp_err_sys("connect", -errno);
		close(fd);
		return ret;
	}
	ret = conn_new(loop, fd, type, ops, user, &c);
	if (ret) {
		close(fd);
		return ret;
	}
	if (type == SOCK_DGRAM)
		c->flags |= BP_CONN_DGRAM_CONNECTED;
	/* Finish the connect from the loop (on_connect never runs inside this call). */
	c->flags |= BP_CONN_CONNECTING;
	ret = conn_register(c);
	if (!ret)
		ret = conn_want_write(c, true);
	if (ret) {
		conn_teardown(c);
		return ret;
	}
	if (connp)
		*connp = c;
	return 0;
}

/* ---- accessors ---- */

int bp_conn_fd(const struct bp_conn *c) { return c->io.fd; }
struct bp_loop *bp_conn_loop(const struct bp_conn *c) { return c->loop; }
void *bp_conn_data(const struct bp_conn *c) { return c->user; }
void bp_conn_set_data(struct bp_conn *c, void *user) { c->user = user; }

size_t bp_conn_pending(const struct bp_conn *c)
{
	return bp_sendq_len(&c->sq);
}

uint32_t bp_conn_napi_id(struct bp_conn *c)
{
	if (!c->napi_id && !c->io.dead) {
		uint32_t id = 0;

		if (conn_sock_napi_id(c, &id) == 0 && id) {
			c->napi_id = id;
			c->napi_probes = 0;
			bp_loop_note_napi(c->loop, id);
		}
	}
	return c->napi_id;
}

const struct sockaddr_storage *bp_conn_peer(const struct bp_conn *c, socklen_t *len)
{
	if (len)
		*len = c->peerlen;
	return &c->peer;
}
