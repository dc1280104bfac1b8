/*
 * cache: see cache.h.  A chained hash table whose entries are also on one
 * doubly linked list, most recently used first; the table has a power of
 * two buckets, at least as many as the entries allowed, so chains stay
 * short without resizing.
 *
 * Invalidations are remembered per key, roughly: each one stamps the next
 * epoch into one of DROP_SLOTS slots chosen by the key's hash, and a fill
 * is refused when its key's slot (or a whole-cache clear) is newer than
 * the fill's read.  A global stamp would refuse every fill that was in
 * flight during any invalidation: with a hundred notifications a second,
 * most of them.  Two keys sharing a slot only cost a refused fill.
 */
#include "config.h"

#include "worker/cache.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "common/scoreboard.h"

struct entry {
    struct entry *chain;       /* next in the bucket */
    struct entry *prev, *next; /* recency: prev is more recent */
    uint64_t hash;
    size_t keylen, len;
    char data[]; /* key, NUL, then the value */
};

#define DROP_SLOTS 4096

struct cache {
    struct entry **buckets;
    size_t mask;
    size_t count, max;
    struct entry *mru, *lru;
    uint64_t epoch;      /* the last stamp given */
    uint64_t cleared_at; /* the stamp of the last cache_clear() */
    uint64_t dropped_at[DROP_SLOTS];
    int enabled;
    struct worker_slot *slot;
};

/* One more in a counter of the worker's scoreboard slot, if it has one. */
#define COUNT(c, field)                                                                            \
    do {                                                                                           \
        if ((c)->slot)                                                                             \
            scoreboard_add(&(c)->slot->c.field, 1);                                                \
    } while (0)

/* FNV-1a: keys are short text. */
static uint64_t
hash_key(const char *key, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ULL;

    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)key[i];
        h *= 0x100000001b3ULL;
    }
    return h;
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
    if (!c->buckets) {
        free(c);
        return NULL;
    }
    c->mask = n - 1;
    c->max = max_entries ? max_entries : 1;
    c->slot = slot;
    return c;
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

    while (*pp &&
           !((*pp)->hash == h && (*pp)->keylen == keylen && memcmp((*pp)->data, key, keylen) == 0))
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
    free(e);
}

void
cache_clear(struct cache *c)
{
    while (c->mru) {
        struct entry *e = c->mru;
        remove_entry(c, find(c, e->data, e->keylen, e->hash));
    }
    c->cleared_at = ++c->epoch;
}

void
cache_free(struct cache *c)
{
    if (!c)
        return;
    cache_clear(c);
    free(c->buckets);
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

size_t
cache_count(const struct cache *c)
{
    return c->count;
}

uint64_t
cache_epoch(const struct cache *c)
{
    return c->epoch;
}

const void *
cache_get(struct cache *c, const char *key, size_t *len)
{
    size_t keylen = strlen(key);
    struct entry *e;

    if (!c->enabled)
        return NULL;
    e = *find(c, key, keylen, hash_key(key, keylen));
    if (!e) {
        COUNT(c, cache_misses);
        return NULL;
    }
    COUNT(c, cache_hits);
    unlink_recency(c, e);
    push_front(c, e);
    *len = e->len;
    return e->data + e->keylen + 1;
}

void
cache_put(struct cache *c, const char *key, const void *val, size_t len, uint64_t epoch)
{
    size_t keylen = strlen(key);
    uint64_t h = hash_key(key, keylen);
    struct entry **pp, *e;

    if (!c->enabled || c->cleared_at > epoch || c->dropped_at[h % DROP_SLOTS] > epoch)
        return;
    pp = find(c, key, keylen, h);
    if (*pp)
        remove_entry(c, pp);
    else if (c->count >= c->max)
        remove_entry(c, find(c, c->lru->data, c->lru->keylen, c->lru->hash));
    e = malloc(sizeof(*e) + keylen + 1 + len);
    if (!e)
        return; /* a cache may always forget */
    e->hash = h;
    e->keylen = keylen;
    e->len = len;
    memcpy(e->data, key, keylen + 1);
    memcpy(e->data + keylen + 1, val, len);
    pp = &c->buckets[h & c->mask];
    e->chain = *pp;
    *pp = e;
    push_front(c, e);
    c->count++;
}

void
cache_drop(struct cache *c, const char *key)
{
    size_t keylen = strlen(key);
    uint64_t h = hash_key(key, keylen);
    struct entry **pp = find(c, key, keylen, h);

    c->dropped_at[h % DROP_SLOTS] = ++c->epoch;
    COUNT(c, cache_invalidations);
    if (*pp)
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
