/* SPDX-License-Identifier: MIT */
/*
 * An NVMe/TCP target on the busypoll engine: one subsystem with ram, file or
 * block-device namespaces, served on N loop threads, with nvmet's poll mode (keep
 * each queue's work running until it has been idle for a period) on top of any
 * engine mode. File and block-device I/O is asynchronous (busypoll/aio.h: O_DIRECT
 * by default), completed on the loop that owns the queue, with a bounded depth to
 * each device per loop thread.
 *
 * Threading: bp_nvmet_start/stop/snapshot are for one controlling thread; the
 * target's own threads do everything else. Each TCP connection (one NVMe queue)
 * lives on one loop, placed by NAPI id; controllers span loops (their admin queue
 * on one, I/O queues anywhere) and are shared under a lock.
 *
 * Errors: functions return 0 or -errno with a one-line message in bp_last_error().
 */
#ifndef BUSYPOLL_NVME_TARGET_H
#define BUSYPOLL_NVME_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

#include <busypoll/aio.h>
#include <busypoll/mode.h>
#include <busypoll/nvme/tcp.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BP_NVMET_DEFAULT_PORT 4420
#define BP_NVMET_MAX_NS 32
#define BP_NVMET_MAX_HOSTS 64
#define BP_NVMET_MAX_THREADS 64
#define BP_NVMET_NQN_SIZE 224    /* 223 bytes and the NUL */

/* A namespace as given on the command line. */
enum bp_nvmet_ns_kind { BP_NVMET_NS_RAM = 1, BP_NVMET_NS_FILE = 2 };
struct bp_nvmet_ns_spec {
	enum bp_nvmet_ns_kind kind;
	char path[1024];          /* file: a regular file or a block device (told apart when opened) */
	uint64_t size;            /* bytes; 0 = the file's or device's own size */
	uint32_t block_size;      /* 512..4096, a power of two; 0 = the device's (file: what O_DIRECT needs; ram: 512) */
	bool buffered;            /* file: through the page cache instead of O_DIRECT */
	bool read_only;           /* file: export read-only even where writable */
};

/*
 * bp_nvmet_ns_parse - "ram:SIZE[,bs=N]" or "file:PATH[,size=SIZE][,bs=N][,buffered][,ro]",
 * SIZE with an optional K/M/G/T suffix (binary). PATH may be a regular file or a
 * block device; which, is found when it is opened. Syntax and ranges only; the file
 * is looked at by bp_nvmet_start. Returns 0 or -EINVAL with one line in err.
 */
int bp_nvmet_ns_parse(const char *text, struct bp_nvmet_ns_spec *spec, char *err, size_t errlen);

/* bp_nvmet_parse_size - "64M" etc. into bytes (suffixes K M G T, powers of 1024). 0 or -EINVAL. */
int bp_nvmet_parse_size(const char *text, uint64_t *bytes);

enum bp_nvmet_log { BP_NVMET_LOG_ERROR = 0, BP_NVMET_LOG_WARN, BP_NVMET_LOG_INFO, BP_NVMET_LOG_DEBUG };

struct bp_nvmet_cfg {
	struct sockaddr_storage listen;   /* default 127.0.0.1:4420 */
	socklen_t listen_len;
	char nqn[BP_NVMET_NQN_SIZE];
	struct bp_nvmet_ns_spec ns[BP_NVMET_MAX_NS];
	int n_ns;
	char allow_hosts[BP_NVMET_MAX_HOSTS][BP_NVMET_NQN_SIZE]; /* none = any host */
	int n_allow;
	int threads;                      /* loop threads */
	int cpus[BP_NVMET_MAX_THREADS];   /* thread i on cpus[i % ncpus]; ncpus 0 = not pinned */
	int ncpus;
	struct bp_mode mode;
	uint32_t poll_period_us;          /* 0 = poll mode off */
	int so_priority;                  /* -1 = leave the sockets alone */
	uint32_t max_queues;              /* I/O queues per controller */
	uint32_t queue_depth;             /* entries per I/O queue (MQES + 1) */
	uint32_t max_conns;               /* TCP connections at once, all controllers */
	uint32_t max_transfer;            /* bytes per command (MDTS), power of two >= 4096 */
	uint32_t inline_data;             /* in-capsule write bytes on I/O queues */
	uint32_t maxh2cdata;              /* data bytes per H2CData PDU we accept */
	uint32_t connect_timeout_ms;      /* a connection without ICReq and Connect by then is closed (0 = never) */
	uint32_t io_depth;                /* storage I/Os in flight per namespace per loop thread; more wait in order */
	enum bp_nvmet_log log_level;
	FILE *log;                        /* NULL = stderr */
};

/* bp_nvmet_cfg_defaults - the values documented for `busypoll target`. */
void bp_nvmet_cfg_defaults(struct bp_nvmet_cfg *cfg);

struct bp_nvmet;

/*
 * bp_nvmet_start - open the namespaces, start the threads, listen. Returns 0 and
 * sets *tp, or -errno (-EADDRINUSE: the port is taken; -ENOENT/-EACCES/-EBUSY: a
 * namespace file) with the reason in bp_last_error().
 */
int bp_nvmet_start(const struct bp_nvmet_cfg *cfg, struct bp_nvmet **tp);
/* What a namespace turned out to be once opened. */
struct bp_nvmet_ns_info {
	uint32_t nsid;
	enum bp_nvmet_ns_kind kind;
	bool blockdev;            /* file: a block device */
	bool direct;              /* O_DIRECT (file, block device) */
	bool read_only;           /* writes get Namespace Write Protected; Identify says so (NSATTR) */
	bool write_cache;         /* a volatile write cache: Flush does something (VWC) */
	bool write_zeroes;        /* Write Zeroes (ONCS bit 3) */
	bool deallocate;          /* Dataset Management deallocate frees blocks (ONCS bit 2) */
	bool dealloc_zeroes;      /* deallocated blocks read as zeros (DLFEAT 001b) */
	uint32_t block_size;
	uint64_t size;            /* bytes */
	char desc[1100];          /* "ram:64M" / "file:/path" */
};
/* bp_nvmet_ns_info - namespace index i (0-based, nsid i + 1). 0, or -ENOENT past the last. */
int bp_nvmet_ns_info(const struct bp_nvmet *t, int i, struct bp_nvmet_ns_info *info);

/* bp_nvmet_port - the port listened on (useful after port 0). */
uint16_t bp_nvmet_port(const struct bp_nvmet *t);
/* bp_nvmet_stop - close every queue, flush and close the namespaces, join the threads, free. */
void bp_nvmet_stop(struct bp_nvmet *t);

/* Counters of one queue (one TCP connection). */
struct bp_nvmet_queue_stats {
	uint64_t queue_id;        /* unique for the target's life */
	uint16_t cntlid, qid;     /* qid 0 = admin; cntlid 0xffff = not connected yet */
	int thread;
	bool live;                /* false: the queue has closed */
	char peer[64];
	char hostnqn[BP_NVMET_NQN_SIZE];
	uint64_t commands;
	uint64_t bytes_in, bytes_out;   /* NVMe data bytes (read/write payloads) */
	uint64_t reads, writes, flushes;
	uint64_t errors;          /* commands completed with an error status, and fatal PDU errors */
	uint64_t poll_passes;     /* work passes (receive + send) */
	uint64_t idle_exits;      /* poll mode: periods that ended with no operation, back to waiting */
	uint64_t polls;           /* poll mode: passes of the poll work (once per loop iteration while polling) */
	uint64_t r2ts;
	uint64_t write_zeroes;    /* Write Zeroes commands */
	uint64_t deallocs;        /* Dataset Management commands */
	uint64_t storage_errors;  /* commands failed by the file or device (EIO, ENOSPC, ...) */
};

/*
 * bp_nvmet_snapshot - the counters of live queues and of the most recently
 * closed ones (up to max entries; *n set). Gathered on each thread, so it waits
 * for every loop to answer. Returns 0 or -errno.
 */
int bp_nvmet_snapshot(struct bp_nvmet *t, struct bp_nvmet_queue_stats *out, size_t max, size_t *n);
/* One namespace's storage queue on one loop thread (file and block-device namespaces). */
struct bp_nvmet_storage_stats {
	int thread;
	uint32_t nsid;
	struct bp_aio_stats aio;  /* depth, in flight now and at most, waited, errors */
};
/*
 * bp_nvmet_storage_snapshot - the storage queues of every thread (up to max; *n
 * set), gathered on each thread like bp_nvmet_snapshot. Returns 0 or -errno.
 */
int bp_nvmet_storage_snapshot(struct bp_nvmet *t, struct bp_nvmet_storage_stats *out, size_t max, size_t *n);

/*
 * bp_nvmet_print_stats - the storage queues (lines starting "storage"), then one
 * line per queue and a total (last), for SIGUSR1 and exit.
 */
void bp_nvmet_print_stats(struct bp_nvmet *t, FILE *out);

#ifdef __cplusplus
}
#endif
#endif /* BUSYPOLL_NVME_TARGET_H */
