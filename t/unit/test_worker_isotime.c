/*
 * Unit tests for worker/isotime.c.  The fixed instants were computed with
 * Python's datetime (microseconds since 2000-01-01 UTC) and date -u; the
 * sweep compares against gmtime_r(), which does its own calendar arithmetic.
 */
#include "worker/isotime.h"

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *
pg(int64_t usec)
{
    static char out[ISOTIME_LEN + 1];

    memset(out, 'x', sizeof(out));
    isotime_from_pg_usec(usec, out);
    ck_assert_uint_eq(strlen(out), ISOTIME_LEN);
    return out;
}

static const char *
unix_ms(int64_t ms, int want_rc)
{
    static char out[ISOTIME_LEN + 1];

    memset(out, 'x', sizeof(out));
    ck_assert_int_eq(isotime_from_unix_ms(ms, out), want_rc);
    ck_assert_uint_eq(strlen(out), ISOTIME_LEN);
    return out;
}

START_TEST(test_pg_epoch)
{
    ck_assert_str_eq(pg(0), "2000-01-01T00:00:00.000Z");
    ck_assert_str_eq(pg(1), "2000-01-01T00:00:00.000Z");
    ck_assert_str_eq(pg(86400 * INT64_C(1000000)), "2000-01-02T00:00:00.000Z");
}
END_TEST

START_TEST(test_pg_known_dates)
{
    ck_assert_str_eq(pg(INT64_C(762525296789000)), "2024-02-29T12:34:56.789Z");
    ck_assert_str_eq(pg(INT64_C(-960867740000000)), "1969-07-20T20:17:40.000Z");
    /* 1900 is not a leap year: Feb 28 is followed by Mar 1. */
    ck_assert_str_eq(pg(INT64_C(-3150576000001000)), "1900-02-28T23:59:59.999Z");
    ck_assert_str_eq(pg(INT64_C(-3150576000000000)), "1900-03-01T00:00:00.000Z");
    /* 2000 is (divisible by 400); 2100 is not. */
    ck_assert_str_eq(pg(INT64_C(59) * 86400 * 1000000), "2000-02-29T00:00:00.000Z");
    ck_assert_str_eq(pg(INT64_C(3160771200000000)), "2100-02-28T00:00:00.000Z");
    ck_assert_str_eq(pg(INT64_C(3160771200000000) + INT64_C(86400000000)),
                     "2100-03-01T00:00:00.000Z");
    ck_assert_str_eq(pg(INT64_C(-63082281600000000)), "0001-01-01T00:00:00.000Z");
    /* End of a year. */
    ck_assert_str_eq(pg(INT64_C(366) * 86400 * 1000000 - 1), "2000-12-31T23:59:59.999Z");
}
END_TEST

START_TEST(test_pg_negative)
{
    /* Before 2000: truncation goes toward minus infinity, never later. */
    ck_assert_str_eq(pg(-1), "1999-12-31T23:59:59.999Z");
    ck_assert_str_eq(pg(-999), "1999-12-31T23:59:59.999Z");
    ck_assert_str_eq(pg(-1000), "1999-12-31T23:59:59.999Z");
    ck_assert_str_eq(pg(-1001), "1999-12-31T23:59:59.998Z");
    ck_assert_str_eq(pg(-INT64_C(86400000000)), "1999-12-31T00:00:00.000Z");
    ck_assert_str_eq(pg(-INT64_C(86400000000) - 1), "1999-12-30T23:59:59.999Z");
}
END_TEST

START_TEST(test_pg_millisecond_truncation)
{
    ck_assert_str_eq(pg(999), "2000-01-01T00:00:00.000Z");
    ck_assert_str_eq(pg(1000), "2000-01-01T00:00:00.001Z");
    ck_assert_str_eq(pg(1999), "2000-01-01T00:00:00.001Z");
    ck_assert_str_eq(pg(123456), "2000-01-01T00:00:00.123Z");
    ck_assert_str_eq(pg(INT64_C(59999999)), "2000-01-01T00:00:59.999Z");
    ck_assert_str_eq(pg(INT64_C(60000000)), "2000-01-01T00:01:00.000Z");
    ck_assert_str_eq(pg(INT64_C(3600000000) * 13 + 5 * 60000000 + 7 * 1000000 + 89999),
                     "2000-01-01T13:05:07.089Z");
}
END_TEST

START_TEST(test_pg_clamped)
{
    /* PostgreSQL's infinity and -infinity are INT64_MAX and INT64_MIN. */
    ck_assert_str_eq(pg(INT64_MAX), "9999-12-31T23:59:59.999Z");
    ck_assert_str_eq(pg(INT64_MIN), "0000-01-01T00:00:00.000Z");
    /* PostgreSQL's own limit, 294276 AD, and 4713 BC are clamped too. */
    ck_assert_str_eq(pg(INT64_C(9223371331200000000)), "9999-12-31T23:59:59.999Z");
    ck_assert_str_eq(pg(-INT64_C(211813488000000000)), "0000-01-01T00:00:00.000Z");
}
END_TEST

START_TEST(test_unix_ms)
{
    ck_assert_str_eq(unix_ms(0, 0), "1970-01-01T00:00:00.000Z");
    ck_assert_str_eq(unix_ms(-1, 0), "1969-12-31T23:59:59.999Z");
    ck_assert_str_eq(unix_ms(INT64_C(1700000000123), 0), "2023-11-14T22:13:20.123Z");
    ck_assert_str_eq(unix_ms(INT64_C(946684800000), 0), "2000-01-01T00:00:00.000Z");
    /* The 32-bit time_t rollover is nothing special here. */
    ck_assert_str_eq(unix_ms(INT64_C(2147483648000), 0), "2038-01-19T03:14:08.000Z");
}
END_TEST

START_TEST(test_unix_ms_range)
{
    /* The last and first instants printable in four digits are not clamped... */
    ck_assert_str_eq(unix_ms(INT64_C(253402300799999), 0), "9999-12-31T23:59:59.999Z");
    ck_assert_str_eq(unix_ms(INT64_C(-62167219200000), 0), "0000-01-01T00:00:00.000Z");
    /* ...one millisecond beyond is, and says so. */
    ck_assert_str_eq(unix_ms(INT64_C(253402300800000), -1), "9999-12-31T23:59:59.999Z");
    ck_assert_str_eq(unix_ms(INT64_C(-62167219200001), -1), "0000-01-01T00:00:00.000Z");
    ck_assert_str_eq(unix_ms(INT64_MAX, -1), "9999-12-31T23:59:59.999Z");
    ck_assert_str_eq(unix_ms(INT64_MIN, -1), "0000-01-01T00:00:00.000Z");
}
END_TEST

START_TEST(test_against_gmtime)
{
    /*
     * A spread of instants over the whole 0000..9999 range, plus every day
     * around the leap days of 1896..2104, each compared with gmtime_r().
     */
    uint64_t x = 88172645463325252u;
    const int64_t lo = INT64_C(-62167219200000), span = INT64_C(253402300799999) - lo + 1;

    for (int i = 0; i < 200000; i++) {
        int64_t ms;
        char want[64], got[ISOTIME_LEN + 1];
        time_t t;
        struct tm tm;

        x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift64 */
        if (i < 80000)
            ms = lo + (int64_t)(x % (uint64_t)span);
        else
            ms = INT64_C(-2335219200000) + (int64_t)(i - 80000) * 86400000 / 2 +
                 (int64_t)(x % 86400000);
        t = (time_t)(ms >= 0 ? ms / 1000 : -((-ms + 999) / 1000));
        ck_assert_ptr_nonnull(gmtime_r(&t, &tm));
        snprintf(want, sizeof(want), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                 (int)(ms - (int64_t)t * 1000));
        ck_assert_int_eq(isotime_from_unix_ms(ms, got), 0);
        ck_assert_msg(strcmp(got, want) == 0, "%lld ms: %s, gmtime says %s", (long long)ms, got,
                      want);
        /* The PostgreSQL form of the same instant, at microsecond resolution. */
        isotime_from_pg_usec((ms - INT64_C(946684800000)) * 1000 + (int64_t)(x % 1000), got);
        ck_assert_str_eq(got, want);
    }
}
END_TEST

static Suite *
isotime_suite(void)
{
    Suite *s = suite_create("isotime");
    TCase *tc = tcase_create("core");

    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_pg_epoch);
    tcase_add_test(tc, test_pg_known_dates);
    tcase_add_test(tc, test_pg_negative);
    tcase_add_test(tc, test_pg_millisecond_truncation);
    tcase_add_test(tc, test_pg_clamped);
    tcase_add_test(tc, test_unix_ms);
    tcase_add_test(tc, test_unix_ms_range);
    tcase_add_test(tc, test_against_gmtime);
    suite_add_tcase(s, tc);
    return s;
}

#include "t/unit/check_main.h"
CHECK_MAIN(isotime_suite)
