/* SPDX-License-Identifier: MIT */
/*
 * The backend contract: everything a backend (src/backends) and the core (src/core)
 * agree on, and nothing else. A backend only gathers events or completions into
 * bl->ev[]; the core dispatches them, so every mode is timed and counted in one
 * place. A backend sees a loop only as struct bp_backend_loop and an fd only as
 * struct bp_io: it never sees a connection, a listener or the core's state.
 *
 * A backend is one table of struct bp_backend_ops (its own file, or a few) and one
 * entry in registry.c. The table carries what the backend offers to the mode
 * grammar (its families: policies, keys with their ranges, defaults) and its own
 * capability check, probed once per process and lazily, so that checking an epoll
 * mode never creates an io_uring.
 *
 * Layer: backends include base, net and stats, the public headers, and each other's
 * headers within src/backends; never src/core.
 */
#ifndef BP_BACKENDS_BACKEND_H
#define BP_BACKENDS_BACKEND_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <busypoll/aio.h>
#include <busypoll/loop.h>
#include <busypoll/mode.h>

#include "base/compat.h"
#include "base/error.h"

#define BP_MAX_EVENTS 256

/* ---- what a backend watches ---- */
enum bp_io_kind {
	BP_IO_CONN = 1,
	BP_IO_LISTENER = 2,
	BP_IO_WAKE = 3,   /* the loop's eventfd: stop and posted work */
	BP_IO_AIO = 4,    /* the core's storage ring's eventfd (core/aio.c): READABLE like the wake fd */
};

/* Embedded first in the core's connections and listeners, and in the loop for its eventfd. */
struct bp_io {
	int fd;
	uint8_t kind;         /* enum bp_io_kind */
	bool dead;            /* closed by the core: skip its events, free when inflight == 0 */
	uint32_t inflight;    /* completion backends: ops submitted and not yet completed */
	uint32_t bstate;      /* backend-private bits (e.g. EPOLLOUT armed, poll armed) */
	uint32_t bindex;      /* backend-private index (e.g. a registered descriptor slot + 1) */
};

/* ---- what a backend hands to the core ---- */
enum bp_ev_kind {
	BP_EV_READABLE = 1,  /* readiness: the core does the recv/accept/read */
	BP_EV_WRITABLE,      /* readiness: the core sends queued bytes / finishes connect */
	BP_EV_RECV,          /* completion: res bytes at data, or -errno (see struct bp_event) */
	BP_EV_SEND,          /* completion: res bytes of the in-flight send went, or -errno */
	BP_EV_AIO,           /* a storage I/O (->aio_submit) completed with res: io NULL, data the struct bp_aio */
};
enum {
	BP_EVF_HUP = 1u << 0,  /* peer hung up (readiness backends) */
	BP_EVF_ERR = 1u << 1,  /* socket error pending (readiness backends) */
	BP_EVF_MORE = 1u << 2, /* BP_EV_RECV: the receive stays armed (multishot): arm none */
};
/*
 * One event. BP_EV_RECV with res > 0: the bytes are at data when it is set, in a
 * buffer of the backend's (a provided buffer ring) that stays valid until its next
 * ->wait, so the core copies out what it keeps; data NULL: they landed where the
 * receive was told (struct bp_recv), a stream's at buf, a recvmsg's in its iovec.
 * A stream receive without msg may be answered either way.
 */
struct bp_event {
	struct bp_io *io;
	uint8_t kind;      /* enum bp_ev_kind */
	uint32_t flags;    /* BP_EVF_* */
	int32_t res;
	const uint8_t *data;
};

/*
 * What a backend may touch of a loop: embedded first in the core's struct bp_loop
 * (core/internal.h). The mode is read-only; data is the backend's own; ->wait
 * appends to ev[nev...]; a backend adds every syscall it makes to ctr.syscalls.
 */
struct bp_backend_loop {
	struct bp_mode mode;
	void *data;
	struct bp_event ev[BP_MAX_EVENTS];
	int nev;
	struct bp_loop_counters ctr;
};

/* One receive a completion backend arms (->recv). */
struct bp_recv {
	void *buf;          /* stream: the free part of the connection's buffer */
	size_t len;
	struct msghdr *msg; /* non-NULL: recvmsg with it instead (datagrams, timestamps);
			     * the kernel writes back msg_namelen, msg_controllen, msg_flags */
};

/* ---- the mode grammar's families, as each backend offers them ---- */

/* A key as one family takes it: numeric keys carry that family's range. */
struct bp_key_spec {
	uint32_t bit;     /* BP_KEY_* */
	uint64_t min, max;
};

/* A key someone will try where it does not belong, and why it does not. */
struct bp_key_hint {
	const char *key;
	const char *why;  /* "%s: " + why: the message in full after the family's name */
};

struct bp_mode_family {
	struct bp_mode_info info;          /* name, keys with defaults, summary */
	const struct bp_key_spec *keys;    /* canonical order */
	size_t nkeys;
	struct bp_mode defaults;           /* backend and policy set; keys_set empty */
	const struct bp_key_hint *hints;   /* NULL-key terminated, or NULL */
	/* Rules across keys once all are read: NULL, or 0 / -EINVAL with one line in msg
	 * (without the "FAMILY: " prefix the parser adds). May be NULL. */
	int (*combination)(const struct bp_mode *m, char *msg, size_t len);
};

/*
 * A backend. Every function returns 0 (or a count) or -errno with bp_err_*()
 * called, and adds every syscall it makes to bl->ctr.syscalls.
 */
struct bp_backend_ops {
	const char *name;                  /* the BACKEND of the grammar: "epoll" */
	enum bp_backend_kind kind;
	/* true: delivers BP_EV_RECV/BP_EV_SEND (the core calls recv/send below);
	 * false: delivers BP_EV_READABLE/BP_EV_WRITABLE and the core does the I/O. */
	bool completion;
	const struct bp_mode_family *families; /* display order, ended by one with info.name NULL */
	/* can this kernel and process use mode (one of ours) right now? Probes lazily,
	 * once per process (base/once.h); contract of bp_mode_check (mode.h). */
	int (*check)(const struct bp_mode *mode, char *err, size_t errlen);
	/* optional: the optional kernel features it uses where it can, probed once
	 * per process; contract of bp_features (mode.h). */
	size_t (*features)(struct bp_feature *out, size_t max);

	/* set up for bl->mode; bl->data is the backend's. */
	int (*init)(struct bp_backend_loop *bl);
	void (*fini)(struct bp_backend_loop *bl);
	/* start watching io. Listener and wake: READABLE events (level). Conn: readiness
	 * backends deliver READABLE (+HUP/ERR flags); completion backends arm nothing
	 * here (the core calls ->recv). */
	int (*add)(struct bp_backend_loop *bl, struct bp_io *io);
	/* readiness: deliver (on=true) or stop WRITABLE events for io. Completion
	 * backends: on=true arms one POLLOUT poll that comes back as BP_EV_WRITABLE
	 * (the core uses it to finish a non-blocking connect); on=false is a no-op. */
	int (*want_write)(struct bp_backend_loop *bl, struct bp_io *io, bool on);
	/* completion only: arm one receive on io's fd, as r says (r is read at the
	 * call; the buffers it names must stay put until BP_EV_RECV). One at a time:
	 * a backend may keep it armed across completions (BP_EVF_MORE) and deliver
	 * into its own buffers. */
	int (*recv)(struct bp_backend_loop *bl, struct bp_io *io, const struct bp_recv *r);
	/* completion only, optional: end the receive armed on io unless it is a recvmsg
	 * (the core wants one now: timestamps were turned on). Returns 1 when one was
	 * stopped: it comes back as BP_EV_RECV without BP_EVF_MORE, with -ECANCELED or
	 * with bytes that raced the cancel; 0 when there was nothing to stop. */
	int (*recv_stop)(struct bp_backend_loop *bl, struct bp_io *io);
	/* completion only: one send of len bytes at buf (stream), or a sendmsg of msg
	 * (datagram: buf NULL). The bytes stay put until BP_EV_SEND. One at a time. */
	int (*send)(struct bp_backend_loop *bl, struct bp_io *io, const void *buf, size_t len,
		    struct msghdr *msg);
	/* stop delivering anything for io; the core closes its fd right after, or,
	 * for a conn with ops still out (io->inflight), once they are back. Completion
	 * backends cancel the ops in flight; their completions still come back (the
	 * core skips them because io->dead) and bring io->inflight to 0. */
	int (*del)(struct bp_backend_loop *bl, struct bp_io *io);
	/* gather: wait at most timeout_ns (-1 = until something happens, 0 = do not
	 * wait) and append events to bl->ev[bl->nev...]. Returns the number added,
	 * or -errno (-EINTR is fine: returns 0). Must honour the mode's policy inside
	 * the kernel (e.g. NAPI busy poll) but not the userspace spin/hybrid logic,
	 * which lives in the core. */
	int (*wait)(struct bp_backend_loop *bl, int64_t timeout_ns);
	/* optional: a new NAPI id showed up on this loop (static tracking etc.). */
	void (*napi_seen)(struct bp_backend_loop *bl, uint32_t napi_id);
	/* optional: the kernel threads working for this loop; contract of
	 * bp_loop_kthreads (loop.h). Any thread may call it. */
	int (*kthreads)(const struct bp_backend_loop *bl, struct bp_loop_kthread *out, size_t max);
	/* optional (io_uring backends): queue what is left of the storage I/O a
	 * (bp_aio_prep_sqe) on the loop's own ring, submitted with the next wait; its
	 * completion comes back as one BP_EV_AIO. NULL: the core serves storage I/O on a
	 * ring of its own (core/aio.c). */
	int (*aio_submit)(struct bp_backend_loop *bl, struct bp_aio *a);

	/* ---- optional: a packet path for datagram conns (xsk) ----
	 * A readiness backend may carry a datagram conn's traffic itself instead of
	 * through its socket: the core offers it each datagram conn (pkt_add) instead
	 * of ->add, and from then on reads and sends that conn's datagrams through
	 * pkt_recv and pkt_send in place of recvfrom and sendto. The socket stays open
	 * (it holds the address and port); the backend delivers READABLE for io while
	 * it holds datagrams for it (level), and WRITABLE once it can send again after
	 * a pkt_send said -EAGAIN and the core asked ->want_write. ->del ends it. */
	/* 1: the backend carries io from now on; 0: io stays a socket conn (->add is
	 * called); -errno with the last error: it should, and cannot (the conn fails). */
	int (*pkt_add)(struct bp_backend_loop *bl, struct bp_io *io);
	/* one datagram for io into buf (cut to cap): its length, its source into *from;
	 * -EAGAIN when none is waiting. */
	ssize_t (*pkt_recv)(struct bp_backend_loop *bl, struct bp_io *io, void *buf, size_t cap,
			    struct sockaddr_storage *from, socklen_t *fromlen);
	/* one datagram of len bytes from io to `to` (NULL: io's connected peer): len,
	 * -EAGAIN when no frame or ring slot is free now, another -errno when it cannot go. */
	ssize_t (*pkt_send)(struct bp_backend_loop *bl, struct bp_io *io, const void *buf, size_t len,
			    const struct sockaddr_storage *to, socklen_t tolen);
	/* the NAPI id the packet path is served by, 0 not known yet */
	uint32_t (*pkt_napi_id)(struct bp_backend_loop *bl);
	/* the packet path's own counters (the kernel's statistics included) into out,
	 * a copy of bl->ctr being snapshotted; any field it does not keep stays. */
	void (*pkt_counters)(const struct bp_backend_loop *bl, struct bp_loop_counters *out);
	/* what the packet path is bound to; -ENOENT when the loop has none (yet) */
	int (*pkt_info)(const struct bp_backend_loop *bl, struct bp_xsk_info *out);
};

/* ---- storage I/O on any io_uring (aio_sqe.c): the loop's own ring, or the core's ---- */

struct io_uring_sqe;
/* bp_aio_prep_sqe - fill sqe with what is left of a (from a->xfer); user_data is the caller's. */
void bp_aio_prep_sqe(struct io_uring_sqe *sqe, const struct bp_aio *a);

/* ---- the one table of backends (registry.c) ---- */

/* bp_backend_count - how many backends there are; bp_backend_at(i) for i below it. */
size_t bp_backend_count(void);
const struct bp_backend_ops *bp_backend_at(size_t i);
/* bp_backend_of - the backend of a mode's backend kind, NULL when there is none. */
const struct bp_backend_ops *bp_backend_of(enum bp_backend_kind kind);

/* ---- helpers every backend's check uses (registry.c) ---- */

/* bp_check_say - format one line into err (may be NULL) and the last error; returns ret. */
int bp_check_say(int ret, char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
int bp_check_vsay(int ret, char *err, size_t errlen, const char *fmt, va_list ap)
	__attribute__((format(printf, 4, 0)));
/* bp_check_probe_failed - a probe that could not run at all (e.g. -EMFILE): "cannot
 * probe WHAT: reason", neither "lacks" nor "not allowed". Returns ret. */
int bp_check_probe_failed(int ret, const char *what, char *err, size_t errlen);

#endif
