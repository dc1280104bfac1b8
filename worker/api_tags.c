/*
 * api_tags: GET /api/tags, every tag in use, most used first.
 */
#include "config.h"

#include <stdlib.h>

#include <event2/buffer.h>

#include "worker/api.h"
#include "worker/cache.h"
#include "worker/cache_fill.h"
#include "worker/env.h"
#include "worker/http.h"

static void
on_tags(void *arg, enum db_status st, const PGresult *res)
{
    struct http_ctx *c = arg;
    struct cache *k = c->env->cache;
    struct evbuffer *b;

    if (api_db_failed(c, st, res))
        return;
    b = c->env->scratch;
    evbuffer_add(b, "{\"tags\":[", 9);
    for (int i = 0; i < PQntuples(res); i++) {
        if (i)
            evbuffer_add(b, ",", 1);
        api_text_or_null(b, res, i, 0);
    }
    evbuffer_add(b, "]}", 2);
    if (k)
        cache_put(k, CACHE_KEY_TAGS, evbuffer_pullup(b, -1), evbuffer_get_length(b),
                  api_req(c)->cache_epoch);
    http_reply(c, 200, b);
}

/* A miss, kept while it waits for another request's fill (cache_fill.h). */
struct tags_req {
    struct cache_fill_waiter wait;
    int waited;
};

static void
tags_resume(void *arg)
{
    api_tags_list(arg);
}

/*
 * From the cache (the whole body is kept under "tags"), else from the
 * statement: sent by this request, or by another that it waits for,
 * unless the one before the change may answer meanwhile (stale answers).
 */
void
api_tags_list(struct http_ctx *c)
{
    struct cache *k = c->env->cache;
    struct tags_req *r = c->state;
    struct cache_stale stale, *sp = NULL;
    const void *body = NULL;
    size_t len = 0;

    if (k)
        cache_release(k); /* the copies earlier callbacks took (cache.h) */
    if (k && !(body = cache_get(k, CACHE_KEY_TAGS, &len)) &&
        api_cache_stale(c, CACHE_KEY_TAGS, &stale)) {
        sp = &stale; /* before waiting for another's fill: what that fill replaces */
        body = cache_get_stale(k, CACHE_KEY_TAGS, &len, sp);
    }
    if (body) {
        struct evbuffer *b = c->env->scratch;
        evbuffer_add(b, body, len);
        api_cache_reply(c, sp, b);
        return;
    }
    if (k && !r && !(r = api_state_new(c, sizeof(*r), free)))
        return;
    if (k && api_cache_wait(c, CACHE_KEY_TAGS, &r->wait, &r->waited, tags_resume))
        return;
    if (k)
        api_cache_fill(c, k);
    api_query(c, SQL_TAGS_LIST, NULL, on_tags);
}
