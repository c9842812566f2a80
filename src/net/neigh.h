/* SPDX-License-Identifier: MIT */
/*
 * What the AF_XDP path needs to address its own frames, in the calling thread's
 * network namespace: the device that has an address, a device's MAC, and a peer's
 * MAC from the kernel's neighbour table (rtnetlink through libmnl).
 */
#ifndef BP_NET_NEIGH_H
#define BP_NET_NEIGH_H

#include <net/if.h>
#include <stdint.h>
#include <sys/socket.h>

/* bp_dev_of_addr - the device that has address a (its port aside): 0, or -EADDRNOTAVAIL. */
int bp_dev_of_addr(const struct sockaddr_storage *a, int *ifindex, char name[IF_NAMESIZE]);

/* bp_dev_mac - device ifindex's hardware address: 0 or -errno. */
int bp_dev_mac(int ifindex, uint8_t mac[6]);

/*
 * bp_neigh_mac - the MAC frames to peer leave for: the neighbour entry of the next
 * hop (the peer itself on the link, else the route's gateway) on device ifindex.
 * When the table has none yet, one datagram to the next hop's discard port (9) makes
 * the kernel resolve it, and the table is asked again every 5 ms for timeout_ms.
 * Returns 0; -EHOSTUNREACH (after timeout_ms: nothing answered), -ENETUNREACH (the
 * route to peer leaves by another device) or another -errno, with one line in the
 * last error.
 */
int bp_neigh_mac(int ifindex, const struct sockaddr_storage *peer, uint8_t mac[6], int timeout_ms);

#endif
