/*
 * cache_peers: announces silent writers, and hears them.  See cache_peers.h.
 */
#include "config.h"

#include "worker/cache_peers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include <event2/event.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/scoreboard.h"
#include "sql/queries.h"
#include "worker/db.h"

/* Cache keys never start with "!": the channel's announcements do. */
#define ANNOUNCE_PREFIX "!nonotify "
#define LOG_EVERY_MS 60000

struct cache_peers {
    struct db_pool *db;
    struct event *timer; /* NULL unless this worker announces */
    int in_flight;       /* one announcement at a time, however slow the pool */
    char self[96];
    char heard[96];    /* the last silent writer heard */
    int64_t heard_ms;  /* when (0: never) */
    int64_t logged_ms; /* the last error logged about it */
};

static void
on_announced(void *arg, enum db_status st, const PGresult *res)
{
    struct cache_peers *p = arg;

    (void)res;
    p->in_flight = 0;
    if (st != DB_OK)
        log_debug("cache: the announcement that this instance's writes send no cache "
                  "notifications was not sent (status %d); the next one follows",
                  (int)st);
}

static void
on_timer(evutil_socket_t fd, short what, void *arg)
{
    struct cache_peers *p = arg;
    struct timeval tv = {CACHE_PEERS_ANNOUNCE_MS / 1000, (CACHE_PEERS_ANNOUNCE_MS % 1000) * 1000};
    char payload[160];
    const char *params[1] = {payload};
    struct timeval now;

    (void)fd;
    (void)what;
    evtimer_add(p->timer, &tv);
    if (p->in_flight)
        return;
    gettimeofday(&now, NULL);
    /* The time first, as the triggers' payloads have it (cache_sync.c reads it). */
    snprintf(payload, sizeof(payload), "%lld " ANNOUNCE_PREFIX "%s",
             (long long)now.tv_sec * 1000000 + now.tv_usec, p->self);
    p->in_flight = 1;
    db_query(p->db, SQL_CACHE_ANNOUNCE, params, on_announced, p, NULL);
}

/*
 * Copies a name heard on the channel, which any session may write to,
 * keeping only what a host name and a pid are made of: it goes into the
 * log and into /healthz's JSON as it is.
 */
static void
copy_name(char *out, size_t outlen, const char *in)
{
    size_t n = 0;

    for (; *in && n + 1 < outlen; in++) {
        char ch = *in;
        int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
                 ch == '.' || ch == '-' || ch == '_' || ch == ' ';
        out[n++] = ok ? ch : '?';
    }
    out[n] = '\0';
}

struct cache_peers *
cache_peers_new(struct event_base *base, struct db_pool *db, const char *self, int announce)
{
    struct cache_peers *p = calloc(1, sizeof(*p));
    static const struct timeval now = {0, 0};

    if (!p)
        return NULL;
    p->db = db;
    copy_name(p->self, sizeof(p->self), self);
    if (announce) {
        p->timer = evtimer_new(base, on_timer, p);
        if (!p->timer || evtimer_add(p->timer, &now) < 0) {
            cache_peers_free(p);
            return NULL;
        }
    }
    return p;
}

void
cache_peers_free(struct cache_peers *p)
{
    if (!p)
        return;
    if (p->timer)
        event_free(p->timer);
    free(p);
}

int
cache_peers_heard(struct cache_peers *p, const char *key)
{
    char who[sizeof(p->heard)];
    int64_t now;

    if (key[0] != '!')
        return 0;
    if (strncmp(key, ANNOUNCE_PREFIX, strlen(ANNOUNCE_PREFIX)) != 0)
        return 1; /* a later version's announcement: not a key either */
    copy_name(who, sizeof(who), key + strlen(ANNOUNCE_PREFIX));
    if (strcmp(who, p->self) == 0)
        return 1; /* this instance's other generation, during a reload */
    now = clock_now_ms();
    memcpy(p->heard, who, sizeof(p->heard));
    p->heard_ms = now;
    if (!p->logged_ms || now - p->logged_ms >= LOG_EVERY_MS) {
        p->logged_ms = now;
        log_error("cache: instance %s writes to this database without cache notifications "
                  "(its cache or cache_sync is off): what it changes may stay stale in this "
                  "instance's cache until evicted; give every instance of a database the same "
                  "cache and cache_sync",
                  p->heard);
    }
    return 1;
}

int
cache_peers_mismatch(const struct cache_peers *p, char *peer, size_t peerlen, int64_t *ago_ms)
{
    int64_t ago;

    if (!p || !p->heard_ms)
        return 0;
    ago = clock_now_ms() - p->heard_ms;
    if (ago > CACHE_PEERS_FRESH_MS)
        return 0;
    snprintf(peer, peerlen, "%s", p->heard);
    *ago_ms = ago;
    return 1;
}
