/*
 * scoreboard: see scoreboard.h.
 */
#include "config.h"

#include "common/scoreboard.h"

#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define SUM_TRIES 100 /* folds are rare: a reader that keeps losing takes what it has */

struct scoreboard *
scoreboard_create(void)
{
    void *p = mmap(NULL, sizeof(struct scoreboard), PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    struct scoreboard *sb = p;

    if (p == MAP_FAILED)
        return NULL;
    atomic_store(&sb->master.started_unix, (int64_t)time(NULL));
    return sb;
}

void
scoreboard_destroy(struct scoreboard *sb)
{
    if (sb != NULL)
        munmap(sb, sizeof(*sb));
}

/* The counters as an array: every field is one _Atomic uint64_t. */
#define NCOUNTERS (sizeof(struct scoreboard_counters) / sizeof(_Atomic uint64_t))
_Static_assert(sizeof(struct scoreboard_counters) % sizeof(_Atomic uint64_t) == 0,
               "counters are 64-bit words only");

static _Atomic uint64_t *
counter_words(struct scoreboard_counters *c)
{
    return (_Atomic uint64_t *)(void *)c;
}

static const _Atomic uint64_t *
counter_words_const(const struct scoreboard_counters *c)
{
    return (const _Atomic uint64_t *)(const void *)c;
}

int
scoreboard_claim(struct scoreboard *sb, int index, int generation, int64_t now_ms)
{
    for (int i = 0; i < SCOREBOARD_SLOTS; i++) {
        struct worker_slot *s = &sb->slots[i];
        _Atomic uint64_t *w = counter_words(&s->c);
        if (atomic_load(&s->state) != SLOT_FREE)
            continue;
        atomic_store(&s->pid, 0);
        atomic_store(&s->index, index);
        atomic_store(&s->generation, generation);
        atomic_store(&s->recycle, 0);
        atomic_store(&s->pool_busy, 0);
        atomic_store(&s->pool_idle, 0);
        atomic_store(&s->bcrypt_queued, 0);
        atomic_store(&s->read_busy, 0);
        atomic_store(&s->read_idle, 0);
        atomic_store(&s->standby_skipped, 0);
        atomic_store(&s->standby_lag_us, -1);
        atomic_store(&s->standby_lag_bytes, -1);
        atomic_store(&s->started_ms, now_ms);
        atomic_store(&s->heartbeat_ms, now_ms);
        atomic_store(&s->requests, 0);
        atomic_store(&s->errors, 0);
        atomic_store(&s->in_flight, 0);
        atomic_store(&s->queued, 0);
        atomic_store(&s->cache_on_ns, 0);
        for (size_t k = 0; k < NCOUNTERS; k++)
            atomic_store_explicit(&w[k], 0, memory_order_relaxed);
        atomic_store(&s->state, SLOT_STARTING);
        if (atomic_load(&sb->master.slots_used) <= i)
            atomic_store(&sb->master.slots_used, i + 1);
        return i;
    }
    return -1;
}

void
scoreboard_release(struct scoreboard *sb, int slot)
{
    struct worker_slot *s = &sb->slots[slot];
    _Atomic uint64_t *from = counter_words(&s->c), *to = counter_words(&sb->retired);

    atomic_fetch_add(&sb->master.fold_seq, 1); /* odd: a fold is under way */
    for (size_t k = 0; k < NCOUNTERS; k++)
        atomic_fetch_add_explicit(&to[k], atomic_load_explicit(&from[k], memory_order_relaxed),
                                  memory_order_relaxed);
    atomic_store(&s->state, SLOT_FREE);
    atomic_fetch_add(&sb->master.fold_seq, 1);
}

/* One pass of the sum, without regard to folds. */
static void
sum_once(const struct scoreboard *sb, uint64_t *out)
{
    const _Atomic uint64_t *r = counter_words_const(&sb->retired);

    for (size_t k = 0; k < NCOUNTERS; k++)
        out[k] = atomic_load_explicit(&r[k], memory_order_relaxed);
    int used = atomic_load(&sb->master.slots_used);

    for (int i = 0; i < used && i < SCOREBOARD_SLOTS; i++) {
        const struct worker_slot *s = &sb->slots[i];
        const _Atomic uint64_t *w = counter_words_const(&s->c);
        if (atomic_load_explicit(&s->state, memory_order_acquire) == SLOT_FREE)
            continue;
        for (size_t k = 0; k < NCOUNTERS; k++)
            out[k] += atomic_load_explicit(&w[k], memory_order_relaxed);
    }
}

void
scoreboard_sum(const struct scoreboard *sb, struct scoreboard_counters *out)
{
    uint64_t words[NCOUNTERS];
    _Atomic uint64_t *o = counter_words(out);

    for (int tries = 0;; tries++) {
        uint64_t seq = atomic_load(&sb->master.fold_seq);
        if (seq & 1 && tries < SUM_TRIES)
            continue;
        sum_once(sb, words);
        if (atomic_load(&sb->master.fold_seq) == seq || tries >= SUM_TRIES)
            break;
    }
    for (size_t k = 0; k < NCOUNTERS; k++)
        atomic_store_explicit(&o[k], words[k], memory_order_relaxed);
}

int
scoreboard_cache_gap(const struct scoreboard *sb, int slot)
{
    const struct worker_slot *dead = &sb->slots[slot];
    int64_t on = atomic_load(&dead->cache_on_ns);
    int64_t seen_ns = atomic_load(&dead->heartbeat_ms) * 1000000; /* CLOCK_MONOTONIC, as ticks */
    int used = atomic_load(&sb->master.slots_used);

    if (!on)
        return 0;
    for (int i = 0; i < used && i < SCOREBOARD_SLOTS; i++) {
        const struct worker_slot *s = &sb->slots[i];
        int64_t other;
        if (i == slot || atomic_load(&s->state) == SLOT_FREE)
            continue;
        other = atomic_load(&s->cache_on_ns);
        if (other && other < seen_ns)
            return 0; /* on before the reaped one was last seen, and still on */
    }
    return 1;
}

uint64_t
scoreboard_cache_total(const struct scoreboard_counters *c, int result)
{
    uint64_t n = 0;

    for (int k = 0; k < SB_CACHE_KINDS; k++)
        n += atomic_load_explicit(&c->cache_lookups[k][result], memory_order_relaxed);
    return n;
}

uint64_t
scoreboard_cache_misses(const struct scoreboard_counters *c)
{
    return scoreboard_cache_total(c, SB_CACHE_STALE) + scoreboard_cache_total(c, SB_CACHE_ABSENT);
}
