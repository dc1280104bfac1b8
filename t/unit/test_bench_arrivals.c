/*
 * Unit tests for bench/arrivals.c, the open loop's schedule: arrival k is
 * due at t0 + k / rps, not one interval later (the defect that added
 * 1 / rps to every latency of `rate`), at any rate.
 */
#include "bench/arrivals.h"

#include <check.h>

static const double rates[] = {0.5, 20, 30, 100, 200, 1500, 333.3, 1e6};

START_TEST(test_first_is_due_at_t0)
{
    for (unsigned i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
        ck_assert_int_eq(arrivals_at(1000, rates[i], 0), 1000);
        ck_assert_uint_eq(arrivals_due(1000, rates[i], 999), 0);
        ck_assert_uint_eq(arrivals_due(1000, rates[i], 1000), 1);
    }
}
END_TEST

START_TEST(test_due_at_its_time)
{
    for (unsigned i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
        double r = rates[i];

        /*
         * Compared by hand, asserted once: every ck_assert marks its
         * point through a pipe to check's parent, and 320,000 of them
         * outlasted check's 4 s timeout on a busy machine.
         */
        for (uint64_t k = 0; k < 20000; k++) {
            int64_t at = arrivals_at(5000000, r, k);
            uint64_t on = arrivals_due(5000000, r, at), before = arrivals_due(5000000, r, at - 1);

            /* Due exactly at its time (with those before it), not before. */
            if (on != k + 1 || before != k)
                ck_abort_msg("rate %g, arrival %llu at %lld: due %llu at it (want %llu), %llu "
                             "just before (want %llu)",
                             r, (unsigned long long)k, (long long)at, (unsigned long long)on,
                             (unsigned long long)(k + 1), (unsigned long long)before,
                             (unsigned long long)k);
        }
    }
}
END_TEST

START_TEST(test_spacing)
{
    /* 100 req/s: one every 10 ms; 30 req/s: 33,333 us apart, never drifting. */
    ck_assert_int_eq(arrivals_at(0, 100, 1), 10000);
    ck_assert_int_eq(arrivals_at(0, 100, 100), 1000000);
    ck_assert_int_eq(arrivals_at(0, 30, 1), 33333);
    ck_assert_int_eq(arrivals_at(0, 30, 30), 1000000);
    ck_assert_int_eq(arrivals_at(0, 30, 3000000), 100000000000LL);
    ck_assert_uint_eq(arrivals_due(0, 30, 1000000), 31);
    ck_assert_uint_eq(arrivals_due(0, 100, 999999), 100);
}
END_TEST

static Suite *
arrivals_suite(void)
{
    Suite *s = suite_create("bench_arrivals");
    TCase *tc = tcase_create("schedule");

    tcase_add_test(tc, test_first_is_due_at_t0);
    tcase_add_test(tc, test_due_at_its_time);
    tcase_add_test(tc, test_spacing);
    suite_add_tcase(s, tc);
    return s;
}

#include "check_main.h"
CHECK_MAIN(arrivals_suite)
