/*
 * conn: every client connection of a worker, from accept to close, which
 * evhttp 2.1 does not show: it has no connection cap, no deadline for a
 * request's header (its timeout is per read, so a client trickling one
 * byte a second is never cut: slowloris), and no way to tell a connection
 * that is about to send a request from an idle one.
 *
 * evhttp creates each connection's bufferevent through conn_bevcb() (given
 * to evhttp_set_bevcb), so every accepted connection is seen here first.
 * Right after evhttp has set it up, the connection's close callback is
 * taken for good (it fires exactly once, when evhttp frees it), and the
 * request layer registers its interest in a hang-up through
 * conn_request_begin() instead of setting that callback itself.
 *
 * A connection is in one of five phases:
 *   FRESH      accepted, no byte yet        evhttp's idle timeout
 *   RECEIVING  bytes of a request arrived   header deadline running
 *   BUSY       dispatched, reply not sent   no deadline (the handler's)
 *   IDLE       reply sent, kept alive       evhttp's idle timeout
 *   LINGERING  closed by evhttp while the   5 s of silence, 30 s in all
 *              client may still be sending
 * A RECEIVING connection past its deadline is shut down (evhttp then
 * frees it as it would for a client that hung up).  Draining gives IDLE
 * and FRESH connections a second to begin a request (served, then closed)
 * and lets the others finish theirs; every reply then says
 * "Connection: close", and a connection whose reply was begun before the
 * drain (so went without it) gets that second once the reply is written.
 * One that sends nothing in its second is closed with a lingering close.
 * A LINGERING connection is only a socket kept open to read and discard
 * what its client still sends (the rest of a body that got an early 413,
 * a request sent as a drain closed it), so that closing it does not reset
 * the connection before the client has read its reply or the end of the
 * stream; it counts against the cap, and a draining worker waits for it
 * (it lasts 5 s of silence at most).
 *
 * Ownership: evhttp owns the connections; this module owns one small
 * record per connection, freed in the close callback (or when a lingering
 * close ends).  The records, their counts and the limits they keep are
 * one struct conn_set, the worker's (worker.c holds it): handed to every
 * call below, to evhttp as conn_bevcb()'s argument, and named by each
 * record, so that a callback given a record finds it.  Nothing here is
 * kept at file scope.
 */
#ifndef CONDUITD_CONN_H
#define CONDUITD_CONN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/time.h>
#include <time.h>

#include "worker/reqhead.h"

struct bufferevent;
struct conn;
struct event;
struct event_base;
struct evbuffer;
struct evhttp_connection;

/* What conn.c tells the worker about its connections. */
enum conn_news {
    CONN_FULL,   /* the cap is reached: stop accepting */
    CONN_ROOM,   /* one closed below the cap: accept again */
    CONN_SETTLED /* one closed or went idle: a draining worker may be done */
};

/*
 * A worker's connections.  Declared here so that the worker can hold one
 * (one per worker, no allocation); its fields are this module's, read
 * through the calls below.
 */
struct conn_set {
    struct event_base *base;
    struct conn *all;
    struct conn **byfd; /* attached records by socket, for conn_find() */
    int nfd;
    int n;      /* records alive */
    int active; /* FRESH, RECEIVING or BUSY */
    int lingering;
    int cap;
    int full;
    const int *draining; /* the worker's (worker/env.h), given at conn_init */
    time_t last_full_log;
    struct timeval header_timeout;
    struct timeval send_timeout;
    size_t max_header;                             /* 0: evhttp alone enforces it */
    struct evbuffer *header_reject;                /* the raw reply to a header over it */
    struct evbuffer *fault_reply[REQHEAD_NFAULTS]; /* to a request reqhead refuses */
    int64_t idle_us;                               /* evhttp's idle timeout, 0 for none */
    uint64_t jitter_rng;                           /* xorshift64 state */
    struct event *attach; /* runs right after evhttp has set a connection up */
    int pending;          /* records created and not attached yet */
    void (*notify)(enum conn_news news, void *arg);
    void *arg;
};

/*
 * s: the worker's, filled in here.  cap: most connections open at once; notify(CONN_FULL, arg) is
 * called when it is reached, notify(CONN_ROOM, arg) when one closes below it, and
 * notify(CONN_SETTLED, arg) when one closes or goes idle otherwise.  header_timeout: seconds from
 * accept, or from the first byte of a keep-alive request, to the complete request.  idle_timeout:
 * evhttp's timeout (set with evhttp_set_timeout), which each connection
 * gets stretched by a random part of up to an eighth, so that thousands
 * opened in one burst do not all close in one loop pass.  send_timeout:
 * seconds a reply may wait for its client to take more of it (counted
 * between two writes); the connection is then reset.  draining points at
 * the worker's flag (worker/env.h), read, never written, here.  -1 on
 * failure.
 */
int conn_init(struct conn_set *s, struct event_base *base, int cap, int header_timeout,
              int idle_timeout, int send_timeout, const int *draining,
              void (*notify)(enum conn_news news, void *arg), void *arg);
/* After evhttp_free(): frees what is left. */
void conn_shutdown(struct conn_set *s);

/*
 * max_header_size, enforced here (see reqhead.h): a request whose header
 * grows over max bytes is read no further; reply (owned from here on) is
 * the raw HTTP response sent when evhttp has not completed that request,
 * else http_dispatch answers it (conn_header_too_large).  evhttp's own
 * limit must be set above max.
 */
void conn_set_max_header(struct conn_set *s, size_t max, struct evbuffer *reply);
/*
 * The raw HTTP response (owned from here on) sent for a request whose
 * framing reqhead refuses (see reqhead.h): evhttp reads none of that
 * request, the reply goes out with "Connection: close", and the
 * connection closes (lingering) without reading another request from it.
 */
void conn_set_fault_reply(struct conn_set *s, enum reqhead_fault f, struct evbuffer *reply);
/* Is the request just dispatched one whose header was over the limit? */
int conn_header_too_large(const struct conn *c);

/* For evhttp_set_bevcb(), with the worker's struct conn_set as arg. */
struct bufferevent *conn_bevcb(struct event_base *base, void *arg);

/*
 * The record of evcon, for the calls below that take one: found once per
 * request (a lookup by socket), kept by the request until its hang-up
 * callback or its reply.  NULL for a connection this module does not
 * track (the calls then do nothing, or answer 0).
 */
struct conn *conn_find(const struct conn_set *s, struct evhttp_connection *evcon);

/*
 * The request layer: a request of this connection was dispatched; hangup
 * (may be NULL) is called if the client goes away before conn_request_end.
 */
void conn_request_begin(struct conn *c, void (*hangup)(void *), void *arg);
/* Replaces the hang-up callback of the request in progress (NULL: none). */
void conn_set_hangup(struct conn *c, void (*hangup)(void *), void *arg);
/* The reply is written: the connection is idle (kept alive) or closes. */
void conn_request_end(struct conn_set *s, struct evhttp_connection *evcon);

/* Draining: close the idle connections now, the others after their request. */
void conn_drain(struct conn_set *s);

/* Connections open, those with a request under way (not idle), those lingering. */
int conn_count(const struct conn_set *s);
int conn_active(const struct conn_set *s);
int conn_lingering(const struct conn_set *s);

/*
 * Has the client of a request under way closed its side (or reset)?
 * evhttp 2.1 reads nothing more once a request is complete, so it learns
 * only when the reply fails; this peeks at the socket (one recv).  Bytes
 * waiting there (a pipelined request) mean the client is still there.
 */
int conn_peer_closed(const struct conn *c);

/*
 * Closes the connection of a request whose client has gone, without a
 * reply: the hang-up callback runs, evhttp frees the request.  Never from
 * inside one of evhttp's callbacks.
 */
void conn_abort(struct conn_set *s, struct evhttp_connection *evcon);

/*
 * Was the connection shut down here (its request not complete by the
 * header deadline)?  A request evhttp still reads from it afterwards
 * cannot be answered, so it must not be run.
 */
int conn_is_cut(const struct conn *c);

#endif
