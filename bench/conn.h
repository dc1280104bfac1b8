/*
 * conn: one keep-alive HTTP/1.1 client connection, as a browser holds one:
 * connect (from one of several loopback source addresses, so 60,000 of
 * them do not run out of ephemeral ports), send one request, read its
 * response, keep the socket for the next.  A connection the server closed
 * is opened again before the next request.
 *
 * Latency is from the first byte written to the last byte read; the
 * connect, when one is needed, is not part of it.  The timeout runs from
 * conn_request() and covers the connect too.
 *
 * Ownership: a struct conn is embedded in its user (a virtual user, a slot
 * of the open-loop mode) and lives as long as it; conn_close() before
 * freeing.  The done callback runs from the event loop, never from inside
 * conn_request(), and may start the next request or close.
 */
#ifndef CONDUIT_BENCH_CONN_H
#define CONDUIT_BENCH_CONN_H

#include <event2/event.h>
#include <event2/event_struct.h>
#include <netinet/in.h>
#include <stdint.h>

#include "bench/httpc.h"

/* How a request went (also the error kinds of the report). */
enum conn_err { CONN_OK, CONN_ECONNECT, CONN_ETIMEOUT, CONN_ETRANSPORT, CONN_ESTATUS, CONN_NERR };
extern const char *const conn_err_names[CONN_NERR];

#define CONN_MAX_SOURCES 64
/*
 * Users one source address carries.  Each has about 28,000 ephemeral
 * ports, and every closed connection holds its port in TIME_WAIT for a
 * minute: users whose sessions fail and restart (a server past its
 * capacity) open connections fast, and connect() slows down as the ports
 * of an address run out.  So a quarter of them.
 */
#define CONN_USERS_PER_SOURCE 5000

/* What every connection of one process shares. */
struct conn_ctx {
    struct event_base *base;
    struct sockaddr_in server;
    struct in_addr source[CONN_MAX_SOURCES];
    int nsources;
    const struct timeval *timeout; /* a libevent common timeout */
    char host[64];                 /* the Host header */
    char *rbuf;                    /* one read buffer for all (single thread) */
    size_t rbuf_size;
    int64_t open;         /* sockets open now */
    uint64_t connects;    /* connects started */
    char last_error[160]; /* the last connect or transport error, for the report */
};

struct conn;
struct conn_result {
    enum conn_err err;
    int status;
    int64_t sent_us, done_us; /* CLOCK_MONOTONIC */
    const char *body;         /* when kept; valid until the callback sends again */
    size_t body_len;
};
typedef void (*conn_done_cb)(struct conn *c, const struct conn_result *r);

struct conn {
    struct conn_ctx *ctx;
    conn_done_cb done;
    int fd;
    uint8_t state;
    uint8_t keep_body;
    uint8_t io_set;  /* io is assigned */
    uint16_t source; /* index into ctx->source */
    struct event io;
    struct event tmo;
    struct httpc parser;
    char *out; /* the request's bytes not yet written (owned) */
    uint32_t out_len, out_off;
    int64_t sent_us;
    struct httpc_body body;
};

/*
 * The shared part: server address (numeric IPv4), the first source
 * address and how many consecutive ones to use (0: the kernel picks),
 * the timeout.  -1 with a message in err.
 */
int conn_ctx_init(struct conn_ctx *ctx, struct event_base *base, const char *host, int port,
                  const char *first_source, int nsources, double timeout_s, char *err,
                  size_t errlen);
void conn_ctx_free(struct conn_ctx *ctx);

void conn_init(struct conn *c, struct conn_ctx *ctx, int source, conn_done_cb done);

/* Sends req (copied); the callback reports the outcome.  -1 if busy. */
int conn_request(struct conn *c, const char *req, size_t len, int keep_body);
int conn_busy(const struct conn *c);
/* Closes the socket and forgets any request in progress, without callback. */
void conn_close(struct conn *c);

#endif
