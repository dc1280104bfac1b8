/*
 * http: dispatch, replies and the accounting around them.  See http.h.
 * Every function is given the worker's struct http_state, or a request
 * that names it (c->http).
 */
#include "config.h"

#include "worker/http.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/http.h>

#include "common/clock.h"
#include "common/cors.h"
#include "worker/json_out.h"
#include "common/log.h"
#include "common/scoreboard.h"
#include "common/settings.h"
#include "worker/access_log.h"
#include "worker/conn.h"
#include "worker/env.h"
#include "worker/metrics.h"

static int
method_of(enum evhttp_cmd_type t)
{
    switch (t) {
    case EVHTTP_REQ_GET:
        return ROUTER_GET;
    case EVHTTP_REQ_POST:
        return ROUTER_POST;
    case EVHTTP_REQ_PUT:
        return ROUTER_PUT;
    case EVHTTP_REQ_DELETE:
        return ROUTER_DELETE;
    case EVHTTP_REQ_HEAD:
        return ROUTER_HEAD;
    case EVHTTP_REQ_OPTIONS:
        return ROUTER_OPTIONS;
    case EVHTTP_REQ_PATCH:
        return ROUTER_PATCH;
    default:
        return ROUTER_OTHER;
    }
}

/* The client hung up: forget the request, the reply will only free. */
static void
on_close(void *arg)
{
    struct http_ctx *c = arg;

    c->req = NULL;
    c->conn = NULL;
    c->link = NULL;
}

/* The ctx rounded up so that what follows it is aligned for anything. */
#define CTX_SIZE                                                                                   \
    ((sizeof(struct http_ctx) + _Alignof(max_align_t) - 1) / _Alignof(max_align_t) *               \
     _Alignof(max_align_t))

void *
http_ext(const struct http_ctx *c)
{
    return (char *)c + CTX_SIZE;
}

void
http_init(struct http_state *h, const struct env *env, struct conn_set *conns, http_gate gate,
          size_t ext_size, uint64_t max_requests, void (*settled)(void *arg), void *arg)
{
    *h = (struct http_state){.env = env,
                             .conns = conns,
                             .gate = gate,
                             .ext_size = ext_size,
                             .max_requests = max_requests,
                             .settled = settled,
                             .settled_arg = arg};
}

int64_t
http_in_flight(const struct http_state *h)
{
    return h->in_flight;
}

int64_t
http_sending(const struct http_state *h)
{
    return h->sending;
}

static void
tell_settled(const struct http_state *h)
{
    if (h->settled)
        h->settled(h->settled_arg);
}

static void
count_in_flight(struct http_state *h, int delta)
{
    h->in_flight += delta;
    atomic_store_explicit(&h->env->slot->in_flight, h->in_flight, memory_order_relaxed);
}

/* A response sent: the worker's counts, and the instance's metrics (worker/metrics.h). */
static void
count_response(const struct http_ctx *c, int status, int64_t us)
{
    struct http_state *h = c->http;
    const struct env *e = c->env;
    uint64_t n = atomic_fetch_add_explicit(&e->slot->requests, 1, memory_order_relaxed) + 1;

    if (status >= 500)
        atomic_fetch_add_explicit(&e->slot->errors, 1, memory_order_relaxed);
    metrics_count_response(e->slot, c->match.route ? (int)(c->match.route - e->routes) : -1, status,
                           us);
    /*
     * max_requests, as gunicorn's: the master starts a replacement and,
     * once it is ready, retires this worker as a reload would (no request
     * lost).  This worker serves on meanwhile.
     */
    if (h->max_requests && n >= h->max_requests && !h->recycle_asked) {
        h->recycle_asked = 1;
        atomic_store(&e->slot->recycle, 1);
        log_info("served %llu responses (max_requests): asking to be replaced",
                 (unsigned long long)n);
    }
}

#define HEADER_TOO_LARGE "request header too large"

static void
ctx_free(struct http_ctx *c)
{
    struct http_state *h = c->http;

    if (c->prev)
        c->prev->next = c->next;
    else
        h->live = c->next;
    if (c->next)
        c->next->prev = c->prev;

    if (c->state_free)
        c->state_free(c->state);
    if (c->query_parsed)
        evhttp_clear_headers(&c->query);
    free(c);
    count_in_flight(h, -1);
    tell_settled(h);
}

/*
 * CORS (common/cors.h): note the origin an answer may name, and answer a
 * preflight here, before routing (OPTIONS has no route of its own).
 * Returns 1 when the request is answered.
 */
static int
cors_begin(struct http_ctx *c, const char *list)
{
    struct evkeyvalq *in = evhttp_request_get_input_headers(c->req), *out;
    const char *origin = list ? evhttp_find_header(in, "Origin") : NULL;

    if (!origin)
        return 0;
    c->cors_allow = cors_allow(list, origin); /* points into the request's headers */
    if (c->method != ROUTER_OPTIONS || !evhttp_find_header(in, "Access-Control-Request-Method"))
        return 0;
    if (!c->cors_allow) {
        http_error(c, 403, "origin not allowed");
        return 1;
    }
    out = evhttp_request_get_output_headers(c->req);
    evhttp_add_header(out, "Access-Control-Allow-Methods", CORS_ALLOW_METHODS);
    evhttp_add_header(out, "Access-Control-Allow-Headers", CORS_ALLOW_HEADERS);
    evhttp_add_header(out, "Access-Control-Max-Age", CORS_MAX_AGE);
    http_reply(c, 204, NULL);
    return 1;
}

void
http_dispatch(struct evhttp_request *req, void *arg)
{
    struct http_state *h = arg;
    const struct env *e = h->env;
    const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
    const char *path = uri ? evhttp_uri_get_path(uri) : NULL;
    struct http_ctx *c;
    enum router_result r;

    c = calloc(1, CTX_SIZE + h->ext_size);
    if (!c) {
        evhttp_send_error(req, 503, "out of memory");
        return;
    }
    c->next = h->live;
    if (h->live)
        h->live->prev = c;
    h->live = c;
    c->req = req;
    c->env = e;
    c->http = h;
    c->conn = evhttp_request_get_connection(req);
    c->method = method_of(evhttp_request_get_command(req));
    c->start_us = clock_now_us();
    count_in_flight(h, 1);
    c->link = conn_find(h->conns, c->conn);
    conn_request_begin(c->link, on_close, c);
    if (conn_is_cut(c->link)) {
        /* Its reply cannot reach the client: a write must not be run. */
        http_error(c, 408, "request not complete in time");
        return;
    }
    if (conn_header_too_large(c->link)) {
        /* Complete in what evhttp read before the count stopped it. */
        evhttp_add_header(evhttp_request_get_output_headers(req), "Connection", "close");
        http_error(c, 400, HEADER_TOO_LARGE);
        return;
    }

    if (cors_begin(c, e->cfg->cors_origin))
        return;

    r = router_match(e->routes, e->nroutes, c->method, path && *path ? path : "/", &c->match);
    switch (r) {
    case ROUTER_MATCH:
        if (h->gate && h->gate(c) < 0)
            return;
        ((http_handler)c->match.route->handler)(c);
        return;
    case ROUTER_METHOD_NOT_ALLOWED: {
        char allow[64];
        router_allow_header(c->match.allowed, allow, sizeof(allow));
        evhttp_add_header(evhttp_request_get_output_headers(req), "Allow", allow);
        http_error(c, 405, "method not allowed");
        return;
    }
    default:
        http_error(c, 404, "not found");
    }
}

/* The reply is fully written; the connection may now idle or close.  arg: the http_state. */
static void
on_sent(struct evhttp_request *req, void *arg)
{
    struct http_state *h = arg;
    struct evhttp_connection *conn = evhttp_request_get_connection(req);

    if (conn)
        conn_request_end(h->conns, conn);
    h->sending--;
    tell_settled(h);
}

/* The connection died before the reply was written.  arg: the http_state. */
static void
on_send_aborted(void *arg)
{
    struct http_state *h = arg;

    h->sending--;
    tell_settled(h);
}

void
http_abort_all(struct http_state *h)
{
    while (h->live) {
        struct http_ctx *c = h->live;
        if (c->req)
            conn_set_hangup(c->link, NULL, NULL);
        c->req = NULL;
        ctx_free(c);
    }
}

void
http_reply(struct http_ctx *c, int status, struct evbuffer *body)
{
    const struct env *e = c->env;

    if (c->req) {
        struct evkeyvalq *h = evhttp_request_get_output_headers(c->req);
        /*
         * From here on a hang-up must not reach this ctx (it is freed below);
         * it only ends the write.  on_sent runs first when the write
         * completes, and clears the callback before evhttp frees anything.
         */
        conn_set_hangup(c->link, on_send_aborted, c->http);
        evhttp_request_set_on_complete_cb(c->req, on_sent, c->http);
        c->http->sending++;
        if (status != 204)
            evhttp_add_header(h, "Content-Type", "application/json; charset=utf-8");
        if (c->cors_allow) {
            evhttp_add_header(h, "Access-Control-Allow-Origin", c->cors_allow);
            if (strcmp(c->cors_allow, "*") != 0)
                evhttp_add_header(h, "Vary", "Origin");
        }
        if (e->draining)
            evhttp_add_header(h, "Connection", "close");
        if (c->method == ROUTER_HEAD && body) {
            /*
             * The Content-Length the GET would have (RFC 9110 9.3.2);
             * evhttp keeps one that is set and sends no body for HEAD.
             */
            char len[24];
            snprintf(len, sizeof(len), "%zu", evbuffer_get_length(body));
            evhttp_add_header(h, "Content-Length", len);
            evbuffer_drain(body, evbuffer_get_length(body));
        }
        int64_t us = clock_now_us() - c->start_us; /* the access log's and the histogram's */
        access_log_write(e->access, c->req, status,
                         status == 204 || !body ? 0 : evbuffer_get_length(body), us, c->db_us);
        evhttp_send_reply(c->req, status, NULL, status == 204 ? NULL : body);
        count_response(c, status, us);
    }
    if (body)
        evbuffer_drain(body, evbuffer_get_length(body));
    ctx_free(c);
}

int
http_client_waiting(struct http_ctx *c)
{
    return c->req && !conn_peer_closed(c->link);
}

void
http_abandon(struct http_ctx *c)
{
    if (c->req) {
        struct evhttp_connection *conn = c->conn;
        c->req = NULL;
        c->conn = NULL;
        c->link = NULL;
        conn_abort(c->http->conns, conn); /* its hang-up callback finds c->req NULL already */
    }
    ctx_free(c);
}

/* The error envelope, {"errors":{"body":[msg]}}, appended to b. */
static void
error_body(struct evbuffer *b, const char *msg)
{
    evbuffer_add(b, "{\"errors\":{\"body\":[", 19);
    json_out_cstr(b, msg);
    evbuffer_add(b, "]}}", 3);
}

/* The reason phrase of the statuses conduitd writes raw. */
static const char *
raw_reason(int status)
{
    switch (status) {
    case 400:
        return "Bad Request";
    case 501:
        return "Not Implemented";
    case 505:
        return "HTTP Version Not Supported";
    default:
        return "Error";
    }
}

struct evbuffer *
http_raw_error_reply(int status, const char *msg)
{
    struct evbuffer *body = evbuffer_new(), *r = evbuffer_new();
    int ok = body && r;

    if (ok) {
        error_body(body, msg);
        ok = evbuffer_add_printf(r,
                                 "HTTP/1.1 %d %s\r\n"
                                 "Content-Type: application/json; charset=utf-8\r\n"
                                 "Content-Length: %zu\r\nConnection: close\r\n\r\n",
                                 status, raw_reason(status), evbuffer_get_length(body)) >= 0 &&
             evbuffer_add_buffer(r, body) == 0;
    }
    if (body)
        evbuffer_free(body);
    if (!ok && r) {
        evbuffer_free(r);
        r = NULL;
    }
    return r;
}

struct evbuffer *
http_header_too_large_reply(void)
{
    return http_raw_error_reply(400, HEADER_TOO_LARGE);
}

/* retry_after: seconds for a Retry-After header, 0 for none. */
static void
send_error(struct http_ctx *c, int status, const char *msg, int retry_after)
{
    struct evbuffer *b = c->env->scratch;

    error_body(b, msg);
    if (retry_after > 0 && c->req) {
        char v[16];
        snprintf(v, sizeof(v), "%d", retry_after);
        evhttp_add_header(evhttp_request_get_output_headers(c->req), "Retry-After", v);
    }
    http_reply(c, status, b);
}

void
http_error(struct http_ctx *c, int status, const char *msg)
{
    send_error(c, status, msg, 0);
}

void
http_unavailable(struct http_ctx *c, const char *msg)
{
    send_error(c, 503, msg, 1);
}

void
http_unavailable_spread(struct http_ctx *c, const char *msg, int max_s)
{
    send_error(c, 503, msg, max_s > 1 ? 1 + (int)arc4random_uniform((uint32_t)max_s) : 1);
}

const char *
http_param(const struct http_ctx *c, int i, size_t *len)
{
    if (i >= c->match.nparams)
        return NULL;
    if (len)
        *len = c->match.param_len[i];
    return c->match.params[i];
}

const char *
http_query(struct http_ctx *c, const char *key)
{
    if (!c->req)
        return NULL;
    if (!c->query_parsed) {
        const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(c->req);
        const char *q = uri ? evhttp_uri_get_query(uri) : NULL;
        TAILQ_INIT(&c->query);
        c->query_parsed = 1;
        if (q && evhttp_parse_query_str(q, &c->query) < 0)
            return NULL;
    }
    return evhttp_find_header(&c->query, key);
}

const char *
http_header(struct http_ctx *c, const char *name)
{
    if (!c->req)
        return NULL;
    return evhttp_find_header(evhttp_request_get_input_headers(c->req), name);
}

const unsigned char *
http_body(struct http_ctx *c, size_t *len)
{
    struct evbuffer *in;

    *len = 0;
    if (!c->req)
        return NULL;
    in = evhttp_request_get_input_buffer(c->req);
    *len = evbuffer_get_length(in);
    return evbuffer_pullup(in, -1);
}
