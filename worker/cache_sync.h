/*
 * cache_sync: keeps a worker's cache coherent with PostgreSQL.
 *
 * One extra connection per worker LISTENs on channel conduit_cache, where
 * the triggers of sql/schema.sql ("Cache notifications") send the key of
 * every cached thing a committed write changed; the key is dropped here.
 * The worker uses the instance's cache only while that connection
 * listens: its handle starts disabled, is enabled once LISTEN has
 * succeeded and the triggers are found in the database (refusing its
 * fills read before), and is disabled the moment the connection breaks,
 * clearing the instance's cache, so nothing missed while deaf is ever
 * served.  The
 * connection is re-opened with backoff, and a cheap query every few seconds
 * finds a server that vanished without closing the socket.
 *
 * Each notification carries the time of its write: the delays from write
 * to invalidation are kept for /healthz (the last CACHE_SYNC_SAMPLES).
 */
#ifndef CONDUITD_CACHE_SYNC_H
#define CONDUITD_CACHE_SYNC_H

#include <stdint.h>

struct event_base;
struct cache;
struct cache_sync;
struct cache_peers;

#define CACHE_SYNC_SAMPLES 4096

/* Starts listening (asynchronously); NULL without memory. */
struct cache_sync *cache_sync_new(struct event_base *base, const char *conninfo,
                                  const char *appname, struct cache *cache);
void cache_sync_free(struct cache_sync *s);

/*
 * Hands the channel's announcements (keys that start with "!") to peers
 * (worker/cache_peers.h), which must outlive s; none are taken before.
 */
void cache_sync_hear_peers(struct cache_sync *s, struct cache_peers *peers);

struct cache_sync_delays {
    uint64_t count;                 /* notifications received */
    int64_t p50_us, p99_us, max_us; /* over the last samples */
};

void cache_sync_delays(const struct cache_sync *s, struct cache_sync_delays *out);

#endif
