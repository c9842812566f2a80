/* SPDX-License-Identifier: MIT */
/*
 * The latency histogram against the truth: every distribution is also kept as a
 * sorted array, and the histogram's percentiles, min, max and mean must match the
 * array's (nearest-rank percentile) within the header's 1%. A fixed-seed PRNG makes
 * every run see the same samples.
 *
 * Beyond the 1% contract the tests also hold the layout to its design bound: with 128
 * sub-buckets per power of two and the midpoint reported, no value may be off by more
 * than 1/256 of itself, and values below 256 must be exact. A layout with half the
 * resolution would still pass 1%, and would waste the bytes the struct spends.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <busypoll/hist.h>

#define N_SAMPLES 500000 /* P99.99 then rests on 50 samples; near 2^44 the sum still fits */

/* ---- fixed-seed PRNG (splitmix64): the same samples on every run and machine ---- */

static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* uniform in [0, 1) */
static double rng_unit(uint64_t *s)
{
	return (double)(rng_next(s) >> 11) * 0x1p-53;
}

/* uniform integer in [lo, hi] */
static uint64_t rng_range(uint64_t *s, uint64_t lo, uint64_t hi)
{
	return lo + rng_next(s) % (hi - lo + 1);
}

/* ---- the truth: a sorted array ---- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/*
 * Nearest-rank percentile of a sorted array, with p given in parts per million so that
 * the reference is computed in exact integer arithmetic (the histogram uses doubles):
 * the smallest sample with at least p of the samples <= it.
 */
static uint64_t sorted_percentile(const uint64_t *sorted, size_t n, uint64_t ppm)
{
	uint64_t rank = ((uint64_t)n * ppm + 999999) / 1000000;

	if (rank < 1)
		rank = 1;
	return sorted[rank - 1];
}

static uint64_t absdiff(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

/*
 * check_value - got must be within 1% of want (the contract) and within want/256 (the
 * design: half a sub-bucket; this makes values below 256 exact).
 */
#define check_value(what, got, want) do {                                              \
	uint64_t g_ = (got), w_ = (want), d_ = absdiff(g_, w_);                          \
	if (d_ * 100 > w_ || d_ * 256 > w_) {                                            \
		print_error("%s: histogram %llu, sorted array %llu (off by %.4f%%)\n",   \
			    (what), (unsigned long long)g_, (unsigned long long)w_,      \
			    w_ ? 100.0 * (double)d_ / (double)w_ : 100.0);               \
		fail();                                                                  \
	}                                                                                \
} while (0)

static struct bp_hist *hist_new(void)
{
	/* 20 KiB: too big to be comfortable on the stack of every helper. */
	struct bp_hist *h = malloc(sizeof(*h));

	assert_non_null(h);
	bp_hist_init(h);
	return h;
}

static uint64_t bucket_total(const struct bp_hist *h)
{
	uint64_t t = 0;

	for (unsigned i = 0; i < BP_HIST_BUCKETS; i++)
		t += h->buckets[i];
	return t;
}

/* Compare a histogram of v[0..n) with the sorted array of the same samples. */
static void check_against_sorted(const char *name, const uint64_t *v, size_t n)
{
	static const uint64_t ppm[] = {
		1, 10000, 100000, 250000, 500000, 750000, 900000, 990000, 995000,
		999000, 999900, 999990, 1000000,
	};
	struct bp_hist *h = hist_new();
	uint64_t *sorted = malloc(n * sizeof(*sorted));
	unsigned __int128 sum = 0;
	char what[96];

	assert_non_null(sorted);
	for (size_t i = 0; i < n; i++) {
		bp_hist_record(h, v[i]);
		sum += v[i];
	}
	memcpy(sorted, v, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), cmp_u64);

	assert_int_equal(h->count, n);
	assert_int_equal(bucket_total(h), n);
	/* min and max are kept exactly, not bucketed */
	assert_int_equal(h->min, sorted[0]);
	assert_int_equal(h->max, sorted[n - 1]);
	/* the sum fits in 64 bits for every distribution here, so the mean is exact
	 * up to the final division */
	assert_true(sum <= UINT64_MAX);
	assert_int_equal(h->sum, (uint64_t)sum);
	long double mean = (long double)sum / n;
	assert_true(fabsl((long double)bp_hist_mean(h) - mean) <= mean * 1e-12L);

	for (size_t k = 0; k < sizeof(ppm) / sizeof(ppm[0]); k++) {
		uint64_t want = sorted_percentile(sorted, n, ppm[k]);
		uint64_t got = bp_hist_percentile(h, (double)ppm[k] / 10000.0);

		snprintf(what, sizeof(what), "%s P%g", name, (double)ppm[k] / 10000.0);
		check_value(what, got, want);
	}

	/* percentiles never go down as p goes up, and stay inside [min, max] */
	uint64_t prev = 0;
	for (double p = 0.01; p <= 100.0; p += 0.01) {
		uint64_t q = bp_hist_percentile(h, p);

		assert_true(q >= prev);
		assert_in_range(q, h->min, h->max);
		prev = q;
	}
	free(sorted);
	free(h);
}

/* ---- distributions ---- */

static uint64_t *samples(void)
{
	uint64_t *v = malloc(N_SAMPLES * sizeof(*v));

	assert_non_null(v);
	return v;
}

static void test_uniform(void **state)
{
	uint64_t s = 1, *v = samples();

	for (size_t i = 0; i < N_SAMPLES; i++)
		v[i] = rng_range(&s, 1000, 1000000);
	check_against_sorted("uniform 1us..1ms", v, N_SAMPLES);
	free(v);
}

static void test_exponential(void **state)
{
	uint64_t s = 2, *v = samples();

	/* a service-time shape: a 5 us floor plus an exponential with a 20 us mean */
	for (size_t i = 0; i < N_SAMPLES; i++)
		v[i] = 5000 + (uint64_t)(-log1p(-rng_unit(&s)) * 20000.0);
	check_against_sorted("exponential", v, N_SAMPLES);
	free(v);
}

static void test_bimodal_heavy_tail(void **state)
{
	uint64_t s = 3, *v = samples();

	for (size_t i = 0; i < N_SAMPLES; i++) {
		double u = rng_unit(&s);

		if (u < 0.90) {
			/* fast path: ~N(12 us, 0.5 us) from a sum of 12 uniforms */
			double g = -6.0;
			for (int k = 0; k < 12; k++)
				g += rng_unit(&s);
			v[i] = (uint64_t)(12000.0 + 500.0 * g);
		} else if (u < 0.995) {
			v[i] = rng_range(&s, 60000, 100000); /* slow path: 60..100 us */
		} else {
			/* Pareto tail (alpha 1.2) from 100 us, capped at 10 s */
			double t = 100000.0 / pow(1.0 - rng_unit(&s), 1.0 / 1.2);
			v[i] = t > 1e10 ? 10000000000ull : (uint64_t)t;
		}
	}
	check_against_sorted("bimodal+tail", v, N_SAMPLES);
	free(v);
}

static void test_constant(void **state)
{
	static const uint64_t consts[] = { 0, 1, 127, 128, 255, 256, 257, 12345, 1000003,
					   (1ull << 44) + 12345 };
	uint64_t *v = samples();

	for (size_t c = 0; c < sizeof(consts) / sizeof(consts[0]); c++) {
		char name[48];
		struct bp_hist *h = hist_new();

		for (size_t i = 0; i < N_SAMPLES; i++) {
			v[i] = consts[c];
			bp_hist_record(h, consts[c]);
		}
		snprintf(name, sizeof(name), "constant %llu", (unsigned long long)consts[c]);
		check_against_sorted(name, v, N_SAMPLES);
		/* stronger than 1%: clamping to [min, max] makes a constant exact */
		assert_int_equal(bp_hist_percentile(h, 50), consts[c]);
		assert_int_equal(bp_hist_percentile(h, 99.99), consts[c]);
		free(h);
	}
	free(v);
}

static void test_small_values_exact(void **state)
{
	uint64_t s = 5, *v = samples();
	struct bp_hist *h = hist_new();

	for (size_t i = 0; i < N_SAMPLES; i++) {
		v[i] = rng_range(&s, 0, 200);
		bp_hist_record(h, v[i]);
	}
	check_against_sorted("0..200", v, N_SAMPLES); /* exactness is in check_value */

	/* every value 0..200 has its own bucket: each count must be right, too */
	uint64_t seen[201] = { 0 };
	for (size_t i = 0; i < N_SAMPLES; i++)
		seen[v[i]]++;
	for (unsigned i = 0; i <= 200; i++)
		assert_int_equal(h->buckets[i], seen[i]);
	free(h);
	free(v);
}

static void test_huge_values(void **state)
{
	uint64_t s = 6, *v = samples();

	/* about 4.9 hours: 2^44 +- 2^40 ns */
	for (size_t i = 0; i < N_SAMPLES; i++)
		v[i] = rng_range(&s, (1ull << 44) - (1ull << 40), (1ull << 44) + (1ull << 40));
	check_against_sorted("near 2^44", v, N_SAMPLES);
	free(v);
}

static void test_log_uniform(void **state)
{
	uint64_t s = 7, *v = samples();

	/* 1 ns .. 2^45 ns, evenly per power of two: every bucket group is used */
	for (size_t i = 0; i < N_SAMPLES; i++)
		v[i] = (uint64_t)exp2(rng_unit(&s) * 45.0);
	check_against_sorted("log-uniform 1ns..2^45ns", v, N_SAMPLES);
	free(v);
}

/* ---- the percentile definition, bucket by bucket ---- */

/*
 * Samples 2% apart, so that a percentile one rank off is 2% off and fails. p = k/10
 * for k = 1..1000 over 1000 samples must give exactly the k-th smallest: this also
 * catches p * n / 100 landing a hair above an integer in floating point (99.9% of
 * 1000) and being rounded up to the next rank.
 */
static void test_rank_exact(void **state)
{
	enum { N = 1000 };
	uint64_t v[N], s = 8;
	struct bp_hist *h = hist_new();
	char what[48];

	for (int k = 0; k < N; k++)
		v[k] = (uint64_t)(1000.0 * pow(1.02, k));
	/* record in a shuffled order: the histogram must not depend on it */
	uint64_t shuffled[N];
	memcpy(shuffled, v, sizeof(v));
	for (int k = N - 1; k > 0; k--) {
		int j = (int)(rng_next(&s) % (uint64_t)(k + 1));
		uint64_t t = shuffled[k];
		shuffled[k] = shuffled[j];
		shuffled[j] = t;
	}
	for (int k = 0; k < N; k++)
		bp_hist_record(h, shuffled[k]);

	for (int k = 1; k <= N; k++) {
		snprintf(what, sizeof(what), "P%g of 1000", k / 10.0);
		check_value(what, bp_hist_percentile(h, k / 10.0), v[k - 1]);
	}
	/* between two ranks: 50.05% of 1000 is 500.5, so the 501st sample */
	check_value("P50.05", bp_hist_percentile(h, 50.05), v[500]);
	/* outside (0, 100]: p <= 0 (and NaN) is the smallest sample, p > 100 the largest */
	check_value("P0", bp_hist_percentile(h, 0), v[0]);
	check_value("P-5", bp_hist_percentile(h, -5), v[0]);
	check_value("P(NaN)", bp_hist_percentile(h, NAN), v[0]);
	check_value("P150", bp_hist_percentile(h, 150), v[N - 1]);
	free(h);
}

/*
 * Every bucket boundary of the whole range: the first, middle and last value of each
 * bucket, recorded between a smaller and a larger sentinel (so the clamp to [min, max]
 * cannot hide an error), must come back as P50 within 1/256 of itself.
 */
static void test_every_bucket(void **state)
{
	struct bp_hist *h = hist_new();
	const uint64_t top = (1ull << 46) - 1; /* the largest value the table resolves */
	char what[64];

	for (unsigned shift = 0; shift <= 38; shift++) {
		for (uint64_t sub = shift ? 128 : 1; sub < 256; sub++) {
			uint64_t lo = sub << shift, w = 1ull << shift;
			const uint64_t probes[] = { lo, lo + w / 2, lo + w - 1 };

			for (unsigned k = 0; k < 3; k++) {
				bp_hist_init(h);
				bp_hist_record(h, 0);
				bp_hist_record(h, probes[k]);
				bp_hist_record(h, top);
				snprintf(what, sizeof(what), "single value %llu",
					 (unsigned long long)probes[k]);
				check_value(what, bp_hist_percentile(h, 50), probes[k]);
			}
		}
	}
	free(h);
}

static void test_above_range(void **state)
{
	struct bp_hist *h = hist_new();

	bp_hist_record(h, (1ull << 46) - 1); /* the top of the range: last bucket */
	bp_hist_record(h, 1ull << 46);       /* beyond: also the last bucket */
	bp_hist_record(h, 1ull << 60);
	bp_hist_record(h, UINT64_MAX);
	assert_int_equal(h->buckets[BP_HIST_BUCKETS - 1], 4);
	assert_int_equal(bucket_total(h), 4);
	assert_int_equal(h->count, 4);
	assert_int_equal(h->min, (1ull << 46) - 1);
	assert_int_equal(h->max, UINT64_MAX); /* the true max survives */
	assert_int_equal(bp_hist_percentile(h, 100), bp_hist_percentile(h, 1));
	assert_in_range(bp_hist_percentile(h, 100), h->min, h->max);
	/* the sum saturates instead of wrapping to a small, plausible number */
	assert_int_equal(h->sum, UINT64_MAX);
	free(h);
}

static void test_bucket_saturates(void **state)
{
	struct bp_hist *h = hist_new(), *g = hist_new();
	unsigned i;

	/* find 1000's bucket from the histogram itself */
	bp_hist_record(h, 1000);
	for (i = 0; i < BP_HIST_BUCKETS && !h->buckets[i]; i++)
		;
	assert_true(i < BP_HIST_BUCKETS);
	/* as if UINT32_MAX samples of 1000 had been recorded */
	h->buckets[i] = UINT32_MAX;
	h->count = UINT32_MAX;
	h->sum = 1000ull * UINT32_MAX;
	bp_hist_record(h, 1000);
	assert_int_equal(h->buckets[i], UINT32_MAX); /* not 0 */
	assert_int_equal(h->count, (uint64_t)UINT32_MAX + 1);
	check_value("P100 of a saturated bucket", bp_hist_percentile(h, 100), 1000);
	check_value("P50 of a saturated bucket", bp_hist_percentile(h, 50), 1000);

	bp_hist_record(g, 1000);
	bp_hist_merge(h, g);
	assert_int_equal(h->buckets[i], UINT32_MAX);
	assert_int_equal(h->count, (uint64_t)UINT32_MAX + 2);
	free(g);
	free(h);
}

/* ---- merge, empty, single ---- */

static void test_merge_halves(void **state)
{
	uint64_t s = 9, *v = samples();
	struct bp_hist *all = hist_new(), *a = hist_new(), *b = hist_new();

	for (size_t i = 0; i < N_SAMPLES; i++)
		v[i] = rng_unit(&s) < 0.9 ? rng_range(&s, 9000, 15000)
					  : rng_range(&s, 50000, 5000000000ull);
	for (size_t i = 0; i < N_SAMPLES; i++) {
		bp_hist_record(all, v[i]);
		bp_hist_record(i % 2 ? b : a, v[i]);
	}
	bp_hist_merge(a, b);
	assert_memory_equal(a, all, sizeof(*all));

	/* halves that do not overlap: min from one side, max from the other */
	qsort(v, N_SAMPLES, sizeof(*v), cmp_u64);
	bp_hist_init(a);
	bp_hist_init(b);
	for (size_t i = 0; i < N_SAMPLES; i++)
		bp_hist_record(i < N_SAMPLES / 2 ? a : b, v[i]);
	bp_hist_merge(b, a); /* larger half first as dst */
	assert_memory_equal(b, all, sizeof(*all));

	/* merging with an empty histogram, either way round */
	struct bp_hist *e = hist_new();
	bp_hist_merge(e, all);
	assert_memory_equal(e, all, sizeof(*all));
	bp_hist_init(e);
	memcpy(a, all, sizeof(*all));
	bp_hist_merge(a, e); /* an empty src's min 0 must not lower dst's min */
	assert_memory_equal(a, all, sizeof(*all));

	free(e);
	free(b);
	free(a);
	free(all);
	free(v);
}

static void test_empty(void **state)
{
	struct bp_hist *h = hist_new();
	static const double ps[] = { 0, 0.001, 50, 99.99, 100 };

	for (size_t k = 0; k < sizeof(ps) / sizeof(ps[0]); k++)
		assert_int_equal(bp_hist_percentile(h, ps[k]), 0);
	assert_true(bp_hist_mean(h) == 0.0);
	assert_int_equal(h->count, 0);
	assert_int_equal(h->min, 0);
	assert_int_equal(h->max, 0);

	/* all-zero is empty too: a static histogram needs no init */
	static struct bp_hist zero;
	assert_int_equal(bp_hist_percentile(&zero, 50), 0);
	bp_hist_record(&zero, 777);
	assert_int_equal(zero.min, 777);
	free(h);
}

static void test_single_sample(void **state)
{
	static const uint64_t vals[] = { 0, 1, 127, 128, 255, 256, 1000, 123456789,
					 (1ull << 44) + 12345, (1ull << 46) + 5, UINT64_MAX };
	static const double ps[] = { 0.001, 1, 50, 99.99, 100 };
	struct bp_hist *h = hist_new();

	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		bp_hist_init(h);
		bp_hist_record(h, vals[i]);
		assert_int_equal(h->count, 1);
		assert_int_equal(h->min, vals[i]);
		assert_int_equal(h->max, vals[i]);
		for (size_t k = 0; k < sizeof(ps) / sizeof(ps[0]); k++)
			assert_int_equal(bp_hist_percentile(h, ps[k]), vals[i]);
		assert_true(bp_hist_mean(h) == (double)vals[i]);
	}
	free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_uniform),
		cmocka_unit_test(test_exponential),
		cmocka_unit_test(test_bimodal_heavy_tail),
		cmocka_unit_test(test_constant),
		cmocka_unit_test(test_small_values_exact),
		cmocka_unit_test(test_huge_values),
		cmocka_unit_test(test_log_uniform),
		cmocka_unit_test(test_rank_exact),
		cmocka_unit_test(test_every_bucket),
		cmocka_unit_test(test_above_range),
		cmocka_unit_test(test_bucket_saturates),
		cmocka_unit_test(test_merge_halves),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_single_sample),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
