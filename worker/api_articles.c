/*
 * api_articles: the article list and feed, one article, and creating,
 * updating, deleting and (un)favoriting articles.
 *
 * Lists: one query gives the page and the exact articlesCount together
 * (sql/queries.sql); an empty page comes back as one all-NULL article row
 * that still carries the count.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "common/json_out.h"
#include "common/slug.h"
#include "common/utf8.h"
#include "worker/api.h"
#include "worker/auth.h"
#include "worker/http.h"
#include "worker/reqbody.h"
#include "worker/worker.h"

#define LIMIT_DEFAULT 20
#define LIMIT_MAX 100
#define OFFSET_MAX 100000000L
#define TAG_MAX 64
#define TAGS_MAX 32

/* ---------------------------------------------------------------- replies */

static void
on_list(void *arg, enum db_status st, const PGresult *res)
{
    struct http_ctx *c = arg;
    struct evbuffer *b;
    int n;

    if (api_db_failed(c, st, res))
        return;
    b = worker_scratch(c->w);
    n = PQntuples(res);
    evbuffer_add(b, "{\"articles\":[", 13);
    for (int i = 0, first = 1; i < n; i++) {
        if (db_null(res, i, 0))
            continue; /* the empty page's row: only the count */
        if (!first)
            evbuffer_add(b, ",", 1);
        api_article_object(b, res, i, 0);
        first = 0;
    }
    evbuffer_add(b, "],\"articlesCount\":", 18);
    json_out_int(b, n ? db_int8(res, 0, 12) : 0);
    evbuffer_add(b, "}", 1);
    http_reply(c, 200, b);
}

/* {"article":{...}} with the body, from column 0..12. */
static void
reply_article(struct http_ctx *c, int status, const PGresult *res)
{
    struct evbuffer *b = worker_scratch(c->w);

    evbuffer_add(b, "{\"article\":", 11);
    api_article_object(b, res, 0, 1);
    evbuffer_add(b, "}", 1);
    http_reply(c, status, b);
}

static void
on_article(void *arg, enum db_status st, const PGresult *res)
{
    struct http_ctx *c = arg;

    if (api_db_failed(c, st, res))
        return;
    if (PQntuples(res) == 0) {
        http_error(c, 404, "article not found");
        return;
    }
    reply_article(c, 200, res);
}

static const char *
viewer(struct http_ctx *c, char buf[24])
{
    return c->user_id ? api_itoa(c->user_id, buf) : NULL;
}

/* ---------------------------------------------------------------- lists */

static int
page_params(struct http_ctx *c, char limit[24], char offset[24])
{
    long l, o;

    if (api_query_int(c, "limit", LIMIT_DEFAULT, 1, LIMIT_MAX, &l) < 0 ||
        api_query_int(c, "offset", 0, 0, OFFSET_MAX, &o) < 0)
        return -1;
    api_itoa(l, limit);
    api_itoa(o, offset);
    return 0;
}

/* A filter value as given, or NULL; one that cannot match anything is "". */
static const char *
filter(struct http_ctx *c, const char *name)
{
    const char *v = http_query(c, name);

    if (!v)
        return NULL;
    /* Bytes PostgreSQL would refuse cannot name a tag or user: match nothing. */
    if (!json_utf8_valid(v, strlen(v)))
        return "";
    return v;
}

void
api_articles_list(struct http_ctx *c)
{
    char limit[24], offset[24], who[24];
    const char *params[6];
    enum sql_query_id q;
    int nfilters;

    if (auth_caller(c, AUTH_OPTIONAL) < 0 || page_params(c, limit, offset) < 0)
        return;
    params[0] = filter(c, "tag");
    params[1] = filter(c, "author");
    params[2] = filter(c, "favorited");
    params[3] = limit;
    params[4] = offset;
    params[5] = viewer(c, who);
    nfilters = !!params[0] + !!params[1] + !!params[2];
    if (nfilters == 0)
        q = SQL_ARTICLES_LIST;
    else if (nfilters > 1)
        q = SQL_ARTICLES_LIST_FILTERED;
    else if (params[0])
        q = SQL_ARTICLES_LIST_TAG;
    else if (params[1])
        q = SQL_ARTICLES_LIST_AUTHOR;
    else
        q = SQL_ARTICLES_LIST_FAVORITED;
    api_query(c, q, params, on_list);
}

void
api_articles_feed(struct http_ctx *c)
{
    char limit[24], offset[24], who[24];
    const char *params[3];

    if (auth_caller(c, AUTH_REQUIRED) < 0 || page_params(c, limit, offset) < 0)
        return;
    params[0] = viewer(c, who);
    params[1] = limit;
    params[2] = offset;
    api_query(c, SQL_ARTICLES_FEED, params, on_list);
}

void
api_article_get(struct http_ctx *c)
{
    char who[24];
    const char *params[2];

    if (auth_caller(c, AUTH_OPTIONAL) < 0)
        return;
    params[0] = http_param(c, 0, NULL);
    params[1] = viewer(c, who);
    api_query(c, SQL_ARTICLE_GET, params, on_article);
}

/* ---------------------------------------------------------------- writes */

/* A write's body, kept while its query runs (a slug retry resends it). */
struct article_req {
    cJSON *doc;
    const char *title, *description, *body;
    char *tags; /* 0x1f-joined; NULL when not given */
    char slug[SLUG_MAX_LEN + 1];
    int has_slug;
    int retried;
};

static void
article_req_free(void *p)
{
    struct article_req *a = p;

    cJSON_Delete(a->doc);
    free(a->tags);
    free(a);
}

/*
 * tagList: an array of non-empty strings, joined with 0x1f for the query
 * (which sorts and dedupes).  -1 after a 422.
 */
static int
read_tags(struct http_ctx *c, const cJSON *o, struct article_req *a)
{
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(o, "tagList");
    const cJSON *t;
    size_t len = 0;
    int n = 0;

    if (!list || cJSON_IsNull(list))
        return 0;
    if (!cJSON_IsArray(list)) {
        http_error(c, 422, "tagList must be an array of strings");
        return -1;
    }
    cJSON_ArrayForEach(t, list)
    {
        const char *s = cJSON_GetStringValue(t);
        size_t tl = s ? strlen(s) : 0;
        if (!s || tl == 0 || tl > TAG_MAX || strchr(s, '\x1f') || !json_utf8_valid(s, tl)) {
            http_error(c, 422, "tagList must hold non-empty strings of at most 64 bytes");
            return -1;
        }
        if (++n > TAGS_MAX) {
            http_error(c, 422, "tagList may hold at most 32 tags");
            return -1;
        }
        len += tl + 1;
    }
    a->tags = calloc(1, len + 1);
    if (!a->tags) {
        http_error(c, 503, "out of memory");
        return -1;
    }
    n = 0;
    cJSON_ArrayForEach(t, list)
    {
        if (n++)
            strcat(a->tags, "\x1f");
        strcat(a->tags, t->valuestring);
    }
    return 0;
}

static struct article_req *
article_req_new(struct http_ctx *c, const cJSON **o)
{
    struct article_req *a = calloc(1, sizeof(*a));

    if (!a) {
        http_error(c, 503, "out of memory");
        return NULL;
    }
    c->state = a;
    c->state_free = article_req_free;
    *o = reqbody_object(c, "article", &a->doc);
    return *o ? a : NULL;
}

static int
make_slug(struct http_ctx *c, struct article_req *a)
{
    if (slug_from_title(a->title, strlen(a->title), a->slug, sizeof(a->slug)) == 0) {
        http_error(c, 422, "title must contain a letter or a digit");
        return -1;
    }
    a->has_slug = 1;
    return 0;
}

static int
slug_conflict(enum db_status st, const PGresult *res)
{
    const char *k;

    if (st != DB_SQL_ERROR)
        return 0;
    if (strcmp(db_sqlstate(res), "40P01") == 0)
        return 1; /* deadlock between tag rewrites: safe to retry */
    k = PQresultErrorField(res, PG_DIAG_CONSTRAINT_NAME);
    return strcmp(db_sqlstate(res), "23505") == 0 && k && strcmp(k, "articles_slug_key") == 0;
}

static void send_insert(struct http_ctx *c);

static void
on_inserted(void *arg, enum db_status st, const PGresult *res)
{
    struct http_ctx *c = arg;
    struct article_req *a = c->state;

    if (slug_conflict(st, res) && !a->retried) {
        a->retried = 1;
        send_insert(c);
        return;
    }
    if (api_db_failed(c, st, res))
        return;
    reply_article(c, 201, res);
}

static void
send_insert(struct http_ctx *c)
{
    struct article_req *a = c->state;
    char who[24];
    const char *params[6];

    params[0] = viewer(c, who);
    params[1] = a->slug;
    params[2] = a->title;
    params[3] = a->description;
    params[4] = a->body;
    params[5] = a->tags;
    api_query(c, SQL_ARTICLE_INSERT, params, on_inserted);
}

void
api_article_create(struct http_ctx *c)
{
    const int need = REQBODY_REQUIRED | REQBODY_NONEMPTY;
    struct article_req *a;
    const cJSON *o;

    if (auth_caller(c, AUTH_REQUIRED) < 0 || !(a = article_req_new(c, &o)))
        return;
    if (reqbody_string(c, o, "title", need, &a->title, NULL) < 0 ||
        reqbody_string(c, o, "description", need, &a->description, NULL) < 0 ||
        reqbody_string(c, o, "body", need, &a->body, NULL) < 0 || read_tags(c, o, a) < 0 ||
        make_slug(c, a) < 0)
        return;
    send_insert(c);
}

static void send_update(struct http_ctx *c);

static void
on_updated(void *arg, enum db_status st, const PGresult *res)
{
    struct http_ctx *c = arg;
    struct article_req *a = c->state;

    if (slug_conflict(st, res) && !a->retried) {
        a->retried = 1;
        send_update(c);
        return;
    }
    if (api_db_failed(c, st, res))
        return;
    if (PQntuples(res) == 0) {
        http_error(c, 404, "article not found");
        return;
    }
    if (!db_bool(res, 0, 13)) {
        http_error(c, 403, "article: only its author may change it");
        return;
    }
    reply_article(c, 200, res);
}

static void
send_update(struct http_ctx *c)
{
    struct article_req *a = c->state;
    char who[24];
    const char *params[7];

    params[0] = http_param(c, 0, NULL);
    params[1] = viewer(c, who);
    params[2] = a->has_slug ? a->slug : NULL;
    params[3] = a->title;
    params[4] = a->description;
    params[5] = a->body;
    params[6] = a->tags;
    api_query(c, SQL_ARTICLE_UPDATE, params, on_updated);
}

void
api_article_update(struct http_ctx *c)
{
    const int given = REQBODY_NONEMPTY;
    struct article_req *a;
    const cJSON *o;
    int has_title, has_description, has_body;

    if (auth_caller(c, AUTH_REQUIRED) < 0 || !(a = article_req_new(c, &o)))
        return;
    if (reqbody_string(c, o, "title", given, &a->title, &has_title) < 0 ||
        reqbody_string(c, o, "description", given, &a->description, &has_description) < 0 ||
        reqbody_string(c, o, "body", given, &a->body, &has_body) < 0 || read_tags(c, o, a) < 0)
        return;
    if (!has_title && !has_description && !has_body &&
        !cJSON_GetObjectItemCaseSensitive(o, "tagList")) {
        http_error(c, 422, "article must have at least one of title, description, body, tagList");
        return;
    }
    /* An explicit empty tagList removes every tag. */
    if (!a->tags && cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(o, "tagList")) &&
        !(a->tags = calloc(1, 1))) {
        http_error(c, 503, "out of memory");
        return;
    }
    if (a->title && make_slug(c, a) < 0)
        return;
    send_update(c);
}

static void
on_deleted(void *arg, enum db_status st, const PGresult *res)
{
    struct http_ctx *c = arg;

    if (api_db_failed(c, st, res))
        return;
    if (PQntuples(res) == 0) {
        http_error(c, 404, "article not found");
        return;
    }
    if (!db_bool(res, 0, 0)) {
        http_error(c, 403, "article: only its author may delete it");
        return;
    }
    http_reply(c, 204, NULL);
}

static void
slug_and_caller(struct http_ctx *c, enum sql_query_id q, db_cb cb)
{
    char who[24];
    const char *params[2];

    if (auth_caller(c, AUTH_REQUIRED) < 0)
        return;
    params[0] = http_param(c, 0, NULL);
    params[1] = viewer(c, who);
    api_query(c, q, params, cb);
}

void
api_article_delete(struct http_ctx *c)
{
    slug_and_caller(c, SQL_ARTICLE_DELETE, on_deleted);
}

void
api_article_favorite(struct http_ctx *c)
{
    slug_and_caller(c, SQL_FAVORITE, on_article);
}

void
api_article_unfavorite(struct http_ctx *c)
{
    slug_and_caller(c, SQL_UNFAVORITE, on_article);
}
