/* SPDX-License-Identifier: MIT */
/*
 * Which device carries an address, and putting NAPI settings back: what the agent
 * (a path report by address, its servers' NAPIs) and a two-host compare (its own
 * end: the route to the other host) both need. Each acts in the calling thread's
 * network namespace.
 */
#ifndef BP_TOOLS_LINK_NETDEV_H
#define BP_TOOLS_LINK_NETDEV_H

#include <net/if.h>
#include <stddef.h>
#include <sys/socket.h>

#include <busypoll/napi.h>

/* netdev_of_addr - the device here that has address a (its port aside). 0, or -EADDRNOTAVAIL. */
int netdev_of_addr(const struct sockaddr_storage *a, char dev[IFNAMSIZ]);

/*
 * netdev_route - this host's end of the way to dst: the source address the kernel
 * picks (a UDP socket connected to dst; nothing is sent) and the device that has
 * it. 0, or -errno with one line in err (no route: -ENETUNREACH).
 */
int netdev_route(const struct sockaddr_storage *dst, socklen_t len, struct sockaddr_storage *src, char dev[IFNAMSIZ],
		 char *err, size_t errlen);

/*
 * netdev_napi_put_back - each NAPI in saved[0..n) back to its defer-hard-irqs,
 * gro-flush-timeout and irq-suspend-timeout as saved, where they differ now (a
 * NAPI gone with its device is skipped). Returns how many could not be put back;
 * the first one's reason in err (may be NULL).
 */
int netdev_napi_put_back(const struct bp_napi_info *saved, int n, char *err, size_t errlen);

#endif
