/*
 * api_tags: GET /api/tags, every tag in use, most used first.
 */
#include "config.h"

#include <event2/buffer.h>

#include "worker/api.h"
#include "worker/http.h"
#include "worker/worker.h"

static void
on_tags(void *arg, enum db_status st, const PGresult *res)
{
    struct http_ctx *c = arg;
    struct evbuffer *b;

    if (api_db_failed(c, st, res))
        return;
    b = worker_scratch(c->w);
    evbuffer_add(b, "{\"tags\":[", 9);
    for (int i = 0; i < PQntuples(res); i++) {
        if (i)
            evbuffer_add(b, ",", 1);
        api_text_or_null(b, res, i, 0);
    }
    evbuffer_add(b, "]}", 2);
    http_reply(c, 200, b);
}

void
api_tags_list(struct http_ctx *c)
{
    api_query(c, SQL_TAGS_LIST, NULL, on_tags);
}
