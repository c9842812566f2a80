/* SPDX-License-Identifier: MIT */
/*
 * The core's insides (src/core): the loop, connections, listeners, timers and
 * posted work. The backend contract (what the core and a backend agree on) is
 * backends/backend.h, included here; nothing in src/backends includes this file.
 */
#ifndef BP_CORE_INTERNAL_H
#define BP_CORE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <busypoll/aio.h>
#include <busypoll/loop.h>
#include <busypoll/mode.h>

#include "backends/backend.h"
#include "base/compat.h"
#include "base/error.h"
#include "core/sendq.h"


/* ---- connections ---- */
enum {
	BP_CONN_CONNECTING = 1u << 0,
	BP_CONN_CLOSE_AFTER_SEND = 1u << 1,
	BP_CONN_RECV_ARMED = 1u << 2,   /* completion: a receive is in flight */
	BP_CONN_SEND_INFLIGHT = 1u << 3,/* completion: a send is in flight */
	BP_CONN_WRITE_WANTED = 1u << 4, /* readiness: WRITABLE requested */
	BP_CONN_DGRAM = 1u << 5,
	BP_CONN_DGRAM_CONNECTED = 1u << 6,
	BP_CONN_TIMESTAMPS = 1u << 7,   /* SO_TIMESTAMPING: receive with recvmsg and cmsg */
	BP_CONN_RECV_RESTART = 1u << 8, /* completion: the armed receive was stopped to re-arm */
	BP_CONN_BUSY_SET = 1u << 9,     /* direct reads (napi): SO_BUSY_POLL is set on it */
	BP_CONN_NO_DIRECT = 1u << 10,   /* direct reads (napi): SO_BUSY_POLL was refused: never */
	BP_CONN_PKT = 1u << 11,         /* datagrams through the backend's packet path (->pkt_add) */
};

#define BP_CONN_RBUF_INITIAL 65536u

struct bp_conn {
	struct bp_io io;             /* first: events carry &conn->io */
	struct bp_loop *loop;
	const struct bp_conn_ops *ops;
	void *user;
	uint32_t flags;              /* BP_CONN_* */
	uint32_t napi_id;
	uint8_t napi_probes;         /* receives left on which to look for a NAPI id */
	uint8_t direct_misses;       /* direct reads in a row that found nothing (core/loop.c) */
	uint8_t *rbuf;               /* unconsumed bytes at [0, rlen) */
	size_t rlen, rcap;
	struct bp_sendq sq;
	size_t inflight_len;         /* completion: bytes of the send in flight */
	struct sockaddr_storage peer;/* datagram: source of the last datagram */
	socklen_t peerlen;
	struct msghdr rmsg;          /* datagram receive (completion backends) */
	struct iovec riov;
	struct msghdr smsg;          /* datagram send (completion backends) */
	struct iovec siov;
	struct sockaddr_storage speer;
	uint64_t rx_ts_ns;           /* software receive timestamp of the last bytes (REALTIME) */
	uint8_t cmsg[128];           /* control buffer for timestamped receives */
	struct bp_conn *next, *prev; /* the loop's list of live conns */
	struct bp_conn *next_dead;
	uint8_t in_callback;         /* >0 while a user callback of this conn runs */
	int fail_err;                /* a failure seen inside a callback, acted on after it */
	const char *fail_syscall;
};

struct bp_listener {
	struct bp_io io;
	struct bp_loop *loop;
	bp_accept_fn on_accept;
	void *arg;
	uint16_t port;
	struct bp_listener *next, *prev;
	struct bp_listener *next_dead;
	struct bp_timer retry;       /* accept paused after EMFILE/ENFILE */
	bp_accept_error_fn on_error; /* told when accepting starts failing and when it recovers */
	bool accept_failing;
};

/* ---- timers (core/timer.c): a binary min-heap of caller-owned timers ---- */
struct bp_timer_heap {
	struct bp_timer **items; /* 1-based; items[0] unused */
	uint32_t len, cap;
};
int bp_timer_heap_push(struct bp_timer_heap *h, struct bp_timer *t);
void bp_timer_heap_remove(struct bp_timer_heap *h, struct bp_timer *t);
struct bp_timer *bp_timer_heap_top(const struct bp_timer_heap *h);
void bp_timer_heap_free(struct bp_timer_heap *h);
/* bp_timers_run - run every timer due at now_ns. Returns how many ran. */
int bp_timers_run(struct bp_loop *loop, uint64_t now_ns);

/* ---- posted work (core/post.c) ---- */
struct bp_post_item {
	bp_post_fn fn;
	void *arg;
};

/* ---- storage I/O (core/aio.c; the API in busypoll/aio.h) ---- */
struct bp_aio_ring;
struct bp_aio_loop {
	uint32_t pending;             /* submitted, callback not yet run */
	uint32_t inflight;            /* in the kernel */
	uint32_t fresh;               /* completed since bp_aio_collect last looked */
	struct bp_aio *done_head, *done_tail;   /* completed, callbacks not yet run */
	struct bp_aio_queue *batch_head;        /* queues with completions in this batch */
	bool dropping;                /* bp_loop_destroy: callbacks are not run */
	struct bp_aio_ring *ring;     /* no backend aio_submit: the storage ring, made on first use */
};
struct bp_loop;
/* bp_aio_complete - the kernel finished a (or a part of it) with res; continues a short transfer. */
void bp_aio_complete(struct bp_loop *loop, struct bp_aio *a, int res);
/* bp_aio_before_wait - submit the storage ring's queued I/O; true if completions are ready (do not block). */
bool bp_aio_before_wait(struct bp_loop *loop);
/* bp_aio_collect - reap the storage ring; returns how many I/Os completed since the last call. */
int bp_aio_collect(struct bp_loop *loop);
/* bp_aio_run_done - run the callbacks of completed I/Os, then the batch hooks. */
void bp_aio_run_done(struct bp_loop *loop);
/* bp_aio_ring_event - the storage ring's eventfd is readable (epoll): clear it. */
void bp_aio_ring_event(struct bp_loop *loop);
/* bp_aio_loop_fini - bp_loop_destroy: wait for the kernel's in-flight I/O (no callbacks), free. */
void bp_aio_loop_fini(struct bp_loop *loop);

#define BP_MAX_NAPI_IDS 64

struct bp_loop {
	struct bp_backend_loop bl;   /* first: the backend's view (mode, events, counters) */
	const struct bp_backend_ops *be;
	uint64_t now_ns;
	uint64_t last_activity_ns;   /* hybrid: when anything last arrived */
	bool poll_next;              /* bp_loop_poll_next: the next wait does not block */
	struct bp_timer_heap timers;
	struct bp_conn *conns;       /* live */
	struct bp_listener *listeners;
	struct bp_conn *dead_conns;  /* freed when their inflight reaches 0 */
	struct bp_listener *dead_listeners;
	uint32_t napi_ids[BP_MAX_NAPI_IDS];
	uint32_t n_napi_ids;
	/* wake-up and posted work */
	struct bp_io wake;           /* eventfd */
	pthread_mutex_t post_lock;
	struct bp_post_item *posts;
	uint32_t nposts, posts_cap;
	atomic_bool stop;
	atomic_bool wake_pending;
	struct bp_aio_loop *aio;     /* storage I/O state, made by the first bp_aio_queue_init */
	void *user;
	uint32_t direct_run;         /* iterations in a row served without asking the backend */
	uint64_t direct_miss_ns;     /* a direct pass that found nothing and skipped the wait began
				      * then: the next iteration counts it as poll time (0: none) */
};

/*
 * bp_sys_recv, bp_sys_send - recv(2) and send(2) for the loop's hot path, straight to
 * the kernel. glibc's wrappers are thread cancellation points: in a process with
 * threads each call pays __pthread_enable_asynccancel and its undo, about 60
 * instructions (callgrind, docs/ARCHITECTURE.md), a quarter of what the core spends per
 * transaction at fifteen flows. Nothing cancels a loop's thread. -1 and errno as
 * recv/send.
 */
static inline ssize_t bp_sys_recv(int fd, void *buf, size_t len, int flags)
{
	return syscall(SYS_recvfrom, fd, buf, len, flags, NULL, NULL);
}

static inline ssize_t bp_sys_send(int fd, const void *buf, size_t len, int flags)
{
	return syscall(SYS_sendto, fd, buf, len, flags, NULL, 0);
}

/* Conn internals used by the dispatcher (core/conn.c). */
void bp_conn_on_event(struct bp_conn *c, const struct bp_event *ev);
void bp_listener_on_event(struct bp_listener *l, const struct bp_event *ev);
/*
 * Direct reads (core/loop.c): a connection is read before the backend is asked while
 * it is expected to have bytes: since data last came to it (by any path) or it last
 * sent, fewer than its policy's bound of direct reads in a row found nothing. A new
 * connection starts past the bound: an idle one is never read directly, only through
 * the backend's wait, which brings it back (bp_conn_direct_rearm).
 */
#define BP_DIRECT_MISSES_SPIN 64 /* spin, hybrid's poll window: a miss is the pass's poll */
#define BP_DIRECT_MISSES_NAPI 8  /* napi: a miss is one syscall more before the wait */
/* bp_conn_direct_rearm - c is expected to have bytes again (they came, or it sent). */
static inline void bp_conn_direct_rearm(struct bp_conn *c)
{
	c->direct_misses = 0;
}
/* bp_conn_direct_candidate - may the loop read c directly under a bound of max misses? */
static inline bool bp_conn_direct_candidate(const struct bp_conn *c, uint32_t max)
{
	return c->direct_misses < max;
}
/*
 * bp_conn_read_direct - the loop reads c before asking the backend: one pass of the
 * readiness read. busy_usecs > 0: SO_BUSY_POLL is set on it first (once), so the read
 * itself busy-polls the NAPI; a socket that refuses it (EPERM without CAP_NET_ADMIN
 * above net.core.busy_read) is never read directly again. Returns true when it found
 * bytes or the end; false when c cannot be read directly or nothing was there (a miss,
 * counted on c).
 */
bool bp_conn_read_direct(struct bp_conn *c, uint32_t busy_usecs);
/* Close without callback and queue for freeing (loop destroy). */
void bp_conn_discard(struct bp_conn *c);
void bp_listener_discard(struct bp_listener *l);
/* Free dead conns and listeners whose in-flight ops all came back. */
void bp_loop_reap(struct bp_loop *loop, bool force);
/* Record a NAPI id seen on a conn of this loop (dedup, backend->napi_seen). */
void bp_loop_note_napi(struct bp_loop *loop, uint32_t napi_id);
/* Run posted work (core/post.c). */
void bp_loop_run_posts(struct bp_loop *loop);
/*
 * bp_loop_iterate - one wait of at most timeout_ns (-1: until something happens),
 * then dispatch, storage completions, timers and reaping: bp_loop_run_once after
 * it chose the wait. Returns what was dispatched, or -errno.
 */
int bp_loop_iterate(struct bp_loop *loop, int64_t timeout_ns);

#endif
