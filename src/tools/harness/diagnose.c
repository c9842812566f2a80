/* SPDX-License-Identifier: MIT */
/*
 * The busy-poll diagnosis (tools/harness/diagnose.h): the rules in order, each a
 * cause and what to change, over facts the caller gathered.
 */
#include "tools/harness/diagnose.h"

#include <math.h>
#include <stdio.h>

/*
 * timeout_us - the busy-poll time a wait of the side gives: the mode's own usecs, else
 * the larger of net.core.busy_poll and busy_read (each known); 0 when none is known.
 */
static uint32_t timeout_us(const struct diag_facts *f)
{
	int s = f->sysctl_busy_poll > f->sysctl_busy_read ? f->sysctl_busy_poll : f->sysctl_busy_read;

	return f->mode_usecs ? f->mode_usecs : s > 0 ? (uint32_t)s : 0;
}

bool diag_explain(const struct diag_facts *f, char *buf, size_t len)
{
	const char *d = f->dev && f->dev[0] ? f->dev : "the device";
	uint32_t to = timeout_us(f);
	char queue[48] = "not known";
	int n;

	if (len)
		buf[0] = '\0';
	if (!f->busy_poll_mode || f->bprx_per_tx >= EV_PROOF_MIN)
		return false;
	n = snprintf(buf, len, "%s on the %s: ", f->side ? f->side : "side", f->where ? f->where : "path");
	if (n < 0 || (size_t)n >= len)
		return true;
	buf += n;
	len -= (size_t)n;
	if (f->veth && f->gro == DIAG_OFF)
		snprintf(buf, len, "GRO is off for %s: veth gives its packets no NAPI id without it, so busy polling "
			 "has nothing to poll; turn it on: ethtool -K %s gro on", d, d);
	else if (f->dev_napis == 0)
		snprintf(buf, len, "%s has no NAPI (loopback has none), so busy polling has nothing to poll; "
			 "run over a device with NAPI (a NIC, or veth with gro on)", d);
	/* a NIC segments on the wire, so its receiver's NAPI sees it all: only veth's TSO skips NAPI */
	else if (f->veth && f->tso == DIAG_ON)
		snprintf(buf, len, "TSO is on for %s: TSO-sized packets skip the veth NAPI, so busy polling never "
			 "receives them; turn it off: ethtool -K %s tso off", d, d);
	else if (f->served_napis == 0)
		snprintf(buf, len, "the sockets have no NAPI id (their packets did not come through a NAPI on %s), "
			 "so busy polling has nothing to poll; on veth turn gro on and tso off on both ends", d);
	else if (!f->mode_usecs && f->sysctl_busy_poll == 0 && f->sysctl_busy_read == 0)
		snprintf(buf, len, "the mode sets no busy-poll time and net.core.busy_poll and net.core.busy_read "
			 "are 0; give the mode usecs=50, or sysctl -w net.core.busy_poll=50");
	else if (f->suspend_mode && !f->mode_usecs)
		snprintf(buf, len, "usecs=0: each wait polls the NAPI once and sleeps before the answer arrives, so "
			 "the interrupt path takes the packets; give the mode usecs=30 (its default)");
	else if (f->threaded == DIAG_ON)
		snprintf(buf, len, "threaded NAPI is on for %s: its kernel thread takes the packets before the "
			 "busy-poll loop does; turn it off: echo 0 > /sys/class/net/%s/threaded", d, d);
	else if (to && isfinite(f->mean_us) && to < f->mean_us)
		snprintf(buf, len, "the busy-poll timeout (%u us) is shorter than a transaction (%.0f us on average): "
			 "each wait stops polling before the next packet arrives, so the interrupt path takes it; give "
			 "the mode usecs=%.0f", to, f->mean_us, ceil(f->mean_us * 2));
	else if (f->served_napis > f->threads && f->threads > 0)
		snprintf(buf, len, "the flows arrive on %d queues (NAPIs) of %s for %d loop thread%s: a loop busy-polls "
			 "one NAPI at a time and the others' packets come through interrupts; steer the flows to one "
			 "queue per thread (ethtool -N, RSS) or run a thread per queue", f->served_napis, d, f->threads,
			 f->threads == 1 ? "" : "s");
	else if (f->flows > f->threads && f->threads > 0)
		snprintf(buf, len, "%d flows on %d thread%s: each wait finds work ready and rarely needs to busy "
			 "poll; run one flow per thread to see it", f->flows, f->threads, f->threads == 1 ? "" : "s");
	else {
		if (f->served_id)
			snprintf(queue, sizeof(queue), "NAPI %u", f->served_id);
		snprintf(buf, len, "no cause found in the path (%s: NAPIs, GRO, TSO, NAPI ids, sysctls as expected; "
			 "the flows arrive on %s; busy-poll budget %u, timeout %u us); check the queue the flows arrive "
			 "on is one the socket's NAPI id names", d, queue, f->mode_budget ? f->mode_budget : 8, to);
	}
	return true;
}
