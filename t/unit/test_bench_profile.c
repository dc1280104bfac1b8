/*
 * Unit tests for conduit-bench's profile parser (bench/profile.c), the
 * request writer (bench/req.c) and the response parser (bench/httpc.c).
 * What a user relies on: the shipped default profile is docs/workload.md's
 * mix; a bad profile file is refused with a message that names the file
 * and the place; templates expand to the dataset's names; a response is
 * read right whatever pieces it arrives in.
 */
#include "bench/httpc.h"
#include "bench/profile.h"
#include "bench/req.h"
#include "sql/queries.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char err[512];

static const char *
srcdir(void)
{
    const char *s = getenv("top_srcdir");

    return s ? s : ".";
}

static struct profile *
parse(const char *json)
{
    err[0] = '\0';
    return profile_parse(json, strlen(json), err, sizeof(err));
}

/* A minimal valid profile with one page whose request is given. */
static struct profile *
parse_req(const char *req)
{
    char json[2048];

    snprintf(json, sizeof(json),
             "{\"session_start\": [{\"method\": \"GET\", \"path\": \"/api/tags\"}],"
             " \"pages\": [{\"name\": \"p\", \"weight\": 1, \"requests\": [%s]}]}",
             req);
    return parse(json);
}

START_TEST(test_default_profile)
{
    char path[4096];
    struct profile *p;
    double w = 0, reqs = 0;
    int writes = 0;

    snprintf(path, sizeof(path), "%s/bench/profiles/default.json", srcdir());
    p = profile_load(path, err, sizeof(err));
    ck_assert_msg(p != NULL, "%s", err);
    ck_assert_double_eq_tol(p->think_mean_s, 7, 1e-9);
    ck_assert_double_eq_tol(p->think_cap_s, 30, 1e-9);
    ck_assert_double_eq_tol(p->session_s, 900, 1e-9);
    ck_assert_double_eq_tol(p->timeout_s, 10, 1e-9);
    ck_assert_int_eq(p->start.nreq, 2);
    ck_assert_int_eq(p->start.req[0].capture, CAPTURE_TOKEN);
    for (int i = 0; i < p->npages; i++) {
        w += p->page[i].weight;
        reqs += p->page[i].weight * p->page[i].nreq;
        if (strncmp(p->page[i].name, "write", 5) == 0)
            writes += (int)(p->page[i].weight * 1000 + 0.5);
        /* Every request names the statement the ceiling replays. */
        for (int k = 0; k < p->page[i].nreq; k++)
            ck_assert_int_ge(p->page[i].req[k].sql.query, 0);
    }
    /* docs/workload.md: weights out of 100, about 1.8 requests a page, write 9. */
    ck_assert_double_eq_tol(w, 100, 1e-6);
    ck_assert(reqs / w > 1.6 && reqs / w < 1.9);
    ck_assert_int_eq(writes, 9000);
    /* The expected think time of an exponential capped at 30 s. */
    ck_assert_double_eq_tol(profile_think_mean(p), 6.906, 0.01);
    profile_free(p);
}
END_TEST

START_TEST(test_pick)
{
    struct profile *p = parse("{\"session_start\": [{\"method\": \"GET\", \"path\": \"/a\"}],"
                              " \"pages\": ["
                              "{\"name\": \"a\", \"weight\": 1, \"requests\": "
                              "[{\"method\": \"GET\", \"path\": \"/a\"}]},"
                              "{\"name\": \"b\", \"weight\": 0, \"requests\": "
                              "[{\"method\": \"GET\", \"path\": \"/b\"}]},"
                              "{\"name\": \"c\", \"weight\": 3, \"requests\": "
                              "[{\"method\": \"GET\", \"path\": \"/c\"}]}]}");

    ck_assert_msg(p != NULL, "%s", err);
    ck_assert_int_eq(profile_pick(p, 0.0), 0);
    ck_assert_int_eq(profile_pick(p, 0.2499), 0);
    ck_assert_int_eq(profile_pick(p, 0.25), 2);
    ck_assert_int_eq(profile_pick(p, 0.999999), 2);
    /* Same endpoint name for the same method and path (query ignored). */
    ck_assert_int_eq(p->nendpoints, 3);
    ck_assert_str_eq(p->endpoint[0], "GET /a");
    profile_free(p);
}
END_TEST

START_TEST(test_expand)
{
    struct profile *p =
        parse_req("{\"method\": \"POST\", \"path\": \"/api/articles/{slug}/comments?x={n}\","
                  " \"body\": {\"comment\": {\"body\": \"from {me} {n}\"}}}");
    const struct prof_request *r;
    struct dataset ds;
    struct req_pick pick = {.me = 3, .article = 5, .user = 2, .tag = 1, .offset = 30, .n = 42};
    struct req_vals vals;
    char slug[DATASET_SLUG_MAX], me[DATASET_NAME_MAX], want[512], out[2048];
    int len;

    ck_assert_msg(p != NULL, "%s", err);
    r = &p->page[0].req[0];
    ck_assert_int_eq(dataset_init(&ds, 0.001, 1), 0);
    ck_assert_int_eq(req_values(&vals, &pick, &ds, r->path.vars | r->body.vars), 0);
    dataset_slug(&ds, 5, slug, sizeof(slug));
    dataset_username(&ds, 3, me, sizeof(me));
    memset(out, 'x', sizeof(out)); /* no NUL to be found by luck */
    len = req_http(out, sizeof(out), r, &vals, "127.0.0.1:1", "tok");
    ck_assert_int_gt(len, 0);
    ck_assert_int_eq((int)strlen(out), len);
    snprintf(want, sizeof(want), "POST /api/articles/%s/comments?x=42 HTTP/1.1\r\n", slug);
    ck_assert_msg(strncmp(out, want, strlen(want)) == 0, "got %s", out);
    ck_assert(strstr(out, "\r\nAuthorization: Token tok\r\n") != NULL);
    snprintf(want, sizeof(want), "\r\n\r\n{\"comment\":{\"body\":\"from %s 42\"}}", me);
    ck_assert_msg(strstr(out, want) != NULL, "got %s", out);
    snprintf(want, sizeof(want), "Content-Length: %zu\r\n",
             strlen("{\"comment\":{\"body\":\"from  42\"}}") + strlen(me));
    ck_assert_msg(strstr(out, want) != NULL, "got %s", out);
    /* Too small a buffer is refused, not overrun. */
    ck_assert_int_eq(req_http(out, 40, r, &vals, "127.0.0.1:1", "tok"), -1);
    /* A variable without a value is refused. */
    pick.my_slug = NULL;
    ck_assert_int_eq(req_values(&vals, &pick, &ds, 1u << PV_MY_SLUG), -1);
    profile_free(p);
}
END_TEST

/* Each bad profile, and what its message must name. */
static const struct {
    const char *json, *want;
} bad[] = {
    {"{\"pages\": [}", "line 1, column 12: not valid JSON"},
    {"[]", "the top level must be an object"},
    {"{\"session_start\": [{\"method\": \"GET\", \"path\": \"/a\"}]}", "pages: want a non-empty"},
    {"{\"pages\": [{\"name\": \"p\", \"weight\": 1, \"requests\": [{\"method\": \"GET\", \"path\": "
     "\"/a\"}]}]}",
     "session_start: want a non-empty array"},
    {"{\"think_mean\": \"7 parsecs\", \"pages\": []}", "think_mean: want a duration"},
    {"{\"think_mean\": \"40s\", \"think_cap\": \"30s\", \"session_start\": [{\"method\": \"GET\", "
     "\"path\": \"/a\"}], \"pages\": [{\"name\": \"p\", \"weight\": 1, \"requests\": "
     "[{\"method\": \"GET\", \"path\": \"/a\"}]}]}",
     "think_cap: is below think_mean"},
};

static const struct {
    const char *req, *want;
} bad_req[] = {
    {"{\"method\": \"FETCH\", \"path\": \"/a\"}",
     "pages[0].requests[0].method: must be one of GET, POST, PUT, DELETE"},
    {"{\"method\": \"GET\", \"path\": \"a\"}",
     "pages[0].requests[0].path: must be a string starting"},
    {"{\"method\": \"GET\", \"path\": \"/a b\"}", "must not contain spaces"},
    {"{\"method\": \"GET\", \"path\": \"/a/{nope}\"}",
     "pages[0].requests[0].path: unknown variable {nope}"},
    {"{\"method\": \"GET\", \"path\": \"/a\", \"expect\": 700}", "700 is not an HTTP status"},
    {"{\"method\": \"GET\", \"path\": \"/a\", \"capture\": \"cookie\"}",
     "capture: must be \"token\" or \"slug\""},
    {"{\"method\": \"GET\", \"path\": \"/a\", \"sql\": {\"query\": \"drop_everything\"}}",
     "no statement named \"drop_everything\" in sql/queries.sql"},
    {"{\"method\": \"GET\", \"path\": \"/a\", \"sql\": {\"query\": \"article_get\", \"params\": "
     "[\"x\"]}}",
     "article_get takes 3 parameter(s), 1 given"},
    {"{\"method\": \"GET\", \"path\": \"/api/articles/{my_slug}\"}",
     "uses {my_slug} but has no \"needs\""},
};

START_TEST(test_bad_profiles)
{
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ck_assert_msg(parse(bad[i].json) == NULL, "accepted: %s", bad[i].json);
        ck_assert_msg(strstr(err, bad[i].want) != NULL, "for %s: got '%s', want '%s'", bad[i].json,
                      err, bad[i].want);
    }
    for (size_t i = 0; i < sizeof(bad_req) / sizeof(bad_req[0]); i++) {
        ck_assert_msg(parse_req(bad_req[i].req) == NULL, "accepted: %s", bad_req[i].req);
        ck_assert_msg(strstr(err, bad_req[i].want) != NULL, "for %s: got '%s', want '%s'",
                      bad_req[i].req, err, bad_req[i].want);
    }
}
END_TEST

START_TEST(test_bad_files)
{
    char path[] = "/tmp/test-bench-profile-XXXXXX";
    int fd = mkstemp(path);
    struct profile *p;

    ck_assert(profile_load("/nonexistent/profile.json", err, sizeof(err)) == NULL);
    ck_assert_str_eq(err, "/nonexistent/profile.json: No such file or directory");
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, "{\n  \"pages\": [\n    {,}\n", 23), 23);
    close(fd);
    p = profile_load(path, err, sizeof(err));
    unlink(path); /* before any assertion can end the test */
    ck_assert(p == NULL);
    ck_assert_msg(strstr(err, path) == err, "%s", err);
    /* The line is the one with the mistake; the column is cJSON's guess. */
    ck_assert_msg(strstr(err, ": line 3, column ") != NULL, "%s", err);
    ck_assert_msg(strstr(err, ": not valid JSON") != NULL, "%s", err);
}
END_TEST

START_TEST(test_needs)
{
    struct profile *p =
        parse("{\"session_start\": [{\"method\": \"GET\", \"path\": \"/a\"}], \"pages\": ["
              "{\"name\": \"edit\", \"weight\": 1, \"needs\": \"my_slug\", \"otherwise\": "
              "\"read\", \"requests\": [{\"method\": \"PUT\", \"path\": \"/x/{my_slug}\"}]},"
              "{\"name\": \"read\", \"weight\": 1, \"requests\": [{\"method\": \"GET\", "
              "\"path\": \"/x\"}]}]}");

    ck_assert_msg(p != NULL, "%s", err);
    ck_assert_int_eq(p->page[0].needs_my_slug, 1);
    ck_assert_int_eq(p->page[0].otherwise, 1);
    /* The request-level draw never returns a page that needs my_slug. */
    for (double u = 0; u < 1; u += 0.01)
        ck_assert_str_eq(p->endpoint[profile_pick_request(p, u, 0.5)->endpoint], "GET /x");
    profile_free(p);
    ck_assert(parse("{\"session_start\": [{\"method\": \"GET\", \"path\": \"/a\"}], \"pages\": ["
                    "{\"name\": \"edit\", \"weight\": 1, \"needs\": \"my_slug\", \"otherwise\": "
                    "\"nowhere\", \"requests\": [{\"method\": \"GET\", \"path\": \"/x\"}]}]}") ==
              NULL);
    ck_assert_msg(strstr(err, "\"otherwise\": no page \"nowhere\"") != NULL, "%s", err);
}
END_TEST

static const char response[] = "HTTP/1.1 200 OK\r\n"
                               "Content-Type: application/json; charset=utf-8\r\n"
                               "X-Some-Very-Long-Header-Name-That-Exceeds-The-Line-Buffer: "
                               "and a long value as well, to be cut\r\n"
                               "content-length: 26\r\n"
                               "\r\n"
                               "{\"user\":{\"token\":\"abc.d\"}}";

START_TEST(test_http_any_split)
{
    size_t n = strlen(response);

    /* Fed in two pieces cut at every place, the result is the same. */
    for (size_t cut = 0; cut <= n; cut++) {
        struct httpc p;
        struct httpc_body body = {0};
        const char *why = NULL;
        size_t used;
        char tok[16];
        enum httpc_rc rc;

        httpc_init(&p);
        rc = httpc_feed(&p, response, cut, &used, &body, &why);
        ck_assert_int_eq(used, cut);
        if (cut < n) {
            ck_assert_int_eq(rc, HTTPC_MORE);
            rc = httpc_feed(&p, response + cut, n - cut, &used, &body, &why);
            ck_assert_int_eq(used, n - cut);
        }
        ck_assert_int_eq(rc, HTTPC_DONE);
        ck_assert_int_eq(p.status, 200);
        ck_assert_int_eq(p.close, 0);
        ck_assert_uint_eq(body.len, 26);
        ck_assert_int_eq(httpc_json_string(body.buf, body.len, "token", tok, sizeof(tok)), 0);
        ck_assert_str_eq(tok, "abc.d");
        free(body.buf);
    }
}
END_TEST

static enum httpc_rc
feed_all(const char *s, struct httpc *p, const char **why)
{
    size_t used;

    httpc_init(p);
    return httpc_feed(p, s, strlen(s), &used, NULL, why);
}

START_TEST(test_http_cases)
{
    struct httpc p;
    const char *why = NULL;

    ck_assert_int_eq(feed_all("HTTP/1.1 204 No Content\r\n\r\n", &p, &why), HTTPC_DONE);
    ck_assert_int_eq(p.status, 204);
    ck_assert_int_eq(
        feed_all("HTTP/1.1 503 Busy\r\nConnection: close\r\nContent-Length: 0\r\n\r\n", &p, &why),
        HTTPC_DONE);
    ck_assert_int_eq(p.close, 1);
    ck_assert_int_eq(feed_all("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", &p, &why),
                     HTTPC_DONE);
    ck_assert_int_eq(p.close, 1);
    ck_assert_int_eq(feed_all("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", &p, &why),
                     HTTPC_ERROR);
    ck_assert_str_eq(why, "chunked responses are not supported");
    ck_assert_int_eq(feed_all("HTTP/1.1 200 OK\r\n\r\n", &p, &why), HTTPC_ERROR);
    ck_assert_str_eq(why, "response without Content-Length");
    ck_assert_int_eq(feed_all("SSH-2.0-OpenSSH\r\n", &p, &why), HTTPC_ERROR);
    ck_assert_int_eq(feed_all("HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n", &p, &why),
                     HTTPC_ERROR);
}
END_TEST

static Suite *
profile_suite(void)
{
    Suite *s = suite_create("bench_profile");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, test_default_profile);
    tcase_add_test(tc, test_pick);
    tcase_add_test(tc, test_expand);
    tcase_add_test(tc, test_bad_profiles);
    tcase_add_test(tc, test_bad_files);
    tcase_add_test(tc, test_needs);
    tcase_add_test(tc, test_http_any_split);
    tcase_add_test(tc, test_http_cases);
    suite_add_tcase(s, tc);
    return s;
}

#include "t/unit/check_main.h"
CHECK_MAIN(profile_suite)
