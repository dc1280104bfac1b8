/*
 * cache_zone: the memory of an instance's cache (worker/cache.h), shared
 * by all its workers, as nginx's keys_zone or PHP's APCu under PHP-FPM.
 * The master maps it once, before it forks, and every worker of every
 * generation it forks uses it; its size is fixed for the master's life.
 * What is kept, and when it may be served, is worker/cache.c's business;
 * this is where entries live: the map from a key to its entry, the order
 * of recency, the memory (common/zone_alloc.h), and the locks.
 *
 * Shards.  The zone is cut into up to CACHE_ZONE_MAX_SHARDS shards by the
 * key's hash, each with its own lock, buckets, recency list, entry bound
 * and arena: a lookup holds one shard's lock for a copy of one value,
 * and the workers rarely meet on one.  The least recently used entry of
 * the shard a new one goes to makes room (an approximation of one LRU for
 * the whole zone; a small zone is one shard, exact).
 *
 * A worker killed while it holds a lock.  The locks are robust
 * process-shared mutexes: the kernel marks a lock whose owner died, and
 * the next worker to take it is told so (EOWNERDEAD).  The dead worker may
 * have been anywhere in a change of the shard (an entry half written, a
 * link half moved), so that worker empties the shard before anything else
 * reads it: an empty shard is always coherent, it only misses.  Then it
 * marks the lock consistent and goes on; the zone counts the reset.  No
 * pointer into the zone leaves a lock's hold (values are copied out under
 * it, worker/cache.c), so nothing another worker holds can be pulled from
 * under it either.  A lock not had within CACHE_ZONE_LOCK_MS (its owner
 * stopped, or stuck) is given up: the caller treats the shard as a miss
 * rather than stall its event loop (and, through its heartbeat, be killed
 * itself); the master kills a stuck owner, and the next locker resets.
 *
 * Clearing.  cache_zone_clear() makes every entry read before a moment
 * void, without a lock (one atomic word that only rises): the master can
 * do it, and so can a worker whose locks are all busy.
 * cache_zone_empty() also gives their memory back, shard by shard.
 */
#ifndef CONDUITD_CACHE_ZONE_H
#define CONDUITD_CACHE_ZONE_H

#include <stddef.h>
#include <stdint.h>

#define CACHE_ZONE_MAX_SHARDS 16
#define CACHE_ZONE_LOCK_MS 50

struct cache_zone;
struct zone_shard;

/*
 * An entry, in its shard's arena: its links and what worker/cache.c keeps
 * with a value.  Links are offsets in the arena (common/zone_alloc.h),
 * 0 for none.
 */
struct zone_entry {
    uint64_t chain;      /* the next entry of its bucket */
    uint64_t prev, next; /* recency: prev is more recent */
    uint64_t hash;
    uint64_t epoch;   /* of the read that made the value (common/stamps.h) */
    int64_t fresh_ns; /* last known current (CLOCK_MONOTONIC) */
    uint64_t len;     /* the value's */
    uint32_t keylen, ndeps;
    uint64_t deps[]; /* the hashes it depends on, then the key, NUL, and the value */
};

static inline char *
zone_entry_key(struct zone_entry *e)
{
    return (char *)(e->deps + e->ndeps);
}

static inline unsigned char *
zone_entry_value(struct zone_entry *e)
{
    return (unsigned char *)zone_entry_key(e) + e->keylen + 1;
}

/* The zone's use, as /metrics and /healthz report it. */
struct cache_zone_stats {
    uint64_t entries, max_entries;
    uint64_t bytes;    /* in entries: keys, values, bookkeeping and the allocator's tags */
    uint64_t capacity; /* the arenas' bytes: cache_memory */
    uint64_t evictions;
    uint64_t
        resets; /* shards emptied: a worker died holding their lock, or they were found broken */
    unsigned shards;
};

/*
 * A zone of at most max_entries entries in max_bytes bytes of arenas
 * (plus its buckets, 8 bytes per entry rounded up to a power of two, and
 * a page or two per shard): mapped shared and anonymous, with
 * MAP_NORESERVE, so that memory not yet written costs nothing (the zone
 * is mapped with the cache off too: a reload may turn it on).  NULL on
 * failure (errno set).
 */
struct cache_zone *cache_zone_create(size_t max_entries, size_t max_bytes);
void cache_zone_destroy(struct cache_zone *z);

/* Which shard key's hash h falls in: 0 .. shards - 1. */
unsigned cache_zone_shard_of(const struct cache_zone *z, uint64_t h);

/*
 * Takes shard i's lock, within CACHE_ZONE_LOCK_MS, emptying the shard
 * first when its last owner died holding it.  NULL when not had in time
 * (or the lock is beyond repair): the caller goes on without the shard.
 */
struct zone_shard *cache_zone_lock(struct cache_zone *z, unsigned i);
void cache_zone_unlock(struct zone_shard *s);

/*
 * Under the shard's lock.  The entry of key (keylen bytes, hash h), or
 * NULL; a bucket found broken empties the shard (counted as a reset).
 */
struct zone_entry *cache_zone_find(struct zone_shard *s, const char *key, size_t keylen,
                                   uint64_t h);
/* Makes e the most recently used. */
void cache_zone_touch(struct zone_shard *s, struct zone_entry *e);
/* Removes e and frees its memory. */
void cache_zone_remove(struct zone_shard *s, struct zone_entry *e);
/*
 * A new entry of hash h, linked in as the most recently used, with room
 * for ndeps hashes, a key of keylen bytes (and its NUL) and a value of
 * len bytes, which the caller writes (hash, keylen, ndeps and len are
 * set); the least recently used go first while the shard is at its bound
 * in entries or has no free block that large (counted as evictions).
 * NULL when the entry would not fit in the whole shard: nothing is
 * evicted then.  The caller removes an entry of the same key first.
 */
struct zone_entry *cache_zone_add(struct zone_shard *s, uint64_t h, size_t keylen, size_t ndeps,
                                  size_t len);

/* Everything read before tick (a stamps tick) is void from now on.  No lock: anyone may. */
void cache_zone_clear(struct cache_zone *z, uint64_t tick);
/* The latest tick cache_zone_clear() was given. */
uint64_t cache_zone_cleared_at(const struct cache_zone *z);
/* Empties every shard whose lock is had in time; how many were. */
unsigned cache_zone_empty(struct cache_zone *z);

void cache_zone_stats(const struct cache_zone *z, struct cache_zone_stats *out);

/*
 * Walks every shard under its lock: 0 when each one's buckets, recency
 * list, counts and arena (zone_alloc_check()) agree, -1 otherwise.  For
 * tests.
 */
int cache_zone_check(struct cache_zone *z);

#endif
