/* SPDX-License-Identifier: MIT */
/*
 * Log-linear latency histogram (HdrHistogram-like): values in nanoseconds, relative
 * error at most 1% everywhere, fixed size, nothing allocated when recording.
 * Histograms of flows and threads merge exactly.
 */
#ifndef BUSYPOLL_HIST_H
#define BUSYPOLL_HIST_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 2^7 = 128 linear sub-buckets per power of two: error <= 1/128 < 1%. */
#define BP_HIST_SUB_BITS 7
#define BP_HIST_SUB (1u << BP_HIST_SUB_BITS)
/* Powers of two above the linear range: 2^7..2^46 ns, so values up to ~19.5 hours. */
#define BP_HIST_MAGS 39
#define BP_HIST_BUCKETS (BP_HIST_SUB * (BP_HIST_MAGS + 1))

struct bp_hist {
	uint64_t count;
	uint64_t sum;   /* ns, for the mean */
	uint64_t min;
	uint64_t max;
	uint32_t buckets[BP_HIST_BUCKETS];
};

void bp_hist_init(struct bp_hist *h);
/* bp_hist_record - add one value (ns). Values beyond the range land in the top bucket. */
void bp_hist_record(struct bp_hist *h, uint64_t ns);
/* bp_hist_merge - dst += src. */
void bp_hist_merge(struct bp_hist *dst, const struct bp_hist *src);
/*
 * bp_hist_percentile - value at percentile p (0..100]: the smallest recorded-bucket value
 * v such that at least p% of samples are <= v; reported as the bucket's midpoint,
 * clamped to [min, max]. 0 when empty.
 */
uint64_t bp_hist_percentile(const struct bp_hist *h, double p);
double bp_hist_mean(const struct bp_hist *h);

#ifdef __cplusplus
}
#endif
#endif
