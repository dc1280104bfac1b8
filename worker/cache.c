/*
 * cache: see cache.h.  A chained hash table whose entries are also on one
 * doubly linked list, most recently used first; the table has a power of
 * two buckets, at least as many as the entries allowed, so chains stay
 * short without resizing.
 *
 * Invalidations are remembered per key, roughly, in a table of stamps
 * (common/stamps.h): each one stamps the next tick of a clock into the
 * slot its key's hash chooses.  An entry keeps the epoch of the read that
 * made it and the hashes of the keys it depends on (its own first); it is
 * served only while none of their slots is newer, and a fill is refused
 * outright when one already is (or the whole cache was cleared since).
 * A global stamp would refuse every fill that was in flight during any
 * invalidation: with a hundred notifications a second, most of them.
 *
 * The table is the instance's, in the scoreboard page, once
 * cache_share_stamps() has been called: then an invalidation by one
 * worker is seen by every other worker of the instance at its next
 * lookup, with no message.  Until then it is the cache's own.
 *
 * Stale answers (cache_stale_max()): an entry of a kind that may be
 * answered stale is not dropped when it goes stale, only once it is past
 * the bound, and each entry keeps the last moment it was known current
 * (fresh_ns): when it was stored, or last found fresh by a lookup.  Its
 * first invalidation came after that moment, so a value given no later
 * than the bound after it is given no later than the bound after the
 * invalidation.  Anchoring at the change itself would need its time: a slot
 * keeps only the latest stamp of every key that shares it, which may be
 * later than the change that first made the entry stale.
 */
#include "config.h"

#include "worker/cache.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/scoreboard.h"
#include "common/stamps.h"

struct entry {
    struct entry *chain;       /* next in the bucket */
    struct entry *prev, *next; /* recency: prev is more recent */
    uint64_t hash;
    uint64_t epoch;   /* of the read that made the value */
    int64_t fresh_ns; /* last known current (CLOCK_MONOTONIC); kept up with stale answers on */
    size_t keylen, len, size;
    size_t ndeps;
    uint64_t deps[]; /* the hashes it depends on, then the key, NUL, and the value */
};

/* A key put lately (cache_min_uses): its hash and how many times. */
struct seen {
    uint64_t hash;
    uint32_t uses;
};

struct cache {
    struct entry **buckets;
    struct seen *seen; /* mask + 1 of them, with min_uses > 1 */
    unsigned min_uses;
    size_t mask;
    size_t count, max;
    size_t bytes, max_bytes; /* what the entries take, allocation included */
    struct entry *mru, *lru;
    uint64_t cleared_at; /* the tick of the last cache_clear() */
    struct stamps *stamps, *own;
    int enabled;
    int64_t stale_max_ns; /* cache_stale_max(); 0: stale entries go at once */
    struct worker_slot *slot;
};

static char *
entry_key(struct entry *e)
{
    return (char *)(e->deps + e->ndeps);
}

/* One more in a counter of the worker's scoreboard slot, if it has one. */
#define COUNT(c, field)                                                                            \
    do {                                                                                           \
        if ((c)->slot)                                                                             \
            scoreboard_add(&(c)->slot->c.field, 1);                                                \
    } while (0)

/*
 * The kind a key is counted under (conduitd_cache_lookups_total): its
 * shape, as cache.h and cache_articles.h name them.
 */
static const struct {
    const char *prefix;
    enum scoreboard_cache_kind kind;
} key_kinds[] = {
    {"u:", SB_CACHE_USER},      {"p:", SB_CACHE_PROFILE},     {"f:", SB_CACHE_FOLLOWEES},
    {"v:", SB_CACHE_FAVORITES}, {"a:", SB_CACHE_ARTICLE},     {"L|", SB_CACHE_LIST_GLOBAL},
    {"T|", SB_CACHE_LIST_TAG},  {"A|", SB_CACHE_LIST_AUTHOR}, {"F|", SB_CACHE_LIST_FAVORITED},
    {"D|", SB_CACHE_FEED},
};

static enum scoreboard_cache_kind
key_kind(const char *key)
{
    if (strcmp(key, CACHE_KEY_TAGS) == 0)
        return SB_CACHE_TAGS;
    for (size_t i = 0; i < sizeof(key_kinds) / sizeof(key_kinds[0]); i++)
        if (strncmp(key, key_kinds[i].prefix, 2) == 0)
            return key_kinds[i].kind;
    return SB_CACHE_OTHER;
}

/*
 * May the value of key be answered stale?  What a request waits for a
 * shared fill of (cache_fill.h): the tag list, articles, the list pages
 * and the feed.  The user behind a token, profiles and a viewer's sets
 * are always exact (and dropped by name at once, as without stale answers).
 */
static int
may_go_stale(const char *key)
{
    switch (key_kind(key)) {
    case SB_CACHE_TAGS:
    case SB_CACHE_ARTICLE:
    case SB_CACHE_LIST_GLOBAL:
    case SB_CACHE_LIST_TAG:
    case SB_CACHE_LIST_AUTHOR:
    case SB_CACHE_LIST_FAVORITED:
    case SB_CACHE_FEED:
        return 1;
    default:
        return 0;
    }
}

/*
 * CLOCK_MONOTONIC, coarse: for "known current at", which may only err
 * early (the coarse clock is the time of the last tick, never ahead).
 */
static int64_t
coarse_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* One lookup of key, ended as result, in the worker's scoreboard slot. */
static void
count_lookup(struct cache *c, const char *key, enum scoreboard_cache_result result)
{
    if (c->slot)
        scoreboard_add(&c->slot->c.cache_lookups[key_kind(key)][result], 1);
}

/* The gauge /metrics and /status read. */
static void
publish_bytes(struct cache *c)
{
    if (c->slot)
        atomic_store_explicit(&c->slot->cache_bytes, (int64_t)c->bytes, memory_order_relaxed);
}

/* FNV-1a: keys are short text. */
static uint64_t
hash_n(const char *key, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ULL;

    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)key[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

int
cache_key_name(char *key, const char *prefix, const char *name)
{
    int n = snprintf(key, CACHE_KEY_MAX, "%s%s", prefix, name);

    return n > 0 && n < CACHE_KEY_MAX ? 0 : -1;
}

void
cache_key_id(char *key, const char *prefix, int64_t id)
{
    snprintf(key, CACHE_KEY_MAX, "%s%lld", prefix, (long long)id);
}

uint64_t
cache_key_hash(const char *key)
{
    return hash_n(key, strlen(key));
}

struct cache *
cache_new(size_t max_entries, struct worker_slot *slot)
{
    struct cache *c = calloc(1, sizeof(*c));
    size_t n = 16;

    if (!c)
        return NULL;
    while (n < max_entries)
        n <<= 1;
    c->buckets = calloc(n, sizeof(*c->buckets));
    c->own = calloc(1, sizeof(*c->own));
    if (!c->buckets || !c->own) {
        free(c->buckets);
        free(c->own);
        free(c);
        return NULL;
    }
    c->stamps = c->own;
    c->mask = n - 1;
    c->max = max_entries ? max_entries : 1;
    c->max_bytes = SIZE_MAX;
    c->min_uses = 1;
    c->slot = slot;
    return c;
}

void
cache_share_stamps(struct cache *c, struct stamps *shared)
{
    cache_clear(c);
    c->stamps = shared;
    c->cleared_at = stamps_tick(shared);
    free(c->own); /* 8 MB of address space no lookup reads any more */
    c->own = NULL;
}

void
cache_limit_bytes(struct cache *c, size_t max_bytes)
{
    c->max_bytes = max_bytes;
}

int
cache_min_uses(struct cache *c, unsigned n)
{
    free(c->seen);
    c->seen = NULL;
    c->min_uses = 1;
    if (n <= 1)
        return 0;
    if (!(c->seen = calloc(c->mask + 1, sizeof(*c->seen))))
        return -1;
    c->min_uses = n;
    return 0;
}

/*
 * Is this put of h the min_uses-th in the recent past?  It counts as one.
 * "Recent" is as long as no other key's hash takes h's slot: a table as
 * large as the map's buckets, one key a slot, the latest wins.  A key
 * once admitted stays admitted while it keeps its slot, so a value
 * evicted and read again comes back at once.
 */
static int
admit(struct cache *c, uint64_t h)
{
    struct seen *s;

    if (c->min_uses <= 1)
        return 1;
    s = &c->seen[h & c->mask];
    if (s->hash != h) {
        s->hash = h;
        s->uses = 0;
    }
    if (s->uses < c->min_uses)
        s->uses++;
    return s->uses >= c->min_uses;
}

static void
unlink_recency(struct cache *c, struct entry *e)
{
    if (e->prev)
        e->prev->next = e->next;
    else
        c->mru = e->next;
    if (e->next)
        e->next->prev = e->prev;
    else
        c->lru = e->prev;
    e->prev = e->next = NULL;
}

static void
push_front(struct cache *c, struct entry *e)
{
    e->prev = NULL;
    e->next = c->mru;
    if (c->mru)
        c->mru->prev = e;
    c->mru = e;
    if (!c->lru)
        c->lru = e;
}

/* The link that points at key's entry (or at the NULL ending its chain). */
static struct entry **
find(struct cache *c, const char *key, size_t keylen, uint64_t h)
{
    struct entry **pp = &c->buckets[h & c->mask];

    while (*pp && !((*pp)->hash == h && (*pp)->keylen == keylen &&
                    memcmp(entry_key(*pp), key, keylen) == 0))
        pp = &(*pp)->chain;
    return pp;
}

static void
remove_entry(struct cache *c, struct entry **pp)
{
    struct entry *e = *pp;

    *pp = e->chain;
    unlink_recency(c, e);
    c->count--;
    c->bytes -= e->size;
    free(e);
    publish_bytes(c);
}

static void
remove_lru(struct cache *c)
{
    struct entry *e = c->lru;

    remove_entry(c, find(c, entry_key(e), e->keylen, e->hash));
}

void
cache_clear(struct cache *c)
{
    while (c->mru)
        remove_lru(c);
    c->cleared_at = stamps_tick(c->stamps);
}

void
cache_free(struct cache *c)
{
    if (!c)
        return;
    cache_clear(c);
    free(c->buckets);
    free(c->seen);
    free(c->own);
    free(c);
}

void
cache_enable(struct cache *c, int on)
{
    cache_clear(c);
    c->enabled = on;
}

int
cache_enabled(const struct cache *c)
{
    return c->enabled;
}

void
cache_stale_max(struct cache *c, int max_ms)
{
    c->stale_max_ns = max_ms > 0 ? (int64_t)max_ms * 1000000 : 0;
}

int
cache_stale_on(const struct cache *c)
{
    return c->enabled && c->stale_max_ns > 0;
}

size_t
cache_count(const struct cache *c)
{
    return c->count;
}

size_t
cache_bytes(const struct cache *c)
{
    return c->bytes;
}

uint64_t
cache_epoch(const struct cache *c)
{
    return stamps_tick(c->stamps); /* the time of the read: later than every change before */
}

/* Has something h stands for changed since epoch? */
static int
changed(const struct cache *c, uint64_t h, uint64_t epoch)
{
    return stamps_of(c->stamps, h) > epoch;
}

/* Has nothing e depends on changed since its read?  Notes when it was so. */
static int
fresh(struct cache *c, struct entry *e)
{
    /* Taken before the stamps are read: the entry was current then. */
    int64_t now = c->stale_max_ns ? coarse_ns() : 0;

    for (size_t i = 0; i < e->ndeps; i++)
        if (changed(c, e->deps[i], e->epoch))
            return 0;
    e->fresh_ns = now;
    return 1;
}

/* May e, stale, still be answered at now (within the bound)? */
static int
within_bound(const struct cache *c, struct entry *e, int64_t now)
{
    return c->stale_max_ns && now - e->fresh_ns <= c->stale_max_ns && may_go_stale(entry_key(e));
}

/*
 * The entry of key, fresh, or NULL (*stale set when it is held but stale).
 * A stale one is dropped on the way, unless it may still be answered
 * stale (keep_stale: then it is returned, *stale set).
 */
static struct entry *
lookup(struct cache *c, const char *key, int *stale, int keep_stale)
{
    size_t keylen = strlen(key);
    struct entry **pp = find(c, key, keylen, hash_n(key, keylen));
    struct entry *e = *pp;

    *stale = 0;
    if (!e || fresh(c, e))
        return e;
    *stale = 1;
    if (within_bound(c, e, coarse_ns()))
        return keep_stale ? e : NULL;
    remove_entry(c, pp); /* another worker's write: gone for good */
    return NULL;
}

const void *
cache_get(struct cache *c, const char *key, size_t *len)
{
    struct entry *e;
    int stale;

    if (!c->enabled)
        return NULL;
    if (!(e = lookup(c, key, &stale, 0))) {
        count_lookup(c, key, stale ? SB_CACHE_STALE : SB_CACHE_ABSENT);
        return NULL;
    }
    count_lookup(c, key, SB_CACHE_HIT);
    unlink_recency(c, e);
    push_front(c, e);
    *len = e->len;
    return entry_key(e) + e->keylen + 1;
}

const void *
cache_peek(struct cache *c, const char *key, size_t *len)
{
    struct entry *e;
    int stale;

    if (!c->enabled || !(e = lookup(c, key, &stale, 0)))
        return NULL;
    *len = e->len;
    return entry_key(e) + e->keylen + 1;
}

const void *
cache_get_stale(struct cache *c, const char *key, size_t *len, struct cache_stale *s)
{
    struct entry *e;
    int stale;

    if (!s)
        return cache_get(c, key, len);
    if (!c->enabled || !(e = lookup(c, key, &stale, 1)))
        return NULL;
    if (stale) {
        /* Exact at s->now_ns, not at the coarse time lookup() kept it by. */
        if (!within_bound(c, e, s->now_ns) || e->epoch <= (uint64_t)s->writer_ns)
            return NULL;
        s->taken++;
    }
    *len = e->len;
    return entry_key(e) + e->keylen + 1;
}

/* always: past cache_min_uses. */
static void
put(struct cache *c, const char *key, const void *val, size_t len, uint64_t epoch,
    const uint64_t *deps, size_t ndeps, int always)
{
    size_t keylen = strlen(key);
    uint64_t h = hash_n(key, keylen);
    size_t size = sizeof(struct entry) + (ndeps + 1) * sizeof(uint64_t) + keylen + 1 + len;
    int64_t now = c->stale_max_ns ? coarse_ns() : 0; /* before the stamps: current then */
    struct entry **pp, *e;

    if (!c->enabled || c->cleared_at > epoch || changed(c, h, epoch) || size > c->max_bytes)
        return;
    for (size_t i = 0; i < ndeps; i++)
        if (changed(c, deps[i], epoch))
            return;
    pp = find(c, key, keylen, h);
    if (!*pp && !always && !admit(c, h)) {
        COUNT(c, cache_unadmitted); /* read once so far: not worth what it would push out */
        return;
    }
    if (*pp)
        remove_entry(c, pp);
    while (c->mru && (c->count >= c->max || c->bytes + size > c->max_bytes)) {
        remove_lru(c);
        COUNT(c, cache_evictions);
    }
    e = malloc(size);
    if (!e)
        return; /* a cache may always forget */
    e->hash = h;
    e->epoch = epoch;
    e->fresh_ns = now;
    e->keylen = keylen;
    e->len = len;
    e->size = size;
    e->ndeps = ndeps + 1;
    e->deps[0] = h;
    if (ndeps)
        memcpy(e->deps + 1, deps, ndeps * sizeof(uint64_t));
    memcpy(entry_key(e), key, keylen + 1);
    memcpy(entry_key(e) + keylen + 1, val, len);
    pp = &c->buckets[h & c->mask];
    e->chain = *pp;
    *pp = e;
    push_front(c, e);
    c->count++;
    c->bytes += size;
    publish_bytes(c);
}

void
cache_put(struct cache *c, const char *key, const void *val, size_t len, uint64_t epoch)
{
    put(c, key, val, len, epoch, NULL, 0, 0);
}

void
cache_put_now(struct cache *c, const char *key, const void *val, size_t len, uint64_t epoch)
{
    put(c, key, val, len, epoch, NULL, 0, 1);
}

void
cache_put_deps(struct cache *c, const char *key, const void *val, size_t len, uint64_t epoch,
               const uint64_t *deps, size_t ndeps)
{
    put(c, key, val, len, epoch, deps, ndeps, 0);
}

void
cache_drop(struct cache *c, const char *key)
{
    size_t keylen = strlen(key);
    uint64_t h = hash_n(key, keylen);
    struct entry **pp = find(c, key, keylen, h);

    stamps_bump(c->stamps, h);
    COUNT(c, cache_invalidations);
    /* Stale from now on; kept while it may be answered stale. */
    if (*pp && !within_bound(c, *pp, coarse_ns()))
        remove_entry(c, pp);
}

/* Each string: a byte 0 (NULL) or 1 (present), then its bytes and a NUL. */
void *
cache_pack(const char *const *f, int n, size_t *len)
{
    size_t total = 0;
    char *out, *p;

    for (int i = 0; i < n; i++)
        total += 1 + (f[i] ? strlen(f[i]) + 1 : 0);
    if (!(out = malloc(total ? total : 1)))
        return NULL;
    p = out;
    for (int i = 0; i < n; i++) {
        *p++ = f[i] != NULL;
        if (f[i]) {
            size_t k = strlen(f[i]) + 1;
            memcpy(p, f[i], k);
            p += k;
        }
    }
    *len = total;
    return out;
}

int
cache_unpack(const void *val, size_t len, const char **f, int n)
{
    const char *p = val, *end = p + len;

    for (int i = 0; i < n; i++) {
        if (p >= end)
            return -1;
        if (*p++ == 0) {
            f[i] = NULL;
            continue;
        }
        f[i] = p;
        p = memchr(p, '\0', (size_t)(end - p));
        if (!p)
            return -1;
        p++;
    }
    return p == end ? 0 : -1;
}
