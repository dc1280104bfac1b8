/*
 * Unit tests for the judging of a level (bench/bench.c, bench_judge), and
 * in particular its Little's-law check: the request count of a hold is a
 * random count, so a small honest run must not be failed for the noise of
 * its count, while a generator that really fell behind must still fail.
 */
#include "bench/bench.h"
#include "bench/little.h"

#include <check.h>
#include <math.h>
#include <string.h>

/*
 * A level as bench_window_end leaves it: users thinking think_s between
 * pages of rpp requests, answered in 2 ms, over hold_s; the requests
 * counted are short_pct below what Little's law expects.
 */
static void
level_of(struct level *l, int users, double think_s, int rpp, double hold_s, double short_pct)
{
    struct conn_result ok = {CONN_OK, 200, 0, 2000, NULL, 0};
    double page_s = rpp * 0.002;
    double little = users / (think_s + page_s) * rpp;
    uint64_t reqs = (uint64_t)llround(little * hold_s * (1 - short_pct / 100));

    memset(l, 0, sizeof(*l));
    l->users = users;
    l->hold_s = hold_s;
    l->st = stats_new(1);
    ck_assert_ptr_nonnull(l->st);
    for (uint64_t i = 0; i < reqs; i++)
        stats_request(l->st, 0, &ok);
    for (uint64_t i = 0; i < reqs / (uint64_t)rpp; i++)
        stats_page(l->st, rpp, (int64_t)(page_s * 1e6));
    l->acct.wall_s = hold_s;
    l->rps = (double)reqs / hold_s;
    l->users_mean = users;
    l->think_s = think_s;
    l->page_s = page_s;
    l->req_per_page = rpp;
    l->little_rps = little;
    l->little_dev_pct = (l->rps - little) / little * 100;
}

static int
judged(int users, double think_s, int rpp, double hold_s, double short_pct, char *why, size_t cap)
{
    struct bench b;
    struct level l;
    int pass;

    memset(&b, 0, sizeof(b));
    b.crit = (struct criteria)CRITERIA_DEFAULT;
    level_of(&l, users, think_s, rpp, hold_s, short_pct);
    bench_judge(&b, &l);
    pass = l.pass;
    snprintf(why, cap, "%s", l.why);
    level_free(&l);
    return pass;
}

START_TEST(test_small_honest_run_passes)
{
    char why[256];

    /*
     * 50 users, 7 s think, 60 s hold: about 430 pages, whose count has a
     * standard error of about 5 %: 8.6 % short is within three of them
     * (the run of the issue: 11.7 req/s against 12.8).
     */
    ck_assert_msg(judged(50, 7, 2, 60, 8.6, why, sizeof(why)), "failed: %s", why);
    ck_assert_msg(judged(50, 7, 2, 60, -8.6, why, sizeof(why)), "failed: %s", why);
}
END_TEST

START_TEST(test_generator_behind_fails)
{
    char why[256];

    /* 30 % short with 50 users is six standard errors: not noise. */
    ck_assert(!judged(50, 7, 2, 60, 30, why, sizeof(why)));
    ck_assert_msg(strstr(why, "load not offered") != NULL, "why: %s", why);
    /* 5,000 users: the count is precise, the 5 % floor applies, 8 % fails. */
    ck_assert(!judged(5000, 7, 2, 60, 8, why, sizeof(why)));
    ck_assert_msg(strstr(why, "load not offered") != NULL, "why: %s", why);
    /* And 3 % short of it passes. */
    ck_assert_msg(judged(5000, 7, 2, 60, 3, why, sizeof(why)), "failed: %s", why);
}
END_TEST

START_TEST(test_says_which_tolerance)
{
    struct bench b;
    struct level l;

    memset(&b, 0, sizeof(b));
    b.crit = (struct criteria)CRITERIA_DEFAULT;
    level_of(&l, 50, 7, 2, 60, 0);
    bench_judge(&b, &l);
    ck_assert_int_eq(l.little_statistical, 1);
    ck_assert_double_eq_tol(l.little_tol_pct, 300 / sqrt(50 / 7.004 * 60), 0.01);
    level_free(&l);
    level_of(&l, 5000, 7, 2, 60, 0);
    bench_judge(&b, &l);
    ck_assert_int_eq(l.little_statistical, 0);
    ck_assert_double_eq(l.little_tol_pct, 5);
    level_free(&l);
}
END_TEST

START_TEST(test_tolerance)
{
    int st;

    /* 10,000 pages of one request: 3 %, under the floor. */
    ck_assert_double_eq(little_tolerance(5, 10000, 1, 1, &st), 5);
    ck_assert_int_eq(st, 0);
    /* 100 pages: 30 %. */
    ck_assert_double_eq_tol(little_tolerance(5, 100, 1, 1, &st), 30, 1e-9);
    ck_assert_int_eq(st, 1);
    /* Pages of 1 or 3 requests (mean 2, mean square 5) vary more than pages of 2. */
    ck_assert_double_eq_tol(little_tolerance(5, 100, 2, 5, &st), 30 * sqrt(5) / 2, 1e-9);
    /* Nothing known: the floor. */
    ck_assert_double_eq(little_tolerance(5, 0, 0, 0, &st), 5);
    ck_assert_int_eq(st, 0);
    ck_assert_double_eq_tol(little_expected_rps(50, 6.9, 0.1, 2), 50 / 7.0 * 2, 1e-9);
}
END_TEST

static Suite *
judge_suite(void)
{
    Suite *s = suite_create("bench_judge");
    TCase *tc = tcase_create("little");

    tcase_add_test(tc, test_small_honest_run_passes);
    tcase_add_test(tc, test_generator_behind_fails);
    tcase_add_test(tc, test_says_which_tolerance);
    tcase_add_test(tc, test_tolerance);
    suite_add_tcase(s, tc);
    return s;
}

#include "check_main.h"
CHECK_MAIN(judge_suite)
