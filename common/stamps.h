/*
 * stamps: when each cached thing last changed, shared by every worker of
 * an instance, so that a worker's cache never serves what another worker
 * of the same instance has already answered a write about.
 *
 * A fixed table in the scoreboard page the master maps before forking
 * (common/scoreboard.h).  A cache key (worker/cache.h) hashes to one of
 * STAMPS_SLOTS slots; a slot holds the instance clock's value at the
 * latest change of any key that hashes there.  Two keys sharing a slot
 * only cost a refill.
 *
 * The order that makes it exact:
 *   - a writer bumps the keys its write changed after PostgreSQL said it
 *     committed and before it sends its answer (stamps_bump());
 *   - a reader takes stamps_now() before it sends the query whose answer
 *     it will cache, and keeps that epoch with the entry;
 *   - an entry is served only while every slot it depends on is at or
 *     below its epoch.
 * A read whose epoch is at or past a writer's bump was sent after that
 * write had committed, so it saw it; every older entry is refused from the
 * moment of the bump, before the writer's client has heard anything.
 *
 * Lock-free: C11 atomics, sequentially consistent (a bump is one
 * fetch-and-add and a compare-and-swap that only raises a slot).
 */
#ifndef CONDUITD_STAMPS_H
#define CONDUITD_STAMPS_H

#include <stdatomic.h>
#include <stdint.h>

/*
 * A power of two: 8 MB, touched as used.  Each slot holds about one in a
 * million of the keys, so an entry (a page depends on some 25 slots, its
 * own, its lists' and its articles') is rarely refused for another key's
 * change: at 65,536 slots, the workload's 300 invalidations a second
 * refused a page every ten seconds for nothing.
 */
#define STAMPS_SLOTS (1 << 20)

struct stamps {
    _Atomic uint64_t clock;
    _Atomic uint64_t slot[STAMPS_SLOTS];
};

/* The clock now: the epoch of a read about to be sent. */
static inline uint64_t
stamps_now(struct stamps *s)
{
    return atomic_load(&s->clock);
}

/* The latest change of what hashes to h. */
static inline uint64_t
stamps_of(struct stamps *s, uint64_t h)
{
    return atomic_load(&s->slot[h & (STAMPS_SLOTS - 1)]);
}

/* Something that hashes to h changed: a new tick, stored unless a later one is there. */
uint64_t stamps_bump(struct stamps *s, uint64_t h);

/* A new tick, for a change of everything (a cache cleared). */
static inline uint64_t
stamps_tick(struct stamps *s)
{
    return atomic_fetch_add(&s->clock, 1) + 1;
}

#endif
