/* SPDX-License-Identifier: MIT */
/*
 * What the xsk backend offers the mode grammar (xsk:block, xsk:napi, xsk:spin:
 * keys, ranges, defaults) and whether this kernel and process can use each mode
 * right now. The probe does the smallest real things: an AF_XDP socket, and for
 * xsk:napi the epoll busy-poll parameters (the epoll backend's probe). A device
 * without native XDP is found when a run binds to it, not here: no device is named
 * yet.
 */
#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

#include <busypoll/net.h>

#include "backends/epoll.h"
#include "backends/xsk.h"
#include "base/once.h"

#ifndef AF_XDP
#define AF_XDP 44
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

#define SPEC(bit_) { (bit_), 0, 0 }
#define NUM(bit_, lo, hi) { (bit_), (lo), (hi) }
#define KEYS(a) (a), (sizeof(a) / sizeof((a)[0]))

static const struct bp_key_spec queue_keys[] = {
	NUM(BP_KEY_QUEUE, 0, 1023),
};
/* usecs as epoll's (EPIOCSPARAMS takes an s32); a budget as the socket option's (u16). */
static const struct bp_key_spec napi_keys[] = {
	NUM(BP_KEY_USECS, 1, INT32_MAX),
	NUM(BP_KEY_BUDGET, 1, UINT16_MAX),
	SPEC(BP_KEY_PREFER),
	NUM(BP_KEY_QUEUE, 0, 1023),
};
static const struct bp_key_hint xsk_hints[] = {
	{ "direct", "the rings are read directly always; drop the key" },
	{ "zc", "zero-copy is used wherever the driver offers it (the output says which); drop the key" },
	{ NULL, NULL },
};

const struct bp_mode_family bp_xsk_families[] = {
	{ { "xsk:block", "[queue=0]",
	    "UDP over AF_XDP rings: sleep in epoll_wait on the socket, the kernel woken by need_wakeup" },
	  KEYS(queue_keys), { .backend = BP_BACKEND_XSK, .policy = BP_POLICY_BLOCK }, xsk_hints, NULL },
	{ { "xsk:napi", "usecs=64,budget=8[,prefer][,queue=0]",
	    "UDP over AF_XDP: the kernel busy-polls the queue's NAPI (SO_BUSY_POLL and epoll); prefer "
	    "defers its IRQs (defer-hard-irqs 2, gro-flush-timeout 200 us, restored after)" },
	  KEYS(napi_keys),
	  { .backend = BP_BACKEND_XSK, .policy = BP_POLICY_NAPI, .busy_usecs = 64, .budget = 8 },
	  xsk_hints, NULL },
	{ { "xsk:spin", "[queue=0]",
	    "UDP over AF_XDP: spin on the rings from userspace, kick the kernel only when need_wakeup asks" },
	  KEYS(queue_keys), { .backend = BP_BACKEND_XSK, .policy = BP_POLICY_SPIN }, xsk_hints, NULL },
	{ { NULL, NULL, NULL }, NULL, 0, { 0 }, NULL, NULL },
};

/* ---- the probe ---- */

static struct bp_once xsk_once;
static int af_xdp; /* 0: an AF_XDP socket opens here; -EAFNOSUPPORT, -EPERM, another -errno */

static void probe_af_xdp(void *arg)
{
	int *r = arg, fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);

	if (fd < 0) {
		*r = -errno;
		return;
	}
	close(fd);
	*r = 0;
}

/* bp_xsk_check - the backend's ->check (contract in backend.h and mode.h). */
int bp_xsk_check(const struct bp_mode *m, char *err, size_t errlen)
{
	const char *name = bp_mode_name(m);
	int ret;

	bp_once_per_process(&xsk_once, probe_af_xdp, &af_xdp);
	if (af_xdp == -EAFNOSUPPORT)
		return bp_check_say(-EOPNOTSUPP, err, errlen,
				    "%s needs AF_XDP sockets (CONFIG_XDP_SOCKETS); this kernel lacks them", name);
	if (af_xdp == -EPERM || af_xdp == -EACCES)
		return bp_check_say(-EPERM, err, errlen, "%s needs CAP_NET_RAW (an AF_XDP socket); run as root",
				    name);
	if (af_xdp)
		return bp_check_probe_failed(af_xdp, "AF_XDP", err, errlen);
	if (!bp_have_cap(CAP_NET_ADMIN) || (!bp_have_cap(CAP_BPF) && !bp_have_cap(CAP_SYS_ADMIN)))
		return bp_check_say(-EPERM, err, errlen,
				    "%s needs CAP_NET_ADMIN and CAP_BPF (its XDP program); run as root", name);
	if (m->policy == BP_POLICY_NAPI) {
		ret = bp_epoll_check(m, err, errlen);
		if (ret)
			return ret;
	}
	return 0;
}
