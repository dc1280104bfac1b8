/*
 * cache_sync: the listening connection.  See cache_sync.h.
 *
 * A small state machine on one libpq connection (pgconn.c connects it,
 * with its timeouts and backoff) and one timer: DOWN (pgconn connects, or
 * waits to try again), STARTING (LISTEN and the trigger check in flight),
 * LISTENING (notifications, and a keepalive query every KEEPALIVE_MS).  As
 * in db.c, no blocking libpq call runs on the loop.
 */
#include "config.h"

#include "worker/cache_sync.h"

#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include <event2/event.h>
#include <libpq-fe.h>

#include "common/log.h"
#include "worker/cache.h"
#include "worker/cache_peers.h"
#include "worker/pgconn.h"
#include "sql/direct.h"

#define BACKOFF_MIN_MS 50
#define BACKOFF_MAX_MS 2000
/* The schema lacks the triggers: nothing will change that soon. */
#define NO_TRIGGERS_RETRY_MS 30000
#define KEEPALIVE_MS 5000

/*
 * LISTEN first, then look for the triggers that send the notifications
 * (sql/direct.sql's cache_listen counts those of sql/schema.sql): a
 * database made before they existed would never invalidate anything, and
 * a cache that cannot be kept coherent stays off.
 */
#define TRIGGERS_EXPECTED 8

enum sync_state { SYNC_DOWN, SYNC_STARTING, SYNC_LISTENING };

struct cache_sync {
    struct event_base *base;
    struct cache *cache;
    struct pgconn *pc;
    PGconn *pg; /* pgconn_pg(pc) while connected, NULL while down */
    enum sync_state state;
    struct event *timer; /* the keepalive when LISTENING */
    int ping_outstanding;
    int64_t triggers; /* from the start query; -1 until read */
    int outage_logged;
    struct cache_peers *peers; /* hears the announcements: cache_sync_hear_peers() */

    uint64_t count;
    int64_t samples[CACHE_SYNC_SAMPLES];
    size_t nsamples, next;
    int64_t max_us;
};

static void on_timer(evutil_socket_t fd, short what, void *arg);

static int64_t
now_us(void)
{
    struct timeval tv;

    gettimeofday(&tv, NULL);
    return (int64_t)tv.tv_sec * 1000000 + tv.tv_usec;
}

static void
arm_timer(struct cache_sync *s, int ms)
{
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};

    evtimer_add(s->timer, &tv);
}

static int
watch(struct cache_sync *s, short what)
{
    return pgconn_watch(s->pc, what);
}

/* Deaf from now on: the cache goes off (and is cleared) before anything else. */
static void
broken(struct cache_sync *s, const char *why, int retry_ms)
{
    int was_listening = s->state == SYNC_LISTENING;

    cache_enable(s->cache, 0);
    if (was_listening || !s->outage_logged)
        log_warning("cache: listening connection %s: %s; the cache is off until it listens "
                    "again",
                    was_listening ? "lost" : "failed", why);
    s->outage_logged = 1;
    s->pg = NULL;
    s->state = SYNC_DOWN;
    s->ping_outstanding = 0;
    event_del(s->timer);
    pgconn_retry(s->pc, retry_ms);
}

static void
broken_pq(struct cache_sync *s, const char *fallback)
{
    char why[256];

    pgconn_error(s->pg, why, sizeof(why));
    broken(s, why[0] ? why : fallback, 0);
}

/* Sends a simple-protocol query; its results are read in on_socket. */
static int
send_query(struct cache_sync *s, const char *sql)
{
    int flush;

    if (!PQsendQuery(s->pg, sql))
        return -1;
    flush = PQflush(s->pg);
    return flush < 0 || watch(s, flush ? EV_READ | EV_WRITE : EV_READ) < 0 ? -1 : 0;
}

static void
record_delay(struct cache_sync *s, int64_t us)
{
    if (us < 0)
        us = 0;
    s->count++;
    s->samples[s->next] = us;
    s->next = (s->next + 1) % CACHE_SYNC_SAMPLES;
    if (s->nsamples < CACHE_SYNC_SAMPLES)
        s->nsamples++;
    if (us > s->max_us)
        s->max_us = us;
}

/* "<microseconds since 1970> <key>"; the key "*" means everything. */
static void
on_notification(struct cache_sync *s, const char *payload)
{
    char *end;
    long long at = strtoll(payload, &end, 10);

    if (end == payload || *end != ' ') {
        log_warning("cache: unexpected notification \"%.64s\": dropping the whole cache", payload);
        cache_clear(s->cache);
        return;
    }
    if (s->peers && cache_peers_heard(s->peers, end + 1))
        return; /* another instance's announcement, not a key */
    record_delay(s, now_us() - at);
    if (strcmp(end + 1, "*") == 0)
        cache_clear(s->cache);
    else
        cache_drop(s->cache, end + 1);
}

/* The start query (or a keepalive) finished: every result has been read. */
static void
command_done(struct cache_sync *s)
{
    if (s->state == SYNC_LISTENING) {
        s->ping_outstanding = 0;
        return;
    }
    /* SYNC_STARTING */
    if (s->triggers != TRIGGERS_EXPECTED) {
        log_error("cache: the database lacks the cache triggers of sql/schema.sql (found "
                  "%lld of %d): the cache stays off; recreate the database with this "
                  "version's schema",
                  (long long)s->triggers, TRIGGERS_EXPECTED);
        s->outage_logged = 1;
        broken(s, "no cache triggers", NO_TRIGGERS_RETRY_MS);
        return;
    }
    /*
     * Listening now: what changed while deaf was cleared when the
     * connection broke, and this worker's fills read before are refused.
     */
    cache_enable(s->cache, 1);
    s->state = SYNC_LISTENING;
    pgconn_reset_backoff(s->pc);
    if (s->outage_logged)
        log_notice("cache: listening again; the cache is on (cleared when this worker went "
                   "deaf; %s)",
                   pgconn_where(s->pc));
    else
        log_debug("cache: listening; the cache is on");
    s->outage_logged = 0;
    event_del(s->timer);
    arm_timer(s, KEEPALIVE_MS);
}

static void
read_results(struct cache_sync *s)
{
    PGnotify *n;

    if (!PQconsumeInput(s->pg)) {
        broken_pq(s, "connection lost");
        return;
    }
    while (!PQisBusy(s->pg)) {
        PGresult *r = PQgetResult(s->pg);
        if (!r) {
            if (s->state == SYNC_STARTING || s->ping_outstanding)
                command_done(s);
            if (s->state == SYNC_DOWN)
                return;
            break;
        }
        switch (PQresultStatus(r)) {
        case PGRES_COMMAND_OK:
            break;
        case PGRES_TUPLES_OK:
            if (s->state == SYNC_STARTING && PQntuples(r) == 1)
                s->triggers = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
            break;
        default: {
            char why[256];
            snprintf(why, sizeof(why), "%s", PQresultErrorMessage(r));
            why[strcspn(why, "\n")] = '\0';
            PQclear(r);
            broken(s, why[0] ? why : "query failed", 0);
            return;
        }
        }
        PQclear(r);
    }
    while ((n = PQnotifies(s->pg)) != NULL) {
        if (s->state == SYNC_LISTENING)
            on_notification(s, n->extra);
        PQfreemem(n);
    }
    if (PQstatus(s->pg) == CONNECTION_BAD)
        broken(s, "connection closed by the server", 0);
}

/* pgconn: connected; LISTEN and the trigger check go first. */
static void
on_up(void *arg)
{
    struct cache_sync *s = arg;

    s->pg = pgconn_pg(s->pc);
    s->state = SYNC_STARTING;
    s->triggers = -1;
    if (send_query(s, sql_direct[SQL_DIRECT_CACHE_LISTEN].text) < 0)
        broken_pq(s, "cannot send LISTEN");
}

/* pgconn: an attempt to connect failed. */
static void
on_failed(void *arg, const char *why)
{
    broken(arg, why, 0);
}

static void
on_io(void *arg, short what)
{
    struct cache_sync *s = arg;

    if (what & EV_WRITE) {
        int flush = PQflush(s->pg);
        if (flush < 0 || (flush == 0 && watch(s, EV_READ) < 0)) {
            broken(s, "write failed", 0);
            return;
        }
    }
    if (what & EV_READ)
        read_results(s);
}

static const struct pgconn_ops sync_ops = {
    .up = on_up,
    .io = on_io,
    .failed = on_failed,
};

/* LISTENING: the keepalive. */
static void
on_timer(evutil_socket_t fd, short what, void *arg)
{
    struct cache_sync *s = arg;

    (void)fd;
    (void)what;
    if (s->state != SYNC_LISTENING)
        return;
    if (s->ping_outstanding) {
        broken(s, "no answer to the keepalive query", 0);
        return;
    }
    if (send_query(s, sql_direct[SQL_DIRECT_CACHE_KEEPALIVE].text) < 0) {
        broken_pq(s, "cannot send the keepalive query");
        return;
    }
    s->ping_outstanding = 1;
    arm_timer(s, KEEPALIVE_MS);
}

struct cache_sync *
cache_sync_new(struct event_base *base, const char *conninfo, const char *appname,
               struct cache *cache)
{
    struct cache_sync *s = calloc(1, sizeof(*s));
    struct pgconn_conf conf = {
        .conninfo = conninfo,
        .appname = appname,
        .backoff_min_ms = BACKOFF_MIN_MS,
        .backoff_max_ms = BACKOFF_MAX_MS,
    };
    char why[256];

    if (!s)
        return NULL;
    s->base = base;
    s->cache = cache;
    s->timer = evtimer_new(base, on_timer, s);
    s->pc = pgconn_new(base, &conf, &sync_ops, s, why, sizeof(why));
    if (!s->pc || !s->timer) {
        if (!s->pc)
            log_error("cache: listening connection: %s", why);
        cache_sync_free(s);
        return NULL;
    }
    cache_enable(cache, 0);
    pgconn_start(s->pc);
    return s;
}

void
cache_sync_free(struct cache_sync *s)
{
    if (!s)
        return;
    if (s->timer)
        event_free(s->timer);
    pgconn_free(s->pc);
    free(s);
}

void
cache_sync_hear_peers(struct cache_sync *s, struct cache_peers *peers)
{
    s->peers = peers;
}

static int
cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

    return (x > y) - (x < y);
}

void
cache_sync_delays(const struct cache_sync *s, struct cache_sync_delays *out)
{
    int64_t *sorted;

    memset(out, 0, sizeof(*out));
    out->count = s->count;
    out->max_us = s->max_us;
    if (s->nsamples == 0 || !(sorted = malloc(s->nsamples * sizeof(*sorted))))
        return;
    memcpy(sorted, s->samples, s->nsamples * sizeof(*sorted));
    qsort(sorted, s->nsamples, sizeof(*sorted), cmp_i64);
    out->p50_us = sorted[(s->nsamples - 1) / 2];
    out->p99_us = sorted[(s->nsamples - 1) * 99 / 100];
    free(sorted);
}
