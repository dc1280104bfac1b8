/*
 * env: what the request layer (http.c) and the handlers are given of
 * their worker, in one struct handed to http_init() (the status listener
 * gets it as its evhttp callback's argument) and reached from every
 * request as c->env.  A handler takes its pool, its
 * hashing threads, its cache and its scratch buffer from here, never from
 * the module that owns the loop (worker.c), which fills this in after the
 * fork and keeps it for the worker's life.
 *
 * The scratch buffer is the one evbuffer every reply is written into:
 * evhttp_send_reply() moves its bytes out, so it is empty again whenever a
 * handler's code runs (the loop runs one callback at a time).
 */
#ifndef CONDUITD_ENV_H
#define CONDUITD_ENV_H

#include <stddef.h>
#include <stdint.h>

struct access_log;
struct bcrypt_pool;
struct cache;
struct cache_fills;
struct cache_zone;
struct cache_sync;
struct config;
struct db_pool;
struct evbuffer;
struct lastwrite;
struct replica;
struct event_base;
struct route;
struct scoreboard;
struct worker_slot;

struct env {
    const struct config *cfg;
    struct event_base *base;
    struct db_pool *db;
    struct replica *replica; /* reads on standbys; NULL without db_read */
    /*
     * The instance's recent writers (common/lastwrite.h), noted at every
     * write and read by the standbys' reads and the cache's stale answers;
     * NULL when neither is on.  A slot older than the horizon may go to
     * another user: by then neither needs it (worker.c says why).
     */
    struct lastwrite *writes;
    int64_t writes_horizon_ns;
    struct bcrypt_pool *bcrypt;
    struct cache *cache; /* this worker's handle on the instance's cache; NULL with cache = off */
    struct cache_zone *zone;   /* the instance's cache, mapped even with cache = off: its figures */
    struct cache_sync *sync;   /* NULL unless cache and cache_sync are on */
    struct cache_peers *peers; /* instances that write without cache notifications */
    struct cache_fills *fills; /* the cache's statements in flight; NULL with cache = off */
    struct access_log *access; /* NULL with access_log = off */
    struct evbuffer *scratch;
    /*
     * The route table (worker/routes.h): the request layer dispatches on
     * it, /metrics names its series after it.  worker.c puts it here, so
     * that nothing below the handlers includes them.
     */
    const struct route *routes;
    size_t nroutes;
    struct worker_slot *slot;    /* this worker's scoreboard slot: its counters */
    const struct scoreboard *sb; /* every slot, for /metrics and /status (worker/status.h) */
    int index;                   /* the worker's number, as /healthz reports it */
    /*
     * The worker drains (TERM, a reload, max_requests, its master gone):
     * set once by worker.c's drain(), the one record of it.  The request
     * layer reads it (every reply then says "Connection: close"), so do the
     * status replies and conn.c (given its address at conn_init).
     */
    int draining;
};

#endif
