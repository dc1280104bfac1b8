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
 *   - a reader takes a tick (stamps_tick()) before it sends the query
 *     whose answer it will cache, and keeps that epoch with the entry;
 *   - an entry is served only while every slot it depends on is at or
 *     below its epoch.
 * A read whose epoch is past a writer's bump was sent after that write
 * had committed, so it saw it; every older entry is refused from the
 * moment of the bump, before the writer's client has heard anything.
 *
 * The clock counts CLOCK_MONOTONIC nanoseconds, one clock for every
 * process of the host (common/lastwrite.h's), made strictly rising: a
 * tick is the time now, or one more than the last tick when that is
 * later (it runs ahead of the time only by the ticks taken within one
 * nanosecond).  So an epoch is also the time of its read: an entry whose
 * epoch is past the moment a user's write was answered (lastwrite_get())
 * was read after that write committed, which is what a stale answer must
 * know (docs/caching.md, "Stale answers").
 *
 * Lock-free: C11 atomics, sequentially consistent (a tick is a
 * compare-and-swap that raises the clock, a bump one more that only
 * raises a slot).
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

/* The latest change of what hashes to h. */
static inline uint64_t
stamps_of(struct stamps *s, uint64_t h)
{
    return atomic_load(&s->slot[h & (STAMPS_SLOTS - 1)]);
}

/* Something that hashes to h changed: a new tick, stored unless a later one is there. */
uint64_t stamps_bump(struct stamps *s, uint64_t h);

/*
 * A new tick: the epoch of a read about to be sent, or a change of
 * everything (a cache cleared).  Later than every tick before it, so a
 * bump after it is later than the read.
 */
uint64_t stamps_tick(struct stamps *s);

#endif
