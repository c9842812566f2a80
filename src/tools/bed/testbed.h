/* SPDX-License-Identifier: MIT */
/*
 * A test bed where kernel busy polling really engages: two network namespaces
 * joined by a veth pair with GRO on (which gives veth one NAPI per receive queue;
 * loopback has none). Used by the root integration tests and `busypoll testbed`.
 *
 *   bp-NAME-a: bpva 10.X.Y.1/30  <--veth-->  bpvb 10.X.Y.2/30 :bp-NAME-b
 *
 * X.Y come from a hash of NAME and exist only inside the two namespaces. Building
 * and removing a bed needs root; `ip` (iproute2) and `ethtool` must be installed.
 * Everything returns 0 (or a count) or -errno, with bp_last_error() saying what
 * failed (for a failed `ip`/`ethtool`, its own stderr).
 *
 * Namespaces are per thread: bp_testbed_enter() and bp_netns_enter() move only the
 * calling thread, and every socket or netlink call it makes afterwards acts inside
 * that namespace. /sys does not follow (it shows the namespace it was mounted in):
 * use bp_netns_dev_get_knob()/bp_netns_dev_set_knob() for a device in a bed.
 */
#ifndef BP_TOOLS_BED_TESTBED_H
#define BP_TOOLS_BED_TESTBED_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BP_TESTBED_NAME_MAX 31   /* letters, digits, '_' and '-' */
#define BP_TESTBED_MAX_QUEUES 64
#define BP_TESTBED_PREFIX_LEN 30 /* addr[] are in one private /30 */

struct bp_testbed {
	char name[BP_TESTBED_NAME_MAX + 1];
	char ns[2][48];                 /* "bp-NAME-a", "bp-NAME-b" (under /run/netns) */
	char dev[2][16];                /* "bpva" inside ns[0], "bpvb" inside ns[1] */
	char addr[2][INET_ADDRSTRLEN];  /* "10.X.Y.1" on dev[0], "10.X.Y.2" on dev[1] */
	uint32_t ifindex[2];            /* of dev[i] inside ns[i] */
	int queues;                     /* rx/tx queues per end, = NAPI instances per side */
	bool threaded;                  /* threaded NAPI on both ends */
};

/*
 * bp_testbed_up - build the bed NAME and describe it in *tb: namespaces, veth pair
 * (queues > 1: that many tx/rx queues per end, each tx queue mapped to its rx
 * queue by XPS (xps_rxqs), so a reply leaves on the queue its request arrived on),
 * addresses, lo up, GRO on and TSO off on both ends, links up, then threaded NAPI
 * (sysfs "threaded" = 1) if asked.
 * Never touches what it did not create: -EEXIST if either namespace exists already.
 * On any failure it removes what it made. -EPERM when not root; -EINVAL for a bad
 * name (see BP_TESTBED_NAME_MAX) or queues outside 1..BP_TESTBED_MAX_QUEUES;
 * -ENOENT when `ip` or `ethtool` is missing. NAPI ids are new each time.
 */
int bp_testbed_up(struct bp_testbed *tb, const char *name, int queues, bool threaded);

/*
 * bp_testbed_open - describe the existing bed NAME in *tb (queues from its NAPI
 * count, threaded from sysfs). -ENOENT when it is not (completely) there.
 */
int bp_testbed_open(struct bp_testbed *tb, const char *name);

/*
 * bp_testbed_down - remove the bed's two namespaces, which removes the veth pair
 * (like `ip netns del`; a namespace lives on, unnamed, while a thread is still in
 * it). Removes whichever of the two exist; -ENOENT when neither did.
 */
int bp_testbed_down(const struct bp_testbed *tb);
int bp_testbed_down_by_name(const char *name);

/* bp_testbed_exists - does either namespace of bed NAME exist (up would refuse it)? */
bool bp_testbed_exists(const char *name);

/* bp_testbed_enter - move the calling thread into side 0 (ns[0]) or 1 (ns[1]). */
int bp_testbed_enter(const struct bp_testbed *tb, int side);

/*
 * bp_testbed_napi_ids - the NAPI ids of dev[side] (bp_napi_list inside ns[side];
 * the calling thread is back in its own namespace afterwards). Writes up to max
 * ids; returns how many exist.
 */
int bp_testbed_napi_ids(const struct bp_testbed *tb, int side, uint32_t *ids, size_t max);

/* ---- beds whose maker is gone ---- */

/* What bp_testbed_reap_stale says about each bed it found: one line. */
typedef void (*bp_stale_fn)(void *ctx, const char *line);

/*
 * bp_testbed_reap_stale - remove every test bed whose maker is no longer running:
 * compare's (named cmpPID) and those a `testbed up` left half built (its pid file
 * under /run/busypoll). report(ctx, line) says what was removed (or could not
 * be). Returns how many were removed. Root only (it runs `ip netns del`).
 */
int bp_testbed_reap_stale(bp_stale_fn report, void *ctx);
/*
 * bp_testbed_mark_building - while building bed name (building true), the pid
 * file that says who builds it; removed when done (false). 0 or -errno.
 */
int bp_testbed_mark_building(const char *name, bool building);

/* ---- named network namespaces (/run/netns/NAME, as `ip netns` makes them) ---- */

/* bp_netns_enter - move the calling thread into namespace nsname (setns). */
int bp_netns_enter(const char *nsname);
/* bp_netns_save - open the calling thread's current namespace, for restore. */
int bp_netns_save(int *fd);
/* bp_netns_restore - go back to the namespace saved in fd, and close fd (always). */
int bp_netns_restore(int fd);

/*
 * bp_netns_dev_get_knob / bp_netns_dev_set_knob - bp_dev_get_knob/bp_dev_set_knob
 * (/sys/class/net/DEV/KNOB) for a device inside namespace nsname. They run in a
 * short-lived child with its own mount of sysfs, as `ip netns exec` does.
 */
int bp_netns_dev_get_knob(const char *nsname, const char *dev, const char *knob,
			  uint64_t *value);
int bp_netns_dev_set_knob(const char *nsname, const char *dev, const char *knob,
			  uint64_t value);

/* bp_xps_set_symmetric / bp_xps_read (xps.h) for a device inside namespace nsname. */
int bp_netns_xps_set_symmetric(const char *nsname, const char *dev, int queues);
int bp_netns_xps_read(const char *nsname, const char *dev, int *rxq_of_tx, int max);

#ifdef __cplusplus
}
#endif
#endif
