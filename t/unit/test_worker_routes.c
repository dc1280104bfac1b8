/*
 * test_worker_routes: the route table's auth column (worker/routes.c),
 * which api_gate() checks once before every handler.  Every route says
 * what it makes of a token; every route that writes requires one, but the
 * two that make a caller (login, registration); and the reads that are a
 * caller's own (the feed, the current user) require one too.
 */
#include "config.h"

#include "worker/routes.h"

#include <check.h>
#include <string.h>

#include "worker/auth.h"

static int
is(const struct route *r, int method, const char *pattern)
{
    return r->method == method && strcmp(r->pattern, pattern) == 0;
}

START_TEST(test_every_route_says)
{
    for (size_t i = 0; i < nroutes; i++)
        ck_assert_msg(routes[i].auth == AUTH_NONE || routes[i].auth == AUTH_OPTIONAL ||
                          routes[i].auth == AUTH_REQUIRED,
                      "%s has no auth column", routes[i].pattern);
}
END_TEST

START_TEST(test_writes_require_a_token)
{
    int writes = 0;

    for (size_t i = 0; i < nroutes; i++) {
        const struct route *r = &routes[i];
        if (r->method == ROUTER_GET)
            continue;
        writes++;
        if (is(r, ROUTER_POST, "/api/users/login") || is(r, ROUTER_POST, "/api/users"))
            ck_assert_int_eq(r->auth, AUTH_NONE);
        else
            ck_assert_msg(r->auth == AUTH_REQUIRED, "%s writes without a token", r->pattern);
    }
    ck_assert_int_eq(writes, 12); /* the API's 12 writing routes, none forgotten */
}
END_TEST

START_TEST(test_reads)
{
    int seen = 0;

    for (size_t i = 0; i < nroutes; i++) {
        const struct route *r = &routes[i];
        if (r->method != ROUTER_GET || strncmp(r->pattern, "/api/", 5) != 0)
            continue;
        seen++;
        if (is(r, ROUTER_GET, "/api/user") || is(r, ROUTER_GET, "/api/articles/feed"))
            ck_assert_int_eq(r->auth, AUTH_REQUIRED);
        else if (is(r, ROUTER_GET, "/api/tags"))
            ck_assert_int_eq(r->auth, AUTH_NONE); /* the same answer for everyone */
        else
            ck_assert_msg(r->auth == AUTH_OPTIONAL, "%s: a read is anonymous or the viewer's",
                          r->pattern);
    }
    ck_assert_int_eq(seen, 7);
}
END_TEST

static Suite *
routes_suite(void)
{
    Suite *s = suite_create("routes");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, test_every_route_says);
    tcase_add_test(tc, test_writes_require_a_token);
    tcase_add_test(tc, test_reads);
    suite_add_tcase(s, tc);
    return s;
}

#include "t/unit/check_main.h"
CHECK_MAIN(routes_suite)
