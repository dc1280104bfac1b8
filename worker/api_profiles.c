/*
 * api_profiles: GET /api/profiles/:username, and follow / unfollow.
 */
#include "config.h"

#include <event2/buffer.h>

#include "worker/api.h"
#include "worker/auth.h"
#include "worker/http.h"
#include "worker/worker.h"

/* {"profile":{...}} from a profile row, or 404 when there is none. */
static void
reply_profile(struct http_ctx *c, const PGresult *res)
{
    struct evbuffer *b;

    if (PQntuples(res) == 0) {
        http_error(c, 404, "profile not found");
        return;
    }
    b = worker_scratch(c->w);
    evbuffer_add(b, "{\"profile\":", 11);
    api_profile_object(b, res, 0, 0);
    evbuffer_add(b, "}", 1);
    http_reply(c, 200, b);
}

static void
on_profile(void *arg, enum db_status st, const PGresult *res)
{
    struct http_ctx *c = arg;

    if (api_db_failed(c, st, res))
        return;
    reply_profile(c, res);
}

/* follow / unfollow: column 4 says the target is the caller. */
static void
on_follow(void *arg, enum db_status st, const PGresult *res)
{
    struct http_ctx *c = arg;

    if (api_fk_gone(c, st, res) || api_db_failed(c, st, res))
        return;
    if (PQntuples(res) == 1 && db_bool(res, 0, 4)) {
        http_error(c, 422, "username: you cannot follow yourself");
        return;
    }
    reply_profile(c, res);
}

static void
send_profile_query(struct http_ctx *c, enum sql_query_id q, enum auth_need need, db_cb cb)
{
    char viewer[24];
    const char *params[2];

    if (auth_caller(c, need) < 0)
        return;
    params[0] = http_param(c, 0, NULL);
    params[1] = c->user_id ? api_itoa(c->user_id, viewer) : NULL;
    api_query(c, q, params, cb);
}

void
api_profile_get(struct http_ctx *c)
{
    send_profile_query(c, SQL_PROFILE_GET, AUTH_OPTIONAL, on_profile);
}

void
api_profile_follow(struct http_ctx *c)
{
    send_profile_query(c, SQL_FOLLOW, AUTH_REQUIRED, on_follow);
}

void
api_profile_unfollow(struct http_ctx *c)
{
    send_profile_query(c, SQL_UNFOLLOW, AUTH_REQUIRED, on_follow);
}
