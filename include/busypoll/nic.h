/* SPDX-License-Identifier: MIT */
/*
 * A NIC's settings the way `ethtool` reads and changes them: interrupt coalescing
 * and channel counts over the kernel's ethtool generic netlink family
 * (ETHTOOL_MSG_COALESCE_GET/SET, ETHTOOL_MSG_CHANNELS_GET/SET, Linux 5.6+), and
 * the driver's name and version (the ETHTOOL_GDRVINFO ioctl, which netlink lacks).
 *
 * Devices are named as in the calling thread's network namespace, and each call
 * acts in that namespace (a thread that setns()'d into a test bed sees its
 * devices). Every function returns 0 or -errno with bp_last_error() saying what
 * failed, in words: a device whose driver cannot report or change coalescing (veth,
 * loopback) is -EOPNOTSUPP "coalesce-get va: the veth driver has no interrupt
 * coalescing"; a parameter one driver lacks is named ("coalesce-set eth0
 * adaptive-tx: the virtio_net driver does not support it"); -ENODEV for no such
 * device; -EPERM when a change needs CAP_NET_ADMIN.
 */
#ifndef BUSYPOLL_NIC_H
#define BUSYPOLL_NIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <busypoll/napi.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- interrupt coalescing ---- */

enum {
	BP_COAL_RX_USECS = 1u << 0,    /* rx-usecs: delay an rx interrupt this long */
	BP_COAL_RX_FRAMES = 1u << 1,   /* rx-frames: ... or until this many frames */
	BP_COAL_ADAPTIVE_RX = 1u << 2, /* adaptive-rx: the driver picks (DIM) */
	BP_COAL_TX_USECS = 1u << 3,
	BP_COAL_TX_FRAMES = 1u << 4,
	BP_COAL_ADAPTIVE_TX = 1u << 5,
	BP_COAL_ALL = (1u << 6) - 1,
};

struct bp_nic_coalesce {
	uint32_t rx_usecs, rx_frames;
	uint32_t tx_usecs, tx_frames;
	bool adaptive_rx, adaptive_tx;
	/*
	 * Bits of BP_COAL_*. From a get: the parameters the driver reported (those it
	 * supports, and any it left non-zero). To a set: the ones to change.
	 */
	uint32_t has;
};

/* bp_nic_coalesce_name - "rx-usecs" for BP_COAL_RX_USECS (exactly one bit), else NULL. */
const char *bp_nic_coalesce_name(uint32_t bit);

/* bp_nic_coalesce_get - dev's coalescing. 0; -EOPNOTSUPP (driver has none); -ENODEV; -errno. */
int bp_nic_coalesce_get(const char *dev, struct bp_nic_coalesce *out);

/*
 * bp_nic_coalesce_set - change the parameters marked in s->has (nothing: 0 at
 * once). The kernel takes all of them or none: a parameter the driver lacks is
 * -EOPNOTSUPP naming it, and nothing changed.
 */
int bp_nic_coalesce_set(const char *dev, const struct bp_nic_coalesce *s);

/* ---- channels (queues with their own interrupt) ---- */

enum bp_nic_chan_kind { BP_CHAN_RX, BP_CHAN_TX, BP_CHAN_OTHER, BP_CHAN_COMBINED, BP_CHAN_KINDS };

struct bp_nic_channels {
	uint32_t max[BP_CHAN_KINDS];   /* from a get: the most the driver allows */
	uint32_t count[BP_CHAN_KINDS]; /* in use (get) or wanted (set) */
	/*
	 * Bit 1 << kind. From a get: kinds the driver has (the kernel leaves out a kind
	 * whose maximum is 0: veth has rx and tx, most NICs combined). To a set: the
	 * counts to change.
	 */
	uint32_t has;
};

/* bp_nic_chan_name - "rx", "tx", "other", "combined"; NULL for another value. */
const char *bp_nic_chan_name(int kind);

/* bp_nic_channels_get - dev's channel counts and maxima. 0; -EOPNOTSUPP; -ENODEV; -errno. */
int bp_nic_channels_get(const char *dev, struct bp_nic_channels *out);

/*
 * bp_nic_channels_set - change the counts marked in s->has. A count above the
 * maximum is -EINVAL naming the kind; a kind the driver lacks likewise.
 */
int bp_nic_channels_set(const char *dev, const struct bp_nic_channels *s);

/* ---- the driver ---- */

struct bp_nic_driver {
	char driver[32];   /* "veth", "virtio_net", "mlx5_core" */
	char version[32];
	char firmware[32]; /* "" when none */
	char bus[32];      /* "0000:03:00.0", "" for a virtual device */
};

/* bp_nic_driver - what ETHTOOL_GDRVINFO says. 0; -EOPNOTSUPP (no driver info: lo); -ENODEV. */
int bp_nic_driver(const char *dev, struct bp_nic_driver *out);

/* ---- the path report: what serves a device's traffic on this host ---- */

#define BP_PATH_MAX 64 /* queues, NAPIs and IRQs kept per report (counts stay exact) */

struct bp_path_queue {
	uint32_t id;       /* index among the queues of its direction */
	bool tx;
	uint32_t napi_id;  /* the NAPI that serves it, 0 when the kernel links none */
};

struct bp_path_irq {
	int irq;
	uint32_t napi_id;      /* the NAPI netdev netlink ties to it, 0 when it ties none */
	char name[48];         /* its action in /proc/interrupts ("virtio2-input.0"), "" unknown */
	char affinity[128];    /* /proc/irq/N/smp_affinity_list ("0-1"), "" unreadable */
	char effective[128];   /* .../effective_affinity_list: where it is delivered now */
};

/* The report's sections; each has its own result, so one that fails leaves the rest. */
enum bp_path_section {
	BP_PATH_DRIVER, BP_PATH_CHANNELS, BP_PATH_COALESCE, BP_PATH_QUEUES, BP_PATH_NAPI,
	BP_PATH_IRQS, BP_PATH_SECTIONS,
};

struct bp_path_report {
	char dev[16];
	uint32_t ifindex;
	struct bp_nic_driver driver;
	struct bp_nic_channels channels;
	struct bp_nic_coalesce coalesce;
	uint32_t rx_queues, tx_queues;               /* counted, whatever n_queues kept */
	struct bp_path_queue queue[BP_PATH_MAX];
	size_t n_queues;
	struct bp_napi_info napi[BP_PATH_MAX];       /* the device's NAPIs (netdev netlink) */
	size_t n_napi;                               /* how many there are (may exceed BP_PATH_MAX) */
	struct bp_path_irq irq[BP_PATH_MAX];         /* ascending */
	size_t n_irqs;
	/*
	 * Per section: 0 or the -errno it failed with, and why: its bp_last_error()
	 * then, or a note where it worked but found nothing ("no IRQs: a virtual
	 * device..."); "" otherwise.
	 */
	int err[BP_PATH_SECTIONS];
	char why[BP_PATH_SECTIONS][192];
};

/* bp_path_section_name - "driver", "channels", "coalesce", "queues", "napi", "irqs". */
const char *bp_path_section_name(int section);

/*
 * bp_path_report - the path of dev as seen from the calling thread: driver,
 * channels, coalescing, queues with the NAPI serving each (netdev queue-get, Linux
 * 6.8), NAPI instances with their settings, IRQs with names and CPU affinity.
 * Netlink follows the thread's network namespace; IRQs come from sysfs
 * (the device's MSI vectors) and from NAPI, and sysfs shows the namespace it was
 * mounted in: when that is not the device's, the IRQ section says so (run in the
 * device's namespace, as `ip netns exec` does). Returns 0 with each section's
 * result in r->err; -ENODEV when dev does not exist here; -EINVAL for a bad name.
 */
int bp_path_report(const char *dev, struct bp_path_report *r);

#ifdef __cplusplus
}
#endif
#endif
