/*
 * conn: see conn.h.
 */
#include "config.h"

#include "bench/conn.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/clock.h"

#ifndef IP_BIND_ADDRESS_NO_PORT
#define IP_BIND_ADDRESS_NO_PORT 24
#endif

#define RBUF_SIZE (64 * 1024)

enum { CS_CLOSED, CS_CONNECTING, CS_SENDING, CS_RECEIVING, CS_IDLE };

const char *const conn_err_names[CONN_NERR] = {
    [CONN_OK] = "ok",
    [CONN_ECONNECT] = "connect",
    [CONN_ETIMEOUT] = "timeout",
    [CONN_ETRANSPORT] = "transport",
    [CONN_ESTATUS] = "status",
};

/* Only loopback: this tool loads servers on this machine and nowhere else. */
static int
loopback(struct in_addr a)
{
    return (ntohl(a.s_addr) >> 24) == 127;
}

int
conn_ctx_init(struct conn_ctx *ctx, struct event_base *base, const char *host, int port,
              const char *first_source, int nsources, double timeout_s, char *err, size_t errlen)
{
    struct timeval tv;

    memset(ctx, 0, sizeof(*ctx));
    ctx->base = base;
    ctx->server.sin_family = AF_INET;
    ctx->server.sin_port = htons((uint16_t)port);
    if (inet_pton(AF_INET, host, &ctx->server.sin_addr) != 1 || !loopback(ctx->server.sin_addr)) {
        snprintf(err, errlen, "%s: want a numeric loopback address (127.0.0.0/8)", host);
        return -1;
    }
    if (nsources < 0 || nsources > CONN_MAX_SOURCES) {
        snprintf(err, errlen, "--sources: 0 to %d", CONN_MAX_SOURCES);
        return -1;
    }
    if (nsources > 0) {
        struct in_addr a;

        if (inet_pton(AF_INET, first_source, &a) != 1 || !loopback(a)) {
            snprintf(err, errlen, "%s: want a numeric loopback source address", first_source);
            return -1;
        }
        for (int i = 0; i < nsources; i++) {
            ctx->source[i].s_addr = htonl(ntohl(a.s_addr) + (uint32_t)i);
            if (!loopback(ctx->source[i])) {
                snprintf(err, errlen, "%d source addresses from %s leave 127.0.0.0/8", nsources,
                         first_source);
                return -1;
            }
        }
    }
    ctx->nsources = nsources;
    snprintf(ctx->host, sizeof(ctx->host), "%s:%d", host, port);
    tv.tv_sec = (time_t)timeout_s;
    tv.tv_usec = (suseconds_t)((timeout_s - (double)tv.tv_sec) * 1e6);
    ctx->timeout = event_base_init_common_timeout(base, &tv);
    ctx->rbuf_size = RBUF_SIZE;
    ctx->rbuf = malloc(RBUF_SIZE);
    if (!ctx->timeout || !ctx->rbuf) {
        snprintf(err, errlen, "out of memory");
        free(ctx->rbuf);
        return -1;
    }
    return 0;
}

void
conn_ctx_free(struct conn_ctx *ctx)
{
    free(ctx->rbuf);
    ctx->rbuf = NULL;
}

static void on_io(evutil_socket_t fd, short what, void *arg);
static void on_timeout(evutil_socket_t fd, short what, void *arg);

void
conn_init(struct conn *c, struct conn_ctx *ctx, int source, conn_done_cb done)
{
    memset(c, 0, sizeof(*c));
    c->ctx = ctx;
    c->done = done;
    c->fd = -1;
    c->source = (uint16_t)(ctx->nsources ? source % ctx->nsources : 0);
    evtimer_assign(&c->tmo, ctx->base, on_timeout, c);
}

int
conn_busy(const struct conn *c)
{
    return c->state == CS_CONNECTING || c->state == CS_SENDING || c->state == CS_RECEIVING;
}

static void
watch(struct conn *c, short what)
{
    if (c->io_set)
        event_del(&c->io);
    c->io_set = 1;
    event_assign(&c->io, c->ctx->base, c->fd, what, on_io, c);
    event_add(&c->io, NULL);
}

static void
close_socket(struct conn *c)
{
    if (c->io_set) {
        event_del(&c->io);
        c->io_set = 0;
    }
    if (c->fd >= 0) {
        close(c->fd);
        c->fd = -1;
        c->ctx->open--;
    }
    c->state = CS_CLOSED;
}

void
conn_close(struct conn *c)
{
    close_socket(c);
    event_del(&c->tmo);
    free(c->out);
    c->out = NULL;
    free(c->body.buf);
    memset(&c->body, 0, sizeof(c->body));
}

/* The request is over: report it.  The callback may reuse c at once. */
static void
finish(struct conn *c, enum conn_err err, const char *why)
{
    struct conn_result r = {err, c->parser.status, c->sent_us, clock_now_us(), NULL, 0};

    event_del(&c->tmo);
    free(c->out);
    c->out = NULL;
    if (err != CONN_OK) {
        if (why)
            snprintf(c->ctx->last_error, sizeof(c->ctx->last_error), "%s: %s", conn_err_names[err],
                     why);
        close_socket(c);
    } else if (c->parser.close) {
        close_socket(c);
    } else {
        c->state = CS_IDLE;
    }
    if (c->keep_body) {
        r.body = c->body.buf ? c->body.buf : "";
        r.body_len = c->body.len;
    }
    c->done(c, &r);
    /* c may be in use again; the kept body belongs to the old request. */
    if (r.body && c->body.buf == r.body && !conn_busy(c)) {
        free(c->body.buf);
        memset(&c->body, 0, sizeof(c->body));
    }
}

static void
start_receiving(struct conn *c)
{
    c->state = CS_RECEIVING;
    httpc_init(&c->parser);
    free(c->body.buf);
    memset(&c->body, 0, sizeof(c->body));
}

/* Writes what is left of the request; 0 done or waiting, -1 failed. */
static int
send_some(struct conn *c)
{
    while (c->out_off < c->out_len) {
        ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL);

        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            watch(c, EV_WRITE);
            return 0;
        }
        if (n < 0)
            return -1;
        if (c->out_off == 0)
            c->sent_us = clock_now_us();
        c->out_off += (uint32_t)n;
    }
    free(c->out);
    c->out = NULL;
    if (c->state != CS_RECEIVING)
        start_receiving(c);
    watch(c, EV_READ | EV_PERSIST);
    return 0;
}

static int
start_connect(struct conn *c)
{
    struct conn_ctx *ctx = c->ctx;
    int one = 1;

    c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (c->fd < 0)
        return -1;
    ctx->open++;
    ctx->connects++;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (ctx->nsources) {
        struct sockaddr_in src = {.sin_family = AF_INET, .sin_addr = ctx->source[c->source]};

        /* The port is chosen at connect() from the whole 4-tuple. */
        setsockopt(c->fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof(one));
        if (bind(c->fd, (struct sockaddr *)&src, sizeof(src)) < 0)
            return -1;
    }
    if (connect(c->fd, (struct sockaddr *)&ctx->server, sizeof(ctx->server)) < 0 &&
        errno != EINPROGRESS)
        return -1;
    c->state = CS_CONNECTING;
    watch(c, EV_WRITE);
    return 0;
}

int
conn_request(struct conn *c, const char *req, size_t len, int keep_body)
{
    if (conn_busy(c))
        return -1;
    c->keep_body = (uint8_t)keep_body;
    c->sent_us = 0;
    c->out_len = (uint32_t)len;
    c->out_off = 0;
    event_add(&c->tmo, c->ctx->timeout);
    if (c->state == CS_IDLE) {
        ssize_t n = send(c->fd, req, len, MSG_NOSIGNAL);

        if (n == (ssize_t)len) {
            /* The usual case: all written at once, nothing copied. */
            c->sent_us = clock_now_us();
            start_receiving(c);
            return 0;
        }
        if (n > 0 || (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))) {
            if (n > 0) {
                c->sent_us = clock_now_us();
                c->out_off = (uint32_t)n;
            }
            start_receiving(c);
        } else {
            /* The server closed this idle connection: open another. */
            close_socket(c);
        }
    }
    if (!(c->out = malloc(len))) {
        snprintf(c->ctx->last_error, sizeof(c->ctx->last_error), "out of memory");
        return -1;
    }
    memcpy(c->out, req, len);
    if (c->state == CS_RECEIVING) {
        watch(c, EV_WRITE);
        return 0;
    }
    if (start_connect(c) < 0) {
        int e = errno;

        /* Reported from the loop, as promised: a zero timeout. */
        snprintf(c->ctx->last_error, sizeof(c->ctx->last_error), "connect: %s", strerror(e));
        close_socket(c);
        c->state = CS_CONNECTING;
        event_del(&c->tmo);
        event_add(&c->tmo, &(struct timeval){0, 0});
    }
    return 0;
}

static void
on_timeout(evutil_socket_t fd, short what, void *arg)
{
    struct conn *c = arg;

    (void)fd;
    (void)what;
    if (c->state == CS_CONNECTING)
        finish(c, CONN_ECONNECT, c->fd < 0 ? NULL : "connect timed out");
    else
        finish(c, CONN_ETIMEOUT, NULL);
}

static void
on_readable(struct conn *c)
{
    ssize_t n = recv(c->fd, c->ctx->rbuf, c->ctx->rbuf_size, 0);
    const char *why = NULL;
    size_t used;
    enum httpc_rc rc;

    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return;
    if (c->state == CS_IDLE) {
        /* EOF (or stray bytes) between requests: the server let it go. */
        close_socket(c);
        return;
    }
    if (n <= 0) {
        finish(c, CONN_ETRANSPORT, n == 0 ? "connection closed by the server" : strerror(errno));
        return;
    }
    rc = httpc_feed(&c->parser, c->ctx->rbuf, (size_t)n, &used, c->keep_body ? &c->body : NULL,
                    &why);
    if (rc == HTTPC_ERROR) {
        finish(c, CONN_ETRANSPORT, why);
    } else if (rc == HTTPC_DONE) {
        if (used != (size_t)n)
            c->parser.close = 1; /* bytes after the response: do not trust the socket */
        finish(c, CONN_OK, NULL);
    }
}

static void
on_io(evutil_socket_t fd, short what, void *arg)
{
    struct conn *c = arg;

    (void)fd;
    if (c->state == CS_CONNECTING) {
        int err = 0;
        socklen_t len = sizeof(err);

        if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
            err = errno;
        if (err) {
            finish(c, CONN_ECONNECT, strerror(err));
            return;
        }
        c->state = CS_SENDING;
        if (send_some(c) < 0)
            finish(c, CONN_ETRANSPORT, strerror(errno));
        return;
    }
    if ((what & EV_WRITE) && c->out) {
        if (send_some(c) < 0)
            finish(c, CONN_ETRANSPORT, strerror(errno));
        return;
    }
    if (what & EV_READ)
        on_readable(c);
}
