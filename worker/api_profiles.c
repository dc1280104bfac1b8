/*
 * api_profiles: GET /api/profiles/:username, and follow / unfollow.
 *
 * With the cache on (worker/cache.h), a profile is answered from two
 * entries: p:<username> (the user's id, then the profile's JSON up to
 * "following":) and, for a signed-in viewer, f:<viewer> (the sorted ids
 * the viewer follows).  A miss sends one query that fills what was
 * missing: profile_followees when the viewer's followees are not held,
 * profile_get otherwise.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "worker/json_out.h"
#include "worker/api.h"
#include "worker/auth.h"
#include "worker/cache.h"
#include "worker/cache_articles.h"
#include "worker/env.h"
#include "worker/http.h"

/* A viewer following more is not cached: the list would cost more than it saves. */
#define FOLLOWEES_MAX CACHE_SET_MAX
#define FOLLOWEES_MAX_TEXT CACHE_SET_MAX_TEXT

/* {"profile":{...}} from a profile row, or 404 when there is none. */
static void
reply_profile(struct http_ctx *c, const PGresult *res)
{
    struct evbuffer *b;

    if (PQntuples(res) == 0) {
        http_error(c, 404, "profile not found");
        return;
    }
    b = c->env->scratch;
    evbuffer_add(b, "{\"profile\":", 11);
    api_profile_object(b, res, 0, 0);
    evbuffer_add(b, "}", 1);
    http_reply(c, 200, b);
}

/* ---------------------------------------------------------------- cache */

/*
 * Answers from the cache and returns 1, or returns 0 on a miss, with
 * *no_followees set when the viewer's followees were looked up and missing.
 */
static int
reply_cached(struct http_ctx *c, struct cache *k, const char *username, int *no_followees)
{
    char key[CACHE_KEY_MAX];
    const char *p;
    const void *f = NULL;
    size_t plen, flen = 0;
    int64_t id;
    struct evbuffer *b;

    cache_release(k); /* the copies earlier callbacks took (cache.h) */
    if (api_req(c)->user_id) {
        cache_key_id(key, "f:", api_req(c)->user_id);
        if (!(f = cache_get(k, key, &flen))) {
            *no_followees = 1;
            return 0;
        }
    }
    if (cache_key_name(key, "p:", username) < 0 || !(p = cache_get(k, key, &plen)) ||
        plen < sizeof(id))
        return 0;
    memcpy(&id, p, sizeof(id));
    b = c->env->scratch;
    evbuffer_add(b, "{\"profile\":", 11);
    evbuffer_add(b, p + sizeof(id), plen - sizeof(id));
    json_out_bool(b, f && cache_ids_has(f, flen / sizeof(int64_t), id));
    evbuffer_add(b, "}}", 2);
    http_reply(c, 200, b);
    return 1;
}

/* p:<username> from a profile_get / profile_followees row (4 is the id). */
static void
fill_profile(struct http_ctx *c, struct cache *k, const PGresult *res)
{
    struct evbuffer *tmp = evbuffer_new();
    int64_t id = db_int8(res, 0, 4);
    char key[CACHE_KEY_MAX];
    size_t n;

    if (!tmp || cache_key_name(key, "p:", db_text(res, 0, 0, NULL)) < 0) {
        if (tmp)
            evbuffer_free(tmp);
        return;
    }
    evbuffer_add(tmp, &id, sizeof(id));
    api_profile_head(tmp, res, 0, 0);
    n = evbuffer_get_length(tmp);
    cache_put(k, key, evbuffer_pullup(tmp, -1), n, api_req(c)->cache_epoch);
    evbuffer_free(tmp);
}

/* f:<viewer> from profile_followees' column 5 ("1,5,9"; NULL: too many). */
static void
fill_followees(struct http_ctx *c, struct cache *k, const PGresult *res)
{
    const char *s = db_text(res, 0, 5, NULL);
    int64_t ids[FOLLOWEES_MAX];
    int n;
    char key[CACHE_KEY_MAX];

    if (!s || (n = cache_ids_parse(s, ids, FOLLOWEES_MAX)) < 0)
        return;
    cache_key_id(key, "f:", api_req(c)->user_id);
    /* An empty set is a value too: the viewer follows nobody. */
    cache_put_now(k, key, ids, (size_t)n * sizeof(ids[0]), api_req(c)->cache_epoch);
}

/* ---------------------------------------------------------------- handlers */

static void
on_profile(void *arg, enum db_status st, const PGresult *res)
{
    struct http_ctx *c = arg;
    struct cache *k = c->env->cache;

    /* Before any fill: the followees of a viewer who is gone are no value. */
    if (api_db_failed(c, st, res) || api_caller_gone(c, res))
        return;
    if (k && PQntuples(res) == 1) {
        fill_profile(c, k, res);
        if (PQfnumber(res, "followees") >= 0)
            fill_followees(c, k, res);
    }
    reply_profile(c, res);
}

/* follow / unfollow: column 4 says the target is the caller. */
static void
on_follow(void *arg, enum db_status st, const PGresult *res)
{
    struct http_ctx *c = arg;
    struct cache *k = c->env->cache;

    if (api_fk_gone(c, st, res) || api_db_failed(c, st, res) || api_caller_gone(c, res))
        return;
    if (PQntuples(res) == 1 && db_bool(res, 0, 4)) {
        http_error(c, 422, "username: you cannot follow yourself");
        return;
    }
    /* Read your own write here at once; other workers hear it from PostgreSQL. */
    if (k) {
        char key[CACHE_KEY_MAX];
        cache_key_id(key, "f:", api_req(c)->user_id);
        cache_drop(k, key);
    }
    reply_profile(c, res);
}

void
api_profile_get(struct http_ctx *c)
{
    struct cache *k = c->env->cache;
    char viewer[24];
    const char *params[3];
    int no_followees = 0;

    if (!k || !cache_enabled(k)) {
        api_param_query(c, SQL_PROFILE_GET, on_profile);
        return;
    }
    if (reply_cached(c, k, http_param(c, 0, NULL), &no_followees))
        return;
    api_cache_fill(c, k);
    params[0] = http_param(c, 0, NULL);
    params[1] = api_viewer(c, viewer);
    params[2] = FOLLOWEES_MAX_TEXT;
    api_query(c, no_followees ? SQL_PROFILE_FOLLOWEES : SQL_PROFILE_GET, params, on_profile);
}

void
api_profile_follow(struct http_ctx *c)
{
    api_param_query(c, SQL_FOLLOW, on_follow);
}

void
api_profile_unfollow(struct http_ctx *c)
{
    api_param_query(c, SQL_UNFOLLOW, on_follow);
}
