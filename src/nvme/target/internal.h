/* SPDX-License-Identifier: MIT */
/*
 * The target's insides, shared by its files:
 *   ns.c         namespaces (ram, file, block device): opening, what each supports,
 *                the ram ones' synchronous accesses
 *   ctrl.c       controllers: registry, properties, keep-alive, teardown across loops
 *   queue.c      one TCP connection: PDU framing, transmit batch, poll-mode work
 *   fabrics.c    Connect, Property Get/Set
 *   admin.c      Identify, Get Log Page, features, keep alive, AER
 *   io.c         Read, Write (in-capsule and R2T/H2CData), Flush, Write Zeroes,
 *                Dataset Management: storage I/O through the thread's aio queues
 *   target.c     threads, listener, placement, counters
 */
#ifndef BP_NVME_TARGET_INTERNAL_H
#define BP_NVME_TARGET_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <busypoll/busypoll.h>
#include <busypoll/nvme/target.h>
#include <busypoll/nvme/tcp.h>

/* ---- fixed limits (documented in docs/nvme-target.md) ---- */
#define NVMET_ADMIN_DEPTH 32          /* admin queue entries (Linux asks for 32) */
#define NVMET_ADMIN_INLINE 8192       /* in-capsule bytes on the admin queue (Linux's NVME_TCP_ADMIN_CCSZ) */
#define NVMET_RECV_BUDGET 8           /* PDUs handled per receive pass before a send pass (nvmet: 8) */
#define NVMET_SEND_BUDGET 8           /* deferred commands restarted per send pass */
#define NVMET_TXB_SIZE (64u * 1024)   /* transmit batch: small PDUs and small reads leave in one send */
#define NVMET_TX_HIGH (4u << 20)      /* stop starting reads while this much waits to be sent */
#define NVMET_BOUNCE_SIZE (128u * 1024) /* admin data, per queue */
#define NVMET_BUF_KEEP (128u * 1024)  /* a command slot keeps its data buffer up to this size */
#define NVMET_BUF_ALIGN 4096u         /* data buffers: enough for O_DIRECT on any device */
#define NVMET_DRAIN_MS 30000          /* at stop: how long storage I/O in flight is waited for */
#define NVMET_KAS 10                  /* Identify KAS: keep-alive granularity, 100 ms units */
#define NVMET_CLOSED_KEEP 256         /* closed queues whose counters we keep for the report */

/* ---- logging ---- */
void nvmet_log(struct bp_nvmet *t, enum bp_nvmet_log level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* ---- namespaces (ns.c) ---- */
struct nvmet_ns {
	uint32_t nsid;
	enum bp_nvmet_ns_kind kind;
	uint8_t *ram;
	int fd;                   /* file and block device: the I/O goes through the aio queues */
	bool blockdev;
	bool direct;              /* opened O_DIRECT: buffers, offsets and lengths block-aligned */
	bool readonly;
	bool vwc;                 /* a volatile write cache: Flush is an fdatasync */
	bool can_zero;            /* Write Zeroes: fallocate(zero_mode) */
	bool can_dealloc;         /* Dataset Management deallocate: fallocate(dealloc_mode) */
	bool dealloc_zeroes;      /* deallocated blocks read as zeros */
	int zero_mode, dealloc_mode;  /* FALLOC_FL_* */
	uint64_t size;            /* bytes, a multiple of the block size */
	uint64_t nblocks;
	uint32_t lba_shift;       /* 9..12 */
	uint8_t nguid[16];        /* stable across restarts: derived from the NQN and nsid */
	uint8_t uuid[16];
	char desc[1100];          /* "ram:64M" / "file:/path" for logs */
};
int nvmet_ns_open(struct nvmet_ns *ns, const struct bp_nvmet_ns_spec *spec, uint32_t nsid, const char *nqn);
void nvmet_ns_close(struct nvmet_ns *ns);
/* ram: zero [off, off+len): pages given back (they read as zeros), the edges cleared. */
void nvmet_ns_ram_zero(struct nvmet_ns *ns, uint64_t off, uint64_t len);
/*
 * nvmet_storage_status - the NVMe status for a storage error (-errno) of a command
 * with opcode opc: ENOSPC Capacity Exceeded; EROFS/EPERM/EACCES on a write
 * Namespace Write Protected; EIO Unrecovered Read Error (reads) or Write Fault
 * (everything else), which the host may retry; a device gone (ENODEV, ENXIO) and
 * other errors the same with DNR; ENOMEM/EAGAIN Internal Error (retryable).
 */
uint16_t nvmet_storage_status(int err, uint8_t opc);

/* ---- commands (per queue, preallocated at its depth) ---- */
enum nvmet_cmd_state {
	CMD_FREE = 0,
	CMD_WAIT_DATA,            /* write: R2T sent, H2CData expected */
	CMD_DEFERRED,             /* read: waits for room in the send queue */
	CMD_AER,                  /* Asynchronous Event Request: kept outstanding */
	CMD_STORAGE,              /* its storage I/O is in flight (cmd->aio) */
};

struct nvmet_queue;

struct nvmet_cmd {
	uint8_t sqe[BP_NVME_SQE_LEN];
	uint16_t cid;
	uint16_t idx;             /* our slot, and the R2T transfer tag */
	uint8_t state;            /* enum nvmet_cmd_state */
	uint16_t status;          /* a failure seen while data was still arriving (data digest) */
	struct nvmet_ns *ns;
	uint64_t off;             /* byte offset in the namespace */
	uint32_t len;             /* data bytes */
	uint32_t done;            /* H2CData bytes received so far */
	uint16_t next_free;
	uint16_t next_deferred;
	struct nvmet_queue *q;    /* its queue (storage completions find their way back) */
	struct bp_aio aio;        /* the storage I/O of this command, one at a time */
	uint8_t *buf;             /* aligned data buffer: read data, write data, DSM ranges */
	uint32_t buf_cap;
	uint32_t step;            /* multi-step commands: DSM range, broadcast Flush nsid, WZ phase */
};

/* ---- queues ---- */
enum nvmet_qstate { Q_WAIT_IC = 0, Q_WAIT_CONNECT, Q_LIVE, Q_CLOSING };

struct nvmet_thread;
struct nvmet_ctrl;
struct nvmet_ioq_kill;

struct nvmet_queue {
	struct bp_nvmet *t;
	struct nvmet_thread *th;
	struct bp_conn *conn;
	uint64_t id;
	enum nvmet_qstate state;
	char peer[64];
	struct bp_nvme_tcp_rx_cfg rx;
	bool hdgst, ddgst;
	uint8_t hpda;                 /* the host's alignment for our data PDUs */
	uint16_t qid;
	uint32_t depth;               /* entries: Connect's sqsize + 1 */
	uint16_t sqhd;
	bool sqflow_off;              /* Connect cattr: SQ flow control disabled -> C2HData SUCCESS */
	struct nvmet_ctrl *ctrl;
	struct nvmet_cmd *cmds;       /* [depth], allocated at Connect */
	uint32_t ncmds;
	struct nvmet_cmd scratch;     /* the Connect command, before the depth is known */
	bool in_recv;                 /* inside on_recv or other work on q: closing waits until it unwinds */
	bool killed;
	uint16_t free_head;           /* 0xffff = none */
	uint16_t def_head, def_tail;  /* deferred reads, FIFO; 0xffff = none */
	uint32_t inflight;            /* commands holding a slot (AERs included) */
	uint8_t *txb;                 /* transmit batch */
	size_t txlen;
	uint8_t *bounce;              /* admin data */
	uint32_t io_inflight;         /* commands with storage I/O in flight */
	bool zombie;                  /* closed with storage I/O in flight: freed by the last completion */
	bool dirty;                   /* on the thread's dirty list: responses to send after the batch */
	struct nvmet_queue *dirty_next;
	struct bp_timer connect_timer;  /* until Connect: cfg.connect_timeout_ms */
	/* poll mode */
	struct bp_timer poll_timer;
	bool polling;
	uint64_t period_start_ns;
	uint64_t period_ops;
	uint64_t pass_ops;            /* operations since the last pass was counted */
	uint32_t logged;              /* error kinds already logged on this queue (once each) */
	struct bp_nvmet_queue_stats st;
	struct nvmet_queue *next, *prev;  /* the thread's list (of live queues, or of zombies) */
};

/* Error kinds logged once per queue. */
enum {
	LOGGED_LBA = 1u << 0,
	LOGGED_DDGST = 1u << 1,
	LOGGED_INVALID = 1u << 2,
	LOGGED_IO = 1u << 3,
	LOGGED_SEQ = 1u << 4,
	LOGGED_RO = 1u << 5,
	LOGGED_NOSPC = 1u << 6,
	LOGGED_SHORT = 1u << 7,
};

/* queue.c */
void nvmet_queue_adopt(struct bp_loop *loop, int fd, void *arg);
/* nvmet_queue_fatal - log once, send a C2HTermReq (fes/fei, offending header) and close after it. */
void nvmet_queue_fatal(struct nvmet_queue *q, uint16_t fes, uint32_t fei, const uint8_t *hdr, size_t hdr_len,
		       const char *why);
/* nvmet_queue_kill - close now (controller reset, keep-alive expiry, target stop); no TermReq. */
void nvmet_queue_kill(struct nvmet_queue *q, const char *why);
void nvmet_queue_free_all(struct nvmet_thread *th);
/* nvmet_queue_set_depth - allocate the command slots (at Connect). 0 or -ENOMEM. */
int nvmet_queue_set_depth(struct nvmet_queue *q, uint32_t depth);
/* Completion: a CapsuleResp for cmd with status and result (and free its slot). */
void nvmet_complete(struct nvmet_queue *q, struct nvmet_cmd *cmd, uint16_t status, uint64_t result);
/* nvmet_tx_reserve - room for n bytes in the transmit batch (flushes it first when full). */
uint8_t *nvmet_tx_reserve(struct nvmet_queue *q, size_t n);
void nvmet_tx_commit(struct nvmet_queue *q, size_t n);
void nvmet_tx_flush(struct nvmet_queue *q);
/* nvmet_tx_data - data bytes: copied into the batch when they fit, else handed to the socket as they are. */
void nvmet_tx_data(struct nvmet_queue *q, const uint8_t *buf, size_t n);
/*
 * nvmet_send_c2h - C2HData for cmd: data_len bytes, of which the first buf_len come
 * from buf (ram, or an already filled bounce buffer) and the rest are zeros; then
 * the CapsuleResp unless SUCCESS was used. Frees the slot.
 */
void nvmet_send_c2h(struct nvmet_queue *q, struct nvmet_cmd *cmd, const uint8_t *buf, size_t buf_len,
		    uint32_t data_len);
void nvmet_count_error(struct nvmet_queue *q, uint16_t status);
void nvmet_cmd_free(struct nvmet_queue *q, struct nvmet_cmd *cmd);
/* nvmet_cmd_buf - cmd's aligned data buffer of at least len bytes (NULL: out of memory). */
uint8_t *nvmet_cmd_buf(struct nvmet_cmd *cmd, uint32_t len);
/* nvmet_cmd_buf_release - give back a buffer larger than a slot keeps (NVMET_BUF_KEEP). */
void nvmet_cmd_buf_release(struct nvmet_cmd *cmd);
/*
 * nvmet_queue_io_end - cmd's storage I/O is back. Returns true if q lives on (act on
 * the result, then nvmet_queue_mark_dirty); false if q was closed meanwhile (the
 * command is dropped; the last one frees q).
 */
bool nvmet_queue_io_end(struct nvmet_queue *q, struct nvmet_cmd *cmd);
/*
 * nvmet_queue_work_begin / _end - around work on q outside its connection's own
 * callbacks (timers, storage completions): a close meanwhile (the send failed, the
 * controller went) waits until _end, which then closes and frees q. _end returns
 * false if q is gone.
 */
void nvmet_queue_work_begin(struct nvmet_queue *q);
bool nvmet_queue_work_end(struct nvmet_queue *q);
/* nvmet_queue_mark_dirty - send q's responses at the end of the completion batch. */
void nvmet_queue_mark_dirty(struct nvmet_queue *q);
/* nvmet_thread_flush_dirty - the batch is over: a send pass for every queue with new responses. */
void nvmet_thread_flush_dirty(struct nvmet_thread *th);

/* ---- controllers (ctrl.c) ---- */
struct nvmet_ioq_ref {
	struct nvmet_queue *q;        /* touched only on that queue's loop */
	struct bp_loop *loop;
	uint64_t qid_seq;             /* the queue's id; 0 = slot free */
};

struct nvmet_ctrl {
	struct bp_nvmet *t;
	uint16_t cntlid;
	bool discovery;
	char subnqn[BP_NVMET_NQN_SIZE];
	char hostnqn[BP_NVMET_NQN_SIZE];
	uint8_t hostid[16];
	/* admin-loop state (only the admin queue's thread touches these) */
	struct nvmet_queue *admin;
	uint32_t cc;
	uint32_t kato_ms;
	struct bp_timer ka_timer;
	uint64_t ka_last_ns;
	uint32_t aen_cfg;
	_Atomic uint32_t feat_vwc;    /* 0: the host turned the write cache off, writes go FUA */
	uint32_t feat_temp, feat_arb, feat_power, feat_err;
	struct bp_aio shn_aio;        /* CC.SHN: the namespaces' fdatasync, one after the other */
	struct nvmet_thread *shn_th;  /* on the admin queue's thread */
	int shn_next;                 /* the next namespace index to flush */
	bool shn_busy;
	/* shared (I/O queues read csts; Connect on any loop installs queues) */
	_Atomic uint32_t csts;
	pthread_mutex_t lock;         /* refs, dead, nr_io_queues, ioq[] */
	int refs;
	bool dead;
	uint16_t nr_io_queues;        /* granted by Set Features; I/O queues 1..this */
	struct nvmet_ioq_ref *ioq;    /* [max_queues + 1] */
	struct nvmet_ctrl *next;      /* registry */
};

struct nvmet_ctrl *nvmet_ctrl_create(struct bp_nvmet *t, struct nvmet_queue *admin, const uint8_t *cd,
				     bool discovery, uint32_t kato_ms);
/* Find a live controller for an I/O queue Connect and install q as qid; a status on failure. */
uint16_t nvmet_ctrl_attach_ioq(struct bp_nvmet *t, struct nvmet_queue *q, const uint8_t *cd, uint16_t qid,
			       uint32_t *result, struct nvmet_ctrl **out);
void nvmet_ctrl_detach(struct nvmet_queue *q);
/* Reset (CC.EN 1->0) or death: close the I/O queues on their loops. */
void nvmet_ctrl_kill_ioqs(struct nvmet_ctrl *c);
/* nvmet_ctrl_free_kills - the closes posted to loops that stopped before running them. */
void nvmet_ctrl_free_kills(struct bp_nvmet *t);
void nvmet_ctrl_put(struct nvmet_ctrl *c);
void nvmet_ctrl_keep_alive(struct nvmet_ctrl *c);
/*
 * nvmet_ctrl_shutdown - CC.SHN: fdatasync every namespace with a write cache
 * through admin's thread's storage queues, CSTS.SHST "occurring" meanwhile and
 * "complete" after (as the host polls it).
 */
void nvmet_ctrl_shutdown(struct nvmet_ctrl *c, struct nvmet_queue *admin);
uint64_t nvmet_ctrl_cap(const struct bp_nvmet *t, const struct nvmet_ctrl *c);

/* ---- commands (fabrics.c, admin.c, io.c) ---- */
/* Execute one CapsuleCmd; in-capsule data (if any) at data. */
void nvmet_exec(struct nvmet_queue *q, struct nvmet_cmd *cmd, const uint8_t *data, uint32_t data_len);
void nvmet_exec_fabrics(struct nvmet_queue *q, struct nvmet_cmd *cmd, const uint8_t *data, uint32_t data_len);
void nvmet_exec_admin(struct nvmet_queue *q, struct nvmet_cmd *cmd);
void nvmet_exec_io(struct nvmet_queue *q, struct nvmet_cmd *cmd, const uint8_t *data, uint32_t data_len);
/* H2CData for a write waiting for data. */
void nvmet_h2c_data(struct nvmet_queue *q, const struct bp_nvme_tcp_pdu *pdu);
/* Restart a deferred read (send queue drained). */
void nvmet_read_resume(struct nvmet_queue *q, struct nvmet_cmd *cmd);
/* The SGL says where the data is: returns a status (0 = fine) and the length. */
uint16_t nvmet_check_sgl(struct nvmet_queue *q, struct nvmet_cmd *cmd, uint32_t data_len, bool host_to_ctrl,
			 uint32_t *len);

/* ---- the target (target.c) ---- */
struct nvmet_thread {
	struct bp_nvmet *t;
	int idx;
	struct bp_loop_thread *lt;
	struct bp_loop *loop;
	struct nvmet_queue *queues;
	uint32_t nqueues;
	struct bp_aio_queue nsq[BP_NVMET_MAX_NS];  /* each namespace's storage queue on this loop */
	struct nvmet_queue *dirty;                 /* queues with responses from storage completions */
	struct nvmet_queue *zombies;               /* closed, waiting for their last storage I/O */
};

struct bp_nvmet {
	struct bp_nvmet_cfg cfg;
	struct nvmet_ns ns[BP_NVMET_MAX_NS];
	int n_ns;
	int nthreads;
	struct nvmet_thread th[BP_NVMET_MAX_THREADS];
	struct bp_loop *loops[BP_NVMET_MAX_THREADS];
	struct bp_placer *placer;
	struct bp_listener *listener;
	uint16_t port;
	char serial[21];
	atomic_uint_fast64_t next_queue_id;
	atomic_int conns;
	atomic_bool stopping;
	pthread_mutex_t lock;         /* controllers, closed-queue counters, posted closes, stopping */
	struct nvmet_ctrl *ctrls;
	struct nvmet_ioq_kill *kills; /* closes posted to I/O queues' loops, not yet run (ctrl.c) */
	uint16_t next_cntlid;
	struct bp_nvmet_queue_stats closed[NVMET_CLOSED_KEEP];
	uint32_t n_closed;            /* total ever closed; closed[] is a ring */
	pthread_mutex_t log_lock;
};

bool nvmet_host_allowed(const struct bp_nvmet *t, const char *hostnqn);
void nvmet_record_closed(struct bp_nvmet *t, const struct bp_nvmet_queue_stats *st);

#endif
