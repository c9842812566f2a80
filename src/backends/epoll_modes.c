/* SPDX-License-Identifier: MIT */
/*
 * What the epoll backend offers the mode grammar (its families: keys, ranges,
 * defaults) and whether this kernel and process can use each mode right now.
 *
 * Nothing is assumed from version numbers when it can be tried: EPIOCSPARAMS is
 * probed by making the ioctl on a fresh epoll fd, the per-NAPI settings that
 * epoll:suspend needs by asking the netdev netlink family (net/napi_nl.c). Each is
 * asked once per process, when a mode first needs it (base/once.h).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "backends/epoll.h"
#include "base/once.h"
#include "net/napi_nl.h"

#define SPEC(bit_) { (bit_), 0, 0 }
#define NUM(bit_, lo, hi) { (bit_), (lo), (hi) }
#define KEYS(a) (a), (sizeof(a) / sizeof((a)[0]))

/* usecs goes into a signed 32-bit field in the kernel (EPIOCSPARAMS refuses > S32_MAX). */
static const struct bp_key_spec napi_keys[] = {
	NUM(BP_KEY_USECS, 0, INT32_MAX),
	NUM(BP_KEY_BUDGET, 1, UINT16_MAX),
	SPEC(BP_KEY_PREFER),
	NUM(BP_KEY_DIRECT, 0, 1),
};
/* direct=0|1: read the few connections directly before asking epoll (core/loop.c); not
 * suspend's: its IRQ suspension lives on epoll_wait finding the events. */
static const struct bp_key_spec spin_keys[] = {
	NUM(BP_KEY_DIRECT, 0, 1),
};
static const struct bp_key_spec hybrid_keys[] = {
	NUM(BP_KEY_PERIOD, 1, 10000000),
	NUM(BP_KEY_DIRECT, 0, 1),
};
/*
 * defer-hard-irqs is limited to S32_MAX by the netdev netlink policy; the two timeouts are
 * ns in a ktime (s64). All three must be non-zero: IRQ suspension does nothing unless
 * defer-hard-irqs and gro-flush-timeout are set too (napi.rst), and suspend=0 turns it off,
 * so a zero would make the mode silently not what it says.
 */
static const struct bp_key_spec suspend_keys[] = {
	NUM(BP_KEY_USECS, 0, INT32_MAX),
	NUM(BP_KEY_BUDGET, 1, UINT16_MAX),
	NUM(BP_KEY_DEFER, 1, INT32_MAX),
	NUM(BP_KEY_GRO_FLUSH, 1, INT64_MAX),
	NUM(BP_KEY_SUSPEND, 1, INT64_MAX),
};
static const struct bp_key_hint suspend_hints[] = {
	{ "prefer", "prefer is always on for suspend; drop the key" },
	{ NULL, NULL },
};

/* The kernel busy-polls for usecs; with 0 only prefer_busy_poll (6.13+) still polls once. */
static int napi_combination(const struct bp_mode *m, char *msg, size_t len)
{
	if (m->busy_usecs == 0 && !m->prefer) {
		snprintf(msg, len, "usecs=0 busy polls nothing without prefer (use usecs=1..%d or add prefer)",
			 INT32_MAX);
		return -EINVAL;
	}
	return 0;
}

const struct bp_mode_family bp_epoll_families[] = {
	{ { "epoll:block", "", "sleep in epoll_wait until an event arrives (the baseline)" },
	  NULL, 0, { .backend = BP_BACKEND_EPOLL, .policy = BP_POLICY_BLOCK }, NULL, NULL },
	{ { "epoll:napi", "usecs=64,budget=8[,prefer][,direct=1]",
	    "epoll_wait busy-polls the NAPI for usecs before sleeping (EPIOCSPARAMS, Linux 6.9)" },
	  KEYS(napi_keys),
	  /* direct reads off by default: a MSG_DONTWAIT read busy polls the NAPI once, and at one
	   * flow the answer is not there yet when the pass starts (the loop just sent), so each
	   * round trip paid a missed recv more, 4.0 syscalls per transaction for 3.0, P50 1.29x
	   * the floor's against 1.29x without (bench/neper.sh, docs/ARCHITECTURE.md) */
	  { .backend = BP_BACKEND_EPOLL, .policy = BP_POLICY_NAPI, .busy_usecs = 64, .budget = 8,
	    .direct_off = true },
	  NULL, napi_combination },
	{ { "epoll:spin", "[direct=1]", "poll with epoll_wait(0) from userspace, never sleep (burns a CPU)" },
	  KEYS(spin_keys), { .backend = BP_BACKEND_EPOLL, .policy = BP_POLICY_SPIN }, NULL, NULL },
	/*
	 * hybrid's period and suspend's usecs: poll about as long as one wake-up costs,
	 * then sleep (the ski-rental rule: never more than twice the better choice). About
	 * 30 us on the veth test bed, half of epoll:block's P50 over epoll:spin's at a
	 * moderate load (docs/rate.md): a longer poll spins at moderate loads (100 us
	 * never slept at 20% of spin's closed-loop load), a shorter one sleeps through the
	 * next packet. Not 0 for suspend: with 0 epoll_wait never busy polls before it
	 * sleeps, so on a path whose NAPI never defers (compare's veth bed) the mode
	 * measured as epoll:block, 0.00 BusyPollRxPackets per transaction (issue 12); 30
	 * keeps 0.96 in the closed loop. The per-NAPI values: docs/rate.md.
	 */
	{ { "epoll:hybrid", "period=30[,direct=1]",
	    "spin with epoll_wait(0) while work came in the last period us or a timer is due within it, "
	    "then block" },
	  KEYS(hybrid_keys),
	  { .backend = BP_BACKEND_EPOLL, .policy = BP_POLICY_HYBRID, .period_us = 30 }, NULL, NULL },
	{ { "epoll:suspend", "usecs=30,budget=64,defer=100,gro-flush=20000,suspend=2000000",
	    "IRQ suspension: prefer busy poll with per-NAPI defer/gro-flush/suspend timeouts "
	    "(Linux 6.13, CAP_NET_ADMIN)" },
	  KEYS(suspend_keys),
	  { .backend = BP_BACKEND_EPOLL, .policy = BP_POLICY_SUSPEND, .busy_usecs = 30,
	    .budget = 64, .prefer = true, .defer_hard_irqs = 100, .gro_flush_ns = 20000,
	    .irq_suspend_ns = 2000000 },
	  suspend_hints, NULL },
	{ { NULL, NULL, NULL }, NULL, 0, { 0 }, NULL, NULL },
};

/* ---- the probe ---- */

/* Each result is 0 (works), -EOPNOTSUPP (kernel lacks it), -EPERM (privilege
 * missing), or another -errno when the probe itself could not run (e.g. -EMFILE). */
struct epoll_probe {
	int params;      /* EPIOCSPARAMS at all (Linux 6.9) */
	int big_budget;  /* EPIOCSPARAMS with budget > NAPI_POLL_WEIGHT (CAP_NET_ADMIN) */
};

static struct bp_once params_once, netdev_once;
static struct epoll_probe probed;
static struct bp_napi_set_support netdev;

/* probe_params - EPIOCSPARAMS at all, and with a budget above 64 (bp_once_per_process). */
static void probe_params(void *arg)
{
	struct epoll_probe *r = arg;
	int fd = epoll_create1(EPOLL_CLOEXEC);
	int ret;

	if (fd < 0) {
		r->params = r->big_budget = -errno;
		return;
	}
	/* All zero is accepted by every kernel that has the ioctl; before 6.9 an epoll fd
	 * has no ioctl at all (ENOTTY). */
	ret = bp_epoll_set_params(fd, 0, 0, 0);
	if (ret == -ENOTTY || ret == -EINVAL)
		ret = -EOPNOTSUPP;
	r->params = ret;
	/* Any budget above 64 takes the same capable(CAP_NET_ADMIN) check. */
	r->big_budget = ret ? ret : bp_epoll_set_params(fd, 0, 128, 0);
	close(fd);
}

/* probe_netdev - what napi-set can do here (bp_once_per_process). */
static void probe_netdev(void *arg)
{
	bp_napi_set_support(arg);
}

/* ---- the check ---- */

/* check_params - the mode needs EPIOCSPARAMS: does this kernel have it? */
static int check_params(const char *name, char *err, size_t errlen)
{
	int ret = probed.params;

	if (ret == -EOPNOTSUPP)
		return bp_check_say(ret, err, errlen, "%s needs EPIOCSPARAMS (Linux 6.9); this kernel lacks it",
				    name);
	if (ret)
		return bp_check_probe_failed(ret, "EPIOCSPARAMS", err, errlen);
	return 0;
}

/* check_budget - a budget above NAPI_POLL_WEIGHT needs CAP_NET_ADMIN: do we have it? */
static int check_budget(const char *name, const struct bp_mode *m, char *err, size_t errlen)
{
	int ret = probed.big_budget;

	if (m->budget <= BP_NAPI_POLL_WEIGHT || !ret)
		return 0;
	if (ret == -EPERM)
		return bp_check_say(ret, err, errlen, "%s,budget=%u needs CAP_NET_ADMIN", name, m->budget);
	return bp_check_probe_failed(ret, "EPIOCSPARAMS budget>64", err, errlen);
}

/* bp_epoll_check - the backend's ->check (contract in backend.h and mode.h). */
int bp_epoll_check(const struct bp_mode *m, char *err, size_t errlen)
{
	const char *name = bp_mode_name(m);
	int ret;

	if (m->policy != BP_POLICY_NAPI && m->policy != BP_POLICY_SUSPEND)
		return 0; /* block/spin/hybrid need nothing beyond epoll itself */
	bp_once_per_process(&params_once, probe_params, &probed);
	ret = check_params(name, err, errlen);
	if (ret)
		return ret;
	if (m->policy == BP_POLICY_NAPI && m->busy_usecs == 0 && m->prefer) {
		/* usecs=0 polls only through the prefer path the IRQ-suspension series added
		 * (6.13), the same series that added irq-suspend-timeout: probe that. */
		bp_once_per_process(&netdev_once, probe_netdev, &netdev);
		if (netdev.irq_suspend)
			return bp_check_say(-EOPNOTSUPP, err, errlen,
					    "%s,usecs=0,prefer needs Linux 6.13 (prefer busy poll without usecs); "
					    "this kernel lacks it", name);
	}
	if (m->policy == BP_POLICY_SUSPEND) {
		bp_once_per_process(&netdev_once, probe_netdev, &netdev);
		if (netdev.irq_suspend)
			return bp_check_say(-EOPNOTSUPP, err, errlen,
					    "%s needs the netdev napi-set irq-suspend-timeout (Linux 6.13); "
					    "this kernel lacks it", name);
		if (netdev.allowed)
			return bp_check_say(-EPERM, err, errlen,
					    "%s needs CAP_NET_ADMIN (per-NAPI settings over netlink)", name);
	}
	return check_budget(name, m, err, errlen);
}
