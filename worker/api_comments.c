/*
 * api_comments: the comments of an article: list, create, delete.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "worker/api.h"
#include "worker/auth.h"
#include "worker/cache_articles.h"
#include "worker/env.h"
#include "worker/http.h"
#include "worker/idem.h"
#include "worker/reqbody.h"

/*
 * A comment list between its statement and its answer: the statement's
 * parameters, and whether it was sent without the flags' viewer (the
 * answer's "following" then comes from the caller's set, cache_viewer_now()).
 */
struct list_req {
    int by_sets;
    char viewer[24];
    const char *params[3];
};

static void
on_list(void *arg, enum db_status st, const PGresult *res)
{
    struct http_ctx *c = arg;
    struct list_req *r = c->state;
    struct cache_viewer v;
    const struct cache_viewer *sets = NULL;
    struct evbuffer *b;
    int n;

    if (api_db_failed(c, st, res) || api_caller_gone(c, res))
        return;
    n = PQntuples(res);
    if (n == 0) {
        http_error(c, 404, "article not found");
        return;
    }
    if (r->by_sets) {
        if (!cache_viewer_now(c->env->cache, api_req(c)->user_id, &v)) {
            r->by_sets = 0;
            r->params[2] = r->params[1];
            api_flags_resend(c, SQL_COMMENTS_LIST, r->params, on_list);
            return;
        }
        sets = &v;
    }
    b = c->env->scratch;
    evbuffer_add(b, "{\"comments\":[", 13);
    for (int i = 0, first = 1; i < n; i++) {
        if (db_null(res, i, 0))
            continue; /* an article without comments */
        if (!first)
            evbuffer_add(b, ",", 1);
        api_comment_object(b, res, i,
                           sets ? cache_ids_has(sets->follows, sets->nfollows,
                                                db_int8(res, i, API_COL_COMMENT_AUTHOR_ID))
                                : -1);
        first = 0;
    }
    evbuffer_add(b, "]}", 2);
    http_reply(c, 200, b);
}

void
api_comments_list(struct http_ctx *c)
{
    struct list_req *r;
    struct cache_viewer v;

    if (!(r = api_state_new(c, sizeof(*r), free)))
        return;
    r->params[0] = http_param(c, 0, NULL);
    r->params[1] = api_viewer(c, r->viewer);
    r->by_sets = cache_viewer_now(c->env->cache, api_req(c)->user_id, &v);
    r->params[2] = r->by_sets ? NULL : r->params[1];
    api_query(c, SQL_COMMENTS_LIST, r->params, on_list);
}

/* A comment's creation between its steps: the parsed body, its key. */
struct comment_req {
    cJSON *doc; /* body points into it */
    const char *body;
    struct idem idem;
};

static void
comment_req_free(void *p)
{
    struct comment_req *r = p;

    cJSON_Delete(r->doc);
    free(r);
}

/* The write's row, or the one stored with its Idempotency-Key: the same answer. */
static void
on_created(void *arg, enum db_status st, const PGresult *res)
{
    struct http_ctx *c = arg;
    struct evbuffer *b;

    if (idem_conflict(c, st, res) || api_fk_gone(c, st, res) || api_db_failed(c, st, res) ||
        api_caller_gone(c, res))
        return;
    if (PQntuples(res) == 0) {
        http_error(c, 404, "article not found");
        return;
    }
    b = c->env->scratch;
    evbuffer_add(b, "{\"comment\":", 11);
    api_comment_object(b, res, 0, -1);
    evbuffer_add(b, "}", 1);
    http_reply(c, 200, b);
}

static void
insert(struct http_ctx *c)
{
    struct comment_req *r = c->state;
    char who[24];
    const char *params[5];

    params[0] = http_param(c, 0, NULL);
    params[1] = api_itoa(api_req(c)->user_id, who);
    params[2] = r->body;
    params[3] = idem_key(&r->idem);
    params[4] = r->idem.fingerprint;
    api_query(c, SQL_COMMENT_INSERT, params, on_created);
}

void
api_comment_create(struct http_ctx *c)
{
    struct comment_req *r;
    const cJSON *o;

    if (!(r = api_state_new(c, sizeof(*r), comment_req_free)) ||
        idem_read(c, &r->idem, NULL, 0) < 0 || !(o = reqbody_object(c, "comment", &r->doc)))
        return;
    if (reqbody_string(c, o, "body", REQBODY_REQUIRED | REQBODY_NONEMPTY, &r->body, NULL) < 0)
        return;
    idem_begin(c, &r->idem, api_req(c)->user_id, SQL_COMMENT_REPLAY, insert, on_created);
}

static void
on_deleted(void *arg, enum db_status st, const PGresult *res)
{
    struct http_ctx *c = arg;

    if (api_db_failed(c, st, res) || api_caller_gone(c, res))
        return;
    if (PQntuples(res) != 1 || !db_bool(res, 0, 0)) {
        http_error(c, 404, "article not found");
        return;
    }
    if (!db_bool(res, 0, 1)) {
        http_error(c, 404, "comment not found");
        return;
    }
    if (!db_bool(res, 0, 2)) {
        http_error(c, 403, "comment: only its author may delete it");
        return;
    }
    http_reply(c, 204, NULL);
}

void
api_comment_delete(struct http_ctx *c)
{
    char who[24];
    const char *params[3];
    const char *id = http_param(c, 1, NULL);
    char *end;
    long long n;

    /* Only a positive integer can name a comment. */
    n = strtoll(id, &end, 10);
    if (*id < '0' || *id > '9' || *end || n <= 0 || strlen(id) > 18) {
        http_error(c, 404, "comment not found");
        return;
    }
    params[0] = http_param(c, 0, NULL);
    params[1] = id;
    params[2] = api_itoa(api_req(c)->user_id, who);
    api_query(c, SQL_COMMENT_DELETE, params, on_deleted);
}
