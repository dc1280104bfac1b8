/*
 * hist: a log-linear latency histogram in the manner of HdrHistogram.
 *
 * Values are microseconds.  Below 128 us every value has its own bucket;
 * above, each power of two is split into 128 buckets, so a bucket is never
 * wider than 1/128 (0.8 %) of the values in it: 1 % precision from 100 us
 * to HIST_MAX_US (60 s) in HIST_BUCKETS counters.  Larger values are
 * clamped to HIST_MAX_US and counted in `clamped`.
 *
 * Percentiles come from the counts, so two histograms of disjoint samples
 * merge exactly (hist_merge); averaging two percentiles never does.
 *
 * Ownership: a struct hist is plain memory (about 22 kB), copied and
 * embedded freely; nothing inside it is allocated.
 */
#ifndef CONDUIT_BENCH_HIST_H
#define CONDUIT_BENCH_HIST_H

#include <stdint.h>

#define HIST_SUB_BITS 7
#define HIST_SUB (1 << HIST_SUB_BITS)
#define HIST_MAX_US 60000000ULL
/* 60 s < 2^26 us: magnitudes 7..25 above the linear part. */
#define HIST_BUCKETS (HIST_SUB + (26 - HIST_SUB_BITS) * HIST_SUB)

struct hist {
    uint64_t count;
    uint64_t clamped;
    uint64_t min_us, max_us;
    double sum_us;
    uint64_t b[HIST_BUCKETS];
};

void hist_init(struct hist *h);
void hist_record(struct hist *h, uint64_t us);
void hist_merge(struct hist *dst, const struct hist *src);

/*
 * The value at percentile p (0 to 100): the highest value of the bucket
 * holding that rank, but never above the largest value recorded.  0 for
 * an empty histogram.
 */
uint64_t hist_percentile(const struct hist *h, double p);
double hist_mean(const struct hist *h);

/* The bucket of a value and the highest value a bucket holds (for tests). */
int hist_bucket(uint64_t us);
uint64_t hist_bucket_high(int bucket);

#endif
