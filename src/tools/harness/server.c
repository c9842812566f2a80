/* SPDX-License-Identifier: MIT */
/* The servers' shared set-up (contract in tools/harness/server.h). */
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <unistd.h>

#include "tools/harness/control.h"
#include "tools/harness/server.h"

int srv_addr(const char *opt, const char *host, uint16_t port, struct sockaddr_storage *ss, socklen_t *len,
	     char *err, size_t errlen)
{
	if (bp_parse_addr(host && host[0] ? host : "0.0.0.0", port, ss, len)) {
		snprintf(err, errlen, "%s %s: %s", opt, host, bp_last_error());
		return -EINVAL;
	}
	return 0;
}

static uint16_t port_of(const struct sockaddr *a)
{
	if (a->sa_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)a)->sin6_port);
	return ntohs(((const struct sockaddr_in *)a)->sin_port);
}

int srv_bind_error(int err, const char *what, const struct sockaddr *addr, const char *hint, char *buf, size_t len)
{
	char text[80];
	uint16_t port = port_of(addr);

	bp_format_addr(addr, text, sizeof(text));
	if (err == -EADDRINUSE)
		snprintf(buf, len, "%s port %u is in use%s%s", what, port, hint ? "; " : "", hint ? hint : "");
	else if ((err == -EACCES || err == -EPERM) && port < 1024)
		snprintf(buf, len, "%s port %u is below 1024: binding it needs root (CAP_NET_BIND_SERVICE); pick a port "
			 "from 1024 up", what, port);
	else if (err == -EADDRNOTAVAIL)
		snprintf(buf, len, "%s %s: no interface here has that address", what[0] == '-' ? what : "--bind", text);
	else
		snprintf(buf, len, "%s %s: %s", what, text, strerror(-err));
	return err;
}

/* ---- threads ---- */

int srv_threads_start(struct srv_threads *st, int n, const struct bp_mode *mode, const int *cpus, int ncpus,
		      bp_loop_setup_fn setup, void *const *args, char *err, size_t errlen)
{
	int ret;

	memset(st, 0, sizeof(*st));
	if (n < 1 || n > SRV_MAX_THREADS) {
		snprintf(err, errlen, "%d threads: 1 to %d", n, SRV_MAX_THREADS);
		return -EINVAL;
	}
	for (int i = 0; i < n; i++) {
		ret = bp_loop_thread_start(&st->lt[i], mode, ncpus ? cpus[i % ncpus] : -1, setup, args[i]);
		if (ret) {
			snprintf(err, errlen, "%s", bp_last_error());
			goto fail;
		}
		st->loops[i] = bp_loop_thread_loop(st->lt[i]);
		st->n = i + 1;
	}
	ret = bp_placer_create(&st->placer, st->loops, (size_t)n);
	if (!ret)
		return 0;
	snprintf(err, errlen, "%s", bp_last_error());
fail:
	for (int j = 0; j < st->n; j++)
		bp_loop_thread_join(st->lt[j], NULL, NULL);
	st->n = 0;
	return ret;
}

void srv_threads_stop(struct srv_threads *st, void (*teardown)(struct bp_loop *, void *), void *const *args)
{
	for (int i = 0; i < st->n; i++)
		bp_loop_thread_join(st->lt[i], teardown, args ? args[i] : NULL);
	if (st->placer)
		bp_placer_destroy(st->placer);
	st->placer = NULL;
	st->n = 0;
}

/* ---- on a loop, and waited for ---- */

struct on_loop {
	int (*fn)(struct bp_loop *, void *);
	void *arg;
	int ret;
	char msg[256];
	int done_fd;
};

static void on_loop_run(struct bp_loop *loop, void *arg)
{
	struct on_loop *c = arg;
	uint64_t one = 1;

	c->ret = c->fn(loop, c->arg);
	if (c->ret)
		snprintf(c->msg, sizeof(c->msg), "%s", bp_last_error());
	if (write(c->done_fd, &one, sizeof(one)) < 0) {
		/* the waiter would hang: cannot happen on a fresh eventfd */
	}
}

int srv_on_loop(struct bp_loop *loop, int (*fn)(struct bp_loop *, void *), void *arg)
{
	struct on_loop c = { .fn = fn, .arg = arg, .done_fd = eventfd(0, EFD_CLOEXEC) };
	struct pollfd p = { .events = POLLIN };
	uint64_t v;

	if (c.done_fd < 0)
		return bp_set_last_error(-errno, "eventfd: %s", strerror(errno));
	if (bp_loop_post(loop, on_loop_run, &c)) {
		close(c.done_fd);
		return bp_set_last_error(-ENOMEM, "out of memory");
	}
	p.fd = c.done_fd;
	while (poll(&p, 1, -1) < 0 && errno == EINTR)
		;
	if (read(c.done_fd, &v, sizeof(v)) < 0) {
		/* it was written: the poll said so */
	}
	close(c.done_fd);
	if (c.ret)
		bp_set_last_error(c.ret, "%s", c.msg);
	return c.ret;
}

/* ---- the listener ---- */

static void srv_log(const struct srv_threads *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void srv_log(const struct srv_threads *st, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	if (!st->log)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	st->log(st->log_ctx, line);
}

static void on_accept(struct bp_listener *l, int fd, void *arg)
{
	struct srv_threads *st = arg;

	if (bp_placer_dispatch(st->placer, fd, st->adopt, st->adopt_arg) < 0) {
		srv_log(st, "%s", bp_last_error());
		close(fd);
	}
}

/* Out of descriptors (or memory): said once, and again when accepting works again. */
static void on_accept_error(struct bp_listener *l, int err, void *arg)
{
	struct srv_threads *st = arg;
	struct rlimit rl = { 0 };

	if (!err) {
		srv_log(st, "accepting new connections again");
		return;
	}
	if (err == -EMFILE && getrlimit(RLIMIT_NOFILE, &rl) == 0)
		srv_log(st, "cannot accept new connections: accept4: %s (RLIMIT_NOFILE %llu; raise it with ulimit -n); "
			"the connections already open are still served, and new ones are accepted as descriptors "
			"free up", strerror(-err), (unsigned long long)rl.rlim_cur);
	else
		srv_log(st, "cannot accept new connections: accept4: %s; the connections already open are still "
			"served, and new ones are accepted once it passes", strerror(-err));
}

struct listen_call {
	struct srv_threads *st;
	const struct sockaddr *addr;
	socklen_t len;
};

static int listen_on_loop(struct bp_loop *loop, void *arg)
{
	struct listen_call *c = arg;
	int ret = bp_listener_create(loop, c->addr, c->len, on_accept, c->st, &c->st->listener);

	if (!ret)
		bp_listener_on_error(c->st->listener, on_accept_error);
	return ret;
}

int srv_listen(struct srv_threads *st, const struct sockaddr *addr, socklen_t len, bp_adopt_fn adopt,
	       void *adopt_arg, srv_log_fn log, void *log_ctx, const char *hint, uint16_t *port, char *err,
	       size_t errlen)
{
	struct listen_call c = { .st = st, .addr = addr, .len = len };
	int ret;

	st->adopt = adopt;
	st->adopt_arg = adopt_arg;
	st->log = log;
	st->log_ctx = log_ctx;
	ret = srv_on_loop(st->loops[0], listen_on_loop, &c);
	if (ret)
		return srv_bind_error(ret, "tcp", addr, hint, err, errlen);
	*port = bp_listener_port(st->listener);
	return 0;
}

void srv_wait(volatile sig_atomic_t *stop)
{
	/* a poll, not pause(): a signal between the look and the wait is seen a second later */
	while (!*stop)
		poll(NULL, 0, 1000);
}

int srv_serve_control(int fd, volatile sig_atomic_t *stop, srv_control_fn handle, void *ctx)
{
	struct ctl_msg *in = malloc(2 * sizeof(*in));
	struct ctl_session ses;
	int ret = 0;

	if (!in)
		return -ENOMEM;
	if (ctl_session_fd(&ses, fd, "the control session", 1000)) {
		free(in);
		return -ENOMEM;
	}
	while (!*stop) {
		/* a second at most between looks at the stop flag */
		ret = ctl_recv(&ses, &in[0], 1000);
		if (ret == -ETIMEDOUT || ret == -EINTR || ret == -EAGAIN) {
			ret = 0;
			continue;
		}
		if (ret)
			break;
		ctl_msg_init(&in[1], CTL_ERROR);
		handle(ctx, &in[0], &in[1]);
		in[1].seq = in[0].seq;
		ret = ctl_send_fd(fd, &in[1]);
		if (ret)
			break;
	}
	ctl_session_close(&ses);
	free(in);
	return *stop ? 0 : ret;
}

void srv_control_refuse(const char *tool, const struct ctl_msg *in, struct ctl_msg *out)
{
	ctl_error_msg(out, EPROTO, "%s server: %s is not for it", tool, ctl_type_name(in->type));
}
