/*
 * status: see status.h.
 */
#include "config.h"

#include "worker/status.h"

#include <stdio.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/http.h>

#include "worker/env.h"
#include "worker/metrics.h"

#define PROMETHEUS_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* Does the query string hold the argument name, with a value or without ("?full")? */
static int
query_has(const char *q, const char *name)
{
    size_t n = strlen(name);

    while (q && *q) {
        size_t len = strcspn(q, "&");
        if (len >= n && strncmp(q, name, n) == 0 && (len == n || q[n] == '='))
            return 1;
        q += len;
        if (*q == '&')
            q++;
    }
    return 0;
}

/* env: the worker's; a draining worker's replies close their connections. */
static void
reply(const struct env *e, struct evhttp_request *req, int status, const char *type,
      struct evbuffer *body)
{
    struct evkeyvalq *h = evhttp_request_get_output_headers(req);

    evhttp_add_header(h, "Content-Type", type);
    evhttp_add_header(h, "Cache-Control", "no-store");
    if (e->draining)
        evhttp_add_header(h, "Connection", "close");
    if (evhttp_request_get_command(req) == EVHTTP_REQ_HEAD) {
        /* The Content-Length the GET would have; evhttp sends no body for HEAD. */
        char len[24];
        snprintf(len, sizeof(len), "%zu", evbuffer_get_length(body));
        evhttp_add_header(h, "Content-Length", len);
        evbuffer_drain(body, evbuffer_get_length(body));
    }
    evhttp_send_reply(req, status, NULL, body);
    evbuffer_drain(body, evbuffer_get_length(body));
}

void
status_dispatch(struct evhttp_request *req, void *arg)
{
    const struct env *e = arg;
    const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
    const char *path = uri ? evhttp_uri_get_path(uri) : NULL;
    enum evhttp_cmd_type m = evhttp_request_get_command(req);
    struct evbuffer *b = e->scratch;
    int metrics = path && strcmp(path, "/metrics") == 0;
    int status = path && strcmp(path, "/status") == 0;

    if (!metrics && !status) {
        evbuffer_add_printf(b, "not found: this port serves /metrics and /status\n");
        reply(e, req, 404, "text/plain; charset=utf-8", b);
        return;
    }
    if (m != EVHTTP_REQ_GET && m != EVHTTP_REQ_HEAD) {
        evhttp_add_header(evhttp_request_get_output_headers(req), "Allow", "GET, HEAD");
        evbuffer_add_printf(b, "method not allowed\n");
        reply(e, req, 405, "text/plain; charset=utf-8", b);
        return;
    }
    if (metrics) {
        metrics_write_prometheus(b, e->sb, e->zone, e->routes, e->nroutes);
        reply(e, req, 200, PROMETHEUS_TYPE, b);
    } else {
        metrics_write_status(b, e->sb, query_has(evhttp_uri_get_query(uri), "full"));
        reply(e, req, 200, "application/json; charset=utf-8", b);
    }
}
