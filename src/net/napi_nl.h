/* SPDX-License-Identifier: MIT */
/* Insides of the netdev netlink client (net/napi_nl.c) for the engine's other layers and its unit test. */
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

/* What napi-set can do for this process (bp_napi_set_support). */
struct bp_napi_set_support {
	int irq_suspend; /* 0: napi-set takes irq-suspend-timeout (Linux 6.13); -EOPNOTSUPP */
	int allowed;     /* 0: this process may use napi-set; -EPERM: it needs CAP_NET_ADMIN */
};

/*
 * bp_napi_set_support - ask the kernel, in the calling thread's network namespace:
 * napi-set's own attribute policy (a policy dump, unprivileged) for irq-suspend, and
 * a napi-set of NAPI id 1 (never a NAPI: nothing can change) for the privilege,
 * which genetlink checks first. Without a netdev family or napi-set, irq_suspend is
 * -EOPNOTSUPP and allowed follows CAP_NET_ADMIN. Where netlink itself is unusable
 * (seccomp, a sandbox) it guesses from the kernel release (6.13) and CAP_NET_ADMIN.
 * Leaves bp_last_error() as it was.
 */
void bp_napi_set_support(struct bp_napi_set_support *s);

/* bp_napi_attr_name - "defer-hard-irqs" for BP_NETDEV_A_NAPI_DEFER_HARD_IRQS, NULL if unknown. */
const char *bp_napi_attr_name(unsigned int type);

#endif
