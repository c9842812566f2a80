/* SPDX-License-Identifier: MIT */
/*
 * The event loop: one per thread. Connections, listeners, timers and cross-thread
 * hand-off behave the same on every backend (epoll, io_uring) and wait policy.
 *
 * Threading: every function here is for the loop's own thread, except
 * bp_loop_stop() and bp_loop_post(), which any thread (or a signal handler, for
 * bp_loop_stop) may call.
 *
 * Errors: functions return 0 or -errno; the failing syscall and its reason are
 * kept in a per-thread string, bp_last_error().
 */
#ifndef BUSYPOLL_LOOP_H
#define BUSYPOLL_LOOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <busypoll/mode.h>

#ifdef __cplusplus
extern "C" {
#endif

struct bp_loop;
struct bp_conn;
struct bp_listener;

/* Per-loop counters. Read them from the loop's thread, or after it stopped. */
struct bp_loop_counters {
	uint64_t waits;        /* wait/poll calls made (blocking or not) */
	uint64_t wakeups;      /* waits that could sleep and returned with work */
	uint64_t empty_polls;  /* waits/polls that returned nothing */
	uint64_t syscalls;     /* syscalls the loop made (waits, ctl, recv, send, enter, ...) */
	uint64_t completions;  /* events/completions dispatched */
	uint64_t poll_ns;      /* time inside waits that did not sleep (spin, 0 timeout) */
	uint64_t sleep_ns;     /* time inside waits that could sleep (includes kernel busy poll) */
	uint64_t bytes_in;
	uint64_t bytes_out;
	uint64_t recv_arms;    /* completion backends: receives armed; one per message unless a
				* multishot receive stays armed (io_uring), so per message it is
				* the re-arm rate. Readiness backends: 0 */
	uint64_t direct_tried; /* epoll spin/hybrid/napi, direct=1: recvs tried before asking epoll */
	uint64_t direct_hit;   /* of those, the ones that found bytes (or the end) */
	/* xsk modes: frames through the AF_XDP rings, and the socket's own statistics
	 * (getsockopt XDP_STATISTICS, read when a snapshot is taken); 0 elsewhere */
	uint64_t pkt_rx;           /* frames of ours received */
	uint64_t pkt_tx;           /* frames sent */
	uint64_t pkt_dropped;      /* frames the ring brought that were short, malformed or for no conn */
	uint64_t xsk_rx_dropped;   /* the kernel dropped them (no room in the umem frame, ...) */
	uint64_t xsk_rx_ring_full; /* dropped: the rx ring was full */
	uint64_t xsk_fill_empty;   /* the fill ring was empty when a frame came */
	uint64_t xsk_tx_empty;     /* the kernel found the tx ring empty when woken to send */
};

/* What a loop's AF_XDP socket is bound to (xsk modes; bp_loop_xsk_info). */
struct bp_xsk_info {
	char ifname[16];       /* the device */
	int ifindex;
	uint32_t queue;        /* its receive queue */
	bool zerocopy;         /* bound zero-copy (the driver's), else copy mode */
	uint32_t prog_id;      /* busypoll's XDP program there */
	uint32_t napi_id;      /* the NAPI the frames came from, 0 none yet */
};

/* ---- errors ---- */

/* bp_last_error - "syscall: reason" of the last failure on this thread. */
const char *bp_last_error(void);
/*
 * bp_set_last_error - set this thread's message (e.g. in a loop-thread setup
 * callback, whose message bp_loop_thread_start carries back). Returns err.
 */
int bp_set_last_error(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- the loop ---- */

/*
 * bp_loop_create - a loop for the calling thread in the given mode. Create it on
 * the thread that will run it: io_uring rings set up with SINGLE_ISSUER or
 * DEFER_TASKRUN only accept submissions from the creating thread.
 * Returns 0 and sets *loopp, or -errno (-EOPNOTSUPP/-EPERM when the kernel or
 * process cannot use the mode; bp_last_error() says which key or capability).
 */
int bp_loop_create(struct bp_loop **loopp, const struct bp_mode *mode);

/* bp_loop_destroy - close every connection and listener (no callbacks) and free. */
void bp_loop_destroy(struct bp_loop *loop);

/* bp_loop_run - wait and dispatch until bp_loop_stop(). Returns 0 or -errno. */
int bp_loop_run(struct bp_loop *loop);

/*
 * bp_loop_run_once - one wait (bounded by timeout_us, -1 = the mode decides, 0 = no wait)
 * and dispatch of what it gathered. Returns the number of completions dispatched, or -errno.
 */
int bp_loop_run_once(struct bp_loop *loop, int64_t timeout_us);

/*
 * bp_loop_poll_next - make this loop's next wait a poll (timeout 0) whatever the
 * mode: for work that re-arms itself every pass for a while, like a target
 * queue's poll period (a timer started with after_us 0 then runs right after
 * that poll instead of after a sleep). One-shot: ask again on every pass.
 */
void bp_loop_poll_next(struct bp_loop *loop);

/* bp_loop_stop - make bp_loop_run return soon. Any thread; async-signal-safe. */
void bp_loop_stop(struct bp_loop *loop);

/* bp_loop_stopping - true once bp_loop_stop() was called. */
bool bp_loop_stopping(const struct bp_loop *loop);

const struct bp_mode *bp_loop_mode(const struct bp_loop *loop);
const struct bp_loop_counters *bp_loop_counters(const struct bp_loop *loop);
/*
 * bp_loop_xsk_info - what the loop's AF_XDP socket is bound to (an xsk mode, once a
 * datagram conn was added). 0, or -ENOENT when the loop has none.
 */
int bp_loop_xsk_info(const struct bp_loop *loop, struct bp_xsk_info *out);
void *bp_loop_data(const struct bp_loop *loop);
void bp_loop_set_data(struct bp_loop *loop, void *data);

/*
 * What a loop's thread has done up to one instant: its CPU time and context
 * switches (RUSAGE_THREAD) beside the loop's counters. Take two and subtract for
 * an interval; benchmarks divide by the transactions in between.
 */
struct bp_loop_snapshot {
	uint64_t ns;          /* CLOCK_MONOTONIC when taken */
	uint64_t utime_us, stime_us;
	uint64_t nvcsw, nivcsw;
	struct bp_loop_counters ctr;
};
/* bp_loop_snapshot_take - on the loop's own thread (RUSAGE_THREAD is the caller's). */
void bp_loop_snapshot_take(const struct bp_loop *loop, struct bp_loop_snapshot *s);

/* A kernel thread that works for a loop, in this process (/proc/self/task/TID). */
struct bp_loop_kthread {
	int tid;
	const char *role;  /* "sqpoll": io_uring's SQ thread; "io-wq": an io_uring worker */
};
/*
 * bp_loop_kthreads - the threads besides the loop's own that do its work right now:
 * the SQPOLL thread of a uring:sqpoll loop, the io-wq workers of its submitter. Their
 * CPU time is not in the loop thread's RUSAGE_THREAD; bp_thread_cpu_ns (kstats.h)
 * reads it. Writes up to max into out; returns how many there are (0 for epoll and
 * most uring loops), or -errno. Any thread, while the loop lives.
 */
int bp_loop_kthreads(const struct bp_loop *loop, struct bp_loop_kthread *out, size_t max);

/* bp_now_ns - CLOCK_MONOTONIC in ns (vDSO, no syscall). */
uint64_t bp_now_ns(void);

/* bp_loop_now_ns - the loop's cached CLOCK_MONOTONIC, refreshed at every pass (after its wait). */
uint64_t bp_loop_now_ns(const struct bp_loop *loop);

/*
 * bp_loop_napi_ids - NAPI ids of the connections this loop serves (distinct,
 * up to max). Returns how many were written.
 */
size_t bp_loop_napi_ids(const struct bp_loop *loop, uint32_t *ids, size_t max);

/*
 * bp_loop_post - run fn(loop, arg) on the loop's thread soon. Any thread.
 * Used to hand a connection's fd to another loop (fn calls bp_conn_adopt there).
 * Work still queued when the loop is destroyed is dropped, not run: stop posting
 * to a loop before its thread is joined. Returns 0 or -ENOMEM.
 */
typedef void (*bp_post_fn)(struct bp_loop *loop, void *arg);
int bp_loop_post(struct bp_loop *loop, bp_post_fn fn, void *arg);

/* ---- loop threads ---- */

/*
 * A thread that owns one loop: pinned, creates its loop (so io_uring rings belong
 * to it), runs setup on it, then bp_loop_run until bp_loop_stop.
 */
struct bp_loop_thread;
typedef int (*bp_loop_setup_fn)(struct bp_loop *loop, void *arg);

/*
 * bp_loop_thread_start - start the thread (pinned to cpu when cpu >= 0) and wait
 * until its loop exists and setup(loop, arg) returned (setup may be NULL).
 * Returns 0 and sets *tp, or the -errno of pinning, loop creation or setup; the
 * thread's bp_last_error() message is copied to the caller's.
 */
int bp_loop_thread_start(struct bp_loop_thread **tp, const struct bp_mode *mode, int cpu,
			 bp_loop_setup_fn setup, void *arg);
struct bp_loop *bp_loop_thread_loop(const struct bp_loop_thread *t);
/*
 * bp_loop_thread_join - stop the loop, and on its thread run teardown(loop, arg)
 * (may be NULL; read counters there), destroy the loop and exit; then join.
 * Returns bp_loop_run's result.
 */
int bp_loop_thread_join(struct bp_loop_thread *t, void (*teardown)(struct bp_loop *, void *),
			void *arg);

/* ---- timers (caller-owned, no allocation per start) ---- */

typedef void (*bp_timer_fn)(struct bp_loop *loop, void *arg);
struct bp_timer {
	uint64_t deadline_ns; /* private */
	uint32_t heap_index;  /* private: 0 = not armed */
	bp_timer_fn fn;
	void *arg;
};

/* bp_timer_start - run fn(loop, arg) once, after_us from now. Restarts an armed timer. 0 or -ENOMEM. */
int bp_timer_start(struct bp_loop *loop, struct bp_timer *t, uint64_t after_us,
		   bp_timer_fn fn, void *arg);
/* bp_timer_stop - disarm; harmless when not armed. */
void bp_timer_stop(struct bp_loop *loop, struct bp_timer *t);
static inline bool bp_timer_armed(const struct bp_timer *t) { return t->heap_index != 0; }

/* ---- connections ---- */

struct bp_conn_ops {
	/*
	 * Bytes arrived. Stream sockets: data holds everything not yet consumed; return
	 * how many bytes were consumed, the rest is presented again with the next bytes.
	 * Datagram sockets: one call per datagram, the return value is ignored.
	 */
	size_t (*on_recv)(struct bp_conn *c, const uint8_t *data, size_t len);
	/* Optional: an outgoing connect finished (err 0) ; on failure on_close gets it. */
	void (*on_connect)(struct bp_conn *c);
	/* Optional: the send queue became empty. */
	void (*on_drain)(struct bp_conn *c);
	/*
	 * The connection is gone: err 0 = peer closed; otherwise -errno from the named
	 * syscall. The conn is freed after this returns. Called exactly once for every
	 * conn that ends by itself or by bp_conn_close_after_send; not for bp_conn_close().
	 */
	void (*on_close)(struct bp_conn *c, int err, const char *syscall);
	/*
	 * Optional, with bp_conn_enable_timestamps: the kernel's software transmit
	 * timestamp (CLOCK_REALTIME ns) of the send with this OPT_ID key (UDP: the
	 * datagram's number from 0; TCP: the offset of its last byte).
	 */
	void (*on_tx_timestamp)(struct bp_conn *c, uint32_t key, uint64_t realtime_ns);
};

/*
 * bp_conn_connect - start a non-blocking connect of a new socket of type
 * SOCK_STREAM or SOCK_DGRAM (a connected UDP socket). ops->on_connect fires when
 * it is up. Returns 0 and sets *connp (may be NULL), or -errno.
 */
int bp_conn_connect(struct bp_loop *loop, const struct sockaddr *addr, socklen_t addrlen,
		    int type, const struct bp_conn_ops *ops, void *user, struct bp_conn **connp);

/*
 * bp_conn_adopt - serve an already connected or bound fd on this loop; the conn
 * owns the fd from now on (closes it). The fd is made non-blocking.
 * Returns 0 and sets *connp (may be NULL), or -errno (fd closed then too).
 */
int bp_conn_adopt(struct bp_loop *loop, int fd, const struct bp_conn_ops *ops, void *user,
		  struct bp_conn **connp);

/*
 * bp_conn_send - send len bytes. What the socket does not take now is copied to the
 * connection's send queue and sent in order as it drains (partial sends handled).
 * Datagram conns: one datagram, to the connected peer, or, when not connected, to
 * the source of the last datagram received. Returns 0 or -errno (-ENOTCONN when closing).
 */
int bp_conn_send(struct bp_conn *c, const void *data, size_t len);

/* bp_conn_close - close now; queued bytes not yet sent are dropped. No on_close. */
void bp_conn_close(struct bp_conn *c);

/*
 * bp_conn_close_after_send - close once the send queue is empty; on_close(c, 0,
 * "close") runs then (or earlier, with the error, if the peer goes first).
 */
void bp_conn_close_after_send(struct bp_conn *c);

int bp_conn_fd(const struct bp_conn *c);
struct bp_loop *bp_conn_loop(const struct bp_conn *c);
void *bp_conn_data(const struct bp_conn *c);
void bp_conn_set_data(struct bp_conn *c, void *user);
/* bp_conn_pending - bytes queued and not yet handed to the kernel. */
size_t bp_conn_pending(const struct bp_conn *c);
/* bp_conn_napi_id - SO_INCOMING_NAPI_ID of the socket (0 on loopback or before traffic). */
uint32_t bp_conn_napi_id(struct bp_conn *c);
/*
 * bp_conn_enable_timestamps - SO_TIMESTAMPING software receive and transmit
 * timestamps (OPT_ID, TSONLY). Receives then go through recvmsg with a control
 * buffer; bp_conn_rx_timestamp gives the last one. Transmit timestamps arrive on
 * the error queue: the loop drains it when the socket reports an error-queue
 * event (epoll), and bp_conn_read_tx_timestamps drains it on demand (any backend).
 * Returns 0 or -errno.
 */
int bp_conn_enable_timestamps(struct bp_conn *c);
/* bp_conn_rx_timestamp - software rx timestamp (CLOCK_REALTIME ns) of the last receive; 0 if none. */
uint64_t bp_conn_rx_timestamp(const struct bp_conn *c);
/*
 * bp_conn_read_tx_timestamps - read the error queue now, calling on_tx_timestamp
 * for each transmit timestamp. Returns how many, or -errno.
 */
int bp_conn_read_tx_timestamps(struct bp_conn *c);

/* bp_conn_peer - for datagram conns: the source of the last datagram. */
const struct sockaddr_storage *bp_conn_peer(const struct bp_conn *c, socklen_t *len);

/* ---- listeners ---- */

/*
 * on_accept gets each accepted fd (non-blocking, owned by the callee: adopt it
 * here, post it to another loop, or close it).
 */
typedef void (*bp_accept_fn)(struct bp_listener *l, int fd, void *arg);

/*
 * bp_listener_create - listen on addr (SO_REUSEADDR, backlog 4096) and call
 * on_accept for each connection. Returns 0 and sets *lp, or -errno
 * (-EADDRINUSE: the port is taken).
 */
int bp_listener_create(struct bp_loop *loop, const struct sockaddr *addr, socklen_t addrlen,
		       bp_accept_fn on_accept, void *arg, struct bp_listener **lp);
/*
 * bp_listener_on_error - fn(l, err, arg) when accepting starts failing for want
 * of resources (err -EMFILE, -ENFILE, -ENOMEM or -ENOBUFS), and fn(l, 0, arg)
 * at the first accept that succeeds after that. Meanwhile the listener stops
 * accepting for 100 ms at a time (the connections already accepted are served
 * as usual; new ones wait in the kernel's backlog). One call per episode, not
 * per retry, so fn may log. arg is the listener's.
 */
typedef void (*bp_accept_error_fn)(struct bp_listener *l, int err, void *arg);
void bp_listener_on_error(struct bp_listener *l, bp_accept_error_fn fn);

/* bp_listener_port - the bound port (useful after binding port 0). */
uint16_t bp_listener_port(const struct bp_listener *l);
int bp_listener_fd(const struct bp_listener *l);
struct bp_loop *bp_listener_loop(const struct bp_listener *l);
void bp_listener_close(struct bp_listener *l);

/* ---- placement by NAPI id ---- */

/*
 * A placer maps NAPI ids to loops: all connections of one NAPI id go to the same
 * loop (busy polling only works when every fd of an epoll context shares its NAPI
 * id). A new id goes to the loop with the fewest ids; id 0 (loopback, unknown)
 * goes round robin. Thread-safe.
 */
struct bp_placer;
int bp_placer_create(struct bp_placer **pp, struct bp_loop **loops, size_t nloops);
void bp_placer_destroy(struct bp_placer *p);
/* bp_placer_pick - the loop index for a connection with this NAPI id. */
size_t bp_placer_pick(struct bp_placer *p, uint32_t napi_id);
/*
 * bp_placer_dispatch - pick a loop for fd by its SO_INCOMING_NAPI_ID and post it
 * there; on that loop, adopt(loop, fd, arg) runs. Returns the loop index or -errno.
 */
typedef void (*bp_adopt_fn)(struct bp_loop *loop, int fd, void *arg);
int bp_placer_dispatch(struct bp_placer *p, int fd, bp_adopt_fn adopt, void *arg);

#ifdef __cplusplus
}
#endif
#endif /* BUSYPOLL_LOOP_H */
