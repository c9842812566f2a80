/* SPDX-License-Identifier: MIT */
/*
 * Kernel interfaces newer than Debian 12's headers (Linux 6.1) and liburing 2.3.
 * Every constant sits behind #ifndef so that newer headers win; values are the
 * kernel's uapi (checked against Linux 6.18's headers).
 * This is the only place such constants may be defined.
 */
#ifndef BP_BASE_COMPAT_H
#define BP_BASE_COMPAT_H

#include <stdint.h>
#include <sys/ioctl.h>
#include <linux/types.h>

/* ---- epoll per-instance busy-poll parameters (Linux 6.9) ---- */
#ifndef EPOLL_IOC_TYPE
#define EPOLL_IOC_TYPE 0x8A
struct epoll_params {
	uint32_t busy_poll_usecs;
	uint16_t busy_poll_budget;
	uint8_t prefer_busy_poll;
	uint8_t __pad; /* must be zero */
};
#endif
#ifndef EPIOCSPARAMS
#define EPIOCSPARAMS _IOW(EPOLL_IOC_TYPE, 0x01, struct epoll_params)
#endif
#ifndef EPIOCGPARAMS
#define EPIOCGPARAMS _IOR(EPOLL_IOC_TYPE, 0x02, struct epoll_params)
#endif
/* budget above NAPI_POLL_WEIGHT needs CAP_NET_ADMIN */
#define BP_NAPI_POLL_WEIGHT 64

/* ---- io_uring NAPI registration (Linux 6.9; static tracking 6.13) ---- */
#ifndef IORING_REGISTER_NAPI
#define IORING_REGISTER_NAPI 27
#endif
#ifndef IORING_UNREGISTER_NAPI
#define IORING_UNREGISTER_NAPI 28
#endif
/* liburing 2.3 has no struct io_uring_napi; ours has a distinct name to avoid clashes. */
struct bp_io_uring_napi {
	uint32_t busy_poll_to; /* usecs, capped at 10000 by the kernel */
	uint8_t prefer_busy_poll;
	uint8_t opcode;        /* BP_NAPI_OP_* */
	uint8_t pad[2];
	uint32_t op_param;     /* REGISTER_OP: tracking; STATIC_ADD/DEL: napi id */
	uint32_t resv;
};
_Static_assert(sizeof(struct bp_io_uring_napi) == 16, "io_uring_napi is 16 bytes");
enum {
	BP_NAPI_OP_REGISTER = 0,   /* IO_URING_NAPI_REGISTER_OP */
	BP_NAPI_OP_STATIC_ADD = 1, /* IO_URING_NAPI_STATIC_ADD_ID */
	BP_NAPI_OP_STATIC_DEL = 2, /* IO_URING_NAPI_STATIC_DEL_ID */
};
enum {
	BP_NAPI_TRACK_DYNAMIC = 0,   /* IO_URING_NAPI_TRACKING_DYNAMIC */
	BP_NAPI_TRACK_STATIC = 1,    /* IO_URING_NAPI_TRACKING_STATIC */
	BP_NAPI_TRACK_INACTIVE = 255,
};

/* ---- io_uring ring setup newer than liburing 2.3 ---- */
#ifndef IORING_SETUP_NO_SQARRAY
#define IORING_SETUP_NO_SQARRAY (1U << 16) /* Linux 6.6: SQEs indexed by the SQ head directly */
#endif

/* ---- socket options ---- */
#ifndef SO_BUSY_POLL
#define SO_BUSY_POLL 46
#endif
#ifndef SO_INCOMING_NAPI_ID
#define SO_INCOMING_NAPI_ID 56
#endif
#ifndef SO_PREFER_BUSY_POLL
#define SO_PREFER_BUSY_POLL 69
#endif
#ifndef SO_BUSY_POLL_BUDGET
#define SO_BUSY_POLL_BUDGET 70
#endif
/* napi ids below this are sender-cpu ids, not NAPI instances */
#define BP_MIN_NAPI_ID 0x100u

/* ---- netdev generic netlink family (napi-set: Linux 6.13) ---- */
#define BP_NETDEV_FAMILY_NAME "netdev"
enum {
	BP_NETDEV_CMD_DEV_GET = 1,
	BP_NETDEV_CMD_QUEUE_GET = 10,  /* Linux 6.8 */
	BP_NETDEV_CMD_NAPI_GET = 11,
	BP_NETDEV_CMD_NAPI_SET = 14,
};
enum {
	BP_NETDEV_A_NAPI_IFINDEX = 1,
	BP_NETDEV_A_NAPI_ID = 2,
	BP_NETDEV_A_NAPI_IRQ = 3,
	BP_NETDEV_A_NAPI_PID = 4,
	BP_NETDEV_A_NAPI_DEFER_HARD_IRQS = 5,     /* u32 */
	BP_NETDEV_A_NAPI_GRO_FLUSH_TIMEOUT = 6,   /* uint (u32 or u64), ns */
	BP_NETDEV_A_NAPI_IRQ_SUSPEND_TIMEOUT = 7, /* uint, ns */
	BP_NETDEV_A_NAPI_THREADED = 8,            /* u32 */
	BP_NETDEV_A_NAPI_MAX = 8,
};
/* queue-get (Linux 6.8): one message per queue */
enum {
	BP_NETDEV_A_QUEUE_ID = 1,      /* u32, index among the queues of its type */
	BP_NETDEV_A_QUEUE_IFINDEX = 2, /* u32 */
	BP_NETDEV_A_QUEUE_TYPE = 3,    /* u32, BP_NETDEV_QUEUE_TYPE_* */
	BP_NETDEV_A_QUEUE_NAPI_ID = 4, /* u32, absent when no NAPI serves it */
};
enum { BP_NETDEV_QUEUE_TYPE_RX = 0, BP_NETDEV_QUEUE_TYPE_TX = 1 };

#endif /* BP_BASE_COMPAT_H */
