/*
 * Unit tests for bench/hist.c, the latency histogram conduit-bench judges
 * levels by.  What a user of the reports relies on: a percentile is within
 * 1 % of the true one from 100 us to 60 s, for known distributions; two
 * histograms merge into exactly the histogram of all the samples; values
 * beyond 60 s are clamped and counted, not lost.
 */
#include "bench/hist.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Relative error of got against want. */
static double
rel(double got, double want)
{
    return fabs(got - want) / want;
}

START_TEST(test_bucket_precision)
{
    /* Every value lands in a bucket no wider than 1 % of it. */
    for (uint64_t v = 100; v <= HIST_MAX_US; v = v + v / 97 + 1) {
        int b = hist_bucket(v);

        ck_assert_int_ge(b, 0);
        ck_assert_int_lt(b, HIST_BUCKETS);
        ck_assert_uint_ge(hist_bucket_high(b), v);
        ck_assert_msg(rel((double)hist_bucket_high(b), (double)v) < 0.01,
                      "value %llu: bucket %d ends at %llu", (unsigned long long)v, b,
                      (unsigned long long)hist_bucket_high(b));
        /* Buckets are ordered like the values. */
        ck_assert_int_le(hist_bucket(v - 1), b);
    }
    ck_assert_int_eq(hist_bucket(HIST_MAX_US * 10), hist_bucket(HIST_MAX_US));
}
END_TEST

START_TEST(test_uniform)
{
    static struct hist h;

    hist_init(&h);
    for (uint64_t v = 1; v <= 1000000; v++)
        hist_record(&h, v);
    ck_assert_uint_eq(h.count, 1000000);
    ck_assert(rel((double)hist_percentile(&h, 50), 500000) < 0.01);
    ck_assert(rel((double)hist_percentile(&h, 95), 950000) < 0.01);
    ck_assert(rel((double)hist_percentile(&h, 99), 990000) < 0.01);
    ck_assert(rel((double)hist_percentile(&h, 99.9), 999000) < 0.01);
    ck_assert_uint_eq(hist_percentile(&h, 100), 1000000);
    ck_assert_uint_eq(hist_percentile(&h, 0), 1);
    ck_assert(rel(hist_mean(&h), 500000.5) < 1e-9);
}
END_TEST

START_TEST(test_two_points)
{
    /* 90 % fast, 10 % slow: p90 is fast, p91 and above slow. */
    static struct hist h;

    hist_init(&h);
    for (int i = 0; i < 900; i++)
        hist_record(&h, 1000);
    for (int i = 0; i < 100; i++)
        hist_record(&h, 250000);
    ck_assert(rel((double)hist_percentile(&h, 50), 1000) < 0.01);
    ck_assert(rel((double)hist_percentile(&h, 90), 1000) < 0.01);
    ck_assert(rel((double)hist_percentile(&h, 91), 250000) < 0.01);
    ck_assert(rel((double)hist_percentile(&h, 99), 250000) < 0.01);
    /* Never above the largest value seen, even though its bucket is wider. */
    ck_assert_uint_le(hist_percentile(&h, 99), 250000);
}
END_TEST

START_TEST(test_exponential)
{
    /* Mean 20 ms: the p-th percentile is -20 ms * ln(1 - p). */
    static struct hist h;
    unsigned seed = 7;

    hist_init(&h);
    for (int i = 0; i < 400000; i++) {
        double u = (rand_r(&seed) + 1.0) / ((double)RAND_MAX + 2.0);

        hist_record(&h, (uint64_t)(-20000 * log(u)));
    }
    /* 1 % for the bucket, plus the sampling error of 400,000 draws. */
    ck_assert(rel((double)hist_percentile(&h, 50), -20000 * log(0.5)) < 0.02);
    ck_assert(rel((double)hist_percentile(&h, 95), -20000 * log(0.05)) < 0.02);
    ck_assert(rel((double)hist_percentile(&h, 99), -20000 * log(0.01)) < 0.03);
    ck_assert(rel(hist_mean(&h), 20000) < 0.01);
}
END_TEST

START_TEST(test_merge)
{
    static struct hist a, b, all;
    unsigned seed = 3;

    hist_init(&a);
    hist_init(&b);
    hist_init(&all);
    for (int i = 0; i < 50000; i++) {
        uint64_t v = (uint64_t)rand_r(&seed) % 5000000;

        hist_record(i % 3 ? &a : &b, v);
        hist_record(&all, v);
    }
    hist_merge(&a, &b);
    ck_assert_uint_eq(a.count, all.count);
    ck_assert_uint_eq(a.min_us, all.min_us);
    ck_assert_uint_eq(a.max_us, all.max_us);
    ck_assert_int_eq(memcmp(a.b, all.b, sizeof(a.b)), 0);
    for (double p = 1; p < 100; p += 7.5)
        ck_assert_uint_eq(hist_percentile(&a, p), hist_percentile(&all, p));
    /* Merging an empty one changes nothing. */
    hist_init(&b);
    hist_merge(&a, &b);
    ck_assert_uint_eq(a.count, all.count);
    ck_assert_uint_eq(a.min_us, all.min_us);
}
END_TEST

START_TEST(test_clamp_and_empty)
{
    static struct hist h;

    hist_init(&h);
    ck_assert_uint_eq(hist_percentile(&h, 99), 0);
    ck_assert(hist_mean(&h) == 0);
    hist_record(&h, 120000000); /* two minutes */
    hist_record(&h, 50);
    ck_assert_uint_eq(h.clamped, 1);
    ck_assert_uint_eq(h.max_us, HIST_MAX_US);
    ck_assert_uint_eq(hist_percentile(&h, 100), HIST_MAX_US);
    ck_assert_uint_eq(hist_percentile(&h, 50), 50);
}
END_TEST

static Suite *
hist_suite(void)
{
    Suite *s = suite_create("hist");
    TCase *tc = tcase_create("core");

    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_bucket_precision);
    tcase_add_test(tc, test_uniform);
    tcase_add_test(tc, test_two_points);
    tcase_add_test(tc, test_exponential);
    tcase_add_test(tc, test_merge);
    tcase_add_test(tc, test_clamp_and_empty);
    suite_add_tcase(s, tc);
    return s;
}

#include "t/unit/check_main.h"
CHECK_MAIN(hist_suite)
