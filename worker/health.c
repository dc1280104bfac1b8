/*
 * health: /healthz and the test-only /debug/ endpoints.  See health.h.
 */
#include "config.h"

#include "worker/health.h"

#include <stdlib.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "common/cache_zone.h"
#include "common/clock.h"
#include "common/scoreboard.h"
#include "worker/cache.h"
#include "worker/cache_peers.h"
#include "worker/cache_sync.h"
#include "worker/env.h"
#include "worker/http.h"
#include "worker/metrics.h"

/*
 * ,"lookups":{"feed":[hit,stale,absent],...}: the kinds this worker looked
 * up, in metrics.c's names.
 */
static void
add_lookups(struct evbuffer *b, const struct scoreboard_counters *c)
{
    const char *sep = "";

    evbuffer_add_printf(b, ",\"lookups\":{");
    for (int k = 0; k < SB_CACHE_KINDS; k++) {
        uint64_t r[SB_CACHE_RESULTS], n = 0;
        for (int i = 0; i < SB_CACHE_RESULTS; i++)
            n += r[i] = atomic_load_explicit(&c->cache_lookups[k][i], memory_order_relaxed);
        if (n == 0)
            continue;
        evbuffer_add_printf(b, "%s\"%s\":[%llu,%llu,%llu]", sep, metrics_cache_kind[k],
                            (unsigned long long)r[SB_CACHE_HIT],
                            (unsigned long long)r[SB_CACHE_STALE],
                            (unsigned long long)r[SB_CACHE_ABSENT]);
        sep = ",";
    }
    evbuffer_add(b, "}", 1);
}

/*
 * "cache":{...}: whether this worker serves from it (off while its
 * listening connection is down); what the instance's cache holds, its
 * bounds, evictions and resets (the one shared zone's: the same on every
 * worker); this worker's own counters; and the delay from a write to its
 * invalidation here (over the last notifications).
 */
static void
add_cache(struct evbuffer *b, const struct env *e, struct cache *k)
{
    const struct worker_slot *s = e->slot;
    struct cache_sync *sync = e->sync;
    struct cache_sync_delays d;
    struct cache_zone_stats z;
    char peer[96];
    int64_t ago_ms;

    cache_stats(k, &z);
    evbuffer_add_printf(
        b,
        ",\"cache\":{\"enabled\":%s,\"entries\":%llu,\"bytes\":%llu,\"capacity\":%llu,"
        "\"max_entries\":%llu,\"shards\":%u,\"evictions\":%llu,\"resets\":%llu,\"hits\":%llu,"
        "\"misses\":%llu,\"invalidations\":%llu,\"unadmitted\":%llu,"
        "\"waits\":%llu,\"stale_answers\":%llu,\"flag_resends\":%llu",
        cache_enabled(k) ? "true" : "false", (unsigned long long)z.entries,
        (unsigned long long)z.bytes, (unsigned long long)z.capacity,
        (unsigned long long)z.max_entries, z.shards, (unsigned long long)z.evictions,
        (unsigned long long)z.resets,
        (unsigned long long)scoreboard_cache_total(&s->c, SB_CACHE_HIT),
        (unsigned long long)scoreboard_cache_misses(&s->c),
        (unsigned long long)atomic_load_explicit(&s->c.cache_invalidations, memory_order_relaxed),
        (unsigned long long)atomic_load_explicit(&s->c.cache_unadmitted, memory_order_relaxed),
        (unsigned long long)atomic_load_explicit(&s->c.cache_waits, memory_order_relaxed),
        (unsigned long long)atomic_load_explicit(&s->c.cache_stale_answers, memory_order_relaxed),
        (unsigned long long)atomic_load_explicit(&s->c.cache_flag_resends, memory_order_relaxed));
    add_lookups(b, &s->c);
    if (cache_peers_mismatch(e->peers, peer, sizeof(peer), &ago_ms))
        evbuffer_add_printf(b, ",\"mismatch\":{\"writer\":\"%s\",\"ms_ago\":%lld}", peer,
                            (long long)ago_ms);
    if (sync) {
        cache_sync_delays(sync, &d);
        evbuffer_add_printf(b,
                            ",\"notifications\":%llu,\"notify_delay_us\":{\"p50\":%lld,"
                            "\"p99\":%lld,\"max\":%lld}",
                            (unsigned long long)d.count, (long long)d.p50_us, (long long)d.p99_us,
                            (long long)d.max_us);
    }
    evbuffer_add(b, "}", 1);
}

/*
 * 200 with the pid and the worker index (tests tell workers apart by
 * them), the master's pid and the version: during a binary upgrade both
 * masters' workers answer on the same sockets, and this says which.
 */
void
health_get(struct http_ctx *c)
{
    struct evbuffer *b = c->env->scratch;
    struct cache *k = c->env->cache;

    evbuffer_add_printf(b,
                        "{\"status\":\"ok\",\"pid\":%ld,\"worker\":%d,\"master\":%ld,"
                        "\"version\":\"%s\"",
                        (long)getpid(), c->env->index, (long)getppid(), VERSION);
    if (k)
        add_cache(b, c->env, k);
    evbuffer_add(b, "}", 1);
    http_reply(c, 200, b);
}

#ifdef CONDUITD_TEST_HOOKS

/* ms from the query string, clamped to a minute; -1 when absent or bad. */
static long
query_ms(struct http_ctx *c)
{
    const char *s = http_query(c, "ms");
    char *end;
    long ms;

    if (!s)
        return -1;
    ms = strtol(s, &end, 10);
    if (*end || ms < 0 || ms > 60000)
        return -1;
    return ms;
}

struct sleep_state {
    struct event *timer;
    long ms;
};

static void
sleep_state_free(void *p)
{
    struct sleep_state *s = p;

    event_free(s->timer);
    free(s);
}

static void
on_slept(evutil_socket_t fd, short what, void *arg)
{
    struct http_ctx *c = arg;
    struct sleep_state *s = c->state;
    struct evbuffer *b = c->env->scratch;

    (void)fd;
    (void)what;
    evbuffer_add_printf(b, "{\"slept\":%ld}", s->ms);
    http_reply(c, 200, b);
}

/* GET /debug/sleep?ms=N: answers after N ms without blocking the loop. */
void
debug_sleep(struct http_ctx *c)
{
    long ms = query_ms(c);
    struct sleep_state *s;
    struct timeval tv;

    if (ms < 0) {
        http_error(c, 422, "ms must be an integer from 0 to 60000");
        return;
    }
    s = calloc(1, sizeof(*s));
    if (!s) {
        http_error(c, 503, "out of memory");
        return;
    }
    s->ms = ms;
    s->timer = evtimer_new(c->env->base, on_slept, c);
    c->state = s;
    c->state_free = sleep_state_free;
    tv.tv_sec = ms / 1000;
    tv.tv_usec = (ms % 1000) * 1000;
    evtimer_add(s->timer, &tv);
}

/* GET /debug/spin?ms=N: keeps the loop busy for N ms, as a stuck handler would. */
void
debug_spin(struct http_ctx *c)
{
    long ms = query_ms(c);
    int64_t until;
    struct evbuffer *b;

    if (ms < 0) {
        http_error(c, 422, "ms must be an integer from 0 to 60000");
        return;
    }
    until = clock_now_ms() + ms;
    while (clock_now_ms() < until)
        ;
    b = c->env->scratch;
    evbuffer_add_printf(b, "{\"spun\":%ld}", ms);
    http_reply(c, 200, b);
}

/*
 * GET /debug/cache-die?key=K: the worker dies (SIGKILL) holding the lock
 * of K's shard of the instance's cache (the tag list's by default), an
 * entry of K half written in it: the other workers must recover.
 */
void
debug_cache_die(struct http_ctx *c)
{
    const char *key = http_query(c, "key");

    if (!c->env->cache || !cache_enabled(c->env->cache)) {
        http_error(c, 409, "the cache is off");
        return;
    }
    cache_debug_die_locked(c->env->cache, key && *key ? key : CACHE_KEY_TAGS);
}

#endif
