/* SPDX-License-Identifier: MIT */
/* Per-NAPI settings over the netdev generic netlink family (libmnl). */
#ifndef BUSYPOLL_NAPI_H
#define BUSYPOLL_NAPI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct bp_napi_info {
	uint32_t id;
	uint32_t ifindex;
	int32_t irq;               /* -1 when the kernel gave none */
	int32_t pid;               /* threaded NAPI kthread, -1 when none */
	uint32_t defer_hard_irqs;
	uint64_t gro_flush_timeout_ns;
	uint64_t irq_suspend_timeout_ns;
	uint32_t threaded;
	uint32_t has;              /* bits of BP_NAPI_HAS_*: which attributes the kernel sent */
};
enum {
	BP_NAPI_HAS_IRQ = 1u << 0,
	BP_NAPI_HAS_PID = 1u << 1,
	BP_NAPI_HAS_DEFER = 1u << 2,
	BP_NAPI_HAS_GRO_FLUSH = 1u << 3,
	BP_NAPI_HAS_IRQ_SUSPEND = 1u << 4,
	BP_NAPI_HAS_THREADED = 1u << 5,
};

/* Settings to change; only fields whose BP_NAPI_HAS_* bit is in .has are sent. */
typedef struct bp_napi_info bp_napi_settings;

/*
 * bp_napi_list - every NAPI instance in this network namespace (ifindex 0) or of one
 * device. Writes up to max entries; returns how many exist, or -errno
 * (-ENOENT: the kernel has no netdev netlink family).
 */
int bp_napi_list(uint32_t ifindex, struct bp_napi_info *out, size_t max);
/* bp_napi_get - one NAPI by id. 0, -ENOENT, -errno. */
int bp_napi_get(uint32_t id, struct bp_napi_info *out);
/*
 * bp_napi_set - change the settings marked in s->has of NAPI id. 0, -EPERM
 * (needs CAP_NET_ADMIN), -EOPNOTSUPP (this kernel lacks an attribute: bp_last_error
 * names it), -ENOENT, -errno.
 */
int bp_napi_set(uint32_t id, const bp_napi_settings *s);

/* Device-wide sysfs knobs: /sys/class/net/DEV/{napi_defer_hard_irqs,gro_flush_timeout}. */
int bp_dev_get_knob(const char *dev, const char *knob, uint64_t *value);
int bp_dev_set_knob(const char *dev, const char *knob, uint64_t value);

#ifdef __cplusplus
}
#endif
#endif
