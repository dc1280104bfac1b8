/*
 * Unit tests for worker/router.c: matching, parameters, percent-decoding,
 * 404 against 405, and what must never match.
 */
#include "worker/router.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void h_list(void) {}
static void h_feed(void) {}
static void h_get(void) {}
static void h_put(void) {}
static void h_comments(void) {}
static void h_comment_delete(void) {}
static void h_create(void) {}

static const struct route table[] = {
    {ROUTER_GET, "/api/articles", h_list, 0},
    {ROUTER_POST, "/api/articles", h_create, 0},
    {ROUTER_GET, "/api/articles/feed", h_feed, 0},
    {ROUTER_GET, "/api/articles/:slug", h_get, 0},
    {ROUTER_PUT, "/api/articles/:slug", h_put, 0},
    {ROUTER_GET, "/api/articles/:slug/comments", h_comments, 0},
    {ROUTER_DELETE, "/api/articles/:slug/comments/:id", h_comment_delete, 0},
};
#define N (sizeof(table) / sizeof(table[0]))

static struct router_match m;

START_TEST(test_literal)
{
    ck_assert_int_eq(router_match(table, N, ROUTER_GET, "/api/articles", &m), ROUTER_MATCH);
    ck_assert_ptr_eq(m.route->handler, h_list);
    ck_assert_int_eq(m.nparams, 0);
    ck_assert_int_eq(router_match(table, N, ROUTER_POST, "/api/articles", &m), ROUTER_MATCH);
    ck_assert_ptr_eq(m.route->handler, h_create);
}
END_TEST

START_TEST(test_literal_before_param)
{
    ck_assert_int_eq(router_match(table, N, ROUTER_GET, "/api/articles/feed", &m), ROUTER_MATCH);
    ck_assert_ptr_eq(m.route->handler, h_feed);
}
END_TEST

START_TEST(test_params)
{
    ck_assert_int_eq(router_match(table, N, ROUTER_DELETE, "/api/articles/how-to/comments/42", &m),
                     ROUTER_MATCH);
    ck_assert_ptr_eq(m.route->handler, h_comment_delete);
    ck_assert_int_eq(m.nparams, 2);
    ck_assert_str_eq(m.params[0], "how-to");
    ck_assert_uint_eq(m.param_len[0], 6);
    ck_assert_str_eq(m.params[1], "42");
}
END_TEST

START_TEST(test_percent_decoding)
{
    /* %2F decodes to "/" inside the parameter: it cannot reach another route. */
    ck_assert_int_eq(router_match(table, N, ROUTER_GET, "/api/articles/a%2Fcomments", &m),
                     ROUTER_MATCH);
    ck_assert_ptr_eq(m.route->handler, h_get);
    ck_assert_str_eq(m.params[0], "a/comments");
    ck_assert_int_eq(router_match(table, N, ROUTER_GET, "/api/articles/caf%C3%A9", &m),
                     ROUTER_MATCH);
    ck_assert_str_eq(m.params[0], "caf\xc3\xa9");
    ck_assert_int_eq(router_match(table, N, ROUTER_GET, "/api/articles/%2e%2e", &m), ROUTER_MATCH);
    ck_assert_str_eq(m.params[0], "..");
}
END_TEST

START_TEST(test_bad_params)
{
    /* A NUL byte, invalid UTF-8 or a broken escape names nothing that can exist. */
    ck_assert_int_eq(router_match(table, N, ROUTER_GET, "/api/articles/a%00b", &m),
                     ROUTER_NOT_FOUND);
    ck_assert_int_eq(router_match(table, N, ROUTER_GET, "/api/articles/%ff%fe", &m),
                     ROUTER_NOT_FOUND);
    ck_assert_int_eq(router_match(table, N, ROUTER_GET, "/api/articles/abc%4", &m),
                     ROUTER_NOT_FOUND);
    ck_assert_int_eq(router_match(table, N, ROUTER_GET, "/api/articles/abc%zz", &m),
                     ROUTER_NOT_FOUND);
    ck_assert_ptr_null(m.route);
}
END_TEST

START_TEST(test_not_found)
{
    ck_assert_int_eq(router_match(table, N, ROUTER_GET, "/", &m), ROUTER_NOT_FOUND);
    ck_assert_int_eq(router_match(table, N, ROUTER_GET, "", &m), ROUTER_NOT_FOUND);
    ck_assert_int_eq(router_match(table, N, ROUTER_GET, "/api", &m), ROUTER_NOT_FOUND);
    ck_assert_int_eq(router_match(table, N, ROUTER_GET, "/api/articlesx", &m), ROUTER_NOT_FOUND);
    ck_assert_int_eq(router_match(table, N, ROUTER_GET, "/api/articles/a/b/c/d/e", &m),
                     ROUTER_NOT_FOUND);
    ck_assert_int_eq(router_match(table, N, ROUTER_GET, "/api//articles", &m), ROUTER_NOT_FOUND);
    ck_assert_int_eq(router_match(table, N, ROUTER_GET, "api/articles", &m), ROUTER_NOT_FOUND);
}
END_TEST

START_TEST(test_trailing_slash)
{
    ck_assert_int_eq(router_match(table, N, ROUTER_GET, "/api/articles/", &m), ROUTER_MATCH);
    ck_assert_ptr_eq(m.route->handler, h_list);
    ck_assert_int_eq(router_match(table, N, ROUTER_GET, "/api/articles//", &m), ROUTER_NOT_FOUND);
}
END_TEST

START_TEST(test_method_not_allowed)
{
    char allow[64];

    ck_assert_int_eq(router_match(table, N, ROUTER_DELETE, "/api/articles/x", &m),
                     ROUTER_METHOD_NOT_ALLOWED);
    ck_assert_int_eq(m.allowed, ROUTER_GET | ROUTER_PUT);
    router_allow_header(m.allowed, allow, sizeof(allow));
    ck_assert_str_eq(allow, "GET, HEAD, PUT");
    /* HEAD is served wherever GET is. */
    ck_assert_int_eq(router_match(table, N, ROUTER_HEAD, "/api/articles/x", &m), ROUTER_MATCH);
    ck_assert_ptr_eq(m.route->handler, h_get);
}
END_TEST

START_TEST(test_long_path)
{
    char *p = malloc(ROUTER_MAX_PATH + 100);

    memset(p, 'a', ROUTER_MAX_PATH + 99);
    memcpy(p, "/api/articles/", 14);
    p[ROUTER_MAX_PATH + 99] = '\0';
    ck_assert_int_eq(router_match(table, N, ROUTER_GET, p, &m), ROUTER_NOT_FOUND);
    free(p);
}
END_TEST

/*
 * Found by the fuzzer: sixteen segments and a trailing slash wrote one
 * entry past the segment array on the stack.  Seventeen segments are no
 * route, with or without the slash.
 */
START_TEST(test_too_many_segments)
{
    static const char sixteen[] = "/a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p";
    char path[64];

    ck_assert_int_eq(router_match(table, N, ROUTER_GET, sixteen, &m), ROUTER_NOT_FOUND);
    snprintf(path, sizeof(path), "%s/", sixteen);
    ck_assert_int_eq(router_match(table, N, ROUTER_GET, path, &m), ROUTER_NOT_FOUND);
    snprintf(path, sizeof(path), "%s/q/", sixteen);
    ck_assert_int_eq(router_match(table, N, ROUTER_GET, path, &m), ROUTER_NOT_FOUND);
    snprintf(path, sizeof(path), "%s/q", sixteen);
    ck_assert_int_eq(router_match(table, N, ROUTER_GET, path, &m), ROUTER_NOT_FOUND);
}
END_TEST

START_TEST(test_percent_decode)
{
    char s[] = "a%20b%41";

    ck_assert_int_eq(router_percent_decode(s, strlen(s)), 4);
    ck_assert_str_eq(s, "a bA");
    char t[] = "%";
    ck_assert_int_eq(router_percent_decode(t, 1), -1);
    char u[] = "%4";
    ck_assert_int_eq(router_percent_decode(u, 2), -1);
}
END_TEST

static Suite *
router_suite(void)
{
    Suite *s = suite_create("router");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, test_literal);
    tcase_add_test(tc, test_literal_before_param);
    tcase_add_test(tc, test_params);
    tcase_add_test(tc, test_percent_decoding);
    tcase_add_test(tc, test_bad_params);
    tcase_add_test(tc, test_not_found);
    tcase_add_test(tc, test_trailing_slash);
    tcase_add_test(tc, test_method_not_allowed);
    tcase_add_test(tc, test_long_path);
    tcase_add_test(tc, test_percent_decode);
    tcase_add_test(tc, test_too_many_segments);
    suite_add_tcase(s, tc);
    return s;
}

#include "t/unit/check_main.h"
CHECK_MAIN(router_suite)
