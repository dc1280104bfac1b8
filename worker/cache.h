/*
 * cache: a worker's private cache of what the reads need (see
 * docs/caching.md): the user behind a token, profiles, the sets of a
 * viewer, the tag list, articles and list pages (worker/cache_articles.h).
 *
 * A bounded map from a text key to a byte value, least recently used out
 * first, bounded in entries and in bytes.  Keys name what they hold, and
 * the same names travel in the invalidations PostgreSQL sends
 * (sql/schema.sql, "Cache notifications"):
 *     u:<id>        a user (GET /api/user)
 *     p:<username>  a profile without the viewer's "following"
 *     f:<id>        the ids a user follows
 *     tags          the GET /api/tags body
 * and those of cache_articles.h.  A key may also stand for a set of
 * things that only ever changes, never holds a value (lg: "the global
 * list changed"): entries that depend on it name it in their deps.
 *
 * Coherence.  An entry is served only while neither its key nor any key
 * it depends on was invalidated after the read that made it; the
 * invalidation stamps are shared by the workers of the instance
 * (common/stamps.h), so a write one worker has answered is never served
 * stale by another.  A writer calls cache_drop() for what it changed
 * before answering; other instances' writes arrive as notifications
 * (cache_sync.c).  A value read from the database while an invalidation
 * of it was on its way must not be stored after the invalidation: a
 * reader takes cache_epoch() before it sends its query, and cache_put()
 * stores nothing when that key or a dependency (or, rarely, another key
 * sharing its stamp slot) was invalidated since, or the whole cache was
 * cleared.
 *
 * With standbys (db_read), a query whose answer fills the cache is sent to
 * the primary (api_cache_fill()): the invalidations come from the primary,
 * and a standby that has not yet replayed a write whose invalidation
 * arrived before the query was sent would answer with the old value,
 * which cache_put() would keep (no later invalidation is coming for it).
 *
 * A disabled cache (off, or its listening connection down) answers every
 * lookup with a miss and stores nothing: it never serves what it could
 * not keep coherent.
 *
 * Stale answers (cache_stale_max(), docs/caching.md "Stale answers"): a
 * request that would wait for another's fill of a key while the database
 * is backed up may be given the value the key held before its change,
 * through cache_get_stale(): never past the bound after the moment the
 * value was last known current, and never a value read before the
 * caller's own last write.  Only the kinds a request waits for a fill of
 * are kept stale (the tag list, articles, list pages, the feed).
 *
 * Ownership: the cache copies keys and values.  A value returned by
 * cache_get() stays valid until the next cache_put(), cache_drop() or
 * cache_clear(), or a lookup of the same key (which drops it when it
 * has gone stale).
 * One event loop uses it: no locking.
 */
#ifndef CONDUITD_CACHE_H
#define CONDUITD_CACHE_H

#include <stddef.h>
#include <stdint.h>

struct worker_slot;
struct stamps;
struct cache;

/* The one fixed key (the others carry an id or a name). */
#define CACHE_KEY_TAGS "tags"

/* Room for any key the API can make; longer names go uncached. */
#define CACHE_KEY_MAX 320

/*
 * A key: prefix and a name ("p:" and a username) into key[CACHE_KEY_MAX],
 * -1 when it does not fit; prefix and an id ("u:" and 42).
 */
int cache_key_name(char *key, const char *prefix, const char *name);
void cache_key_id(char *key, const char *prefix, int64_t id);

/* An empty, disabled cache of at most max_entries; NULL without memory. */
struct cache *cache_new(size_t max_entries, struct worker_slot *slot);
void cache_free(struct cache *c);

/* From now on, the instance's stamps (the scoreboard's): empties the cache. */
void cache_share_stamps(struct cache *c, struct stamps *shared);

/* Holds at most max_bytes (keys, values, bookkeeping); unbounded until called. */
void cache_limit_bytes(struct cache *c, size_t max_bytes);

/*
 * Admission: a key not held is stored only at its n-th put in the recent
 * past (1: at once, the default), so that what is read once does not push
 * out what is read again (nginx's proxy_cache_min_uses).  With n > 1 a
 * table of 16 bytes a bucket remembers the keys lately put.  0, or -1
 * without memory (admission is then off).
 */
int cache_min_uses(struct cache *c, unsigned n);
/* Enabling starts empty; disabling drops everything. */
void cache_enable(struct cache *c, int on);
int cache_enabled(const struct cache *c);

/*
 * Stale answers: a value changed is still given by cache_get_stale() for
 * at most max_ms (milliseconds) after it was last known current; 0 (the
 * default): never, a changed value is dropped at once.
 */
void cache_stale_max(struct cache *c, int max_ms);
/* Enabled, with stale answers on? */
int cache_stale_on(const struct cache *c);

/* The value of key, or NULL (a miss, counted when enabled). */
const void *cache_get(struct cache *c, const char *key, size_t *len);

/* One answer that may take stale values (cache_get_stale()). */
struct cache_stale {
    int64_t now_ns;    /* when it is made (CLOCK_MONOTONIC) */
    int64_t writer_ns; /* the caller's last write (common/lastwrite.h); 0: none */
    unsigned taken;    /* stale values it took so far */
};

/*
 * cache_get() that also gives a stale value, within the bound at
 * s->now_ns and read after s->writer_ns (s->taken counts those), neither
 * counted as a lookup nor made more recent: the second look of a request
 * that missed.  With s NULL, cache_get().
 */
const void *cache_get_stale(struct cache *c, const char *key, size_t *len, struct cache_stale *s);

/* The same, neither counted nor made more recent: for a look before a fill. */
const void *cache_peek(struct cache *c, const char *key, size_t *len);

/* To take before the query whose answer will be given to cache_put(). */
uint64_t cache_epoch(const struct cache *c);

/* Stores a copy, unless disabled or key was invalidated since epoch. */
void cache_put(struct cache *c, const char *key, const void *val, size_t len, uint64_t epoch);

/*
 * cache_put() past the admission: for a value every cached answer of its
 * kind needs first (a signed-in viewer's sets), whose refusal would only
 * send its statement again.
 */
void cache_put_now(struct cache *c, const char *key, const void *val, size_t len, uint64_t epoch);
/* The hash a dependency is named by (of a key, which need not hold a value). */
uint64_t cache_key_hash(const char *key);

/*
 * cache_put() of a value that is also stale once any of deps (hashes of
 * keys, cache_key_hash()) is invalidated: refused if one already was
 * since epoch.
 */
void cache_put_deps(struct cache *c, const char *key, const void *val, size_t len, uint64_t epoch,
                    const uint64_t *deps, size_t ndeps);

/*
 * An invalidation: key changed (whether or not it was cached here).  With
 * shared stamps every worker of the instance stops serving it at once.
 */
void cache_drop(struct cache *c, const char *key);

/*
 * Forgets everything this worker holds and refuses what was read before
 * (its listener was lost: it may have missed invalidations).
 */
void cache_clear(struct cache *c);

/* How many entries are held, and the bytes they take. */
size_t cache_count(const struct cache *c);
size_t cache_bytes(const struct cache *c);

/*
 * Values made of a few nullable strings (a user's fields, a profile's):
 * cache_pack() encodes n of them into a malloc'd buffer (*len bytes; NULL
 * without memory), cache_unpack() points f[0..n) into such a value (NULL
 * where the string was NULL) and returns 0, or -1 when the value is not
 * such a record.
 */
void *cache_pack(const char *const *f, int n, size_t *len);
int cache_unpack(const void *val, size_t len, const char **f, int n);

#endif
