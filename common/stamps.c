/*
 * stamps: see stamps.h.
 */
#include "config.h"

#include "common/stamps.h"

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
