/*
 * Unit tests for worker/reqhead.c: where a request header ends, when it is
 * over the limit, and which framing it refuses and why, however its bytes
 * are split across reads.
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

    /* RFC 9112 2.2 lets a recipient take a bare LF; a proxy may not: refused. */
    ck_assert_int_eq(feed(&h, "GET / HTTP/1.1\nHost: x\n\n", 1, 1024), REQHEAD_BAD);
    ck_assert_int_eq(h.fault, REQHEAD_FAULT_LINE_END);
    ck_assert_uint_eq(h.bytes, 15);
}
END_TEST

START_TEST(test_body_not_counted)
{
    struct reqhead h;
    const char *s = "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2000\r\n\r\n";
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

    ck_assert_int_eq(feed(&h, "\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n", 1, 1024), REQHEAD_MORE);
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

/* Every split of s gives the same state and fault as s in one piece. */
static enum reqhead_state
feed_all_ways(struct reqhead *h, const char *s, size_t n)
{
    struct reqhead one;
    enum reqhead_state st;

    reqhead_reset(&one);
    st = reqhead_feed(&one, s, n, 1 << 16);
    for (size_t step = 1; step < n; step++) {
        reqhead_reset(h);
        for (size_t i = 0; i < n; i += step)
            reqhead_feed(h, s + i, n - i < step ? n - i : step, 1 << 16);
        ck_assert_msg(h->state == st && h->fault == one.fault,
                      "%s split every %zu: %d/%d, not %d/%d", s, step, h->state, h->fault, st,
                      one.fault);
    }
    *h = one;
    return st;
}

#define H "Host: x\r\n"

static const struct {
    const char *req;
    size_t len; /* 0: strlen */
    enum reqhead_fault fault;
} refused[] = {
    {"POST / HTTP/1.1\r\n" H "Content-Length: 0\r\nContent-Length: 40\r\n\r\n", 0,
     REQHEAD_FAULT_TWO_LENGTHS},
    {"POST / HTTP/1.1\r\n" H "Content-Length: 2\r\nContent-Length: 2\r\n\r\n", 0,
     REQHEAD_FAULT_TWO_LENGTHS},
    {"POST / HTTP/1.1\r\n" H "content-LENGTH: 2\r\nContent-Length: 2\r\n\r\n", 0,
     REQHEAD_FAULT_TWO_LENGTHS},
    {"POST / HTTP/1.1\r\n" H "Content-Length: +2\r\n\r\n", 0, REQHEAD_FAULT_CONTENT_LENGTH},
    {"POST / HTTP/1.1\r\n" H "Content-Length: -0\r\n\r\n", 0, REQHEAD_FAULT_CONTENT_LENGTH},
    {"POST / HTTP/1.1\r\n" H "Content-Length: 2 2\r\n\r\n", 0, REQHEAD_FAULT_CONTENT_LENGTH},
    {"POST / HTTP/1.1\r\n" H "Content-Length: 2,2\r\n\r\n", 0, REQHEAD_FAULT_CONTENT_LENGTH},
    {"POST / HTTP/1.1\r\n" H "Content-Length: 0x2\r\n\r\n", 0, REQHEAD_FAULT_CONTENT_LENGTH},
    {"POST / HTTP/1.1\r\n" H "Content-Length:\r\n\r\n", 0, REQHEAD_FAULT_CONTENT_LENGTH},
    {"POST / HTTP/1.1\r\n" H "Content-Length: 0000000000000000000000000000000000000000002\r\n\r\n",
     0, REQHEAD_FAULT_CONTENT_LENGTH},
    {"POST / HTTP/1.1\r\n" H "Content-Length : 2\r\n\r\n", 0, REQHEAD_FAULT_FIELD_NAME},
    {"GET / HTTP/1.1\r\n" H "X-A\t: b\r\n\r\n", 0, REQHEAD_FAULT_FIELD_NAME},
    {"GET / HTTP/1.1\r\n" H ": b\r\n\r\n", 0, REQHEAD_FAULT_FIELD_NAME},
    {"GET / HTTP/1.1\r\n" H "X(A): b\r\n\r\n", 0, REQHEAD_FAULT_FIELD_NAME},
    {"GET / HTTP/1.1\r\n" H "X-A b\r\n\r\n", 0, REQHEAD_FAULT_FIELD_NAME},
    {"GET / HTTP/1.1\r\n" H "X\0A: b\r\n\r\n", 35, REQHEAD_FAULT_FIELD_NAME},
    {"GET / HTTP/1.1\r\n" H "X-A: b\0c\r\n\r\n", 37, REQHEAD_FAULT_FIELD_VALUE},
    {"GET / HTTP/1.1\r\n" H "X-A: b\x7f\r\n\r\n", 0, REQHEAD_FAULT_FIELD_VALUE},
    {"GET / HTTP/1.1\r\n" H "X-A: b\x01\r\n\r\n", 0, REQHEAD_FAULT_FIELD_VALUE},
    {"GET / HTTP/1.1\r\n" H "X-A: b\rc\r\n\r\n", 0, REQHEAD_FAULT_LINE_END},
    {"GET / HTTP/1.1\r\n" H "X-A: b\nc\r\n\r\n", 0, REQHEAD_FAULT_LINE_END},
    {"GET / HTTP/1.1\r\n" H "\n", 0, REQHEAD_FAULT_LINE_END},
    {"GET / HTTP/1.1\r\n" H "\r\r\n", 0, REQHEAD_FAULT_LINE_END},
    {"GET / HTTP/1.1\r\r\n" H "\r\n", 0, REQHEAD_FAULT_LINE_END},
    {"\n\nGET / HTTP/1.1\r\n" H "\r\n", 0, REQHEAD_FAULT_LINE_END},
    {"GET / HTTP/1.1\r\n" H "X-A: b\r\n c\r\n\r\n", 0, REQHEAD_FAULT_FOLDED},
    {"GET / HTTP/1.1\r\n" H "X-A: b\r\n\tc\r\n\r\n", 0, REQHEAD_FAULT_FOLDED},
    {"GET / HTTP/1.1\r\n " H "\r\n", 0, REQHEAD_FAULT_FOLDED},
    {"POST / HTTP/1.1\r\n" H "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n", 0,
     REQHEAD_FAULT_LENGTH_AND_CHUNKED},
    {"POST / HTTP/1.1\r\n" H "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", 0,
     REQHEAD_FAULT_LENGTH_AND_CHUNKED},
    {"POST / HTTP/1.1\r\n" H "Transfer-Encoding: gzip, chunked\r\n\r\n", 0, REQHEAD_FAULT_CODING},
    {"POST / HTTP/1.1\r\n" H "Transfer-Encoding:\tchunked\r\n\r\n", 0, REQHEAD_FAULT_CODING},
    {"POST / HTTP/1.1\r\n" H "Transfer-Encoding:  \tchunked\r\n\r\n", 0, REQHEAD_FAULT_CODING},
    {"POST / HTTP/1.1\r\n" H "Transfer-Encoding: ,chunked\r\n\r\n", 0, REQHEAD_FAULT_CODING},
    {"POST / HTTP/1.1\r\n" H "Transfer-Encoding: chunked, gzip\r\n\r\n", 0,
     REQHEAD_FAULT_NOT_CHUNKED},
    {"POST / HTTP/1.1\r\n" H "Transfer-Encoding: identity\r\n\r\n", 0, REQHEAD_FAULT_NOT_CHUNKED},
    {"POST / HTTP/1.1\r\n" H "Transfer-Encoding: xchunked\r\n\r\n", 0, REQHEAD_FAULT_NOT_CHUNKED},
    {"POST / HTTP/1.1\r\n" H "Transfer-Encoding:\r\n\r\n", 0, REQHEAD_FAULT_NOT_CHUNKED},
    {"POST / HTTP/1.1\r\n" H "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", 0,
     REQHEAD_FAULT_NOT_CHUNKED},
    {"POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 0, REQHEAD_FAULT_OLD_CODING},
    {"GET / HTTP/1.1\r\n" H "Content-Length: 1\r\n\r\n", 0, REQHEAD_FAULT_BODY_NOT_READ},
    {"HEAD / HTTP/1.1\r\n" H "Content-Length: 1\r\n\r\n", 0, REQHEAD_FAULT_BODY_NOT_READ},
    {"DELETE / HTTP/1.1\r\n" H "Transfer-Encoding: chunked\r\n\r\n", 0,
     REQHEAD_FAULT_BODY_NOT_READ},
    {"GET / HTTP/1.1\r\n\r\n", 0, REQHEAD_FAULT_HOST},
    {"GET / HTTP/1.1\r\n" H H "\r\n", 0, REQHEAD_FAULT_HOST},
    {"GET / HTTP/1.0\r\n" H H "\r\n", 0, REQHEAD_FAULT_HOST},
    {"GET  / HTTP/1.1\r\n" H "\r\n", 0, REQHEAD_FAULT_REQUEST_LINE},
    {"GET / HTTP/1.1 \r\n" H "\r\n", 0, REQHEAD_FAULT_REQUEST_LINE},
    {"GET\t/ HTTP/1.1\r\n" H "\r\n", 0, REQHEAD_FAULT_REQUEST_LINE},
    {"GET /\r\n\r\n", 0, REQHEAD_FAULT_REQUEST_LINE},
    {"GET / http/1.1\r\n" H "\r\n", 0, REQHEAD_FAULT_REQUEST_LINE},
    {"GET / HTTP/1.10\r\n" H "\r\n", 0, REQHEAD_FAULT_REQUEST_LINE},
    {"GET /a\x01 HTTP/1.1\r\n" H "\r\n", 0, REQHEAD_FAULT_REQUEST_LINE},
    {"G(T / HTTP/1.1\r\n" H "\r\n", 0, REQHEAD_FAULT_REQUEST_LINE},
    {"GET / HTTP/2.0\r\n" H "\r\n", 0, REQHEAD_FAULT_VERSION},
    {"GET / HTTP/0.9\r\n" H "\r\n", 0, REQHEAD_FAULT_VERSION},
    /* chunked bodies */
    {"POST / HTTP/1.1\r\n" H "Transfer-Encoding: chunked\r\n\r\n+0\r\n\r\n", 0,
     REQHEAD_FAULT_CHUNK},
    {"POST / HTTP/1.1\r\n" H "Transfer-Encoding: chunked\r\n\r\n 2\r\nab\r\n0\r\n\r\n", 0,
     REQHEAD_FAULT_CHUNK},
    {"POST / HTTP/1.1\r\n" H "Transfer-Encoding: chunked\r\n\r\n0x2\r\nab\r\n0\r\n\r\n", 0,
     REQHEAD_FAULT_CHUNK},
    {"POST / HTTP/1.1\r\n" H "Transfer-Encoding: chunked\r\n\r\n2;x=y\r\nab\r\n0\r\n\r\n", 0,
     REQHEAD_FAULT_CHUNK},
    {"POST / HTTP/1.1\r\n" H "Transfer-Encoding: chunked\r\n\r\n2\nab\r\n0\r\n\r\n", 0,
     REQHEAD_FAULT_CHUNK},
    {"POST / HTTP/1.1\r\n" H "Transfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n", 0,
     REQHEAD_FAULT_CHUNK},
    {"POST / HTTP/1.1\r\n" H "Transfer-Encoding: chunked\r\n\r\n\r\n", 0, REQHEAD_FAULT_CHUNK},
    {"POST / HTTP/1.1\r\n" H "Transfer-Encoding: chunked\r\n\r\n1000000000000000\r\n", 0,
     REQHEAD_FAULT_CHUNK},
    {"POST / HTTP/1.1\r\n" H "Transfer-Encoding: chunked\r\n\r\n0\r\nX-T : v\r\n\r\n", 0,
     REQHEAD_FAULT_FIELD_NAME},
    {"POST / HTTP/1.1\r\n" H "Transfer-Encoding: chunked\r\n\r\n0\r\n\n", 0,
     REQHEAD_FAULT_LINE_END},
};

START_TEST(test_refused)
{
    struct reqhead h;

    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        const char *r = refused[i].req;
        size_t n = refused[i].len ? refused[i].len : strlen(r);

        ck_assert_msg(feed_all_ways(&h, r, n) == REQHEAD_BAD, "not refused (%zu): %s", i, r);
        ck_assert_msg(h.fault == refused[i].fault, "%s: fault %d (%s), not %d", r, h.fault,
                      reqhead_fault_str(h.fault), refused[i].fault);
    }
}
END_TEST

static const char *const accepted[] = {
    "GET / HTTP/1.1\r\n" H "\r\n",
    "GET / HTTP/1.0\r\n\r\n",
    "\r\n\r\nGET / HTTP/1.1\r\n" H "\r\n",
    "GET /a?b=c%20d HTTP/1.1\r\nhOsT: x\r\nX-A:b\r\nX-B:  \tc d\t \r\nX-C:\r\nX-D: "
    "\xe9t\xe9\r\n\r\n",
    "GET / HTTP/1.1\r\n" H "Content-Length: 0\r\n\r\n",
    "HEAD / HTTP/1.1\r\n" H "Content-Length: 000\r\n\r\n",
    "POST / HTTP/1.1\r\n" H "Content-Length: 002\r\n\r\n",
    "PUT / HTTP/1.1\r\n" H "Content-Length:\t18446744073709551616 \r\n\r\n",
    "!#$%&'*+-.^_`|~09azAZ / HTTP/1.1\r\n!#$%&'*+-.^_`|~09azAZ: v\r\n" H "\r\n",
    "GET / HTTP/1.1\r\n" H "Content-Lengths: 5\r\nContent-Lengt: 5\r\nHost-Name: y\r\n\r\n",
};

START_TEST(test_accepted)
{
    struct reqhead h;

    for (size_t i = 0; i < sizeof(accepted) / sizeof(accepted[0]); i++) {
        const char *r = accepted[i];

        ck_assert_msg(feed_all_ways(&h, r, strlen(r)) == REQHEAD_DONE, "%s: %d (%s)", r, h.state,
                      reqhead_fault_str(h.fault));
        ck_assert_uint_eq(h.bytes, strlen(r));
    }
}
END_TEST

START_TEST(test_chunked)
{
    static const char head[] = "POST / HTTP/1.1\r\n" H "Transfer-Encoding: Chunked\r\n\r\n";
    static const char msg[] = "POST / HTTP/1.1\r\n" H "Transfer-Encoding: Chunked\r\n\r\n"
                              "5\r\nhello\r\n00a\r\n0123456789\r\nF\r\n0123456789abcde\r\n"
                              "0\r\nX-Trailer: t\r\n\r\n";
    struct reqhead h;

    /* Done only at the end of the last chunk's trailer; the header alone is counted. */
    ck_assert_int_eq(feed_all_ways(&h, msg, strlen(msg)), REQHEAD_DONE);
    ck_assert_uint_eq(h.bytes, strlen(head));
    ck_assert_int_eq(feed(&h, msg, 3, 1024), REQHEAD_DONE);
    ck_assert_int_eq(feed(&h, head, 3, 1024), REQHEAD_MORE);
    /* What follows it is not read: the next request is read on its own. */
    reqhead_reset(&h);
    ck_assert_int_eq(reqhead_feed(&h, msg, strlen(msg), 1024), REQHEAD_DONE);
    ck_assert_int_eq(reqhead_feed(&h, "\n\n\0", 3, 1024), REQHEAD_DONE);
    /* Spaces (not tabs) before the coding, any whitespace after it, any case. */
    {
        static const char odd[] =
            "POST / HTTP/1.1\r\n" H "Transfer-Encoding:   cHuNkEd \t\r\n\r\n0\r\n\r\n";
        ck_assert_int_eq(feed_all_ways(&h, odd, strlen(odd)), REQHEAD_DONE);
    }
    /* Without a trailer, and a large chunk read in one go. */
    reqhead_reset(&h);
    ck_assert_int_eq(reqhead_feed(&h, head, strlen(head), 1024), REQHEAD_MORE);
    ck_assert_int_eq(reqhead_feed(&h, "10000\r\n", 7, 1024), REQHEAD_MORE);
    {
        static char big[0x10000];
        memset(big, '\n', sizeof(big));
        ck_assert_int_eq(reqhead_feed(&h, big, sizeof(big), 1024), REQHEAD_MORE);
    }
    ck_assert_int_eq(reqhead_feed(&h, "\r\n0\r\n\r\n", 7, 1024), REQHEAD_DONE);
}
END_TEST

START_TEST(test_fault_strings)
{
    for (int f = REQHEAD_FAULT_NONE + 1; f < REQHEAD_NFAULTS; f++) {
        int st = reqhead_fault_status(f);
        ck_assert_msg(st == 400 || st == 501 || st == 505, "%d", f);
        ck_assert_ptr_nonnull(reqhead_fault_str(f));
        for (int g = 1; g < f; g++)
            ck_assert_str_ne(reqhead_fault_str(f), reqhead_fault_str(g));
    }
    ck_assert_int_eq(reqhead_fault_status(REQHEAD_FAULT_CODING), 501);
    ck_assert_int_eq(reqhead_fault_status(REQHEAD_FAULT_VERSION), 505);
    ck_assert_ptr_nonnull(reqhead_fault_str((enum reqhead_fault)99));
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
    tcase_add_test(tc, test_refused);
    tcase_add_test(tc, test_accepted);
    tcase_add_test(tc, test_chunked);
    tcase_add_test(tc, test_fault_strings);
    suite_add_tcase(s, tc);
    return s;
}

#include "check_main.h"
CHECK_MAIN(reqhead_suite)
