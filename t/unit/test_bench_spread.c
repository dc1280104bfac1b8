/*
 * Unit tests for the repeats' statistics (bench/spread.c): medians and
 * ranges, the exact two-sided Mann-Whitney p against values R's
 * wilcox.test(exact = TRUE) gives for the same samples, and the verdict
 * experiment's findings draw: a difference only where the ranges separate
 * or the test says so, "no difference" otherwise (the issue's own numbers:
 * 17,000 and 18,750 for one configuration overlap anything in between);
 * and when a level counts as disturbed by other processes.
 */
#include "bench/spread.h"

#include <check.h>
#include <math.h>

#include "bench/acct.h"

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

START_TEST(median_and_range)
{
    double odd[] = {3, 1, 2}, even[] = {4, 1, 3, 2}, one[] = {7}, lo, hi;

    ck_assert_double_eq(spread_median(odd, 3), 2);
    ck_assert_double_eq(spread_median(even, 4), 2.5);
    ck_assert_double_eq(spread_median(one, 1), 7);
    ck_assert_double_eq(spread_median(odd, 0), 0);
    /* The input is left in its order. */
    ck_assert_double_eq(odd[0], 3);
    spread_range(even, 4, &lo, &hi);
    ck_assert_double_eq(lo, 1);
    ck_assert_double_eq(hi, 4);
    spread_range(one, 1, &lo, &hi);
    ck_assert_double_eq(lo, 7);
    ck_assert_double_eq(hi, 7);
}
END_TEST

START_TEST(mann_whitney_exact)
{
    double a3[] = {1, 2, 3}, b3[] = {4, 5, 6}, c3[] = {1, 3, 5}, d3[] = {2, 4, 6};
    double a4[] = {1, 2, 3, 4}, b4[] = {5, 6, 7, 8};
    double t1[] = {1, 1, 2}, t2[] = {2, 3, 3};
    double a5[] = {10, 11, 12, 13, 14.5}, b5[] = {14, 15, 16, 17, 18};
    double o5[] = {10, 11, 12, 13, 20};

    /* Complete separation: 2 of C(6,3) = 20 splits, either way. */
    ck_assert_double_eq_tol(spread_mann_whitney_p(a3, 3, b3, 3), 0.1, 1e-12);
    ck_assert_double_eq_tol(spread_mann_whitney_p(b3, 3, a3, 3), 0.1, 1e-12);
    /* 2 of C(8,4) = 70. */
    ck_assert_double_eq_tol(spread_mann_whitney_p(a4, 4, b4, 4), 2.0 / 70, 1e-12);
    /* Interleaved: U = 3 of mean 4.5; 14 of the 20 splits are as far. */
    ck_assert_double_eq_tol(spread_mann_whitney_p(c3, 3, d3, 3), 0.7, 1e-12);
    /* Ties take mid ranks: rank sums 4.5 against a mean of 10.5. */
    ck_assert_double_eq_tol(spread_mann_whitney_p(t1, 3, t2, 3), 0.2, 1e-12);
    /* U = 1 of 25: 4 of C(10,5) = 252. */
    ck_assert_double_eq_tol(spread_mann_whitney_p(a5, 5, b5, 5), 4.0 / 252, 1e-12);
    /* One outlier above everything: U = 5, 38 of 252. */
    ck_assert_double_eq_tol(spread_mann_whitney_p(o5, 5, b5, 5), 38.0 / 252, 1e-12);
    ck_assert_double_eq(spread_mann_whitney_p(a5, 5, a5, 5), 1);
    ck_assert_double_eq(spread_mann_whitney_p(a5, 0, b5, 5), 1);
}
END_TEST

START_TEST(verdicts)
{
    double lo[] = {10, 11, 12}, hi[] = {13, 14, 15};
    /* One worker, cache off, in the two runs of the 2026-12-06 matrix and a third between. */
    double run1[] = {17000, 18750, 17500}, run2[] = {18000, 19000, 18200};
    double a5[] = {10, 11, 12, 13, 14.5}, b5[] = {14, 15, 16, 17, 18};
    double o5[] = {10, 11, 12, 13, 20};
    double x[] = {1000}, y[] = {1100};

    ck_assert_int_eq(spread_compare(hi, 3, lo, 3), 1);
    ck_assert_int_eq(spread_compare(lo, 3, hi, 3), -1);
    /* Touching ranges do not separate. */
    hi[0] = 12;
    ck_assert_int_eq(spread_compare(hi, 3, lo, 3), 0);
    ck_assert_int_eq(spread_compare(run2, 3, run1, 3), 0);
    /* Overlapping ranges, but the test separates five against five. */
    ck_assert_int_eq(spread_compare(b5, 5, a5, 5), 1);
    ck_assert_int_eq(spread_compare(a5, 5, b5, 5), -1);
    /* ... and does not when one repeat is above everything. */
    ck_assert_int_eq(spread_compare(o5, 5, b5, 5), 0);
    /* Single values that differ are separate ranges (the caller says one repeat has no spread). */
    ck_assert_int_eq(spread_compare(y, 1, x, 1), 1);
    ck_assert_int_eq(spread_compare(x, 1, x, 1), 0);
    ck_assert_int_eq(spread_compare(x, 0, y, 1), 0);
}
END_TEST

START_TEST(disturbed_levels)
{
    char why[160];

    /* 1 s of 10 busy is 10 %: above 5 %. */
    ck_assert_int_eq(spread_disturbed(1, 10, 0.5, 0, 2, 5, why, sizeof(why)), 1);
    ck_assert_str_eq(why, "other processes used 10 % of the busy CPU (bound 5 %)");
    ck_assert_int_eq(spread_disturbed(0.4, 10, 0.5, 0, 2, 5, why, sizeof(why)), 0);
    ck_assert_str_eq(why, "");
    /* 3.1 before it began, 0.5 of it ours: 2.6 above 2 cores. */
    ck_assert_int_eq(spread_disturbed(0, 10, 3.1, 0.5, 2, 5, why, sizeof(why)), 1);
    ck_assert_str_eq(why, "load average 3.10 before it began, 2.60 of it not ours, above the 2 "
                          "cores");
    /* Our own load from the level before is not a disturbance. */
    ck_assert_int_eq(spread_disturbed(0, 10, 3.1, 1.5, 2, 5, why, sizeof(why)), 0);
    /* Off: never, whatever others did. */
    ck_assert_int_eq(spread_disturbed(9, 10, 30, 0, 2, -1, why, sizeof(why)), 0);
    /* Nothing busy: no share to judge. */
    ck_assert_int_eq(spread_disturbed(0, 0, 0, 0, 2, 5, why, sizeof(why)), 0);
}
END_TEST

/*
 * Our part of the load average, kept the kernel's way, is the load
 * average when nothing else runs: 120 s of a loaded level with 16 of our
 * threads counted, then a 40 s hold with 8.  The kernel averages every
 * 5 s, bench.c every second: the two agree, so an idle machine's next
 * level is not refused.  The hold's mean (8) was the old "ours", and left
 * 2.99 "not ours", above 2 cores: the refusals of an idle run.
 */
START_TEST(own_load_follows_the_kernels_average)
{
    double kernel = 0, ours = 0, exact;
    char why[160];

    for (int t = 0; t < 160; t += 5)
        kernel = acct_load_decay(kernel, t < 120 ? 16 : 8, 5);
    for (int t = 0; t < 160; t++)
        ours = acct_load_decay(ours, t < 120 ? 16 : 8, 1);
    exact = 8 + 16 * (1 - exp(-2.0)) * exp(-40.0 / 60) - 8 * exp(-40.0 / 60);
    ck_assert_double_eq_tol(kernel, exact, 1e-9);
    ck_assert_double_eq_tol(ours, exact, 1e-9);
    ck_assert_int_eq(spread_disturbed(0, 10, kernel, ours, 2, 5, why, sizeof(why)), 0);
    ck_assert_int_eq(spread_disturbed(0, 10, kernel, 8, 2, 5, why, sizeof(why)), 1);
    /* Four threads of others' for a minute on top of ours: 2.53 not ours, refused. */
    ck_assert_int_eq(spread_disturbed(0, 10, acct_load_decay(kernel, 8 + 4, 60),
                                      acct_load_decay(ours, 8, 60), 2, 5, why, sizeof(why)),
                     1);
}
END_TEST

static Suite *
spread_suite(void)
{
    Suite *s = suite_create("spread");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, median_and_range);
    tcase_add_test(tc, mann_whitney_exact);
    tcase_add_test(tc, verdicts);
    tcase_add_test(tc, disturbed_levels);
    tcase_add_test(tc, own_load_follows_the_kernels_average);
    suite_add_tcase(s, tc);
    return s;
}

#include "check_main.h"
CHECK_MAIN(spread_suite)
