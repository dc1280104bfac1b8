/*
 * cache: see cache.h.  The entries live in the instance's zone
 * (common/cache_zone.h), a map and a recency list per shard under the
 * shard's lock; this file says what may be stored and served.
 *
 * Invalidations are remembered per key, roughly, in a table of stamps
 * (common/stamps.h), the instance's, in the scoreboard page: each one
 * stamps the next tick of a clock into the slot its key's hash chooses,
 * and every worker sees it at its next lookup, with no message.  An entry
 * keeps the epoch of the read that made it and the hashes of the keys it
 * depends on (its own first); it is served only while none of their slots
 * is newer, and a fill is refused outright when one already is (or the
 * whole cache was cleared since, or this worker's cache was off when the
 * read was sent).  A global stamp would refuse every fill that was in
 * flight during any invalidation: with a hundred notifications a second,
 * most of them.
 *
 * A lookup copies the value out while it holds the shard's lock, into
 * memory of the handle (blocks kept until cache_release()): a worker
 * killed while it holds the lock leaves nothing another worker is
 * reading, and a shard emptied after a dead owner (cache_zone.h) takes
 * no value from under anyone.  A shard whose lock is not had in time
 * (its owner stopped or stuck) is left alone for BUSY_SKIP_NS: its
 * lookups miss, its puts and drops are skipped (a skipped drop is safe:
 * the stamp, bumped first, already refuses the entry).
 *
 * Stale answers (cache_stale_max()): an entry of a kind that may be
 * answered stale is not dropped when it goes stale, only once it is past
 * the bound, and each entry keeps the last moment it was known current
 * (fresh_ns): when it was stored, or last found fresh by a lookup of any
 * worker.  Its first invalidation came after that moment, so a value
 * given no later than the bound after it is given no later than the bound
 * after the invalidation.  Anchoring at the change itself would need its
 * time: a slot keeps only the latest stamp of every key that shares it,
 * which may be later than the change that first made the entry stale.
 */
#include "config.h"

#include "worker/cache.h"

#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/cache_zone.h"
#include "common/scoreboard.h"
#include "common/stamps.h"

/* The copies of a request are made in blocks this large: a page and its articles fit. */
#define COPY_BLOCK (64 * 1024)
/* A shard whose lock was not had in time is left alone this long. */
#define BUSY_SKIP_NS 1000000000LL

/* A key put lately (cache_min_uses): its hash and how many times. */
struct seen {
    uint64_t hash;
    uint32_t uses;
};

/* Memory the copies of values are made in, until cache_release(). */
struct copy_block {
    struct copy_block *next;
    size_t used, cap;
    max_align_t data[]; /* bytes, aligned for any value */
};

struct cache {
    struct cache_zone *zone;
    struct stamps *stamps;
    struct worker_slot *slot;
    struct seen *seen; /* seen_mask + 1 of them, with min_uses > 1 */
    size_t seen_mask;
    unsigned min_uses;
    int enabled;
    uint64_t enabled_at;  /* the tick it was last turned on: fills read before are refused */
    int64_t stale_max_ns; /* cache_stale_max(); 0: stale entries go at once */
    int64_t busy_until[CACHE_ZONE_MAX_SHARDS]; /* CLOCK_MONOTONIC_COARSE; see BUSY_SKIP_NS */
    struct copy_block *copies;
    uint64_t snapshot; /* the tick of the last cache_release(): see look(); 0: none */
};

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
cache_new(struct cache_zone *zone, struct stamps *stamps, struct worker_slot *slot)
{
    struct cache *c = calloc(1, sizeof(*c));

    if (!c)
        return NULL;
    c->zone = zone;
    c->stamps = stamps;
    c->slot = slot;
    c->min_uses = 1;
    return c;
}

void
cache_release(struct cache *c)
{
    struct copy_block *b = c->copies, *keep = NULL;

    c->snapshot = stamps_tick(c->stamps);
    /* One block of the usual size is kept for the next request; a large one's go. */
    while (b) {
        struct copy_block *next = b->next;
        if (!keep && b->cap == COPY_BLOCK)
            keep = b;
        else
            free(b);
        b = next;
    }
    if (keep) {
        keep->next = NULL;
        keep->used = 0;
    }
    c->copies = keep;
}

void
cache_free(struct cache *c)
{
    if (!c)
        return;
    cache_release(c);
    free(c->copies); /* the one cache_release() kept */
    free(c->seen);
    free(c);
}

/* A copy of n bytes of val, valid until cache_release(); NULL without memory. */
static void *
copy_out(struct cache *c, const void *val, size_t n)
{
    struct copy_block *b = c->copies;
    size_t at =
        b ? (b->used + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t) : 0;
    void *p;

    if (!b || at + n > b->cap) {
        /* A new block in front; the one it replaces stays until cache_release(). */
        size_t cap = n > COPY_BLOCK ? n : COPY_BLOCK;
        struct copy_block *nb = malloc(sizeof(*nb) + cap);
        if (!nb)
            return NULL;
        nb->cap = cap;
        nb->used = 0;
        nb->next = b;
        c->copies = b = nb;
        at = 0;
    }
    p = (unsigned char *)b->data + at;
    if (n)
        memcpy(p, val, n);
    b->used = at + n;
    return p;
}

int
cache_min_uses(struct cache *c, unsigned n)
{
    struct cache_zone_stats st;
    size_t size = 16;

    free(c->seen);
    c->seen = NULL;
    c->min_uses = 1;
    if (n <= 1)
        return 0;
    /* As many as the instance's entries: a key keeps its count while it could be held. */
    cache_zone_stats(c->zone, &st);
    while (size < st.max_entries)
        size <<= 1;
    if (!(c->seen = calloc(size, sizeof(*c->seen))))
        return -1;
    c->seen_mask = size - 1;
    c->min_uses = n;
    return 0;
}

/*
 * Is this put of h the min_uses-th in the recent past?  It counts as one.
 * "Recent" is as long as no other key's hash takes h's slot: a table as
 * large as the cache's entries, one key a slot, the latest wins.  A key
 * once admitted stays admitted while it keeps its slot, so a value
 * evicted and read again comes back at once.  Each worker counts its own
 * puts (a key read once on each of two workers is read once twice).
 */
static int
admit(struct cache *c, uint64_t h)
{
    struct seen *s;

    if (c->min_uses <= 1)
        return 1;
    s = &c->seen[h & c->seen_mask];
    if (s->hash != h) {
        s->hash = h;
        s->uses = 0;
    }
    if (s->uses < c->min_uses)
        s->uses++;
    return s->uses >= c->min_uses;
}

/* The lock of h's shard, unless it was not had in time lately; NULL: go on without. */
static struct zone_shard *
lock_shard(struct cache *c, uint64_t h)
{
    unsigned i = cache_zone_shard_of(c->zone, h);
    int64_t now = 0;
    struct zone_shard *s;

    if (c->busy_until[i] && (now = coarse_ns()) < c->busy_until[i])
        return NULL;
    c->busy_until[i] = 0;
    if (!(s = cache_zone_lock(c->zone, i)))
        c->busy_until[i] = (now ? now : coarse_ns()) + BUSY_SKIP_NS;
    return s;
}

void
cache_enable(struct cache *c, int on)
{
    if (on && !c->enabled) {
        c->enabled_at = stamps_tick(c->stamps);
        c->enabled = 1;
        if (c->slot)
            atomic_store(&c->slot->cache_on_ns, (int64_t)c->enabled_at);
    } else if (!on && c->enabled) {
        /* First: the master must not count on this worker's listening from now on. */
        if (c->slot)
            atomic_store(&c->slot->cache_on_ns, 0);
        c->enabled = 0;
        cache_clear(c);
    }
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

void
cache_stats(const struct cache *c, struct cache_zone_stats *out)
{
    cache_zone_stats(c->zone, out);
}

size_t
cache_count(const struct cache *c)
{
    struct cache_zone_stats st;

    cache_zone_stats(c->zone, &st);
    return (size_t)st.entries;
}

size_t
cache_bytes(const struct cache *c)
{
    struct cache_zone_stats st;

    cache_zone_stats(c->zone, &st);
    return (size_t)st.bytes;
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
fresh(const struct cache *c, struct zone_entry *e)
{
    /* Taken before the stamps are read: the entry was current then. */
    int64_t now = coarse_ns();

    for (size_t i = 0; i < e->ndeps; i++)
        if (changed(c, e->deps[i], e->epoch))
            return 0;
    e->fresh_ns = now;
    return 1;
}

/* May e, stale, still be answered at now (within the bound)? */
static int
within_bound(const struct cache *c, struct zone_entry *e, int64_t now)
{
    return c->stale_max_ns && now - e->fresh_ns <= c->stale_max_ns &&
           may_go_stale(zone_entry_key(e));
}

enum look {
    LOOK_GET,   /* counted, made the most recent */
    LOOK_PEEK,  /* neither */
    LOOK_STALE, /* neither, and a stale value within the bound may answer */
};

/*
 * The lookup every reader makes: under the shard's lock, the entry of key
 * if fresh (or, with LOOK_STALE, stale and still within s's bound and
 * read after s's writer), copied out.  A stale entry is dropped on the
 * way unless it may still be answered stale; an entry read before the
 * cache was last cleared is dropped as if it had never been there.
 * *result says how it ended, for the counters.
 *
 * One answer is made of several lookups (a page, its articles, the
 * viewer's sets), each under its own lock hold, and another worker may
 * store between two of them a value it read after a write that changed
 * what an earlier lookup returned: a page from before an unfavorite with
 * the article from after it.  So the lookups of an answer take only
 * entries read before the request's snapshot (cache_release()): each one
 * fresh at its lookup, after the snapshot, was current at the snapshot,
 * and so is the whole answer.  A newer entry is left alone, a miss for
 * this answer only.  A peek, for a fill, takes any.
 */
static const void *
look(struct cache *c, const char *key, size_t *len, enum look how, struct cache_stale *s,
     enum scoreboard_cache_result *result)
{
    size_t keylen = strlen(key);
    uint64_t h = hash_n(key, keylen);
    struct zone_shard *sh = lock_shard(c, h);
    struct zone_entry *e;
    const void *out = NULL;

    *result = SB_CACHE_ABSENT;
    if (!sh)
        return NULL; /* its lock is busy: a miss, as if not held */
    e = cache_zone_find(sh, key, keylen, h);
    if (e && e->epoch < cache_zone_cleared_at(c->zone)) {
        cache_zone_remove(sh, e); /* voided by a clear (the master's, or a busy shard's) */
        e = NULL;
    }
    if (e && how != LOOK_PEEK && c->snapshot && e->epoch >= c->snapshot)
        e = NULL; /* read after this answer's snapshot: kept, for the next one */
    if (e && fresh(c, e)) {
        *result = SB_CACHE_HIT;
        if (how == LOOK_GET)
            cache_zone_touch(sh, e);
    } else if (e) {
        *result = SB_CACHE_STALE;
        if (!within_bound(c, e, coarse_ns())) {
            cache_zone_remove(sh, e); /* another worker's write: gone for good */
            e = NULL;
        } else if (how != LOOK_STALE) {
            e = NULL; /* kept, for a stale look */
        } else if (!within_bound(c, e, s->now_ns) || e->epoch <= (uint64_t)s->writer_ns) {
            /* Exact at s->now_ns, not at the coarse time; never before the caller's write. */
            e = NULL;
        }
    }
    if (e && (out = copy_out(c, zone_entry_value(e), e->len)) != NULL) {
        *len = e->len;
        if (*result == SB_CACHE_STALE)
            s->taken++;
    }
    cache_zone_unlock(sh);
    return out;
}

const void *
cache_get(struct cache *c, const char *key, size_t *len)
{
    enum scoreboard_cache_result result;
    const void *v;

    if (!c->enabled)
        return NULL;
    v = look(c, key, len, LOOK_GET, NULL, &result);
    count_lookup(c, key, v ? SB_CACHE_HIT : result == SB_CACHE_HIT ? SB_CACHE_ABSENT : result);
    return v;
}

const void *
cache_peek(struct cache *c, const char *key, size_t *len)
{
    enum scoreboard_cache_result result;

    if (!c->enabled)
        return NULL;
    return look(c, key, len, LOOK_PEEK, NULL, &result);
}

const void *
cache_get_stale(struct cache *c, const char *key, size_t *len, struct cache_stale *s)
{
    enum scoreboard_cache_result result;

    if (!s)
        return cache_get(c, key, len);
    if (!c->enabled)
        return NULL;
    return look(c, key, len, LOOK_STALE, s, &result);
}

/* always: past cache_min_uses. */
static void
put(struct cache *c, const char *key, const void *val, size_t len, uint64_t epoch,
    const uint64_t *deps, size_t ndeps, int always)
{
    size_t keylen = strlen(key);
    uint64_t h = hash_n(key, keylen);
    int64_t now = coarse_ns(); /* before the stamps: current then */
    struct zone_shard *sh;
    struct zone_entry *e;

    if (!c->enabled || c->enabled_at > epoch || cache_zone_cleared_at(c->zone) > epoch ||
        changed(c, h, epoch))
        return;
    for (size_t i = 0; i < ndeps; i++)
        if (changed(c, deps[i], epoch))
            return;
    if (!(sh = lock_shard(c, h)))
        return; /* a cache may always forget */
    e = cache_zone_find(sh, key, keylen, h);
    if (!e && !always && !admit(c, h)) {
        cache_zone_unlock(sh);
        COUNT(c, cache_unadmitted); /* read once so far: not worth what it would push out */
        return;
    }
    if (e)
        cache_zone_remove(sh, e);
    e = cache_zone_add(sh, h, keylen, ndeps + 1, len);
    if (e) {
        e->epoch = epoch;
        e->fresh_ns = now;
        e->deps[0] = h;
        if (ndeps)
            memcpy(e->deps + 1, deps, ndeps * sizeof(uint64_t));
        memcpy(zone_entry_key(e), key, keylen + 1);
        if (len)
            memcpy(zone_entry_value(e), val, len);
    }
    cache_zone_unlock(sh);
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
    struct zone_shard *sh;
    struct zone_entry *e;

    /* First, for every worker: from here on no lookup serves it fresh. */
    stamps_bump(c->stamps, h);
    COUNT(c, cache_invalidations);
    if (!(sh = lock_shard(c, h)))
        return;
    /* Stale from now on; kept while it may be answered stale. */
    if ((e = cache_zone_find(sh, key, keylen, h)) && !within_bound(c, e, coarse_ns()))
        cache_zone_remove(sh, e);
    cache_zone_unlock(sh);
}

void
cache_clear(struct cache *c)
{
    /*
     * The tick first, without a lock: every entry read before is void for
     * every worker at once, even in a shard whose lock is busy.  Then the
     * memory, shard by shard.
     */
    cache_zone_clear(c->zone, stamps_tick(c->stamps));
    cache_zone_empty(c->zone);
}

#ifdef CONDUITD_TEST_HOOKS
void
cache_debug_die_locked(struct cache *c, const char *key)
{
    size_t keylen = strlen(key);
    uint64_t h = hash_n(key, keylen);
    struct zone_shard *sh = cache_zone_lock(c->zone, cache_zone_shard_of(c->zone, h));
    struct zone_entry *e = sh ? cache_zone_add(sh, h, keylen, 1, 64) : NULL;

    /*
     * Linked in, epoch 0, no key: were it served, any lookup of its
     * bucket would read garbage.  The next locker must reset the shard.
     */
    if (e) {
        memset(zone_entry_key(e), 0xff, keylen / 2);
        e->chain = 8;
    }
    raise(SIGKILL);
    abort();
}
#endif

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
