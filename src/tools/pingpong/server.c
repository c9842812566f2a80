/* SPDX-License-Identifier: MIT */
/*
 * busypoll pingpong server: the data loop (see server.h for the threads).
 *
 * A request is answered from the receive callback: copy it into the reply buffer,
 * fill in the server fields, send. With timestamps on (the client asked for
 * --breakdown) the callback also measures, on this host's clock:
 *   rx wake-up   software rx timestamp -> the callback holding the bytes
 *   processing   the callback holding the bytes -> the send call (includes
 *                --server-delay-us, which is why that delay shows up there)
 *   send path    the send call -> the reply's software tx timestamp; known only
 *                after the send, so it travels in the NEXT reply (prev_seq), or a
 *                later one when its timestamp came late (a small queue)
 * Transmit timestamps come back through the error queue: the epoll loop drains it
 * by itself on the error event, which arrives while the client is still busy with
 * the reply; io_uring has no such event, so on_drain (the send completed) reads it.
 *
 * Bad messages (short, oversized, truncated, garbage, wrong magic or version) are
 * counted and dropped, logged once per peer; a TCP connection that sends one is
 * closed, since its stream cannot be re-framed. Nothing a client sends stops the
 * server.
 *
 * Hot path: no allocation (the reply buffer is the server's), no lock, no log.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/net_tstamp.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <poll.h>
#include <unistd.h>

#include "tools/harness/server.h"
#include "tools/pingpong/server.h"

/* ---- logging and bad messages ---- */

void pp_server_log(const struct pp_server *s, const char *fmt, ...)
{
	va_list ap;

	if (s->o.quiet)
		return;
	va_start(ap, fmt);
	fprintf(stderr, "busypoll pingpong server: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static bool same_peer(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET) {
		const struct sockaddr_in *x = (const void *)a, *y = (const void *)b;

		return x->sin_addr.s_addr == y->sin_addr.s_addr && x->sin_port == y->sin_port;
	}
	if (a->ss_family == AF_INET6) {
		const struct sockaddr_in6 *x = (const void *)a, *y = (const void *)b;

		return !memcmp(&x->sin6_addr, &y->sin6_addr, sizeof(x->sin6_addr)) &&
		       x->sin6_port == y->sin6_port;
	}
	return true;
}

void pp_server_note_bad(struct pp_server *s, const struct sockaddr_storage *peer,
			socklen_t peerlen, const char *proto, int reason, size_t len)
{
	char text[128] = "?";
	bool seen = false;

	if (reason <= 0 || reason >= BP_PP_ERR_COUNT)
		reason = BP_PP_ERR_MAGIC;
	atomic_fetch_add_explicit(&s->dropped[reason], 1, memory_order_relaxed);
	if (peer && peerlen)
		bp_format_addr((const struct sockaddr *)peer, text, sizeof(text));
	pthread_mutex_lock(&s->bad_lock);
	for (int i = 0; peer && i < s->n_bad_peers; i++)
		seen |= same_peer(&s->bad_peers[i], peer);
	if (!seen && peer && s->n_bad_peers < PP_BAD_PEERS) {
		s->bad_peers[s->n_bad_peers++] = *peer;
		pp_server_log(s, "dropping bad %s messages from %s (first: %zu bytes, %s); further ones from it are counted, not logged",
			      proto, text, len, bp_pp_err_text(reason));
	} else if (!seen && !s->bad_overflow_logged) {
		s->bad_overflow_logged = true;
		pp_server_log(s, "bad messages from more than %d peers; no longer logging new ones",
			      PP_BAD_PEERS);
	}
	pthread_mutex_unlock(&s->bad_lock);
}

/* ---- answering ---- */

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

/* spin_until - the server delay: a busy wait, like work would be, not a sleep. */
static void spin_until(uint64_t deadline_ns)
{
	while (bp_now_ns() < deadline_ns)
		cpu_relax();
}

/* The reply's send path is known: keep it for the next reply to carry. */
static void on_tx_timestamp(struct bp_conn *c, uint32_t key, uint64_t ns)
{
	struct pp_dsock *ds = bp_conn_data(c);
	typeof(ds->sent[0]) *slot = &ds->sent[key & (PP_SENT_RING - 1)];
	unsigned i;

	if (!slot->used || slot->key != key)
		return;
	slot->used = false;
	if (ns < slot->t_send)
		return; /* the clock stepped back: no honest figure */
	if (ds->prev_count == PP_PREV_QUEUE) { /* the client gave up on the oldest by now */
		ds->prev_head = (ds->prev_head + 1) & (PP_PREV_QUEUE - 1);
		ds->prev_count--;
	}
	i = (ds->prev_head + ds->prev_count++) & (PP_PREV_QUEUE - 1);
	ds->prev[i].seq = slot->seq;
	ds->prev[i].send_ns = bp_pp_sat32(ns - slot->t_send);
}

/*
 * serve - answer the request at data (avail bytes; dgram: exactly one datagram).
 * Returns the bytes consumed: 0 = a stream needs more, SIZE_MAX = bad (dropped).
 */
static size_t serve(struct pp_dsock *ds, const uint8_t *data, size_t avail, bool dgram)
{
	struct pp_data *d = ds->d;
	struct bp_conn *c = ds->conn;
	uint64_t t_app, t_send = 0;
	uint32_t srv_rx = 0, srv_proc = 0, srv_send = 0;
	uint64_t prev_seq = 0;
	uint16_t flags = 0;
	struct bp_pp_hdr h;
	uint8_t *reply = d->s->reply;
	int bad;

	pp_test_delay(d->s->o.test_delay_us[PP_C_SERVER_RX]);
	t_app = d->timestamps ? pp_realtime_ns() : 0;
	bad = bp_pp_hdr_decode(data, avail, BP_PP_REQUEST, dgram, &h);
	if (!dgram && bad == BP_PP_ERR_SHORT)
		return 0;
	if (bad) {
		const struct sockaddr_storage *peer = &ds->peer;
		socklen_t plen = ds->peerlen;

		if (dgram)
			peer = bp_conn_peer(c, &plen);
		pp_server_note_bad(d->s, peer, plen, dgram ? "UDP" : "TCP", bad, avail);
		return SIZE_MAX;
	}
	if (avail < h.length)
		return 0;
	if (d->delay_ns)
		spin_until(bp_now_ns() + d->delay_ns);
	memcpy(reply, data, h.length);
	if (d->timestamps) {
		uint64_t rx = bp_conn_rx_timestamp(c);

		/*
		 * UDP serves clients one after another on one socket: send paths still
		 * queued belong to the previous client (its last reply), not to this one.
		 */
		if (dgram) {
			socklen_t plen;
			const struct sockaddr_storage *peer = bp_conn_peer(c, &plen);

			if (!same_peer(peer, &ds->peer)) {
				ds->peer = *peer;
				ds->peerlen = plen;
				ds->prev_count = 0;
			}
		}
		flags |= BP_PP_F_SRV_TIMED;
		if (rx && rx <= t_app)
			srv_rx = bp_pp_sat32(t_app - rx);
		else
			flags |= BP_PP_F_SRV_NO_RXTS;
		/*
		 * The previous reply's timestamp is not in yet (this thread was held up
		 * between that send and its error-queue event, and the client was quick):
		 * read it now rather than lose its send path. The read is processing this
		 * server really did, so it is counted there; it happens about once in a
		 * few thousand round trips.
		 */
		if (ds->last_pending && ds->sent[ds->last_key & (PP_SENT_RING - 1)].used)
			bp_conn_read_tx_timestamps(c);
		if (ds->prev_count) {
			flags |= BP_PP_F_SRV_PREV;
			srv_send = ds->prev[ds->prev_head].send_ns;
			prev_seq = ds->prev[ds->prev_head].seq;
			ds->prev_head = (ds->prev_head + 1) & (PP_PREV_QUEUE - 1);
			ds->prev_count--;
		}
		t_send = pp_realtime_ns();
		srv_proc = bp_pp_sat32(t_send - t_app);
	}
	bp_pp_reply_fill(reply, flags, srv_rx, srv_proc, srv_send, prev_seq);
	pp_test_delay(d->s->o.test_delay_us[PP_C_SERVER_SEND]);
	if (bp_conn_send(c, reply, h.length) != 0)
		return SIZE_MAX; /* the conn is failing; on_close tells */
	d->requests++;
	if (d->timestamps) {
		/* OPT_ID: UDP numbers datagrams from 0, TCP names the offset of the last byte. */
		uint32_t key = (uint32_t)(ds->tcp ? ds->tx_count + h.length - 1 : ds->tx_count);
		typeof(ds->sent[0]) *slot = &ds->sent[key & (PP_SENT_RING - 1)];

		ds->tx_count += ds->tcp ? h.length : 1;
		ds->last_key = key;
		ds->last_pending = true;
		slot->used = true;
		slot->key = key;
		slot->seq = h.seq;
		slot->t_send = t_send;
	}
	return h.length;
}

static size_t udp_recv(struct bp_conn *c, const uint8_t *data, size_t len)
{
	serve(bp_conn_data(c), data, len, true);
	return len;
}

static void on_drain(struct bp_conn *c)
{
	struct pp_dsock *ds = bp_conn_data(c);

	/* io_uring: the send completed, so its timestamp is on the error queue now. */
	if (ds->d->timestamps && ds->d->mode.backend == BP_BACKEND_URING)
		bp_conn_read_tx_timestamps(c);
}

static void udp_readopt(struct bp_loop *loop, void *arg);

static void udp_close(struct bp_conn *c, int err, const char *syscall)
{
	struct pp_dsock *ds = bp_conn_data(c);

	/*
	 * A send to some peer failed and the engine closed our dup of the socket; the
	 * socket itself is still bound (the server holds it): serve on a new dup.
	 */
	pp_server_log(ds->d->s, "udp: %s: %s; reopening", syscall, strerror(-err));
	ds->conn = NULL;
	bp_loop_post(ds->d->loop, udp_readopt, ds->d);
}

static const struct bp_conn_ops udp_ops = {
	.on_recv = udp_recv,
	.on_close = udp_close,
	.on_drain = on_drain,
	.on_tx_timestamp = on_tx_timestamp,
};

/* ---- TCP data connections ---- */

static size_t tcp_recv(struct bp_conn *c, const uint8_t *data, size_t len)
{
	struct pp_dsock *ds = bp_conn_data(c);
	size_t off = 0;

	while (off < len) {
		size_t used = serve(ds, data + off, len - off, false);

		if (used == SIZE_MAX) {
			bp_conn_close_after_send(c);
			return len;
		}
		if (used == 0)
			break;
		off += used;
	}
	return off;
}

static void tcp_free(struct pp_dsock *ds)
{
	struct pp_data *d = ds->d;

	if (ds->prv)
		ds->prv->next = ds->next;
	else
		d->tcp = ds->next;
	if (ds->next)
		ds->next->prv = ds->prv;
	free(ds);
}

static void tcp_close(struct bp_conn *c, int err, const char *syscall)
{
	struct pp_dsock *ds = bp_conn_data(c);

	if (err && err != -ECONNRESET && err != -EPIPE)
		pp_server_log(ds->d->s, "tcp connection: %s: %s", syscall, strerror(-err));
	/* A run's TCP connection is gone by its RUN_STOP: keep its NAPI id for the report. */
	if (bp_conn_napi_id(c))
		ds->d->last_napi_id = bp_conn_napi_id(c);
	tcp_free(ds);
}

static const struct bp_conn_ops tcp_ops = {
	.on_recv = tcp_recv,
	.on_close = tcp_close,
	.on_drain = on_drain,
	.on_tx_timestamp = on_tx_timestamp,
};

static void adopt_tcp(struct bp_loop *loop, void *arg)
{
	struct pp_data *d = bp_loop_data(loop);
	int fd = (int)(intptr_t)arg;
	struct pp_dsock *ds = calloc(1, sizeof(*ds));

	if (!ds) {
		close(fd);
		return;
	}
	ds->d = d;
	ds->tcp = true;
	ds->peerlen = sizeof(ds->peer);
	if (getpeername(fd, (struct sockaddr *)&ds->peer, &ds->peerlen) < 0)
		ds->peerlen = 0;
	if (d->s->o.priority >= 0 && bp_sock_set_priority(fd, d->s->o.priority))
		pp_server_log(d->s, "%s", bp_last_error());
	if (bp_conn_adopt(loop, fd, &tcp_ops, ds, &ds->conn)) {
		pp_server_log(d->s, "tcp: %s", bp_last_error());
		free(ds);
		return;
	}
	/* Established already, so OPT_ID counts from the first byte we send. */
	if (d->timestamps && bp_conn_enable_timestamps(ds->conn))
		pp_server_log(d->s, "tcp: %s", bp_last_error());
	ds->next = d->tcp;
	if (d->tcp)
		d->tcp->prv = ds;
	d->tcp = ds;
}

void pp_data_adopt_tcp(struct pp_data *d, int fd)
{
	if (bp_loop_post(d->loop, adopt_tcp, (void *)(intptr_t)fd)) {
		pp_server_log(d->s, "tcp: out of memory handing a connection over");
		close(fd);
	}
}

/* ---- the data loop ---- */

/* Drop transmit timestamps a previous data loop left on the shared socket. */
static void drain_errqueue(int fd)
{
	uint8_t buf[256], control[256];

	for (int i = 0; i < 4096; i++) {
		struct iovec iov = { buf, sizeof(buf) };
		struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control,
				    .msg_controllen = sizeof(control) };

		if (recvmsg(fd, &m, MSG_ERRQUEUE | MSG_DONTWAIT) < 0)
			break;
	}
}

static int udp_adopt(struct pp_data *d)
{
	struct pp_server *s = d->s;
	int off = 0, ret, fd = fcntl(s->udp_fd, F_DUPFD_CLOEXEC, 0);

	if (fd < 0)
		return bp_set_last_error(-errno, "udp: dup: %s", strerror(errno));
	/*
	 * The socket is shared by every data loop: start from timestamps off (which also
	 * restarts OPT_ID at 0 when they are turned on again) and an empty error queue.
	 */
	setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPING, &off, sizeof(off));
	drain_errqueue(fd);
	memset(&d->udp, 0, sizeof(d->udp));
	d->udp.d = d;
	ret = bp_conn_adopt(d->loop, fd, &udp_ops, &d->udp, &d->udp.conn);
	if (ret)
		return ret;
	if (d->timestamps)
		return bp_conn_enable_timestamps(d->udp.conn);
	return 0;
}

static void udp_readopt(struct bp_loop *loop, void *arg)
{
	struct pp_data *d = arg;

	if (!d->udp.conn && udp_adopt(d))
		pp_server_log(d->s, "udp: cannot serve again: %s", bp_last_error());
}

static int data_setup(struct bp_loop *loop, void *arg)
{
	struct pp_data *d = arg;

	d->loop = loop;
	bp_loop_set_data(loop, d);
	ev_name_thread("pp-server", 0);
	return udp_adopt(d);
}

int pp_data_start(struct pp_server *s, const struct bp_mode *mode, bool timestamps,
		  struct pp_data **dp, char *err, size_t errlen)
{
	struct pp_data *d = calloc(1, sizeof(*d));
	int ret;

	if (!d) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	d->s = s;
	d->mode = *mode;
	bp_mode_format(mode, d->mode_text, sizeof(d->mode_text));
	d->timestamps = timestamps;
	d->delay_ns = (uint64_t)s->o.server_delay_us * 1000;
	ret = bp_loop_thread_start(&d->lt, mode, s->o.cpu, data_setup, d);
	if (ret) {
		snprintf(err, errlen, "%s", bp_last_error());
		free(d);
		return ret;
	}
	*dp = d;
	return 0;
}

void pp_data_stop(struct pp_data *d)
{
	if (!d)
		return;
	bp_loop_thread_join(d->lt, NULL, NULL);
	/* The loop closed every conn without callbacks: free what they pointed at. */
	while (d->tcp) {
		struct pp_dsock *ds = d->tcp;

		d->tcp = ds->next;
		free(ds);
	}
	free(d);
}

/* ---- snapshots for the control thread ---- */

static void snap_on_thread(struct bp_loop *loop, void *arg)
{
	struct pp_snap *sn = arg;
	struct pp_data *d = bp_loop_data(loop);
	uint64_t one = 1;

	ev_snap_take(loop, &sn->snap);
	sn->ns = sn->snap.loop.ns;
	sn->requests = d->requests;
	sn->napi_id = d->udp.conn ? bp_conn_napi_id(d->udp.conn) : 0;
	for (struct pp_dsock *ds = d->tcp; ds && !sn->napi_id; ds = ds->next)
		sn->napi_id = bp_conn_napi_id(ds->conn);
	if (!sn->napi_id)
		sn->napi_id = d->last_napi_id;
	if (write(sn->done_fd, &one, sizeof(one)) < 0) {
		/* the waiter times out; nothing else to do here */
	}
}

int pp_data_snapshot(struct pp_data *d, struct pp_snap *out, int timeout_ms)
{
	/* On the heap: if the data thread is late, it must not write into a gone frame. */
	struct pp_snap *sn = calloc(1, sizeof(*sn));
	struct pollfd p;
	int ret;

	if (!sn)
		return -ENOMEM;
	sn->done_fd = eventfd(0, EFD_CLOEXEC);
	if (sn->done_fd < 0) {
		free(sn);
		return -errno;
	}
	if (bp_loop_post(d->loop, snap_on_thread, sn)) {
		close(sn->done_fd);
		free(sn);
		return -ENOMEM;
	}
	p = (struct pollfd){ .fd = sn->done_fd, .events = POLLIN };
	do
		ret = poll(&p, 1, timeout_ms);
	while (ret < 0 && errno == EINTR);
	if (ret <= 0)
		return -ETIMEDOUT; /* sn (and its fd) left to the late writer, on purpose */
	*out = *sn;
	for (int i = 0; i < BP_PP_ERR_COUNT; i++)
		out->dropped += atomic_load_explicit(&d->s->dropped[i], memory_order_relaxed);
	close(sn->done_fd);
	free(sn);
	return 0;
}

/* ---- the server ---- */

static int bind_sockets(struct pp_server *s, char *err, size_t errlen)
{
	int one = 1;

	for (int attempt = 0; attempt < 16; attempt++) {
		struct sockaddr_storage a = s->addr;
		socklen_t alen = s->addrlen;
		uint16_t port;

		s->listen_fd = socket(a.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		s->udp_fd = socket(a.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (s->listen_fd < 0 || s->udp_fd < 0) {
			snprintf(err, errlen, "socket: %s", strerror(errno));
			return -errno;
		}
		setsockopt(s->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(s->listen_fd, (struct sockaddr *)&a, alen) < 0 || listen(s->listen_fd, 64) < 0)
			goto in_use;
		/* TCP picked the port when asked for 0: UDP takes the same number. */
		if (getsockname(s->listen_fd, (struct sockaddr *)&a, &alen) < 0)
			goto in_use;
		port = ntohs(a.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&a)->sin6_port :
						       ((struct sockaddr_in *)&a)->sin_port);
		if (bind(s->udp_fd, (struct sockaddr *)&a, alen) < 0)
			goto in_use;
		s->port = port;
		return 0;
in_use:
		{
			int e = errno;

			close(s->listen_fd);
			close(s->udp_fd);
			s->listen_fd = s->udp_fd = -1;
			/* With port 0 another program may hold the UDP twin: pick again. */
			if (e == EADDRINUSE && s->o.port == 0)
				continue;
			return srv_bind_error(-e, "UDP or TCP", (struct sockaddr *)&s->addr, "pick another with --port", err,
					      errlen);
		}
	}
	snprintf(err, errlen, "no free port for both UDP and TCP after 16 tries");
	return -EADDRINUSE;
}

int pp_server_start(const struct pp_opts *o, struct pp_server **sp, char *err, size_t errlen)
{
	struct pp_server *s = calloc(1, sizeof(*s));
	int ret;

	if (!s) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	s->o = *o;
	s->own_mode = o->mode;
	snprintf(s->own_mode_text, sizeof(s->own_mode_text), "%s", o->mode_text);
	s->udp_fd = s->listen_fd = s->stop_fd = -1;
	pthread_mutex_init(&s->bad_lock, NULL);
	s->reply = malloc(BP_PP_MAX_LEN);
	if (!s->reply) {
		snprintf(err, errlen, "out of memory for the reply buffer");
		ret = -ENOMEM;
		goto fail;
	}
	ret = srv_addr("--bind", o->host, o->port, &s->addr, &s->addrlen, err, errlen);
	if (ret)
		goto fail;
	ret = bind_sockets(s, err, errlen);
	if (ret)
		goto fail;
	if (o->priority >= 0 && (ret = bp_sock_set_priority(s->udp_fd, o->priority)) != 0) {
		snprintf(err, errlen, "--priority %d: %s", o->priority, bp_last_error());
		goto fail;
	}
	s->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->stop_fd < 0) {
		snprintf(err, errlen, "eventfd: %s", strerror(errno));
		ret = -errno;
		goto fail;
	}
	ret = pp_data_start(s, &o->mode, false, &s->data, err, errlen);
	if (ret)
		goto fail;
	ret = pthread_create(&s->ctl_tid, NULL, pp_ctl_thread, s);
	if (ret) {
		snprintf(err, errlen, "pthread_create: %s", strerror(ret));
		ret = -ret;
		goto fail;
	}
	s->ctl_started = true;
	*sp = s;
	return 0;
fail:
	pp_server_stop(s);
	return ret;
}

uint16_t pp_server_port(const struct pp_server *s)
{
	return s->port;
}

void pp_server_dropped(const struct pp_server *s, uint64_t *counts, int n)
{
	for (int i = 0; i < n && i < BP_PP_ERR_COUNT; i++)
		counts[i] = atomic_load(&((struct pp_server *)s)->dropped[i]);
}

void pp_server_stop(struct pp_server *s)
{
	uint64_t one = 1;

	if (!s)
		return;
	if (s->ctl_started) {
		if (write(s->stop_fd, &one, sizeof(one)) < 0) {
			/* cannot fail on a fresh eventfd; the join would hang otherwise */
		}
		pthread_join(s->ctl_tid, NULL);
	}
	pp_data_stop(s->data);
	if (s->udp_fd >= 0)
		close(s->udp_fd);
	if (s->listen_fd >= 0)
		close(s->listen_fd);
	if (s->stop_fd >= 0)
		close(s->stop_fd);
	pthread_mutex_destroy(&s->bad_lock);
	free(s->reply);
	free(s);
}
