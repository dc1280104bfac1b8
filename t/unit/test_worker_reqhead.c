/*
 * Unit tests for worker/reqhead.c: where a request header ends, and when
 * it is over the limit, however its bytes are split across reads.
 */
#include "worker/reqhead.h"

#include <check.h>
#include <string.h>

/* Feeds s in chunks of `step` bytes; returns the last state. */
static enum reqhead_state
feed(struct reqhead *h, const char *s, size_t step, size_t max)
{
    size_t n = strlen(s);
    enum reqhead_state st = REQHEAD_MORE;

    reqhead_reset(h);
    for (size_t i = 0; i < n; i += step)
        st = reqhead_feed(h, s + i, n - i < step ? n - i : step, max);
    return st;
}

static const char req[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";

START_TEST(test_ends_at_blank_line)
{
    struct reqhead h;

    for (size_t step = 1; step <= sizeof(req); step++) {
        ck_assert_int_eq(feed(&h, req, step, 1024), REQHEAD_DONE);
        ck_assert_uint_eq(h.bytes, strlen(req));
    }
}
END_TEST

START_TEST(test_bare_lf)
{
    struct reqhead h;

    ck_assert_int_eq(feed(&h, "GET / HTTP/1.1\nHost: x\n\n", 1, 1024), REQHEAD_DONE);
    ck_assert_uint_eq(h.bytes, 24);
}
END_TEST

START_TEST(test_body_not_counted)
{
    struct reqhead h;
    const char *s = "POST / HTTP/1.1\r\nContent-Length: 2000\r\n\r\n";
    char big[4096];

    ck_assert_int_eq(feed(&h, s, 7, 100), REQHEAD_DONE);
    memset(big, 'a', sizeof(big));
    ck_assert_int_eq(reqhead_feed(&h, big, sizeof(big), 100), REQHEAD_DONE);
    ck_assert_uint_eq(h.bytes, strlen(s));
}
END_TEST

START_TEST(test_incomplete)
{
    struct reqhead h;

    ck_assert_int_eq(feed(&h, "GET / HTTP/1.1\r\nHost: x\r\n", 3, 1024), REQHEAD_MORE);
    ck_assert_int_eq(feed(&h, "GET / HTTP/1.1\r\nHost: x\r\n\r", 3, 1024), REQHEAD_MORE);
}
END_TEST

START_TEST(test_leading_empty_lines)
{
    struct reqhead h;

    ck_assert_int_eq(feed(&h, "\r\n\r\nGET / HTTP/1.1\r\n", 1, 1024), REQHEAD_MORE);
    ck_assert_int_eq(reqhead_feed(&h, "\r\n", 2, 1024), REQHEAD_DONE);
}
END_TEST

START_TEST(test_limit)
{
    struct reqhead h;
    size_t n = strlen(req);

    /* Exactly max bytes pass; one more does not, whatever the split. */
    for (size_t step = 1; step <= n; step++) {
        ck_assert_int_eq(feed(&h, req, step, n), REQHEAD_DONE);
        ck_assert_int_eq(feed(&h, req, step, n - 1), REQHEAD_TOO_LARGE);
    }
    /* It stays so, and a reset starts over. */
    ck_assert_int_eq(reqhead_feed(&h, "\r\n", 2, 1u << 20), REQHEAD_TOO_LARGE);
    reqhead_reset(&h);
    ck_assert_int_eq(reqhead_feed(&h, req, n, n), REQHEAD_DONE);
}
END_TEST

START_TEST(test_one_long_line)
{
    struct reqhead h;
    char line[20000];

    memset(line, 'x', sizeof(line) - 1);
    line[sizeof(line) - 1] = '\0';
    ck_assert_int_eq(feed(&h, line, 4096, 16384), REQHEAD_TOO_LARGE);
    ck_assert_uint_eq(h.bytes, 16385);
}
END_TEST

static Suite *
reqhead_suite(void)
{
    Suite *s = suite_create("reqhead");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, test_ends_at_blank_line);
    tcase_add_test(tc, test_bare_lf);
    tcase_add_test(tc, test_body_not_counted);
    tcase_add_test(tc, test_incomplete);
    tcase_add_test(tc, test_leading_empty_lines);
    tcase_add_test(tc, test_limit);
    tcase_add_test(tc, test_one_long_line);
    suite_add_tcase(s, tc);
    return s;
}

#include "check_main.h"
CHECK_MAIN(reqhead_suite)
