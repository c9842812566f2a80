/* SPDX-License-Identifier: MIT */
/* Devices of addresses, routes, NAPI settings put back (contract in tools/link/netdev.h). */
#include <errno.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <busypoll/loop.h>
#include <busypoll/net.h>

#include "tools/link/netdev.h"

/* same_addr - does interface address ifa hold a's address? */
static bool same_addr(const struct sockaddr *ifa, const struct sockaddr_storage *a)
{
	if (!ifa || ifa->sa_family != a->ss_family)
		return false;
	if (a->ss_family == AF_INET)
		return ((const struct sockaddr_in *)ifa)->sin_addr.s_addr == ((const struct sockaddr_in *)a)->sin_addr.s_addr;
	if (a->ss_family == AF_INET6)
		return !memcmp(&((const struct sockaddr_in6 *)ifa)->sin6_addr, &((const struct sockaddr_in6 *)a)->sin6_addr,
			       sizeof(struct in6_addr));
	return false;
}

int netdev_of_addr(const struct sockaddr_storage *a, char dev[IFNAMSIZ])
{
	struct ifaddrs *list, *i;

	if (getifaddrs(&list))
		return -errno;
	for (i = list; i; i = i->ifa_next)
		if (same_addr(i->ifa_addr, a)) {
			snprintf(dev, IFNAMSIZ, "%s", i->ifa_name);
			freeifaddrs(list);
			return 0;
		}
	freeifaddrs(list);
	return -EADDRNOTAVAIL;
}

int netdev_route(const struct sockaddr_storage *dst, socklen_t len, struct sockaddr_storage *src, char dev[IFNAMSIZ],
		 char *err, size_t errlen)
{
	char text[80], mine[80];
	socklen_t sl = sizeof(*src);
	int fd = socket(dst->ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0), rc;

	bp_format_addr((const struct sockaddr *)dst, text, sizeof(text));
	if (fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return rc;
	}
	/* a connected UDP socket: the kernel's route lookup, and no packet sent */
	if (connect(fd, (const struct sockaddr *)dst, len) < 0 || getsockname(fd, (struct sockaddr *)src, &sl) < 0) {
		rc = -errno;
		snprintf(err, errlen, "no route to %s from this host: %s", text, strerror(errno));
		close(fd);
		return rc;
	}
	close(fd);
	rc = netdev_of_addr(src, dev);
	if (rc) {
		bp_format_addr((const struct sockaddr *)src, mine, sizeof(mine));
		snprintf(err, errlen, "the route to %s leaves from %s, which no device here has: %s", text, mine,
			 strerror(-rc));
	}
	return rc;
}

int netdev_napi_put_back(const struct bp_napi_info *saved, int n, char *err, size_t errlen)
{
	const uint32_t kept = BP_NAPI_HAS_DEFER | BP_NAPI_HAS_GRO_FLUSH | BP_NAPI_HAS_IRQ_SUSPEND;
	int failed = 0;

	for (int i = 0; i < n; i++) {
		struct bp_napi_info now, set = saved[i];

		set.has &= kept;
		if (!set.has || bp_napi_get(set.id, &now))
			continue; /* nothing to put back, or gone with its device */
		if (now.defer_hard_irqs == set.defer_hard_irqs && now.gro_flush_timeout_ns == set.gro_flush_timeout_ns &&
		    now.irq_suspend_timeout_ns == set.irq_suspend_timeout_ns)
			continue;
		if (bp_napi_set(set.id, &set)) {
			if (!failed++ && err)
				snprintf(err, errlen, "napi %u: %s", set.id, bp_last_error());
		}
	}
	return failed;
}
