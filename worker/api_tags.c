/*
 * api_tags: GET /api/tags, every tag in use, most used first.
 */
#include "config.h"

#include <event2/buffer.h>

#include "worker/api.h"
#include "worker/cache.h"
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
                  c->cache_epoch);
    http_reply(c, 200, b);
}

/* With the cache on, the whole body is kept under "tags". */
void
api_tags_list(struct http_ctx *c)
{
    struct cache *k = c->env->cache;
    const void *body;
    size_t len;

    if (k && (body = cache_get(k, CACHE_KEY_TAGS, &len))) {
        struct evbuffer *b = c->env->scratch;
        evbuffer_add(b, body, len);
        http_reply(c, 200, b);
        return;
    }
    if (k)
        api_cache_fill(c, k);
    api_query(c, SQL_TAGS_LIST, NULL, on_tags);
}
