/*
 * http: one request's life in a worker, from evhttp's callback to the one
 * reply it gets.
 *
 * Ownership: http_dispatch() allocates a struct http_ctx for every request.
 * From then on the handler chain owns it: whatever the handler started (a
 * query, a hash) calls back with the ctx, and the chain ends in exactly one
 * http_reply*() call, which sends the response (unless the client is gone)
 * and frees the ctx.  Nothing else frees it.
 *
 * A client that hangs up while its request waits is noticed through the
 * connection's close callback: c->req becomes NULL and nothing touches the
 * evhttp request again (libevent frees it with the connection; answering
 * it anyway is the double free of libevent issue 997).  The reply then only
 * frees the ctx.
 *
 * The layer's own state (the requests alive, the counts a drain waits
 * for, the hooks of the layer above) is one struct http_state, the
 * worker's (worker.c holds it): handed to http_init(), then to evhttp as
 * http_dispatch()'s argument, and named by every request (c->http).
 * Nothing here is kept at file scope.
 */
#ifndef CONDUITD_HTTP_H
#define CONDUITD_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include <sys/queue.h>

#include <event2/keyvalq_struct.h>

#include "worker/db.h"
#include "worker/router.h"

struct evbuffer;
struct evhttp_request;
struct evhttp_connection;
struct conn;
struct conn_set;
struct env;
struct http_state;
struct idem;

struct http_ctx {
    struct http_ctx *prev, *next; /* every live ctx, for http_abort_all() */
    struct evhttp_request *req;   /* NULL once the client is gone */
    struct evhttp_connection *conn;
    struct conn *link;       /* conn.c's record of conn: one lookup a request, not one a call */
    const struct env *env;   /* the worker's services (worker/env.h) */
    struct http_state *http; /* the layer's, which counts the request (http.c's alone) */
    int method;              /* enum router_method */
    int64_t start_us;        /* when the request was dispatched, for the access log */
    int64_t db_us;           /* time its handler waited for the database, in all (the log's) */
    struct router_match match;
    struct evkeyvalq query; /* parsed on first http_query() */
    int query_parsed;
    const char *cors_allow; /* Access-Control-Allow-Origin for the answer, or NULL */
    void *state;            /* the handler's own, freed with state_free */
    void (*state_free)(void *);
    /*
     * The layer above keeps its own part of every request (the API's
     * struct api_req: the caller, the query in flight, the cache's fill)
     * right after this, in the same allocation, as nginx keeps a module's
     * state behind ctx[]: http_ext().  This layer never reads it.
     */
};

/* The upper layer's part of the request (ext_size bytes, zeroed; http_init). */
void *http_ext(const struct http_ctx *c);

typedef void (*http_handler)(struct http_ctx *c);

/*
 * Runs before a matched route's handler, given the request (its route in
 * c->match.route): 0 lets the handler run, -1 means the gate answered.
 * The API's checks every route shares (the caller's token, worker/api.h)
 * live there, so that this layer knows no handler and no handler can
 * forget them.
 */
typedef int (*http_gate)(struct http_ctx *c);

/*
 * The request layer of a worker.  Declared here so that the worker can
 * hold one (one per worker, no allocation); its fields are this module's,
 * read through the calls below.
 */
struct http_state {
    const struct env *env;  /* the worker's services, given to every request */
    struct conn_set *conns; /* conn.c's records of the connections */
    http_gate gate;         /* run before every route's handler */
    size_t ext_size;        /* the upper layer's part of a request (http_ext) */
    uint64_t max_requests;  /* responses before asking to be replaced; 0: never */
    int recycle_asked;
    void (*settled)(void *arg);
    void *settled_arg;
    struct http_ctx *live; /* every ctx not yet answered */
    int64_t in_flight;     /* requests dispatched, not yet freed */
    int64_t sending;       /* replies handed to evhttp, not yet fully written */
};

/*
 * A worker exiting with requests still in flight (its graceful timeout ran
 * out) frees their state without answering; evhttp_free() then closes the
 * connections.
 */
void http_abort_all(struct http_state *h);

/*
 * Before the first request, h is filled in: env is the worker's, given to
 * every request, whose route table (env->routes) is dispatched on (this
 * layer knows no handler); conns its connections (worker/conn.h); gate
 * what runs before each handler (NULL: nothing); ext_size the bytes of
 * the upper layer's part of each request (http_ext()).  settled(arg) is
 * called whenever a request is freed or a reply is fully written (or its
 * connection died), so that a draining worker can tell it is done;
 * max_requests (0: never) is the count of responses after which the
 * worker asks the master, through its scoreboard slot, to be replaced
 * (gunicorn's max_requests).
 */
void http_init(struct http_state *h, const struct env *env, struct conn_set *conns, http_gate gate,
               size_t ext_size, uint64_t max_requests, void (*settled)(void *arg), void *arg);

/* Requests dispatched and not yet freed; replies handed to evhttp, not yet written. */
int64_t http_in_flight(const struct http_state *h);
int64_t http_sending(const struct http_state *h);

/* The evhttp generic callback (arg: the struct http_state): routes and calls the handler. */
void http_dispatch(struct evhttp_request *req, void *arg);

/* Sends status with body (moved out of it; may be NULL) as JSON; frees c. */
void http_reply(struct http_ctx *c, int status, struct evbuffer *body);

/*
 * Is the client still waiting for this answer?  0 once it has hung up,
 * noticed by evhttp or by a peek at its socket (conn_peer_closed): for a
 * request that waited in a queue, before work is spent on it.
 */
int http_client_waiting(struct http_ctx *c);

/*
 * The client has gone: its connection is closed without an answer (none
 * is counted), and c is freed.  Not from inside evhttp's own callbacks
 * (a handler's first call): from a query's or a hash's callback.
 */
void http_abandon(struct http_ctx *c);

/* Sends {"errors":{"body":[msg]}}; frees c.  msg is plain text, escaped here. */
void http_error(struct http_ctx *c, int status, const char *msg);

/* As http_error, with a Retry-After header: the 503 of an unavailable database. */
void http_unavailable(struct http_ctx *c, const char *msg);

/*
 * A 503 whose Retry-After is drawn from 1 to max_s seconds: for the many
 * clients shed at one moment (a burst of logins after a restart), so that
 * they do not all come back in the same second and be shed again.
 */
void http_unavailable_spread(struct http_ctx *c, const char *msg, int max_s);

/*
 * The raw response (status line, headers, JSON error envelope) to a
 * request header over max_header_size that evhttp never completed, for
 * conn_set_max_header; NULL when out of memory.
 */
struct evbuffer *http_header_too_large_reply(void);
/*
 * The same raw response for any status and message, written by conduitd
 * on a connection evhttp has no request on ("Connection: close").
 */
struct evbuffer *http_raw_error_reply(int status, const char *msg);

/* The i-th path parameter of the route, decoded; len may be NULL. */
const char *http_param(const struct http_ctx *c, int i, size_t *len);

/* Query-string argument, or NULL; decoded by evhttp. */
const char *http_query(struct http_ctx *c, const char *key);

/* A request header, or NULL. */
const char *http_header(struct http_ctx *c, const char *name);

/* The request body: pointer into evhttp's buffer and its length. */
const unsigned char *http_body(struct http_ctx *c, size_t *len);

/* Has the client hung up?  Handlers of long operations check before work. */
static inline int
http_gone(const struct http_ctx *c)
{
    return c->req == NULL;
}

#endif
