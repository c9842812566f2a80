/* SPDX-License-Identifier: MIT */
/*
 * Asynchronous storage I/O on a loop: reads, writes, syncs and fallocate on files
 * and block devices, submitted without blocking the loop and completed back on
 * it, on every backend.
 *
 *   uring backend  the I/O goes on the loop's own ring, beside its sockets, and is
 *                  submitted with the loop's next wait (one io_uring_enter for both).
 *   epoll backend  the I/O goes on a storage ring of the loop's own (io_uring,
 *                  created at the loop's first submission), submitted once per loop
 *                  iteration just before the wait; its completions signal an eventfd
 *                  that the loop's epoll set watches, so they wake the loop as a
 *                  socket would.
 *
 * Either way the completion callback runs on the loop's thread, from
 * bp_loop_run_once after the iteration's socket events, never inside
 * bp_aio_submit. Every syscall this costs is counted in the loop's counters
 * (bp_loop_counters: syscalls), each completion in its completions.
 *
 * Queues: a struct bp_aio_queue is one device's queue on one loop. At most its
 * depth of its I/Os are in flight in the kernel; submissions beyond that wait, in
 * the order they were submitted, and go as earlier ones complete. Give each
 * device its own queue: a slow device then holds only its own slots, and a fast
 * one on the same loop keeps completing at its own speed.
 *
 * Transfers: a read or write the kernel does only in part (a signal, a file
 * system's short write) is continued by the engine from where it stopped, so a
 * READ or WRITE completes with all of its length, with less only at the end of a
 * file (a read from or beyond EOF), or with -errno.
 *
 * Memory and lifetime: everything is the caller's (the engine allocates only the
 * epoll storage ring and its per-loop state, once). A struct bp_aio and its buffer
 * must stay valid and untouched until its callback ran. O_DIRECT files need the
 * buffer, offset and length aligned as the file system or device says (statx
 * STATX_DIOALIGN; 4096 is always enough). bp_loop_destroy with I/O still pending
 * waits for the kernel to finish it (so no buffer is written after it returns) but
 * runs no callback: call bp_aio_drain first when the callbacks matter.
 *
 * Threading: all of it on the loop's own thread. Errors: 0 or -errno, with the
 * reason in bp_last_error().
 */
#ifndef BUSYPOLL_AIO_H
#define BUSYPOLL_AIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <busypoll/loop.h>

#ifdef __cplusplus
extern "C" {
#endif

enum bp_aio_op {
	BP_AIO_READ = 1,     /* len bytes at off into buf */
	BP_AIO_WRITE,        /* len bytes from buf to off; flags BP_AIO_FUA: durable when it completes */
	BP_AIO_FSYNC,        /* fsync(2): data and metadata */
	BP_AIO_FDATASYNC,    /* fdatasync(2): data and what is needed to read it back */
	BP_AIO_FALLOCATE,    /* fallocate(2) of len bytes at off, mode = FALLOC_FL_* (linux/falloc.h) */
};

/* WRITE with RWF_DSYNC: on stable storage when it completes (NVMe's Force Unit Access). */
#define BP_AIO_FUA 1u

/* The largest READ/WRITE length: the result is an int. */
#define BP_AIO_MAX_LEN (1u << 30)
/* The deepest queue. */
#define BP_AIO_MAX_DEPTH 4096u

struct bp_aio;
/*
 * A storage I/O completed, on its loop's thread. res: READ/WRITE the bytes
 * transferred (len, or less for a read that met the end of the file), others 0;
 * or -errno from the kernel (-EIO, -ENOSPC, -EROFS, -EOPNOTSUPP, ...). The aio and
 * its buffer are the caller's again; the callback may submit more.
 */
typedef void (*bp_aio_fn)(struct bp_aio *a, int res);

struct bp_aio {
	/* set by the caller before bp_aio_submit, untouched by the engine */
	uint8_t op;          /* enum bp_aio_op */
	uint32_t flags;      /* BP_AIO_FUA */
	int mode;            /* FALLOCATE: FALLOC_FL_* */
	int fd;
	void *buf;           /* READ/WRITE */
	uint64_t off;        /* READ/WRITE/FALLOCATE: byte offset */
	uint64_t len;        /* READ/WRITE: bytes (1..BP_AIO_MAX_LEN); FALLOCATE: bytes (> 0) */
	bp_aio_fn done;
	void *arg;           /* for the callback */
	/* the engine's */
	struct bp_aio_queue *q;
	struct bp_aio *next;
	uint64_t xfer;       /* bytes transferred so far */
	int res;             /* the result, once completed */
};

/* What a queue has done, and what it is doing now. */
struct bp_aio_stats {
	uint64_t submitted;      /* I/Os given to bp_aio_submit */
	uint64_t completed;      /* callbacks run */
	uint64_t waited;         /* found the queue full and waited their turn */
	uint64_t errors;         /* completed with -errno */
	uint64_t continued;      /* short transfers continued from where the kernel stopped */
	uint32_t depth;          /* at most this many in flight */
	uint32_t inflight;       /* in the kernel now */
	uint32_t max_inflight;   /* the most at once so far */
	uint32_t waiting;        /* waiting for a slot now */
};

struct bp_aio_queue;
/*
 * The end of a batch: called once after the callbacks of a loop iteration in
 * which at least one I/O of q completed, after every completion of that iteration
 * (of every queue) ran. The place to act on them together, e.g. to send the
 * responses they produced in one write.
 */
typedef void (*bp_aio_batch_fn)(struct bp_aio_queue *q, void *arg);

/* One device's queue on one loop (caller-owned; the fields are the engine's). */
struct bp_aio_queue {
	struct bp_loop *loop;
	struct bp_aio *wait_head, *wait_tail;
	struct bp_aio_stats st;
	bp_aio_batch_fn batch_fn;
	void *batch_arg;
	struct bp_aio_queue *batch_next;
	bool batch_marked;
};

/*
 * bp_aio_queue_init - a queue on loop with at most depth (1..BP_AIO_MAX_DEPTH)
 * I/Os in flight. Returns 0, -EINVAL (depth) or -ENOMEM (the loop's storage state).
 */
int bp_aio_queue_init(struct bp_aio_queue *q, struct bp_loop *loop, uint32_t depth);

/* bp_aio_queue_on_batch - call fn(q, arg) at the end of each batch with completions of q (NULL: none). */
void bp_aio_queue_on_batch(struct bp_aio_queue *q, bp_aio_batch_fn fn, void *arg);

/* bp_aio_queue_stats - a copy of the queue's counters. */
void bp_aio_queue_stats(const struct bp_aio_queue *q, struct bp_aio_stats *st);

/* bp_aio_queue_idle - nothing of the queue in flight, waiting or awaiting its callback. */
bool bp_aio_queue_idle(const struct bp_aio_queue *q);

/*
 * bp_aio_submit - start a (or queue it behind the queue's depth). Returns 0: the
 * callback will run exactly once, on this loop, after this call returned (a
 * failure in the kernel comes back as its res). Or -EINVAL (op, length, no
 * callback), or the -errno of creating the epoll storage ring (io_uring_setup:
 * -ENOMEM, -EPERM when io_uring is disabled): then the callback never runs.
 */
int bp_aio_submit(struct bp_aio_queue *q, struct bp_aio *a);

/* bp_aio_pending - storage I/Os of this loop whose callback has not run yet. */
uint32_t bp_aio_pending(const struct bp_loop *loop);

/*
 * bp_aio_drain - run the loop (its sockets and timers too) until every storage
 * I/O of it has completed and its callback ran, even while the loop is stopping.
 * Returns 0, -ETIMEDOUT after timeout_ms, or the loop's error.
 */
int bp_aio_drain(struct bp_loop *loop, uint32_t timeout_ms);

#ifdef __cplusplus
}
#endif
#endif /* BUSYPOLL_AIO_H */
