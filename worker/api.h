/*
 * api: the Conduit endpoints (api_*.c, one file per resource) and what
 * they share: writing the JSON objects of the spec from result rows in the
 * column orders sql/queries.sql fixes, reading list parameters, and the
 * answer to a query that failed.
 *
 * Every handler follows one shape: check its input (answering 422
 * itself; the token was checked by api_gate), send one query with api_query(), and in the callback
 * write the response into c->env->scratch and call http_reply() exactly once.  A callback first
 * checks st with api_db_failed(), which answers 503 for an unavailable database, 502 for a write
 * whose outcome is unknown, and a logged 500 for anything else not handled by the caller.
 */
#ifndef CONDUITD_API_H
#define CONDUITD_API_H

#include <stddef.h>
#include <stdint.h>

#include <libpq-fe.h>

#include "worker/auth.h"
#include "worker/db.h"
#include "worker/http.h"

struct cache;
struct cache_fill;
struct cache_fill_waiter;
struct cache_stale;
struct evbuffer;
struct idem;

/*
 * The API's part of a request, beside the request layer's struct
 * http_ctx (http_ext(): one allocation, zeroed at dispatch).
 */
struct api_req {
    int64_t user_id;         /* the caller (api_gate); 0 = anonymous */
    int64_t db_sent_us;      /* when the query in flight was sent; see api_query */
    db_cb db_cb;             /* the handler's callback of that query */
    int db_q;                /* that query (enum sql_query_id) */
    int retried;             /* its statement was sent once more (a deadlock) */
    uint64_t cache_epoch;    /* cache_epoch() when its filling query was sent */
    int cache_fill;          /* its answer will be cached: read it on the primary */
    struct cache_fill *fill; /* the key its statement fills for other requests (cache_fill.h) */
    struct idem *idem;       /* its Idempotency-Key (worker/idem.h), in state; NULL: none */
};

static inline struct api_req *
api_req(const struct http_ctx *c)
{
    return http_ext(c);
}

/* Endpoint handlers, one per route (see routes.c). */
void api_users_register(struct http_ctx *c);
void api_users_login(struct http_ctx *c);
void api_user_get(struct http_ctx *c);
void api_user_update(struct http_ctx *c);
void api_profile_get(struct http_ctx *c);
void api_profile_follow(struct http_ctx *c);
void api_profile_unfollow(struct http_ctx *c);
void api_articles_list(struct http_ctx *c);
void api_articles_feed(struct http_ctx *c);
void api_article_get(struct http_ctx *c);
void api_article_create(struct http_ctx *c);
void api_article_update(struct http_ctx *c);
void api_article_delete(struct http_ctx *c);
void api_article_favorite(struct http_ctx *c);
void api_article_unfavorite(struct http_ctx *c);
void api_comments_list(struct http_ctx *c);
void api_comment_create(struct http_ctx *c);
void api_comment_delete(struct http_ctx *c);
void api_tags_list(struct http_ctx *c);

/*
 * The answer to a write whose connection broke after it was sent: it may
 * have committed, so it says so, and carries no Retry-After (docs/api.md,
 * "Unknown outcome").
 */
#define API_OUTCOME_UNKNOWN                                                                        \
    "outcome unknown: the database connection broke while the write ran, and it may have "         \
    "been stored; read before repeating it, or repeat it with the same Idempotency-Key"

/*
 * For a callback: answers a failed query (st != DB_OK) and returns 1, or
 * returns 0 when st is DB_OK.  503 with Retry-After for DB_UNAVAILABLE and
 * DB_TIMED_OUT (a callback never sees DB_ABANDONED: api_query ends those);
 * DB_UNKNOWN: 502 with API_OUTCOME_UNKNOWN for a statement that writes,
 * 503 with Retry-After for a read-only one (nothing to lose by asking
 * again); otherwise a 500 with the SQLSTATE logged (callers that expect an
 * error, such as 23505, test for it before calling this).
 */
int api_db_failed(struct http_ctx *c, enum db_status st, const PGresult *res);

/*
 * For a write's callback: 23503 (a foreign key's row is gone) answered and
 * 1 returned, else 0.  The caller's own user row gone (a valid token of a
 * deleted user): 401; the article or user written about: 404.
 */
int api_fk_gone(struct http_ctx *c, enum db_status st, const PGresult *res);

/*
 * For the callback of a route that takes a token: the result's caller_gone
 * column (sql/queries.sql, "The caller gone") says the token's user no
 * longer exists.  Answers 401 and returns 1 then, else 0 (also when the
 * query has no such column or no row).
 */
int api_caller_gone(struct http_ctx *c, const PGresult *res);

/* The 401 for a valid token whose user row is gone. */
void api_no_caller(struct http_ctx *c);

/*
 * The wanted function (db.h, bcrypt_pool.h) of a request's queries and
 * hashes, arg its ctx: is its client still waiting?
 */
int api_still_wanted(void *arg);

/*
 * A shed hash's Retry-After is drawn from 1 to this many seconds: the
 * logins refused in one burst come back spread over them, at a fifth of
 * the rate, instead of all in the next second.
 */
#define API_HASH_RETRY_MAX_S 5

/*
 * For a hash's callback: a hash that was not run (BCRYPT_SHED: the server
 * is overloaded) is answered 503 with a spread Retry-After, or not at all
 * to a client gone, and 1 returned; else 0.
 */
int api_hash_shed(struct http_ctx *c, int ok);

/* Sends the query with the ctx as the callback argument. */
void api_query(struct http_ctx *c, enum sql_query_id q, const char *const *params, db_cb cb);

/*
 * A read sent without the flags' viewer (sql/queries.sql) whose caller's
 * sets went stale before its answer: sent again, params now carrying the
 * viewer, to cb; counted (conduitd_cache_flag_resends_total).  The first
 * answer filled the cache already: this one does not.
 */
void api_flags_resend(struct http_ctx *c, enum sql_query_id q, const char *const *params, db_cb cb);

/*
 * Before a query whose answer will be given to cache_put(): takes the
 * cache's epoch, and sends the query to the primary even with standbys
 * (worker/cache.h says why a standby's answer could outlive an
 * invalidation there).
 */
void api_cache_fill(struct http_ctx *c, const struct cache *k);

/*
 * A miss of key, about to be filled by a statement (worker/cache_fill.h):
 * 0 when this request is to send it (other requests that miss key
 * meanwhile wait for its answer), 1 when it waits for another request's
 * (resume(c) runs once that answer is in; do nothing more now).  w and
 * *waited (the waits so far) live in the request's state; a request waits
 * at most CACHE_FILL_WAITS times.
 */
int api_cache_wait(struct http_ctx *c, const char *key, struct cache_fill_waiter *w, int *waited,
                   void (*resume)(void *c));

/*
 * Before waiting for another request's fill of key (api_cache_wait()):
 * may this request be answered stale instead (docs/caching.md, "Stale
 * answers")?  1, with *s made for cache_get_stale(), when stale answers
 * are on, a fill of key is in flight and the database's queue is backed
 * up; s then also knows the caller's last write, so that the caller is
 * never given a value read before it.  0: look up fresh values only.
 */
int api_cache_stale(struct http_ctx *c, const char *key, struct cache_stale *s);

/*
 * 200 with b, an answer from the cache; made with s (NULL: fresh values
 * only), counted as a stale answer when it took a stale value.
 */
void api_cache_reply(struct http_ctx *c, const struct cache_stale *s, struct evbuffer *b);

/*
 * A write by user (a registration, whose caller was anonymous) was
 * answered: noted in the instance's table of recent writers
 * (common/lastwrite.h), so that the caller's next reads wait for it on
 * the standbys (worker/replica.h) and are never answered stale from the
 * cache.
 */
void api_wrote(struct http_ctx *c, int64_t user);

/*
 * The routes whose statement takes the path's first parameter (a slug, a
 * username) and the viewer (c->user_id, set by api_gate): sends q with
 * those two.
 */
void api_param_query(struct http_ctx *c, enum sql_query_id q, db_cb cb);

/*
 * http_gate of the API (worker/http.h): the caller's token, as the
 * matched route's auth column says (worker/routes.c, worker/auth.h).
 * Sets c->user_id; -1 when it answered 401.  One door for every route:
 * a handler never checks a token itself.
 */
int api_gate(struct http_ctx *c);

/* The caller as a statement's viewer parameter, written into buf: NULL when anonymous. */
const char *api_viewer(const struct http_ctx *c, char buf[24]);

/*
 * A handler's state of size bytes, zeroed, owned by the request from here
 * on (freed with free_fn when it ends).  NULL after answering 503.
 */
void *api_state_new(struct http_ctx *c, size_t size, void (*free_fn)(void *));

/* Text column as a JSON string, or null when NULL. */
void api_text_or_null(struct evbuffer *b, const PGresult *r, int row, int col);
/* timestamptz column as "2026-12-02T10:13:44.123Z". */
void api_timestamp(struct evbuffer *b, const PGresult *r, int row, int col);

/* {"username":..,"bio":..,"image":..,"following":..} from four columns. */
void api_profile_object(struct evbuffer *b, const PGresult *r, int row, int col);
/* The same up to and with "following": (the cache keeps this part). */
void api_profile_head(struct evbuffer *b, const PGresult *r, int row, int col);

/*
 * An article object (columns 0..11, and 12 body when with_body).  Its
 * favorited and author's following come from the row, or from flags when
 * given ({favorited, following}: the statement was sent without the
 * flags' viewer, sql/queries.sql, and the caller looked them up).
 */
void api_article_object(struct evbuffer *b, const PGresult *r, int row, int with_body,
                        const int *flags);

/* The ids a list's or article_get's row ends with (sql/queries.sql). */
#define API_COL_ARTICLE_ID 14
#define API_COL_AUTHOR_ID 15

/*
 * The same in the parts the cache keeps apart (worker/cache_articles.c),
 * in this order: the head ({"slug" to "description"), ,"body": and the
 * body when wanted, the tail ("tagList" to "updatedAt"), the flags (up to
 * "author":), the author's api_profile_head(), "following", "}}".
 */
void api_article_head(struct evbuffer *b, const PGresult *r, int row);
void api_article_tail(struct evbuffer *b, const PGresult *r, int row);
void api_article_flags(struct evbuffer *b, int favorited, int64_t favorites_count);

/* A comment object (columns 0..7); following from the row, or the given one (0 or 1) when >= 0. */
void api_comment_object(struct evbuffer *b, const PGresult *r, int row, int following);

/* comments_list's comment author id. */
#define API_COL_COMMENT_AUTHOR_ID 9

/*
 * Reads an integer query argument in [min, max] into *out (def when
 * absent).  -1 after a 422 naming the argument.
 */
int api_query_int(struct http_ctx *c, const char *name, long def, long min, long max, long *out);

/* The parsing part of it, pure: -1 unless s is a whole decimal in [min, max]. */
int api_parse_int(const char *s, long min, long max, long *out);

/* Formats v as decimal into buf (24 bytes); returns buf. */
const char *api_itoa(int64_t v, char buf[24]);

#endif
