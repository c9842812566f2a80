/* SPDX-License-Identifier: MIT */
/*
 * The server side every busypoll server shares (rr's, pingpong's, the NVMe/TCP
 * target's command): where to serve (an address and a port, and a bind failure
 * said the way a user can act on it), N loop threads in a mode pinned per --cpus
 * with the placer over them, a listener whose connections go to the loop of their
 * NAPI id and whose accept failures are said once per episode, and serving until
 * SIGINT, SIGTERM or SIGHUP.
 */
#ifndef BP_TOOLS_HARNESS_SERVER_H
#define BP_TOOLS_HARNESS_SERVER_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <busypoll/busypoll.h>

#define SRV_MAX_THREADS 64

/*
 * srv_addr - host ("" = every address) and port as a socket address. 0, or
 * -EINVAL with "OPT HOST: why" in err (opt: the option that gave it, "--bind").
 */
int srv_addr(const char *opt, const char *host, uint16_t port, struct sockaddr_storage *ss, socklen_t *len,
	     char *err, size_t errlen);

/*
 * srv_bind_error - a failed bind (or listen) of what, as one line a user can act
 * on: the port in use (pick another with hint), below 1024 without the privilege,
 * an address no interface here has (said of the option that gave it: what when it
 * is one, "--listen", else --bind). Returns err.
 */
int srv_bind_error(int err, const char *what, const struct sockaddr *addr, const char *hint, char *buf, size_t len);

/* What a server's log lines go through (quiet servers drop them). */
typedef void (*srv_log_fn)(void *ctx, const char *line);

/* N loop threads in one mode, and the placer over their loops. */
struct srv_threads {
	int n;
	struct bp_loop_thread *lt[SRV_MAX_THREADS];
	struct bp_loop *loops[SRV_MAX_THREADS];
	struct bp_placer *placer;
	/* the listener's, set by srv_listen */
	struct bp_listener *listener;
	bp_adopt_fn adopt;
	void *adopt_arg;
	srv_log_fn log;
	void *log_ctx;
};

/*
 * srv_threads_start - n loop threads in mode, thread i pinned to cpus[i % ncpus]
 * (ncpus 0: not pinned), setup(loop, args[i]) run on each; then the placer. All
 * or none: on failure the started ones are joined. 0, or -errno with the thread's
 * own message in err.
 */
int srv_threads_start(struct srv_threads *st, int n, const struct bp_mode *mode, const int *cpus, int ncpus,
		      bp_loop_setup_fn setup, void *const *args, char *err, size_t errlen);
/* srv_threads_stop - join every thread, teardown(loop, args[i]) on each (may be NULL); the placer freed. */
void srv_threads_stop(struct srv_threads *st, void (*teardown)(struct bp_loop *, void *), void *const *args);

/*
 * srv_listen - a listener on addr, on thread 0's loop (created there, after the
 * placer exists, so no connection arrives before it can be placed): each accepted
 * fd goes to the loop of its NAPI id, adopt(loop, fd, adopt_arg) there; accept
 * failures (descriptors, memory) are logged once per episode through log. Returns
 * 0 (the port in *port: useful after port 0), or -errno with the srv_bind_error
 * line in err.
 */
int srv_listen(struct srv_threads *st, const struct sockaddr *addr, socklen_t len, bp_adopt_fn adopt,
	       void *adopt_arg, srv_log_fn log, void *log_ctx, const char *hint, uint16_t *port, char *err,
	       size_t errlen);

/*
 * srv_on_loop - run fn(loop, arg) on the loop's thread and wait for it: its
 * result, with its bp_last_error() message copied to the caller's. -ENOMEM when
 * it could not be posted.
 */
int srv_on_loop(struct bp_loop *loop, int (*fn)(struct bp_loop *, void *), void *arg);

/*
 * srv_wait - serve until the stop flag of tool_catch_stop_signals is set
 * (SIGINT, SIGTERM, or SIGHUP: a closed terminal ends it like a Ctrl-C).
 */
void srv_wait(volatile sig_atomic_t *stop);

struct ctl_msg;
/* A server's answer to one message of the session that started it: out gets the reply (its seq is set after). */
typedef void (*srv_control_fn)(void *ctx, const struct ctl_msg *in, struct ctl_msg *out);

/*
 * srv_serve_control - serve as srv_wait does, and answer the control session on
 * fd (--control-fd: the process that started this server, tools/harness/spawn.h)
 * meanwhile: every message through handle, its reply numbered as it. The session
 * closing (that process is gone), or garbage on it, ends the wait as a stop does,
 * so a spawned server never outlives its parent. Returns 0 (a signal),
 * -ECONNRESET (the session closed), -EPROTO (garbage), -ENOMEM.
 */
int srv_serve_control(int fd, volatile sig_atomic_t *stop, srv_control_fn handle, void *ctx);

/* srv_control_refuse - out becomes CTL_ERROR EPROTO "TOOL server: IN is not for it" (a handler's default). */
void srv_control_refuse(const char *tool, const struct ctl_msg *in, struct ctl_msg *out);

#endif
