/* SPDX-License-Identifier: MIT */
/*
 * The io_uring backend: a completion backend. The core arms one receive per
 * connection (->recv), one send at a time (->send), and watches listeners and
 * the wake eventfd with polls (->add); ->wait submits what was queued, waits,
 * and turns CQEs into bp_events. The ring's setup and teardown are
 * uring_setup.c's, the mode families and probes uring_modes.c's.
 *
 * What each ring setup costs a spinning loop (the core calls ->wait(0) in a
 * tight loop for uring:spin, uring:sqpoll,spin and while uring:hybrid is hot):
 *
 *   setup=plain  no setup flags. Completions are posted by task work that the
 *                kernel pushes to us with an IPI, so a spinning task sees them
 *                in the CQ ring without entering the kernel: wait(0) is a pure
 *                userspace peek unless there is something to submit.
 *   setup=coop   SINGLE_ISSUER|COOP_TASKRUN. No IPI: task work waits until we
 *                next enter the kernel (or the next tick), so every spin
 *                iteration with an empty CQ must enter the kernel
 *                (io_uring_enter GETEVENTS) to run it: one syscall per spin.
 *   setup=defer  SINGLE_ISSUER|DEFER_TASKRUN. Completions are only posted when
 *                we enter the kernel asking for events: again one syscall per
 *                spin iteration with an empty CQ; blocking waits batch best.
 *   sqpoll       IORING_SETUP_SQPOLL: a kernel thread polls the SQ, runs the
 *                task work of what it issued and posts the completions, and
 *                burns a CPU while busy (up to idle=MS after the last
 *                submission); submissions need no syscall unless that thread
 *                went to sleep (IORING_SQ_NEED_WAKEUP). With spin the loop
 *                reaps the CQ ring in userspace: no syscall at all in steady
 *                state. With napi=USECS the SQ thread also busy polls.
 *
 * Receiving. Where the kernel has multishot recv and provided buffer rings
 * (URING_F_MULTISHOT), a stream conn gets ONE receive for its whole life: a
 * multishot recv that picks a buffer from the loop's ring (uring_bufs.c) per
 * completion and stays armed (IORING_CQE_F_MORE, passed on as BP_EVF_MORE), so
 * no SQE is spent per message. The bytes are lent to the core until the next
 * wait. When the kernel ends it (-ENOBUFS when the ring ran dry, or the CQ
 * overflowed), the core arms it again; the lent buffers are back before that
 * SQE goes out, and the socket keeps what it could not deliver, so no byte is
 * lost or reordered. Datagram conns and conns with timestamps keep a one-shot
 * recvmsg into the conn's own buffer (they need the name and the control data),
 * and so does everything when the kernel lacks the feature.
 *
 * Registered descriptors (URING_F_DIRECT): each conn's socket also sits in a
 * slot of the ring's file table (uring_slots.c) and its SQEs use the slot
 * (IOSQE_FIXED_FILE); the slot is emptied when the conn's last op is back.
 *
 * Kernel NAPI busy polling (uring:napi, uring:sqpoll,napi=N) is registered
 * once at setup with IORING_REGISTER_NAPI; the kernel then busy polls inside
 * io_uring_enter while it waits (or in the SQ thread).
 *
 * user_data: the bp_io pointer shifted left by 4, with the op in the low 4
 * bits. Shifting instead of or-ing into the pointer's low bits, because the
 * wake io is embedded in struct bp_loop at an offset that is only 4-aligned.
 * OP_AIO's pointer is a storage I/O (struct bp_aio, ->aio_submit): its CQE
 * becomes one BP_EV_AIO for the core, and it has no io to account.
 *
 * Ownership of an io: every op we submit for it adds 1 to io->inflight; its
 * last CQE (for a multishot op: the one without IORING_CQE_F_MORE) takes it
 * back before any event is made. ->del cancels by user_data (never by fd), and
 * the core closes a dead conn's fd and frees it only once inflight is 0: an
 * SQE still queued names the fd by number until it is submitted, so a number
 * closed and reused by the next accept would send this conn's bytes to
 * another peer (found by tests/integration/test_faults_rr). io->bstate holds
 * one bit per op kind in flight, so ->del knows exactly what to cancel, and
 * marks what it cancelled so that nothing more is delivered for it even when
 * the io stays alive (a listener paused after EMFILE is del'ed, then added
 * again). A CQE that carries a buffer for a dead or cancelled op gives the
 * buffer straight back.
 *
 * Syscall accounting: bl->ctr.syscalls counts io_uring_setup, io_uring_enter
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

#include "backends/uring.h"

/* ops, in the low 4 bits of user_data */
enum {
	OP_RECV = 1,    /* one-shot stream receive into the conn's buffer */
	OP_RECVMSG = 2, /* one-shot recvmsg: datagram or timestamped conns */
	OP_RECVM = 3,   /* multishot stream receive from the buffer ring */
	OP_SEND = 4,    /* stream send */
	OP_SENDMSG = 5, /* datagram send */
	OP_POLL = 6,    /* POLLIN: listener (one-shot), wake fd (multishot) */
	OP_POLLOUT = 7, /* one-shot POLLOUT: connect finished */
	OP_CANCEL = 8,  /* carries no io: its CQE is swallowed */
	OP_LAST = OP_CANCEL,
	OP_AIO = 9,     /* storage I/O: the pointer is a struct bp_aio, not an io */
};
#define OP_SHIFT 4
#define OP_MASK 15u
/* io->bstate: per op kind, at most one in flight */
#define OP_BIT(op) (1u << (op))               /* in flight */
#define CANCELLED_BIT(op) (1u << (10 + (op))) /* ->del cancelled it: swallow its CQEs */
#define REARM_BIT(op) (1u << (20 + (op)))     /* armed again while the cancelled one was out */
#define RECV_BITS (OP_BIT(OP_RECV) | OP_BIT(OP_RECVMSG) | OP_BIT(OP_RECVM))

static inline uint64_t encode_user_data(struct bp_io *io, unsigned op)
{
	return ((uint64_t)(uintptr_t)io << OP_SHIFT) | op;
}

static inline struct bp_io *user_data_io(uint64_t ud)
{
	return (struct bp_io *)(uintptr_t)(ud >> OP_SHIFT);
}

static inline unsigned user_data_op(uint64_t ud)
{
	return (unsigned)(ud & OP_MASK);
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

static inline int ring_start(struct bp_backend_loop *bl, struct uring *u)
{
	return u->started ? 0 : uring_start(bl, u);
}

/* submit_pending - hand queued SQEs to the kernel (no waiting). */
static int submit_pending(struct bp_backend_loop *bl, struct uring *u)
{
	int ret;

	ret = ring_start(bl, u);
	if (ret < 0)
		return ret;
	if (!io_uring_sq_ready(&u->ring) && !io_uring_cq_has_overflow(&u->ring))
		return 0;
	if (submit_enters(&u->ring))
		bl->ctr.syscalls++;
	ret = io_uring_submit(&u->ring);
	if (ret < 0 && ret != -EBUSY && ret != -EAGAIN && ret != -EINTR)
		return uring_enter_error(ret);
	return 0;
}

/*
 * get_sqe - a free SQE. The SQ only fills up after 1024 ops queued within one
 * loop iteration; then submit what is queued and take a fresh one.
 */
static struct io_uring_sqe *get_sqe(struct bp_backend_loop *bl, struct uring *u, int *err)
{
	struct io_uring_sqe *sqe;

	sqe = io_uring_get_sqe(&u->ring);
	for (int tries = 0; !sqe && tries < 2; tries++) {
		*err = submit_pending(bl, u);
		if (*err < 0)
			return NULL;
		/* SQPOLL: the kernel thread frees SQ slots only as it consumes them */
		if ((u->ring.flags & IORING_SETUP_SQPOLL) && !io_uring_sq_space_left(&u->ring)) {
			bl->ctr.syscalls++;
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

/* use_slot - a conn with a registered descriptor names it instead of its fd. */
static inline void use_slot(struct io_uring_sqe *sqe, const struct bp_io *io)
{
	if (io->bindex) {
		sqe->fd = (int)(io->bindex - 1);
		sqe->flags |= IOSQE_FIXED_FILE;
	}
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
static int arm_poll(struct bp_backend_loop *bl, struct uring *u, struct bp_io *io, unsigned op)
{
	struct io_uring_sqe *sqe;
	int err = 0;

	if (io->bstate & OP_BIT(op)) {
		if (io->bstate & CANCELLED_BIT(op))
			io->bstate |= REARM_BIT(op);
		return 0;
	}
	sqe = get_sqe(bl, u, &err);
	if (!sqe)
		return err;
	if (op == OP_POLL && io->kind != BP_IO_LISTENER)
		io_uring_prep_poll_multishot(sqe, io->fd, POLLIN);
	else if (op == OP_POLL)
		io_uring_prep_poll_add(sqe, io->fd, POLLIN);
	else
		io_uring_prep_poll_add(sqe, io->fd, POLLOUT);
	use_slot(sqe, io);
	track_op(u, sqe, io, op);
	return 0;
}

/* cancel_op - cancel the one op of this kind in flight for io. */
static int cancel_op(struct bp_backend_loop *bl, struct uring *u, struct bp_io *io, unsigned op)
{
	struct io_uring_sqe *sqe;
	int err = 0;

	sqe = get_sqe(bl, u, &err);
	if (!sqe)
		return err;
	io_uring_prep_cancel64(sqe, encode_user_data(io, op), 0);
	io_uring_sqe_set_data64(sqe, encode_user_data(NULL, OP_CANCEL));
	u->ops++;
	return 0;
}

/* ---- ops the core calls ---- */

static int uring_add(struct bp_backend_loop *bl, struct bp_io *io)
{
	struct uring *u = ring_of(bl);

	/* a conn gets its receive from ->recv; only listeners and the wake fd poll */
	if (io->kind == BP_IO_CONN) {
		io->bindex = 0;
		if (u->features & URING_F_DIRECT)
			uring_slots_attach(bl, &u->ring, &u->slots, io);
		return 0;
	}
	return arm_poll(bl, u, io, OP_POLL);
}

static int uring_want_write(struct bp_backend_loop *bl, struct bp_io *io, bool on)
{
	/* on=false: a one-shot poll stops by itself; nothing to take back */
	if (!on)
		return 0;
	return arm_poll(bl, ring_of(bl), io, OP_POLLOUT);
}

static int uring_recv(struct bp_backend_loop *bl, struct bp_io *io, const struct bp_recv *r)
{
	struct uring *u = ring_of(bl);
	struct io_uring_sqe *sqe;
	int err = 0;

	if (io->bstate & RECV_BITS)
		return bp_err_set(-EALREADY, "uring: receive already armed on fd %d", io->fd);
	/* a 0-byte stream receive would complete with 0, which reads as EOF */
	if (!r->msg && r->len == 0 && !u->bufs)
		return bp_err_set(-ENOBUFS, "uring: no room to receive on fd %d", io->fd);

	sqe = get_sqe(bl, u, &err);
	if (!sqe)
		return err;
	/* datagrams need the source address, timestamped conns the control data */
	if (r->msg) {
		io_uring_prep_recvmsg(sqe, io->fd, r->msg, 0);
		use_slot(sqe, io);
		track_op(u, sqe, io, OP_RECVMSG);
	} else if (u->bufs) {
		io_uring_prep_recv_multishot(sqe, io->fd, NULL, 0, 0);
		sqe->flags |= IOSQE_BUFFER_SELECT;
		sqe->buf_group = uring_bufs_group(u->bufs);
		use_slot(sqe, io);
		track_op(u, sqe, io, OP_RECVM);
	} else {
		io_uring_prep_recv(sqe, io->fd, r->buf, r->len, 0);
		use_slot(sqe, io);
		track_op(u, sqe, io, OP_RECV);
	}
	return 0;
}

static int uring_recv_stop(struct bp_backend_loop *bl, struct bp_io *io)
{
	unsigned op = (io->bstate & OP_BIT(OP_RECVM)) ? OP_RECVM : OP_RECV;
	int ret;

	/* not marked cancelled: its last CQE goes to the core, which re-arms */
	if (!(io->bstate & OP_BIT(op)) || (io->bstate & CANCELLED_BIT(op)))
		return 0;
	ret = cancel_op(bl, ring_of(bl), io, op);
	return ret < 0 ? ret : 1;
}

static int uring_send(struct bp_backend_loop *bl, struct bp_io *io, const void *buf, size_t len,
		      struct msghdr *msg)
{
	struct uring *u = ring_of(bl);
	struct io_uring_sqe *sqe;
	int err = 0;

	if (io->bstate & (OP_BIT(OP_SEND) | OP_BIT(OP_SENDMSG)))
		return bp_err_set(-EALREADY, "uring: send already in flight on fd %d", io->fd);

	sqe = get_sqe(bl, u, &err);
	if (!sqe)
		return err;
	if (msg) {
		io_uring_prep_sendmsg(sqe, io->fd, msg, MSG_NOSIGNAL);
		use_slot(sqe, io);
		track_op(u, sqe, io, OP_SENDMSG);
	} else {
		io_uring_prep_send(sqe, io->fd, buf, len, MSG_NOSIGNAL);
		use_slot(sqe, io);
		track_op(u, sqe, io, OP_SEND);
	}
	return 0;
}

/* A dead conn whose last op came back lets go of its registered descriptor. */
static void release_if_done(struct bp_backend_loop *bl, struct uring *u, struct bp_io *io)
{
	if (io->dead && !io->inflight && io->bindex)
		uring_slots_detach(bl, &u->ring, &u->slots, io);
}

static int uring_del(struct bp_backend_loop *bl, struct bp_io *io)
{
	struct uring *u = ring_of(bl);
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
		ret = cancel_op(bl, u, io, op);
		if (ret < 0)
			return ret;
	}
	release_if_done(bl, u, io);
	return 0;
}

/* uring_aio_submit - storage I/O on the loop's own ring, submitted with the next wait. */
static int uring_aio_submit(struct bp_backend_loop *bl, struct bp_aio *a)
{
	struct uring *u = ring_of(bl);
	struct io_uring_sqe *sqe;
	int err = 0;

	sqe = get_sqe(bl, u, &err);
	if (!sqe)
		return err;
	bp_aio_prep_sqe(sqe, a);
	io_uring_sqe_set_data64(sqe, ((uint64_t)(uintptr_t)a << OP_SHIFT) | OP_AIO);
	u->ops++;
	return 0;
}

static void uring_napi_seen(struct bp_backend_loop *bl, uint32_t napi_id)
{
	struct uring *u = ring_of(bl);
	struct bp_io_uring_napi napi;
	int ret;

	if (!u || !u->napi_static || napi_id < BP_MIN_NAPI_ID)
		return;
	memset(&napi, 0, sizeof(napi));
	napi.opcode = BP_NAPI_OP_STATIC_ADD;
	napi.op_param = napi_id;
	bl->ctr.syscalls++;
	ret = bp_uring_register_napi(u->ring.ring_fd, &napi);
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

static void push_event(struct bp_backend_loop *bl, struct bp_io *io, uint8_t kind,
		       uint32_t flags, int32_t res, const uint8_t *data)
{
	struct bp_event *ev = &bl->ev[bl->nev++];

	ev->io = io;
	ev->kind = kind;
	ev->flags = flags;
	ev->res = res;
	ev->data = data;
}

/* A multishot receive's completion: its bytes are lent to the core with the event. */
static void recv_multishot_done(struct bp_backend_loop *bl, struct uring *u, struct bp_io *io,
				const struct io_uring_cqe *cqe, bool more)
{
	const uint8_t *data = NULL;

	if (cqe->flags & IORING_CQE_F_BUFFER)
		data = uring_bufs_lend(u->bufs, (uint16_t)(cqe->flags >> IORING_CQE_BUFFER_SHIFT));
	push_event(bl, io, BP_EV_RECV, more ? BP_EVF_MORE : 0, cqe->res, data);
}

/* handle_cqe - account one CQE; maybe append one event. */
static void handle_cqe(struct bp_backend_loop *bl, struct uring *u, const struct io_uring_cqe *cqe)
{
	unsigned op = user_data_op(cqe->user_data);
	struct bp_io *io = user_data_io(cqe->user_data);
	bool more = cqe->flags & IORING_CQE_F_MORE;
	bool deliver;

	if (!more && u->ops)
		u->ops--;
	if (op == OP_AIO) {
		push_event(bl, NULL, BP_EV_AIO, 0, cqe->res, (const uint8_t *)(uintptr_t)(cqe->user_data >> OP_SHIFT));
		return;
	}
	if (op == OP_CANCEL || !io)
		return;
	if (!more) {
		io->inflight--;
		io->bstate &= ~OP_BIT(op);
	}
	deliver = !io->dead && !(io->bstate & CANCELLED_BIT(op));
	if (!deliver && (cqe->flags & IORING_CQE_F_BUFFER))
		uring_bufs_give_back(u->bufs, (uint16_t)(cqe->flags >> IORING_CQE_BUFFER_SHIFT));
	if (io->bstate & CANCELLED_BIT(op)) {
		/* ->del stopped it: nothing more for it, even if io lives on */
		if (more)
			return;
		io->bstate &= ~CANCELLED_BIT(op);
		if ((io->bstate & REARM_BIT(op)) && !io->dead) {
			io->bstate &= ~REARM_BIT(op);
			arm_poll(bl, u, io, op);
		}
		release_if_done(bl, u, io);
		return;
	}
	if (io->dead) {
		release_if_done(bl, u, io);
		return;
	}

	switch (op) {
	case OP_RECV:
	case OP_RECVMSG:
		push_event(bl, io, BP_EV_RECV, 0, cqe->res, NULL);
		break;
	case OP_RECVM:
		recv_multishot_done(bl, u, io, cqe, more);
		break;
	case OP_SEND:
	case OP_SENDMSG:
		push_event(bl, io, BP_EV_SEND, 0, cqe->res, NULL);
		break;
	case OP_POLL:
		push_event(bl, io, BP_EV_READABLE, poll_flags(cqe->res), cqe->res, NULL);
		/* a listener's one-shot poll, or a multishot the kernel ended (CQ overflow) */
		if (!more && cqe->res >= 0)
			arm_poll(bl, u, io, OP_POLL);
		break;
	case OP_POLLOUT:
		push_event(bl, io, BP_EV_WRITABLE, poll_flags(cqe->res), cqe->res, NULL);
		break;
	}
}

/* reap_cqes - turn CQEs into events while bl->ev has room; the rest waits. */
static int reap_cqes(struct bp_backend_loop *bl, struct uring *u)
{
	struct io_uring_cqe *cqe;
	unsigned head, seen = 0;
	int before = bl->nev;

	io_uring_for_each_cqe(&u->ring, head, cqe) {
		if (bl->nev >= BP_MAX_EVENTS)
			break;
		handle_cqe(bl, u, cqe);
		seen++;
	}
	io_uring_cq_advance(&u->ring, seen);
	return bl->nev - before;
}

/* uring_drain - (uring.h) the ios may be gone already: only our own op count is used. */
void uring_drain(struct bp_backend_loop *bl, struct uring *u)
{
	struct __kernel_timespec ts = { .tv_sec = 0, .tv_nsec = 20 * 1000 * 1000 };
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	unsigned head, seen;
	int err = 0;

	if (u->disabled || !u->ops)
		return;
	sqe = get_sqe(bl, u, &err);
	if (!sqe)
		return;
	io_uring_prep_cancel64(sqe, 0, IORING_ASYNC_CANCEL_ANY);
	io_uring_sqe_set_data64(sqe, encode_user_data(NULL, OP_CANCEL));
	u->ops++;

	for (int round = 0; u->ops && round < 10; round++) {
		int ret;

		bl->ctr.syscalls++;
		ret = io_uring_submit_and_wait_timeout(&u->ring, &cqe, 1, &ts, NULL);
		if (ret < 0 && ret != -ETIME && ret != -EINTR)
			break; /* e.g. -EEXIST: destroyed from another thread */
		seen = 0;
		io_uring_for_each_cqe(&u->ring, head, cqe) {
			if (!(cqe->flags & IORING_CQE_F_MORE) && u->ops)
				u->ops--;
			seen++;
		}
		io_uring_cq_advance(&u->ring, seen);
	}
}

/*
 * poll_ring - wait(0): submit, and on COOP/DEFER rings enter once to run the
 * task work that posts completions; plain and SQPOLL rings need no syscall
 * when nothing is queued.
 */
static int poll_ring(struct bp_backend_loop *bl, struct uring *u)
{
	int ret;

	if (u->deferred_tw && !io_uring_cq_ready(&u->ring)) {
		ret = ring_start(bl, u);
		if (ret < 0)
			return ret;
		bl->ctr.syscalls++;
		ret = io_uring_submit_and_get_events(&u->ring);
		if (ret < 0 && ret != -EINTR && ret != -EBUSY && ret != -EAGAIN)
			return uring_enter_error(ret);
		return 0;
	}
	return submit_pending(bl, u);
}

/* wait_ring - submit and sleep (or busy poll in the kernel) for one CQE. */
static int wait_ring(struct bp_backend_loop *bl, struct uring *u, int64_t timeout_ns)
{
	struct __kernel_timespec ts;
	struct io_uring_cqe *cqe;
	int ret;

	/* something to reap already: do not sleep, but do not hold SQEs back */
	if (io_uring_cq_ready(&u->ring))
		return submit_pending(bl, u);

	ret = ring_start(bl, u);
	if (ret < 0)
		return ret;
	bl->ctr.syscalls++;
	if (timeout_ns < 0) {
		/* exactly one io_uring_enter(to_submit, min_complete=1, GETEVENTS) */
		ret = io_uring_submit_and_wait(&u->ring, 1);
	} else {
		ts.tv_sec = timeout_ns / 1000000000;
		ts.tv_nsec = timeout_ns % 1000000000;
		ret = io_uring_submit_and_wait_timeout(&u->ring, &cqe, 1, &ts, NULL);
	}
	if (ret < 0 && ret != -ETIME && ret != -EINTR && ret != -EAGAIN && ret != -EBUSY)
		return uring_enter_error(ret);
	return 0;
}

static int uring_wait(struct bp_backend_loop *bl, int64_t timeout_ns)
{
	struct uring *u = ring_of(bl);
	int ret;

	/* The core is done with the last batch: its buffers go back before anything
	 * is submitted, so a receive re-armed after -ENOBUFS finds them. */
	if (u->bufs)
		uring_bufs_return_lent(u->bufs);
	if (bl->nev >= BP_MAX_EVENTS)
		ret = submit_pending(bl, u);
	else if (timeout_ns == 0)
		ret = poll_ring(bl, u);
	else
		ret = wait_ring(bl, u, timeout_ns);
	if (ret < 0)
		return ret;
	return reap_cqes(bl, u);
}

const struct bp_backend_ops bp_backend_uring = {
	.name = "uring",
	.kind = BP_BACKEND_URING,
	.completion = true,
	.families = bp_uring_families,
	.check = bp_uring_check,
	.features = bp_uring_feature_list,
	.init = uring_setup,
	.fini = uring_teardown,
	.add = uring_add,
	.want_write = uring_want_write,
	.recv = uring_recv,
	.recv_stop = uring_recv_stop,
	.send = uring_send,
	.del = uring_del,
	.wait = uring_wait,
	.napi_seen = uring_napi_seen,
	.kthreads = uring_kthreads,
	.aio_submit = uring_aio_submit,
};
