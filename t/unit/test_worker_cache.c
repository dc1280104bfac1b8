/*
 * Unit tests for worker/cache.c: a bounded map that forgets the least
 * recently used first, never serves while disabled, refuses a value read
 * before an invalidation, and counts lookups (by the kind of key: hit,
 * stale or absent) and invalidations in the worker's scoreboard slot,
 * evictions in the zone; admission at the n-th put (cache_min_uses);
 * entries that depend on other keys; two workers' handles on one zone and
 * one table of stamps, as the workers of an instance have: what one
 * stores the other serves, what one invalidates or clears neither serves,
 * a fill read while a handle was off is refused; values handed out are
 * copies, valid until cache_release() whatever happens meanwhile; the
 * bound in bytes; stale answers (cache_stale_max): within the bound after
 * the value was last known current, never to a writer who wrote after its
 * read, only for the kinds that may, and replaced by the refresh.
 */
#include "worker/cache.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/cache_zone.h"
#include "common/clock.h"
#include "common/scoreboard.h"
#include "common/stamps.h"

static struct worker_slot slot;
static struct stamps *stamps;   /* the instance's, as in the scoreboard */
static struct cache_zone *zone; /* the last one made: each test frees it */

/* A handle on a new zone of max entries in max_bytes, enabled. */
static struct cache *
sized_cache(size_t max, size_t max_bytes)
{
    struct cache *c;

    if (!stamps)
        stamps = calloc(1, sizeof(*stamps));
    ck_assert_ptr_nonnull(stamps);
    zone = cache_zone_create(max, max_bytes);
    ck_assert_ptr_nonnull(zone);
    c = cache_new(zone, stamps, &slot);
    ck_assert_ptr_nonnull(c);
    cache_enable(c, 1);
    return c;
}

static struct cache *
enabled_cache(size_t max)
{
    return sized_cache(max, 1 << 20);
}

/* The handle and its zone. */
static void
done(struct cache *c)
{
    cache_free(c);
    cache_zone_destroy(zone);
    zone = NULL;
}

static uint64_t
evictions(void)
{
    struct cache_zone_stats st;

    cache_zone_stats(zone, &st);
    return st.evictions;
}

static void
put(struct cache *c, const char *key, const char *val)
{
    cache_put(c, key, val, strlen(val) + 1, cache_epoch(c));
}

/* The value of key as a string, or NULL. */
static const char *
get(struct cache *c, const char *key)
{
    size_t len;

    return cache_get(c, key, &len);
}

START_TEST(test_get_put)
{
    struct cache *c = enabled_cache(8);

    memset(&slot, 0, sizeof(slot));
    ck_assert_ptr_null(get(c, "tags"));
    put(c, "tags", "one");
    ck_assert_str_eq(get(c, "tags"), "one");
    put(c, "tags", "two"); /* replaces */
    ck_assert_str_eq(get(c, "tags"), "two");
    ck_assert_uint_eq(cache_count(c), 1);
    ck_assert_uint_eq(slot.c.cache_lookups[SB_CACHE_TAGS][SB_CACHE_HIT], 2);
    ck_assert_uint_eq(slot.c.cache_lookups[SB_CACHE_TAGS][SB_CACHE_ABSENT], 1);
    ck_assert_uint_eq(scoreboard_cache_total(&slot.c, SB_CACHE_HIT), 2);
    ck_assert_uint_eq(scoreboard_cache_total(&slot.c, SB_CACHE_STALE), 0);
    ck_assert_uint_eq(scoreboard_cache_misses(&slot.c), 1);
    ck_assert_uint_eq(evictions(), 0);
    done(c);
}
END_TEST

START_TEST(test_lru_eviction)
{
    struct cache *c = enabled_cache(3);
    char key[16];

    put(c, "a", "1");
    put(c, "b", "2");
    put(c, "c", "3");
    ck_assert_ptr_nonnull(get(c, "a")); /* a is now the most recent */
    put(c, "d", "4");                   /* evicts b, the least recent */
    ck_assert_uint_eq(cache_count(c), 3);
    ck_assert_ptr_null(get(c, "b"));
    ck_assert_str_eq(get(c, "a"), "1");
    ck_assert_str_eq(get(c, "c"), "3");
    ck_assert_str_eq(get(c, "d"), "4");
    /* Many more keys than room: the bound holds and the newest survive. */
    for (int i = 0; i < 1000; i++) {
        snprintf(key, sizeof(key), "u:%d", i);
        put(c, key, "x");
    }
    ck_assert_uint_eq(cache_count(c), 3);
    ck_assert_ptr_nonnull(get(c, "u:999"));
    ck_assert_ptr_null(get(c, "u:0"));
    done(c);
}
END_TEST

/* Each key's shape is counted under its kind, and how its lookup ended. */
START_TEST(test_lookup_kinds)
{
    static const struct {
        const char *key;
        enum scoreboard_cache_kind kind;
    } keys[] = {
        {"u:7", SB_CACHE_USER},
        {"p:alice", SB_CACHE_PROFILE},
        {"f:7", SB_CACHE_FOLLOWEES},
        {"v:7", SB_CACHE_FAVORITES},
        {"tags", SB_CACHE_TAGS},
        {"a:how-to-x", SB_CACHE_ARTICLE},
        {"L|10|0", SB_CACHE_LIST_GLOBAL},
        {"T|10|0|dragons", SB_CACHE_LIST_TAG},
        {"A|10|0|alice", SB_CACHE_LIST_AUTHOR},
        {"F|10|0|alice", SB_CACHE_LIST_FAVORITED},
        {"D|10|0|7", SB_CACHE_FEED},
        {"tagsX", SB_CACHE_OTHER},
        {"u", SB_CACHE_OTHER},
        {"", SB_CACHE_OTHER},
    };
    uint64_t deps[1] = {cache_key_hash("lg")};
    struct cache *c = enabled_cache(64);
    size_t n = sizeof(keys) / sizeof(keys[0]);

    memset(&slot, 0, sizeof(slot));
    for (size_t i = 0; i < n; i++) {
        ck_assert_ptr_null(get(c, keys[i].key)); /* absent */
        cache_put_deps(c, keys[i].key, "v", 2, cache_epoch(c), deps, 1);
        ck_assert_str_eq(get(c, keys[i].key), "v"); /* hit */
    }
    cache_drop(c, "lg"); /* every entry depends on it: each is now stale */
    for (size_t i = 0; i < n; i++)
        ck_assert_ptr_null(get(c, keys[i].key)); /* stale, and dropped */
    for (size_t i = 0; i < n; i++)
        ck_assert_ptr_null(get(c, keys[i].key)); /* absent again */
    for (int k = 0; k < SB_CACHE_KINDS; k++) {
        uint64_t want = 0;
        for (size_t i = 0; i < n; i++)
            want += keys[i].kind == (enum scoreboard_cache_kind)k;
        ck_assert_msg(slot.c.cache_lookups[k][SB_CACHE_HIT] == want &&
                          slot.c.cache_lookups[k][SB_CACHE_STALE] == want &&
                          slot.c.cache_lookups[k][SB_CACHE_ABSENT] == 2 * want,
                      "kind %d: hit %llu stale %llu absent %llu, want %llu %llu %llu", k,
                      (unsigned long long)slot.c.cache_lookups[k][SB_CACHE_HIT],
                      (unsigned long long)slot.c.cache_lookups[k][SB_CACHE_STALE],
                      (unsigned long long)slot.c.cache_lookups[k][SB_CACHE_ABSENT],
                      (unsigned long long)want, (unsigned long long)want,
                      (unsigned long long)(2 * want));
    }
    /* A key dropped by name is absent, not stale: it is no longer held. */
    put(c, "p:bob", "x");
    cache_drop(c, "p:bob");
    ck_assert_ptr_null(get(c, "p:bob"));
    ck_assert_uint_eq(slot.c.cache_lookups[SB_CACHE_PROFILE][SB_CACHE_STALE], 1);
    ck_assert_uint_eq(slot.c.cache_lookups[SB_CACHE_PROFILE][SB_CACHE_ABSENT], 3);
    ck_assert_uint_eq(evictions(), 0);
    done(c);
}
END_TEST

/* Only what goes for room is an eviction: not invalidations, not a clear. */
START_TEST(test_evictions_counted)
{
    struct cache *c = enabled_cache(3);
    char key[16];

    memset(&slot, 0, sizeof(slot));
    for (int i = 0; i < 10; i++) {
        snprintf(key, sizeof(key), "u:%d", i);
        put(c, key, "x");
    }
    ck_assert_uint_eq(evictions(), 7);
    cache_drop(c, "u:9");
    cache_clear(c);
    ck_assert_uint_eq(evictions(), 7);
    done(c);
    /* The bound in bytes evicts too. */
    c = sized_cache(3, 400);
    for (int i = 0; i < 3; i++) {
        char big[200];
        memset(big, 'b', sizeof(big) - 1);
        big[sizeof(big) - 1] = '\0';
        snprintf(key, sizeof(key), "p:%d", i);
        put(c, key, big);
    }
    ck_assert_uint_ge(evictions(), 1);
    ck_assert_uint_eq(evictions(), 3 - cache_count(c));
    done(c);
}
END_TEST

/*
 * cache_min_uses: a key not held is stored at its n-th put; held keys are
 * replaced at once; cache_put_now() skips the count; a key admitted once
 * comes back at once after an eviction or an invalidation.
 */
START_TEST(test_min_uses)
{
    struct cache *c = enabled_cache(4);
    size_t len;

    memset(&slot, 0, sizeof(slot));
    ck_assert_int_eq(cache_min_uses(c, 3), 0);
    put(c, "p:alice", "1");
    put(c, "p:alice", "2");
    ck_assert_ptr_null(get(c, "p:alice")); /* two puts of three: nothing held */
    ck_assert_uint_eq(slot.c.cache_unadmitted, 2);
    put(c, "p:alice", "3");
    ck_assert_str_eq(get(c, "p:alice"), "3");
    put(c, "p:alice", "4"); /* held: replaced, not counted again */
    ck_assert_str_eq(get(c, "p:alice"), "4");
    ck_assert_uint_eq(slot.c.cache_unadmitted, 2);
    /* A stale fill is refused before it counts as a use. */
    {
        uint64_t before = cache_epoch(c);
        cache_drop(c, "p:bob");
        cache_put(c, "p:bob", "old", 4, before);
        cache_put(c, "p:bob", "old", 4, before);
        cache_put(c, "p:bob", "old", 4, before);
        ck_assert_ptr_null(get(c, "p:bob"));
        ck_assert_uint_eq(slot.c.cache_unadmitted, 2);
        put(c, "p:bob", "b");
        put(c, "p:bob", "b");
        ck_assert_ptr_null(get(c, "p:bob"));
        put(c, "p:bob", "b");
        ck_assert_str_eq(get(c, "p:bob"), "b");
    }
    /* Dropped by an invalidation, or evicted: admitted again at its next put. */
    cache_drop(c, "p:alice");
    ck_assert_ptr_null(get(c, "p:alice"));
    put(c, "p:alice", "5");
    ck_assert_str_eq(get(c, "p:alice"), "5");
    for (int i = 0; i < 4; i++) { /* four keys put now push both out */
        char key[16];
        snprintf(key, sizeof(key), "v:%d", i);
        cache_put_now(c, key, "s", 2, cache_epoch(c));
        ck_assert_str_eq(get(c, key), "s"); /* stored at its first put */
    }
    ck_assert_ptr_null(cache_peek(c, "p:alice", &len));
    put(c, "p:alice", "6");
    ck_assert_str_eq(get(c, "p:alice"), "6");
    /* Back to 1: every put stores. */
    ck_assert_int_eq(cache_min_uses(c, 1), 0);
    put(c, "p:carol", "c");
    ck_assert_str_eq(get(c, "p:carol"), "c");
    done(c);
}
END_TEST

START_TEST(test_invalidation_races)
{
    struct cache *c = enabled_cache(8);
    uint64_t before = cache_epoch(c);

    memset(&slot, 0, sizeof(slot));
    /* An invalidation arrives while a query for the value is in flight. */
    cache_drop(c, "p:alice");
    cache_put(c, "p:alice", "stale", 6, before);
    ck_assert_ptr_null(get(c, "p:alice"));
    /* Another key's invalidation does not refuse this fill. */
    before = cache_epoch(c);
    cache_drop(c, "p:bob");
    cache_put(c, "p:carol", "kept", 5, before);
    ck_assert_str_eq(get(c, "p:carol"), "kept");
    /* A whole-cache clear refuses every fill that was in flight. */
    before = cache_epoch(c);
    cache_clear(c);
    cache_put(c, "p:carol", "stale", 6, before);
    ck_assert_ptr_null(get(c, "p:carol"));
    /* Read after the invalidation: kept. */
    cache_put(c, "p:alice", "fresh", 6, cache_epoch(c));
    ck_assert_str_eq(get(c, "p:alice"), "fresh");
    cache_drop(c, "p:alice");
    ck_assert_ptr_null(get(c, "p:alice"));
    ck_assert_uint_eq(slot.c.cache_invalidations, 3);
    put(c, "x", "1");
    put(c, "y", "2");
    cache_clear(c);
    ck_assert_uint_eq(cache_count(c), 0);
    ck_assert_ptr_null(get(c, "x"));
    done(c);
}
END_TEST

START_TEST(test_disabled)
{
    struct cache *c = enabled_cache(8);

    cache_free(c);
    c = cache_new(zone, stamps, NULL); /* starts disabled; no slot is fine */
    ck_assert_int_eq(cache_enabled(c), 0);
    put(c, "tags", "t");
    ck_assert_ptr_null(get(c, "tags"));
    cache_enable(c, 1);
    put(c, "tags", "t");
    ck_assert_str_eq(get(c, "tags"), "t");
    /* Turning it off forgets everything: nothing old is served when it comes back. */
    cache_enable(c, 0);
    ck_assert_ptr_null(get(c, "tags"));
    cache_enable(c, 1);
    ck_assert_ptr_null(get(c, "tags"));
    ck_assert_uint_eq(cache_count(c), 0);
    done(c);
}
END_TEST

START_TEST(test_pack)
{
    const char *in[4] = {"alice", "a@example.org", NULL, ""};
    const char *out[4];
    size_t len;
    void *v = cache_pack(in, 4, &len);

    ck_assert_ptr_nonnull(v);
    ck_assert_int_eq(cache_unpack(v, len, out, 4), 0);
    ck_assert_str_eq(out[0], "alice");
    ck_assert_str_eq(out[1], "a@example.org");
    ck_assert_ptr_null(out[2]);
    ck_assert_str_eq(out[3], "");
    /* A truncated or longer value is not a record of 4. */
    ck_assert_int_eq(cache_unpack(v, len - 1, out, 4), -1);
    ck_assert_int_eq(cache_unpack(v, len, out, 3), -1);
    free(v);
}
END_TEST

START_TEST(test_deps)
{
    struct cache *c = enabled_cache(8);
    uint64_t deps[2] = {cache_key_hash("lg"), cache_key_hash("u:7")};
    uint64_t before = cache_epoch(c);

    cache_put_deps(c, "L|10|0", "page", 5, before, deps, 2);
    ck_assert_str_eq(get(c, "L|10|0"), "page");
    /* A change of what it depends on makes it stale, held or not. */
    cache_drop(c, "u:7");
    ck_assert_ptr_null(get(c, "L|10|0"));
    ck_assert_uint_eq(cache_count(c), 0);
    /* A fill read before a dependency changed is refused. */
    before = cache_epoch(c);
    cache_drop(c, "lg");
    cache_put_deps(c, "L|10|0", "old", 4, before, deps, 2);
    ck_assert_ptr_null(get(c, "L|10|0"));
    /* Changes of keys it does not name leave it alone. */
    cache_put_deps(c, "L|10|0", "new", 4, cache_epoch(c), deps, 2);
    cache_drop(c, "la:alice");
    ck_assert_str_eq(get(c, "L|10|0"), "new");
    /* cache_peek sees the same, without counting. */
    {
        size_t len;
        uint64_t hits = scoreboard_cache_total(&slot.c, SB_CACHE_HIT);
        ck_assert_str_eq(cache_peek(c, "L|10|0", &len), "new");
        ck_assert_uint_eq(scoreboard_cache_total(&slot.c, SB_CACHE_HIT), hits);
        cache_drop(c, "lg");
        ck_assert_ptr_null(cache_peek(c, "L|10|0", &len));
    }
    done(c);
}
END_TEST

/*
 * Two workers of one instance, two handles on one zone and one table of
 * stamps: what one stores the other serves at its first lookup; a write
 * answered by one is never served stale by the other, with no message
 * between them; a clear by either (a lost listener) is both's.
 */
START_TEST(test_shared_zone)
{
    struct cache *a = enabled_cache(8), *b = cache_new(zone, stamps, NULL);
    uint64_t before;

    ck_assert_ptr_nonnull(b);
    cache_enable(b, 1);
    put(b, "u:1", "old");
    ck_assert_str_eq(get(a, "u:1"), "old"); /* one cache: a never read it */
    ck_assert_str_eq(get(b, "u:1"), "old");
    cache_drop(a, "u:1"); /* worker a wrote */
    ck_assert_ptr_null(get(b, "u:1"));
    ck_assert_ptr_null(get(a, "u:1"));
    /* b's read that was in flight during a's write is not kept. */
    before = cache_epoch(b);
    cache_drop(a, "u:1");
    cache_put(b, "u:1", "stale", 6, before);
    ck_assert_ptr_null(get(a, "u:1"));
    /* A read sent after the write is. */
    put(b, "u:1", "new");
    ck_assert_str_eq(get(a, "u:1"), "new");
    /* Stamps only rise: a late, lower bump does not revive an entry. */
    before = cache_epoch(b);
    stamps_bump(stamps, cache_key_hash("u:1"));
    atomic_store(&stamps->slot[cache_key_hash("u:1") & (STAMPS_SLOTS - 1)], before);
    ck_assert_ptr_null(get(b, "u:1"));
    /* A lost listener: a is off, and the cache cleared for b too. */
    put(b, "u:2", "two");
    cache_enable(a, 0);
    ck_assert_ptr_null(get(b, "u:2"));
    ck_assert_uint_eq(cache_count(b), 0);
    /* While a is off it neither serves nor stores, b does both. */
    put(a, "u:3", "from a");
    ck_assert_ptr_null(get(b, "u:3"));
    put(b, "u:3", "from b");
    ck_assert_ptr_null(get(a, "u:3"));
    /* A read a sent while off is refused once it is back on; one sent after is kept. */
    before = cache_epoch(a);
    cache_enable(a, 1);
    ck_assert_str_eq(get(a, "u:3"), "from b"); /* turning on clears nothing */
    cache_put(a, "u:4", "deaf read", 10, before);
    ck_assert_ptr_null(get(b, "u:4"));
    put(a, "u:4", "heard");
    ck_assert_str_eq(get(b, "u:4"), "heard");
    /* The master's clear (a worker reaped with nobody else listening): no lock, lazy. */
    cache_zone_clear(zone, stamps_tick(stamps));
    ck_assert_ptr_null(get(b, "u:4"));
    ck_assert_ptr_null(get(a, "u:3"));
    cache_free(b);
    done(a);
}
END_TEST

/*
 * A value handed out is a copy: it stays as it was until cache_release(),
 * whatever is put, dropped or cleared meanwhile, and however many others
 * are handed out with it (a page and its hundred articles).
 */
START_TEST(test_copies)
{
    struct cache *c = enabled_cache(256);
    const char *vals[200];
    char key[16], val[16];

    put(c, "tags", "old");
    vals[0] = get(c, "tags");
    put(c, "tags", "new");
    cache_drop(c, "tags");
    cache_clear(c);
    ck_assert_str_eq(vals[0], "old");
    for (int i = 0; i < 200; i++) {
        snprintf(key, sizeof(key), "a:%d", i);
        snprintf(val, sizeof(val), "v%d", i);
        put(c, key, val);
    }
    for (int i = 0; i < 200; i++) {
        snprintf(key, sizeof(key), "a:%d", i);
        vals[i] = get(c, key);
        ck_assert_ptr_nonnull(vals[i]);
    }
    for (int i = 0; i < 200; i++) {
        snprintf(val, sizeof(val), "v%d", i);
        ck_assert_str_eq(vals[i], val);
    }
    cache_release(c);
    /* An empty value (a viewer who follows nobody) is a value, not a miss. */
    {
        size_t len = 1;
        cache_put_now(c, "f:1", "", 0, cache_epoch(c));
        cache_release(c); /* a new answer's snapshot: after the put */
        ck_assert_ptr_nonnull(cache_get(c, "f:1", &len));
        ck_assert_uint_eq(len, 0);
    }
    /* Larger than a block of copies. */
    {
        size_t n = 200000, len;
        char *big = malloc(n);
        const char *got;
        memset(big, 'z', n);
        cache_put(c, "a:big", big, n, cache_epoch(c));
        cache_release(c);
        ck_assert_ptr_nonnull(got = cache_get(c, "a:big", &len));
        ck_assert_uint_eq(len, n);
        ck_assert_int_eq(memcmp(got, big, n), 0);
        free(big);
    }
    cache_release(c);
    done(c);
}
END_TEST

/*
 * The lookups of one answer keep to its snapshot (cache_release()): a
 * value another worker stores meanwhile, read after a write that may have
 * changed what the answer took already, is not mixed in; the next answer
 * takes it.  A peek (a fill's) takes it at once.
 */
START_TEST(test_snapshot)
{
    struct cache *a = enabled_cache(16), *b = cache_new(zone, stamps, NULL);
    size_t len;

    cache_enable(b, 1);
    put(b, "L|10|0", "page");
    put(b, "a:one", "old");
    cache_release(a);
    ck_assert_str_eq(get(a, "L|10|0"), "page"); /* the answer's first value */
    cache_drop(b, "a:one");                     /* b's write... */
    put(b, "a:one", "new");                     /* ...and its read after it */
    ck_assert_ptr_null(get(a, "a:one"));        /* not with the page read before */
    ck_assert_str_eq(cache_peek(a, "a:one", &len), "new");
    cache_release(a);
    ck_assert_str_eq(get(a, "a:one"), "new");
    cache_free(b);
    done(a);
}
END_TEST

START_TEST(test_bytes_bound)
{
    struct cache *c = sized_cache(1000, 20000);
    char key[16], val[1000];

    memset(val, 'x', sizeof(val) - 1);
    val[sizeof(val) - 1] = '\0';
    for (int i = 0; i < 100; i++) {
        snprintf(key, sizeof(key), "a:%d", i);
        put(c, key, val);
        ck_assert_uint_le(cache_bytes(c), 20000);
    }
    /* About 19 of 1 KB fit; the newest are kept. */
    ck_assert_uint_ge(cache_count(c), 15);
    ck_assert_uint_le(cache_count(c), 20);
    ck_assert_ptr_nonnull(get(c, "a:99"));
    ck_assert_ptr_null(get(c, "a:0"));
    /* A value larger than the whole bound is never stored, and evicts nothing. */
    {
        char *big = malloc(30000);
        size_t n = cache_count(c);
        memset(big, 'y', 30000);
        cache_put(c, "big", big, 30000, cache_epoch(c));
        ck_assert_ptr_null(get(c, "big"));
        ck_assert_uint_eq(cache_count(c), n);
        free(big);
    }
    cache_clear(c);
    ck_assert_uint_eq(cache_bytes(c), 0);
    done(c);
}
END_TEST

static void
sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};

    nanosleep(&ts, NULL);
}

/* cache_get_stale() as a string, for a caller who last wrote at writer_ns. */
static const char *
get_stale(struct cache *c, const char *key, int64_t at_ns, int64_t writer_ns, unsigned *taken)
{
    struct cache_stale s = {at_ns, writer_ns, 0};
    size_t len;
    const char *v = cache_get_stale(c, key, &len, &s);

    *taken = s.taken;
    return v;
}

START_TEST(test_stale_answers)
{
    struct cache *c = enabled_cache(16);
    unsigned taken;
    int64_t read_ns, seen_ns;

    memset(&slot, 0, sizeof(slot));
    cache_stale_max(c, 200);
    ck_assert_int_eq(cache_stale_on(c), 1);
    read_ns = clock_now_ns();
    put(c, "tags", "old");
    put(c, "p:alice", "profile");
    /* Fresh: the same as cache_get(), nothing taken stale. */
    ck_assert_str_eq(get_stale(c, "tags", clock_now_ns(), 0, &taken), "old");
    ck_assert_uint_eq(taken, 0);
    cache_drop(c, "tags");
    cache_drop(c, "p:alice");
    /* A plain lookup misses it (counted stale), but it is kept... */
    ck_assert_ptr_null(get(c, "tags"));
    ck_assert_uint_eq(slot.c.cache_lookups[SB_CACHE_TAGS][SB_CACHE_STALE], 1);
    ck_assert_uint_eq(cache_count(c), 1); /* the profile, never answered stale, is gone */
    ck_assert_ptr_null(get_stale(c, "p:alice", clock_now_ns(), 0, &taken));
    /* ...for a stale look of a caller who did not write since its read. */
    ck_assert_str_eq(get_stale(c, "tags", clock_now_ns(), 0, &taken), "old");
    ck_assert_uint_eq(taken, 1);
    ck_assert_str_eq(get_stale(c, "tags", clock_now_ns(), read_ns, &taken), "old");
    /* Never to a caller who wrote after the value was read. */
    ck_assert_ptr_null(get_stale(c, "tags", clock_now_ns(), clock_now_ns(), &taken));
    ck_assert_uint_eq(taken, 0);
    /* Never past the bound. */
    ck_assert_ptr_null(get_stale(c, "tags", clock_now_ns() + 250 * 1000000LL, 0, &taken));
    /* The refresh replaces it. */
    put(c, "tags", "new");
    ck_assert_str_eq(get(c, "tags"), "new");

    /*
     * The bound runs from the last moment the value was known current: a
     * fresh lookup 150 ms after the read moves it, so 100 ms after that
     * lookup (250 after the read) it may still be given.
     */
    sleep_ms(150);
    seen_ns = clock_now_ns();
    ck_assert_str_eq(get(c, "tags"), "new");
    cache_drop(c, "tags");
    ck_assert_str_eq(get_stale(c, "tags", seen_ns + 100 * 1000000LL, 0, &taken), "new");
    ck_assert_ptr_null(get_stale(c, "tags", seen_ns + 250 * 1000000LL, 0, &taken));
    /* Once past the bound a lookup drops it for good. */
    sleep_ms(250);
    ck_assert_ptr_null(get(c, "tags"));
    ck_assert_uint_eq(cache_count(c), 0);
    ck_assert_ptr_null(get_stale(c, "tags", clock_now_ns(), 0, &taken));

    /* 0: a changed value goes at once, as without stale answers. */
    cache_stale_max(c, 0);
    ck_assert_int_eq(cache_stale_on(c), 0);
    put(c, "tags", "x");
    cache_drop(c, "tags");
    ck_assert_uint_eq(cache_count(c), 0);
    ck_assert_ptr_null(get_stale(c, "tags", clock_now_ns(), 0, &taken));
    done(c);
}
END_TEST

static Suite *
cache_suite(void)
{
    Suite *s = suite_create("cache");
    TCase *tc = tcase_create("lru");

    tcase_add_test(tc, test_get_put);
    tcase_add_test(tc, test_lru_eviction);
    tcase_add_test(tc, test_lookup_kinds);
    tcase_add_test(tc, test_evictions_counted);
    tcase_add_test(tc, test_min_uses);
    tcase_add_test(tc, test_invalidation_races);
    tcase_add_test(tc, test_disabled);
    tcase_add_test(tc, test_pack);
    tcase_add_test(tc, test_deps);
    tcase_add_test(tc, test_shared_zone);
    tcase_add_test(tc, test_copies);
    tcase_add_test(tc, test_snapshot);
    tcase_add_test(tc, test_bytes_bound);
    tcase_add_test(tc, test_stale_answers);
    suite_add_tcase(s, tc);
    return s;
}

#include "check_main.h"
CHECK_MAIN(cache_suite)
