/* SPDX-License-Identifier: MIT */
/*
 * busypoll rr client: F flows over T loop threads, one outstanding request per
 * flow. Phases per thread: connect (hello/ack) -> warm-up -> measure -> drain.
 * Each thread keeps its own histogram and counters and moves between phases on
 * its own timers, so the hot path shares nothing with other threads; the main
 * thread only drives the control connection and prints progress.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "base/bytes.h"
#include "tools/rr/rr.h"
#include "tools/common/options.h"

#define CONTROL_TIMEOUT_MS 5000
#define READY_TIMEOUT_NS (15ull * 1000000000ull)
#define DRAIN_TIMEOUT_NS (5ull * 1000000000ull)
#define UDP_RESEND_NS (200ull * 1000000ull)
#define UDP_SCAN_US 50000

enum cflow_state { CF_CONNECTING, CF_HELLO, CF_IDLE, CF_BUSY, CF_DEAD };
enum phase { PH_CONNECT, PH_WARMUP, PH_MEASURE, PH_DRAIN, PH_DONE };

struct rr_client;
struct rr_cthread;

struct rr_cflow {
	struct rr_cthread *t;
	struct bp_conn *conn;
	uint32_t id;
	enum cflow_state state;
	uint32_t got;
	uint64_t t_send;
};


struct rr_cthread {
	struct rr_client *cl;
	int idx;
	struct bp_loop_thread *lt;
	struct bp_loop *loop;
	struct rr_cflow *flows;
	int nflows;
	int acked;               /* flows past the hello */
	int busy;                /* flows with a request outstanding */
	enum phase phase;
	struct bp_hist *hist;
	atomic_uint_fast64_t measured; /* read by the main thread for progress */
	uint64_t total;          /* every completed transaction, all phases */
	uint64_t udp_lost;
	struct bp_loop_snapshot start, end;
	bool measured_any;
	struct bp_timer t_measure, t_end, t_udp;
	uint64_t measure_at_ns, end_at_ns;
	int err;
	char errmsg[256];
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
	atomic_int ready;        /* threads whose flows all passed the hello */
	atomic_int done;         /* threads that drained */
	atomic_int failed;
	atomic_int_fast64_t remaining; /* -n: transactions left to measure */
};

/* ---- per-thread phases ---- */

static void thread_check_done(struct rr_cthread *t)
{
	if (t->phase == PH_DRAIN && t->busy == 0) {
		t->phase = PH_DONE;
		atomic_fetch_add(&t->cl->done, 1);
	}
}

static void phase_end(struct rr_cthread *t)
{
	if (t->phase == PH_MEASURE) {
		bp_loop_snapshot_take(t->loop, &t->end);
	} else if (t->phase == PH_WARMUP) {
		/* Ended before measuring began (interrupted): an empty interval. */
		bp_loop_snapshot_take(t->loop, &t->start);
		t->end = t->start;
	} else if (t->phase != PH_CONNECT) {
		return;
	}
	bp_timer_stop(t->loop, &t->t_measure);
	bp_timer_stop(t->loop, &t->t_end);
	t->phase = PH_DRAIN;
	thread_check_done(t);
}

static void phase_measure(struct bp_loop *loop, void *arg)
{
	struct rr_cthread *t = arg;

	if (t->phase != PH_WARMUP)
		return;
	bp_loop_snapshot_take(t->loop, &t->start);
	t->measured_any = true;
	t->phase = PH_MEASURE;
}

static void on_end_timer(struct bp_loop *loop, void *arg)
{
	phase_end(arg);
}

/* ---- flows ---- */

static void thread_fail(struct rr_cthread *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void thread_fail(struct rr_cthread *t, const char *fmt, ...)
{
	va_list ap;

	if (!t->err) {
		t->err = -EIO;
		va_start(ap, fmt);
		vsnprintf(t->errmsg, sizeof(t->errmsg), fmt, ap);
		va_end(ap);
	}
	atomic_store(&t->cl->failed, 1);
}

static void flow_send_request(struct rr_cflow *f)
{
	struct rr_cthread *t = f->t;

	f->state = CF_BUSY;
	f->got = 0;
	t->busy++;
	f->t_send = bp_now_ns();
	if (bp_conn_send(f->conn, t->cl->request, t->cl->o->request_size))
		thread_fail(t, "send to %s: %s", t->cl->addr_text, bp_last_error());
}

/* May this thread start another transaction now? */
static bool thread_may_send(struct rr_cthread *t)
{
	if (t->phase != PH_WARMUP && t->phase != PH_MEASURE)
		return false;
	if (t->cl->o->transactions && t->phase == PH_MEASURE &&
	    atomic_load_explicit(&t->cl->remaining, memory_order_relaxed) <= 0)
		return false;
	return true;
}

static void flow_complete(struct rr_cflow *f)
{
	struct rr_cthread *t = f->t;
	uint64_t now = bp_now_ns();

	t->busy--;
	t->total++;
	f->state = CF_IDLE;
	if (t->phase == PH_MEASURE) {
		bool count = true, last = false;

		/* -n: exactly n measured; answers still in flight after that only drain. */
		if (t->cl->o->transactions) {
			int_fast64_t left = atomic_fetch_sub_explicit(&t->cl->remaining, 1, memory_order_relaxed);

			count = left > 0;
			last = left <= 1;
		}
		if (count) {
			bp_hist_record(t->hist, now - f->t_send);
			atomic_store_explicit(&t->measured,
					      atomic_load_explicit(&t->measured, memory_order_relaxed) + 1,
					      memory_order_relaxed);
		}
		if (last)
			phase_end(t);
	}
	if (thread_may_send(t))
		flow_send_request(f);
	else
		thread_check_done(t);
}

static void thread_flow_ready(struct rr_cthread *t)
{
	if (++t->acked == t->nflows)
		atomic_fetch_add(&t->cl->ready, 1);
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
			flow_send_request(f);
		}
	}
	if (t->phase != PH_DONE)
		bp_timer_start(loop, &t->t_udp, UDP_SCAN_US, udp_scan, t);
}

/* ---- thread set-up and the go signal ---- */

static int cthread_setup(struct bp_loop *loop, void *arg)
{
	struct rr_cthread *t = arg;
	struct rr_client *cl = t->cl;

	t->loop = loop;
	bp_loop_set_data(loop, t);
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

static void thread_go(struct bp_loop *loop, void *arg)
{
	struct rr_cthread *t = arg;
	uint64_t now = bp_now_ns();

	t->phase = PH_WARMUP;
	/*
	 * A thread starved past the planned start (a loaded machine, spinning peers)
	 * still measures its whole duration, from when it really starts: otherwise
	 * its start and end timers fire back to back and it measures nothing.
	 */
	if (t->measure_at_ns < now) {
		if (t->end_at_ns)
			t->end_at_ns += now - t->measure_at_ns;
		t->measure_at_ns = now;
	}
	if (t->measure_at_ns == now)
		phase_measure(loop, t);
	else
		bp_timer_start(loop, &t->t_measure, (t->measure_at_ns - now) / 1000, phase_measure, t);
	if (t->end_at_ns)
		bp_timer_start(loop, &t->t_end, (t->end_at_ns - now) / 1000, on_end_timer, t);
	for (int i = 0; i < t->nflows; i++)
		if (t->flows[i].state == CF_IDLE && thread_may_send(t))
			flow_send_request(&t->flows[i]);
}

static void thread_stop_now(struct bp_loop *loop, void *arg)
{
	phase_end(arg);
}

/* ---- control connection (blocking, on the main thread) ---- */

static int control_open(struct rr_client *cl, int *fdp, char *err, size_t errlen)
{
	const struct rr_opts *o = cl->o;
	struct bp_rr_hello h = {
		.version = BP_RR_VERSION, .kind = BP_RR_KIND_CONTROL, .flags = o->udp ? BP_RR_FLAG_UDP : 0,
		.request_size = o->request_size, .response_size = o->response_size, .run_id = cl->run_id,
	};
	uint8_t buf[BP_RR_HELLO_LEN];
	struct bp_rr_ack ack;
	int fd, ret, soerr = 0;
	socklen_t len = sizeof(soerr);

	fd = socket(cl->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -errno;
	}
	if (connect(fd, (struct sockaddr *)&cl->addr, cl->addrlen) < 0 && errno != EINPROGRESS) {
		ret = -errno;
		goto unreachable;
	}
	ret = tool_wait_fd(fd, POLLOUT, CONTROL_TIMEOUT_MS);
	if (!ret && getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) == 0 && soerr)
		ret = -soerr;
	if (ret)
		goto unreachable;
	bp_rr_hello_encode(&h, buf);
	if (send(fd, buf, sizeof(buf), MSG_NOSIGNAL) != (ssize_t)sizeof(buf)) {
		ret = -errno;
		goto unreachable;
	}
	ret = tool_read_full(fd, buf, BP_RR_ACK_LEN, CONTROL_TIMEOUT_MS);
	if (ret)
		goto unreachable;
	if (bp_rr_ack_decode(buf, &ack)) {
		snprintf(err, errlen, "%s is not a busypoll rr server (bad answer to the hello)", cl->addr_text);
		close(fd);
		return -EPROTO;
	}
	if (ack.status != BP_RR_OK) {
		snprintf(err, errlen, "server %s refused the run: %s", cl->addr_text, bp_rr_refuse_reason(ack.status));
		close(fd);
		return -ECONNREFUSED;
	}
	*fdp = fd;
	return 0;
unreachable:
	snprintf(err, errlen, "cannot reach server %s: %s; is `busypoll rr --server` running there?", cl->addr_text,
		 strerror(-ret));
	close(fd);
	return ret;
}

static int control_cmd(int fd, uint32_t cmd, uint64_t run_id)
{
	uint8_t buf[BP_RR_CMD_LEN];

	bp_rr_cmd_encode(cmd, run_id, buf);
	return send(fd, buf, sizeof(buf), MSG_NOSIGNAL) == (ssize_t)sizeof(buf) ? 0 : -errno;
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

static void progress_line(struct rr_client *cl, uint64_t since_ns, uint64_t *last_tx, uint64_t *last_ns)
{
	static struct bp_hist snap;
	uint64_t tx = 0, now = bp_now_ns();

	bp_hist_init(&snap);
	for (int i = 0; i < cl->n; i++) {
		tx += atomic_load_explicit(&cl->th[i].measured, memory_order_relaxed);
		/* A racy copy is fine for a progress line; the final merge happens after join. */
		bp_hist_merge(&snap, cl->th[i].hist);
	}
	fprintf(stderr, "busypoll rr: %6.1f s  %10llu transactions  %10.0f tx/s  p99 %.1f us\n",
		(double)(now - since_ns) / 1e9, (unsigned long long)tx,
		now > *last_ns ? (double)(tx - *last_tx) * 1e9 / (double)(now - *last_ns) : 0.0,
		(double)bp_hist_percentile(&snap, 99.0) / 1000.0);
	*last_tx = tx;
	*last_ns = now;
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000), (long)(ns % 1000000000) };

	nanosleep(&ts, NULL);
}

static void read_sysctl(const char *path, int *out)
{
	FILE *f = fopen(path, "r");

	*out = -1;
	if (f) {
		if (fscanf(f, "%d", out) != 1)
			*out = -1;
		fclose(f);
	}
}

static void fill_side(struct rr_result *res, struct rr_client *cl)
{
	struct rr_side *c = &res->client;
	uint64_t first = UINT64_MAX, last = 0;

	c->valid = true;
	snprintf(c->mode, sizeof(c->mode), "%s", cl->o->mode_text);
	c->threads = (uint32_t)cl->n;
	for (int i = 0; i < cl->n; i++) {
		struct rr_cthread *t = &cl->th[i];
		const struct bp_loop_snapshot *a = &t->start, *b = &t->end;

		c->transactions += t->total;
		res->transactions += atomic_load(&t->measured);
		res->udp_lost += t->udp_lost;
		bp_hist_merge(&res->hist, t->hist);
		if (!t->measured_any)
			continue;
		if (a->ns < first)
			first = a->ns;
		if (b->ns > last)
			last = b->ns;
		c->utime_us += b->utime_us - a->utime_us;
		c->stime_us += b->stime_us - a->stime_us;
		c->nvcsw += b->nvcsw - a->nvcsw;
		c->nivcsw += b->nivcsw - a->nivcsw;
		c->syscalls += b->ctr.syscalls - a->ctr.syscalls;
		c->empty_polls += b->ctr.empty_polls - a->ctr.empty_polls;
		c->wakeups += b->ctr.wakeups - a->ctr.wakeups;
		c->waits += b->ctr.waits - a->ctr.waits;
		c->completions += b->ctr.completions - a->ctr.completions;
	}
	c->interval_ns = last > first ? last - first : 0;
	res->seconds = (double)c->interval_ns / 1e9;
	res->tps = res->seconds > 0 ? (double)res->transactions / res->seconds : 0;
}

static void napi_teardown(struct bp_loop *loop, void *arg)
{
	struct rr_side *c = arg;
	uint32_t ids[RR_MAX_NAPI_IDS];
	size_t n = bp_loop_napi_ids(loop, ids, RR_MAX_NAPI_IDS);

	for (size_t i = 0; i < n; i++) {
		bool seen = false;

		for (uint32_t j = 0; j < c->n_napi_ids; j++)
			seen |= c->napi_ids[j] == ids[i];
		if (!seen && c->n_napi_ids < RR_MAX_NAPI_IDS)
			c->napi_ids[c->n_napi_ids++] = ids[i];
	}
}

int rr_client_run(const struct rr_opts *o, volatile sig_atomic_t *stop, struct rr_result *res,
		  char *err, size_t errlen)
{
	struct rr_client *cl = calloc(1, sizeof(*cl));
	struct bp_kstats k0 = { 0 }, k1 = { 0 };
	int ctl = -1, ret, started = 0;
	uint64_t now, measure_at, end_at = 0, deadline, last_tx = 0, last_ns, next_progress = 0;
	struct utsname un;

	memset(res, 0, sizeof(*res));
	res->opts = *o;
	bp_hist_init(&res->hist);
	if (uname(&un) == 0)
		snprintf(res->kernel, sizeof(res->kernel), "%s", un.release);
	read_sysctl("/proc/sys/net/core/busy_poll", &res->sysctl_busy_poll);
	read_sysctl("/proc/sys/net/core/busy_read", &res->sysctl_busy_read);
	if (!cl) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	cl->o = o;
	cl->n = o->threads;
	ret = check_fd_limit(o, err, errlen);
	if (ret)
		goto out;
	ret = bp_parse_addr(o->host, o->port, &cl->addr, &cl->addrlen);
	if (ret) {
		snprintf(err, errlen, "server address %s: %s", o->host, bp_last_error());
		goto out;
	}
	bp_format_addr((struct sockaddr *)&cl->addr, cl->addr_text, sizeof(cl->addr_text));
	snprintf(res->server_addr, sizeof(res->server_addr), "%s", cl->addr_text);
	if (getrandom(&cl->run_id, sizeof(cl->run_id), 0) != sizeof(cl->run_id) || !cl->run_id)
		cl->run_id = bp_now_ns() ^ (uint64_t)getpid() << 32;
	cl->request = calloc(1, o->request_size);
	if (!cl->request) {
		snprintf(err, errlen, "out of memory for a %u-byte request", o->request_size);
		ret = -ENOMEM;
		goto out;
	}
	if (o->udp)
		bp_put_le64(cl->request, cl->run_id);
	atomic_store(&cl->remaining, (int_fast64_t)o->transactions);

	ret = control_open(cl, &ctl, err, errlen);
	if (ret && stop && *stop) {
		/* A signal cut the hello short (poll: EINTR): interrupted, not unreachable. */
		res->interrupted = true;
		ret = 0;
		goto out;
	}
	if (ret)
		goto out;

	for (int i = 0; i < cl->n; i++) {
		struct rr_cthread *t = &cl->th[i];
		int lo = (int)((int64_t)o->flows * i / cl->n), hi = (int)((int64_t)o->flows * (i + 1) / cl->n);

		t->cl = cl;
		t->idx = i;
		t->nflows = hi - lo;
		t->flows = calloc((size_t)t->nflows, sizeof(*t->flows));
		t->hist = malloc(sizeof(*t->hist));
		if (!t->flows || !t->hist) {
			snprintf(err, errlen, "out of memory for %d flows", t->nflows);
			ret = -ENOMEM;
			goto out_threads;
		}
		bp_hist_init(t->hist);
		for (int j = 0; j < t->nflows; j++) {
			t->flows[j].t = t;
			t->flows[j].id = (uint32_t)(lo + j);
		}
		ret = bp_loop_thread_start(&t->lt, &o->mode, o->ncpus ? o->cpus[i % o->ncpus] : -1, cthread_setup, t);
		if (ret) {
			snprintf(err, errlen, "%s", bp_last_error());
			goto out_threads;
		}
		started++;
	}

	/* All flows past their hello before the clock starts. */
	deadline = bp_now_ns() + READY_TIMEOUT_NS;
	while (atomic_load(&cl->ready) < cl->n) {
		if (atomic_load(&cl->failed) || (stop && *stop) || bp_now_ns() > deadline)
			break;
		sleep_ns(1000000);
	}
	if (atomic_load(&cl->ready) < cl->n) {
		ret = -ETIMEDOUT;
		snprintf(err, errlen, "flows to %s did not start within 15 s", cl->addr_text);
		for (int i = 0; i < started; i++)
			if (cl->th[i].err) {
				snprintf(err, errlen, "%s", cl->th[i].errmsg);
				ret = cl->th[i].err;
				break;
			}
		if (stop && *stop) {
			res->interrupted = true;
			ret = 0;
		}
		goto out_threads;
	}

	now = bp_now_ns();
	measure_at = now + (uint64_t)(o->warmup_s * 1e9);
	if (o->duration_s > 0)
		end_at = measure_at + (uint64_t)(o->duration_s * 1e9);
	for (int i = 0; i < cl->n; i++) {
		cl->th[i].measure_at_ns = measure_at;
		cl->th[i].end_at_ns = end_at;
		bp_loop_post(cl->th[i].loop, thread_go, &cl->th[i]);
	}
	if (measure_at > bp_now_ns())
		sleep_ns(measure_at - bp_now_ns());
	bp_kstats_read(&k0);
	control_cmd(ctl, BP_RR_CMD_START, cl->run_id);
	last_ns = bp_now_ns();
	if (o->interval_s > 0)
		next_progress = last_ns + (uint64_t)(o->interval_s * 1e9);

	/* Wait for the end: the threads' own timers or -n count end the measurement. */
	while (atomic_load(&cl->done) < cl->n) {
		if (atomic_load(&cl->failed))
			break;
		if (stop && *stop && !res->interrupted) {
			res->interrupted = true;
			for (int i = 0; i < cl->n; i++)
				bp_loop_post(cl->th[i].loop, thread_stop_now, &cl->th[i]);
		}
		if (next_progress && bp_now_ns() >= next_progress && !o->quiet) {
			progress_line(cl, measure_at, &last_tx, &last_ns);
			next_progress += (uint64_t)(o->interval_s * 1e9);
		}
		if (end_at && bp_now_ns() > end_at + DRAIN_TIMEOUT_NS) {
			snprintf(err, errlen, "server %s stopped answering: requests still outstanding 5 s after the run ended",
				 cl->addr_text);
			ret = -ETIMEDOUT;
			goto out_threads;
		}
		sleep_ns(2000000);
	}
	bp_kstats_read(&k1);
	res->client.busy_poll_rx = k1.busy_poll_rx - k0.busy_poll_rx;
	res->client.net_rx = k1.net_rx - k0.net_rx;

	if (!atomic_load(&cl->failed)) {
		uint8_t buf[BP_RR_STATS_LEN];
		struct bp_rr_stats st;

		if (control_cmd(ctl, BP_RR_CMD_STOP, cl->run_id) == 0 &&
		    tool_read_full(ctl, buf, sizeof(buf), CONTROL_TIMEOUT_MS) == 0 && bp_rr_stats_decode(buf, &st) == 0) {
			struct rr_side *s = &res->server;

			s->valid = true;
			snprintf(s->mode, sizeof(s->mode), "%s", st.mode);
			s->threads = st.threads;
			s->transactions = st.transactions;
			s->interval_ns = st.interval_ns;
			s->utime_us = st.utime_us;
			s->stime_us = st.stime_us;
			s->nvcsw = st.nvcsw;
			s->nivcsw = st.nivcsw;
			s->busy_poll_rx = st.busy_poll_rx;
			s->net_rx = st.net_rx;
			s->syscalls = st.syscalls;
			s->empty_polls = st.empty_polls;
			s->wakeups = st.wakeups;
			s->waits = st.waits;
			s->completions = st.completions;
			s->n_napi_ids = st.n_napi_ids;
			memcpy(s->napi_ids, st.napi_ids, sizeof(s->napi_ids));
		}
	}
	ret = 0;
out_threads:
	for (int i = 0; i < started; i++)
		bp_loop_thread_join(cl->th[i].lt, napi_teardown, &res->client);
	if (!ret || res->interrupted)
		fill_side(res, cl);
	for (int i = 0; i < cl->n; i++) {
		if (!ret && cl->th[i].err) {
			snprintf(err, errlen, "%s", cl->th[i].errmsg);
			ret = cl->th[i].err;
		}
		free(cl->th[i].flows);
		free(cl->th[i].hist);
	}
	if (ret && res->interrupted && !atomic_load(&cl->failed))
		ret = 0;
out:
	if (ctl >= 0)
		close(ctl);
	free(cl->request);
	free(cl);
	return ret;
}
