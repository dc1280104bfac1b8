/*
 * metrics: see metrics.h.
 */
#include "config.h"

#include "worker/metrics.h"
#include "worker/router.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>

#include "common/cache_zone.h"
#include "common/clock.h"
#include "common/scoreboard.h"

/* The latency histogram's upper bounds in microseconds; the last bucket is +Inf. */
static const int64_t bucket_us[SCOREBOARD_BUCKETS - 1] = {
    1000,   2500,   5000,    10000,   25000,   50000,   100000,
    250000, 500000, 1000000, 2500000, 5000000, 10000000};

static const char *const exit_cause[SB_EXITS] = {
    [SB_EXIT_RETIRED] = "retired",     [SB_EXIT_SIGNAL] = "signal",
    [SB_EXIT_ERROR] = "error",         [SB_EXIT_CONFIG] = "config",
    [SB_EXIT_HEARTBEAT] = "heartbeat", [SB_EXIT_STUCK] = "stop_timeout"};

static const char *const db_error_kind[SB_DB_ERRORS] = {[SB_DB_CONSTRAINT] = "constraint",
                                                        [SB_DB_TRANSACTION] = "transaction",
                                                        [SB_DB_QUERY] = "query",
                                                        [SB_DB_CONNECTION] = "connection",
                                                        [SB_DB_UNAVAILABLE] = "unavailable"};

static const char *const shed_queue[SB_QUEUES] = {
    [SB_QUEUE_DB] = "db", [SB_QUEUE_BCRYPT] = "bcrypt"};
static const char *const shed_reason[SB_SHEDS] = {
    [SB_SHED_FULL] = "full",
    [SB_SHED_TIMEOUT] = "timeout",
    [SB_SHED_STANDING] = "standing",
    [SB_SHED_GONE] = "gone",
};

const char *const metrics_cache_kind[SB_CACHE_KINDS] = {
    [SB_CACHE_USER] = "user",
    [SB_CACHE_PROFILE] = "profile",
    [SB_CACHE_FOLLOWEES] = "followees",
    [SB_CACHE_FAVORITES] = "favorites",
    [SB_CACHE_TAGS] = "tags",
    [SB_CACHE_ARTICLE] = "article",
    [SB_CACHE_LIST_GLOBAL] = "list_global",
    [SB_CACHE_LIST_TAG] = "list_tag",
    [SB_CACHE_LIST_AUTHOR] = "list_author",
    [SB_CACHE_LIST_FAVORITED] = "list_favorited",
    [SB_CACHE_FEED] = "feed",
    [SB_CACHE_OTHER] = "other",
};
const char *const metrics_cache_result[SB_CACHE_RESULTS] = {
    [SB_CACHE_HIT] = "hit", [SB_CACHE_STALE] = "stale", [SB_CACHE_ABSENT] = "absent"};

int
metrics_routes_fit(size_t nroutes)
{
    return nroutes <= SCOREBOARD_ROUTE_OTHER ? 0 : -1;
}

void
metrics_count_response(struct worker_slot *s, int route, int status, int64_t us)
{
    int cls = status / 100 - 1, b = 0;

    if (route < 0 || route >= SCOREBOARD_ROUTE_OTHER)
        route = SCOREBOARD_ROUTE_OTHER;
    if (cls < 0 || cls >= SCOREBOARD_CLASSES)
        cls = SCOREBOARD_CLASSES - 1;
    if (us < 0)
        us = 0;
    while (b < SCOREBOARD_BUCKETS - 1 && us > bucket_us[b])
        b++;
    scoreboard_add(&s->c.requests[route][cls], 1);
    scoreboard_add(&s->c.latency[b], 1);
    scoreboard_add(&s->c.latency_us, (uint64_t)us);
}

static uint64_t
get(const _Atomic uint64_t *v)
{
    return atomic_load_explicit(v, memory_order_relaxed);
}

/* What the live workers hold right now (the gauges), and how many are in each state. */
struct live {
    int64_t in_flight, queued;
    int64_t pool_busy, pool_idle, bcrypt_queued;
    int64_t read_busy, read_idle, standby_skipped;
    int64_t lag_us, lag_bytes; /* the largest any worker measured; -1: none knows */
    int states[4];             /* enum slot_state */
};

static void
sum_live(const struct scoreboard *sb, struct live *l)
{
    int used = atomic_load(&sb->master.slots_used);

    *l = (struct live){0};
    l->lag_us = l->lag_bytes = -1;
    for (int i = 0; i < used && i < SCOREBOARD_SLOTS; i++) {
        const struct worker_slot *s = &sb->slots[i];
        int st = atomic_load(&s->state);
        if (st == SLOT_FREE || st < 0 || st > SLOT_DRAINING)
            continue;
        l->states[st]++;
        l->in_flight += atomic_load_explicit(&s->in_flight, memory_order_relaxed);
        l->queued += atomic_load_explicit(&s->queued, memory_order_relaxed);
        l->pool_busy += atomic_load_explicit(&s->pool_busy, memory_order_relaxed);
        l->pool_idle += atomic_load_explicit(&s->pool_idle, memory_order_relaxed);
        l->bcrypt_queued += atomic_load_explicit(&s->bcrypt_queued, memory_order_relaxed);
        l->read_busy += atomic_load_explicit(&s->read_busy, memory_order_relaxed);
        l->read_idle += atomic_load_explicit(&s->read_idle, memory_order_relaxed);
        l->standby_skipped += atomic_load_explicit(&s->standby_skipped, memory_order_relaxed);
        int64_t us = atomic_load_explicit(&s->standby_lag_us, memory_order_relaxed);
        int64_t bytes = atomic_load_explicit(&s->standby_lag_bytes, memory_order_relaxed);
        l->lag_us = us > l->lag_us ? us : l->lag_us;
        l->lag_bytes = bytes > l->lag_bytes ? bytes : l->lag_bytes;
    }
}

static void
header(struct evbuffer *b, const char *name, const char *type, const char *help)
{
    evbuffer_add_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void
one(struct evbuffer *b, const char *name, const char *type, const char *help, long long v)
{
    header(b, name, type, help);
    evbuffer_add_printf(b, "%s %lld\n", name, v);
}

/* "GET" for a route's method (one enum router_method bit). */
static const char *
method_name(int m)
{
    switch (m) {
    case ROUTER_GET:
        return "GET";
    case ROUTER_POST:
        return "POST";
    case ROUTER_PUT:
        return "PUT";
    case ROUTER_DELETE:
        return "DELETE";
    case ROUTER_PATCH:
        return "PATCH";
    default:
        return "OTHER";
    }
}

/*
 * Every route gets its 2xx, 4xx and 5xx series from the first scrape on
 * (a series that appears only at its first error defeats rate()); 1xx and
 * 3xx, which the API never sends, only once counted.
 */
static void
write_requests(struct evbuffer *b, const struct scoreboard_counters *t, const struct route *routes,
               size_t nroutes)
{
    header(b, "conduitd_http_requests_total", "counter",
           "Responses sent, by route (the route table's pattern; unmatched: 404, 405, "
           "preflights, requests cut short) and status class.");
    for (int r = 0; r <= SCOREBOARD_ROUTE_OTHER; r++) {
        const char *method = "any", *route = "unmatched";
        if (r < (int)nroutes) {
            method = method_name(routes[r].method);
            route = routes[r].pattern;
        } else if (r != SCOREBOARD_ROUTE_OTHER) {
            continue;
        }
        for (int cls = 0; cls < SCOREBOARD_CLASSES; cls++) {
            uint64_t n = get(&t->requests[r][cls]);
            if (n == 0 && (cls == 0 || cls == 2))
                continue;
            evbuffer_add_printf(b,
                                "conduitd_http_requests_total{method=\"%s\",route=\"%s\","
                                "status=\"%dxx\"} %llu\n",
                                method, route, cls + 1, (unsigned long long)n);
        }
    }
}

static void
write_latency(struct evbuffer *b, const struct scoreboard_counters *t)
{
    uint64_t cum = 0;
    uint64_t sum = get(&t->latency_us);

    header(b, "conduitd_http_request_duration_seconds", "histogram",
           "Time from a request's dispatch to its reply, as the access log's request time.");
    for (int i = 0; i < SCOREBOARD_BUCKETS; i++) {
        cum += get(&t->latency[i]);
        if (i < SCOREBOARD_BUCKETS - 1)
            evbuffer_add_printf(b,
                                "conduitd_http_request_duration_seconds_bucket{le=\"%g\"} %llu\n",
                                (double)bucket_us[i] / 1e6, (unsigned long long)cum);
        else
            evbuffer_add_printf(b,
                                "conduitd_http_request_duration_seconds_bucket{le=\"+Inf\"} %llu\n",
                                (unsigned long long)cum);
    }
    evbuffer_add_printf(b, "conduitd_http_request_duration_seconds_sum %llu.%06llu\n",
                        (unsigned long long)(sum / 1000000), (unsigned long long)(sum % 1000000));
    evbuffer_add_printf(b, "conduitd_http_request_duration_seconds_count %llu\n",
                        (unsigned long long)cum);
}

/* A pool's connections up, by state: the primary's and the standbys' alike. */
static void
connections(struct evbuffer *b, const char *name, const char *help, int64_t busy, int64_t idle)
{
    header(b, name, "gauge", help);
    evbuffer_add_printf(b, "%s{state=\"busy\"} %lld\n", name, (long long)busy);
    evbuffer_add_printf(b, "%s{state=\"idle\"} %lld\n", name, (long long)idle);
}

static void
write_database(struct evbuffer *b, const struct scoreboard_counters *t, const struct live *l)
{
    connections(b, "conduitd_db_pool_connections",
                "Database connections of every worker's pool, by state (those down are neither).",
                l->pool_busy, l->pool_idle);
    one(b, "conduitd_db_queue_depth", "gauge",
        "Queries waiting for a free database connection, in every worker.", l->queued);
    one(b, "conduitd_db_queue_full_total", "counter",
        "Queries refused because the worker's wait queue (pool_queue) was full: each a 503.",
        (long long)get(&t->db_queue_full));
    header(b, "conduitd_db_errors_total", "counter",
           "Database errors by kind: constraint (SQLSTATE 23), transaction (40), query (any "
           "other), connection (lost or not opened), unavailable (no connection up).");
    for (int k = 0; k < SB_DB_ERRORS; k++)
        evbuffer_add_printf(b, "conduitd_db_errors_total{kind=\"%s\"} %llu\n", db_error_kind[k],
                            (unsigned long long)get(&t->db_errors[k]));
}

/* A gauge that may be unknown: NaN then, as Prometheus reads it. */
static void
known(struct evbuffer *b, const char *name, const char *help, double v, int is_known)
{
    header(b, name, "gauge", help);
    if (is_known)
        evbuffer_add_printf(b, "%s %.12g\n", name, v);
    else
        evbuffer_add_printf(b, "%s NaN\n", name);
}

static const char *const read_reason[SB_READS] = {[SB_READ_NO_SAMPLE] = "no_sample",
                                                  [SB_READ_NO_STANDBY] = "no_standby",
                                                  [SB_READ_LAG] = "lag",
                                                  [SB_READ_OWN_WRITE] = "own_write",
                                                  [SB_READ_FAILED] = "failed"};

/*
 * Reads on standbys (db_read).  Without it every series is there and
 * stays at zero (the lag says NaN): a dashboard needs no second shape.
 */
static void
write_standbys(struct evbuffer *b, const struct scoreboard_counters *t, const struct live *l)
{
    one(b, "conduitd_db_standby_reads_total", "counter",
        "Read-only statements a standby answered (db_read).",
        (long long)get(&t->reads[SB_READ_STANDBY]));
    header(b, "conduitd_db_primary_reads_total", "counter",
           "Read-only statements the primary answered although standbys are configured, by "
           "reason: no_sample (the primary's recent position unknown), no_standby (no standby "
           "connection up), lag (the standbys lag past db_read_max_lag), own_write (the "
           "caller's last write not replayed yet), failed (a standby was asked and could not "
           "answer).");
    for (int k = SB_READ_STANDBY + 1; k < SB_READS; k++)
        evbuffer_add_printf(b, "conduitd_db_primary_reads_total{reason=\"%s\"} %llu\n",
                            read_reason[k], (unsigned long long)get(&t->reads[k]));
    connections(b, "conduitd_db_standby_connections",
                "Standby connections of every worker's read pool, by state (those down are "
                "neither).",
                l->read_busy, l->read_idle);
    one(b, "conduitd_db_standbys_skipped", "gauge",
        "Workers whose reads skip the standbys now (lagging past db_read_max_lag, or none up).",
        l->standby_skipped);
    one(b, "conduitd_db_standby_skips_total", "counter",
        "Times a worker began skipping the standbys (each a 'standbys skipped' log line).",
        (long long)get(&t->standby_skips));
    known(b, "conduitd_db_standby_lag_seconds",
          "The standbys' replay lag behind the primary, the largest any worker measured at its "
          "last 20 ms tick (NaN: unknown, no standby up).",
          (double)l->lag_us / 1e6, l->lag_us >= 0);
    known(b, "conduitd_db_standby_lag_bytes",
          "The same lag in bytes of WAL the standbys have not replayed (NaN: unknown).",
          (double)l->lag_bytes, l->lag_bytes >= 0);
}

/* What overload cost: requests shed unserved, and statements run for nobody. */
static void
write_shed(struct evbuffer *b, const struct scoreboard_counters *t)
{
    header(b, "conduitd_shed_total", "counter",
           "Requests not served for overload, by the queue they waited in (db: for a database "
           "connection, bcrypt: for a hashing thread) and why: full (the queue was full: 503), "
           "timeout (waited queue_timeout: 503), standing (waited queue_standing_timeout in a "
           "database queue "
           "whose oldest query has been older than 100 ms for 500 ms, or pushed out of it, full, "
           "by a newer request: "
           "503), gone (the client hung up while it waited: "
           "dropped unsent, no answer).");
    for (int q = 0; q < SB_QUEUES; q++)
        for (int r = 0; r < SB_SHEDS; r++)
            evbuffer_add_printf(b, "conduitd_shed_total{queue=\"%s\",reason=\"%s\"} %llu\n",
                                shed_queue[q], shed_reason[r],
                                (unsigned long long)get(&t->shed[q][r]));
    one(b, "conduitd_db_orphaned_total", "counter",
        "Statements that had waited for a connection and whose client hung up while they ran "
        "(they are not cancelled: their answer goes nowhere).",
        (long long)get(&t->db_orphaned));
}

/*
 * The lookups and their outcomes are the workers' own (summed); what the
 * cache holds, its bounds, evictions and resets are the instance's one
 * shared zone's (common/cache_zone.h), counted once.
 */
static void
write_cache(struct evbuffer *b, const struct scoreboard_counters *t, const struct cache_zone *zone)
{
    struct cache_zone_stats z = {0};

    if (zone)
        cache_zone_stats(zone, &z);
    one(b, "conduitd_cache_hits_total", "counter", "Cache lookups answered from the cache.",
        (long long)scoreboard_cache_total(t, SB_CACHE_HIT));
    one(b, "conduitd_cache_misses_total", "counter", "Cache lookups that went to the database.",
        (long long)scoreboard_cache_misses(t));
    header(b, "conduitd_cache_lookups_total", "counter",
           "Cache lookups, by what they were for (kind: user, profile, followees, favorites, tags, "
           "article, list_global, list_tag, list_author, list_favorited, feed, other) and how they "
           "ended (result: hit; stale, held but changed since its read; absent, not held). A page "
           "is answered from the cache only when it and each of its articles hit. A request that "
           "waited for another's statement (conduitd_cache_waits_total) looks up twice: absent, "
           "then again once that statement has filled the entry.");
    for (int k = 0; k < SB_CACHE_KINDS; k++)
        for (int r = 0; r < SB_CACHE_RESULTS; r++)
            evbuffer_add_printf(b, "conduitd_cache_lookups_total{kind=\"%s\",result=\"%s\"} %llu\n",
                                metrics_cache_kind[k], metrics_cache_result[r],
                                (unsigned long long)get(&t->cache_lookups[k][r]));
    one(b, "conduitd_cache_invalidations_total", "counter",
        "Cache entries dropped because the data changed.", (long long)get(&t->cache_invalidations));
    one(b, "conduitd_cache_evictions_total", "counter",
        "Cache entries dropped, least recently used first, to make room (cache_size, "
        "cache_memory).",
        (long long)z.evictions);
    one(b, "conduitd_cache_resets_total", "counter",
        "Shards of the instance's cache emptied because a worker died holding their lock, or "
        "they were found inconsistent.",
        (long long)z.resets);
    one(b, "conduitd_cache_waits_total", "counter",
        "Cache misses that waited for the statement another request had sent for the same key, "
        "instead of sending their own.",
        (long long)get(&t->cache_waits));
    one(b, "conduitd_cache_stale_answers_total", "counter",
        "Answers given with a cached value that had changed, within cache_stale_max, instead of "
        "waiting behind a backed-up database for the statement refreshing it.",
        (long long)get(&t->cache_stale_answers));
    one(b, "conduitd_cache_flag_resends_total", "counter",
        "Reads sent without the flags' viewer (the caller's followees and favorites were cached) "
        "and sent again with it, because those sets changed or were evicted while the first "
        "statement ran.",
        (long long)get(&t->cache_flag_resends));
    one(b, "conduitd_cache_unadmitted_total", "counter",
        "Values read from the database and not stored: their key was put fewer than "
        "cache_min_uses times lately.",
        (long long)get(&t->cache_unadmitted));
    one(b, "conduitd_cache_bytes", "gauge",
        "Memory the instance's cache holds in entries, their bookkeeping included.",
        (long long)z.bytes);
    one(b, "conduitd_cache_capacity_bytes", "gauge",
        "Memory the instance's cache may hold in entries (cache_memory, fixed at the start).",
        (long long)z.capacity);
    one(b, "conduitd_cache_entries", "gauge", "Entries the instance's cache holds.",
        (long long)z.entries);
    one(b, "conduitd_cache_entries_max", "gauge",
        "Entries the instance's cache may hold (cache_size, fixed at the start).",
        (long long)z.max_entries);
}

static void
write_workers(struct evbuffer *b, const struct scoreboard *sb, const struct live *l)
{
    const struct scoreboard_master *m = &sb->master;
    static const char *const state[] = {"free", "starting", "ready", "draining"};

    one(b, "conduitd_workers_target", "gauge", "Worker processes asked for (workers, TTIN, TTOU).",
        atomic_load(&m->workers));
    header(b, "conduitd_workers", "gauge", "Worker processes alive, by state.");
    for (int s = SLOT_STARTING; s <= SLOT_DRAINING; s++)
        evbuffer_add_printf(b, "conduitd_workers{state=\"%s\"} %d\n", state[s], l->states[s]);
    one(b, "conduitd_generation", "gauge", "The workers' generation: 1, and one more per reload.",
        atomic_load(&m->generation));
    one(b, "conduitd_worker_starts_total", "counter", "Worker processes forked.",
        (long long)get(&m->worker_starts));
    header(b, "conduitd_worker_exits_total", "counter",
           "Worker processes reaped, by cause: retired (asked to stop), signal (killed by a "
           "signal the master did not send), error (exited unasked), config (a configuration "
           "that cannot work), heartbeat and stop_timeout (killed by the master).");
    for (int c = 0; c < SB_EXITS; c++)
        evbuffer_add_printf(b, "conduitd_worker_exits_total{cause=\"%s\"} %llu\n", exit_cause[c],
                            (unsigned long long)get(&m->exits[c]));
    one(b, "conduitd_heartbeat_kills_total", "counter",
        "Workers killed for sending no heartbeat for timeout seconds.",
        (long long)get(&m->heartbeat_kills));
    one(b, "conduitd_reloads_total", "counter", "Reloads (HUP) that started a new generation.",
        (long long)get(&m->reloads));
    one(b, "conduitd_reload_failures_total", "counter",
        "Reloads refused: the running configuration was kept.",
        (long long)get(&m->reload_failures));
    one(b, "conduitd_start_time_seconds", "gauge", "When the master started, in Unix time.",
        (long long)atomic_load(&m->started_unix));
}

void
metrics_write_prometheus(struct evbuffer *b, const struct scoreboard *sb,
                         const struct cache_zone *zone, const struct route *routes, size_t nroutes)
{
    struct scoreboard_counters t;
    struct live l;

    scoreboard_sum(sb, &t);
    sum_live(sb, &l);
    write_requests(b, &t, routes, nroutes);
    write_latency(b, &t);
    one(b, "conduitd_http_requests_in_flight", "gauge",
        "Requests received and not yet answered, in every worker.", l.in_flight);
    write_database(b, &t, &l);
    write_standbys(b, &t, &l);
    write_cache(b, &t, zone);
    one(b, "conduitd_bcrypt_jobs_total", "counter",
        "Password hashes and verifications handed to the hashing threads.",
        (long long)get(&t.bcrypt_jobs));
    one(b, "conduitd_bcrypt_jobs_queued", "gauge",
        "Hashing jobs handed over and not yet done, in every worker.", l.bcrypt_queued);
    write_shed(b, &t);
    write_workers(b, sb, &l);
}

/* Every response counted, all routes and classes. */
static uint64_t
requests_total(const struct scoreboard_counters *t)
{
    uint64_t n = 0;

    for (int r = 0; r < SCOREBOARD_ROUTES; r++)
        for (int c = 0; c < SCOREBOARD_CLASSES; c++)
            n += get(&t->requests[r][c]);
    return n;
}

static void
write_processes(struct evbuffer *b, const struct scoreboard *sb, int64_t now_ms)
{
    static const char *const state[] = {"free", "starting", "ready", "draining"};
    int used = atomic_load(&sb->master.slots_used), first = 1;

    evbuffer_add_printf(b, ",\"processes\":[");
    for (int i = 0; i < used && i < SCOREBOARD_SLOTS; i++) {
        const struct worker_slot *s = &sb->slots[i];
        int st = atomic_load(&s->state);
        if (st == SLOT_FREE || st < 0 || st > SLOT_DRAINING)
            continue;
        evbuffer_add_printf(
            b,
            "%s{\"index\":%d,\"pid\":%d,\"generation\":%d,\"state\":\"%s\",\"age_s\":%.3f,"
            "\"requests\":%llu,\"errors\":%llu,\"in_flight\":%lld,\"queued\":%lld,"
            "\"pool_busy\":%d,\"pool_idle\":%d,\"last_heartbeat_ms\":%lld}",
            first ? "" : ",", atomic_load(&s->index), atomic_load(&s->pid),
            atomic_load(&s->generation), state[st],
            (double)(now_ms - atomic_load(&s->started_ms)) / 1000.0,
            (unsigned long long)atomic_load(&s->requests),
            (unsigned long long)atomic_load(&s->errors), (long long)atomic_load(&s->in_flight),
            (long long)atomic_load(&s->queued), atomic_load(&s->pool_busy),
            atomic_load(&s->pool_idle), (long long)(now_ms - atomic_load(&s->heartbeat_ms)));
        first = 0;
    }
    evbuffer_add(b, "]", 1);
}

void
metrics_write_status(struct evbuffer *b, const struct scoreboard *sb, int full)
{
    const struct scoreboard_master *m = &sb->master;
    struct scoreboard_counters t;
    struct live l;
    int64_t now_ms = clock_now_ms();
    long long started = (long long)atomic_load(&m->started_unix);
    uint64_t exits = 0;

    scoreboard_sum(sb, &t);
    sum_live(sb, &l);
    for (int c = 0; c < SB_EXITS; c++)
        exits += c == SB_EXIT_RETIRED ? 0 : get(&m->exits[c]);
    evbuffer_add_printf(
        b,
        "{\"version\":\"%s\",\"master_pid\":%ld,\"answered_by\":%ld,\"start_time\":%lld,"
        "\"uptime_s\":%lld,\"generation\":%d,\"workers_target\":%d,"
        "\"workers\":{\"starting\":%d,\"ready\":%d,\"draining\":%d},"
        "\"requests\":%llu,\"in_flight\":%lld,"
        "\"db\":{\"busy\":%lld,\"idle\":%lld,\"queued\":%lld,\"queue_full\":%llu},"
        "\"bcrypt_queued\":%lld,\"worker_starts\":%llu,\"worker_deaths\":%llu,"
        "\"heartbeat_kills\":%llu,\"reloads\":%llu",
        VERSION, (long)getppid(), (long)getpid(), started, (long long)time(NULL) - started,
        atomic_load(&m->generation), atomic_load(&m->workers), l.states[SLOT_STARTING],
        l.states[SLOT_READY], l.states[SLOT_DRAINING], (unsigned long long)requests_total(&t),
        (long long)l.in_flight, (long long)l.pool_busy, (long long)l.pool_idle, (long long)l.queued,
        (unsigned long long)get(&t.db_queue_full), (long long)l.bcrypt_queued,
        (unsigned long long)get(&m->worker_starts), (unsigned long long)exits,
        (unsigned long long)get(&m->heartbeat_kills), (unsigned long long)get(&m->reloads));
    if (full)
        write_processes(b, sb, now_ms);
    evbuffer_add(b, "}\n", 2);
}
