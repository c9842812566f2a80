/* SPDX-License-Identifier: MIT */
/*
 * busypoll pingpong client: one run (contract in tools/pingpong/pingpong.h).
 *
 * A run gets a fresh loop thread and socket, as a fresh process would in the
 * experiment this reproduces, so run-to-run spread includes what a new socket
 * and a new ring cost. Everything happens on the loop thread, driven by the
 * loop's callbacks, as a worker of the shared run driver (tools/harness/run_driver.h):
 * connect (ready) -> warm-up (a count) -> measured round trips (a count) -> drain:
 * (breakdown) one tail round trip -> done; the evidence covers every phase. The
 * main thread only waits (it sleeps, so it never steals the pinned CPU), passes
 * on Ctrl-C, and when no round trip completed for a tick asks the loop to look
 * for a lost request or a timeout.
 *
 * The request carries the client's CLOCK_MONOTONIC at the send call; the RTT is
 * the reply's arrival time less that echoed timestamp.
 *
 * --breakdown: each request's pieces gather in a small ring indexed by sequence:
 * its send time and transmit timestamp (OPT_ID key), the reply's receive
 * timestamp and arrival, the server's intervals from the reply, and the server's
 * send path from the NEXT reply (pingpong_proto.h). A sample is complete when all
 * arrived, or counted as missing when its slot is needed again; the tail round
 * trip exists only to bring the last measured one its server send path.
 * Timestamps cost each side a few syscalls per round trip (the error queue); the
 * RTT printed with a breakdown includes that cost.
 *
 * Hot path: no allocation, no lock; the request buffer is rewritten in place.
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <unistd.h>

#include "tools/harness/run_driver.h"
#include "tools/pingpong/pingpong.h"

#define BD_RING 8                        /* a power of two */
#define UDP_RESEND_NS (200ull * 1000000) /* a UDP request unanswered this long is lost */
#define WATCH_MS 100

struct crun {
	struct run_worker w;          /* phases, snapshots, the error (tools/harness/run_driver.h) */
	const struct pp_opts *o;
	const struct pp_target *t;
	struct bp_loop *loop;
	struct bp_conn *conn;
	bool bd;
	bool tail;                    /* breakdown: the tail round trip is out (in the drain) */
	uint64_t warm_left, meas_left;
	uint8_t *req;                 /* o->size bytes; the header is rewritten per request */
	uint64_t seq;                 /* of the request outstanding (or last sent) */
	uint64_t t_send_mono;
	bool outstanding;
	uint64_t progress_ns;         /* last reply (or start): for --timeout */
	uint64_t timeout_ns;
	uint64_t tx_count;            /* OPT_ID: UDP datagrams / TCP bytes since timestamps on */
	struct pp_bd_sample ring[BD_RING];
	struct pp_bd_acc *bdacc;
	struct bp_hist *hist;
	uint64_t total, lost;
	uint64_t watched;             /* the main thread's watchdog: round trips at its last look */
	uint32_t napi_id;
};

/* ---- breakdown ring ---- */

/* bd_settle - a slot's sample is final: into the accumulator, and the slot is free. */
static void bd_settle(struct crun *r, struct pp_bd_sample *s)
{
	if (s->have & PP_HAVE_SENT)
		pp_bd_add(r->bdacc, s);
	memset(s, 0, sizeof(*s));
}

/* bd_try_settle - settle a sample as soon as every piece has arrived. */
static void bd_try_settle(struct crun *r, struct pp_bd_sample *s)
{
	const uint32_t all = PP_HAVE_SENT | PP_HAVE_TX | PP_HAVE_REPLY | PP_HAVE_RX | PP_HAVE_SRV |
			     PP_HAVE_SRV_SEND;

	if ((s->have & all) == all)
		bd_settle(r, s);
}

static struct pp_bd_sample *bd_find(struct crun *r, uint64_t seq)
{
	struct pp_bd_sample *s = &r->ring[seq & (BD_RING - 1)];

	return (s->have & PP_HAVE_SENT) && s->seq == seq ? s : NULL;
}

static void bd_flush(struct crun *r)
{
	for (int i = 0; i < BD_RING; i++)
		bd_settle(r, &r->ring[i]);
}

/* ---- ending ---- */

static void run_fail(struct crun *r, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void run_fail(struct crun *r, int err, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	run_worker_fail(&r->w, err, "%s", msg);
}

/* ---- requests ---- */

static void send_request(struct crun *r)
{
	const uint32_t size = r->o->size;
	struct bp_pp_hdr h = { .type = BP_PP_REQUEST, .length = size };
	int ret;

	h.seq = ++r->seq;
	if (r->bd) {
		struct pp_bd_sample *s = &r->ring[h.seq & (BD_RING - 1)];

		if (s->have)
			bd_settle(r, s); /* whatever did not arrive in BD_RING round trips never will */
		s->seq = h.seq;
		s->measured = r->w.phase == RUN_MEASURE;
		/* OPT_ID: UDP numbers datagrams from 0, TCP names the offset of the last byte. */
		s->key = (uint32_t)(r->o->tcp ? r->tx_count + size - 1 : r->tx_count);
		r->tx_count += r->o->tcp ? size : 1;
		s->have = PP_HAVE_SENT;
		/*
		 * Both clocks back to back, here and on arrival: the breakdown's RTT (REALTIME)
		 * and the payload's (MONOTONIC) then cover the same instants.
		 */
		h.client_ts = r->t_send_mono = bp_now_ns();
		s->t_send = pp_realtime_ns();
		pp_test_delay(r->o->test_delay_us[PP_C_CLIENT_SEND]);
	} else {
		h.client_ts = r->t_send_mono = bp_now_ns();
	}
	bp_pp_hdr_encode(&h, r->req);
	r->outstanding = true;
	ret = bp_conn_send(r->conn, r->req, size);
	if (ret)
		run_fail(r, ret, "send to %s: %s", r->t->text, bp_last_error());
}

/* The reply to the outstanding request is in hand. */
static void on_reply(struct crun *r, const struct bp_pp_hdr *h, uint64_t t_mono, uint64_t t_app)
{
	struct pp_bd_sample *s, *p;

	if (r->bd && (h->flags & BP_PP_F_SRV_PREV) && (p = bd_find(r, h->prev_seq)) != NULL) {
		p->srv_send = h->srv_send_ns;
		p->have |= PP_HAVE_SRV_SEND;
		bd_try_settle(r, p);
	}
	if (!r->outstanding || h->seq != r->seq)
		return; /* late: its request was declared lost and resent */
	if (h->client_ts != r->t_send_mono) {
		run_fail(r, -EPROTO, "server %s changed the timestamp it was to echo", r->t->text);
		return;
	}
	r->outstanding = false;
	r->total++;
	r->progress_ns = t_mono;
	run_worker_add(&r->w, 1);
	if (r->bd && (s = bd_find(r, h->seq)) != NULL) {
		uint64_t rx = bp_conn_rx_timestamp(r->conn);

		s->t_app = t_app;
		s->rtt_mono = t_mono - h->client_ts;
		s->have |= PP_HAVE_REPLY;
		if (rx) {
			s->rx_ts = rx;
			s->have |= PP_HAVE_RX;
		}
		if (h->flags & BP_PP_F_SRV_TIMED) {
			s->srv_rx = h->srv_rx_ns;
			s->srv_proc = h->srv_proc_ns;
			s->have |= PP_HAVE_SRV;
			if (h->flags & BP_PP_F_SRV_NO_RXTS)
				s->have |= PP_HAVE_SRV_RX_MISSING;
		}
		/* Its transmit timestamp not read yet (io_uring ordering): read it now, after the RTT is taken. */
		if (!(s->have & PP_HAVE_TX))
			bp_conn_read_tx_timestamps(r->conn);
	}
	switch (r->w.phase) {
	case RUN_WARMUP:
		if (--r->warm_left == 0)
			run_worker_measure(&r->w);
		break;
	case RUN_MEASURE:
		bp_hist_record(r->hist, t_mono - h->client_ts);
		if (--r->meas_left == 0) {
			/* breakdown: one tail round trip brings the last measured one its server send path */
			r->tail = r->bd;
			run_worker_end(&r->w);
			if (!r->tail)
				return;
		}
		break;
	case RUN_DRAIN:
		r->tail = false;
		run_worker_drained(&r->w);
		return;
	default:
		return;
	}
	send_request(r);
}

static size_t crun_recv(struct bp_conn *c, const uint8_t *data, size_t len)
{
	struct crun *r = bp_conn_data(c);
	uint64_t t_mono, t_app;
	bool dgram = !r->o->tcp;
	size_t off = 0;

	pp_test_delay(r->o->test_delay_us[PP_C_CLIENT_RX]);
	t_mono = bp_now_ns();
	t_app = r->bd ? pp_realtime_ns() : 0;

	while (off < len && r->w.phase != RUN_DONE && r->w.phase != RUN_FAILED) {
		struct bp_pp_hdr h;
		int bad = bp_pp_hdr_decode(data + off, len - off, BP_PP_REPLY, dgram, &h);

		if (!dgram && bad == BP_PP_ERR_SHORT)
			break;
		if (bad) {
			run_fail(r, -EPROTO, "server %s sent a bad reply: %s", r->t->text, bp_pp_err_text(bad));
			return len;
		}
		if (len - off < h.length)
			break;
		if (h.length != r->o->size) {
			run_fail(r, -EPROTO, "server %s answered %u bytes to %u", r->t->text, h.length,
				 r->o->size);
			return len;
		}
		on_reply(r, &h, t_mono, t_app);
		off += h.length;
	}
	return dgram ? len : off;
}

static void crun_tx_timestamp(struct bp_conn *c, uint32_t key, uint64_t ns)
{
	struct crun *r = bp_conn_data(c);

	for (int i = 0; i < BD_RING; i++) {
		struct pp_bd_sample *s = &r->ring[i];

		if ((s->have & PP_HAVE_SENT) && !(s->have & PP_HAVE_TX) && s->key == key) {
			s->tx_ts = ns;
			s->have |= PP_HAVE_TX;
			bd_try_settle(r, s);
			return;
		}
	}
}

static void crun_drain(struct bp_conn *c)
{
	struct crun *r = bp_conn_data(c);

	/* io_uring: the send completed, so its timestamp is on the error queue now. */
	if (r->bd && bp_loop_mode(r->loop)->backend == BP_BACKEND_URING)
		bp_conn_read_tx_timestamps(c);
}

static void crun_connect(struct bp_conn *c)
{
	struct crun *r = bp_conn_data(c);
	int ret;

	if (r->o->priority >= 0 && bp_sock_set_priority(bp_conn_fd(c), r->o->priority)) {
		run_fail(r, -EPERM, "--priority %d: %s", r->o->priority, bp_last_error());
		return;
	}
	/* Now, not before: a TCP socket's OPT_ID counts from what is unacknowledged at this point. */
	if (r->bd && (ret = bp_conn_enable_timestamps(c)) != 0) {
		run_fail(r, ret, "timestamps: %s", bp_last_error());
		return;
	}
	run_worker_ready(&r->w);
}

/* crun_start - the go: the warm-up's count (or none), the first request. */
static void crun_start(struct run_worker *w)
{
	struct crun *r = (struct crun *)w;

	if (!r->warm_left)
		run_worker_measure(w);
	r->progress_ns = bp_now_ns();
	send_request(r);
}

/* crun_idle - the drain is over: the tail answered (or a stop cut it short). */
static bool crun_idle(struct run_worker *w)
{
	struct crun *r = (struct crun *)w;

	return w->interrupted || !r->tail;
}

static void crun_close(struct bp_conn *c, int err, const char *syscall)
{
	struct crun *r = bp_conn_data(c);

	r->conn = NULL;
	if (r->w.phase == RUN_DONE || r->w.phase == RUN_FAILED)
		return;
	if (err == -ECONNREFUSED)
		run_fail(r, err, "server %s refused the %s traffic; is `busypoll pingpong --server` running there?",
			 r->t->text, r->o->tcp ? "TCP" : "UDP");
	else if (err)
		run_fail(r, err, "%s to %s: %s", syscall, r->t->text, strerror(-err));
	else
		run_fail(r, -ECONNRESET, "server %s closed the connection mid-run", r->t->text);
}

static const struct bp_conn_ops crun_ops = {
	.on_recv = crun_recv,
	.on_connect = crun_connect,
	.on_drain = crun_drain,
	.on_close = crun_close,
	.on_tx_timestamp = crun_tx_timestamp,
};

/*
 * The watchdog, posted by the main thread when no round trip completed for a while:
 * resend a lost UDP request; give up after --timeout of silence. Not a loop timer:
 * a timer would put a timeout (an hrtimer) on every blocking wait and wake the loop
 * on its own; this costs nothing while round trips flow.
 */
static void crun_scan(struct bp_loop *loop, void *arg)
{
	struct crun *r = arg;
	uint64_t now = bp_now_ns();

	if (r->w.phase == RUN_DONE || r->w.phase == RUN_FAILED)
		return;
	if (now - r->progress_ns > r->timeout_ns) {
		run_fail(r, -ETIMEDOUT, "no reply from %s for %.3g s (--timeout)", r->t->text,
			 (double)r->timeout_ns / 1e9);
		return;
	}
	if (!r->o->tcp && r->outstanding && r->w.phase != RUN_SETUP &&
	    now - r->t_send_mono > UDP_RESEND_NS) {
		struct pp_bd_sample *s = r->bd ? bd_find(r, r->seq) : NULL;

		if (s)
			memset(s, 0, sizeof(*s)); /* a lost round trip has no breakdown */
		r->lost++;
		send_request(r);
	}
}

static int crun_setup(struct bp_loop *loop, void *arg)
{
	struct crun *r = arg;
	int ret;

	r->loop = loop;
	r->w.loop = loop;
	r->progress_ns = bp_now_ns();
	ev_name_thread("pp-client", 0);
	ret = bp_conn_connect(loop, (const struct sockaddr *)&r->t->addr, r->t->addrlen,
			      r->o->tcp ? SOCK_STREAM : SOCK_DGRAM, &crun_ops, r, &r->conn);
	return ret;
}

/* crun_teardown - on the thread at the join: the breakdown's last samples, the socket's NAPI id. */
static void crun_teardown(struct bp_loop *loop, void *arg)
{
	struct crun *r = arg;

	if (r->bd)
		bd_flush(r);
	if (r->conn)
		r->napi_id = bp_conn_napi_id(r->conn);
}

/* crun_watch - the main thread's look every WATCH_MS: a tick without a round trip makes the loop look. */
static void crun_watch(struct run *run)
{
	struct crun *r = run->tool;
	uint64_t now = run_units(run);

	if (now == r->watched)
		bp_loop_post(r->loop, crun_scan, r);
	r->watched = now;
}

static const struct run_ops crun_run_ops = { .start = crun_start, .idle = crun_idle, .watch = crun_watch };

/* ---- the run, from the calling thread ---- */

/* side_fill - the client's evidence over the run (warm-up included), in mode. */
static void side_fill(struct evidence *c, const struct crun *r, const struct bp_mode *mode,
		      const struct bp_kstats *k0, const struct bp_kstats *k1)
{
	memset(c, 0, sizeof(*c));
	if (!r->w.measured)
		return;
	c->valid = true;
	bp_mode_format(mode, c->mode, sizeof(c->mode));
	c->threads = 1;
	c->transactions = r->total;
	c->interval_ns = r->w.end.loop.ns - r->w.start.loop.ns;
	ev_add_interval(c, &r->w.start, &r->w.end);
	ev_add_kstats(c, k0, k1);
	ev_add_napi(c, r->napi_id);
}

int pp_client_run(const struct pp_opts *o, const struct pp_target *t, const struct bp_mode *mode,
		  volatile sig_atomic_t *stop, struct bp_hist *hist, struct pp_bd_acc *bd,
		  struct pp_run *run, char *err, size_t errlen)
{
	struct crun *r = calloc(1, sizeof(*r));
	struct run *drv = calloc(1, sizeof(*drv));
	struct bp_loop_thread *lt = NULL;
	struct bp_kstats k0 = { 0 }, k1 = { 0 };
	int ret;

	memset(run, 0, sizeof(*run));
	if (!r || !drv || !(r->req = calloc(1, o->size))) {
		if (r)
			free(r->req);
		free(r);
		free(drv);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	r->o = o;
	r->t = t;
	r->bd = bd != NULL;
	r->bdacc = bd;
	r->hist = hist;
	r->warm_left = o->warmup;
	r->meas_left = o->n;
	r->timeout_ns = (uint64_t)(o->timeout_s * 1e9);
	r->watched = UINT64_MAX;
	/*
	 * Sequence numbers start somewhere new each run, so nothing left over from an
	 * earlier run (a late reply, a send path the server still held) can pass for
	 * one of this run's.
	 */
	if (getrandom(&r->seq, sizeof(r->seq), GRND_NONBLOCK) != sizeof(r->seq))
		r->seq = bp_now_ns() * 0x9e3779b97f4a7c15ull;
	r->seq &= ~0ull >> 1; /* far from wrapping */
	/* Payload bytes after the header: a pattern, so a server that mangles them shows. */
	for (uint32_t i = BP_PP_HDR_LEN; i < o->size; i++)
		r->req[i] = (uint8_t)i;
	drv->w[0] = &r->w;
	ret = run_init(drv, &crun_run_ops, r, 1);
	if (ret) {
		snprintf(err, errlen, "eventfd: %s", strerror(-ret));
		goto out;
	}
	drv->flags = RUN_F_ALL_PHASES | RUN_F_TOOL_WARMUP; /* the server's START/STOP cover every round trip */
	drv->stop = stop;
	drv->watch_ms = WATCH_MS;
	drv->ready_timeout_ns = r->timeout_ns;
	bp_kstats_read(&k0);
	ret = bp_loop_thread_start(&lt, mode, o->cpu, crun_setup, r);
	if (ret) {
		snprintf(err, errlen, "%s", bp_last_error());
		goto out;
	}
	ret = run_drive(drv);
	bp_loop_thread_join(lt, crun_teardown, r);
	bp_kstats_read(&k1);
	side_fill(&run->client, r, mode, &k0, &k1);
	run->total = r->total;
	run->lost = r->lost;
	run->napi_id = r->napi_id;
	run->interrupted = drv->interrupted;
	if (ret == -ETIMEDOUT)
		snprintf(err, errlen, "no answer from %s within %.3g s (--timeout)", t->text, o->timeout_s);
	if (ret == -EIO || ret == 0) {
		int e = run_first_error(drv, err, errlen);

		ret = e ? e : ret;
	}
out:
	run_free(drv);
	free(drv);
	free(r->req);
	free(r);
	return ret;
}
