/* SPDX-License-Identifier: MIT */
/*
 * Symmetric queuing (XPS by receive queue): each tx queue of a device mapped to
 * the rx queue of the same number, so a reply leaves on the queue its request
 * arrived on. These act on /sys as the calling process sees it (in a test bed
 * namespace: from inside it, e.g. under `ip netns exec`, or through
 * bp_netns_xps_* in tools/bed/testbed.h). Errors: -errno with bp_last_error().
 */
#ifndef BP_NET_XPS_H
#define BP_NET_XPS_H

#include <stdbool.h>
#include <stddef.h>

/*
 * bp_xps_read - the rx queue each tx queue of dev is mapped to (xps_rxqs):
 * rxq_of_tx[i] = the queue, -1 none (any), -2 several. Returns how many tx queues
 * there are (up to max), or -errno.
 */
int bp_xps_read(const char *dev, int *rxq_of_tx, int max);
/* bp_xps_set_symmetric - tx queue i to rx queue i, for i < queues. 0 or -errno. */
int bp_xps_set_symmetric(const char *dev, int queues);
/* bp_xps_format - "tx0->rx0 tx1->rx1" into out; true when every tx queue maps to its own rx queue. */
bool bp_xps_format(const int *rxq_of_tx, int n, char *out, size_t len);

#endif
