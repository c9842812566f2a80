/* SPDX-License-Identifier: MIT */
/*
 * busypoll rr server: serves many clients at once and keeps running between them.
 * Each flow answers a request with exactly R bytes straight from the receive
 * callback: no re-arming of interest per transaction (neper pays two epoll_ctl
 * and an extra epoll_wait per transaction for that).
 *
 * Per-run transaction counts are summed on each loop's own thread when the
 * control connection asks (START/STOP), so the hot path touches no shared memory.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/bytes.h"
#include "tools/rr/rr.h"

#define RR_RUN_SLOTS 256
#define RR_UDP_RUN_CACHE 8

/* A run: the flows and control connection of one client invocation. */
struct rr_run {
	uint64_t run_id;          /* 0 = free slot; guarded by the server's runs_lock */
	int refs;                 /* conns naming it (data and control) */
	uint32_t udp_response;    /* UDP runs: response size, from the control hello */
	atomic_uint_fast64_t closed_tx; /* transactions of flows that already closed */
};

struct rr_server;

struct rr_sthread {
	struct rr_server *s;
	int idx;
	struct bp_loop_thread *lt;
	struct bp_loop *loop;
	struct rr_sflow *flows;   /* every flow on this thread (freed at stop if still open) */
	struct {
		uint64_t run_id;
		uint64_t tx;
		uint32_t response;
	} udp_runs[RR_UDP_RUN_CACHE];
	unsigned udp_next;
	uint64_t udp_malformed;
};

struct rr_server {
	struct rr_opts o;
	int n;
	struct rr_sthread th[RR_MAX_THREADS];
	struct bp_loop *loops[RR_MAX_THREADS];
	struct bp_placer *placer;
	struct bp_listener *listener;
	uint16_t port;
	struct sockaddr_storage addr;
	socklen_t addrlen;
	pthread_mutex_t runs_lock;
	struct rr_run runs[RR_RUN_SLOTS];
	uint8_t *response;        /* BP_RR_MAX_SIZE zero bytes every response is sent from */
	char setup_err[256];
};

enum sflow_state { SF_HELLO, SF_DATA, SF_CONTROL, SF_REFUSED };

struct rr_ctl;

struct rr_sflow {
	struct rr_sthread *t;
	struct bp_conn *conn;
	enum sflow_state state;
	struct rr_run *run;
	uint64_t run_id;
	uint32_t req, resp, got;
	uint64_t tx;
	struct rr_ctl *ctl;
	struct rr_sflow *next, *prev;
	struct bp_timer hello_deadline;
};

/* A control connection; outlives its conn while a snapshot is being gathered. */
struct rr_ctl {
	struct rr_sflow *flow;    /* NULL once the conn closed */
	int pending_snaps;
	struct rr_side base;      /* at START */
	uint64_t base_ns;
	bool started;
};

static void server_log(const struct rr_server *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void server_log(const struct rr_server *s, const char *fmt, ...)
{
	va_list ap;

	if (s->o.quiet)
		return;
	va_start(ap, fmt);
	fprintf(stderr, "busypoll rr server: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* ---- runs ---- */

static struct rr_run *run_get(struct rr_server *s, uint64_t run_id)
{
	struct rr_run *free_slot = NULL, *r = NULL;

	pthread_mutex_lock(&s->runs_lock);
	for (int i = 0; i < RR_RUN_SLOTS; i++) {
		if (s->runs[i].run_id == run_id) {
			r = &s->runs[i];
			break;
		}
		if (!s->runs[i].run_id && !free_slot)
			free_slot = &s->runs[i];
	}
	if (!r && free_slot) {
		r = free_slot;
		r->run_id = run_id;
		r->refs = 0;
		atomic_store(&r->closed_tx, 0);
	}
	if (r)
		r->refs++;
	pthread_mutex_unlock(&s->runs_lock);
	return r;
}

static void run_put(struct rr_server *s, struct rr_run *r)
{
	pthread_mutex_lock(&s->runs_lock);
	if (--r->refs == 0)
		r->run_id = 0;
	pthread_mutex_unlock(&s->runs_lock);
}

/* ---- snapshots for the control connection ---- */

struct rr_snap {
	struct rr_server *s;
	struct rr_ctl *ctl;
	struct bp_loop *ctl_loop;
	uint32_t cmd;
	uint64_t run_id;
	atomic_int pending;
	struct rr_side per[RR_MAX_THREADS];
};

static void side_add(struct rr_side *acc, const struct rr_side *x)
{
	acc->transactions += x->transactions;
	acc->utime_us += x->utime_us;
	acc->stime_us += x->stime_us;
	acc->nvcsw += x->nvcsw;
	acc->nivcsw += x->nivcsw;
	acc->syscalls += x->syscalls;
	acc->empty_polls += x->empty_polls;
	acc->wakeups += x->wakeups;
	acc->waits += x->waits;
	acc->completions += x->completions;
	for (uint32_t i = 0; i < x->n_napi_ids; i++) {
		bool seen = false;

		for (uint32_t j = 0; j < acc->n_napi_ids; j++)
			seen |= acc->napi_ids[j] == x->napi_ids[i];
		if (!seen && acc->n_napi_ids < RR_MAX_NAPI_IDS)
			acc->napi_ids[acc->n_napi_ids++] = x->napi_ids[i];
	}
}

static uint64_t sub0(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

static void ctl_free_if_done(struct rr_ctl *ctl)
{
	if (!ctl->flow && !ctl->pending_snaps)
		free(ctl);
}

/* On the control connection's loop, once every thread has reported. */
static void snap_finish(struct bp_loop *loop, void *arg)
{
	struct rr_snap *snap = arg;
	struct rr_ctl *ctl = snap->ctl;
	struct rr_server *s = snap->s;
	struct rr_side agg = { 0 };
	struct bp_kstats k = { 0 };
	uint64_t now = bp_now_ns();

	for (int i = 0; i < s->n; i++)
		side_add(&agg, &snap->per[i]);
	bp_kstats_read(&k);
	agg.busy_poll_rx = k.busy_poll_rx;
	agg.net_rx = k.net_rx;
	if (ctl->flow && ctl->flow->run)
		agg.transactions += atomic_load(&ctl->flow->run->closed_tx);

	if (ctl->flow && snap->cmd == BP_RR_CMD_START) {
		ctl->base = agg;
		ctl->base_ns = now;
		ctl->started = true;
	} else if (ctl->flow && snap->cmd == BP_RR_CMD_STOP) {
		struct bp_rr_stats st = { 0 };
		uint8_t buf[BP_RR_STATS_LEN];
		const struct rr_side *b = &ctl->base;

		st.transactions = agg.transactions;
		st.interval_ns = ctl->started ? now - ctl->base_ns : 0;
		st.utime_us = sub0(agg.utime_us, b->utime_us);
		st.stime_us = sub0(agg.stime_us, b->stime_us);
		st.nvcsw = sub0(agg.nvcsw, b->nvcsw);
		st.nivcsw = sub0(agg.nivcsw, b->nivcsw);
		st.busy_poll_rx = sub0(agg.busy_poll_rx, b->busy_poll_rx);
		st.net_rx = sub0(agg.net_rx, b->net_rx);
		st.syscalls = sub0(agg.syscalls, b->syscalls);
		st.empty_polls = sub0(agg.empty_polls, b->empty_polls);
		st.wakeups = sub0(agg.wakeups, b->wakeups);
		st.waits = sub0(agg.waits, b->waits);
		st.completions = sub0(agg.completions, b->completions);
		st.threads = (uint32_t)s->n;
		st.n_napi_ids = agg.n_napi_ids;
		memcpy(st.napi_ids, agg.napi_ids, sizeof(st.napi_ids));
		snprintf(st.mode, sizeof(st.mode), "%s", s->o.mode_text);
		bp_rr_stats_encode(&st, buf);
		bp_conn_send(ctl->flow->conn, buf, sizeof(buf));
	}
	/*
	 * Only now: a send that fails at once closes the control flow, whose release
	 * must not free ctl while this function still uses it.
	 */
	ctl->pending_snaps--;
	ctl_free_if_done(ctl);
	free(snap);
}

/* On each server thread: its own CPU time, counters and the run's transactions. */
static void snap_on_thread(struct bp_loop *loop, void *arg)
{
	struct rr_snap *snap = arg;
	struct rr_sthread *t = bp_loop_data(loop);
	struct rr_side *out = &snap->per[t->idx];
	struct bp_loop_snapshot now;

	bp_loop_snapshot_take(loop, &now);
	out->utime_us = now.utime_us;
	out->stime_us = now.stime_us;
	out->nvcsw = now.nvcsw;
	out->nivcsw = now.nivcsw;
	out->syscalls = now.ctr.syscalls;
	out->empty_polls = now.ctr.empty_polls;
	out->wakeups = now.ctr.wakeups;
	out->waits = now.ctr.waits;
	out->completions = now.ctr.completions;
	out->n_napi_ids = (uint32_t)bp_loop_napi_ids(loop, out->napi_ids, RR_MAX_NAPI_IDS);
	for (struct rr_sflow *f = t->flows; f; f = f->next)
		if (f->run_id == snap->run_id)
			out->transactions += f->tx;
	for (int i = 0; i < RR_UDP_RUN_CACHE; i++)
		if (t->udp_runs[i].run_id == snap->run_id)
			out->transactions += t->udp_runs[i].tx;
	if (atomic_fetch_sub(&snap->pending, 1) == 1)
		bp_loop_post(snap->ctl_loop, snap_finish, snap);
}

static void ctl_command(struct rr_sflow *f, uint32_t cmd)
{
	struct rr_server *s = f->t->s;
	struct rr_snap *snap = calloc(1, sizeof(*snap));

	if (!snap) {
		server_log(s, "control: out of memory");
		return;
	}
	snap->s = s;
	snap->ctl = f->ctl;
	snap->ctl_loop = f->t->loop;
	snap->cmd = cmd;
	snap->run_id = f->run_id;
	atomic_store(&snap->pending, s->n);
	f->ctl->pending_snaps++;
	for (int i = 0; i < s->n; i++)
		if (bp_loop_post(s->loops[i], snap_on_thread, snap)) {
			/* Cannot happen short of ENOMEM; count the thread as done. */
			if (atomic_fetch_sub(&snap->pending, 1) == 1)
				bp_loop_post(snap->ctl_loop, snap_finish, snap);
		}
}

/* ---- flows ---- */

static void flow_unlink(struct rr_sflow *f)
{
	if (f->prev)
		f->prev->next = f->next;
	else if (f->t->flows == f)
		f->t->flows = f->next;
	if (f->next)
		f->next->prev = f->prev;
	f->next = f->prev = NULL;
}

static void flow_release(struct rr_sflow *f)
{
	struct rr_server *s = f->t->s;

	bp_timer_stop(f->t->loop, &f->hello_deadline);
	flow_unlink(f);
	if (f->run) {
		atomic_fetch_add(&f->run->closed_tx, f->tx);
		run_put(s, f->run);
	}
	if (f->ctl) {
		f->ctl->flow = NULL;
		ctl_free_if_done(f->ctl);
	}
	free(f);
}

static const char *flow_peer(const struct rr_sflow *f, char *buf, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	snprintf(buf, len, "?");
	if (getpeername(bp_conn_fd(f->conn), (struct sockaddr *)&ss, &sl) == 0)
		bp_format_addr((struct sockaddr *)&ss, buf, len);
	return buf;
}

static void refuse(struct rr_sflow *f, int status, const char *why)
{
	struct bp_rr_ack ack = { .status = (uint16_t)status };
	uint8_t buf[BP_RR_ACK_LEN];
	char peer[64];

	server_log(f->t->s, "refused %s: %s", flow_peer(f, peer, sizeof(peer)), why);
	bp_rr_ack_encode(&ack, buf);
	bp_conn_send(f->conn, buf, sizeof(buf));
	f->state = SF_REFUSED;
	bp_conn_close_after_send(f->conn);
}

/* Returns the bytes of data consumed by the hello (0 = need more). */
static size_t flow_hello(struct rr_sflow *f, const uint8_t *data, size_t len)
{
	struct bp_rr_hello h;
	struct bp_rr_ack ack = { 0 };
	uint8_t buf[BP_RR_ACK_LEN];
	int status;

	if (len < BP_RR_HELLO_LEN)
		return 0;
	status = bp_rr_hello_decode(data, &h);
	if (status != BP_RR_OK) {
		refuse(f, status, bp_rr_refuse_reason(status));
		return len;
	}
	f->run = run_get(f->t->s, h.run_id);
	if (!f->run) {
		refuse(f, BP_RR_REFUSE_BUSY, "too many runs at once");
		return len;
	}
	f->run_id = h.run_id;
	if (h.kind == BP_RR_KIND_CONTROL) {
		f->ctl = calloc(1, sizeof(*f->ctl));
		if (!f->ctl) {
			refuse(f, BP_RR_REFUSE_BUSY, "out of memory");
			return len;
		}
		f->ctl->flow = f;
		f->state = SF_CONTROL;
		if (h.flags & BP_RR_FLAG_UDP)
			f->run->udp_response = h.response_size;
	} else {
		f->req = h.request_size;
		f->resp = h.response_size;
		f->state = SF_DATA;
	}
	bp_timer_stop(f->t->loop, &f->hello_deadline);
	ack.napi_id = bp_conn_napi_id(f->conn);
	bp_rr_ack_encode(&ack, buf);
	bp_conn_send(f->conn, buf, sizeof(buf));
	return BP_RR_HELLO_LEN;
}

static size_t flow_recv(struct bp_conn *c, const uint8_t *data, size_t len)
{
	struct rr_sflow *f = bp_conn_data(c);
	size_t off = 0;

	if (f->state == SF_HELLO) {
		off = flow_hello(f, data, len);
		if (!off)
			return 0;
	}
	switch (f->state) {
	case SF_DATA: {
		const uint8_t *response = f->t->s->response;

		/* Count request bytes; answer each complete request with R bytes now. */
		while (off < len) {
			size_t take = len - off;

			if (take > f->req - f->got)
				take = f->req - f->got;
			f->got += (uint32_t)take;
			off += take;
			if (f->got == f->req) {
				f->got = 0;
				f->tx++;
				if (bp_conn_send(c, response, f->resp))
					return len;
			}
		}
		return len;
	}
	case SF_CONTROL:
		while (len - off >= BP_RR_CMD_LEN) {
			uint32_t cmd;
			uint64_t run_id;

			if (bp_rr_cmd_decode(data + off, &cmd, &run_id) || run_id != f->run_id) {
				server_log(f->t->s, "control: bad command; closing");
				bp_conn_close_after_send(c);
				return len;
			}
			ctl_command(f, cmd);
			off += BP_RR_CMD_LEN;
		}
		return off;
	default:
		return len;
	}
}

static void flow_close(struct bp_conn *c, int err, const char *syscall)
{
	struct rr_sflow *f = bp_conn_data(c);

	if (err && err != -ECONNRESET && err != -EPIPE)
		server_log(f->t->s, "flow closed: %s: %s", syscall, strerror(-err));
	flow_release(f);
}

static const struct bp_conn_ops sflow_ops = { .on_recv = flow_recv, .on_close = flow_close };

/* No hello in time: a silent, trickling or half-open peer; free its descriptor. */
static void hello_expired(struct bp_loop *loop, void *arg)
{
	struct rr_sflow *f = arg;
	char peer[64];

	if (f->state != SF_HELLO)
		return;
	server_log(f->t->s, "closing %s: no hello within %u ms", flow_peer(f, peer, sizeof(peer)),
		   f->t->s->o.hello_timeout_ms);
	bp_conn_close(f->conn);
	flow_release(f);
}

static void adopt_flow(struct bp_loop *loop, int fd, void *arg)
{
	struct rr_sthread *t = bp_loop_data(loop);
	struct rr_sflow *f = calloc(1, sizeof(*f));

	(void)arg;
	if (!f) {
		close(fd);
		return;
	}
	f->t = t;
	if (t->s->o.priority >= 0 && bp_sock_set_priority(fd, t->s->o.priority))
		server_log(t->s, "%s", bp_last_error());
	if (bp_conn_adopt(loop, fd, &sflow_ops, f, &f->conn)) {
		server_log(t->s, "%s", bp_last_error());
		free(f);
		return;
	}
	f->next = t->flows;
	if (f->next)
		f->next->prev = f;
	t->flows = f;
	if (t->s->o.hello_timeout_ms)
		bp_timer_start(loop, &f->hello_deadline, (uint64_t)t->s->o.hello_timeout_ms * 1000, hello_expired, f);
}

static void on_accept(struct bp_listener *l, int fd, void *arg)
{
	struct rr_server *s = arg;

	if (bp_placer_dispatch(s->placer, fd, adopt_flow, NULL) < 0) {
		server_log(s, "%s", bp_last_error());
		close(fd);
	}
}

/* Out of descriptors (or memory): said once, and again when accepting works again. */
static void on_accept_error(struct bp_listener *l, int err, void *arg)
{
	struct rr_server *s = arg;
	struct rlimit rl = { 0 };

	(void)l;
	if (!err) {
		server_log(s, "accepting new connections again");
		return;
	}
	if (err == -EMFILE && getrlimit(RLIMIT_NOFILE, &rl) == 0)
		server_log(s, "cannot accept new connections: accept4: %s (RLIMIT_NOFILE %llu; raise it with "
			   "ulimit -n); the connections already open are still served, and new ones are "
			   "accepted as descriptors free up", strerror(-err), (unsigned long long)rl.rlim_cur);
	else
		server_log(s, "cannot accept new connections: accept4: %s; the connections already open are "
			   "still served, and new ones are accepted once it passes", strerror(-err));
}

/* ---- UDP: one SO_REUSEPORT socket per thread ---- */

static size_t udp_recv(struct bp_conn *c, const uint8_t *data, size_t len)
{
	struct rr_sthread *t = bp_loop_data(bp_conn_loop(c));
	uint64_t run_id;
	unsigned i;

	if (len < 8) {
		t->udp_malformed++;
		return len;
	}
	run_id = bp_get_le64(data);
	for (i = 0; i < RR_UDP_RUN_CACHE; i++)
		if (t->udp_runs[i].run_id == run_id)
			break;
	if (i == RR_UDP_RUN_CACHE) {
		/* Only runs announced on a control connection are served. */
		int slot = -1;
		uint32_t response = 0;
		struct rr_server *s = t->s;

		pthread_mutex_lock(&s->runs_lock);
		for (int k = 0; k < RR_RUN_SLOTS; k++)
			if (s->runs[k].run_id == run_id && s->runs[k].udp_response) {
				slot = k;
				response = s->runs[k].udp_response;
			}
		pthread_mutex_unlock(&s->runs_lock);
		if (slot < 0) {
			t->udp_malformed++;
			return len;
		}
		i = t->udp_next++ % RR_UDP_RUN_CACHE;
		t->udp_runs[i].run_id = run_id;
		t->udp_runs[i].tx = 0;
		t->udp_runs[i].response = response;
	}
	t->udp_runs[i].tx++;
	bp_conn_send(c, t->s->response, t->udp_runs[i].response);
	return len;
}

static void udp_close(struct bp_conn *c, int err, const char *syscall)
{
	struct rr_sthread *t = bp_loop_data(bp_conn_loop(c));

	server_log(t->s, "udp socket closed: %s: %s", syscall, strerror(-err));
}

static const struct bp_conn_ops udp_ops = { .on_recv = udp_recv, .on_close = udp_close };

static int udp_socket_setup(struct rr_sthread *t)
{
	struct rr_server *s = t->s;
	int one = 1, fd;

	fd = socket(s->addr.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return bp_set_last_error(-errno, "udp socket: %s", strerror(errno));
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) < 0 ||
	    bind(fd, (struct sockaddr *)&s->addr, s->addrlen) < 0) {
		int err = -errno;

		close(fd);
		if (err == -EADDRINUSE)
			return bp_set_last_error(err, "udp port %u is in use; pick another with --port", s->port);
		return bp_set_last_error(err, "udp bind: %s", strerror(-err));
	}
	if (s->o.priority >= 0)
		bp_sock_set_priority(fd, s->o.priority);
	return bp_conn_adopt(t->loop, fd, &udp_ops, t, NULL);
}

/* ---- threads ---- */

static int thread_setup(struct bp_loop *loop, void *arg)
{
	struct rr_sthread *t = arg;
	struct rr_server *s = t->s;
	int ret;

	t->loop = loop;
	s->loops[t->idx] = loop;
	bp_loop_set_data(loop, t);
	if (t->idx == 0) {
		ret = bp_listener_create(loop, (struct sockaddr *)&s->addr, s->addrlen, on_accept, s,
					 &s->listener);
		if (ret == -EADDRINUSE)
			return bp_set_last_error(ret, "port %u is in use; pick another with --port", s->port);
		if (ret)
			return ret;
		bp_listener_on_error(s->listener, on_accept_error);
		s->port = bp_listener_port(s->listener);
		/* The UDP sockets share the TCP port (picked now if it was 0). */
		if (s->addr.ss_family == AF_INET6)
			((struct sockaddr_in6 *)&s->addr)->sin6_port = htons(s->port);
		else
			((struct sockaddr_in *)&s->addr)->sin_port = htons(s->port);
	}
	return udp_socket_setup(t);
}

int rr_server_start(const struct rr_opts *o, struct rr_server **sp, char *err, size_t errlen)
{
	struct rr_server *s = calloc(1, sizeof(*s));
	int ret;

	if (!s) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	s->o = *o;
	s->n = o->threads;
	pthread_mutex_init(&s->runs_lock, NULL);
	s->response = calloc(1, BP_RR_MAX_SIZE);
	if (!s->response) {
		free(s);
		snprintf(err, errlen, "out of memory for the response buffer");
		return -ENOMEM;
	}
	ret = bp_parse_addr(o->host[0] ? o->host : "0.0.0.0", o->port, &s->addr, &s->addrlen);
	if (ret) {
		snprintf(err, errlen, "--bind %s: %s", o->host, bp_last_error());
		goto fail;
	}
	s->port = o->port;
	for (int i = 0; i < s->n; i++) {
		s->th[i].s = s;
		s->th[i].idx = i;
		ret = bp_loop_thread_start(&s->th[i].lt, &o->mode, o->ncpus ? o->cpus[i % o->ncpus] : -1,
					   thread_setup, &s->th[i]);
		if (ret) {
			snprintf(err, errlen, "%s", bp_last_error());
			for (int j = 0; j < i; j++)
				bp_loop_thread_join(s->th[j].lt, NULL, NULL);
			goto fail;
		}
	}
	ret = bp_placer_create(&s->placer, s->loops, (size_t)s->n);
	if (ret) {
		snprintf(err, errlen, "%s", bp_last_error());
		for (int j = 0; j < s->n; j++)
			bp_loop_thread_join(s->th[j].lt, NULL, NULL);
		goto fail;
	}
	*sp = s;
	return 0;
fail:
	free(s->response);
	pthread_mutex_destroy(&s->runs_lock);
	free(s);
	return ret;
}

uint16_t rr_server_port(const struct rr_server *s)
{
	return s->port;
}

unsigned rr_server_runs_live(struct rr_server *s)
{
	unsigned n = 0;

	pthread_mutex_lock(&s->runs_lock);
	for (int i = 0; i < RR_RUN_SLOTS; i++)
		n += s->runs[i].run_id != 0;
	pthread_mutex_unlock(&s->runs_lock);
	return n;
}

/* On each thread at stop: the loop closes its conns without on_close, so the flows still
 * open (a client that had not hung up yet) are released here. */
static void thread_teardown(struct bp_loop *loop, void *arg)
{
	struct rr_sthread *t = bp_loop_data(loop);

	(void)arg;
	while (t->flows)
		flow_release(t->flows);
}

void rr_server_stop(struct rr_server *s)
{
	for (int i = 0; i < s->n; i++)
		bp_loop_thread_join(s->th[i].lt, thread_teardown, NULL);
	bp_placer_destroy(s->placer);
	free(s->response);
	pthread_mutex_destroy(&s->runs_lock);
	free(s);
}
