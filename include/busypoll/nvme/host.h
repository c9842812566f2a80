/* SPDX-License-Identifier: MIT */
/*
 * An NVMe/TCP initiator on the busypoll engine, so every wait mode applies to the
 * host side too. Two layers:
 *
 *  - Queues (asynchronous): one TCP connection each, on one loop. Open it, wait
 *    for it to be ready, submit commands with a callback; in-capsule writes up to
 *    the queue's limit, R2T/H2CData beyond it, C2HData into the caller's buffer,
 *    digests when asked. Commands are preallocated at the queue's depth: nothing
 *    is allocated per command. Submissions can be corked and sent in one batch.
 *  - A controller (synchronous helpers): connect the admin queue, enable, identify,
 *    set the number of queues, open I/O queues, identify namespaces, do blocking
 *    reads/writes/flushes, disconnect. They run the loop on the calling thread
 *    until the answer comes (or the timeout), so use them on the loop's own thread.
 *
 * Threading: like the engine, everything is for the loop's own thread.
 * Errors: 0 or -errno, reason in bp_last_error(); NVMe statuses are returned as
 * positive values (the status field, BP_NVME_SC_* | BP_NVME_DNR) where noted.
 */
#ifndef BUSYPOLL_NVME_HOST_H
#define BUSYPOLL_NVME_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <busypoll/loop.h>
#include <busypoll/nvme/tcp.h>

#ifdef __cplusplus
extern "C" {
#endif

struct bp_nvmeh_opts {
	char subnqn[224];
	char hostnqn[224];
	uint8_t hostid[16];
	bool hdgst, ddgst;        /* ask for header / data digests in ICReq */
	uint8_t hpda;             /* alignment we ask the controller for (0 = 4 bytes) */
	uint32_t kato_ms;         /* admin queue: keep-alive timeout (0 = none); Keep Alive every kato/2 */
	uint16_t io_queue_size;   /* I/O queue entries (clamped to CAP.MQES+1 and MAXCMD) */
	bool disable_sqflow;      /* Connect cattr bit 2: lets the target use C2HData SUCCESS */
	uint32_t timeout_ms;      /* a command older than this fails its queue with -ETIMEDOUT (0 = never) */
};

/* bp_nvmeh_opts_defaults - no digests, kato 5000, queue size 128, timeout 30 s, a random host NQN/ID. */
void bp_nvmeh_opts_defaults(struct bp_nvmeh_opts *o);

/* ---- queues ---- */

struct bp_nvmeh_queue;

enum bp_nvmeh_qstate { BP_NVMEH_CONNECTING = 0, BP_NVMEH_READY, BP_NVMEH_FAILED, BP_NVMEH_CLOSED };

/*
 * A command finished. err 0: cqe holds the controller's answer (cqe->status 0 =
 * success). err < 0: the queue failed (connection lost, protocol error, timeout)
 * and cqe is NULL. Called on the loop's thread; may submit again.
 */
typedef void (*bp_nvmeh_done_fn)(void *arg, const struct bp_nvme_cqe *cqe, int err);

/*
 * bp_nvmeh_queue_open - connect to addr, exchange ICReq/ICResp, then Connect as
 * queue qid (cntlid 0xffff for the admin queue) with depth entries. Returns 0 and
 * sets *qp with the queue CONNECTING, or -errno. Wait for READY with
 * bp_nvmeh_queue_wait_ready or poll bp_nvmeh_queue_state.
 */
int bp_nvmeh_queue_open(struct bp_loop *loop, const struct sockaddr *addr, socklen_t addrlen,
			const struct bp_nvmeh_opts *o, uint16_t qid, uint16_t cntlid, uint32_t depth,
			struct bp_nvmeh_queue **qp);
enum bp_nvmeh_qstate bp_nvmeh_queue_state(const struct bp_nvmeh_queue *q);
/*
 * bp_nvmeh_queue_wait_ready - run the loop until the queue is READY or failed.
 * Returns 0; a positive NVMe status when Connect was refused (e.g. Connect
 * Invalid Host); or -errno (-ETIMEDOUT, -ECONNREFUSED, -EPROTO).
 */
int bp_nvmeh_queue_wait_ready(struct bp_nvmeh_queue *q, uint32_t timeout_ms);
/* The Connect result (the cntlid for an admin queue). */
uint16_t bp_nvmeh_queue_cntlid(const struct bp_nvmeh_queue *q);
/* Bytes of write data sent in the capsule; above it, R2T. Set from Identify (IOCCSZ). */
void bp_nvmeh_queue_set_incapsule(struct bp_nvmeh_queue *q, uint32_t bytes);
uint32_t bp_nvmeh_queue_maxh2cdata(const struct bp_nvmeh_queue *q);
uint32_t bp_nvmeh_queue_inflight(const struct bp_nvmeh_queue *q);
uint32_t bp_nvmeh_queue_depth(const struct bp_nvmeh_queue *q);
struct bp_loop *bp_nvmeh_queue_loop(const struct bp_nvmeh_queue *q);

/*
 * bp_nvmeh_submit - send one command: sqe (64 bytes; the CID and the SGL are
 * filled in here), data of len bytes in buf (to_ctrl: written to the controller;
 * else: filled by it). buf must stay valid until done runs. Returns 0, -EBUSY
 * (every entry in use), -ENOTCONN (queue not ready or failed) or -EINVAL.
 */
int bp_nvmeh_submit(struct bp_nvmeh_queue *q, const uint8_t sqe[64], void *buf, uint32_t len, bool to_ctrl,
		    bp_nvmeh_done_fn done, void *arg);
/*
 * A batch of completions: fn(arg) runs on the loop's thread at the end of every
 * receive pass in which at least one command completed, after all their done
 * callbacks ran (like io_getevents returning what had arrived). The place to
 * reap those completions together and submit the next commands in one send.
 * It may submit, cork/uncork or close the queue. NULL turns it off.
 */
typedef void (*bp_nvmeh_batch_fn)(void *arg);
void bp_nvmeh_queue_set_batch_fn(struct bp_nvmeh_queue *q, bp_nvmeh_batch_fn fn, void *arg);
/* Batching: while corked, submissions collect and leave in one send at uncork. */
void bp_nvmeh_cork(struct bp_nvmeh_queue *q);
void bp_nvmeh_uncork(struct bp_nvmeh_queue *q);
/* bp_nvmeh_queue_close - close the connection; outstanding commands get err -ECANCELED. Frees q. */
void bp_nvmeh_queue_close(struct bp_nvmeh_queue *q);
/*
 * Why the queue failed (a one-line message), "" otherwise. A refused Connect is
 * said in words: the host not allowed, the subsystem NQN unknown, which other
 * parameter the controller pointed at.
 */
const char *bp_nvmeh_queue_error(const struct bp_nvmeh_queue *q);
/* The queue's socket (getsockname: the port the controller sees), -1 once closed. */
int bp_nvmeh_queue_fd(const struct bp_nvmeh_queue *q);

/* Read/Write/Flush SQEs (nlb is the number of blocks, 1-based). */
void bp_nvmeh_sqe_rw(uint8_t sqe[64], bool write, uint32_t nsid, uint64_t slba, uint32_t nlb);
void bp_nvmeh_sqe_flush(uint8_t sqe[64], uint32_t nsid);
/* bp_nvmeh_sqe_fua - set Force Unit Access on a Read/Write/Write Zeroes SQE. */
void bp_nvmeh_sqe_fua(uint8_t sqe[64]);
/* Write Zeroes of nlb blocks (1..65536) at slba; deac: the blocks may be deallocated. No data. */
void bp_nvmeh_sqe_write_zeroes(uint8_t sqe[64], uint32_t nsid, uint64_t slba, uint32_t nlb, bool deac);
/*
 * Dataset Management of nranges ranges (1..256) with the deallocate attribute;
 * its data is the ranges, BP_NVME_DSM_RANGE_LEN bytes each (bp_nvmeh_dsm_range).
 */
void bp_nvmeh_sqe_dsm(uint8_t sqe[64], uint32_t nsid, uint32_t nranges);
/* bp_nvmeh_dsm_range - encode one range (nlb blocks at slba) at r. */
void bp_nvmeh_dsm_range(uint8_t *r, uint64_t slba, uint32_t nlb);

/* ---- a controller, synchronously ---- */

struct bp_nvmeh_ns_info {
	uint32_t nsid;
	uint64_t nblocks;
	uint32_t block_size;
	uint8_t nguid[16];
	bool read_only;            /* NSATTR: write protected */
	uint8_t dlfeat;            /* bits 2:0 001b: deallocated blocks read as zeros */
};

struct bp_nvmeh_ctrl {
	struct bp_loop *loop;
	struct sockaddr_storage addr;
	socklen_t addrlen;
	struct bp_nvmeh_opts opts;
	struct bp_nvmeh_queue *admin;
	uint16_t cntlid;
	uint64_t cap;
	uint32_t vs;
	uint8_t id[4096];          /* Identify Controller */
	uint32_t nn;
	uint32_t incapsule;        /* I/O queue in-capsule data bytes, from IOCCSZ */
	uint32_t max_transfer;     /* from MDTS (0 = no limit reported) */
	uint16_t nr_io_queues;     /* granted by Set Features */
	uint16_t io_depth;         /* entries per I/O queue, after clamping */
	char err[256];
};

/*
 * bp_nvmeh_ctrl_connect - admin queue, CC.EN=1 and wait for CSTS.RDY, Identify
 * Controller, Set Features (number of queues = want_io_queues). Returns 0; a
 * positive NVMe status if the controller refused (Connect Invalid Host...); or
 * -errno. *cp is set on success (free with bp_nvmeh_ctrl_disconnect). A discovery
 * controller (subnqn = BP_NVME_DISC_NQN) skips Set Features.
 */
int bp_nvmeh_ctrl_connect(struct bp_loop *loop, const struct sockaddr *addr, socklen_t addrlen,
			  const struct bp_nvmeh_opts *o, uint16_t want_io_queues, struct bp_nvmeh_ctrl **cp);
/* bp_nvmeh_ctrl_io_queue - open I/O queue qid (1..nr_io_queues) on loop (may be another thread's: then wait there). */
int bp_nvmeh_ctrl_io_queue(struct bp_nvmeh_ctrl *c, struct bp_loop *loop, uint16_t qid, struct bp_nvmeh_queue **qp);
/* bp_nvmeh_identify_ns - Identify Namespace. 0, a positive status, or -errno. */
int bp_nvmeh_identify_ns(struct bp_nvmeh_ctrl *c, uint32_t nsid, struct bp_nvmeh_ns_info *info);
/*
 * bp_nvmeh_admin_sync - any admin command, waiting for it: data (len bytes) in
 * buf in the direction given. *result gets dword 0..1 of the CQE (may be NULL).
 * Returns 0, a positive NVMe status, or -errno.
 */
int bp_nvmeh_admin_sync(struct bp_nvmeh_ctrl *c, uint8_t sqe[64], void *buf, uint32_t len, bool to_ctrl,
			uint64_t *result);
/* bp_nvmeh_sync - the same on any queue, running q's loop. */
int bp_nvmeh_sync(struct bp_nvmeh_queue *q, uint8_t sqe[64], void *buf, uint32_t len, bool to_ctrl,
		  uint64_t *result, uint32_t timeout_ms);
/* Property Get/Set on the admin queue (size 4 or 8). */
int bp_nvmeh_prop_get(struct bp_nvmeh_ctrl *c, uint32_t offset, int size, uint64_t *value);
int bp_nvmeh_prop_set(struct bp_nvmeh_ctrl *c, uint32_t offset, uint32_t value);
/* bp_nvmeh_ctrl_disconnect - CC.SHN normal shutdown, wait for SHST, close the admin queue, free. */
void bp_nvmeh_ctrl_disconnect(struct bp_nvmeh_ctrl *c);
/*
 * bp_nvmeh_ctrl_close - close the admin queue without a shutdown and free: for a
 * controller that failed or stopped answering (a shutdown would wait for it).
 */
void bp_nvmeh_ctrl_close(struct bp_nvmeh_ctrl *c);

/*
 * bp_nvmeh_run_until - run loop until *flag or timeout_ms passed. Returns 0 or
 * -ETIMEDOUT (or a loop error).
 */
int bp_nvmeh_run_until(struct bp_loop *loop, const volatile bool *flag, uint32_t timeout_ms);

#ifdef __cplusplus
}
#endif
#endif /* BUSYPOLL_NVME_HOST_H */
