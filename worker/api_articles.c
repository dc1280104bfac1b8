/*
 * api_articles: the article list, the feed, one article, and its writes
 * (create, update, delete, favorite, unfavorite).
 *
 * With the cache on, the reads (the one-filter lists, the feed, one
 * article) are answered from worker/cache_articles.h when it holds all
 * they need, and the writes invalidate what they changed before they
 * answer.  Writes keep their parsed body and their query parameters in c->state:
 * article_insert and article_update may fail in a way sql/queries.sql
 * calls safe to retry once (23505 articles_slug_key, 40P01), and the retry
 * sends the very same parameters again.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "worker/json_out.h"
#include "common/log.h"
#include "common/slug.h"
#include "worker/utf8.h"
#include "worker/api.h"
#include "worker/auth.h"
#include "worker/cache.h"
#include "worker/cache_articles.h"
#include "worker/cache_fill.h"
#include "worker/env.h"
#include "worker/http.h"
#include "worker/idem.h"
#include "worker/reqbody.h"

#define LIMIT_DEFAULT 20
#define LIMIT_MAX 100
/*
 * No article set is anywhere near this, so no real page is refused; the
 * bound keeps limit + offset (the feed adds them) far from int8 overflow.
 */
#define OFFSET_MAX INT32_MAX

/* article_update's columns past the article's: 12 body, 13 is_author. */
#define COL_IS_AUTHOR 13
/* A list's column 12. */
#define COL_ARTICLES_COUNT 12

#define NPARAMS_MAX 8

/* What an article write carries between its query and a retry of it. */
struct art_req {
    cJSON *doc; /* the parsed body; title, description, body point into it */
    char *tags; /* tagList joined by 0x1f; NULL when not given */
    char base[SLUG_MAX_BASE + 1];
    char viewer[24];
    const char *params[NPARAMS_MAX];
    enum sql_query_id q;
    int retried;
    struct idem idem; /* create: its Idempotency-Key */
};

static void
art_req_free(void *p)
{
    struct art_req *a = p;

    cJSON_Delete(a->doc);
    free(a->tags);
    free(a);
}

/*
 * The failures sql/queries.sql calls safe to retry once: the rare slug race
 * of article_insert / article_update and a deadlock between two tag
 * rewrites.  Sends the query again and returns 1 when it did.
 */
static int
retry_once(struct http_ctx *c, enum db_status st, const PGresult *res, db_cb cb)
{
    struct art_req *a = c->state;
    const char *sqlstate, *constraint;

    if (st != DB_SQL_ERROR || a->retried)
        return 0;
    sqlstate = db_sqlstate(res);
    if (strcmp(sqlstate, "23505") == 0) {
        constraint = PQresultErrorField(res, PG_DIAG_CONSTRAINT_NAME);
        if (!constraint || strcmp(constraint, "articles_slug_key") != 0)
            return 0;
    } else if (strcmp(sqlstate, "40P01") != 0) {
        return 0;
    }
    if (http_gone(c)) {
        http_error(c, 499, "client gone"); /* only frees: nobody to answer */
        return 1;
    }
    a->retried = 1;
    log_info("article write retried after %s", sqlstate);
    api_query(c, a->q, a->params, cb);
    return 1;
}

/*
 * An article write may change the tag list (its counts order it): this
 * worker forgets its copy at once; the others hear it from PostgreSQL.
 */
static void
drop_cached_tags(struct http_ctx *c)
{
    struct cache *k = c->env->cache;

    if (k)
        cache_drop(k, CACHE_KEY_TAGS);
}

/*
 * Row row as an article object: its flags from the row, or from the
 * caller's sets when given (a read sent without the flags' viewer).
 */
static void
article_object(struct evbuffer *b, const PGresult *res, int row, int with_body,
               const struct cache_viewer *sets)
{
    int flags[2];

    if (sets)
        cache_viewer_flags(sets, db_int8(res, row, API_COL_ARTICLE_ID),
                           db_int8(res, row, API_COL_AUTHOR_ID), flags);
    api_article_object(b, res, row, with_body, sets ? flags : NULL);
}

/* {"article":{... with body}} from row 0; the flags as article_object() says. */
static void
reply_article(struct http_ctx *c, int status, const PGresult *res, const struct cache_viewer *sets)
{
    struct evbuffer *b = c->env->scratch;

    evbuffer_add(b, "{\"article\":", 11);
    article_object(b, res, 0, 1, sets);
    evbuffer_add(b, "}", 1);
    http_reply(c, status, b);
}

/*
 * Could PostgreSQL refuse this tag name (tags_name_check: no control
 * character)?  Depending on the database's locale, [[:cntrl:]] may also
 * cover the C1 controls U+0080..U+009F and U+2028, U+2029, so those are
 * refused too.  The 0x1f separator is one of the C0 controls.
 */
static int
tag_has_control(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;

    for (; *p; p++) {
        if (*p < 0x20 || *p == 0x7f)
            return 1;
        if (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)
            return 1;
        if (p[0] == 0xe2 && p[1] == 0x80 && (p[2] == 0xa8 || p[2] == 0xa9))
            return 1;
    }
    return 0;
}

static int
blank(const char *s)
{
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
        s++;
    return *s == '\0';
}

/*
 * Reads the optional "tagList" into a->tags: the names joined by 0x1f
 * ("" for an empty array), NULL when absent.  Sorting and duplicates are
 * the query's business.  -1 after answering 422 (or 503).
 */
static int
read_tags(struct http_ctx *c, const cJSON *obj, struct art_req *a)
{
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(obj, "tagList");
    const cJSON *t;
    size_t total = 1, len = 0;

    if (!list)
        return 0;
    if (!cJSON_IsArray(list)) {
        http_error(c, 422, "tagList must be an array of strings");
        return -1;
    }
    cJSON_ArrayForEach(t, list)
    {
        if (!cJSON_IsString(t) || !t->valuestring) {
            http_error(c, 422, "tagList must be an array of strings");
            return -1;
        }
        /* A lone surrogate escape decodes to bytes that are no UTF-8. */
        if (!json_utf8_valid(t->valuestring, strlen(t->valuestring))) {
            http_error(c, 422, "tagList must hold valid UTF-8");
            return -1;
        }
        if (blank(t->valuestring)) {
            http_error(c, 422, "tagList can't hold an empty tag");
            return -1;
        }
        if (tag_has_control(t->valuestring)) {
            http_error(c, 422, "tagList can't hold control characters");
            return -1;
        }
        total += strlen(t->valuestring) + 1;
    }
    if (!(a->tags = malloc(total))) {
        http_error(c, 503, "out of memory");
        return -1;
    }
    cJSON_ArrayForEach(t, list)
    {
        size_t n = strlen(t->valuestring);
        if (len > 0)
            a->tags[len++] = '\x1f';
        memcpy(a->tags + len, t->valuestring, n);
        len += n;
    }
    a->tags[len] = '\0';
    return 0;
}

/* ---------------------------------------------------------------- lists */

/*
 * A read the cache may answer (a list, the feed, one article), kept
 * between the viewer's sets, the cache and the statement.
 */
struct read_req {
    enum sql_query_id q;
    enum cache_list kind;
    int one;        /* one article, not a list */
    int sets_tried; /* viewer_sets was sent once already */
    int waited;     /* times it waited for another request's fill (cache_fill.h) */
    int flag;       /* which of params is the flags' viewer (sql/queries.sql) */
    int by_sets;    /* sent without it: the answer's flags come from the sets */
    struct cache_fill_waiter wait;
    const char *filter;
    char limit[24], offset[24], viewer[24];
    const char *params[7];
    char key[CACHE_KEY_MAX];
};

static void on_list(void *arg, enum db_status st, const PGresult *res);
static void read_go_sets(void *arg, enum db_status st, const PGresult *res);
static void on_article_read(void *arg, enum db_status st, const PGresult *res);
static void read_go(struct http_ctx *c);

/* The fill this request waited for has ended: look again. */
static void
read_resume(void *arg)
{
    read_go(arg);
}

/*
 * The key whose fill this read waits for, or joins: the page's, or a:<slug>
 * for one article; NULL when it has none (a name too long for a key).
 */
static const char *
fill_key(struct read_req *r, char akey[CACHE_KEY_MAX])
{
    if (!r->one)
        return r->key;
    return cache_key_name(akey, "a:", r->params[0]) == 0 ? akey : NULL;
}

/* ],"articlesCount":N} after the articles. */
static void
list_close(struct evbuffer *b, int64_t count)
{
    evbuffer_add(b, "],\"articlesCount\":", 18);
    json_out_int(b, count);
    evbuffer_add(b, "}", 1);
}

/*
 * The page (or the article) answered from the cache; 0 when it misses
 * something.  stale: values may be stale, as cache_get_stale() says
 * (NULL: fresh only).
 */
static int
read_cached(struct http_ctx *c, const struct cache_viewer *vp, struct cache_stale *stale)
{
    struct read_req *r = c->state;
    struct cache *k = c->env->cache;
    struct evbuffer *b = c->env->scratch;
    int64_t count;

    if (r->one) {
        if (!cache_article_render(k, r->params[0], vp, b, stale))
            return 0;
    } else {
        if (!cache_page_render(k, r->key, vp, b, &count, stale))
            return 0;
        evbuffer_prepend(b, "{\"articles\":[", 13);
        list_close(b, count);
    }
    api_cache_reply(c, stale, b);
    return 1;
}

/*
 * From the cache when it holds the page (or the article), its articles and
 * the viewer's sets; else from the statement, whose answer fills them.  A
 * signed-in viewer's sets come first, by one statement, when missing.
 */
static void
read_go(struct http_ctx *c)
{
    struct read_req *r = c->state;
    struct cache *k = c->env->cache;
    struct cache_viewer v, *vp = NULL;
    struct cache_stale stale;
    int cached = cache_enabled(k);
    char akey[CACHE_KEY_MAX];
    const char *key = fill_key(r, akey);

    cache_release(k); /* the copies earlier callbacks took (cache.h) */
    if (cached && api_req(c)->user_id) {
        int got = cache_viewer_get(k, api_req(c)->user_id, &v);
        if (got == 0 && !r->sets_tried) {
            const char *params[2] = {r->viewer, CACHE_SET_MAX_TEXT};
            r->sets_tried = 1;
            api_cache_fill(c, k);
            api_query(c, SQL_VIEWER_SETS, params, read_go_sets);
            return;
        }
        if (got == 1)
            vp = &v;
        else
            cached = 0; /* too many to keep, or refused twice: the statement answers */
    }
    if (cached && read_cached(c, vp, NULL))
        return;
    /* Before waiting for another's fill: what that fill replaces, if it may answer. */
    if (cached && key && api_cache_stale(c, key, &stale) && read_cached(c, vp, &stale))
        return;
    if (cached) {
        if (key && api_cache_wait(c, key, &r->wait, &r->waited, read_resume))
            return;
        api_cache_fill(c, k);
    } else {
        api_req(c)->cache_fill = 0;
    }
    /* With the caller's sets at hand, PostgreSQL need not probe the flags. */
    r->by_sets = vp != NULL;
    r->params[r->flag] = vp ? NULL : api_viewer(c, r->viewer);
    api_query(c, r->q, r->params, r->one ? on_article_read : on_list);
}

/*
 * In the callback of a read sent without the flags' viewer: 1 with *v the
 * caller's sets to take the flags from; 0 when they went stale meanwhile,
 * after sending the statement again with the viewer (to the same
 * callback, which then takes the row's flags).  The first answer already
 * filled the cache: the second does not.
 */
static int
read_flags(struct http_ctx *c, struct cache_viewer *v, db_cb cb)
{
    struct read_req *r = c->state;

    if (cache_viewer_now(c->env->cache, api_req(c)->user_id, v))
        return 1;
    r->by_sets = 0;
    r->params[r->flag] = api_viewer(c, r->viewer);
    api_flags_resend(c, r->q, r->params, cb);
    return 0;
}

static void
read_go_sets(void *arg, enum db_status st, const PGresult *res)
{
    struct http_ctx *c = arg;

    if (api_db_failed(c, st, res) || api_caller_gone(c, res))
        return;
    cache_fill_viewer(c->env->cache, api_req(c)->user_id, res, api_req(c)->cache_epoch);
    read_go(c);
}

/* {"articles":[...],"articlesCount":N} from a list result (no body). */
static void
on_list(void *arg, enum db_status st, const PGresult *res)
{
    struct http_ctx *c = arg;
    struct read_req *r = c->state;
    struct cache_viewer v;
    const struct cache_viewer *sets = NULL;
    struct evbuffer *b;
    int n, first = 1;

    if (api_db_failed(c, st, res) || api_caller_gone(c, res))
        return;
    n = PQntuples(res);
    if (n == 0) {
        /* Every variant returns at least the count row when given its shape. */
        log_error("article list query returned no row (wrong variant for the filters?)");
        http_error(c, 500, "internal error");
        return;
    }
    if (r && api_req(c)->cache_fill)
        cache_page_fill(c->env->cache, r->key, r->kind, r->filter, api_req(c)->user_id, res,
                        api_req(c)->cache_epoch);
    if (r && r->by_sets) {
        if (!read_flags(c, &v, on_list))
            return;
        sets = &v;
    }
    b = c->env->scratch;
    evbuffer_add(b, "{\"articles\":[", 13);
    for (int i = 0; i < n; i++) {
        if (db_null(res, i, 0))
            continue; /* the empty page's count-only row */
        if (!first)
            evbuffer_add(b, ",", 1);
        article_object(b, res, i, 0, sets);
        first = 0;
    }
    list_close(b, db_int8(res, 0, COL_ARTICLES_COUNT));
    http_reply(c, 200, b);
}

/* limit and offset as the text parameters; -1 after a 422. */
static int
read_page(struct http_ctx *c, char limit[24], char offset[24])
{
    long l, o;

    if (api_query_int(c, "limit", LIMIT_DEFAULT, 1, LIMIT_MAX, &l) < 0 ||
        api_query_int(c, "offset", 0, 0, OFFSET_MAX, &o) < 0)
        return -1;
    api_itoa(l, limit);
    api_itoa(o, offset);
    return 0;
}

/*
 * A filter argument: NULL when absent or empty (clients send "?tag=" for
 * no tag).  -1 after a 422 for bytes PostgreSQL would refuse.
 */
static int
read_filter(struct http_ctx *c, const char *name, const char **out)
{
    const char *s = http_query(c, name);
    char msg[64];

    *out = NULL;
    if (!s || !*s)
        return 0;
    if (!json_utf8_valid(s, strlen(s))) {
        snprintf(msg, sizeof(msg), "%s must be UTF-8 text", name);
        http_error(c, 422, msg);
        return -1;
    }
    *out = s;
    return 0;
}

/* Is the cache on and serving (its listener up)? */
static int
cache_serving(const struct http_ctx *c)
{
    return c->env->cache && cache_enabled(c->env->cache);
}

void
api_articles_list(struct http_ctx *c)
{
    const char *tag, *author, *favorited, *filter;
    char limit[24], offset[24], viewer[24], key[CACHE_KEY_MAX];
    const char *params[7];
    enum sql_query_id q;
    enum cache_list kind = CACHE_LIST_ALL;
    struct read_req *r;
    int nfilters;

    if (read_page(c, limit, offset) < 0 || read_filter(c, "tag", &tag) < 0 ||
        read_filter(c, "author", &author) < 0 || read_filter(c, "favorited", &favorited) < 0)
        return;
    /* One variant per filter shape (see the list notes in queries.sql). */
    nfilters = !!tag + !!author + !!favorited;
    if (nfilters == 0) {
        q = SQL_ARTICLES_LIST;
    } else if (nfilters > 1) {
        q = SQL_ARTICLES_LIST_FILTERED;
    } else if (tag) {
        q = SQL_ARTICLES_LIST_TAG;
        kind = CACHE_LIST_TAG;
    } else if (author) {
        q = SQL_ARTICLES_LIST_AUTHOR;
        kind = CACHE_LIST_AUTHOR;
    } else {
        q = SQL_ARTICLES_LIST_FAVORITED;
        kind = CACHE_LIST_FAVORITED;
    }
    filter = tag ? tag : author ? author : favorited;
    if (nfilters > 1 || !cache_serving(c) ||
        cache_page_key(kind, filter, 0, limit, offset, key) < 0) {
        params[0] = tag;
        params[1] = author;
        params[2] = favorited;
        params[3] = limit;
        params[4] = offset;
        params[5] = api_viewer(c, viewer);
        params[6] = params[5]; /* the flags' */
        api_query(c, q, params, on_list);
        return;
    }
    if (!(r = api_state_new(c, sizeof(*r), free)))
        return;
    r->q = q;
    r->kind = kind;
    r->filter = filter;
    memcpy(r->key, key, sizeof(key));
    memcpy(r->limit, limit, sizeof(limit));
    memcpy(r->offset, offset, sizeof(offset));
    r->params[0] = tag;
    r->params[1] = author;
    r->params[2] = favorited;
    r->params[3] = r->limit;
    r->params[4] = r->offset;
    r->params[5] = api_viewer(c, r->viewer);
    r->flag = 6;
    read_go(c);
}

void
api_articles_feed(struct http_ctx *c)
{
    char limit[24], offset[24], viewer[24];
    const char *params[4];
    struct read_req *r;

    if (read_page(c, limit, offset) < 0)
        return;
    if (!cache_serving(c)) {
        params[0] = api_itoa(api_req(c)->user_id, viewer);
        params[1] = limit;
        params[2] = offset;
        params[3] = params[0]; /* the flags' */
        api_query(c, SQL_ARTICLES_FEED, params, on_list);
        return;
    }
    if (!(r = api_state_new(c, sizeof(*r), free)))
        return;
    r->q = SQL_ARTICLES_FEED;
    r->kind = CACHE_LIST_FEED;
    cache_page_key(CACHE_LIST_FEED, NULL, api_req(c)->user_id, limit, offset, r->key);
    memcpy(r->limit, limit, sizeof(limit));
    memcpy(r->offset, offset, sizeof(offset));
    r->params[0] = api_itoa(api_req(c)->user_id, r->viewer);
    r->params[1] = r->limit;
    r->params[2] = r->offset;
    r->flag = 3;
    read_go(c);
}

/* ---------------------------------------------------------------- one article */

/* article_get: zero rows is a 404; the row fills the cache when it was asked to. */
static void
on_article_read(void *arg, enum db_status st, const PGresult *res)
{
    struct http_ctx *c = arg;
    struct read_req *r = c->state;
    struct cache_viewer v;
    const struct cache_viewer *sets = NULL;

    if (api_db_failed(c, st, res) || api_caller_gone(c, res))
        return;
    if (PQntuples(res) == 0) {
        http_error(c, 404, "article not found");
        return;
    }
    if (r && api_req(c)->cache_fill)
        cache_article_fill(c->env->cache, res, api_req(c)->cache_epoch);
    if (r && r->by_sets) {
        if (!read_flags(c, &v, on_article_read))
            return;
        sets = &v;
    }
    reply_article(c, 200, res, sets);
}

void
api_article_get(struct http_ctx *c)
{
    struct read_req *r;
    char viewer[24];
    const char *params[3];

    if (!cache_serving(c)) {
        params[0] = http_param(c, 0, NULL);
        params[1] = api_viewer(c, viewer);
        params[2] = params[1]; /* the flags' */
        api_query(c, SQL_ARTICLE_GET, params, on_article_read);
        return;
    }
    if (!(r = api_state_new(c, sizeof(*r), free)))
        return;
    r->q = SQL_ARTICLE_GET;
    r->one = 1;
    r->params[0] = http_param(c, 0, NULL);
    r->params[1] = api_viewer(c, r->viewer);
    r->flag = 2;
    read_go(c);
}

/* favorite, unfavorite: zero rows is a 404. */
static void
on_favorite(void *arg, enum db_status st, const PGresult *res)
{
    struct http_ctx *c = arg;

    if (api_fk_gone(c, st, res) || api_db_failed(c, st, res) || api_caller_gone(c, res))
        return;
    if (PQntuples(res) == 0) {
        http_error(c, 404, "article not found");
        return;
    }
    if (c->env->cache)
        cache_wrote_favorite(c->env->cache, res, api_req(c)->user_id);
    reply_article(c, 200, res, NULL);
}

void
api_article_favorite(struct http_ctx *c)
{
    api_param_query(c, SQL_FAVORITE, on_favorite);
}

void
api_article_unfavorite(struct http_ctx *c)
{
    api_param_query(c, SQL_UNFAVORITE, on_favorite);
}

/* article_delete: zero rows 404; column 0 is_author, false 403. */
static void
on_deleted(void *arg, enum db_status st, const PGresult *res)
{
    struct http_ctx *c = arg;

    /* A delete may lose a deadlock against a concurrent write: once more. */
    if (st == DB_SQL_ERROR && strcmp(db_sqlstate(res), "40P01") == 0 && !api_req(c)->retried) {
        char who[24];
        const char *params[2] = {http_param(c, 0, NULL), api_viewer(c, who)};
        api_req(c)->retried = 1;
        api_query(c, SQL_ARTICLE_DELETE, params, on_deleted);
        return;
    }
    if (api_db_failed(c, st, res) || api_caller_gone(c, res))
        return;
    if (PQntuples(res) == 0) {
        http_error(c, 404, "article not found");
        return;
    }
    if (!db_bool(res, 0, 0)) {
        http_error(c, 403, "article is not yours to delete");
        return;
    }
    drop_cached_tags(c);
    if (c->env->cache)
        cache_wrote_delete(c->env->cache, http_param(c, 0, NULL));
    http_reply(c, 204, NULL);
}

void
api_article_delete(struct http_ctx *c)
{
    api_param_query(c, SQL_ARTICLE_DELETE, on_deleted);
}

/* ---------------------------------------------------------------- create */

/* The write's row, or the one stored with its Idempotency-Key: the same answer. */
static void
on_created(void *arg, enum db_status st, const PGresult *res)
{
    struct http_ctx *c = arg;

    if (retry_once(c, st, res, on_created) || idem_conflict(c, st, res) ||
        api_fk_gone(c, st, res) || api_db_failed(c, st, res))
        return;
    if (PQntuples(res) == 0) {
        /* The insert happened but the author's row was not found: gone. */
        api_no_caller(c);
        return;
    }
    /*
     * A replay wrote nothing, but the write it replays may have lost its
     * answer (a 502) before it dropped what it changed: dropping again
     * costs a miss at most.
     */
    drop_cached_tags(c);
    if (c->env->cache)
        cache_wrote_article(c->env->cache, res, api_req(c)->user_id, NULL, 1);
    reply_article(c, 201, res, NULL);
}

static void
insert(struct http_ctx *c)
{
    struct art_req *a = c->state;

    api_query(c, a->q, a->params, on_created);
}

void
api_article_create(struct http_ctx *c)
{
    struct art_req *a;
    const cJSON *o;
    const char *title, *description, *body;
    const int need = REQBODY_REQUIRED | REQBODY_NONEMPTY;

    if (!(a = api_state_new(c, sizeof(*a), art_req_free)) || idem_read(c, &a->idem, NULL, 0) < 0 ||
        !(o = reqbody_object(c, "article", &a->doc)))
        return;
    if (reqbody_string(c, o, "title", need, &title, NULL) < 0 ||
        reqbody_string(c, o, "description", need, &description, NULL) < 0 ||
        reqbody_string(c, o, "body", need, &body, NULL) < 0 || read_tags(c, o, a) < 0)
        return;
    /* Only the base: the query adds the suffix when the base is taken. */
    slug_from_title(title, strlen(title), a->base, sizeof(a->base));
    a->q = SQL_ARTICLE_INSERT;
    a->params[0] = api_itoa(api_req(c)->user_id, a->viewer);
    a->params[1] = a->base;
    a->params[2] = title;
    a->params[3] = description;
    a->params[4] = body;
    a->params[5] = a->tags;
    a->params[6] = idem_key(&a->idem);
    a->params[7] = a->idem.fingerprint;
    idem_begin(c, &a->idem, api_req(c)->user_id, SQL_ARTICLE_REPLAY, insert, on_created);
}

/* ---------------------------------------------------------------- update */

static void
on_updated(void *arg, enum db_status st, const PGresult *res)
{
    struct http_ctx *c = arg;

    if (retry_once(c, st, res, on_updated) || api_db_failed(c, st, res) || api_caller_gone(c, res))
        return;
    if (PQntuples(res) == 0) {
        http_error(c, 404, "article not found");
        return;
    }
    if (!db_bool(res, 0, COL_IS_AUTHOR)) {
        http_error(c, 403, "article is not yours to edit");
        return;
    }
    drop_cached_tags(c);
    if (c->env->cache)
        cache_wrote_article(c->env->cache, res, api_req(c)->user_id, http_param(c, 0, NULL),
                            ((struct art_req *)c->state)->tags != NULL);
    reply_article(c, 200, res, NULL);
}

void
api_article_update(struct http_ctx *c)
{
    struct art_req *a;
    const cJSON *o;
    const char *title, *description, *body;
    int has_title, has_description, has_body;

    if (!(a = api_state_new(c, sizeof(*a), art_req_free)) ||
        !(o = reqbody_object(c, "article", &a->doc)))
        return;
    if (reqbody_string(c, o, "title", REQBODY_NONEMPTY, &title, &has_title) < 0 ||
        reqbody_string(c, o, "description", REQBODY_NONEMPTY, &description, &has_description) < 0 ||
        reqbody_string(c, o, "body", REQBODY_NONEMPTY, &body, &has_body) < 0 ||
        read_tags(c, o, a) < 0)
        return;
    if (!has_title && !has_description && !has_body && !a->tags) {
        http_error(c, 422, "article must have at least one of title, description, body, tagList");
        return;
    }
    /* A new title makes a new slug; the query keeps the old one if equal. */
    if (title)
        slug_from_title(title, strlen(title), a->base, sizeof(a->base));
    a->q = SQL_ARTICLE_UPDATE;
    a->params[0] = http_param(c, 0, NULL);
    a->params[1] = api_itoa(api_req(c)->user_id, a->viewer);
    a->params[2] = title ? a->base : NULL;
    a->params[3] = title;
    a->params[4] = description;
    a->params[5] = body;
    a->params[6] = a->tags;
    api_query(c, a->q, a->params, on_updated);
}
