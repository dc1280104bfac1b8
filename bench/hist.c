/*
 * hist: see hist.h.
 */
#include "config.h"

#include "bench/hist.h"

#include <string.h>

void
hist_init(struct hist *h)
{
    memset(h, 0, sizeof(*h));
}

int
hist_bucket(uint64_t us)
{
    int mag;

    if (us > HIST_MAX_US)
        us = HIST_MAX_US;
    if (us < HIST_SUB)
        return (int)us;
    /* mag >= HIST_SUB_BITS: the position of the highest bit. */
    mag = 63 - __builtin_clzll(us);
    return (mag - HIST_SUB_BITS + 1) * HIST_SUB + (int)((us >> (mag - HIST_SUB_BITS)) - HIST_SUB);
}

uint64_t
hist_bucket_high(int bucket)
{
    int shift;

    if (bucket < HIST_SUB)
        return (uint64_t)bucket;
    shift = bucket / HIST_SUB - 1;
    return (((uint64_t)(bucket % HIST_SUB + HIST_SUB) + 1) << shift) - 1;
}

void
hist_record(struct hist *h, uint64_t us)
{
    if (us > HIST_MAX_US) {
        us = HIST_MAX_US;
        h->clamped++;
    }
    h->b[hist_bucket(us)]++;
    if (h->count == 0 || us < h->min_us)
        h->min_us = us;
    if (us > h->max_us)
        h->max_us = us;
    h->count++;
    h->sum_us += (double)us;
}

void
hist_merge(struct hist *dst, const struct hist *src)
{
    if (src->count == 0)
        return;
    for (int i = 0; i < HIST_BUCKETS; i++)
        dst->b[i] += src->b[i];
    if (dst->count == 0 || src->min_us < dst->min_us)
        dst->min_us = src->min_us;
    if (src->max_us > dst->max_us)
        dst->max_us = src->max_us;
    dst->count += src->count;
    dst->clamped += src->clamped;
    dst->sum_us += src->sum_us;
}

uint64_t
hist_percentile(const struct hist *h, double p)
{
    uint64_t rank, seen = 0;

    if (h->count == 0)
        return 0;
    if (p <= 0)
        return h->min_us;
    if (p >= 100)
        return h->max_us;
    /* The smallest value with at least p % of the samples at or below it. */
    rank = (uint64_t)(p / 100.0 * (double)h->count + 0.999999);
    if (rank < 1)
        rank = 1;
    for (int i = 0; i < HIST_BUCKETS; i++) {
        seen += h->b[i];
        if (seen >= rank) {
            uint64_t v = hist_bucket_high(i);
            return v > h->max_us ? h->max_us : v < h->min_us ? h->min_us : v;
        }
    }
    return h->max_us;
}

double
hist_mean(const struct hist *h)
{
    return h->count ? h->sum_us / (double)h->count : 0;
}
