/*
 * fuzz_request: a libFuzzer target over what a worker does with a request
 * before any database work: routing, query-string parsing, the JSON body
 * and its field checks, the Authorization header and JWT verification.
 *
 * An input is three parts split at the first two newlines:
 *     METHOD TARGET          (e.g. "GET /api/articles?limit=5&tag=x")
 *     Authorization value    (e.g. "Token eyJ...")
 *     body                   (the rest, as sent)
 * so the fuzzer mutates every part and the seeds in t/fuzz/corpus read as
 * requests.
 *
 * The whole input is also read as raw bytes off a connection, by the
 * framing check (worker/reqhead.c) that runs before evhttp parses any of
 * them, so the seeds include raw requests (smuggling attempts among them).
 *
 * Beyond "no crash, no sanitizer report" it checks the promises the
 * handlers rely on, and aborts when one breaks: a routed parameter is
 * non-empty UTF-8 without NUL; an accepted integer is within its bounds;
 * an accepted string written back with json_out parses back to itself; a
 * slug holds only [a-z0-9-]; a token re-signed with the secret verifies
 * (or is refused for its content, never for its signature); the framing
 * check reaches the same verdict and size whatever the split of the bytes
 * across reads, and a refusal names a fault with a 4xx or 5xx status.
 *
 * Built two ways: with clang -fsanitize=fuzzer for fuzzing (make fuzz),
 * and with the ordinary compiler beside t/fuzz/replay.c, which feeds it
 * every file of the corpus (make check).
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include <cjson/cJSON.h>
#include <event2/buffer.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "common/base64url.h"
#include "worker/json_out.h"
#include "common/jwt.h"
#include "common/slug.h"
#include "worker/utf8.h"
#include "worker/api.h"
#include "worker/auth.h"
#include "worker/reqbody.h"
#include "worker/reqhead.h"
#include "worker/router.h"
#include "worker/routes.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define SECRET "fuzz-secret-of-at-least-thirty-two-bytes!"
#define NOW 1800000000

static void
must(int cond, const char *what)
{
    if (!cond) {
        fprintf(stderr, "fuzz_request: broken promise: %s\n", what);
        abort();
    }
}

static int
method_of(const char *m, size_t n)
{
    static const struct {
        const char *name;
        int bit;
    } names[] = {{"GET", ROUTER_GET},       {"POST", ROUTER_POST}, {"PUT", ROUTER_PUT},
                 {"DELETE", ROUTER_DELETE}, {"HEAD", ROUTER_HEAD}, {"OPTIONS", ROUTER_OPTIONS},
                 {"PATCH", ROUTER_PATCH}};

    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strlen(names[i].name) == n && memcmp(names[i].name, m, n) == 0)
            return names[i].bit;
    return ROUTER_OTHER;
}

/* What http_dispatch does with the target: evhttp's URI parser, the router. */
static void
fuzz_target(const char *line)
{
    const char *sp = strchr(line, ' ');
    struct evhttp_uri *uri;
    struct router_match m;
    const char *path, *query;
    int method;

    if (!sp)
        return;
    method = method_of(line, (size_t)(sp - line));
    uri = evhttp_uri_parse_with_flags(sp + 1, EVHTTP_URI_NONCONFORMANT);
    if (!uri)
        return;
    path = evhttp_uri_get_path(uri);
    switch (router_match(routes, nroutes, method, path && *path ? path : "/", &m)) {
    case ROUTER_MATCH:
        must(m.route != NULL, "a match has a route");
        for (int i = 0; i < m.nparams; i++) {
            must(m.param_len[i] > 0, "a parameter is not empty");
            must(strlen(m.params[i]) == m.param_len[i], "a parameter holds no NUL");
            must(json_utf8_valid(m.params[i], m.param_len[i]), "a parameter is UTF-8");
        }
        break;
    case ROUTER_METHOD_NOT_ALLOWED: {
        char allow[64];
        must(m.allowed != 0, "a 405 names the allowed methods");
        router_allow_header(m.allowed, allow, sizeof(allow));
        must(allow[0] != '\0', "the Allow header is not empty");
        break;
    }
    default:
        break;
    }

    /* http_query(): evhttp decodes the query; the handlers read these. */
    query = evhttp_uri_get_query(uri);
    if (query) {
        struct evkeyvalq q;
        static const char *const filters[] = {"tag", "author", "favorited"};
        const char *v;
        long n;

        TAILQ_INIT(&q);
        if (evhttp_parse_query_str(query, &q) == 0) {
            if ((v = evhttp_find_header(&q, "limit")) && api_parse_int(v, 1, 100, &n) == 0)
                must(n >= 1 && n <= 100, "limit within bounds");
            if ((v = evhttp_find_header(&q, "offset")) && api_parse_int(v, 0, INT32_MAX, &n) == 0)
                must(n >= 0 && n <= INT32_MAX, "offset within bounds");
            for (size_t i = 0; i < 3; i++)
                if ((v = evhttp_find_header(&q, filters[i])))
                    (void)json_utf8_valid(v, strlen(v));
        }
        evhttp_clear_headers(&q);
    }
    evhttp_uri_free(uri);
}

/* The token as sent, then the same header and payload signed for real. */
static void
fuzz_auth(const char *value)
{
    const unsigned char *key = (const unsigned char *)SECRET;
    size_t keylen = sizeof(SECRET) - 1;
    const char *tok = auth_token_of(value);
    const char *dot;
    char signed_tok[JWT_MAX_LEN + 64];
    unsigned char mac[32];
    unsigned int maclen = 0;
    size_t n;
    int64_t sub = 0;
    enum jwt_status st;

    if (!tok)
        return;
    n = strlen(tok);
    st = jwt_verify(key, keylen, tok, n, NOW, &sub);
    if (st == JWT_OK)
        must(sub > 0, "a verified token names a positive user id");
    (void)jwt_status_str(st);

    /* header.payload of the input, with a valid signature appended. */
    dot = memchr(tok, '.', n);
    dot = dot ? memchr(dot + 1, '.', n - (size_t)(dot + 1 - tok)) : NULL;
    n = dot ? (size_t)(dot - tok) : n;
    if (n + 1 + 43 >= sizeof(signed_tok))
        return;
    memcpy(signed_tok, tok, n);
    HMAC(EVP_sha256(), key, (int)keylen, (const unsigned char *)tok, n, mac, &maclen);
    signed_tok[n] = '.';
    n += 1 + b64url_encode(mac, maclen, signed_tok + n + 1);
    sub = 0;
    st = jwt_verify(key, keylen, signed_tok, n, NOW, &sub);
    must(st != JWT_BAD_SIGNATURE, "a correctly signed token is not refused for its signature");
    if (st == JWT_OK)
        must(sub > 0, "a verified token names a positive user id");
}

/* An accepted string, written as JSON and parsed back, is itself. */
static void
round_trip(const char *s)
{
    struct evbuffer *b = evbuffer_new();
    cJSON *back;
    size_t n;
    const char *text;

    json_out_cstr(b, s);
    n = evbuffer_get_length(b);
    text = (const char *)evbuffer_pullup(b, -1);
    back = cJSON_ParseWithLength(text, n);
    must(back && cJSON_IsString(back) && strcmp(back->valuestring, s) == 0,
         "json_out of an accepted string parses back to it");
    cJSON_Delete(back);
    evbuffer_free(b);
}

static void
fuzz_body(const unsigned char *body, size_t n)
{
    static const char *const roots[] = {"user", "article", "comment"};
    static const char *const fields[] = {"username", "email", "password",    "bio",
                                         "image",    "title", "description", "body"};
    char why[96];

    for (size_t r = 0; r < sizeof(roots) / sizeof(roots[0]); r++) {
        cJSON *doc = NULL;
        const cJSON *obj = reqbody_parse(body, n, roots[r], &doc, why, sizeof(why));
        const cJSON *tags, *t;

        if (!obj) {
            must(doc == NULL && why[0] != '\0', "a refused body has a reason and no tree");
            continue;
        }
        for (size_t f = 0; f < sizeof(fields) / sizeof(fields[0]); f++) {
            const char *s;
            int present;
            if (reqbody_check_string(obj, fields[f], REQBODY_NONEMPTY | REQBODY_NULLABLE, &s,
                                     &present, why, sizeof(why)) < 0 ||
                !s)
                continue;
            must(json_utf8_valid(s, strlen(s)), "an accepted string is UTF-8");
            round_trip(s);
            if (strcmp(fields[f], "title") == 0) {
                char slug[SLUG_MAX_LEN + 1];
                size_t len = slug_from_title(s, strlen(s), slug, sizeof(slug));
                must(len <= SLUG_MAX_BASE, "a slug base is bounded");
                for (size_t i = 0; i < len; i++)
                    must((slug[i] >= 'a' && slug[i] <= 'z') || (slug[i] >= '0' && slug[i] <= '9') ||
                             slug[i] == '-',
                         "a slug is [a-z0-9-]");
            }
        }
        tags = cJSON_GetObjectItemCaseSensitive(obj, "tagList");
        if (cJSON_IsArray(tags))
            cJSON_ArrayForEach(t, tags) if (cJSON_IsString(t) &&
                                            json_utf8_valid(t->valuestring, strlen(t->valuestring)))
                round_trip(t->valuestring);
        cJSON_Delete(doc);
    }
}

/* The framing check, on the bytes whole and split at three places. */
static void
fuzz_framing(const uint8_t *data, size_t size)
{
    struct reqhead whole, split;
    size_t cut[3] = {size / 3, size / 2, size - size / 5}, at = 0;

    reqhead_reset(&whole);
    reqhead_feed(&whole, data, size, 16384);
    reqhead_reset(&split);
    for (int i = 0; i < 3; i++) {
        reqhead_feed(&split, data + at, cut[i] - at, 16384);
        at = cut[i];
    }
    reqhead_feed(&split, data + at, size - at, 16384);
    must(whole.state == split.state && whole.fault == split.fault && whole.bytes == split.bytes,
         "the framing check's verdict depends on how the bytes were split");
    must((whole.state == REQHEAD_BAD) == (whole.fault != REQHEAD_FAULT_NONE),
         "a refusal names its fault, and only a refusal");
    must(whole.state != REQHEAD_BAD || reqhead_fault_status(whole.fault) >= 400,
         "a refusal's status is an error");
    must(whole.bytes <= size && (whole.state != REQHEAD_TOO_LARGE || whole.bytes == 16385),
         "the header's size is what was read of it");
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nl1 = memchr(data, '\n', size);
    const uint8_t *nl2 = nl1 ? memchr(nl1 + 1, '\n', size - (size_t)(nl1 + 1 - data)) : NULL;
    char *line, *auth;

    if (size > 1 << 20)
        return 0;
    fuzz_framing(data, size);
    if (!nl1 || !nl2) {
        fuzz_body(data, size);
        return 0;
    }
    /* The first two parts as C strings, as evhttp hands headers over. */
    line = strndup((const char *)data, (size_t)(nl1 - data));
    auth = strndup((const char *)nl1 + 1, (size_t)(nl2 - nl1 - 1));
    if (line && auth) {
        fuzz_target(line);
        fuzz_auth(auth);
    }
    free(line);
    free(auth);
    fuzz_body(nl2 + 1, size - (size_t)(nl2 + 1 - data));
    return 0;
}
