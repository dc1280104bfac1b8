/*
 * conn: the client connections of a worker.  See conn.h.  Every function
 * is given the worker's struct conn_set, or a record that names it.
 */
#include "config.h"

#include "worker/conn.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>

#include "common/log.h"
#include "worker/reqhead.h"

enum phase { FRESH, RECEIVING, BUSY, IDLE, LINGERING };

/* Counted as a request under way: what a draining worker waits for. */
#define IS_ACTIVE(p) ((p) == FRESH || (p) == RECEIVING || (p) == BUSY)

/*
 * Draining: a client that connected just before, or that holds a kept-alive
 * connection, has this long to begin a request; it is then served (with
 * "Connection: close").  Closing an idle kept-alive connection at once
 * would lose the request its client may be sending at that very moment.
 */
#define DRAIN_GRACE_MS 1000

/*
 * Lingering close, as nginx's lingering_close: how long a closed
 * connection's client may go silent, and how long in all, while what it
 * still sends is read and thrown away (see linger_begin).
 */
#define LINGER_IDLE_MS 5000
#define LINGER_TOTAL_MS 30000

struct conn {
    struct conn_set *set;     /* the worker's, which counts and limits it */
    struct conn *prev, *next; /* every record, attached or not */
    struct bufferevent *bev;
    struct evhttp_connection *evcon; /* NULL until attached */
    struct evbuffer_cb_entry *input_cb;
    struct event *deadline;
    struct event *linger; /* LINGERING: reads what the client still sends */
    enum phase phase;
    int fd;           /* LINGERING: taken from evhttp, ours to close */
    dev_t linger_dev; /* LINGERING: the socket's identity (linger_owned) */
    ino_t linger_ino;
    int was_cut;         /* shut down here: nothing more will be read */
    int retired;         /* closed here by a drain: lingers even with nothing unread */
    struct reqhead head; /* RECEIVING: the request header's size so far */
    int fault_seen;      /* head is REQHEAD_BAD: reject_framing is due */
    int from_accept;     /* FRESH: the header deadline runs from the accept */
    void (*hangup)(void *);
    void *hangup_arg;
};

static void
set_phase(struct conn *c, enum phase p)
{
    struct conn_set *s = c->set;

    s->active += IS_ACTIVE(p) - IS_ACTIVE(c->phase);
    s->lingering += (p == LINGERING) - (c->phase == LINGERING);
    c->phase = p;
}

struct conn *
conn_find(const struct conn_set *s, struct evhttp_connection *evcon)
{
    struct bufferevent *bev = evcon ? evhttp_connection_get_bufferevent(evcon) : NULL;
    int fd = bev ? (int)bufferevent_getfd(bev) : -1;

    if (fd < 0 || fd >= s->nfd || !s->byfd[fd] || s->byfd[fd]->evcon != evcon)
        return NULL;
    return s->byfd[fd];
}

/*
 * Shut the socket down rather than free the connection: evhttp reads the
 * end of the stream and frees it by its usual path, at a time of its own
 * choosing, so no callback of its can find it gone.
 */
static void
cut(struct conn *c)
{
    c->was_cut = 1;
    if (c->fd >= 0)
        shutdown(c->fd, SHUT_RDWR);
}

static void linger_end(struct conn *c);
static int has_unread(struct conn *c);
static void drain_close(struct conn *c);
static void give_grace(struct conn *c);
static void reject_header(struct conn *c);
static void reject_framing(struct conn *c);

static void
on_deadline(evutil_socket_t fd, short what, void *arg)
{
    struct conn *c = arg;
    const struct conn_set *s = c->set;

    (void)fd;
    (void)what;
    if (c->phase == LINGERING) {
        linger_end(c);
        return;
    }
    if (c->phase == RECEIVING && c->head.state == REQHEAD_TOO_LARGE) {
        reject_header(c);
        return;
    }
    if (c->phase == RECEIVING && c->head.state == REQHEAD_BAD) {
        reject_framing(c);
        return;
    }
    if (c->phase == FRESH && *s->draining) {
        drain_close(c);
        return;
    }
    if (c->phase == FRESH && c->evcon && !has_unread(c)) {
        /*
         * Not a byte since the accept: closed at once, through evhttp (this
         * runs from a timer, in no callback of its), as its idle timeout
         * closed it, rather than shut down and closed when evhttp reads
         * the end: a burst of such connections costs one step each.
         */
        log_debug("connection %d sent nothing within %ld s: closing it", c->fd,
                  (long)s->header_timeout.tv_sec);
        evhttp_connection_free(c->evcon); /* on_closed runs: nothing unread, no lingering */
        return;
    }
    if (c->phase == FRESH || c->phase == RECEIVING) {
        log_debug("connection %d sent no complete request within %ld s: closing it", c->fd,
                  (long)s->header_timeout.tv_sec);
        cut(c);
    }
}

/*
 * us stretched by a random part of up to an eighth.  Connections opened in
 * one burst (clients reconnecting after a restart, a load test's ramp)
 * would otherwise all time out in the same loop pass: closing 10,000
 * sockets at once held a worker's loop for about a second.  Stretched,
 * those closes are spread over that eighth (7.5 s for the default 60 s).
 */
static struct timeval
stretch(struct conn_set *s, int64_t us)
{
    uint64_t x = s->jitter_rng;
    struct timeval tv;

    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    s->jitter_rng = x;
    us += (int64_t)(x % (uint64_t)(us / 8 + 1));
    tv.tv_sec = (time_t)(us / 1000000);
    tv.tv_usec = (suseconds_t)(us % 1000000);
    return tv;
}

/*
 * evhttp gives every connection the same idle timeout, stretched here
 * (see stretch).
 *
 * evhttp 2.1 uses that one timeout for reads and writes alike; the write
 * side is send_timeout instead.  The bufferevent's write timeout is what
 * nginx's send_timeout is: it runs only while part of a reply waits to be
 * written and restarts at every write that makes progress, so it cuts a
 * client that stopped reading (or reads a byte now and then), not a slow
 * but steady one.  evhttp then frees the connection (see on_closed).
 * Nothing in evhttp sets a server connection's timeouts again.
 */
static void
set_timeouts(struct conn *c)
{
    struct conn_set *s = c->set;
    struct timeval tv;

    if (s->idle_us <= 0) {
        bufferevent_set_timeouts(c->bev, NULL, &s->send_timeout);
        return;
    }
    tv = stretch(s, s->idle_us);
    evhttp_connection_set_timeout_tv(c->evcon, &tv);
    bufferevent_set_timeouts(c->bev, &tv, &s->send_timeout);
}

/*
 * Reads the bytes of buf from `from` on into the request's header (see
 * reqhead.h), before evhttp reads any of them: this runs as they are added
 * to the buffer, and evhttp parses it after.  Over max_header_size, evhttp
 * must read no more of it (its own limit is a backstop above ours) and the
 * answer comes from the loop, at once: as a JSON 400 through http_dispatch
 * if evhttp completes the request from what it has already read, else
 * from reject_header.  A request whose framing is refused is taken out of
 * the buffer whole, this read and every later one, so evhttp never reads
 * the rest of it nor anything after it (what a proxy in front may take
 * for another request); reject_framing answers from the loop.
 */
static void
count_header(struct conn *c, struct evbuffer *buf, size_t from)
{
    static const struct timeval now = {0, 0};

    while (c->head.state == REQHEAD_MORE && from < evbuffer_get_length(buf)) {
        struct evbuffer_iovec v[4];
        struct evbuffer_ptr pos;
        int n;

        if (evbuffer_ptr_set(buf, &pos, from, EVBUFFER_PTR_SET) < 0 ||
            (n = evbuffer_peek(buf, -1, &pos, v, 4)) <= 0)
            return;
        for (int i = 0; i < n && i < 4; i++) {
            reqhead_feed(&c->head, v[i].iov_base, v[i].iov_len, c->set->max_header);
            from += v[i].iov_len;
        }
    }
    if (c->head.state == REQHEAD_TOO_LARGE) {
        bufferevent_disable(c->bev, EV_READ);
        evtimer_add(c->deadline, &now);
    } else if (c->head.state == REQHEAD_BAD) {
        evbuffer_drain(buf, evbuffer_get_length(buf));
        if (!c->fault_seen) {
            c->fault_seen = 1;
            bufferevent_disable(c->bev, EV_READ);
            evtimer_add(c->deadline, &now);
        }
    }
}

/*
 * A request has begun on c: its header deadline runs, its header is
 * counted.  The first request of a connection has had its deadline
 * running since the accept (see attach_pending), and keeps it.
 */
static void
begin_request(struct conn *c)
{
    if (!c->from_accept || !evtimer_pending(c->deadline, NULL))
        evtimer_add(c->deadline, &c->set->header_timeout);
    c->from_accept = 0;
    set_phase(c, RECEIVING);
    reqhead_reset(&c->head);
    c->fault_seen = 0;
}

/* Bytes arrived: the first of a request starts (or keeps) its deadline. */
static void
on_input(struct evbuffer *buf, const struct evbuffer_cb_info *info, void *arg)
{
    struct conn *c = arg;

    if (info->n_added == 0)
        return;
    if (c->phase == IDLE || c->phase == FRESH)
        begin_request(c);
    if (c->phase == RECEIVING)
        count_header(c, buf, evbuffer_get_length(buf) - info->n_added);
}

/* The lingering descriptor still names the socket taken (see linger_begin). */
static int
linger_owned(const struct conn *c)
{
    struct stat st;

    if (fstat(c->fd, &st) == 0 && st.st_dev == c->linger_dev && st.st_ino == c->linger_ino)
        return 1;
    log_error("connection %d: the lingering socket was closed under us (a libevent that "
              "closes what evhttp no longer holds?): letting it go",
              c->fd);
    return 0;
}

static void
record_free(struct conn *c)
{
    struct conn_set *s = c->set;

    if (c->prev)
        c->prev->next = c->next;
    else
        s->all = c->next;
    if (c->next)
        c->next->prev = c->prev;
    if (c->fd >= 0 && c->fd < s->nfd && s->byfd[c->fd] == c)
        s->byfd[c->fd] = NULL;
    if (c->deadline)
        event_free(c->deadline);
    if (c->linger) {
        event_free(c->linger);
        if (c->fd >= 0 && linger_owned(c))
            close(c->fd);
    }
    set_phase(c, IDLE);
    s->n--;
    free(c);
    if (s->full && s->n < s->cap) {
        s->full = 0;
        if (s->notify)
            s->notify(CONN_ROOM, s->arg);
    } else if (s->notify) {
        s->notify(CONN_SETTLED, s->arg); /* a draining worker may be done */
    }
}

static void
linger_end(struct conn *c)
{
    log_debug("connection %d: lingering close done", c->fd);
    record_free(c);
}

/* Reads what the client still sends, to throw it away, until it is done. */
static void
on_linger(evutil_socket_t fd, short what, void *arg)
{
    /* Static only to keep 16 kB off the stack: it holds nothing, what is read is thrown away. */
    static char sink[16384];
    struct conn *c = arg;

    if (what & EV_TIMEOUT) { /* silent for LINGER_IDLE_MS */
        linger_end(c);
        return;
    }
    if (!linger_owned(c)) {
        c->fd = -1; /* someone else's now: record_free closes nothing */
        record_free(c);
        return;
    }
    /* A bounded number of reads a pass: a fast sender cannot hold the loop. */
    for (int i = 0; i < 16; i++) {
        ssize_t n = read(fd, sink, sizeof(sink));
        if (n > 0)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
            return;
        linger_end(c); /* end of stream, or an error: the client is done */
        return;
    }
}

/* Bytes the client sent that nobody read: in evhttp's buffer or the kernel's. */
static int
has_unread(struct conn *c)
{
    int pending = 0;

    if (c->bev && evbuffer_get_length(bufferevent_get_input(c->bev)) > 0)
        return 1;
    return ioctl(c->fd, FIONREAD, &pending) == 0 && pending > 0;
}

/*
 * Called as evhttp is about to close a connection.  If its client may
 * still be sending (evhttp answered 413 or 400 before the end of the
 * request, or the client sent more after a "Connection: close"), closing
 * the socket with bytes unread makes the kernel answer with a reset,
 * which can reach the client before it has read the reply: curl, still
 * uploading a too-large body, reports "connection reset" instead of the
 * 413.  So the socket is kept open: its descriptor is taken from evhttp
 * (its bufferevent is left with none, so freeing it closes nothing), its
 * sending side is shut (the client reads the reply,
 * then the end of the stream), and what the client still sends is read
 * and thrown away until it closes its side, is silent for LINGER_IDLE_MS
 * or LINGER_TOTAL_MS have passed.  The record stays counted against
 * max_connections (it holds a descriptor) but not as a request under way.
 * Taken, not duplicated: the loop batches its epoll changes (worker.c,
 * loop_new), and a duplicate would keep the socket open past evhttp's
 * close while its registration, not yet removed, named the closed number.
 * That evhttp closes nothing once the bufferevent has no descriptor is
 * libevent 2.1's evhttp_connection_free (it closes only through the
 * bufferevent, which conn_bevcb made with BEV_OPT_CLOSE_ON_FREE); should
 * another release close it anyway, on_linger sees another socket there
 * (linger_owned) and lets go without reading or closing it.
 * Returns 1 if the connection lingers (the record is kept), 0 otherwise.
 */
static int
linger_begin(struct conn *c)
{
    struct timeval idle = {LINGER_IDLE_MS / 1000, (LINGER_IDLE_MS % 1000) * 1000};
    struct timeval total = {LINGER_TOTAL_MS / 1000, (LINGER_TOTAL_MS % 1000) * 1000};
    struct conn_set *s = c->set;
    struct stat st;

    if (c->was_cut || c->fd < 0 || (c->phase != RECEIVING && !c->retired && !has_unread(c)))
        return 0;
    if (!c->bev || fstat(c->fd, &st) < 0)
        return 0;
    c->linger = event_new(s->base, c->fd, EV_READ | EV_PERSIST, on_linger, c);
    if (!c->linger || event_add(c->linger, &idle) < 0 || bufferevent_setfd(c->bev, -1) < 0) {
        if (c->linger)
            event_free(c->linger);
        c->linger = NULL;
        return 0; /* still evhttp's, which closes it: a reset it is */
    }
    c->linger_dev = st.st_dev;
    c->linger_ino = st.st_ino;
    shutdown(c->fd, SHUT_WR);
    if (c->fd < s->nfd && s->byfd[c->fd] == c)
        s->byfd[c->fd] = NULL; /* no longer evhttp's connection */
    log_debug("connection %d closes with the client still sending: lingering", c->fd);
    c->evcon = NULL;
    c->bev = NULL; /* evhttp frees it right after this callback */
    set_phase(c, LINGERING);
    evtimer_add(c->deadline, &total);
    return 1;
}

/*
 * A connection closed with part of its reply unwritten (its client took
 * none of it for send_timeout, or left) is reset: a plain close would have
 * the kernel go on trickling what it holds to a slow reader, up to
 * megabytes of socket buffer per connection, long after the worker gave up.
 */
static void
reset_if_unsent(struct conn *c)
{
    struct linger reset = {1, 0};
    size_t unsent = c->bev ? evbuffer_get_length(bufferevent_get_output(c->bev)) : 0;

    if (unsent == 0 || c->fd < 0)
        return;
    log_debug("connection %d closes with %zu byte(s) of its reply unsent (send_timeout %ld s): "
              "resetting it",
              c->fd, unsent, (long)c->set->send_timeout.tv_sec);
    setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
    c->was_cut = 1; /* no lingering close either */
}

/* evhttp frees the connection: exactly once, whatever the cause. */
static void
on_closed(struct evhttp_connection *evcon, void *arg)
{
    struct conn *c = arg;
    const struct conn_set *s = c->set;
    void (*hangup)(void *) = c->hangup;

    (void)evcon;
    reset_if_unsent(c);
    if (c->input_cb)
        evbuffer_remove_cb_entry(bufferevent_get_input(c->bev), c->input_cb);
    c->input_cb = NULL;
    c->hangup = NULL;
    if (hangup)
        hangup(c->hangup_arg);
    if (linger_begin(c)) {
        if (s->notify)
            s->notify(CONN_SETTLED,
                      s->arg); /* no longer under way: a draining worker may be done */
        return;
    }
    record_free(c);
}

/*
 * Runs in the same loop pass as the accepts, before any read: evhttp has
 * set each new bufferevent's callbacks with its connection as their
 * argument, which is how the connection is found.
 */
static void
attach_pending(evutil_socket_t fd, short what, void *arg)
{
    struct conn_set *s = arg;
    struct conn *c, *next;

    (void)fd;
    (void)what;
    for (c = s->all; c && s->pending > 0; c = next) {
        bufferevent_event_cb eventcb = NULL;
        void *cbarg = NULL;

        next = c->next;
        if (c->evcon || !c->bev)
            continue;
        s->pending--;
        bufferevent_getcb(c->bev, NULL, NULL, &eventcb, &cbarg);
        if (!eventcb || !cbarg ||
            evhttp_connection_get_bufferevent((struct evhttp_connection *)cbarg) != c->bev) {
            /* evhttp gave up on it already (out of memory): nothing to track. */
            bufferevent_decref(c->bev);
            c->bev = NULL;
            record_free(c);
            continue;
        }
        c->evcon = cbarg;
        c->fd = (int)bufferevent_getfd(c->bev);
        if (c->fd >= 0 && c->fd < s->nfd)
            s->byfd[c->fd] = c;
        evhttp_connection_set_closecb(c->evcon, on_closed, c);
        set_timeouts(c);
        /*
         * The header deadline starts now, as nginx's client_header_timeout
         * does: a client that connects and sends nothing is closed then,
         * not at the idle timeout, which is for kept-alive connections
         * between requests.  Stretched as the idle timeout is (a burst of
         * connections that never send is closed over an eighth of it).
         * Accepted while a drain closes its listeners: served like an
         * idle one.
         */
        if (*s->draining) {
            give_grace(c);
        } else {
            struct timeval tv = stretch(s, (int64_t)s->header_timeout.tv_sec * 1000000);
            c->from_accept = 1;
            evtimer_add(c->deadline, &tv);
        }
        c->input_cb = evbuffer_add_cb(bufferevent_get_input(c->bev), on_input, c);
        bufferevent_decref(c->bev); /* evhttp's own reference keeps it */
    }
}

struct bufferevent *
conn_bevcb(struct event_base *base, void *arg)
{
    struct conn_set *s = arg;
    struct conn *c = calloc(1, sizeof(*c));

    if (!c)
        return NULL;
    c->set = s;
    c->bev = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
    c->deadline = evtimer_new(base, on_deadline, c);
    if (!c->bev || !c->deadline) {
        if (c->bev)
            bufferevent_free(c->bev);
        if (c->deadline)
            event_free(c->deadline);
        free(c);
        return NULL;
    }
    /* Held until attached, so a connection evhttp drops at once stays readable. */
    bufferevent_incref(c->bev);
    c->fd = -1;
    c->phase = IDLE;
    /* Until its first byte it is fresh: the header deadline closes it (see attach_pending). */
    set_phase(c, FRESH);
    c->next = s->all;
    if (s->all)
        s->all->prev = c;
    s->all = c;
    s->n++;
    s->pending++;
    event_active(s->attach, EV_TIMEOUT, 0);
    if (!s->full && s->n >= s->cap) {
        struct timeval now;
        s->full = 1;
        /* Under a flood the cap is hit again and again: say so once a minute. */
        event_base_gettimeofday_cached(base, &now);
        if (now.tv_sec - s->last_full_log >= 60) {
            s->last_full_log = now.tv_sec;
            log_warning("%d connections open, the most this worker takes (max_connections): "
                        "pausing accepts until one closes",
                        s->n);
        }
        if (s->notify)
            s->notify(CONN_FULL, s->arg);
    }
    return c->bev;
}

/*
 * Draining, a connection with no request under way has DRAIN_GRACE_MS to
 * begin one (it is then served, with "Connection: close"), and the drain
 * waits for it.  That is every idle kept-alive connection when the drain
 * begins, and every one whose reply was written after: a reply begun
 * before the drain went out without "Connection: close", so its client,
 * rightly, sends its next request on the same connection.  Cutting such a
 * connection at once lost that request (the client read the end of the
 * stream instead of an answer) or, worse, the request still reached evhttp
 * from the socket's buffer and was run, a comment stored, with no way left
 * to answer it.
 */
static void
give_grace(struct conn *c)
{
    struct timeval grace = {DRAIN_GRACE_MS / 1000, (DRAIN_GRACE_MS % 1000) * 1000};

    set_phase(c, FRESH);
    c->from_accept = 0;
    evtimer_add(c->deadline, &grace);
}

/*
 * The grace is over and no byte of a request came, or so evhttp thinks:
 * the first bytes may be in the socket, unread, in this very loop pass,
 * and then the request has begun (it gets the header deadline, and is
 * served).  Otherwise the connection is closed the way its client can
 * tell before it sends: through evhttp, which frees it at once (this runs
 * from a timer, in no callback of evhttp's), and with a lingering close
 * (see linger_begin), so a request its client sent at that very moment is
 * read and thrown away, never run, and the client reads the end of the
 * stream rather than a reset.
 */
static void
drain_close(struct conn *c)
{
    if (!c->evcon)
        return; /* never attached: evhttp has dropped it already */
    if (has_unread(c)) {
        begin_request(c);
        return;
    }
    log_debug("connection %d idle through the drain's grace: closing it", c->fd);
    c->retired = 1;
    evhttp_connection_free(c->evcon); /* on_closed runs: c lingers or is freed */
}

/*
 * A header over max_header_size that evhttp has not completed: the client
 * gets the JSON 400, written straight to the socket (no request is under
 * way, so evhttp has nothing of its own to write on it), and a lingering
 * close, as it may still be sending the rest.  Unless evhttp found the
 * header malformed in the same read and is sending its own 400 already:
 * that one then goes alone, and evhttp closes after it.
 */
static void
reject_header(struct conn *c)
{
    const struct conn_set *s = c->set;
    size_t len = evbuffer_get_length(s->header_reject);

    if (evbuffer_get_length(bufferevent_get_output(c->bev)) > 0)
        return;

    log_debug("connection %d: request header over %zu bytes: 400", c->fd, s->max_header);
    if (send(c->fd, evbuffer_pullup(s->header_reject, -1), len, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
        log_debug("connection %d: cannot send the 400: %s", c->fd, strerror(errno));
    c->retired = 1;
    evhttp_connection_free(c->evcon); /* on_closed runs: c lingers */
}

/*
 * A request reqhead refused: the client gets its error (400, or 501 or
 * 505), written straight to the socket as reject_header does, and a
 * lingering close.  Should evhttp have a reply of its own under way (a
 * "100 Continue", or its 400 for a request line it could not parse, after
 * which it closes), that goes first, and this looks again shortly.
 */
static void
reject_framing(struct conn *c)
{
    static const struct timeval soon = {0, 50000};
    struct evbuffer *reply = c->set->fault_reply[c->head.fault];

    if (evbuffer_get_length(bufferevent_get_output(c->bev)) > 0) {
        evtimer_add(c->deadline, &soon);
        return;
    }
    log_debug("connection %d: %s: %d", c->fd, reqhead_fault_str(c->head.fault),
              reqhead_fault_status(c->head.fault));
    if (reply && send(c->fd, evbuffer_pullup(reply, -1), evbuffer_get_length(reply),
                      MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
        log_debug("connection %d: cannot send the %d: %s", c->fd,
                  reqhead_fault_status(c->head.fault), strerror(errno));
    c->retired = 1;
    evhttp_connection_free(c->evcon); /* on_closed runs: c lingers */
}

void
conn_request_begin(struct conn *c, void (*hangup)(void *), void *arg)
{
    if (!c)
        return;
    evtimer_del(c->deadline);
    set_phase(c, BUSY);
    c->hangup = hangup;
    c->hangup_arg = arg;
}

void
conn_set_hangup(struct conn *c, void (*hangup)(void *), void *arg)
{
    if (!c)
        return;
    c->hangup = hangup;
    c->hangup_arg = arg;
}

void
conn_request_end(struct conn_set *s, struct evhttp_connection *evcon)
{
    struct conn *c = conn_find(s, evcon);

    if (!c)
        return;
    c->hangup = NULL;
    if (evbuffer_get_length(bufferevent_get_input(c->bev)) > 0) {
        /* The next request (pipelined) has begun already. */
        begin_request(c);
        count_header(c, bufferevent_get_input(c->bev), 0);
        return;
    }
    set_phase(c, IDLE);
    if (*s->draining)
        give_grace(c);
    else if (s->notify)
        s->notify(CONN_SETTLED, s->arg);
}

void
conn_drain(struct conn_set *s)
{
    for (struct conn *c = s->all; c; c = c->next)
        if (c->phase == IDLE || c->phase == FRESH)
            give_grace(c);
}

int
conn_count(const struct conn_set *s)
{
    return s->n;
}

int
conn_active(const struct conn_set *s)
{
    return s->active;
}

int
conn_lingering(const struct conn_set *s)
{
    return s->lingering;
}

void
conn_set_max_header(struct conn_set *s, size_t max, struct evbuffer *reply)
{
    if (s->header_reject)
        evbuffer_free(s->header_reject);
    s->max_header = reply ? max : 0;
    s->header_reject = reply;
}

void
conn_set_fault_reply(struct conn_set *s, enum reqhead_fault f, struct evbuffer *reply)
{
    if ((unsigned)f >= REQHEAD_NFAULTS) {
        if (reply)
            evbuffer_free(reply);
        return;
    }
    if (s->fault_reply[f])
        evbuffer_free(s->fault_reply[f]);
    s->fault_reply[f] = reply;
}

int
conn_header_too_large(const struct conn *c)
{
    return c && c->head.state == REQHEAD_TOO_LARGE;
}

int
conn_peer_closed(const struct conn *c)
{
    char b;
    ssize_t n;

    if (!c || c->fd < 0)
        return 0;
    n = recv(c->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
    return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

void
conn_abort(struct conn_set *s, struct evhttp_connection *evcon)
{
    struct conn *c = conn_find(s, evcon);

    if (c)
        c->was_cut = 1;            /* the client is gone: nothing to linger for */
    evhttp_connection_free(evcon); /* on_closed runs */
}

int
conn_is_cut(const struct conn *c)
{
    return c && c->was_cut;
}

int
conn_init(struct conn_set *s, struct event_base *base, int cap, int header_timeout,
          int idle_timeout, int send_timeout, const int *draining,
          void (*notify)(enum conn_news news, void *arg), void *arg)
{
    struct rlimit rl;

    memset(s, 0, sizeof(*s));
    s->base = base;
    s->cap = cap;
    s->header_timeout.tv_sec = header_timeout;
    s->send_timeout.tv_sec = send_timeout;
    s->idle_us = idle_timeout > 0 ? (int64_t)idle_timeout * 1000000 : 0;
    s->jitter_rng = ((uint64_t)getpid() << 32 ^ (uint64_t)time(NULL)) | 1;
    s->draining = draining;
    s->notify = notify;
    s->arg = arg;
    s->nfd =
        getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (1u << 20) ? (int)rl.rlim_cur : 1 << 20;
    s->byfd = calloc((size_t)s->nfd, sizeof(*s->byfd));
    s->attach = event_new(base, -1, 0, attach_pending, s);
    if (!s->byfd || !s->attach) {
        conn_shutdown(s);
        return -1;
    }
    return 0;
}

/* After evhttp_free(): only records that were never attached are left. */
void
conn_shutdown(struct conn_set *s)
{
    s->notify = NULL;
    while (s->all) {
        struct conn *c = s->all;
        if (c->bev && !c->evcon)
            bufferevent_decref(c->bev);
        c->bev = NULL;
        record_free(c);
    }
    if (s->attach)
        event_free(s->attach);
    if (s->header_reject)
        evbuffer_free(s->header_reject);
    for (int f = 0; f < REQHEAD_NFAULTS; f++)
        if (s->fault_reply[f])
            evbuffer_free(s->fault_reply[f]);
    free(s->byfd);
    memset(s, 0, sizeof(*s));
}
