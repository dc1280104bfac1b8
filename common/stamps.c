/*
 * stamps: see stamps.h.
 */
#include "config.h"

#include "common/stamps.h"

#include "common/clock.h"

uint64_t
stamps_tick(struct stamps *s)
{
    /*
     * The clock lastwrite's times come from: a cached value's epoch (a
     * tick) is compared with its caller's last write (worker/cache.c,
     * cache_get_stale()), so the two must read one clock.
     */
    uint64_t now = (uint64_t)clock_now_ns(), cur, v;

    cur = atomic_load(&s->clock);
    do
        v = now > cur ? now : cur + 1; /* strictly rising, whoever ticked last */
    while (!atomic_compare_exchange_weak(&s->clock, &cur, v));
    return v;
}

uint64_t
stamps_bump(struct stamps *s, uint64_t h)
{
    uint64_t v = stamps_tick(s);
    _Atomic uint64_t *p = &s->slot[h & (STAMPS_SLOTS - 1)];
    uint64_t cur = atomic_load(p);

    /*
     * Only raise: two writers bumping one slot at once may store in either
     * order, and the slot must end at the later tick.
     */
    while (cur < v && !atomic_compare_exchange_weak(p, &cur, v))
        ;
    return v;
}
