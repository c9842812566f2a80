/* SPDX-License-Identifier: MIT */
/*
 * busypoll rr client: F flows over T loop threads, one outstanding request per
 * flow. Each thread is a worker of the shared run driver (tools/harness/run_driver.h):
 * connect (hello/ack) -> ready -> warm-up -> measure -> drain; it keeps its own
 * histograms and counters and moves between phases on its own timers, so the hot
 * path shares nothing with other threads. The main thread drives the run: the
 * control session's START and STOP on the interval's edges, progress lines.
 *
 * Closed loop (the default): a flow sends its next request when the answer came.
 * Open loop (--rate): each thread's share of the rate is a schedule of due times
 * (tools/rr/sched.h) kept by one engine timer; a request due on a busy flow waits
 * for that answer, and its latency counts from when it was due (coordinated
 * omission free), beside the latency from when it went out. The timer is the
 * loop's own, so the mode decides how the thread waits for it: a spinning loop
 * polls up to the due time, a blocking one sleeps in epoll_pwait2 or
 * io_uring_enter with a ns timeout, with this thread's timer slack set to 1 ns
 * (the kernel's default 50 us would let every wake-up come that late).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/bytes.h"
#include "tools/common/cmd.h"
#include "tools/harness/control.h"
#include "tools/harness/run_driver.h"
#include "tools/rr/rr.h"
#include "tools/rr/sched.h"
#include "tools/common/values.h"

#define CONTROL_TIMEOUT_MS 5000
#define READY_TIMEOUT_NS (15ull * 1000000000ull)
#define STALL_NS (5ull * 1000000000ull)
#define UDP_RESEND_NS (200ull * 1000000ull)
#define UDP_SCAN_US 50000

enum cflow_state { CF_CONNECTING, CF_HELLO, CF_IDLE, CF_BUSY, CF_DEAD };

struct rr_client;
struct rr_cthread;

struct rr_cflow {
	struct rr_cthread *t;
	struct bp_conn *conn;
	uint32_t id;
	enum cflow_state state;
	uint32_t got;
	uint64_t t_send;         /* when the outstanding request went out (a UDP resend: again) */
	uint64_t t_due;          /* when it was due (closed loop: when it went out) */
	uint64_t lag_ns;         /* open loop: how long after it was due it first went out */
	bool waited;             /* open loop: it waited for the flow's previous answer */
};


struct rr_cthread {
	struct run_worker w;     /* phases, the interval's snapshots, the error (tools/harness/run_driver.h) */
	struct rr_client *cl;
	int idx;
	struct bp_loop_thread *lt;
	struct bp_loop *loop;
	struct rr_cflow *flows;
	int nflows;
	int acked;               /* flows past the hello */
	int busy;                /* flows with a request outstanding */
	struct bp_hist *hist;
	atomic_uint_fast64_t measured; /* read by the main thread for progress */
	uint64_t total;          /* every completed transaction, all phases */
	uint64_t udp_lost;
	struct bp_timer t_udp;
	/* open loop (--rate) */
	bool open;
	struct rr_sched sched;   /* this thread's share of the rate */
	struct bp_timer t_sched; /* at the next due request */
	uint64_t limit;          /* this thread's share of --max-outstanding */
	struct bp_hist *hist_send, *hist_lag; /* latency from the send; send minus due */
	uint64_t queued, late, peak; /* measured: waited for their flow; late otherwise; most outstanding */
};

struct rr_client {
	const struct rr_opts *o;
	struct sockaddr_storage addr;
	socklen_t addrlen;
	char addr_text[128];
	uint64_t run_id;
	int n;
	struct rr_cthread th[RR_MAX_THREADS];
	uint8_t *request;
	atomic_int_fast64_t remaining; /* -n: transactions left to measure */
	struct ctl_session ctl;  /* the run's control session */
	struct bp_kstats k0, k1; /* this namespace's kernel counters on the interval's edges */
	struct evidence *server; /* filled at the end edge */
	struct rr_result *res;
	int ctl_err;             /* START or STOP failed */
	char ctl_msg[256];
	uint64_t last_tx, last_ns; /* progress: measured by the last line, and when */
};

/* ---- per-thread phases ---- */

/* thread_check_done - in the drain, the last answer is in: the worker is done. */
static void thread_check_done(struct rr_cthread *t)
{
	run_worker_drained(&t->w);
}

static void thread_fail(struct rr_cthread *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void thread_fail(struct rr_cthread *t, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	run_worker_fail(&t->w, -EIO, "%s", msg);
}

/* ---- flows ---- */

/* flow_send - the flow's request on the wire now (a new one, or a UDP resend of the same). */
static void flow_send(struct rr_cflow *f)
{
	struct rr_cthread *t = f->t;

	f->state = CF_BUSY;
	f->got = 0;
	t->busy++;
	f->t_send = bp_now_ns();
	if (bp_conn_send(f->conn, t->cl->request, t->cl->o->request_size))
		thread_fail(t, "send to %s: %s", t->cl->addr_text, bp_last_error());
}

/*
 * flow_request - the flow's next request, due at due_ns (0: now, the closed loop);
 * waited: it waited for the flow's previous answer.
 */
static void flow_request(struct rr_cflow *f, uint64_t due_ns, bool waited)
{
	flow_send(f);
	f->t_due = due_ns ? due_ns : f->t_send;
	f->lag_ns = f->t_send > f->t_due ? f->t_send - f->t_due : 0;
	f->waited = waited;
}

/* May this thread start another transaction now? */
static bool thread_may_send(struct rr_cthread *t)
{
	if (!run_worker_active(&t->w))
		return false;
	if (t->cl->o->transactions && t->w.phase == RUN_MEASURE &&
	    atomic_load_explicit(&t->cl->remaining, memory_order_relaxed) <= 0)
		return false;
	return true;
}

/* record_open - a measured open-loop transaction's latency from its send, its lag, how it went out. */
static void record_open(struct rr_cthread *t, const struct rr_cflow *f, uint64_t now)
{
	bp_hist_record(t->hist_send, now - f->t_send);
	bp_hist_record(t->hist_lag, f->lag_ns);
	if (f->waited)
		t->queued++;
	else if (f->lag_ns > RR_LATE_NS)
		t->late++;
}

/* flow_next - open loop: the flow's oldest waiting request goes out now, if there is one. */
static void flow_next(struct rr_cflow *f)
{
	struct rr_cthread *t = f->t;
	uint64_t due;

	if (thread_may_send(t) && rr_sched_pop(&t->sched, (uint32_t)(f - t->flows), &due))
		flow_request(f, due, true);
	else
		thread_check_done(t);
}

static void flow_complete(struct rr_cflow *f)
{
	struct rr_cthread *t = f->t;
	uint64_t now = bp_now_ns();

	t->busy--;
	t->total++;
	run_worker_add(&t->w, 1);
	f->state = CF_IDLE;
	if (t->w.phase == RUN_MEASURE) {
		bool count = true, last = false;

		/* -n: exactly n measured; answers still in flight after that only drain. */
		if (t->cl->o->transactions) {
			int_fast64_t left = atomic_fetch_sub_explicit(&t->cl->remaining, 1, memory_order_relaxed);

			count = left > 0;
			last = left <= 1;
		}
		if (count) {
			bp_hist_record(t->hist, now - f->t_due);
			if (t->open)
				record_open(t, f, now);
			atomic_store_explicit(&t->measured,
					      atomic_load_explicit(&t->measured, memory_order_relaxed) + 1,
					      memory_order_relaxed);
		}
		if (last)
			run_worker_end(&t->w);
	}
	if (t->open)
		flow_next(f);
	else if (thread_may_send(t))
		flow_request(f, 0, false);
	else
		thread_check_done(t);
}

static void thread_flow_ready(struct rr_cthread *t)
{
	if (++t->acked == t->nflows)
		run_worker_ready(&t->w);
}

static size_t cflow_recv(struct bp_conn *c, const uint8_t *data, size_t len)
{
	struct rr_cflow *f = bp_conn_data(c);
	struct rr_cthread *t = f->t;
	const struct rr_opts *o = t->cl->o;
	size_t off = 0;

	if (f->state == CF_HELLO) {
		struct bp_rr_ack ack;

		if (len < BP_RR_ACK_LEN)
			return 0;
		if (bp_rr_ack_decode(data, &ack)) {
			thread_fail(t, "%s answered with something that is not busypoll rr", t->cl->addr_text);
			return len;
		}
		if (ack.status != BP_RR_OK) {
			thread_fail(t, "server %s refused the flow: %s", t->cl->addr_text,
				    bp_rr_refuse_reason(ack.status));
			return len;
		}
		f->state = CF_IDLE;
		off = BP_RR_ACK_LEN;
		thread_flow_ready(t);
	}
	if (o->udp) {
		/* One datagram = one response; a stray one (after a resend) completes early. */
		if (f->state == CF_BUSY)
			flow_complete(f);
		return len;
	}
	if (off < len && f->state != CF_BUSY) {
		thread_fail(t, "server sent %zu bytes with no request outstanding", len - off);
		return len;
	}
	while (off < len) {
		size_t take = len - off;

		if (take > o->response_size - f->got)
			take = o->response_size - f->got;
		f->got += (uint32_t)take;
		off += take;
		if (f->got == o->response_size) {
			flow_complete(f);
			if (off < len && f->state != CF_BUSY) {
				thread_fail(t, "server sent more than %u bytes", o->response_size);
				return len;
			}
		}
	}
	return len;
}

static void cflow_connect(struct bp_conn *c)
{
	struct rr_cflow *f = bp_conn_data(c);
	struct rr_cthread *t = f->t;
	const struct rr_opts *o = t->cl->o;

	if (o->priority >= 0 && bp_sock_set_priority(bp_conn_fd(c), o->priority))
		thread_fail(t, "%s", bp_last_error());
	if (o->udp) {
		/* UDP flows are announced by the control connection: ready at once. */
		f->state = CF_IDLE;
		thread_flow_ready(t);
		return;
	}
	{
		struct bp_rr_hello h = {
			.version = BP_RR_VERSION, .kind = BP_RR_KIND_DATA,
			.request_size = o->request_size, .response_size = o->response_size,
			.run_id = t->cl->run_id, .flow_id = f->id,
		};
		uint8_t buf[BP_RR_HELLO_LEN];

		bp_rr_hello_encode(&h, buf);
		f->state = CF_HELLO;
		if (bp_conn_send(c, buf, sizeof(buf)))
			thread_fail(t, "send hello: %s", bp_last_error());
	}
}

static void cflow_close(struct bp_conn *c, int err, const char *syscall)
{
	struct rr_cflow *f = bp_conn_data(c);
	struct rr_cthread *t = f->t;

	if (f->state == CF_BUSY)
		t->busy--;
	f->state = CF_DEAD;
	f->conn = NULL;
	if (err == -ECONNREFUSED)
		thread_fail(t, "cannot reach server %s: connection refused; is `busypoll rr --server` running there?",
			    t->cl->addr_text);
	else if (err == -ECONNRESET || err == -EPIPE) /* a server killed, or its host gone */
		thread_fail(t, "server %s closed flow %u mid-run (%s: %s)", t->cl->addr_text, f->id, syscall,
			    strerror(-err));
	else if (err)
		thread_fail(t, "flow %u to %s: %s: %s", f->id, t->cl->addr_text, syscall, strerror(-err));
	else
		thread_fail(t, "server %s closed flow %u mid-run", t->cl->addr_text, f->id);
	thread_check_done(t);
}

static const struct bp_conn_ops cflow_ops = {
	.on_recv = cflow_recv, .on_connect = cflow_connect, .on_close = cflow_close,
};

/* UDP: a request with no answer in time is resent (and counted as lost). */
static void udp_scan(struct bp_loop *loop, void *arg)
{
	struct rr_cthread *t = arg;
	uint64_t now = bp_now_ns();

	for (int i = 0; i < t->nflows; i++) {
		struct rr_cflow *f = &t->flows[i];

		if (f->state == CF_BUSY && now - f->t_send > UDP_RESEND_NS) {
			t->udp_lost++;
			t->busy--;
			flow_send(f);
		}
	}
	if (t->w.phase != RUN_DONE && t->w.phase != RUN_FAILED)
		bp_timer_start(loop, &t->t_udp, UDP_SCAN_US, udp_scan, t);
}

/* ---- the open loop's schedule ---- */

static void sched_due(struct bp_loop *loop, void *arg);

/*
 * sched_arm - the timer at the next due request, from the clock now (the sends just
 * made took microseconds). The engine's timers take whole microseconds: rounded
 * down, so it is never late, at most 1 us early, and then sched_due finds nothing
 * due yet and asks again with 0 (the next pass).
 */
static void sched_arm(struct rr_cthread *t)
{
	uint64_t next = t->sched.clock.next_ns, now = bp_now_ns();

	bp_timer_start(t->loop, &t->t_sched, next > now ? (next - now) / 1000 : 0, sched_due, t);
}

/* overloaded - more requests due and unanswered than the thread's share of --max-outstanding. */
static void overloaded(struct rr_cthread *t, uint64_t outstanding)
{
	const struct rr_opts *o = t->cl->o;

	char where[64] = "";

	if (o->threads > 1)
		snprintf(where, sizeof(where), " on thread %d (its share: %llu)", t->idx, (unsigned long long)t->limit);
	run_worker_fail(&t->w, -EOVERFLOW,
			"--rate %g: %llu requests due and not answered%s, more than --max-outstanding %llu: the "
			"server cannot keep up, or --flows %d is too few (a flow has one request in flight at a "
			"time)",
			o->rate, (unsigned long long)outstanding, where, (unsigned long long)rr_max_outstanding(o),
			o->flows);
}

/* sched_issue - the request due at due_ns on flow f: out now, or waiting for f's answer. */
static void sched_issue(struct rr_cthread *t, struct rr_cflow *f, uint64_t due_ns)
{
	uint64_t outstanding = t->busy + rr_sched_waiting(&t->sched) + 1;

	if (outstanding > t->limit) {
		overloaded(t, outstanding);
		return;
	}
	if (t->w.phase == RUN_MEASURE && outstanding > t->peak)
		t->peak = outstanding;
	if (f->state == CF_IDLE)
		flow_request(f, due_ns, false);
	else if (rr_sched_push(&t->sched, (uint32_t)(f - t->flows), due_ns))
		overloaded(t, outstanding); /* the pool holds limit requests: not reached */
}

/* sched_due - on the timer: every request due by now goes out or waits; then the timer again. */
static void sched_due(struct bp_loop *loop, void *arg)
{
	struct rr_cthread *t = arg;
	uint64_t now = bp_now_ns();

	(void)loop;
	while (thread_may_send(t) && t->sched.clock.next_ns <= now) {
		uint64_t due = t->sched.clock.next_ns;

		sched_issue(t, &t->flows[rr_sched_take(&t->sched)], due);
	}
	if (thread_may_send(t))
		sched_arm(t);
}

/* ---- thread set-up and the go signal ---- */

static int cthread_setup(struct bp_loop *loop, void *arg)
{
	struct rr_cthread *t = arg;
	struct rr_client *cl = t->cl;

	t->loop = loop;
	t->w.loop = loop;
	bp_loop_set_data(loop, t);
	ev_name_thread("rr-client", t->idx);
	/* the schedule's timer is this thread's wait timeout: let the kernel end it on time */
	if (t->open && prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL) < 0)
		return bp_set_last_error(-errno, "prctl(PR_SET_TIMERSLACK): %s", strerror(errno));
	for (int i = 0; i < t->nflows; i++) {
		struct rr_cflow *f = &t->flows[i];
		int ret = bp_conn_connect(loop, (struct sockaddr *)&cl->addr, cl->addrlen,
					  cl->o->udp ? SOCK_DGRAM : SOCK_STREAM, &cflow_ops, f, &f->conn);

		if (ret) {
			if (ret == -EMFILE || ret == -ENFILE)
				return bp_set_last_error(ret, "out of file descriptors after %d flows (ulimit -n)", i);
			return ret;
		}
	}
	if (cl->o->udp)
		bp_timer_start(loop, &t->t_udp, UDP_SCAN_US, udp_scan, t);
	return 0;
}

/* ---- the run's hooks ---- */

/*
 * rr_start - the go (on the thread): every idle flow sends its first request; open
 * loop: the schedule starts now, fixed arrivals staggered by thread (thread i one
 * i-th of the whole run's gap later) so that the threads' requests interleave.
 */
static void rr_start(struct run_worker *w)
{
	struct rr_cthread *t = (struct rr_cthread *)w;

	if (t->open) {
		double first = t->sched.clock.poisson ? 0 : t->idx * 1e9 / t->cl->o->rate;

		rr_sched_start(&t->sched, bp_now_ns(), first);
		sched_due(t->loop, t);
		return;
	}
	for (int i = 0; i < t->nflows; i++)
		if (t->flows[i].state == CF_IDLE && thread_may_send(t))
			flow_request(&t->flows[i], 0, false);
}

/* rr_idle - no request outstanding: the drain is over (requests still waiting are not sent). */
static bool rr_idle(struct run_worker *w)
{
	struct rr_cthread *t = (struct rr_cthread *)w;

	if (t->open && t->busy == 0)
		bp_timer_stop(t->loop, &t->t_sched);
	return t->busy == 0;
}

/* ---- control session (blocking, on the main thread) ---- */

/* server_cpus - the server's loop threads' CPUs from its HELLO_OK (one CTL_T_CPU each, -1 not pinned). */
static void server_cpus(const struct ctl_msg *m, struct rr_result *res)
{
	struct ctl_iter it;
	const uint8_t *val;
	uint16_t tag;
	size_t len;

	res->nserver_cpus = 0;
	ctl_iter_body(&it, m);
	while (ctl_next(&it, &tag, &val, &len)) {
		int64_t cpu = (int64_t)ctl_val_u64(val);

		if (tag != CTL_T_CPU || cpu < 0 || cpu > 65535 || res->nserver_cpus == RR_MAX_THREADS)
			continue;
		res->server_cpus[res->nserver_cpus++] = (int)cpu;
	}
}

/* control_open - the run's control session: HELLO with the run, the server's HELLO_OK. */
static int control_open(struct rr_client *cl, struct ctl_session *ctl, char *err, size_t errlen)
{
	const struct rr_opts *o = cl->o;
	struct ctl_msg *m = malloc(2 * sizeof(*m));
	int ret;

	if (!m) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	ret = ctl_session_open(ctl, (struct sockaddr *)&cl->addr, cl->addrlen, CONTROL_TIMEOUT_MS,
			       o->own_server ? NULL : "is `busypoll rr --server` running there?", err, errlen);
	if (ret) {
		free(m);
		return ret;
	}
	ctl_msg_init(&m[0], CTL_HELLO);
	ctl_put_text(&m[0], CTL_T_TOOL, "rr");
	ctl_put_u64(&m[0], CTL_T_RUN_ID, cl->run_id);
	ctl_put_u64(&m[0], CTL_T_RR_REQUEST_SIZE, o->request_size);
	ctl_put_u64(&m[0], CTL_T_RR_RESPONSE_SIZE, o->response_size);
	ctl_put_u64(&m[0], CTL_T_FLAGS, o->udp ? CTL_F_UDP : 0);
	ret = ctl_call(ctl, &m[0], CTL_HELLO_OK, &m[1], err, errlen);
	if (!ret)
		server_cpus(&m[1], cl->res);
	if (ret == -EPROTO)
		snprintf(err, errlen, "%s is not a busypoll rr server (bad answer to the hello)", cl->addr_text);
	else if (ret && ret != -EINTR && ret != -ETIMEDOUT && ret != -ECONNRESET)
		ret = -ECONNREFUSED; /* the server's reason is in err */
	if (ret)
		ctl_session_close(ctl);
	free(m);
	return ret;
}

/* control_cmd - START (reply STARTED) or STOP (reply EVIDENCE, into *server). */
static int control_cmd(struct ctl_session *ctl, uint16_t cmd, struct evidence *server, char *err, size_t errlen)
{
	struct ctl_msg *m = malloc(2 * sizeof(*m));
	int ret;

	if (!m)
		return -ENOMEM;
	ctl_msg_init(&m[0], cmd);
	ret = ctl_call(ctl, &m[0], cmd == CTL_START ? CTL_STARTED : CTL_EVIDENCE, &m[1], err, errlen);
	if (!ret && server && ev_decode(&m[1], server)) {
		snprintf(err, errlen, "server %s sent evidence that does not decode", ctl->peer);
		ret = -EPROTO;
	}
	free(m);
	return ret;
}

/* ---- limits ---- */

static int check_fd_limit(const struct rr_opts *o, char *err, size_t errlen)
{
	/* Flows, plus per thread an epoll/ring fd and an eventfd, plus slack for stdio and control. */
	rlim_t need = (rlim_t)o->flows + 4 * (rlim_t)o->threads + 32;
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 0;
	if (rl.rlim_cur >= need)
		return 0;
	if (rl.rlim_max >= need) {
		rl.rlim_cur = need;
		if (setrlimit(RLIMIT_NOFILE, &rl) == 0)
			return 0;
	}
	snprintf(err, errlen,
		 "%d flows need %llu file descriptors but RLIMIT_NOFILE is %llu (hard %llu); raise it with ulimit -n",
		 o->flows, (unsigned long long)need, (unsigned long long)rl.rlim_cur,
		 (unsigned long long)rl.rlim_max);
	return -EMFILE;
}

/* ---- the run ---- */

/* rr_edge - the interval's edges: the kernel's counters, and the server's START / STOP. */
static void rr_edge(struct run *r, bool end)
{
	struct rr_client *cl = r->tool;

	if (!end) {
		bp_kstats_read(&cl->k0);
		cl->ctl_err = control_cmd(&cl->ctl, CTL_START, NULL, cl->ctl_msg, sizeof(cl->ctl_msg));
		if (cl->ctl_err)
			run_stop_all(r); /* no server side to compare with: end what runs */
		return;
	}
	bp_kstats_read(&cl->k1);
	if (!cl->ctl_err && control_cmd(&cl->ctl, CTL_STOP, cl->server, cl->ctl_msg, sizeof(cl->ctl_msg)))
		memset(cl->server, 0, sizeof(*cl->server));
}

/* rr_progress - "busypoll rr: 2.0 s  1234 transactions  600 tx/s  p99 12.3 us" on stderr. */
static void rr_progress(struct run *r, const char *when, uint64_t units, double seconds)
{
	struct rr_client *cl = r->tool;
	static struct bp_hist snap;
	uint64_t tx = 0, now = bp_now_ns();

	/* measured transactions only, the first line a whole interval into the measurement */
	if (cl->o->quiet || now < r->measure_at_ns + (uint64_t)(cl->o->interval_s * 0.5e9))
		return;
	bp_hist_init(&snap);
	for (int i = 0; i < cl->n; i++) {
		tx += atomic_load_explicit(&cl->th[i].measured, memory_order_relaxed);
		/* A racy copy is fine for a progress line; the final merge happens after join. */
		bp_hist_merge(&snap, cl->th[i].hist);
	}
	/* the rate since the last line, or since the interval started: measured transactions only */
	seconds = (double)(now - (cl->last_ns ? cl->last_ns : r->measure_at_ns)) / 1e9;
	fprintf(stderr, "busypoll rr: %6.1f s  %10llu transactions  %10.0f tx/s  p99 %.1f us\n",
		(double)(now - r->measure_at_ns) / 1e9, (unsigned long long)tx,
		seconds > 0 ? (double)(tx - cl->last_tx) / seconds : 0.0, (double)bp_hist_percentile(&snap, 99.0) / 1000.0);
	cl->last_tx = tx;
	cl->last_ns = now;
}

static const struct run_ops rr_run_ops = {
	.start = rr_start, .idle = rr_idle, .edge = rr_edge, .progress = rr_progress,
};

/* fill_side - the client's side and the figures, from the joined threads. */
static void fill_side(struct rr_result *res, struct rr_client *cl, struct run *r)
{
	struct evidence *c = &res->client;

	c->valid = true;
	snprintf(c->mode, sizeof(c->mode), "%s", cl->o->mode_text);
	c->threads = (uint32_t)cl->n;
	for (int i = 0; i < cl->n; i++) {
		struct rr_cthread *t = &cl->th[i];

		c->transactions += t->total;
		res->transactions += atomic_load(&t->measured);
		res->udp_lost += t->udp_lost;
		bp_hist_merge(&res->hist, t->hist);
		if (t->open) {
			bp_hist_merge(&res->hist_send, t->hist_send);
			bp_hist_merge(&res->hist_lag, t->hist_lag);
			res->queued += t->queued;
			res->late += t->late;
			res->outstanding_peak += t->peak;
		}
	}
	run_add_evidence(r, c);
	if (r->edge_end)
		ev_add_kstats(c, &cl->k0, &cl->k1);
	res->seconds = (double)c->interval_ns / 1e9;
	res->tps = res->seconds > 0 ? (double)res->transactions / res->seconds : 0;
}

static void napi_teardown(struct bp_loop *loop, void *arg)
{
	struct evidence *c = arg;
	uint32_t ids[RR_MAX_NAPI_IDS];
	size_t n = bp_loop_napi_ids(loop, ids, RR_MAX_NAPI_IDS);

	for (size_t i = 0; i < n; i++)
		ev_add_napi(c, ids[i]);
}

/*
 * open_setup - an open-loop thread's share of the rate and of --max-outstanding
 * (each at least one per flow), its schedule, its two more histograms.
 */
static int open_setup(struct rr_client *cl, struct rr_cthread *t, char *err, size_t errlen)
{
	const struct rr_opts *o = cl->o;
	double share = (double)t->nflows / o->flows;
	uint64_t limit = (uint64_t)ceil((double)rr_max_outstanding(o) * share);

	t->open = true;
	t->limit = limit > (uint64_t)t->nflows ? limit : (uint64_t)t->nflows;
	if (t->limit >= RR_SCHED_NONE)
		t->limit = RR_SCHED_NONE - 1;
	t->hist_send = malloc(sizeof(*t->hist_send));
	t->hist_lag = malloc(sizeof(*t->hist_lag));
	if (!t->hist_send || !t->hist_lag ||
	    rr_sched_init(&t->sched, o->rate * share, o->arrivals == RR_ARRIVALS_POISSON, (uint32_t)t->nflows,
			  (uint32_t)t->limit, cl->run_id ^ (uint64_t)(t->idx + 1) * 0x9e3779b97f4a7c15ull)) {
		snprintf(err, errlen, "out of memory for the schedule of %llu requests", (unsigned long long)t->limit);
		return -ENOMEM;
	}
	bp_hist_init(t->hist_send);
	bp_hist_init(t->hist_lag);
	return 0;
}

/* start_threads - one loop thread per worker, each connecting its flows. */
static int start_threads(struct rr_client *cl, int *started, char *err, size_t errlen)
{
	const struct rr_opts *o = cl->o;

	for (int i = 0; i < cl->n; i++) {
		struct rr_cthread *t = &cl->th[i];
		int lo = (int)((int64_t)o->flows * i / cl->n), hi = (int)((int64_t)o->flows * (i + 1) / cl->n);
		int ret;

		t->cl = cl;
		t->idx = i;
		t->nflows = hi - lo;
		t->flows = calloc((size_t)t->nflows, sizeof(*t->flows));
		t->hist = malloc(sizeof(*t->hist));
		if (!t->flows || !t->hist) {
			snprintf(err, errlen, "out of memory for %d flows", t->nflows);
			return -ENOMEM;
		}
		bp_hist_init(t->hist);
		for (int j = 0; j < t->nflows; j++) {
			t->flows[j].t = t;
			t->flows[j].id = (uint32_t)(lo + j);
		}
		if (o->rate > 0) {
			ret = open_setup(cl, t, err, errlen);
			if (ret)
				return ret;
		}
		ret = bp_loop_thread_start(&t->lt, &o->mode, o->ncpus ? o->cpus[i % o->ncpus] : -1, cthread_setup, t);
		if (ret) {
			snprintf(err, errlen, "%s", bp_last_error());
			return ret;
		}
		(*started)++;
	}
	return 0;
}

/* client_prepare - the server's address, the run id, the request bytes. */
static int client_prepare(struct rr_client *cl, struct rr_result *res, char *err, size_t errlen)
{
	const struct rr_opts *o = cl->o;
	int ret = check_fd_limit(o, err, errlen);

	if (ret)
		return ret;
	ret = bp_parse_addr(o->host, o->port, &cl->addr, &cl->addrlen);
	if (ret) {
		/* what the user typed does not name a server: bad input (exit 2), said of the option */
		snprintf(err, errlen, "--client %s: %s", o->host, bp_last_error());
		return ret == -ENOMEM ? ret : -EINVAL;
	}
	bp_format_addr((struct sockaddr *)&cl->addr, cl->addr_text, sizeof(cl->addr_text));
	snprintf(res->server_addr, sizeof(res->server_addr), "%s", cl->addr_text);
	if (getrandom(&cl->run_id, sizeof(cl->run_id), 0) != sizeof(cl->run_id) || !cl->run_id)
		cl->run_id = bp_now_ns() ^ (uint64_t)getpid() << 32;
	cl->request = calloc(1, o->request_size);
	if (!cl->request) {
		snprintf(err, errlen, "out of memory for a %u-byte request", o->request_size);
		return -ENOMEM;
	}
	if (o->udp)
		bp_put_le64(cl->request, cl->run_id);
	atomic_store(&cl->remaining, (int_fast64_t)o->transactions);
	return 0;
}

bool rr_measured(const struct rr_result *res)
{
	return res->client.valid;
}

int rr_client_run(const struct rr_opts *o, volatile sig_atomic_t *stop, struct rr_result *res,
		  char *err, size_t errlen)
{
	struct rr_client *cl = calloc(1, sizeof(*cl));
	struct run *r = calloc(1, sizeof(*r));
	int ret, started = 0;
	struct bp_host host;

	memset(res, 0, sizeof(*res));
	res->opts = *o;
	bp_hist_init(&res->hist);
	bp_hist_init(&res->hist_send);
	bp_hist_init(&res->hist_lag);
	if (o->rate > 0)
		res->max_outstanding = rr_max_outstanding(o);
	bp_host_read(&host);
	snprintf(res->kernel, sizeof(res->kernel), "%s", host.kernel);
	res->sysctl_busy_poll = host.busy_poll;
	res->sysctl_busy_read = host.busy_read;
	if (!cl || !r) {
		free(cl);
		free(r);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	cl->o = o;
	cl->n = o->threads;
	cl->ctl.fd = -1;
	cl->server = &res->server;
	cl->res = res;
	for (int i = 0; i < cl->n; i++)
		r->w[i] = &cl->th[i].w;
	ret = run_init(r, &rr_run_ops, cl, cl->n);
	if (!ret)
		ret = client_prepare(cl, res, err, errlen);
	if (ret)
		goto out;
	r->warmup_s = o->warmup_s;
	r->duration_s = o->duration_s;
	r->interval_s = o->interval_s;
	r->ready_timeout_ns = READY_TIMEOUT_NS;
	/* an open loop at a low rate waits between requests: as long as 20 of the run's gaps more */
	r->stall_ns = STALL_NS + (o->rate > 0 ? (uint64_t)(20e9 / o->rate) : 0);
	r->flags = RUN_F_END_AFTER_DRAIN; /* the server's count then matches the client's */
	r->stop = stop;

	ret = control_open(cl, &cl->ctl, err, errlen);
	if (ret && stop && *stop) {
		/* A signal cut the hello short (poll: EINTR): interrupted, not unreachable. */
		res->interrupted = true;
		ret = 0;
		goto out;
	}
	if (ret)
		goto out;
	ret = start_threads(cl, &started, err, errlen);
	if (!ret) {
		ret = run_drive(r);
		res->interrupted = r->interrupted;
	}
	if (ret == -ETIMEDOUT && !r->started)
		snprintf(err, errlen, "flows to %s did not start within 15 s", cl->addr_text);
	else if (ret == -ETIMEDOUT)
		snprintf(err, errlen, "server %s stopped answering: no response for %.0f s", cl->addr_text,
			 (double)STALL_NS / 1e9);
	for (int i = 0; i < started; i++)
		bp_loop_thread_join(cl->th[i].lt, napi_teardown, &res->client);
	if (r->started)
		fill_side(res, cl, r);
	if (ret == -EIO || (ret == -ETIMEDOUT && !r->started) || ret == 0) {
		int e = run_first_error(r, err, errlen);

		if (e)
			ret = e;
	}
	if (!ret && cl->ctl_err) {
		snprintf(err, errlen, "%s", cl->ctl_msg);
		ret = cl->ctl_err;
	}
	if (ret && res->interrupted && !atomic_load(&r->failed) && !cl->ctl_err)
		ret = 0;
	if (ret && rr_measured(res))
		snprintf(res->failed, sizeof(res->failed), "%s", err);
out:
	for (int i = 0; i < cl->n; i++) {
		free(cl->th[i].flows);
		free(cl->th[i].hist);
		free(cl->th[i].hist_send);
		free(cl->th[i].hist_lag);
		rr_sched_free(&cl->th[i].sched);
	}
	ctl_session_close(&cl->ctl);
	run_free(r);
	free(r);
	free(cl->request);
	free(cl);
	return ret;
}
