/*
 * cache_zone: see cache_zone.h.
 *
 * The mapping: the zone's header (its shards' locks, lists and
 * allocators), then each shard's buckets, then each shard's arena.  A
 * shard finds its buckets, its arena and the zone by offsets from its own
 * address, written once at creation and never again, so a worker that
 * died in the middle of a change cannot have spoilt them, and a reset
 * needs nothing else.  Every process maps the zone at the same address
 * (it is mapped before the fork), but nothing here depends on it.
 *
 * The entry bound is per shard (cache_size over the shards, rounded up),
 * and so is the memory: an entry larger than a shard's arena is refused.
 * Shards are at least SHARD_MIN_BYTES and SHARD_MIN_ENTRIES, so the
 * default (64 MB, 200,000 entries) has 16 shards of 4 MB and 12,500
 * entries, and a small cache is one shard: exact LRU, as the unit tests
 * of worker/cache.c expect.
 */
#include "config.h"

#include "common/cache_zone.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "common/log.h"
#include "common/zone_alloc.h"

#define MAGIC 0x656e6f7a64756f63ull /* "coudzone" */
#define SHARD_MIN_BYTES ((size_t)4 << 20)
#define SHARD_MIN_ENTRIES 1024
#define ARENA_MIN 256
#define PAGE 4096

struct zone_shard {
    pthread_mutex_t lock;
    /* Written at creation only. */
    int64_t zone_rel, buckets_rel, arena_rel; /* from this shard's address */
    uint64_t mask;                            /* buckets - 1 */
    uint64_t max_entries;
    uint64_t arena_size;
    unsigned index;
    /* Changed under the lock. */
    uint64_t mru, lru;             /* entry offsets; 0: none */
    _Atomic uint64_t count, bytes; /* also read without the lock, by cache_zone_stats() */
    struct zone_alloc alloc;
} __attribute__((aligned(64)));

struct cache_zone {
    uint64_t magic;
    size_t map_size;
    unsigned nshards;
    uint64_t capacity, max_entries;
    _Atomic uint64_t cleared_at;
    _Atomic uint64_t evictions, resets;
    struct zone_shard shard[CACHE_ZONE_MAX_SHARDS];
};

static size_t
round_up(size_t n, size_t to)
{
    return (n + to - 1) / to * to;
}

static struct cache_zone *
zone_of(struct zone_shard *s)
{
    return (struct cache_zone *)(void *)((char *)s + s->zone_rel);
}

static uint64_t *
buckets(struct zone_shard *s)
{
    return (uint64_t *)(void *)((char *)s + s->buckets_rel);
}

static unsigned char *
arena(struct zone_shard *s)
{
    return (unsigned char *)s + s->arena_rel;
}

static struct zone_entry *
entry(struct zone_shard *s, uint64_t off)
{
    return (struct zone_entry *)(void *)(arena(s) + off);
}

static uint64_t
offset_of(struct zone_shard *s, const struct zone_entry *e)
{
    return (uint64_t)((const unsigned char *)e - arena(s));
}

static size_t
entry_size(size_t keylen, size_t ndeps, size_t len)
{
    return sizeof(struct zone_entry) + ndeps * sizeof(uint64_t) + keylen + 1 + len;
}

struct cache_zone *
cache_zone_create(size_t max_entries, size_t max_bytes)
{
    unsigned n = CACHE_ZONE_MAX_SHARDS;
    size_t per_entries, nbuckets = 16, per_bytes, header, bucket_bytes, arena_stride, total;
    pthread_mutexattr_t attr;
    struct cache_zone *z;
    void *p;
    int rc;

    if (max_entries < 1)
        max_entries = 1;
    while (n > 1 && (max_bytes / n < SHARD_MIN_BYTES || max_entries / n < SHARD_MIN_ENTRIES))
        n /= 2;
    per_entries = (max_entries + n - 1) / n;
    while (nbuckets < per_entries)
        nbuckets <<= 1;
    per_bytes = (max_bytes / n) & ~(size_t)15;
    if (per_bytes < ARENA_MIN)
        per_bytes = ARENA_MIN;
    header = round_up(sizeof(struct cache_zone), PAGE);
    bucket_bytes = round_up(nbuckets * sizeof(uint64_t), 64);
    arena_stride = round_up(per_bytes, 64);
    total = header + n * bucket_bytes + n * arena_stride;
    /* Zeros: every bucket empty.  Pages are given as they are first written. */
    p = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1,
             0);
    if (p == MAP_FAILED)
        return NULL;
    z = p;
    z->magic = MAGIC;
    z->map_size = total;
    z->nshards = n;
    z->capacity = (uint64_t)per_bytes * n;
    z->max_entries = max_entries;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
    pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
    for (unsigned i = 0; i < n; i++) {
        struct zone_shard *s = &z->shard[i];
        char *base = (char *)p;
        if ((rc = pthread_mutex_init(&s->lock, &attr)) != 0) {
            pthread_mutexattr_destroy(&attr);
            munmap(p, total);
            errno = rc;
            return NULL;
        }
        s->zone_rel = (char *)z - (char *)s;
        s->buckets_rel = base + header + i * bucket_bytes - (char *)s;
        s->arena_rel = base + header + n * bucket_bytes + i * arena_stride - (char *)s;
        s->mask = nbuckets - 1;
        s->max_entries = per_entries;
        s->arena_size = per_bytes;
        s->index = i;
        zone_alloc_init(&s->alloc, arena(s), per_bytes);
    }
    pthread_mutexattr_destroy(&attr);
    return z;
}

void
cache_zone_destroy(struct cache_zone *z)
{
    if (z)
        munmap(z, z->map_size); /* the other processes keep their own mappings */
}

unsigned
cache_zone_shard_of(const struct cache_zone *z, uint64_t h)
{
    /* The high bits: the buckets use the low ones. */
    return (unsigned)(h >> 60) & (z->nshards - 1);
}

/* Everything the shard held, gone: what is left is an empty shard. */
static void
shard_reset(struct zone_shard *s)
{
    memset(buckets(s), 0, (s->mask + 1) * sizeof(uint64_t));
    s->mru = s->lru = 0;
    zone_alloc_init(&s->alloc, arena(s), s->arena_size);
    atomic_store_explicit(&s->count, 0, memory_order_relaxed);
    atomic_store_explicit(&s->bytes, 0, memory_order_relaxed);
}

/* A link that leads nowhere sensible: only a change cut short leaves one. */
static void
shard_broken(struct zone_shard *s)
{
    shard_reset(s);
    atomic_fetch_add(&zone_of(s)->resets, 1);
    log_warning("cache: shard %u of the shared cache was found inconsistent: emptied", s->index);
}

struct zone_shard *
cache_zone_lock(struct cache_zone *z, unsigned i)
{
    struct zone_shard *s = &z->shard[i];
    struct timespec until;
    int rc = pthread_mutex_trylock(&s->lock);

    if (rc == EBUSY) {
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_nsec += CACHE_ZONE_LOCK_MS * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        rc = pthread_mutex_clocklock(&s->lock, CLOCK_MONOTONIC, &until);
    }
    if (rc == EOWNERDEAD) {
        /*
         * Its owner died holding it, perhaps in the middle of a change:
         * nothing of the shard can be trusted, and an empty shard is
         * always right.
         */
        shard_reset(s);
        atomic_fetch_add(&z->resets, 1);
        pthread_mutex_consistent(&s->lock);
        log_warning("cache: a worker died holding the lock of shard %u of the shared cache: "
                    "the shard is emptied",
                    i);
        return s;
    }
    return rc == 0 ? s : NULL;
}

void
cache_zone_unlock(struct zone_shard *s)
{
    pthread_mutex_unlock(&s->lock);
}

/* Is off an entry of this shard, whole within its block? */
static int
entry_ok(struct zone_shard *s, uint64_t off)
{
    struct zone_entry *e;
    uint64_t tag;

    if (!zone_alloc_valid(&s->alloc, arena(s), off))
        return 0;
    memcpy(&tag, arena(s) + off - 8, sizeof(tag));
    if ((tag & ~15ull) - 16 < sizeof(*e))
        return 0; /* too small to be an entry: its fields would lie past the block */
    e = entry(s, off);
    return e->ndeps <= (1u << 20) && e->keylen <= (1u << 20) && e->len <= s->arena_size &&
           entry_size(e->keylen, e->ndeps, e->len) <= (tag & ~15ull) - 16;
}

struct zone_entry *
cache_zone_find(struct zone_shard *s, const char *key, size_t keylen, uint64_t h)
{
    uint64_t off = buckets(s)[h & s->mask];
    uint64_t steps = 0, limit = atomic_load_explicit(&s->count, memory_order_relaxed);

    while (off) {
        struct zone_entry *e;
        if (!entry_ok(s, off) || steps++ > limit) {
            shard_broken(s);
            return NULL;
        }
        e = entry(s, off);
        if (e->hash == h && e->keylen == keylen && memcmp(zone_entry_key(e), key, keylen) == 0)
            return e;
        off = e->chain;
    }
    return NULL;
}

static void
unlink_recency(struct zone_shard *s, struct zone_entry *e)
{
    if (e->prev)
        entry(s, e->prev)->next = e->next;
    else
        s->mru = e->next;
    if (e->next)
        entry(s, e->next)->prev = e->prev;
    else
        s->lru = e->prev;
    e->prev = e->next = 0;
}

static void
push_front(struct zone_shard *s, struct zone_entry *e)
{
    uint64_t off = offset_of(s, e);

    e->prev = 0;
    e->next = s->mru;
    if (s->mru)
        entry(s, s->mru)->prev = off;
    s->mru = off;
    if (!s->lru)
        s->lru = off;
}

void
cache_zone_touch(struct zone_shard *s, struct zone_entry *e)
{
    if (s->mru == offset_of(s, e))
        return;
    unlink_recency(s, e);
    push_front(s, e);
}

void
cache_zone_remove(struct zone_shard *s, struct zone_entry *e)
{
    uint64_t off = offset_of(s, e), *link = &buckets(s)[e->hash & s->mask];
    uint64_t steps = 0, limit = atomic_load_explicit(&s->count, memory_order_relaxed);

    while (*link && *link != off) {
        if (!entry_ok(s, *link) || steps++ > limit)
            break;
        link = &entry(s, *link)->chain;
    }
    if (*link != off) {
        shard_broken(s); /* not in its own bucket */
        return;
    }
    *link = e->chain;
    unlink_recency(s, e);
    zone_free(&s->alloc, arena(s), off);
    atomic_fetch_sub_explicit(&s->count, 1, memory_order_relaxed);
    atomic_store_explicit(&s->bytes, s->alloc.used, memory_order_relaxed);
}

static void
evict_lru(struct zone_shard *s)
{
    if (!entry_ok(s, s->lru)) {
        shard_broken(s);
        return;
    }
    cache_zone_remove(s, entry(s, s->lru));
    atomic_fetch_add_explicit(&zone_of(s)->evictions, 1, memory_order_relaxed);
}

struct zone_entry *
cache_zone_add(struct zone_shard *s, uint64_t h, size_t keylen, size_t ndeps, size_t len)
{
    size_t size;
    uint64_t off, *bucket;
    struct zone_entry *e;

    if (len > s->arena_size || keylen > s->arena_size || ndeps > s->arena_size)
        return NULL;
    size = entry_size(keylen, ndeps, len);
    if (zone_alloc_need(size) > s->arena_size)
        return NULL; /* larger than the whole shard: evict nothing for it */
    while (s->lru && atomic_load_explicit(&s->count, memory_order_relaxed) >= s->max_entries)
        evict_lru(s);
    while (!(off = zone_alloc(&s->alloc, arena(s), size))) {
        if (!s->lru)
            return NULL;
        evict_lru(s);
    }
    e = entry(s, off);
    memset(e, 0, sizeof(*e));
    e->hash = h;
    e->keylen = (uint32_t)keylen;
    e->ndeps = (uint32_t)ndeps;
    e->len = len;
    bucket = &buckets(s)[h & s->mask];
    e->chain = *bucket;
    *bucket = off;
    push_front(s, e);
    atomic_fetch_add_explicit(&s->count, 1, memory_order_relaxed);
    atomic_store_explicit(&s->bytes, s->alloc.used, memory_order_relaxed);
    return e;
}

void
cache_zone_clear(struct cache_zone *z, uint64_t tick)
{
    uint64_t cur = atomic_load(&z->cleared_at);

    while (cur < tick && !atomic_compare_exchange_weak(&z->cleared_at, &cur, tick))
        ;
}

uint64_t
cache_zone_cleared_at(const struct cache_zone *z)
{
    return atomic_load(&z->cleared_at);
}

unsigned
cache_zone_empty(struct cache_zone *z)
{
    unsigned n = 0;

    for (unsigned i = 0; i < z->nshards; i++) {
        struct zone_shard *s = cache_zone_lock(z, i);
        if (!s)
            continue; /* cleared all the same: cache_zone_clear() voided its entries */
        shard_reset(s);
        cache_zone_unlock(s);
        n++;
    }
    return n;
}

void
cache_zone_stats(const struct cache_zone *z, struct cache_zone_stats *out)
{
    memset(out, 0, sizeof(*out));
    for (unsigned i = 0; i < z->nshards; i++) {
        out->entries += atomic_load_explicit(&z->shard[i].count, memory_order_relaxed);
        out->bytes += atomic_load_explicit(&z->shard[i].bytes, memory_order_relaxed);
    }
    out->max_entries = z->max_entries;
    out->capacity = z->capacity;
    out->evictions = atomic_load_explicit(&z->evictions, memory_order_relaxed);
    out->resets = atomic_load_explicit(&z->resets, memory_order_relaxed);
    out->shards = z->nshards;
}

/* One shard, under its lock: see cache_zone_check(). */
static int
check_shard(struct zone_shard *s)
{
    uint64_t count = atomic_load(&s->count), chained = 0, listed = 0, prev = 0;

    if (zone_alloc_check(&s->alloc, arena(s)) < 0 || s->alloc.used != atomic_load(&s->bytes))
        return -1;
    for (uint64_t b = 0; b <= s->mask; b++)
        for (uint64_t off = buckets(s)[b]; off; off = entry(s, off)->chain)
            if (!entry_ok(s, off) || (entry(s, off)->hash & s->mask) != b || ++chained > count)
                return -1;
    for (uint64_t off = s->mru; off; prev = off, off = entry(s, off)->next)
        if (!entry_ok(s, off) || entry(s, off)->prev != prev || ++listed > count)
            return -1;
    return chained == count && listed == count && s->lru == prev ? 0 : -1;
}

int
cache_zone_check(struct cache_zone *z)
{
    for (unsigned i = 0; i < z->nshards; i++) {
        struct zone_shard *s = cache_zone_lock(z, i);
        int bad;
        if (!s)
            return -1;
        bad = check_shard(s);
        cache_zone_unlock(s);
        if (bad)
            return -1;
    }
    return 0;
}
