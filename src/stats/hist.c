/* SPDX-License-Identifier: MIT */
/*
 * Log-linear latency histogram (contract in include/busypoll/hist.h).
 *
 * Layout: bucket index = shift * 128 + (v >> shift), where shift = max(0, msb(v) - 7).
 *   - v < 256: shift 0, the index is the value itself: buckets 0..255 are 1 ns wide
 *     and exact (the header's "linear range" is 0..127; 128..255 is the first power
 *     of two, whose sub-buckets happen to be 1 ns wide too).
 *   - v in [2^k, 2^(k+1)), k >= 8: shift = k - 7, v >> shift is in [128, 256), so each
 *     power of two gets 128 sub-buckets of width 2^shift. A value's distance from its
 *     bucket's lower bound is below 2^shift = 2^k / 128, so reporting the bucket
 *     midpoint is within 2^(shift-1) / 2^k = 1/256 of the true value (0.39%, half of the
 *     header's 1/128 bound, well inside 1%).
 *   - The largest index, BP_HIST_BUCKETS - 1 = 38 * 128 + 255, is reached at shift 38,
 *     i.e. values up to 2^46 - 1 ns (~19.5 h); anything larger is put in that last bucket
 *     (only max then remembers the true value).
 * Recording is one count-leading-zeros, a shift and an add: O(1), branch-light,
 * nothing allocated.
 */
#include <math.h>
#include <string.h>

#include <busypoll/hist.h>

_Static_assert(BP_HIST_BUCKETS == BP_HIST_SUB * (BP_HIST_MAGS + 1), "bucket layout");
_Static_assert(BP_HIST_SUB == 128 && BP_HIST_SUB_BITS == 7,
	       "the index arithmetic below assumes 2^7 sub-buckets");

/* Largest shift that still maps into the table: (MAGS - 1) * SUB + 255 == BUCKETS - 1. */
#define HIST_MAX_SHIFT (BP_HIST_MAGS - 1)

/* bucket_of - index of the bucket holding ns; values past the table go to the last one. */
static inline unsigned bucket_of(uint64_t ns)
{
	/* OR-ing in 255 makes msb >= 7 without a branch, so small values get shift 0. */
	unsigned shift = (unsigned)(63 - __builtin_clzll(ns | 255u)) - BP_HIST_SUB_BITS;

	if (__builtin_expect(shift > HIST_MAX_SHIFT, 0))
		return BP_HIST_BUCKETS - 1;
	return (shift << BP_HIST_SUB_BITS) + (unsigned)(ns >> shift);
}

/* bucket_lo - smallest value mapped to bucket i; *width gets the bucket's width. */
static inline uint64_t bucket_lo(unsigned i, uint64_t *width)
{
	/* Indexes 0..255 are shift 0; above, each group of 128 adds one to the shift. */
	unsigned shift = i < 2 * BP_HIST_SUB ? 0 : (i >> BP_HIST_SUB_BITS) - 1;
	uint64_t sub = i - (shift << BP_HIST_SUB_BITS); /* in [0, 256) */

	*width = (uint64_t)1 << shift;
	return sub << shift;
}

void bp_hist_init(struct bp_hist *h)
{
	/* All-zero is the empty histogram, so static and calloc'd ones need no init. */
	memset(h, 0, sizeof(*h));
}

void bp_hist_record(struct bp_hist *h, uint64_t ns)
{
	unsigned i = bucket_of(ns);

	/* min stays 0 while empty so that readers of an empty histogram see 0, not ~0. */
	if (ns < h->min || h->count == 0)
		h->min = ns;
	if (ns > h->max)
		h->max = ns;
	h->count++;
	/* Saturate rather than wrap: a wrapped sum gives a plausible-looking, wrong mean. */
	if (__builtin_add_overflow(h->sum, ns, &h->sum))
		h->sum = UINT64_MAX;
	/* Likewise a full 32-bit bucket stops instead of dropping to 0 (after 4.3e9 hits). */
	h->buckets[i] += h->buckets[i] != UINT32_MAX;
}

void bp_hist_merge(struct bp_hist *dst, const struct bp_hist *src)
{
	if (src->count == 0)
		return; /* an empty src has min 0, which must not lower dst->min */
	if (dst->count == 0 || src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
	dst->count += src->count;
	if (__builtin_add_overflow(dst->sum, src->sum, &dst->sum))
		dst->sum = UINT64_MAX;
	/* Only the occupied span of src: its buckets outside [min, max] are all zero. */
	unsigned lo = bucket_of(src->min), hi = bucket_of(src->max);
	for (unsigned i = lo; i <= hi; i++) {
		uint32_t s;

		if (__builtin_add_overflow(dst->buckets[i], src->buckets[i], &s))
			s = UINT32_MAX;
		dst->buckets[i] = s;
	}
}

/*
 * rank_of - how many samples must be <= the answer: ceil(p% of count), in [1, count].
 * p * count / 100 is computed in floating point, and a decimal p such as 99.9 is not
 * exact in binary: 99.9% of 1000 may come out as 999.0000000000001, whose ceiling
 * would be one sample too far. Values within a few ulps of an integer are that
 * integer (a genuine fraction of a p with up to ~9 decimals is far larger).
 */
static uint64_t rank_of(double p, uint64_t count)
{
	if (!(p > 0)) /* p <= 0 and NaN: the smallest sample */
		return 1;
	if (p >= 100)
		return count;
	double x = p * (double)count / 100.0;
	double r = nearbyint(x);
	double q = fabs(x - r) <= 8 * x * 0x1p-52 ? r : ceil(x);

	if (q < 1)
		return 1;
	if (q >= (double)count)
		return count;
	return (uint64_t)q;
}

uint64_t bp_hist_percentile(const struct bp_hist *h, double p)
{
	if (h->count == 0)
		return 0;

	uint64_t rank = rank_of(p, h->count), cum = 0;
	unsigned lo = bucket_of(h->min), hi = bucket_of(h->max);

	for (unsigned i = lo; i <= hi; i++) {
		cum += h->buckets[i];
		if (cum >= rank) {
			uint64_t w, v = bucket_lo(i, &w);

			v += w >> 1; /* midpoint; w == 1 keeps the exact value */
			/* The clamp makes single samples, constants and the extremes exact,
			 * and keeps the top bucket's midpoint from passing the true max. */
			if (v < h->min)
				v = h->min;
			if (v > h->max)
				v = h->max;
			return v;
		}
	}
	/* Only reachable once a bucket saturated and holds fewer samples than count says:
	 * the best answer left is the largest value seen. */
	return h->max;
}

double bp_hist_mean(const struct bp_hist *h)
{
	return h->count ? (double)h->sum / (double)h->count : 0.0;
}
