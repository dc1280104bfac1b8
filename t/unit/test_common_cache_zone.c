/*
 * Unit tests for common/cache_zone.c and common/zone_alloc.c: the
 * allocator tiles its arena, merges what is freed and stays consistent
 * through thousands of random allocations; a zone bounds its entries and
 * bytes, least recently used out first; two processes (fork) share one
 * zone; a process SIGKILLed while it holds a shard's lock, an entry half
 * written in it, neither wedges nor corrupts the other (it gets the lock
 * within the wait, finds the shard emptied, counted as a reset, and the
 * zone consistent and usable); a lock held by a stopped process is given
 * up in time; and processes killed at random over and over, in the middle
 * of puts and lookups, leave a zone that is always consistent.
 */
#include "common/cache_zone.h"

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/zone_alloc.h"

/* FNV-1a, as worker/cache.c hashes keys. */
static uint64_t
hash(const char *key)
{
    uint64_t h = 0xcbf29ce484222325ULL;

    for (; *key; key++) {
        h ^= (unsigned char)*key;
        h *= 0x100000001b3ULL;
    }
    return h;
}

/* key = val (a string) in z, as worker/cache.c's put does; 0 stored, -1 not. */
static int
zput(struct cache_zone *z, const char *key, const char *val)
{
    uint64_t h = hash(key);
    size_t klen = strlen(key), vlen = strlen(val) + 1;
    struct zone_shard *s = cache_zone_lock(z, cache_zone_shard_of(z, h));
    struct zone_entry *e;

    if (!s)
        return -1;
    if ((e = cache_zone_find(s, key, klen, h)))
        cache_zone_remove(s, e);
    if ((e = cache_zone_add(s, h, klen, 1, vlen))) {
        e->deps[0] = h;
        memcpy(zone_entry_key(e), key, klen + 1);
        memcpy(zone_entry_value(e), val, vlen);
    }
    cache_zone_unlock(s);
    return e ? 0 : -1;
}

/* The value of key copied into out (a string), or -1. */
static int
zget(struct cache_zone *z, const char *key, char *out, size_t outlen)
{
    uint64_t h = hash(key);
    struct zone_shard *s = cache_zone_lock(z, cache_zone_shard_of(z, h));
    struct zone_entry *e;
    int rc = -1;

    if (!s)
        return -1;
    if ((e = cache_zone_find(s, key, strlen(key), h)) && e->len <= outlen) {
        memcpy(out, zone_entry_value(e), e->len);
        cache_zone_touch(s, e);
        rc = 0;
    }
    cache_zone_unlock(s);
    return rc;
}

static struct cache_zone_stats
stats(struct cache_zone *z)
{
    struct cache_zone_stats st;

    cache_zone_stats(z, &st);
    return st;
}

START_TEST(test_alloc)
{
    enum { SIZE = 1 << 16, N = 200 };
    unsigned char *arena = malloc(SIZE);
    struct zone_alloc a;
    uint64_t off[N] = {0};
    unsigned seed = 7;

    ck_assert_ptr_nonnull(arena);
    zone_alloc_init(&a, arena, SIZE);
    ck_assert_int_eq(zone_alloc_check(&a, arena), 0);
    ck_assert_uint_eq(zone_alloc(&a, arena, SIZE), 0); /* larger than the arena with its tags */
    for (int round = 0; round < 5000; round++) {
        int i = rand_r(&seed) % N;
        if (off[i]) {
            zone_free(&a, arena, off[i]);
            off[i] = 0;
        } else if ((off[i] = zone_alloc(&a, arena, (uint64_t)(rand_r(&seed) % 2000)))) {
            ck_assert(zone_alloc_valid(&a, arena, off[i]));
            memset(arena + off[i], 0xab, 1); /* the block is the caller's */
        }
        ck_assert_msg(zone_alloc_check(&a, arena) == 0, "inconsistent after round %d", round);
    }
    for (int i = 0; i < N; i++)
        if (off[i])
            zone_free(&a, arena, off[i]);
    ck_assert_int_eq(zone_alloc_check(&a, arena), 0);
    ck_assert_uint_eq(a.used, 0);
    /* All merged back: the largest block fits again. */
    off[0] = zone_alloc(&a, arena, SIZE - 16);
    ck_assert_uint_eq(off[0], 8);
    free(arena);
}
END_TEST

START_TEST(test_bounds)
{
    struct cache_zone *z = cache_zone_create(4, 1 << 20);
    char key[16], out[64];

    ck_assert_ptr_nonnull(z);
    ck_assert_uint_eq(stats(z).shards, 1); /* small: one shard, exact LRU */
    for (int i = 0; i < 4; i++) {
        snprintf(key, sizeof(key), "k%d", i);
        ck_assert_int_eq(zput(z, key, key), 0);
    }
    ck_assert_int_eq(zget(z, "k0", out, sizeof(out)), 0); /* k1 is now the least recent */
    ck_assert_int_eq(zput(z, "k4", "v"), 0);
    ck_assert_uint_eq(stats(z).entries, 4);
    ck_assert_uint_eq(stats(z).evictions, 1);
    ck_assert_int_eq(zget(z, "k1", out, sizeof(out)), -1);
    ck_assert_int_eq(zget(z, "k0", out, sizeof(out)), 0);
    ck_assert_str_eq(out, "k0");
    ck_assert_int_eq(cache_zone_check(z), 0);
    cache_zone_destroy(z);

    /* Bytes: 100 values of 1 KB in 20 KB; one larger than the zone evicts nothing. */
    z = cache_zone_create(1000, 20000);
    ck_assert_ptr_nonnull(z);
    {
        char val[1000], *big = malloc(30000);
        memset(val, 'x', sizeof(val) - 1);
        val[sizeof(val) - 1] = '\0';
        for (int i = 0; i < 100; i++) {
            snprintf(key, sizeof(key), "a:%d", i);
            ck_assert_int_eq(zput(z, key, val), 0);
            ck_assert_uint_le(stats(z).bytes, stats(z).capacity);
        }
        ck_assert_uint_ge(stats(z).entries, 15);
        ck_assert_uint_le(stats(z).entries, 20);
        memset(big, 'y', 29999);
        big[29999] = '\0';
        {
            uint64_t n = stats(z).entries;
            ck_assert_int_eq(zput(z, "big", big), -1);
            ck_assert_uint_eq(stats(z).entries, n);
        }
        free(big);
    }
    ck_assert_int_eq(cache_zone_check(z), 0);
    /* Emptied: nothing held, all memory back. */
    ck_assert_uint_eq(cache_zone_empty(z), 1);
    ck_assert_uint_eq(stats(z).entries, 0);
    ck_assert_uint_eq(stats(z).bytes, 0);
    ck_assert_int_eq(cache_zone_check(z), 0);
    cache_zone_destroy(z);

    /* The default's size: 16 shards, cache_memory for the arenas. */
    z = cache_zone_create(200000, (size_t)64 << 20);
    ck_assert_ptr_nonnull(z);
    ck_assert_uint_eq(stats(z).shards, 16);
    ck_assert_uint_eq(stats(z).capacity, (uint64_t)64 << 20);
    ck_assert_uint_eq(stats(z).max_entries, 200000);
    cache_zone_destroy(z);
}
END_TEST

/* Clearing is a tick that only rises. */
START_TEST(test_clear)
{
    struct cache_zone *z = cache_zone_create(16, 1 << 20);

    ck_assert_uint_eq(cache_zone_cleared_at(z), 0);
    cache_zone_clear(z, 100);
    cache_zone_clear(z, 50);
    ck_assert_uint_eq(cache_zone_cleared_at(z), 100);
    cache_zone_destroy(z);
}
END_TEST

/* What one process stores another reads: the zone is mapped shared, before the fork. */
START_TEST(test_two_processes)
{
    struct cache_zone *z = cache_zone_create(64, 1 << 20);
    char out[64];
    int status;
    pid_t pid;

    ck_assert_ptr_nonnull(z);
    pid = fork();
    if (pid == 0)
        _exit(zput(z, "tags", "from the child") == 0 ? 0 : 1);
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ck_assert_int_eq(zget(z, "tags", out, sizeof(out)), 0);
    ck_assert_str_eq(out, "from the child");
    ck_assert_int_eq(cache_zone_check(z), 0);
    cache_zone_destroy(z);
}
END_TEST

/*
 * The child takes the lock of tags' shard, links in a half-written entry
 * whose chain leads into the middle of nowhere, and is SIGKILLed there.
 * The parent must get the lock in time (not wait forever), find the
 * shard emptied (so it never follows the broken link), and go on.
 */
START_TEST(test_dead_owner)
{
    struct cache_zone *z = cache_zone_create(64, 1 << 20);
    uint64_t h = hash("tags");
    struct zone_shard *s;
    char out[64];
    int status, pipefd[2];
    char byte;
    pid_t pid;

    ck_assert_ptr_nonnull(z);
    ck_assert_int_eq(zput(z, "tags", "before"), 0);
    ck_assert_int_eq(zput(z, "p:alice", "alice"), 0);
    ck_assert_int_eq(pipe(pipefd), 0);
    pid = fork();
    if (pid == 0) {
        struct zone_shard *cs = cache_zone_lock(z, cache_zone_shard_of(z, h));
        struct zone_entry *e = cs ? cache_zone_add(cs, h, 4, 1, 100) : NULL;
        if (e) {
            e->chain = 4104; /* not an entry */
            memset(zone_entry_key(e), 0xff, 2);
        }
        if (write(pipefd[1], "x", 1) != 1)
            _exit(1);
        pause(); /* killed here, holding the lock */
        _exit(1);
    }
    ck_assert_int_eq(read(pipefd[0], &byte, 1), 1);
    kill(pid, SIGKILL);
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

    s = cache_zone_lock(z, cache_zone_shard_of(z, h));
    ck_assert_msg(s != NULL, "the dead owner's lock wedged the shard");
    ck_assert_ptr_null(cache_zone_find(s, "tags", 4, h));
    cache_zone_unlock(s);
    ck_assert_uint_eq(stats(z).resets, 1);
    ck_assert_uint_eq(stats(z).entries, 0); /* one shard: both gone */
    ck_assert_uint_eq(stats(z).bytes, 0);
    ck_assert_int_eq(cache_zone_check(z), 0);
    /* And it works on. */
    ck_assert_int_eq(zput(z, "tags", "after"), 0);
    ck_assert_int_eq(zget(z, "tags", out, sizeof(out)), 0);
    ck_assert_str_eq(out, "after");
    ck_assert_uint_eq(stats(z).resets, 1);
    close(pipefd[0]);
    close(pipefd[1]);
    cache_zone_destroy(z);
}
END_TEST

static int64_t
now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A lock held by a stopped process is given up within the wait; once it is killed, recovered. */
START_TEST(test_stopped_owner)
{
    struct cache_zone *z = cache_zone_create(64, 1 << 20);
    struct zone_shard *s;
    int status, pipefd[2];
    char byte;
    int64_t t0;
    pid_t pid;

    ck_assert_ptr_nonnull(z);
    ck_assert_int_eq(pipe(pipefd), 0);
    pid = fork();
    if (pid == 0) {
        if (!cache_zone_lock(z, 0) || write(pipefd[1], "x", 1) != 1)
            _exit(1);
        raise(SIGSTOP);
        _exit(1);
    }
    ck_assert_int_eq(read(pipefd[0], &byte, 1), 1);
    t0 = now_ms();
    ck_assert_ptr_null(cache_zone_lock(z, 0));
    ck_assert_int_lt(now_ms() - t0, 1000);
    ck_assert_int_ge(now_ms() - t0, CACHE_ZONE_LOCK_MS - 5);
    kill(pid, SIGKILL);
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    s = cache_zone_lock(z, 0);
    ck_assert_ptr_nonnull(s);
    cache_zone_unlock(s);
    ck_assert_uint_eq(stats(z).resets, 1);
    close(pipefd[0]);
    close(pipefd[1]);
    cache_zone_destroy(z);
}
END_TEST

/*
 * Children that put and look up in a loop, over every shard, SIGKILLed at
 * random moments, again and again: after each death the zone must be
 * consistent (cache_zone_check() takes every lock, recovering any the
 * dead child held) and the parent's own values readable.
 */
START_TEST(test_kill_storm)
{
    struct cache_zone *z = cache_zone_create(16384, (size_t)64 << 20);
    unsigned seed = 42;
    char key[32], out[2048];

    ck_assert_ptr_nonnull(z);
    ck_assert_uint_eq(stats(z).shards, 16);
    for (int round = 0; round < 40; round++) {
        int status;
        pid_t pid = fork();
        if (pid == 0) {
            unsigned s = (unsigned)round * 7919u;
            char val[1500];
            memset(val, 'a' + round % 26, sizeof(val));
            for (;;) {
                int n = rand_r(&s) % 4000;
                val[rand_r(&s) % (sizeof(val) - 1) + 1] = '\0';
                snprintf(key, sizeof(key), "a:%d", n);
                if (n % 3)
                    zput(z, key, val);
                else
                    zget(z, key, out, sizeof(out));
                val[strlen(val)] = 'b';
            }
        }
        usleep((useconds_t)(rand_r(&seed) % 3000));
        kill(pid, SIGKILL);
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert_msg(cache_zone_check(z) == 0, "inconsistent after kill %d", round);
        snprintf(key, sizeof(key), "mine:%d", round);
        ck_assert_int_eq(zput(z, key, "kept"), 0);
        ck_assert_int_eq(zget(z, key, out, sizeof(out)), 0);
        ck_assert_str_eq(out, "kept");
    }
    fprintf(stderr, "# kill storm: %llu entries, %llu resets, %llu evictions\n",
            (unsigned long long)stats(z).entries, (unsigned long long)stats(z).resets,
            (unsigned long long)stats(z).evictions);
    cache_zone_destroy(z);
}
END_TEST

static Suite *
zone_suite(void)
{
    Suite *s = suite_create("cache_zone");
    TCase *tc = tcase_create("zone");

    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_alloc);
    tcase_add_test(tc, test_bounds);
    tcase_add_test(tc, test_clear);
    tcase_add_test(tc, test_two_processes);
    tcase_add_test(tc, test_dead_owner);
    tcase_add_test(tc, test_stopped_owner);
    tcase_add_test(tc, test_kill_storm);
    suite_add_tcase(s, tc);
    return s;
}

#include "check_main.h"
CHECK_MAIN(zone_suite)
