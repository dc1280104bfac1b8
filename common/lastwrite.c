/*
 * lastwrite: the shared table of recent writers.  See lastwrite.h.
 */
#include "config.h"

#include "common/lastwrite.h"

static unsigned
home(int64_t user)
{
    /* Fibonacci hashing: consecutive ids spread over the table. */
    return (unsigned)(((uint64_t)user * 0x9E3779B97F4A7C15ull) >> 52) & (LASTWRITE_SLOTS - 1);
}

/*
 * A slot being handed to another user has this time: a writer of its old
 * user that meets it starts over, and a reader takes it as "just now"
 * (conservative) for the moment the hand-over lasts.
 */
#define TAKING INT64_MAX

/* Raises *v to t; -1 when the slot is being taken (nothing written). */
static int
raise_to(_Atomic int64_t *v, int64_t t)
{
    int64_t cur = atomic_load(v);

    for (;;) {
        if (cur == TAKING)
            return -1;
        if (cur >= t || atomic_compare_exchange_weak(v, &cur, t))
            return 0;
    }
}

static struct lastwrite_slot *
slot_at(struct lastwrite *t, unsigned h, int i)
{
    return &t->slot[(h + (unsigned)i) & (LASTWRITE_SLOTS - 1)];
}

/*
 * A slot of another user changes hands only from a time older than the
 * horizon, through TAKING: a writer of the old user either raised the time
 * first (the take fails: the time is no longer the one seen) or meets
 * TAKING or the new user and records its write elsewhere.
 */
void
lastwrite_note(struct lastwrite *t, int64_t user, int64_t now_ns, int64_t horizon_ns)
{
    unsigned h = home(user);

    if (user <= 0)
        return;
    for (int pass = 0; pass < 4; pass++) {
        int lost = 0;
        for (int i = 0; i < LASTWRITE_PROBES && !lost; i++) {
            struct lastwrite_slot *s = slot_at(t, h, i);
            if (atomic_load(&s->user) != user)
                continue;
            if (raise_to(&s->at_ns, now_ns) == 0 && atomic_load(&s->user) == user)
                return;
            lost = 1; /* taken under us: look again */
        }
        if (lost)
            continue;
        for (int i = 0; i < LASTWRITE_PROBES; i++) {
            struct lastwrite_slot *s = slot_at(t, h, i);
            int64_t at = atomic_load(&s->at_ns);
            if (atomic_load(&s->user) != 0 && at >= now_ns - horizon_ns)
                continue;
            if (atomic_compare_exchange_strong(&s->at_ns, &at, TAKING)) {
                atomic_store(&s->user, user);
                atomic_store(&s->at_ns, now_ns);
                return;
            }
        }
    }
    raise_to(&t->overflow_ns, now_ns);
}

int64_t
lastwrite_get(struct lastwrite *t, int64_t user)
{
    unsigned h = home(user);
    int64_t at = atomic_load(&t->overflow_ns);

    if (user <= 0)
        return at;
    for (int i = 0; i < LASTWRITE_PROBES; i++) {
        struct lastwrite_slot *s = &t->slot[(h + (unsigned)i) & (LASTWRITE_SLOTS - 1)];
        if (atomic_load(&s->user) == user) {
            int64_t a = atomic_load(&s->at_ns);
            if (a > at)
                at = a;
        }
    }
    return at;
}
