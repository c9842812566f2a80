/* SPDX-License-Identifier: MIT */
/*
 * Wait modes: BACKEND:POLICY[,key=value...]
 *
 *   epoll:block | uring:block             sleep until woken (the baseline)
 *   epoll:napi,usecs=N,budget=N[,prefer]  kernel NAPI busy poll via EPIOCSPARAMS
 *   uring:napi,usecs=N[,prefer][,tracking=dynamic|static]   IORING_REGISTER_NAPI
 *   epoll:spin | uring:spin               poll from userspace, never sleep
 *   epoll:hybrid,period=N | uring:hybrid,period=N
 *                                         poll while anything arrived in the last N us, then block
 *   epoll:suspend[,usecs=N,budget=N,defer=N,gro-flush=NS,suspend=NS]
 *                                         IRQ suspension (prefer busy poll + per-NAPI settings)
 *   uring:sqpoll[,idle=MS][,napi=USECS][,spin]
 *                                         SQPOLL ring, optionally with NAPI busy polling;
 *                                         spin: reap completions in userspace, no syscalls
 *   xsk:block | xsk:spin | xsk:napi,usecs=N,budget=N[,prefer]   (each [,queue=N])
 *                                         UDP datagram conns over AF_XDP rings (our XDP
 *                                         program on the device), every other fd on epoll
 * Every uring mode also takes setup=plain|coop|defer (ring setup flags, see docs).
 */
#ifndef BUSYPOLL_MODE_H
#define BUSYPOLL_MODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum bp_backend_kind {
	BP_BACKEND_EPOLL = 0,
	BP_BACKEND_URING = 1,
	BP_BACKEND_XSK = 2,    /* AF_XDP for UDP datagram conns, epoll for every other fd */
};

enum bp_policy {
	BP_POLICY_BLOCK = 0,
	BP_POLICY_NAPI,
	BP_POLICY_SPIN,
	BP_POLICY_HYBRID,
	BP_POLICY_SUSPEND,
	BP_POLICY_SQPOLL,
};

enum bp_napi_tracking {
	BP_TRACKING_DYNAMIC = 0,
	BP_TRACKING_STATIC = 1,
};

/* io_uring ring setup flags a mode can ask for. */
enum bp_uring_setup {
	BP_URING_SETUP_PLAIN = 0, /* no flags: completions arrive by task-work IPI */
	BP_URING_SETUP_COOP,      /* SINGLE_ISSUER|COOP_TASKRUN */
	BP_URING_SETUP_DEFER,     /* SINGLE_ISSUER|DEFER_TASKRUN */
};

struct bp_mode {
	enum bp_backend_kind backend;
	enum bp_policy policy;
	uint32_t busy_usecs;       /* napi/suspend: busy-poll time; sqpoll: napi=N (0 = off) */
	uint16_t budget;           /* epoll napi/suspend: packets per poll (0 = kernel default 8) */
	bool prefer;               /* prefer_busy_poll: only ever on when asked for */
	enum bp_napi_tracking tracking; /* uring napi */
	uint32_t period_us;        /* hybrid: keep polling while work came within this */
	uint32_t sq_idle_ms;       /* sqpoll: SQ thread idle before it sleeps */
	uint32_t defer_hard_irqs;  /* suspend: per-NAPI defer-hard-irqs */
	uint64_t gro_flush_ns;     /* suspend: per-NAPI gro-flush-timeout */
	uint64_t irq_suspend_ns;   /* suspend: per-NAPI irq-suspend-timeout */
	enum bp_uring_setup setup; /* uring only */
	bool spin;                 /* sqpoll: spin on the completion ring, never enter to wait */
	uint32_t sq_cpu;           /* sqpoll: the CPU the SQ thread runs on (only with BP_KEY_CPU set;
				    * otherwise it inherits the creating thread's affinity) */
	bool direct_off;           /* epoll spin/hybrid/napi: direct=0, never read before asking epoll */
	uint32_t queue;            /* xsk: the device's receive queue the AF_XDP socket binds (queue=N) */
	uint32_t keys_set;         /* bitmask of BP_KEY_* given explicitly */
};

/* Keys, as bits of bp_mode.keys_set. */
enum {
	BP_KEY_USECS = 1u << 0,
	BP_KEY_BUDGET = 1u << 1,
	BP_KEY_PREFER = 1u << 2,
	BP_KEY_TRACKING = 1u << 3,
	BP_KEY_PERIOD = 1u << 4,
	BP_KEY_IDLE = 1u << 5,
	BP_KEY_NAPI = 1u << 6,
	BP_KEY_DEFER = 1u << 7,
	BP_KEY_GRO_FLUSH = 1u << 8,
	BP_KEY_SUSPEND = 1u << 9,
	BP_KEY_SETUP = 1u << 10,
	BP_KEY_SPIN = 1u << 11,
	BP_KEY_CPU = 1u << 12,
	BP_KEY_DIRECT = 1u << 13,
	BP_KEY_QUEUE = 1u << 14,
};

/*
 * bp_mode_parse - parse "BACKEND:POLICY[,key=value...]" into *mode, defaults filled in.
 * Returns 0, or -EINVAL with a one-line message naming the bad part in err
 * (e.g. "epoll:napi: unknown key 'foo' (keys: usecs, budget, prefer)").
 * Checks syntax and ranges only, not what this kernel or process can do.
 */
int bp_mode_parse(const char *text, struct bp_mode *mode, char *err, size_t errlen);

/*
 * bp_mode_format - the canonical text of a mode, every key spelled out.
 * Returns the length written (like snprintf).
 */
int bp_mode_format(const struct bp_mode *mode, char *buf, size_t len);

/* bp_mode_name - "epoll:napi" etc. (static string). */
const char *bp_mode_name(const struct bp_mode *mode);

/*
 * bp_mode_check - can this kernel and this process use the mode right now?
 * Probed once per process (capability flags cached), not assumed.
 * Returns 0; -EOPNOTSUPP when the kernel lacks a feature; -EPERM when a privilege is
 * missing. err gets one line naming the key or capability, e.g.
 * "epoll:napi,budget=128 needs CAP_NET_ADMIN".
 */
int bp_mode_check(const struct bp_mode *mode, char *err, size_t errlen);

/* bp_mode_is_busy_poll - true when the mode asks the kernel to busy poll NAPI. */
bool bp_mode_is_busy_poll(const struct bp_mode *mode);

/* One entry per mode family, for `busypoll modes` and the compare matrix. */
struct bp_mode_info {
	const char *name;     /* "epoll:napi" */
	const char *keys;     /* "usecs=64,budget=8[,prefer]" with defaults */
	const char *summary;  /* one line */
};
/* bp_mode_table - the families, in display order; *count set. */
const struct bp_mode_info *bp_mode_table(size_t *count);

/*
 * An optional kernel feature a backend uses wherever this kernel has it (io_uring's
 * multishot receive, registered descriptors, ...): the modes work without it, the
 * feature only makes them cheaper. `busypoll modes --features` lists them.
 */
struct bp_feature {
	const char *backend;  /* "uring" */
	const char *name;     /* "multishot": the word BP_URING_FEATURES takes */
	const char *needs;    /* "Linux 6.0" */
	const char *summary;  /* what it is and what it saves, one line */
	int status;           /* 0: in use; -EOPNOTSUPP: this kernel lacks it; -ECANCELED:
			       * turned off (BP_URING_FEATURES); -EINVAL: that variable does
			       * not parse; another -errno: the probe could not run */
};
/*
 * bp_features - every backend's optional features, each probed once per process
 * (and only when asked: listing uring's creates a few rings). Writes up to max
 * into out (out may be NULL with max 0); returns how many there are.
 */
size_t bp_features(struct bp_feature *out, size_t max);

#ifdef __cplusplus
}
#endif
#endif /* BUSYPOLL_MODE_H */
