/*
 * Unit tests for common/isotime.c: PostgreSQL's binary timestamptz
 * (microseconds since 2000-01-01 UTC) to the API's ISO 8601 form.
 */
#include "common/isotime.h"

#include <check.h>
#include <stdint.h>

#define DAY_US (86400LL * 1000000)

static char out[ISOTIME_LEN + 1];

START_TEST(test_epoch)
{
    isotime_from_pg_usec(0, out);
    ck_assert_str_eq(out, "2000-01-01T00:00:00.000Z");
}
END_TEST

START_TEST(test_known)
{
    /* 2026-12-02T10:13:44.123456Z: 9832 days after 2000-01-01. */
    int64_t us = 9832 * DAY_US + (10 * 3600 + 13 * 60 + 44) * 1000000LL + 123456;

    isotime_from_pg_usec(us, out);
    ck_assert_str_eq(out, "2026-12-02T10:13:44.123Z");
}
END_TEST

START_TEST(test_leap_day)
{
    /* 2000 is a leap year: day 59 is February 29. */
    isotime_from_pg_usec(59 * DAY_US, out);
    ck_assert_str_eq(out, "2000-02-29T00:00:00.000Z");
    /* 2024-02-29: 8825 days after 2000-01-01. */
    isotime_from_pg_usec(8825 * DAY_US + 999999, out);
    ck_assert_str_eq(out, "2024-02-29T00:00:00.999Z");
}
END_TEST

START_TEST(test_before_2000)
{
    isotime_from_pg_usec(-1, out);
    ck_assert_str_eq(out, "1999-12-31T23:59:59.999Z");
    isotime_from_pg_usec(-DAY_US * 365, out);
    ck_assert_str_eq(out, "1999-01-01T00:00:00.000Z");
}
END_TEST

START_TEST(test_unix_ms)
{
    ck_assert_int_eq(isotime_from_unix_ms(0, out), 0);
    ck_assert_str_eq(out, "1970-01-01T00:00:00.000Z");
    isotime_from_unix_ms(1700000000123LL, out);
    ck_assert_str_eq(out, "2023-11-14T22:13:20.123Z");
}
END_TEST

START_TEST(test_clamped)
{
    isotime_from_pg_usec(INT64_MAX, out);
    ck_assert_str_eq(out, "9999-12-31T23:59:59.999Z");
    isotime_from_pg_usec(INT64_MIN, out);
    ck_assert_str_eq(out, "0000-01-01T00:00:00.000Z");
}
END_TEST

static Suite *
isotime_suite(void)
{
    Suite *s = suite_create("isotime");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, test_epoch);
    tcase_add_test(tc, test_known);
    tcase_add_test(tc, test_leap_day);
    tcase_add_test(tc, test_before_2000);
    tcase_add_test(tc, test_unix_ms);
    tcase_add_test(tc, test_clamped);
    suite_add_tcase(s, tc);
    return s;
}

#include "check_main.h"
CHECK_MAIN(isotime_suite)
