/* SPDX-License-Identifier: MIT */
/* tune's search rules: the contract and the stated halving rule are in search.h. */
#include "tools/tune/search.h"
#include "tools/common/values.h"

#include <busypoll/hist.h>

#include <math.h>
#include <stdlib.h>

bool tune_quantile_ci(double *v, size_t n, double q, double *est, double *lo, double *hi)
{
	if (n == 0 || !(q > 0 && q < 1))
		return false;
	tool_sort_doubles(v, n);
	double mid = n * q, half = TUNE_CI_Z * sqrt(n * q * (1 - q));
	size_t k = (size_t)ceil(mid);
	if (k < 1)
		k = 1;
	*est = v[k - 1];
	double lr = floor(mid - half), hr = ceil(mid + half);
	*lo = lr < 1 ? v[0] : v[(size_t)lr - 1];
	*hi = hr > (double)n ? INFINITY : v[(size_t)hr - 1];
	return true;
}

/* hist_rank - the value of rank k (1-based) of h's n samples, ns -> us. */
static double hist_rank(const struct bp_hist *h, size_t k)
{
	return (double)bp_hist_percentile(h, 100.0 * ((double)k - 0.5) / (double)h->count) / 1000.0;
}

bool tune_hist_ci(const struct bp_hist *h, double q, double *est, double *lo, double *hi)
{
	if (!h->count || !(q > 0 && q < 1))
		return false;
	double n = (double)h->count, mid = n * q, half = TUNE_CI_Z * sqrt(n * q * (1 - q));
	double k = ceil(mid), lr = floor(mid - half), hr = ceil(mid + half);
	*est = hist_rank(h, k < 1 ? 1 : (size_t)k);
	*lo = lr < 1 ? (double)h->min / 1000.0 : hist_rank(h, (size_t)lr);
	*hi = hr > n ? INFINITY : hist_rank(h, (size_t)hr);
	return true;
}

bool tune_runs_p99(double *est, double *lo, double *hi, size_t n, double *p99, double *p99_lo, double *p99_hi)
{
	if (n == 0)
		return false;
	*p99 = tool_median_doubles(est, n);
	tool_sort_doubles(lo, n);
	tool_sort_doubles(hi, n);
	*p99_lo = lo[(n - 1) / 2];
	*p99_hi = hi[n / 2];
	return true;
}

void tune_measure(struct tune_cand *c)
{
	if (!tune_quantile_ci(c->samples, c->nsamples, 0.99, &c->p99, &c->p99_lo, &c->p99_hi))
		c->p99 = c->p99_lo = c->p99_hi = NAN;
}

bool tune_proven(const struct tune_cand *c)
{
	return !c->busy_poll || c->bprx_per_tx >= EV_PROOF_MIN;
}

/* may_meet - c's interval reaches down to the P99 goal. */
static bool may_meet(const struct tune_cand *c, const struct tune_goal *g)
{
	return c->p99_lo <= g->p99_us;
}

static bool within(double a, double b)
{
	double m = fmax(fabs(a), fabs(b));
	return fabs(a - b) <= TUNE_TIE_FRAC * m;
}

bool tune_better(const struct tune_cand *a, const struct tune_cand *b, const struct tune_goal *g)
{
	if (g->kind == TUNE_GOAL_P99) {
		bool ma = may_meet(a, g), mb = may_meet(b, g);
		if (ma != mb)
			return ma;
		if (ma && a->cpu != b->cpu)
			return a->cpu < b->cpu;
		return a->p99 < b->p99;
	}
	bool ia = a->cpu <= g->cpu_budget, ib = b->cpu <= g->cpu_budget;
	if (ia != ib)
		return ia;
	return ia ? a->tps > b->tps : a->cpu < b->cpu;
}

bool tune_tied(const struct tune_cand *a, const struct tune_cand *b, const struct tune_goal *g)
{
	if (g->kind == TUNE_GOAL_P99) {
		bool ma = may_meet(a, g), mb = may_meet(b, g);
		if (ma != mb)
			return false;
		if (ma)
			return within(a->cpu, b->cpu);
		return a->p99_lo <= b->p99_hi && b->p99_lo <= a->p99_hi;
	}
	bool ia = a->cpu <= g->cpu_budget, ib = b->cpu <= g->cpu_budget;
	return ia == ib && (ia ? within(a->tps, b->tps) : within(a->cpu, b->cpu));
}

/* rank - how many live candidates rank strictly before c[i]. */
static size_t rank(const struct tune_cand *c, size_t n, size_t i, const struct tune_goal *g)
{
	size_t r = 0;
	for (size_t j = 0; j < n; j++)
		if (j != i && c[j].alive && tune_better(&c[j], &c[i], g))
			r++;
	return r;
}

size_t tune_halve(struct tune_cand *c, size_t n, const struct tune_goal *g)
{
	size_t live = 0, meeting = 0;
	for (size_t i = 0; i < n; i++) {
		if (c[i].alive && !tune_proven(&c[i]))
			c[i].alive = false;
		if (c[i].alive) {
			live++;
			meeting += g->kind == TUNE_GOAL_P99 && may_meet(&c[i], g);
		}
	}
	if (meeting > 0)
		for (size_t i = 0; i < n; i++)
			if (c[i].alive && !may_meet(&c[i], g)) {
				c[i].alive = false;
				live--;
			}
	if (live <= 1)
		return live;
	size_t keep = (live + 1) / 2, worst = n, worst_rank = 0;
	for (size_t i = 0; i < n; i++) {
		if (!c[i].alive)
			continue;
		size_t r = rank(c, n, i, g);
		if (r < keep && (worst == n || r >= worst_rank)) {
			worst = i;
			worst_rank = r;
		}
	}
	/* The ranks are a strict weak order: c[i] ranks within the kept half exactly when
	 * the worst kept one is not better than it, so dropping as we go changes nothing. */
	size_t left = 0;
	for (size_t i = 0; i < n; i++) {
		if (!c[i].alive || i == worst) {
			left += c[i].alive;
			continue;
		}
		c[i].alive = !tune_better(&c[worst], &c[i], g) || tune_tied(&c[i], &c[worst], g);
		left += c[i].alive;
	}
	return left;
}

bool tune_pick(const struct tune_cand *c, size_t n, const struct tune_goal *g, int *best,
	       int *runner)
{
	*best = *runner = -1;
	for (size_t i = 0; i < n; i++) {
		if (!c[i].alive || !tune_proven(&c[i]))
			continue;
		if (*best < 0 || tune_better(&c[i], &c[*best], g)) {
			*runner = *best;
			*best = (int)i;
		} else if (*runner < 0 || tune_better(&c[i], &c[*runner], g)) {
			*runner = (int)i;
		}
	}
	if (*best < 0)
		return false;
	if (g->kind == TUNE_GOAL_P99 ? c[*best].p99 <= g->p99_us : c[*best].cpu <= g->cpu_budget)
		return true;
	/* Nothing meets the goal: the closest one instead. */
	for (size_t i = 0; i < n; i++) {
		if (!c[i].alive || !tune_proven(&c[i]))
			continue;
		bool closer = g->kind == TUNE_GOAL_P99 ? c[i].p99 < c[*best].p99
						       : c[i].cpu < c[*best].cpu;
		if (closer)
			*best = (int)i;
	}
	return false;
}

bool tune_plan(size_t n, double budget_s, double min_s, unsigned *rungs, double *first_s)
{
	if (n == 0)
		return false;
	unsigned r = 1;
	for (size_t m = n; m > 1; m = (m + 1) / 2)
		r++;
	*rungs = r;
	*first_s = budget_s / ((double)n * r);
	return *first_s >= min_s;
}

/* measured - c has a P99 and a CPU figure. */
static bool measured(const struct tune_cand *c)
{
	return !isnan(c->p99) && !isnan(c->cpu);
}

size_t tune_pareto(const struct tune_cand *c, size_t n, bool *on_front)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		on_front[i] = measured(&c[i]);
		for (size_t j = 0; j < n && on_front[i]; j++)
			if (j != i && measured(&c[j]) && c[j].p99 <= c[i].p99 && c[j].cpu <= c[i].cpu &&
			    (c[j].p99 < c[i].p99 || c[j].cpu < c[i].cpu))
				on_front[i] = false;
		k += on_front[i];
	}
	return k;
}
