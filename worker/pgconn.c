/*
 * pgconn: see pgconn.h.
 *
 * States: DOWN (the retry timer runs), CONNECTING (PQconnectPoll steps on
 * socket events, the deadline timer runs for the host being tried), UP
 * (the owner's).  The host list is read from the connection string once,
 * so that an attempt can be started again from any host of it: libpq
 * keeps no per-host timeout for asynchronous connections, so when one
 * host does not answer in time, the attempt goes on with a new PGconn
 * whose list starts at the host after it (the hosts before it were tried
 * and failed already: libpq tries them in order).
 */
#include "config.h"

#include "worker/pgconn.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <event2/event.h>

#include "common/log.h"

enum pgconn_state { PGCONN_DOWN, PGCONN_CONNECTING, PGCONN_UP };

/* One comma-separated libpq list (host, hostaddr, port), split. */
struct pg_list {
    char **v;
    int n;
};

struct pgconn {
    struct event_base *base;
    const struct pgconn_ops *ops;
    void *arg;
    char *conninfo;
    char *session_attrs;
    char *appname;
    char *options;
    int backoff_min_ms, backoff_max_ms, backoff_ms;
    int timeout_ms;
    struct pg_list hosts, addrs, ports;
    int nhosts; /* entries in the host (or hostaddr) list; 0: libpq's default */

    enum pgconn_state state;
    PGconn *pg;
    int first;             /* the list index this attempt's PGconn starts at */
    int at;                /* the list index of the host being tried */
    struct event *ev;      /* on the socket; NULL when not watching */
    int fd;                /* the socket the event watches ... */
    dev_t dev;             /* ... and which file it was, since a new */
    ino_t ino;             /* socket may reuse the number */
    short what;            /* the events watched */
    struct event *retry;   /* DOWN: the next attempt */
    struct event *timeout; /* CONNECTING: the host being tried is given up */
    char where[256];
};

static void start_at(struct pgconn *pc, int first);

static void
list_free(struct pg_list *l)
{
    for (int i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    l->v = NULL;
    l->n = 0;
}

/* Splits s at commas (NULL or "": an empty list).  0, or -1 out of memory. */
static int
list_split(struct pg_list *l, const char *s)
{
    const char *p = s;

    l->v = NULL;
    l->n = 0;
    if (!s || !*s)
        return 0;
    for (;;) {
        size_t len = strcspn(p, ",");
        char **v = realloc(l->v, (size_t)(l->n + 1) * sizeof(*v));
        if (!v)
            return -1;
        l->v = v;
        if (!(l->v[l->n] = strndup(p, len)))
            return -1;
        l->n++;
        if (p[len] == '\0')
            return 0;
        p += len + 1;
    }
}

/* The entries of l from first on, joined by commas; NULL when out of memory. */
static char *
list_join_from(const struct pg_list *l, int first)
{
    size_t size = 1;
    char *s;

    for (int i = first; i < l->n; i++)
        size += strlen(l->v[i]) + 1;
    if (!(s = malloc(size)))
        return NULL;
    s[0] = '\0';
    for (int i = first; i < l->n; i++) {
        if (i > first)
            strcat(s, ",");
        strcat(s, l->v[i]);
    }
    return s;
}

/*
 * libpq's value of a keyword: the connection string's, else the
 * environment's (PGHOST and the others are libpq's defaults too).
 */
static const char *
conn_value(const PQconninfoOption *opts, const char *key, const char *env)
{
    for (const PQconninfoOption *o = opts; o && o->keyword; o++)
        if (strcmp(o->keyword, key) == 0 && o->val && *o->val)
            return o->val;
    return getenv(env);
}

/*
 * The host lists and connect_timeout.  A string without "=" and not a URI
 * is a database name (libpq expands only those), so it names no host.
 */
static int
read_conninfo(struct pgconn *pc, char *why, size_t whylen)
{
    const char *ci = pc->conninfo;
    PQconninfoOption *opts = NULL;
    const char *timeout;
    int n;

    if (strchr(ci, '=') || strncmp(ci, "postgresql://", 13) == 0 ||
        strncmp(ci, "postgres://", 11) == 0) {
        char *err = NULL;
        opts = PQconninfoParse(ci, &err);
        if (!opts) {
            snprintf(why, whylen, "%s", err ? err : "out of memory");
            why[strcspn(why, "\n")] = '\0';
            PQfreemem(err);
            return -1;
        }
    }
    if (list_split(&pc->hosts, conn_value(opts, "host", "PGHOST")) < 0 ||
        list_split(&pc->addrs, conn_value(opts, "hostaddr", "PGHOSTADDR")) < 0 ||
        list_split(&pc->ports, conn_value(opts, "port", "PGPORT")) < 0) {
        PQconninfoFree(opts);
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    n = pc->hosts.n > pc->addrs.n ? pc->hosts.n : pc->addrs.n;
    pc->nhosts = n;
    /* libpq's rule: 0 or less waits for ever, and less than 2 s is 2 s. */
    timeout = conn_value(opts, "connect_timeout", "PGCONNECT_TIMEOUT");
    if (timeout) {
        int s = atoi(timeout);
        pc->timeout_ms = s <= 0 ? 0 : s < 2 ? 2000 : s * 1000;
    } else {
        pc->timeout_ms = PGCONN_TIMEOUT_DEFAULT_MS;
    }
    PQconninfoFree(opts);
    return 0;
}

const char *
pgconn_error(PGconn *pg, char *buf, size_t len)
{
    const char *m = pg ? PQerrorMessage(pg) : "";
    size_t o = 0;

    /* libpq writes a line per host tried, and hints on lines of their own. */
    while (*m && o + 3 < len) {
        if (*m == '\n') {
            while (*m == '\n' || *m == '\t' || *m == ' ')
                m++;
            if (*m && o > 0) {
                buf[o++] = ';';
                buf[o++] = ' ';
            }
            continue;
        }
        buf[o++] = *m++;
    }
    buf[o] = '\0';
    return buf;
}

static void
unwatch(struct pgconn *pc)
{
    if (pc->ev)
        event_free(pc->ev);
    pc->ev = NULL;
    pc->fd = -1;
    pc->what = 0;
}

/* Back to DOWN, the PGconn closed.  Timers are the caller's business. */
static void
close_pg(struct pgconn *pc)
{
    unwatch(pc);
    event_del(pc->timeout);
    if (pc->pg)
        PQfinish(pc->pg);
    pc->pg = NULL;
    pc->state = PGCONN_DOWN;
}

static void
fail(struct pgconn *pc, const char *why)
{
    pc->ops->failed(pc->arg, why);
}

static void
fail_pq(struct pgconn *pc, const char *otherwise)
{
    char why[512];

    pgconn_error(pc->pg, why, sizeof(why));
    fail(pc, why[0] ? why : otherwise);
}

static void on_socket(evutil_socket_t fd, short what, void *arg);

static int
make_event(struct pgconn *pc, int fd, short what)
{
    unwatch(pc);
    pc->ev = event_new(pc->base, fd, what | EV_PERSIST, on_socket, pc);
    if (!pc->ev || event_add(pc->ev, NULL) < 0)
        return -1;
    pc->fd = fd;
    pc->what = what;
    return 0;
}

/* The list index PQhost and PQport name, from the one being tried on. */
static void
find_host(struct pgconn *pc)
{
    const char *h = PQhost(pc->pg), *p = PQport(pc->pg);

    snprintf(pc->where, sizeof(pc->where), "%s:%s", h ? h : "?", p ? p : "?");
    if (!h)
        return;
    for (int i = pc->at; i < pc->nhosts; i++) {
        const char *name = i < pc->hosts.n && pc->hosts.v[i][0] ? pc->hosts.v[i]
                           : i < pc->addrs.n                    ? pc->addrs.v[i]
                                                                : "";
        const char *port = pc->ports.n == pc->nhosts ? pc->ports.v[i]
                           : pc->ports.n == 1        ? pc->ports.v[0]
                                                     : NULL;
        if (strcmp(name, h) == 0 && (!port || !p || strcmp(port, p) == 0)) {
            pc->at = i;
            return;
        }
    }
}

static void
arm_timeout(struct pgconn *pc)
{
    struct timeval tv = {pc->timeout_ms / 1000, (pc->timeout_ms % 1000) * 1000};

    if (pc->timeout_ms > 0)
        evtimer_add(pc->timeout, &tv);
}

/*
 * While connecting: watch the socket libpq has now, for what.  A socket
 * not seen before is an attempt at the next host or address: its own
 * deadline, and a new event in any case (with libevent's batched epoll
 * changes, deleting and adding the same number in one pass becomes a
 * modify, which the kernel refuses for a socket it does not know, and
 * libevent then adds: so the new socket is watched even under the old
 * number).
 */
static int
watch_connecting(struct pgconn *pc, short what)
{
    int fd = PQsocket(pc->pg);
    struct stat sb;

    if (fd < 0 || fstat(fd, &sb) < 0)
        return -1;
    if (fd != pc->fd || sb.st_ino != pc->ino || sb.st_dev != pc->dev) {
        find_host(pc);
        arm_timeout(pc);
        pc->dev = sb.st_dev;
        pc->ino = sb.st_ino;
    }
    return make_event(pc, fd, what);
}

static void
step(struct pgconn *pc)
{
    switch (PQconnectPoll(pc->pg)) {
    case PGRES_POLLING_READING:
        if (watch_connecting(pc, EV_READ) < 0)
            fail(pc, "no socket");
        return;
    case PGRES_POLLING_WRITING:
        if (watch_connecting(pc, EV_WRITE) < 0)
            fail(pc, "no socket");
        return;
    case PGRES_POLLING_OK:
        event_del(pc->timeout);
        find_host(pc);
        pc->state = PGCONN_UP;
        pc->ops->up(pc->arg);
        return;
    default:
        fail_pq(pc, "connection failed");
        return;
    }
}

static void
on_socket(evutil_socket_t fd, short what, void *arg)
{
    struct pgconn *pc = arg;

    (void)fd;
    if (pc->state == PGCONN_CONNECTING)
        step(pc);
    else if (pc->state == PGCONN_UP)
        pc->ops->io(pc->arg, what);
}

/*
 * The host being tried took longer than the timeout: the next one of the
 * list, at once, or the attempt has failed.
 */
static void
on_timeout(evutil_socket_t fd, short what, void *arg)
{
    struct pgconn *pc = arg;
    char why[300];

    (void)fd;
    (void)what;
    if (pc->state != PGCONN_CONNECTING)
        return;
    snprintf(why, sizeof(why), "%s: no answer within %d ms (connect_timeout)", pc->where,
             pc->timeout_ms);
    if (pc->at + 1 < pc->nhosts) {
        log_info("%s: %s; trying the next host", pc->appname, why);
        close_pg(pc);
        start_at(pc, pc->at + 1);
        return;
    }
    fail(pc, why);
}

static void
on_retry(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    pgconn_start(arg);
}

/*
 * A new PGconn whose host list starts at first.  Keywords before dbname
 * are defaults that the expanded connection string overrides; after it,
 * they override it.
 */
static void
start_at(struct pgconn *pc, int first)
{
    const char *keys[8], *vals[8];
    char *host = NULL, *addr = NULL, *port = NULL;
    int n = 0;

    if (pc->session_attrs) {
        keys[n] = "target_session_attrs";
        vals[n++] = pc->session_attrs;
    }
    keys[n] = "dbname";
    vals[n++] = pc->conninfo;
    keys[n] = "fallback_application_name";
    vals[n++] = pc->appname;
    if (pc->options) {
        keys[n] = "options";
        vals[n++] = pc->options;
    }
    if (first > 0) {
        if (pc->hosts.n > first && (host = list_join_from(&pc->hosts, first))) {
            keys[n] = "host";
            vals[n++] = host;
        }
        if (pc->addrs.n > first && (addr = list_join_from(&pc->addrs, first))) {
            keys[n] = "hostaddr";
            vals[n++] = addr;
        }
        if (pc->ports.n == pc->nhosts && (port = list_join_from(&pc->ports, first))) {
            keys[n] = "port";
            vals[n++] = port;
        }
    }
    keys[n] = vals[n] = NULL;

    pc->first = first;
    pc->at = first;
    pc->fd = -1;
    pc->state = PGCONN_CONNECTING;
    snprintf(pc->where, sizeof(pc->where), "?");
    pc->pg = PQconnectStartParams(keys, vals, 1);
    free(host);
    free(addr);
    free(port);
    if (!pc->pg) {
        fail(pc, "out of memory");
        return;
    }
    if (PQstatus(pc->pg) == CONNECTION_BAD || PQsetnonblocking(pc->pg, 1) < 0) {
        fail_pq(pc, "cannot connect");
        return;
    }
    /* libpq: poll first as if PQconnectPoll had said PGRES_POLLING_WRITING. */
    if (watch_connecting(pc, EV_WRITE) < 0)
        fail(pc, "no socket");
}

void
pgconn_start(struct pgconn *pc)
{
    event_del(pc->retry);
    close_pg(pc);
    start_at(pc, 0);
}

void
pgconn_retry(struct pgconn *pc, int ms)
{
    struct timeval tv;

    close_pg(pc);
    if (ms <= 0) {
        pc->backoff_ms = pc->backoff_ms ? pc->backoff_ms * 2 : pc->backoff_min_ms;
        if (pc->backoff_ms > pc->backoff_max_ms)
            pc->backoff_ms = pc->backoff_max_ms;
        ms = pc->backoff_ms;
    }
    tv.tv_sec = ms / 1000;
    tv.tv_usec = (ms % 1000) * 1000;
    evtimer_add(pc->retry, &tv);
}

void
pgconn_reset_backoff(struct pgconn *pc)
{
    pc->backoff_ms = 0;
}

int
pgconn_watch(struct pgconn *pc, short what)
{
    int fd;

    if (pc->state != PGCONN_UP || (fd = PQsocket(pc->pg)) < 0)
        return -1;
    if (pc->ev && pc->fd == fd && pc->what == what)
        return 0;
    return make_event(pc, fd, what);
}

PGconn *
pgconn_pg(const struct pgconn *pc)
{
    return pc->state == PGCONN_UP ? pc->pg : NULL;
}

const char *
pgconn_where(const struct pgconn *pc)
{
    return pc->where;
}

int
pgconn_timeout_ms(const struct pgconn *pc)
{
    return pc->timeout_ms;
}

static char *
dup_or_null(const char *s, int *bad)
{
    char *d;

    if (!s)
        return NULL;
    if (!(d = strdup(s)))
        *bad = 1;
    return d;
}

struct pgconn *
pgconn_new(struct event_base *base, const struct pgconn_conf *conf, const struct pgconn_ops *ops,
           void *arg, char *why, size_t whylen)
{
    struct pgconn *pc = calloc(1, sizeof(*pc));
    int bad = 0;

    snprintf(why, whylen, "out of memory");
    if (!pc)
        return NULL;
    pc->base = base;
    pc->ops = ops;
    pc->arg = arg;
    pc->fd = -1;
    pc->backoff_min_ms = conf->backoff_min_ms;
    pc->backoff_max_ms = conf->backoff_max_ms;
    pc->conninfo = dup_or_null(conf->conninfo ? conf->conninfo : "", &bad);
    pc->session_attrs = dup_or_null(conf->session_attrs, &bad);
    pc->appname = dup_or_null(conf->appname ? conf->appname : "conduitd", &bad);
    pc->options = dup_or_null(conf->options, &bad);
    pc->retry = evtimer_new(base, on_retry, pc);
    pc->timeout = evtimer_new(base, on_timeout, pc);
    snprintf(pc->where, sizeof(pc->where), "?");
    if (bad || !pc->retry || !pc->timeout || read_conninfo(pc, why, whylen) < 0) {
        pgconn_free(pc);
        return NULL;
    }
    return pc;
}

void
pgconn_free(struct pgconn *pc)
{
    if (!pc)
        return;
    unwatch(pc);
    if (pc->pg)
        PQfinish(pc->pg);
    if (pc->retry)
        event_free(pc->retry);
    if (pc->timeout)
        event_free(pc->timeout);
    list_free(&pc->hosts);
    list_free(&pc->addrs);
    list_free(&pc->ports);
    free(pc->conninfo);
    free(pc->session_attrs);
    free(pc->appname);
    free(pc->options);
    free(pc);
}
