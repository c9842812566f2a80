/* SPDX-License-Identifier: MIT */
/* Insides of the netdev netlink client (net/napi_nl.c), shared with its unit test. */
#ifndef BP_NET_NAPI_NL_H
#define BP_NET_NAPI_NL_H

#include <stdint.h>
#include <linux/netlink.h>

/*
 * bp_napi_nl_explain - turn the kernel's answer to a failed request into the
 * result the API promises, with bp_err_set() naming what failed.
 *   req:  the request as sent (the extack offset points into it)
 *   err:  the kernel's negative errno
 *   msg:  the extack message, or NULL
 *   offs: the extack offset of the rejected attribute from the start of req, 0 if none
 *   what: "napi-set", "napi-get"...
 * An EINVAL whose rejected attribute the kernel calls unknown (or gives no reason
 * for) becomes -EOPNOTSUPP "napi-set irq-suspend-timeout: this kernel lacks it
 * (Linux 6.13)"; EPERM gets the capability it needs; anything else keeps its errno
 * and carries the kernel's message.
 */
int bp_napi_nl_explain(const struct nlmsghdr *req, int err, const char *msg, uint32_t offs,
		       const char *what);

/* bp_napi_attr_name - "defer-hard-irqs" for BP_NETDEV_A_NAPI_DEFER_HARD_IRQS, NULL if unknown. */
const char *bp_napi_attr_name(unsigned int type);

#endif
