/* SPDX-License-Identifier: MIT */
/*
 * The io_uring backend: a completion backend. The core arms one receive per
 * connection (->recv), one send at a time (->send), and watches listeners and
 * the wake eventfd with multishot polls (->add); ->wait submits what was
 * queued, waits, and turns CQEs into bp_events.
 *
 * What each ring setup costs a spinning loop (the core calls ->wait(0) in a
 * tight loop for uring:spin and while uring:hybrid is hot):
 *
 *   setup=plain  no setup flags. Completions are posted by task work that the
 *                kernel pushes to us with an IPI, so a spinning task sees them
 *                in the CQ ring without entering the kernel: wait(0) is a pure
 *                userspace peek unless there is something to submit. This is
 *                what makes uring:spin cheap.
 *   setup=coop   SINGLE_ISSUER|COOP_TASKRUN. No IPI: task work waits until we
 *                next enter the kernel (or the next tick), so every spin
 *                iteration with an empty CQ must enter the kernel
 *                (io_uring_enter GETEVENTS) to run it: one syscall per spin.
 *   setup=defer  SINGLE_ISSUER|DEFER_TASKRUN. Completions are only posted when
 *                we enter the kernel asking for events: again one syscall per
 *                spin iteration with an empty CQ; blocking waits batch best.
 *   sqpoll       IORING_SETUP_SQPOLL (no other flags): a kernel thread polls
 *                the SQ and burns a CPU while busy (up to idle=MS after the
 *                last submission); submissions need no syscall unless that
 *                thread went to sleep. With napi=USECS the SQ thread also busy
 *                polls the NAPI instances of our sockets.
 *
 * Kernel NAPI busy polling (uring:napi, uring:sqpoll,napi=N) is registered
 * once at init with IORING_REGISTER_NAPI (raw syscall: liburing 2.3 has no
 * helper); the kernel then busy polls inside io_uring_enter while it waits.
 *
 * user_data: the bp_io pointer shifted left by 3, with the op in the low 3
 * bits. Shifting instead of or-ing into the pointer's low bits, because the
 * wake io is embedded in struct bp_loop at an offset that is only 4-aligned.
 * Op 0 is storage I/O (struct bp_aio, core/aio.c): its CQE goes straight back
 * to the core (bp_aio_complete), it never becomes a bp_event.
 *
 * Ownership of an io: every op we submit for it adds 1 to io->inflight; its
 * last CQE (for a multishot poll: the one without IORING_CQE_F_MORE) takes it
 * back before any event is made. ->del cancels by user_data (never by fd), and
 * the core closes a dead conn's fd and frees it only once inflight is 0: an
 * SQE still queued names the fd by number until it is submitted, so a number
 * closed and reused by the next accept would send this conn's bytes to
 * another peer (found by tests/integration/test_faults_rr). io->bstate holds one bit per op kind in flight, so ->del
 * knows exactly what to cancel, and marks what it cancelled so that nothing
 * more is delivered for it even when the io stays alive (a listener paused
 * after EMFILE is del'ed, then added again).
 *
 * Threads: COOP and DEFER rings are SINGLE_ISSUER, owned by one task. They
 * are created IORING_SETUP_R_DISABLED and enabled at the first submit or
 * wait, so they belong to the thread that runs the loop, not to the one that
 * created it (the echo test creates server loops on its main thread).
 *
 * Teardown: ->fini cancels whatever is still in flight and waits briefly for
 * it, so the kernel writes into no receive buffer once the core frees it.
 *
 * Syscall accounting: loop->ctr.syscalls counts io_uring_setup, io_uring_enter
 * and io_uring_register calls that really happen. liburing decides by itself
 * whether io_uring_submit enters; submit_enters() mirrors its test (with
 * SQPOLL the SQ thread may fall asleep between the two looks, so that count
 * can be one short now and then).
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <liburing.h>

#include "core/internal.h"

#define URING_SQ_ENTRIES 1024
#define URING_CQ_ENTRIES 4096

/* ops, in the low 3 bits of user_data */
enum {
	OP_AIO = 0,     /* storage I/O: the pointer is a struct bp_aio, not a bp_io */
	OP_RECV = 1,    /* stream receive into rbuf */
	OP_RECVMSG = 2, /* receive with c->rmsg: datagram or timestamped conns */
	OP_SEND = 3,    /* stream send */
	OP_SENDMSG = 4, /* datagram send with c->smsg */
	OP_POLL = 5,    /* multishot POLLIN: listener, wake fd */
	OP_POLLOUT = 6, /* one-shot POLLOUT: connect finished */
	OP_CANCEL = 7,  /* carries no io: its CQE is swallowed */
};
#define OP_MASK 7u
/* io->bstate: per op kind, at most one in flight */
#define OP_BIT(op) (1u << (op))               /* in flight */
#define CANCELLED_BIT(op) (1u << (8 + (op)))  /* ->del cancelled it: swallow its CQEs */
#define REARM_BIT(op) (1u << (16 + (op)))     /* armed again while the cancelled one was out */

struct uring {
	struct io_uring ring;
	unsigned ops;          /* ops submitted or queued, CQE not yet seen */
	bool disabled;         /* created R_DISABLED, enabled on first use */
	bool deferred_tw;      /* COOP/DEFER: completions need an enter to show up */
	bool napi_static;      /* static NAPI tracking: napi_seen adds ids */
};

static inline struct uring *ring_of(struct bp_loop *loop)
{
	return loop->backend_data;
}

static inline uint64_t encode_user_data(struct bp_io *io, unsigned op)
{
	return ((uint64_t)(uintptr_t)io << 3) | op;
}

static inline struct bp_io *user_data_io(uint64_t ud)
{
	return (struct bp_io *)(uintptr_t)(ud >> 3);
}

static inline unsigned user_data_op(uint64_t ud)
{
	return (unsigned)(ud & OP_MASK);
}

/*
 * ring_register - io_uring_register(2) by hand: liburing 2.3 has no NAPI
 * helper, and its io_uring_enable_rings() is declared but not exported.
 */
static int ring_register(struct bp_loop *loop, struct uring *u, unsigned opcode,
			 void *arg, unsigned nr_args)
{
	loop->ctr.syscalls++;
	if (syscall(__NR_io_uring_register, u->ring.ring_fd, opcode, arg, nr_args) < 0)
		return -errno;
	return 0;
}

/* enter_error - an io_uring_enter failure, named; -EEXIST has a known cause. */
static int enter_error(int err)
{
	if (err == -EEXIST)
		return bp_err_set(err, "io_uring_enter: SINGLE_ISSUER ring used from a thread "
				  "other than the one that runs the loop");
	return bp_err_sys("io_uring_enter", err);
}

/* ---- submission ---- */

/*
 * Would io_uring_submit() enter the kernel now? The same test liburing makes:
 * a CQ overflow to flush always enters; otherwise only pending SQEs do, and on
 * an SQPOLL ring only when the SQ thread sleeps.
 */
static bool submit_enters(const struct io_uring *ring)
{
	unsigned kflags;

	io_uring_smp_mb();
	kflags = IO_URING_READ_ONCE(*ring->sq.kflags);
	if (kflags & (IORING_SQ_CQ_OVERFLOW | IORING_SQ_TASKRUN))
		return true;
	if (!io_uring_sq_ready(ring))
		return false;
	if (!(ring->flags & IORING_SETUP_SQPOLL))
		return true;
	return kflags & IORING_SQ_NEED_WAKEUP;
}

/*
 * A SINGLE_ISSUER ring belongs to the task that enables it. The ring is made
 * disabled and enabled here, on first use, so that it belongs to the thread
 * that runs the loop even if another thread created the loop.
 */
static int enable_ring(struct bp_loop *loop, struct uring *u)
{
	int ret;

	if (!u->disabled)
		return 0;
	ret = ring_register(loop, u, IORING_REGISTER_ENABLE_RINGS, NULL, 0);
	if (ret < 0)
		return bp_err_sys("io_uring_register", ret);
	u->disabled = false;
	return 0;
}

/* submit_pending - hand queued SQEs to the kernel (no waiting). */
static int submit_pending(struct bp_loop *loop, struct uring *u)
{
	int ret;

	ret = enable_ring(loop, u);
	if (ret < 0)
		return ret;
	if (!io_uring_sq_ready(&u->ring) && !io_uring_cq_has_overflow(&u->ring))
		return 0;
	if (submit_enters(&u->ring))
		loop->ctr.syscalls++;
	ret = io_uring_submit(&u->ring);
	if (ret < 0 && ret != -EBUSY && ret != -EAGAIN && ret != -EINTR)
		return enter_error(ret);
	return 0;
}

/*
 * get_sqe - a free SQE. The SQ only fills up after 1024 ops queued within one
 * loop iteration; then submit what is queued and take a fresh one.
 */
static struct io_uring_sqe *get_sqe(struct bp_loop *loop, struct uring *u, int *err)
{
	struct io_uring_sqe *sqe;

	sqe = io_uring_get_sqe(&u->ring);
	for (int tries = 0; !sqe && tries < 2; tries++) {
		*err = submit_pending(loop, u);
		if (*err < 0)
			return NULL;
		/* SQPOLL: the kernel thread frees SQ slots only as it consumes them */
		if ((u->ring.flags & IORING_SETUP_SQPOLL) && !io_uring_sq_space_left(&u->ring)) {
			loop->ctr.syscalls++;
			io_uring_sqring_wait(&u->ring);
		}
		sqe = io_uring_get_sqe(&u->ring);
	}
	if (!sqe)
		*err = bp_err_set(-EBUSY, "io_uring: submission queue full");
	return sqe;
}

/* track_op - tag the SQE with io and op, and account it as in flight. */
static void track_op(struct uring *u, struct io_uring_sqe *sqe, struct bp_io *io,
		     unsigned op)
{
	io_uring_sqe_set_data64(sqe, encode_user_data(io, op));
	io->inflight++;
	io->bstate |= OP_BIT(op);
	u->ops++;
}

/*
 * arm_poll - OP_POLL: POLLIN on a listener or the wake fd, re-armed after
 * each CQE that lacks IORING_CQE_F_MORE; OP_POLLOUT: one POLLOUT (connect
 * finished). Arming what is armed already does nothing; if ->del cancelled it
 * and its CQE is not back yet, arm again once it is.
 *
 * The wake fd gets a multishot poll: the core drains the eventfd on every
 * event, so one CQE per wake-up is all it needs, with no SQE per event.
 * A listener gets a one-shot poll instead, because the core accepts at most a
 * batch per event and relies on READABLE being level-triggered: a multishot
 * poll posts one CQE per wake-up, and wake-ups that arrive together (a burst
 * of connects; on DEFER_TASKRUN rings all of them between two waits) fold
 * into one CQE, stranding the rest of the backlog until the next connect.
 * The re-armed one-shot poll is submitted with the next wait, after the core
 * has accepted, so it fires at once if the backlog is not empty: level.
 */
static int arm_poll(struct bp_loop *loop, struct uring *u, struct bp_io *io, unsigned op)
{
	struct io_uring_sqe *sqe;
	int err = 0;

	if (io->bstate & OP_BIT(op)) {
		if (io->bstate & CANCELLED_BIT(op))
			io->bstate |= REARM_BIT(op);
		return 0;
	}
	sqe = get_sqe(loop, u, &err);
	if (!sqe)
		return err;
	if (op == OP_POLL && io->kind != BP_IO_LISTENER)
		io_uring_prep_poll_multishot(sqe, io->fd, POLLIN);
	else if (op == OP_POLL)
		io_uring_prep_poll_add(sqe, io->fd, POLLIN);
	else
		io_uring_prep_poll_add(sqe, io->fd, POLLOUT);
	track_op(u, sqe, io, op);
	return 0;
}

/* cancel_op - cancel the one op of this kind in flight for io. */
static int cancel_op(struct bp_loop *loop, struct uring *u, struct bp_io *io, unsigned op)
{
	struct io_uring_sqe *sqe;
	int err = 0;

	sqe = get_sqe(loop, u, &err);
	if (!sqe)
		return err;
	io_uring_prep_cancel64(sqe, encode_user_data(io, op), 0);
	io_uring_sqe_set_data64(sqe, encode_user_data(NULL, OP_CANCEL));
	u->ops++;
	return 0;
}

/* ---- setup ---- */

static unsigned setup_flags(const struct bp_mode *mode)
{
	if (mode->policy == BP_POLICY_SQPOLL)
		return IORING_SETUP_SQPOLL;
	switch (mode->setup) {
	case BP_URING_SETUP_COOP:
		return IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_COOP_TASKRUN;
	case BP_URING_SETUP_DEFER:
		return IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
	case BP_URING_SETUP_PLAIN:
	default:
		return 0;
	}
}

static const char *setup_name(const struct bp_mode *mode)
{
	if (mode->policy == BP_POLICY_SQPOLL)
		return "sqpoll";
	switch (mode->setup) {
	case BP_URING_SETUP_COOP:
		return "setup=coop (SINGLE_ISSUER|COOP_TASKRUN, Linux 6.0)";
	case BP_URING_SETUP_DEFER:
		return "setup=defer (SINGLE_ISSUER|DEFER_TASKRUN, Linux 6.1)";
	default:
		return "setup=plain";
	}
}

static int setup_ring(struct bp_loop *loop, struct uring *u)
{
	const struct bp_mode *mode = &loop->mode;
	struct io_uring_params p;
	int ret;

	memset(&p, 0, sizeof(p));
	p.flags = setup_flags(mode) | IORING_SETUP_CQSIZE;
	p.cq_entries = URING_CQ_ENTRIES;
	if (p.flags & IORING_SETUP_SQPOLL)
		p.sq_thread_idle = mode->sq_idle_ms;
	if (p.flags & IORING_SETUP_SINGLE_ISSUER)
		p.flags |= IORING_SETUP_R_DISABLED;

	loop->ctr.syscalls++;
	ret = io_uring_queue_init_params(URING_SQ_ENTRIES, &u->ring, &p);
	if (ret == -EINVAL)
		return bp_err_set(-EOPNOTSUPP, "uring %s: io_uring_setup: ring flags not supported by this kernel",
				  setup_name(mode));
	if (ret == -EPERM)
		return bp_err_set(-EPERM, "uring %s: io_uring_setup: not permitted (kernel.io_uring_disabled?)",
				  setup_name(mode));
	if (ret < 0)
		return bp_err_sys("io_uring_setup", ret);
	u->disabled = p.flags & IORING_SETUP_R_DISABLED;
	u->deferred_tw = p.flags & (IORING_SETUP_COOP_TASKRUN | IORING_SETUP_DEFER_TASKRUN);
	return 0;
}

/* napi_register - IORING_REGISTER_NAPI (nr_args must be 1); the old settings come back in *napi. */
static int napi_register(struct bp_loop *loop, struct uring *u, struct bp_io_uring_napi *napi)
{
	return ring_register(loop, u, IORING_REGISTER_NAPI, napi, 1);
}

static int setup_napi(struct bp_loop *loop, struct uring *u)
{
	const struct bp_mode *mode = &loop->mode;
	bool track_static = mode->tracking == BP_TRACKING_STATIC;
	struct bp_io_uring_napi napi;
	int ret;

	memset(&napi, 0, sizeof(napi));
	napi.busy_poll_to = mode->busy_usecs;
	napi.prefer_busy_poll = mode->prefer ? 1 : 0;
	napi.opcode = BP_NAPI_OP_REGISTER;
	napi.op_param = track_static ? BP_NAPI_TRACK_STATIC : BP_NAPI_TRACK_DYNAMIC;

	ret = napi_register(loop, u, &napi);
	if (ret == -EINVAL)
		return bp_err_set(-EOPNOTSUPP,
				  "uring napi: IORING_REGISTER_NAPI%s not supported by this kernel (needs Linux %s)",
				  track_static ? " with tracking=static" : "",
				  track_static ? "6.13" : "6.9");
	if (ret == -EPERM)
		return bp_err_set(-EPERM, "uring napi: IORING_REGISTER_NAPI: not permitted");
	if (ret < 0)
		return bp_err_sys("io_uring_register", ret);
	u->napi_static = track_static;
	return 0;
}

static bool wants_napi(const struct bp_mode *mode)
{
	return mode->policy == BP_POLICY_NAPI ||
	       (mode->policy == BP_POLICY_SQPOLL && mode->busy_usecs > 0);
}

static int uring_init(struct bp_loop *loop)
{
	struct uring *u;
	int ret;

	if (loop->mode.policy == BP_POLICY_SUSPEND)
		return bp_err_set(-EOPNOTSUPP, "uring:suspend: IRQ suspension is an epoll mode");

	u = calloc(1, sizeof(*u));
	if (!u)
		return bp_err_set(-ENOMEM, "uring: out of memory");
	ret = setup_ring(loop, u);
	if (ret < 0) {
		free(u);
		return ret;
	}
	if (wants_napi(&loop->mode)) {
		ret = setup_napi(loop, u);
		if (ret < 0) {
			io_uring_queue_exit(&u->ring);
			free(u);
			return ret;
		}
	}
	loop->backend_data = u;
	return 0;
}

/*
 * drain_ring - cancel whatever is still in flight and wait (briefly) for it to
 * come back, so the kernel writes into no receive buffer after we return. The
 * ios may be gone already: only our own op count is used.
 */
static void drain_ring(struct bp_loop *loop, struct uring *u)
{
	struct __kernel_timespec ts = { .tv_sec = 0, .tv_nsec = 20 * 1000 * 1000 };
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	unsigned head, seen;
	int err = 0;

	if (u->disabled || !u->ops)
		return;
	sqe = get_sqe(loop, u, &err);
	if (!sqe)
		return;
	io_uring_prep_cancel64(sqe, 0, IORING_ASYNC_CANCEL_ANY);
	io_uring_sqe_set_data64(sqe, encode_user_data(NULL, OP_CANCEL));
	u->ops++;

	for (int round = 0; u->ops && round < 10; round++) {
		int ret;

		loop->ctr.syscalls++;
		ret = io_uring_submit_and_wait_timeout(&u->ring, &cqe, 1, &ts, NULL);
		if (ret < 0 && ret != -ETIME && ret != -EINTR)
			break; /* e.g. -EEXIST: destroyed from another thread */
		seen = 0;
		io_uring_for_each_cqe(&u->ring, head, cqe) {
			bool more = user_data_op(cqe->user_data) == OP_POLL &&
				    (cqe->flags & IORING_CQE_F_MORE);
			if (!more && u->ops)
				u->ops--;
			seen++;
		}
		io_uring_cq_advance(&u->ring, seen);
	}
}

static void uring_fini(struct bp_loop *loop)
{
	struct uring *u = ring_of(loop);

	if (!u)
		return;
	drain_ring(loop, u);
	io_uring_queue_exit(&u->ring);
	free(u);
	loop->backend_data = NULL;
}

/* ---- ops the core calls ---- */

static int uring_add(struct bp_loop *loop, struct bp_io *io)
{
	/* a conn gets its receive from ->recv; only listeners and the wake fd poll */
	if (io->kind == BP_IO_CONN)
		return 0;
	return arm_poll(loop, ring_of(loop), io, OP_POLL);
}

static int uring_want_write(struct bp_loop *loop, struct bp_io *io, bool on)
{
	/* on=false: a one-shot poll stops by itself; nothing to take back */
	if (!on)
		return 0;
	return arm_poll(loop, ring_of(loop), io, OP_POLLOUT);
}

static int uring_recv(struct bp_loop *loop, struct bp_conn *c)
{
	struct uring *u = ring_of(loop);
	struct io_uring_sqe *sqe;
	int err = 0;

	if (c->io.bstate & (OP_BIT(OP_RECV) | OP_BIT(OP_RECVMSG)))
		return bp_err_set(-EALREADY, "uring: receive already armed on fd %d", c->io.fd);
	/* a 0-byte stream receive would complete with 0, which reads as EOF */
	if (!(c->flags & BP_CONN_DGRAM) && c->rlen >= c->rcap)
		return bp_err_set(-ENOBUFS, "uring: no room to receive on fd %d", c->io.fd);

	sqe = get_sqe(loop, u, &err);
	if (!sqe)
		return err;
	/* datagrams need the source address, timestamped conns the control data */
	if (c->flags & (BP_CONN_DGRAM | BP_CONN_TIMESTAMPS)) {
		io_uring_prep_recvmsg(sqe, c->io.fd, &c->rmsg, 0);
		track_op(u, sqe, &c->io, OP_RECVMSG);
	} else {
		io_uring_prep_recv(sqe, c->io.fd, c->rbuf + c->rlen, c->rcap - c->rlen, 0);
		track_op(u, sqe, &c->io, OP_RECV);
	}
	return 0;
}

static int uring_send(struct bp_loop *loop, struct bp_conn *c, const void *buf, size_t len)
{
	struct uring *u = ring_of(loop);
	struct io_uring_sqe *sqe;
	int err = 0;

	if (c->io.bstate & (OP_BIT(OP_SEND) | OP_BIT(OP_SENDMSG)))
		return bp_err_set(-EALREADY, "uring: send already in flight on fd %d", c->io.fd);

	sqe = get_sqe(loop, u, &err);
	if (!sqe)
		return err;
	if (!buf) {
		io_uring_prep_sendmsg(sqe, c->io.fd, &c->smsg, MSG_NOSIGNAL);
		track_op(u, sqe, &c->io, OP_SENDMSG);
	} else {
		io_uring_prep_send(sqe, c->io.fd, buf, len, MSG_NOSIGNAL);
		track_op(u, sqe, &c->io, OP_SEND);
	}
	return 0;
}

static int uring_del(struct bp_loop *loop, struct bp_io *io)
{
	struct uring *u = ring_of(loop);
	int ret;

	/*
	 * The cancels go out with the next submit, behind any op still queued for
	 * io; they match by user_data, not by fd. A conn's fd stays open until all
	 * of them are back (conn_teardown), so no queued op can reach a new socket
	 * that got the same number.
	 */
	for (unsigned op = OP_RECV; op < OP_CANCEL; op++) {
		io->bstate &= ~REARM_BIT(op);
		if (!(io->bstate & OP_BIT(op)) || (io->bstate & CANCELLED_BIT(op)))
			continue;
		io->bstate |= CANCELLED_BIT(op);
		ret = cancel_op(loop, u, io, op);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* uring_aio_submit - storage I/O on the loop's own ring, submitted with the next wait. */
static int uring_aio_submit(struct bp_loop *loop, struct bp_aio *a)
{
	struct uring *u = ring_of(loop);
	struct io_uring_sqe *sqe;
	int err = 0;

	sqe = get_sqe(loop, u, &err);
	if (!sqe)
		return err;
	bp_aio_prep_sqe(sqe, a);
	io_uring_sqe_set_data64(sqe, ((uint64_t)(uintptr_t)a << 3) | OP_AIO);
	u->ops++;
	return 0;
}

static void uring_napi_seen(struct bp_loop *loop, uint32_t napi_id)
{
	struct uring *u = ring_of(loop);
	struct bp_io_uring_napi napi;
	int ret;

	if (!u || !u->napi_static || napi_id < BP_MIN_NAPI_ID)
		return;
	memset(&napi, 0, sizeof(napi));
	napi.opcode = BP_NAPI_OP_STATIC_ADD;
	napi.op_param = napi_id;
	ret = napi_register(loop, u, &napi);
	if (ret < 0 && ret != -EEXIST)
		bp_err_sys("io_uring_register", ret);
}

/* ---- completions ---- */

static uint32_t poll_flags(int32_t res)
{
	uint32_t flags = 0;

	if (res < 0)
		return BP_EVF_ERR;
	if (res & POLLHUP)
		flags |= BP_EVF_HUP;
	if (res & POLLERR)
		flags |= BP_EVF_ERR;
	return flags;
}

static void push_event(struct bp_loop *loop, struct bp_io *io, uint8_t kind,
		       uint32_t flags, int32_t res)
{
	struct bp_event *ev = &loop->ev[loop->nev++];

	ev->io = io;
	ev->kind = kind;
	ev->flags = flags;
	ev->res = res;
}

/* handle_cqe - account one CQE; maybe append one event. */
static void handle_cqe(struct bp_loop *loop, struct uring *u, const struct io_uring_cqe *cqe)
{
	unsigned op = user_data_op(cqe->user_data);
	struct bp_io *io = user_data_io(cqe->user_data);
	bool more = op == OP_POLL && (cqe->flags & IORING_CQE_F_MORE);

	if (!more && u->ops)
		u->ops--;
	if (op == OP_AIO) {
		bp_aio_complete(loop, (struct bp_aio *)(uintptr_t)(cqe->user_data >> 3), cqe->res);
		return;
	}
	if (op == OP_CANCEL || !io)
		return;
	if (!more) {
		io->inflight--;
		io->bstate &= ~OP_BIT(op);
	}
	if (io->bstate & CANCELLED_BIT(op)) {
		/* ->del stopped it: nothing more for it, even if io lives on */
		if (more)
			return;
		io->bstate &= ~CANCELLED_BIT(op);
		if ((io->bstate & REARM_BIT(op)) && !io->dead) {
			io->bstate &= ~REARM_BIT(op);
			arm_poll(loop, u, io, op);
		}
		return;
	}
	if (io->dead)
		return;

	switch (op) {
	case OP_RECV:
	case OP_RECVMSG:
		push_event(loop, io, BP_EV_RECV, 0, cqe->res);
		break;
	case OP_SEND:
	case OP_SENDMSG:
		push_event(loop, io, BP_EV_SEND, 0, cqe->res);
		break;
	case OP_POLL:
		push_event(loop, io, BP_EV_READABLE, poll_flags(cqe->res), cqe->res);
		/* a listener's one-shot poll, or a multishot the kernel ended (CQ overflow) */
		if (!more && cqe->res >= 0)
			arm_poll(loop, u, io, OP_POLL);
		break;
	case OP_POLLOUT:
		push_event(loop, io, BP_EV_WRITABLE, poll_flags(cqe->res), cqe->res);
		break;
	}
}

/* reap_cqes - turn CQEs into events while loop->ev has room; the rest waits. */
static int reap_cqes(struct bp_loop *loop, struct uring *u)
{
	struct io_uring_cqe *cqe;
	unsigned head, seen = 0;
	int before = loop->nev;

	io_uring_for_each_cqe(&u->ring, head, cqe) {
		if (loop->nev >= BP_MAX_EVENTS)
			break;
		handle_cqe(loop, u, cqe);
		seen++;
	}
	io_uring_cq_advance(&u->ring, seen);
	return loop->nev - before;
}

/*
 * poll_ring - wait(0): submit, and on COOP/DEFER rings enter once to run the
 * task work that posts completions; plain and SQPOLL rings need no syscall
 * when nothing is queued.
 */
static int poll_ring(struct bp_loop *loop, struct uring *u)
{
	int ret;

	if (u->deferred_tw && !io_uring_cq_ready(&u->ring)) {
		ret = enable_ring(loop, u);
		if (ret < 0)
			return ret;
		loop->ctr.syscalls++;
		ret = io_uring_submit_and_get_events(&u->ring);
		if (ret < 0 && ret != -EINTR && ret != -EBUSY && ret != -EAGAIN)
			return enter_error(ret);
		return 0;
	}
	return submit_pending(loop, u);
}

/* wait_ring - submit and sleep (or busy poll in the kernel) for one CQE. */
static int wait_ring(struct bp_loop *loop, struct uring *u, int64_t timeout_ns)
{
	struct __kernel_timespec ts;
	struct io_uring_cqe *cqe;
	int ret;

	/* something to reap already: do not sleep, but do not hold SQEs back */
	if (io_uring_cq_ready(&u->ring))
		return submit_pending(loop, u);

	ret = enable_ring(loop, u);
	if (ret < 0)
		return ret;
	loop->ctr.syscalls++;
	if (timeout_ns < 0) {
		/* exactly one io_uring_enter(to_submit, min_complete=1, GETEVENTS) */
		ret = io_uring_submit_and_wait(&u->ring, 1);
	} else {
		ts.tv_sec = timeout_ns / 1000000000;
		ts.tv_nsec = timeout_ns % 1000000000;
		ret = io_uring_submit_and_wait_timeout(&u->ring, &cqe, 1, &ts, NULL);
	}
	if (ret < 0 && ret != -ETIME && ret != -EINTR && ret != -EAGAIN && ret != -EBUSY)
		return enter_error(ret);
	return 0;
}

static int uring_wait(struct bp_loop *loop, int64_t timeout_ns)
{
	struct uring *u = ring_of(loop);
	int ret;

	if (loop->nev >= BP_MAX_EVENTS)
		ret = submit_pending(loop, u);
	else if (timeout_ns == 0)
		ret = poll_ring(loop, u);
	else
		ret = wait_ring(loop, u, timeout_ns);
	if (ret < 0)
		return ret;
	return reap_cqes(loop, u);
}

const struct bp_backend_ops bp_backend_uring = {
	.name = "uring",
	.completion = true,
	.init = uring_init,
	.fini = uring_fini,
	.add = uring_add,
	.want_write = uring_want_write,
	.recv = uring_recv,
	.send = uring_send,
	.del = uring_del,
	.wait = uring_wait,
	.napi_seen = uring_napi_seen,
	.aio_submit = uring_aio_submit,
};
