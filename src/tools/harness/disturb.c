/* SPDX-License-Identifier: MIT */
/* The disturbance rules (tools/harness/disturb.h): each a fact against its bound. */
#include "tools/harness/disturb.h"

#include <math.h>
#include <stdio.h>

bool dist_mode_spins(const struct bp_mode *m)
{
	return m->policy == BP_POLICY_SPIN || (m->policy == BP_POLICY_SQPOLL && m->spin);
}

double dist_little(const struct dist_loop *l)
{
	if (!l->closed || l->flows <= 0 || !(l->tps > 0) || !(l->mean_us > 0))
		return NAN;
	return l->tps * l->mean_us / 1e6 / l->flows;
}

bool dist_side_explain(const struct dist_side *s, char *buf, size_t len)
{
	const char *who = s->side ? s->side : "side";

	if (len)
		buf[0] = '\0';
	if (s->spins && isfinite(s->cpu_pct) && s->cpu_pct < DIST_SPIN_MIN_PCT)
		snprintf(buf, len, "%s: a spinning loop thread got %.0f%% of its CPU (under %.0f%%): other work ran there",
			 who, s->cpu_pct, DIST_SPIN_MIN_PCT);
	else if (isfinite(s->other_pct) && s->other_pct >= DIST_OTHER_MAX_PCT)
		snprintf(buf, len, "%s: other tasks took %.0f%% of its loop threads' pinned CPUs (%.0f%% or more)", who,
			 s->other_pct, DIST_OTHER_MAX_PCT);
	else if (isfinite(s->runq_pct) && s->runq_pct >= DIST_RUNQ_MAX_PCT)
		snprintf(buf, len, "%s: its loop threads waited on a run queue for %.0f%% of the interval (%.0f%% or more)",
			 who, s->runq_pct, DIST_RUNQ_MAX_PCT);
	else if (isfinite(s->steal_pct) && s->steal_pct >= DIST_STEAL_MAX_PCT)
		snprintf(buf, len, "%s: the hypervisor stole %.0f%% of its CPUs' time (%.0f%% or more)", who,
			 s->steal_pct, DIST_STEAL_MAX_PCT);
	else
		return false;
	return true;
}

bool dist_loop_explain(const struct dist_loop *l, char *buf, size_t len)
{
	double x = dist_little(l);

	if (len)
		buf[0] = '\0';
	if (!isfinite(x) || x >= DIST_LITTLE_MIN)
		return false;
	snprintf(buf, len, "client: tx/s x mean latency is %.2f for %d flow%s (under %.2f per flow): the loop was "
		 "descheduled between transactions", x * l->flows, l->flows, l->flows == 1 ? "" : "s", DIST_LITTLE_MIN);
	return true;
}
