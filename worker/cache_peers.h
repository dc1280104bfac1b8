/*
 * cache_peers: instances that share the database but not the cache's
 * notifications.
 *
 * A cached instance (cache and cache_sync on) learns of every write
 * through the notifications that the schema's triggers send, but only for
 * writes made by sessions that ask for them: an instance with the cache
 * off, or with cache_sync off, writes silently, and what the cached
 * instance holds of those rows stays stale until evicted.  The manual says
 * not to mix them; this module makes the mistake visible.  A worker whose
 * writes are silent announces itself every CACHE_PEERS_ANNOUNCE_MS on the
 * cached instances' channel (sql/queries.sql's cache_announce); a cached
 * worker that hears another instance's announcement logs an error (once
 * per minute at most) and reports it in /healthz while it is recent.
 */
#ifndef CONDUITD_CACHE_PEERS_H
#define CONDUITD_CACHE_PEERS_H

#include <stddef.h>
#include <stdint.h>

struct event_base;
struct db_pool;
struct cache_peers;

#define CACHE_PEERS_ANNOUNCE_MS 5000
/* An announcement counts for this long: three missed ones end the mismatch. */
#define CACHE_PEERS_FRESH_MS (3 * CACHE_PEERS_ANNOUNCE_MS + 1000)

/*
 * self names this instance ("host pid N" of its master), so that its own
 * workers' announcements (a reload from cache off to on has both for a
 * moment) are not taken for another's.  With announce set the worker's
 * writes are silent: it announces them through db, which must outlive it.
 * NULL without memory.
 */
struct cache_peers *cache_peers_new(struct event_base *base, struct db_pool *db, const char *self,
                                    int announce);
void cache_peers_free(struct cache_peers *p);

/*
 * A key heard on the cache's channel (the payload after its time): 1 when
 * it was an announcement, taken here, 0 when it is a key to drop.
 */
int cache_peers_heard(struct cache_peers *p, const char *key);

/*
 * Is a silent writer heard lately?  1 with its name in peer and how long
 * ago in *ago_ms, else 0.
 */
int cache_peers_mismatch(const struct cache_peers *p, char *peer, size_t peerlen, int64_t *ago_ms);

#endif
