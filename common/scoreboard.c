/*
 * scoreboard: see scoreboard.h.
 */
#include "config.h"

#include "common/scoreboard.h"

#include <string.h>
#include <sys/mman.h>
#include <time.h>

_Static_assert(sizeof(struct worker_slot) == 128, "a slot is two cache lines");

struct scoreboard *
scoreboard_create(void)
{
    void *p = mmap(NULL, sizeof(struct scoreboard), PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

void
scoreboard_destroy(struct scoreboard *sb)
{
    if (sb != NULL)
        munmap(sb, sizeof(*sb));
}

int
scoreboard_claim(struct scoreboard *sb, int index, int64_t now_ms)
{
    for (int i = 0; i < SCOREBOARD_SLOTS; i++) {
        struct worker_slot *s = &sb->slots[i];
        if (atomic_load(&s->state) != SLOT_FREE)
            continue;
        atomic_store(&s->pid, 0);
        atomic_store(&s->index, index);
        atomic_store(&s->recycle, 0);
        atomic_store(&s->heartbeat_ms, now_ms);
        atomic_store(&s->requests, 0);
        atomic_store(&s->errors, 0);
        atomic_store(&s->in_flight, 0);
        atomic_store(&s->queued, 0);
        atomic_store(&s->connections, 0);
        atomic_store(&s->cache_hits, 0);
        atomic_store(&s->cache_misses, 0);
        atomic_store(&s->cache_invalidations, 0);
        atomic_store(&s->state, SLOT_STARTING);
        return i;
    }
    return -1;
}

void
scoreboard_release(struct scoreboard *sb, int slot)
{
    atomic_store(&sb->slots[slot].state, SLOT_FREE);
}

int64_t
scoreboard_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
