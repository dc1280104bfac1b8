/*
 * cache: the instance's cache of what the reads need (see
 * docs/caching.md): the user behind a token, profiles, the sets of a
 * viewer, the tag list, articles and list pages (worker/cache_articles.h).
 *
 * One cache per instance, in the memory the master maps before it forks
 * (common/cache_zone.h): a bounded map from a text key to a byte value,
 * least recently used out first, bounded in entries and in bytes
 * (cache_size and cache_memory, for the instance).  A struct cache is a
 * worker's handle on it: what is per worker (whether this worker may use
 * the cache, its admission table, its counters, the copies it handed out)
 * lives in the handle, the entries in the zone.  Keys name what they
 * hold, and the same names travel in the invalidations PostgreSQL sends
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
 * sharing its stamp slot) was invalidated since, the cache was cleared
 * since, or this worker's cache was off when the read was sent.
 *
 * With standbys (db_read), a query whose answer fills the cache is sent to
 * the primary (api_cache_fill()): the invalidations come from the primary,
 * and a standby that has not yet replayed a write whose invalidation
 * arrived before the query was sent would answer with the old value,
 * which cache_put() would keep (no later invalidation is coming for it).
 *
 * A disabled handle (the cache off, or this worker's listening connection
 * down) answers every lookup with a miss and stores nothing: a worker
 * never serves what it could not keep coherent.  Turning a handle off
 * (its listener lost) clears the whole cache, for every worker: this
 * worker may have missed invalidations while it did not know it was deaf,
 * and its fills of that time are in the shared cache.
 *
 * Stale answers (cache_stale_max(), docs/caching.md "Stale answers"): a
 * request that would wait for another's fill of a key while the database
 * is backed up may be given the value the key held before its change,
 * through cache_get_stale(): never past the bound after the moment the
 * value was last known current, and never a value read before the
 * caller's own last write.  Only the kinds a request waits for a fill of
 * are kept stale (the tag list, articles, list pages, the feed).
 *
 * Ownership: the cache copies keys and values in.  A value returned by
 * cache_get(), cache_get_stale() or cache_peek() is a copy, in this
 * worker's memory (the shared memory is only read under a lock, and no
 * pointer into it leaves the lock's hold): it stays valid until the next
 * cache_release(), whatever else the cache is asked meanwhile.  A request
 * calls cache_release() before its first lookup: one callback at a time
 * runs, and none keeps a value past its own end, so the copies the
 * earlier callbacks took are dead by then.  cache_release() also takes
 * the snapshot the lookups of the answer that follows keep to: they take
 * no entry stored from a read after it (by another worker, between two
 * of them), so that an answer made of several values is one moment's.
 * One event loop uses a handle; the zone has its own locks.
 */
#ifndef CONDUITD_CACHE_H
#define CONDUITD_CACHE_H

#include <stddef.h>
#include <stdint.h>

struct worker_slot;
struct stamps;
struct cache;
struct cache_zone;
struct cache_zone_stats;

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

/*
 * A disabled handle on zone, judging staleness by stamps (the instance's,
 * in the scoreboard), counting in slot (may be NULL); NULL without memory.
 * cache_free() leaves the zone as it is: the other workers use it.
 */
struct cache *cache_new(struct cache_zone *zone, struct stamps *stamps, struct worker_slot *slot);
void cache_free(struct cache *c);

/*
 * Admission: a key not held is stored only at its n-th put in the recent
 * past (1: at once, the default), so that what is read once does not push
 * out what is read again (nginx's proxy_cache_min_uses).  With n > 1 a
 * table of 16 bytes a bucket remembers the keys lately put.  0, or -1
 * without memory (admission is then off).
 */
int cache_min_uses(struct cache *c, unsigned n);
/*
 * On: this worker uses the cache from now on, refusing its fills read
 * before (its slot says since when, for the master: scoreboard.h).  Off,
 * from on: it no longer does, and the whole cache is cleared (cache_clear()).
 */
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

/* A copy of the value of key (valid until cache_release()), or NULL (a miss, counted when enabled).
 */
const void *cache_get(struct cache *c, const char *key, size_t *len);

/*
 * The copies handed out so far are no longer used: their memory is taken
 * back.  And the lookups that follow (but cache_peek()) make one answer,
 * as of now: an entry read after this moment is not taken (see cache.c).
 */
void cache_release(struct cache *c);

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
 * Forgets everything the instance's cache holds and refuses, in every
 * worker, what was read before (a listener lost: invalidations may have
 * been missed; every user's rows changed).
 */
void cache_clear(struct cache *c);

/* How many entries the instance's cache holds, and the bytes they take. */
size_t cache_count(const struct cache *c);
size_t cache_bytes(const struct cache *c);
/* All the zone's figures (common/cache_zone.h). */
void cache_stats(const struct cache *c, struct cache_zone_stats *out);

#ifdef CONDUITD_TEST_HOOKS
/*
 * Dies (SIGKILL) holding the lock of key's shard, with an entry of key
 * half written in it: what a worker killed in the middle of a put leaves.
 * For t/integration/cache_kill.sh.
 */
void cache_debug_die_locked(struct cache *c, const char *key) __attribute__((noreturn));
#endif

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
