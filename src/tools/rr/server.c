/* SPDX-License-Identifier: MIT */
/*
 * busypoll rr server: serves many clients at once and keeps running between them.
 * Each flow answers a request with exactly R bytes straight from the receive
 * callback: no re-arming of interest per transaction (neper pays two epoll_ctl
 * and an extra epoll_wait per transaction for that).
 *
 * Per-run transaction counts and each thread's evidence are taken on each loop's
 * own thread when the control session asks (START/STOP), so the hot path touches
 * no shared memory.
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
#include "tools/harness/control.h"
#include "tools/harness/server.h"
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
	struct srv_threads st;    /* the loop threads, the placer, the listener (tools/harness/server.h) */
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
	uint32_t held;            /* the test hook: answers held back (--test-hold) */
	struct bp_timer hold_timer;
};

struct rr_snap;

/* A control session; outlives its conn while a snapshot is being gathered. */
struct rr_ctl {
	struct rr_sflow *flow;    /* NULL once the conn closed */
	int pending_snaps;
	struct rr_snap *base;     /* every thread at START (NULL before) */
	struct bp_kstats k0;      /* this namespace's kernel counters at START */
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

/* ---- snapshots for the control session ---- */

/* One thread's part of a snapshot. */
struct rr_thread_snap {
	struct ev_snap snap;
	uint64_t tx;              /* the run's transactions served by the thread's open flows */
	uint32_t napi[EV_MAX_NAPI];
	uint32_t nnapi;
};

struct rr_snap {
	struct rr_server *s;
	struct rr_ctl *ctl;
	struct bp_loop *ctl_loop;
	uint16_t cmd;             /* CTL_START or CTL_STOP */
	uint32_t seq;             /* of the request: the reply carries it */
	uint64_t run_id;
	uint64_t ns;              /* when the last thread reported */
	atomic_int pending;
	struct rr_thread_snap per[RR_MAX_THREADS];
};

static void ctl_free_if_done(struct rr_ctl *ctl)
{
	if (!ctl->flow && !ctl->pending_snaps) {
		free(ctl->base);
		free(ctl);
	}
}

/* ctl_reply - a control message to the session's client, numbered as its request. */
static void ctl_reply(struct rr_sflow *f, struct ctl_msg *m, uint32_t seq)
{
	uint8_t *buf = malloc(CTL_HDR_LEN + CTL_MAX_BODY);
	int n;

	m->seq = seq;
	n = buf ? ctl_encode(m, buf, CTL_HDR_LEN + CTL_MAX_BODY) : -ENOMEM;
	if (n > 0)
		bp_conn_send(f->conn, buf, (size_t)n);
	else
		server_log(f->t->s, "control: cannot answer: %s", strerror(-n));
	free(buf);
}

/* stop_evidence - the server's side from START's snapshot to this one. */
static void stop_evidence(const struct rr_snap *a, const struct rr_snap *b, const struct rr_ctl *ctl,
			  struct evidence *ev)
{
	const struct rr_server *s = b->s;
	struct bp_kstats k1 = { 0 };

	memset(ev, 0, sizeof(*ev));
	ev->valid = true;
	snprintf(ev->mode, sizeof(ev->mode), "%s", s->o.mode_text);
	ev->threads = (uint32_t)s->n;
	ev->interval_ns = b->ns - a->ns;
	for (int i = 0; i < s->n; i++) {
		ev_add_interval(ev, &a->per[i].snap, &b->per[i].snap);
		ev->transactions += b->per[i].tx;
		for (uint32_t k = 0; k < b->per[i].nnapi; k++)
			ev_add_napi(ev, b->per[i].napi[k]);
	}
	if (ctl->flow && ctl->flow->run)
		ev->transactions += atomic_load(&ctl->flow->run->closed_tx);
	bp_kstats_read(&k1);
	ev_add_kstats(ev, &ctl->k0, &k1);
}

/* On the control session's loop, once every thread has reported. */
static void snap_finish(struct bp_loop *loop, void *arg)
{
	struct rr_snap *snap = arg;
	struct rr_ctl *ctl = snap->ctl;
	struct ctl_msg *m = malloc(sizeof(*m));

	snap->ns = bp_now_ns();
	if (ctl->flow && m && snap->cmd == CTL_START) {
		free(ctl->base);
		ctl->base = snap;
		snap = NULL; /* kept: STOP subtracts it */
		bp_kstats_read(&ctl->k0);
		ctl_msg_init(m, CTL_STARTED);
		ctl_reply(ctl->flow, m, ctl->base->seq);
	} else if (ctl->flow && m && snap->cmd == CTL_STOP) {
		struct evidence ev;

		if (!ctl->base) {
			ctl_error_msg(m, EINVAL, "STOP without START");
		} else {
			stop_evidence(ctl->base, snap, ctl, &ev);
			ctl_msg_init(m, CTL_EVIDENCE);
			ev_encode(m, &ev);
		}
		ctl_reply(ctl->flow, m, snap->seq);
	} else if (ctl->flow) {
		server_log(snap->s, "control: out of memory");
	}
	free(m);
	/*
	 * Only now: a send that fails at once closes the control flow, whose release
	 * must not free ctl while this function still uses it.
	 */
	ctl->pending_snaps--;
	ctl_free_if_done(ctl);
	free(snap);
}

/* On each server thread: its own snapshot, NAPI ids and the run's transactions. */
static void snap_on_thread(struct bp_loop *loop, void *arg)
{
	struct rr_snap *snap = arg;
	struct rr_sthread *t = bp_loop_data(loop);
	struct rr_thread_snap *out = &snap->per[t->idx];

	ev_snap_take(loop, &out->snap);
	out->nnapi = (uint32_t)bp_loop_napi_ids(loop, out->napi, EV_MAX_NAPI);
	for (struct rr_sflow *f = t->flows; f; f = f->next)
		if (f->run_id == snap->run_id)
			out->tx += f->tx;
	for (int i = 0; i < RR_UDP_RUN_CACHE; i++)
		if (t->udp_runs[i].run_id == snap->run_id)
			out->tx += t->udp_runs[i].tx;
	if (atomic_fetch_sub(&snap->pending, 1) == 1)
		bp_loop_post(snap->ctl_loop, snap_finish, snap);
}

/* ctl_command - START or STOP: a snapshot of every thread, answered when all have reported. */
static void ctl_command(struct rr_sflow *f, uint16_t cmd, uint32_t seq)
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
	snap->seq = seq;
	snap->run_id = f->run_id;
	atomic_store(&snap->pending, s->n);
	f->ctl->pending_snaps++;
	for (int i = 0; i < s->n; i++)
		if (bp_loop_post(s->st.loops[i], snap_on_thread, snap)) {
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
	bp_timer_stop(f->t->loop, &f->hold_timer);
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

/* ctl_refuse - a control session refused: the reason to its client, then closed. */
static void ctl_refuse(struct rr_sflow *f, int err, const char *why)
{
	struct ctl_msg *m = malloc(sizeof(*m));
	char peer[64];

	server_log(f->t->s, "refused control session from %s: %s", flow_peer(f, peer, sizeof(peer)), why);
	if (m) {
		ctl_error_msg(m, err, "%s", why);
		ctl_reply(f, m, 0);
		free(m);
	}
	f->state = SF_REFUSED;
	bp_conn_close_after_send(f->conn);
}

/*
 * ctl_hello - a control session's HELLO: the run it announces (sizes, UDP), the
 * same checks a data hello gets. Returns false when it was refused.
 */
static bool ctl_hello(struct rr_sflow *f, const struct ctl_msg *m)
{
	struct rr_server *s = f->t->s;
	uint64_t run_id = 0, req = 0, resp = 0, flags = 0;
	uint32_t max;
	char tool[16] = "";
	struct ctl_msg *ok;

	if (m->type != CTL_HELLO || ctl_get_text(m, CTL_T_TOOL, tool, sizeof(tool)) || strcmp(tool, "rr") ||
	    ctl_get_u64(m, CTL_T_RUN_ID, &run_id) || ctl_get_u64(m, CTL_T_RR_REQUEST_SIZE, &req) ||
	    ctl_get_u64(m, CTL_T_RR_RESPONSE_SIZE, &resp)) {
		ctl_refuse(f, EPROTO, "not a busypoll rr client (its HELLO lacks the run)");
		return false;
	}
	ctl_get_u64(m, CTL_T_FLAGS, &flags);
	max = (flags & CTL_F_UDP) ? BP_RR_UDP_MAX_SIZE : BP_RR_MAX_SIZE;
	if (req == 0 || resp == 0 || req > max || resp > max || ((flags & CTL_F_UDP) && req < 8)) {
		ctl_refuse(f, EINVAL, bp_rr_refuse_reason(BP_RR_REFUSE_SIZE));
		return false;
	}
	f->run = run_get(s, run_id);
	if (!f->run) {
		ctl_refuse(f, EBUSY, "server at its limit: too many runs at once");
		return false;
	}
	f->run_id = run_id;
	f->ctl = calloc(1, sizeof(*f->ctl));
	ok = malloc(sizeof(*ok));
	if (!f->ctl || !ok) {
		free(ok);
		ctl_refuse(f, ENOMEM, "out of memory");
		return false;
	}
	f->ctl->flow = f;
	f->state = SF_CONTROL;
	if (flags & CTL_F_UDP)
		f->run->udp_response = (uint32_t)resp;
	bp_timer_stop(f->t->loop, &f->hello_deadline);
	ctl_msg_init(ok, CTL_HELLO_OK);
	ctl_put_text(ok, CTL_T_TOOL, "rr");
	ctl_put_text(ok, CTL_T_MODE, s->o.mode_text);
	ctl_put_u64(ok, CTL_T_THREADS, (uint64_t)s->n);
	/* every loop thread's CPU, in thread order (-1: not pinned) */
	for (int i = 0; i < s->n; i++)
		ctl_put_i64(ok, CTL_T_CPU, s->o.ncpus ? s->o.cpus[i % s->o.ncpus] : -1);
	ctl_reply(f, ok, m->seq);
	free(ok);
	return true;
}

/* Returns the bytes of data consumed by the hello (0 = need more). */
static size_t flow_hello(struct rr_sflow *f, const uint8_t *data, size_t len)
{
	struct bp_rr_hello h;
	struct bp_rr_ack ack = { 0 };
	uint8_t buf[BP_RR_ACK_LEN];
	int status;

	/* A control session starts with a control message, a data flow with its hello. */
	if (len >= 4 && bp_get_le32(data) == CTL_MAGIC)
		return 0; /* flow_control reads it */
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
	f->req = h.request_size;
	f->resp = h.response_size;
	f->state = SF_DATA;
	bp_timer_stop(f->t->loop, &f->hello_deadline);
	ack.napi_id = bp_conn_napi_id(f->conn);
	bp_rr_ack_encode(&ack, buf);
	bp_conn_send(f->conn, buf, sizeof(buf));
	return BP_RR_HELLO_LEN;
}

/*
 * flow_control - the control session's messages in data: its HELLO first, then
 * START and STOP (answered once every thread has reported). Returns the bytes
 * consumed; a message this server does not take ends the session.
 */
static size_t flow_control(struct rr_sflow *f, const uint8_t *data, size_t len)
{
	struct ctl_msg *m = malloc(sizeof(*m));
	size_t off = 0;

	if (!m) {
		ctl_refuse(f, ENOMEM, "out of memory");
		return len;
	}
	while (off < len && f->state != SF_REFUSED) {
		const char *why;
		int n = ctl_decode(data + off, len - off, m, &why);

		if (n == 0)
			break;
		if (n < 0) {
			ctl_refuse(f, EPROTO, why);
			off = len;
			break;
		}
		off += (size_t)n;
		if (f->state == SF_HELLO) {
			if (!ctl_hello(f, m))
				off = len;
		} else if (m->type == CTL_START || m->type == CTL_STOP) {
			ctl_command(f, m->type, m->seq);
		} else {
			char why2[64];

			snprintf(why2, sizeof(why2), "unexpected %s", ctl_type_name(m->type));
			ctl_refuse(f, EPROTO, why2);
			off = len;
		}
	}
	free(m);
	return off;
}

/* hold_over - the test hook's time is up: the answers held back go, in order. */
static void hold_over(struct bp_loop *loop, void *arg)
{
	struct rr_sflow *f = arg;
	uint32_t n = f->held;

	(void)loop;
	f->held = 0;
	while (n--)
		if (bp_conn_send(f->conn, f->t->s->response, f->resp))
			return; /* closing: its on_close follows */
}

/*
 * hold - the test hook (hidden --test-hold N:MS): the flow's N-th answer, and every
 * one after it while it waits, is held back MS ms, so that a test sees a server
 * stall once. Returns true when this answer is held.
 */
static bool hold(struct rr_sflow *f)
{
	const struct rr_opts *o = &f->t->s->o;

	if (f->held) {
		f->held++;
		return true;
	}
	if (!o->hold_after || f->tx != o->hold_after)
		return false;
	f->held = 1;
	bp_timer_start(f->t->loop, &f->hold_timer, (uint64_t)o->hold_ms * 1000, hold_over, f);
	return true;
}

static size_t flow_recv(struct bp_conn *c, const uint8_t *data, size_t len)
{
	struct rr_sflow *f = bp_conn_data(c);
	size_t off = 0;

	if (f->state == SF_HELLO) {
		if (len >= 4 && bp_get_le32(data) == CTL_MAGIC)
			return flow_control(f, data, len);
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
				if (hold(f))
					continue;
				if (bp_conn_send(c, response, f->resp))
					return len;
			}
		}
		return len;
	}
	case SF_CONTROL:
		return off + flow_control(f, data + off, len - off);
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

/* srv_line - the shared server set-up's log lines (accept failures) as the server's own. */
static void srv_line(void *ctx, const char *line)
{
	server_log(ctx, "%s", line);
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

/* udp_socket_setup - on each thread once the TCP port is known: its SO_REUSEPORT socket on that port. */
static int udp_socket_setup(struct bp_loop *loop, void *arg)
{
	struct rr_sthread *t = arg;
	struct rr_server *s = t->s;
	int one = 1, fd;

	fd = socket(s->addr.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return bp_set_last_error(-errno, "udp socket: %s", strerror(errno));
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) < 0 ||
	    bind(fd, (struct sockaddr *)&s->addr, s->addrlen) < 0) {
		int err = -errno;

		char msg[256];

		close(fd);
		srv_bind_error(err, "udp", (struct sockaddr *)&s->addr, "pick another with --port", msg, sizeof(msg));
		return bp_set_last_error(err, "%s", msg);
	}
	if (s->o.priority >= 0)
		bp_sock_set_priority(fd, s->o.priority);
	return bp_conn_adopt(t->loop, fd, &udp_ops, t, NULL);
}

/* ---- threads ---- */

static int thread_setup(struct bp_loop *loop, void *arg)
{
	struct rr_sthread *t = arg;

	t->loop = loop;
	bp_loop_set_data(loop, t);
	ev_name_thread("rr-server", t->idx);
	return 0;
}

/* serve_on - the listener (any free port with --port 0), then the UDP sockets on the same port. */
static int serve_on(struct rr_server *s, char *err, size_t errlen)
{
	int ret = srv_listen(&s->st, (struct sockaddr *)&s->addr, s->addrlen, adopt_flow, NULL, srv_line, s,
			     "pick another with --port", &s->port, err, errlen);

	if (ret)
		return ret;
	if (s->addr.ss_family == AF_INET6)
		((struct sockaddr_in6 *)&s->addr)->sin6_port = htons(s->port);
	else
		((struct sockaddr_in *)&s->addr)->sin_port = htons(s->port);
	for (int i = 0; i < s->n; i++) {
		ret = srv_on_loop(s->st.loops[i], udp_socket_setup, &s->th[i]);
		if (ret) {
			snprintf(err, errlen, "%s", bp_last_error());
			return ret;
		}
	}
	return 0;
}

int rr_server_start(const struct rr_opts *o, struct rr_server **sp, char *err, size_t errlen)
{
	struct rr_server *s = calloc(1, sizeof(*s));
	void *args[RR_MAX_THREADS];
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
		snprintf(err, errlen, "out of memory for the response buffer");
		ret = -ENOMEM;
		goto fail;
	}
	ret = srv_addr("--bind", o->host, o->port, &s->addr, &s->addrlen, err, errlen);
	if (ret)
		goto fail;
	s->port = o->port;
	for (int i = 0; i < s->n; i++) {
		s->th[i].s = s;
		s->th[i].idx = i;
		args[i] = &s->th[i];
	}
	ret = srv_threads_start(&s->st, s->n, &o->mode, o->cpus, o->ncpus, thread_setup, args, err, errlen);
	if (ret)
		goto fail;
	ret = serve_on(s, err, errlen);
	if (ret) {
		srv_threads_stop(&s->st, NULL, NULL);
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
	srv_threads_stop(&s->st, thread_teardown, NULL);
	free(s->response);
	pthread_mutex_destroy(&s->runs_lock);
	free(s);
}
