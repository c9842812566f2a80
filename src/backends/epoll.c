/* SPDX-License-Identifier: MIT */
/*
 * The epoll backend: a readiness backend. It only gathers events; the core does
 * the recv/send/accept. Kernel busy polling is configured per epoll instance with
 * EPIOCSPARAMS (Linux 6.9), so it covers exactly the fds of this loop, which the
 * placer keeps to one NAPI id.
 *
 * Level-triggered on purpose: the core may stop reading before EAGAIN to stay fair,
 * and level triggering brings it back without a lost wake-up.
 */
#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <busypoll/napi.h>

#include "backends/epoll.h"

#define IO_OUT_ARMED 1u /* io->bstate: EPOLLOUT is in the interest set */

static struct epoll_backend *eb(struct bp_backend_loop *bl)
{
	return bl->data;
}

int bp_epoll_set_params(int epfd, uint32_t usecs, uint16_t budget, uint8_t prefer)
{
	struct epoll_params p = { .busy_poll_usecs = usecs, .busy_poll_budget = budget,
				  .prefer_busy_poll = prefer };

	return ioctl(epfd, EPIOCSPARAMS, &p) ? -errno : 0;
}

/* Busy-poll parameters for this epoll instance, per the mode. */
static int epoll_set_params(struct bp_backend_loop *bl)
{
	const struct bp_mode *m = &bl->mode;
	uint8_t prefer;
	int err;

	if (m->policy == BP_POLICY_NAPI)
		prefer = m->prefer;
	else if (m->policy == BP_POLICY_SUSPEND)
		prefer = 1; /* IRQ suspension is driven by prefer_busy_poll (napi.rst) */
	else
		return 0;
	bl->ctr.syscalls++;
	err = bp_epoll_set_params(eb(bl)->epfd, m->busy_usecs, m->budget, prefer);
	if (err == -EPERM)
		return bp_err_set(-EPERM, "%s,budget=%u needs CAP_NET_ADMIN", bp_mode_name(m),
				  (unsigned)m->budget);
	if (err == -ENOTTY || err == -EINVAL)
		return bp_err_set(-EOPNOTSUPP, "%s needs EPIOCSPARAMS (Linux 6.9); this kernel lacks it",
				  bp_mode_name(m));
	if (err)
		return bp_err_sys("ioctl(EPIOCSPARAMS)", err);
	return 0;
}

int bp_epoll_open(struct bp_backend_loop *bl, struct epoll_backend *b)
{
	int ret;

	b->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (b->epfd < 0)
		return bp_err_sys("epoll_create1", -errno);
	bl->data = b;
	ret = epoll_set_params(bl);
	if (ret) {
		close(b->epfd);
		b->epfd = -1;
		bl->data = NULL;
	}
	return ret;
}

static int epoll_init(struct bp_backend_loop *bl)
{
	struct epoll_backend *b = calloc(1, sizeof(*b));
	int ret;

	if (!b)
		return bp_err_set(-ENOMEM, "epoll backend: out of memory");
	ret = bp_epoll_open(bl, b);
	if (ret)
		free(b);
	return ret;
}

static void epoll_fini(struct bp_backend_loop *bl)
{
	struct epoll_backend *b = eb(bl);

	if (!b)
		return;
	close(b->epfd);
	free(b);
	bl->data = NULL;
}

static int epoll_ctl_io(struct bp_backend_loop *bl, int op, struct bp_io *io)
{
	struct epoll_event ev = { .data.ptr = io };

	ev.events = EPOLLIN;
	if (io->kind == BP_IO_CONN)
		ev.events |= EPOLLRDHUP;
	if (io->bstate & IO_OUT_ARMED)
		ev.events |= EPOLLOUT;
	bl->ctr.syscalls++;
	if (epoll_ctl(eb(bl)->epfd, op, io->fd, op == EPOLL_CTL_DEL ? NULL : &ev) < 0)
		return bp_err_sys("epoll_ctl", -errno);
	return 0;
}

static int epoll_add(struct bp_backend_loop *bl, struct bp_io *io)
{
	io->bstate = 0;
	return epoll_ctl_io(bl, EPOLL_CTL_ADD, io);
}

static int epoll_want_write(struct bp_backend_loop *bl, struct bp_io *io, bool on)
{
	if (!!(io->bstate & IO_OUT_ARMED) == on)
		return 0;
	if (on)
		io->bstate |= IO_OUT_ARMED;
	else
		io->bstate &= ~IO_OUT_ARMED;
	return epoll_ctl_io(bl, EPOLL_CTL_MOD, io);
}

static int epoll_del(struct bp_backend_loop *bl, struct bp_io *io)
{
	/* Closing the fd removes it too; an explicit DEL keeps a paused listener quiet. */
	if (io->kind == BP_IO_CONN)
		return 0;
	return epoll_ctl_io(bl, EPOLL_CTL_DEL, io);
}

/*
 * epoll_pwait2 (Linux 5.11) for its ns timeout; without it (ENOSYS: an older kernel,
 * or valgrind 3.19, which does not know syscall 441) epoll_pwait with the timeout
 * rounded up to ms, so that a timer is late by under a ms rather than early.
 */
static int epoll_wait_ns(int epfd, struct epoll_event *evs, int room, int64_t timeout_ns)
{
	static atomic_bool no_pwait2;
	struct timespec ts;
	int64_t ms;
	int n;

	if (!atomic_load_explicit(&no_pwait2, memory_order_relaxed)) {
		if (timeout_ns >= 0) {
			ts.tv_sec = timeout_ns / 1000000000;
			ts.tv_nsec = timeout_ns % 1000000000;
		}
		n = epoll_pwait2(epfd, evs, room, timeout_ns >= 0 ? &ts : NULL, NULL);
		if (n >= 0 || errno != ENOSYS)
			return n;
		atomic_store_explicit(&no_pwait2, true, memory_order_relaxed);
	}
	ms = timeout_ns < 0 ? -1 : (timeout_ns + 999999) / 1000000;
	return epoll_pwait(epfd, evs, room, ms > INT_MAX ? INT_MAX : (int)ms, NULL);
}

static int epoll_wait_events(struct bp_backend_loop *bl, int64_t timeout_ns)
{
	struct epoll_backend *b = eb(bl);
	int room = BP_MAX_EVENTS - bl->nev;
	int n, added = 0;

	if (room > EPOLL_BATCH)
		room = EPOLL_BATCH;
	/* Each fd may yield two events (in and out). */
	room /= 2;
	if (room <= 0)
		return 0;
	bl->ctr.syscalls++;
	n = epoll_wait_ns(b->epfd, b->evs, room, timeout_ns);
	if (n < 0)
		return errno == EINTR ? 0 : bp_err_sys("epoll_pwait2", -errno);
	for (int i = 0; i < n; i++) {
		uint32_t e = b->evs[i].events;
		struct bp_io *io = b->evs[i].data.ptr;
		uint32_t flags = 0;

		if (e & (EPOLLHUP | EPOLLRDHUP))
			flags |= BP_EVF_HUP;
		if (e & EPOLLERR)
			flags |= BP_EVF_ERR;
		if (e & EPOLLOUT)
			bl->ev[bl->nev++] = (struct bp_event){ io, BP_EV_WRITABLE, flags, 0, NULL };
		/* Errors and hang-ups are found by the core's next recv. */
		if (e & (EPOLLIN | EPOLLHUP | EPOLLRDHUP | EPOLLERR))
			bl->ev[bl->nev++] = (struct bp_event){ io, BP_EV_READABLE, flags, 0, NULL };
		added++;
	}
	return added;
}

/* IRQ suspension: give each NAPI this loop serves the mode's per-NAPI settings. */
static void epoll_napi_seen(struct bp_backend_loop *bl, uint32_t napi_id)
{
	const struct bp_mode *m = &bl->mode;
	bp_napi_settings s = { 0 };

	if (m->policy != BP_POLICY_SUSPEND)
		return;
	s.defer_hard_irqs = m->defer_hard_irqs;
	s.gro_flush_timeout_ns = m->gro_flush_ns;
	s.irq_suspend_timeout_ns = m->irq_suspend_ns;
	s.has = BP_NAPI_HAS_DEFER | BP_NAPI_HAS_GRO_FLUSH | BP_NAPI_HAS_IRQ_SUSPEND;
	bl->ctr.syscalls++;
	if (bp_napi_set(napi_id, &s) < 0) {
		/* Busy polling still works without suspension; the error stays readable. */
	}
}

const struct bp_backend_ops bp_backend_epoll = {
	.name = "epoll",
	.kind = BP_BACKEND_EPOLL,
	.completion = false,
	.families = bp_epoll_families,
	.check = bp_epoll_check,
	.init = epoll_init,
	.fini = epoll_fini,
	.add = epoll_add,
	.want_write = epoll_want_write,
	.recv = NULL,
	.send = NULL,
	.del = epoll_del,
	.wait = epoll_wait_events,
	.napi_seen = epoll_napi_seen,
};
