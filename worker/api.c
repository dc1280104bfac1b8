/*
 * api: what the endpoint files share.  See api.h.
 */
#include "config.h"

#include "worker/api.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "common/clock.h"
#include "worker/isotime.h"
#include "worker/json_out.h"
#include "common/lastwrite.h"
#include "common/log.h"
#include "common/scoreboard.h"
#include "worker/auth.h"
#include "worker/bcrypt_pool.h"
#include "worker/cache.h"
#include "worker/cache_fill.h"
#include "worker/env.h"
#include "worker/http.h"
#include "worker/replica.h"

int
api_db_failed(struct http_ctx *c, enum db_status st, const PGresult *res)
{
    if (st == DB_OK)
        return 0;
    if (st == DB_UNAVAILABLE) {
        http_unavailable(c, "database unavailable, try again shortly");
        return 1;
    }
    if (st == DB_TIMED_OUT) {
        http_unavailable(c, "server busy, try again shortly");
        return 1;
    }
    if (st == DB_UNKNOWN) {
        /* A read changed nothing, so it may be asked again; a write may have committed. */
        if (sql_queries[api_req(c)->db_q].read_only)
            http_unavailable(c, "database unavailable, try again shortly");
        else
            http_error(c, 502, API_OUTCOME_UNKNOWN);
        return 1;
    }
    log_error("query failed: %s %s", db_sqlstate(res),
              res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : "");
    http_error(c, 500, "internal error");
    return 1;
}

/*
 * The foreign keys whose target is the caller: the user the token names
 * (the token stays valid after the user is deleted, until it expires).
 */
static const char *const caller_fkeys[] = {"articles_author_id_fkey", "comments_author_id_fkey",
                                           "favorites_user_id_fkey", "follows_follower_id_fkey"};

int
api_fk_gone(struct http_ctx *c, enum db_status st, const PGresult *res)
{
    const char *constraint;

    if (st != DB_SQL_ERROR || strcmp(db_sqlstate(res), "23503") != 0)
        return 0;
    constraint = PQresultErrorField(res, PG_DIAG_CONSTRAINT_NAME);
    for (size_t i = 0; constraint && i < sizeof(caller_fkeys) / sizeof(caller_fkeys[0]); i++) {
        if (strcmp(constraint, caller_fkeys[i]) == 0) {
            api_no_caller(c);
            return 1;
        }
    }
    /* The article or the user written about went away under the write. */
    http_error(c, 404, "not found");
    return 1;
}

int
api_caller_gone(struct http_ctx *c, const PGresult *res)
{
    int col = PQfnumber(res, "caller_gone");

    if (col < 0 || PQntuples(res) == 0 || !db_bool(res, 0, col))
        return 0;
    api_no_caller(c);
    return 1;
}

void
api_no_caller(struct http_ctx *c)
{
    http_error(c, 401, "token invalid: no such user");
}

/*
 * Every query's result comes through here, to count its wait for the
 * access log, and to note a write before its answer goes out (whatever
 * the outcome: one that broke mid-statement may have committed).
 */
static void
on_query_done(void *arg, enum db_status st, const PGresult *res)
{
    struct http_ctx *c = arg;
    db_cb cb = api_req(c)->db_cb;

    if (api_req(c)->fill) { /* whatever the answer: the requests waiting for it look again */
        cache_fill_done(c->env->fills, api_req(c)->fill);
        api_req(c)->fill = NULL;
    }
    /* Never sent, so nothing ran; a 503 for a client gone would only be counted. */
    if (st == DB_ABANDONED || (st == DB_TIMED_OUT && !http_client_waiting(c))) {
        http_abandon(c);
        return;
    }
    c->db_us += clock_now_us() - api_req(c)->db_sent_us;
    api_req(c)->db_cb = NULL;
    if (!sql_queries[api_req(c)->db_q].read_only)
        api_wrote(c, api_req(c)->user_id);
    cb(c, st, res);
}

int
api_still_wanted(void *arg)
{
    return http_client_waiting(arg);
}

int
api_hash_shed(struct http_ctx *c, int ok)
{
    if (ok != BCRYPT_SHED)
        return 0;
    if (http_client_waiting(c))
        http_unavailable_spread(c, "server busy, try again shortly", API_HASH_RETRY_MAX_S);
    else
        http_abandon(c);
    return 1;
}

/*
 * The one place that picks the server: with db_read set, a read-only
 * statement (sql/queries.sql marks them) goes where worker/replica.c says,
 * unless its answer fills the cache; everything else to the primary.
 */
void
api_query(struct http_ctx *c, enum sql_query_id q, const char *const *params, db_cb cb)
{
    /* One query at a time per request: each handler waits for its result. */
    api_req(c)->db_cb = cb;
    api_req(c)->db_q = (int)q;
    api_req(c)->db_sent_us = clock_now_us();
    if (c->env->replica && sql_queries[q].read_only && !api_req(c)->cache_fill)
        replica_query(c->env->replica, api_req(c)->user_id, q, params, on_query_done, c,
                      api_still_wanted);
    else
        db_query(c->env->db, q, params, on_query_done, c, api_still_wanted);
}

void
api_flags_resend(struct http_ctx *c, enum sql_query_id q, const char *const *params, db_cb cb)
{
    scoreboard_add(&c->env->slot->c.cache_flag_resends, 1);
    api_req(c)->cache_fill = 0;
    api_query(c, q, params, cb);
}

void
api_wrote(struct http_ctx *c, int64_t user)
{
    const struct env *e = c->env;

    if (e->writes)
        lastwrite_note(e->writes, user, clock_now_ns(), e->writes_horizon_ns);
}

void
api_cache_fill(struct http_ctx *c, const struct cache *k)
{
    api_req(c)->cache_epoch = cache_epoch(k);
    api_req(c)->cache_fill = 1;
}

int
api_cache_wait(struct http_ctx *c, const char *key, struct cache_fill_waiter *w, int *waited,
               void (*resume)(void *c))
{
    struct cache_fill *fill;

    /* A cache that is off stores no fill: waiting for one only delays. */
    if (!c->env->fills || !cache_enabled(c->env->cache) || *waited >= CACHE_FILL_WAITS)
        return 0;
    w->resume = resume;
    w->arg = c;
    switch (cache_fill_join(c->env->fills, key, w, &fill)) {
    case 0:
        (*waited)++;
        return 1;
    case 1:
        api_req(c)->fill = fill;
        return 0;
    default:
        return 0; /* no memory to share: fill for itself */
    }
}

int
api_cache_stale(struct http_ctx *c, const char *key, struct cache_stale *s)
{
    const struct env *e = c->env;
    int64_t user = api_req(c)->user_id;

    if (!e->fills || !cache_stale_on(e->cache) || !cache_fill_pending(e->fills, key) ||
        !db_pool_backlogged(e->db))
        return 0;
    /* A route that reads no token (the tag list) still knows its writer. */
    if (!user && c->match.route->auth == AUTH_NONE)
        user = auth_caller_quiet(c);
    s->now_ns = clock_now_ns();
    /*
     * Without the table of writers, or with a token that names nobody
     * valid, the caller is not known not to have written: nothing stale.
     */
    s->writer_ns = !user ? 0 : user > 0 && e->writes ? lastwrite_get(e->writes, user) : INT64_MAX;
    s->taken = 0;
    return 1;
}

void
api_cache_reply(struct http_ctx *c, const struct cache_stale *s, struct evbuffer *b)
{
    if (s && s->taken)
        scoreboard_add(&c->env->slot->c.cache_stale_answers, 1);
    http_reply(c, 200, b);
}

int
api_gate(struct http_ctx *c)
{
    int need = c->match.route->auth;

    if (need == AUTH_NONE)
        return 0;
    return auth_caller(c, need == AUTH_OPTIONAL ? AUTH_OPTIONAL : AUTH_REQUIRED,
                       &api_req(c)->user_id);
}

void
api_param_query(struct http_ctx *c, enum sql_query_id q, db_cb cb)
{
    char viewer[24];
    const char *params[2];

    params[0] = http_param(c, 0, NULL);
    params[1] = api_viewer(c, viewer);
    api_query(c, q, params, cb);
}

const char *
api_viewer(const struct http_ctx *c, char buf[24])
{
    return api_req(c)->user_id ? api_itoa(api_req(c)->user_id, buf) : NULL;
}

void *
api_state_new(struct http_ctx *c, size_t size, void (*free_fn)(void *))
{
    void *p = calloc(1, size);

    if (!p) {
        http_error(c, 503, "out of memory");
        return NULL;
    }
    c->state = p;
    c->state_free = free_fn;
    return p;
}

void
api_text_or_null(struct evbuffer *b, const PGresult *r, int row, int col)
{
    size_t len;
    const char *s = db_text(r, row, col, &len);

    if (s)
        json_out_string(b, s, len);
    else
        evbuffer_add(b, "null", 4);
}

void
api_timestamp(struct evbuffer *b, const PGresult *r, int row, int col)
{
    char t[ISOTIME_LEN + 1];

    isotime_from_pg_usec(db_timestamptz(r, row, col), t);
    evbuffer_add(b, "\"", 1);
    evbuffer_add(b, t, ISOTIME_LEN);
    evbuffer_add(b, "\"", 1);
}

void
api_profile_object(struct evbuffer *b, const PGresult *r, int row, int col)
{
    api_profile_head(b, r, row, col);
    json_out_bool(b, db_bool(r, row, col + 3));
    evbuffer_add(b, "}", 1);
}

void
api_profile_head(struct evbuffer *b, const PGresult *r, int row, int col)
{
    evbuffer_add(b, "{\"username\":", 12);
    api_text_or_null(b, r, row, col);
    evbuffer_add(b, ",\"bio\":", 7);
    api_text_or_null(b, r, row, col + 1);
    evbuffer_add(b, ",\"image\":", 9);
    api_text_or_null(b, r, row, col + 2);
    evbuffer_add(b, ",\"following\":", 13);
}

/* tag_list is the sorted tags joined by 0x1f; "" when there is none. */
static void
tag_list(struct evbuffer *b, const PGresult *r, int row, int col)
{
    size_t len;
    const char *s = db_text(r, row, col, &len);
    size_t start = 0;
    int first = 1;

    evbuffer_add(b, "[", 1);
    for (size_t i = 0; s && i <= len; i++) {
        if (i < len && s[i] != '\x1f')
            continue;
        if (i > start) {
            if (!first)
                evbuffer_add(b, ",", 1);
            json_out_string(b, s + start, i - start);
            first = 0;
        }
        start = i + 1;
    }
    evbuffer_add(b, "]", 1);
}

void
api_article_head(struct evbuffer *b, const PGresult *r, int row)
{
    evbuffer_add(b, "{\"slug\":", 8);
    api_text_or_null(b, r, row, 0);
    evbuffer_add(b, ",\"title\":", 9);
    api_text_or_null(b, r, row, 1);
    evbuffer_add(b, ",\"description\":", 15);
    api_text_or_null(b, r, row, 2);
}

void
api_article_tail(struct evbuffer *b, const PGresult *r, int row)
{
    evbuffer_add(b, ",\"tagList\":", 11);
    tag_list(b, r, row, 3);
    evbuffer_add(b, ",\"createdAt\":", 13);
    api_timestamp(b, r, row, 4);
    evbuffer_add(b, ",\"updatedAt\":", 13);
    api_timestamp(b, r, row, 5);
}

void
api_article_flags(struct evbuffer *b, int favorited, int64_t favorites_count)
{
    evbuffer_add(b, ",\"favorited\":", 13);
    json_out_bool(b, favorited);
    evbuffer_add(b, ",\"favoritesCount\":", 18);
    json_out_int(b, favorites_count);
    evbuffer_add(b, ",\"author\":", 10);
}

void
api_article_object(struct evbuffer *b, const PGresult *r, int row, int with_body, const int *flags)
{
    int favorited = flags ? flags[0] : db_bool(r, row, 6);
    int following = flags ? flags[1] : db_bool(r, row, 11);

    api_article_head(b, r, row);
    if (with_body) {
        evbuffer_add(b, ",\"body\":", 8);
        api_text_or_null(b, r, row, 12);
    }
    api_article_tail(b, r, row);
    api_article_flags(b, favorited, db_int8(r, row, 7));
    api_profile_head(b, r, row, 8);
    json_out_bool(b, following);
    evbuffer_add(b, "}}", 2);
}

void
api_comment_object(struct evbuffer *b, const PGresult *r, int row, int following)
{
    evbuffer_add(b, "{\"id\":", 6);
    json_out_int(b, db_int8(r, row, 0));
    evbuffer_add(b, ",\"createdAt\":", 13);
    api_timestamp(b, r, row, 1);
    evbuffer_add(b, ",\"updatedAt\":", 13);
    api_timestamp(b, r, row, 2);
    evbuffer_add(b, ",\"body\":", 8);
    api_text_or_null(b, r, row, 3);
    evbuffer_add(b, ",\"author\":", 10);
    api_profile_head(b, r, row, 4);
    json_out_bool(b, following >= 0 ? following : db_bool(r, row, 7));
    evbuffer_add(b, "}}", 2);
}

int
api_parse_int(const char *s, long min, long max, long *out)
{
    char *end;
    long v;

    /* Digits only, with an optional minus: strtol would also take " 5" and "+5". */
    if (!((s[0] >= '0' && s[0] <= '9') || (s[0] == '-' && s[1] >= '0' && s[1] <= '9')))
        return -1;
    errno = 0;
    v = strtol(s, &end, 10);
    if (*end != '\0' || errno == ERANGE || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

int
api_query_int(struct http_ctx *c, const char *name, long def, long min, long max, long *out)
{
    const char *s = http_query(c, name);
    char msg[96];

    *out = def;
    if (!s)
        return 0;
    if (api_parse_int(s, min, max, out) < 0) {
        *out = def;
        snprintf(msg, sizeof(msg), "%s must be an integer from %ld to %ld", name, min, max);
        http_error(c, 422, msg);
        return -1;
    }
    return 0;
}

const char *
api_itoa(int64_t v, char buf[24])
{
    snprintf(buf, 24, "%" PRId64, v);
    return buf;
}
