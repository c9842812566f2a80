/* SPDX-License-Identifier: MIT */
/* Listeners: accept in the core on readiness, hand each fd to the user. */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/internal.h"

/* Accepts per READABLE event: enough to drain a burst, bounded to stay fair. */
#define ACCEPTS_PER_EVENT 64
/* After EMFILE/ENFILE, stop accepting for this long so the loop does not spin. */
#define ACCEPT_PAUSE_US 100000

static void listener_resume(struct bp_loop *loop, void *arg)
{
	struct bp_listener *l = arg;

	if (!l->io.dead && loop->be->add(&loop->bl, &l->io) == 0)
		return;
}

void bp_listener_on_event(struct bp_listener *l, const struct bp_event *ev)
{
	struct bp_loop *loop = l->loop;

	if (ev->kind != BP_EV_READABLE || ev->res < 0)
		return;
	for (int i = 0; i < ACCEPTS_PER_EVENT && !l->io.dead; i++) {
		int fd;

		loop->bl.ctr.syscalls++;
		fd = accept4(l->io.fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			int err = -errno;

			if (err == -EINTR || err == -ECONNABORTED)
				continue;
			if (err == -EMFILE || err == -ENFILE || err == -ENOMEM || err == -ENOBUFS) {
				/*
				 * Out of descriptors or memory: the connection stays in the
				 * backlog and the listener stays readable, so retrying at once
				 * would spin. Keep serving the conns we have, retry later.
				 */
				bp_err_sys("accept4", err);
				loop->be->del(&loop->bl, &l->io);
				bp_timer_start(loop, &l->retry, ACCEPT_PAUSE_US, listener_resume, l);
				if (!l->accept_failing) {
					l->accept_failing = true;
					if (l->on_error)
						l->on_error(l, err, l->arg);
				}
			}
			return;
		}
		if (l->accept_failing) {
			l->accept_failing = false;
			if (l->on_error)
				l->on_error(l, 0, l->arg);
			if (l->io.dead) { /* closed by on_error */
				close(fd);
				return;
			}
		}
		l->on_accept(l, fd, l->arg);
	}
}

int bp_listener_create(struct bp_loop *loop, const struct sockaddr *addr, socklen_t addrlen,
		       bp_accept_fn on_accept, void *arg, struct bp_listener **lp)
{
	struct sockaddr_storage bound;
	socklen_t blen = sizeof(bound);
	struct bp_listener *l;
	int fd, one = 1, ret;

	fd = socket(addr->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return bp_err_sys("socket", -errno);
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0) {
		ret = bp_err_sys("setsockopt(SO_REUSEADDR)", -errno);
		goto err_close;
	}
	if (bind(fd, addr, addrlen) < 0) {
		ret = bp_err_sys("bind", -errno);
		goto err_close;
	}
	if (listen(fd, 4096) < 0) {
		ret = bp_err_sys("listen", -errno);
		goto err_close;
	}
	if (getsockname(fd, (struct sockaddr *)&bound, &blen) < 0) {
		ret = bp_err_sys("getsockname", -errno);
		goto err_close;
	}
	l = calloc(1, sizeof(*l));
	if (!l) {
		ret = bp_err_set(-ENOMEM, "listener: out of memory");
		goto err_close;
	}
	l->io.fd = fd;
	l->io.kind = BP_IO_LISTENER;
	l->loop = loop;
	l->on_accept = on_accept;
	l->arg = arg;
	l->port = ntohs(bound.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&bound)->sin6_port
						    : ((struct sockaddr_in *)&bound)->sin_port);
	ret = loop->be->add(&loop->bl, &l->io);
	if (ret) {
		free(l);
		goto err_close;
	}
	l->next = loop->listeners;
	if (loop->listeners)
		loop->listeners->prev = l;
	loop->listeners = l;
	*lp = l;
	return 0;

err_close:
	close(fd);
	return ret;
}

void bp_listener_on_error(struct bp_listener *l, bp_accept_error_fn fn) { l->on_error = fn; }
uint16_t bp_listener_port(const struct bp_listener *l) { return l->port; }
int bp_listener_fd(const struct bp_listener *l) { return l->io.fd; }
struct bp_loop *bp_listener_loop(const struct bp_listener *l) { return l->loop; }

void bp_listener_close(struct bp_listener *l)
{
	struct bp_loop *loop = l->loop;

	if (l->io.dead)
		return;
	l->io.dead = true;
	bp_timer_stop(loop, &l->retry);
	loop->be->del(&loop->bl, &l->io);
	close(l->io.fd);
	if (l->prev)
		l->prev->next = l->next;
	else
		loop->listeners = l->next;
	if (l->next)
		l->next->prev = l->prev;
	l->next_dead = loop->dead_listeners;
	loop->dead_listeners = l;
}

void bp_listener_discard(struct bp_listener *l)
{
	bp_listener_close(l);
}
