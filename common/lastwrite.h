/*
 * lastwrite: when each user last wrote, shared by every worker of an
 * instance, for read-your-writes on standbys (worker/replica.h).
 *
 * A fixed table in the scoreboard page the master maps before forking
 * (common/scoreboard.h), so every worker of every generation sees every
 * other's writes.  Open addressing over LASTWRITE_SLOTS slots, a user
 * looked for in LASTWRITE_PROBES slots from its hash.  A slot whose time
 * is older than the caller's horizon may be taken by another user: by
 * then the standby lag rule covers that write anyway.  When no slot is
 * free the time goes into one instance-wide overflow time, which
 * lastwrite_get() returns for everybody: conservative (more reads go to
 * the primary), never wrong.
 *
 * Times are CLOCK_MONOTONIC nanoseconds, one clock for every process of
 * the host.  Lock-free: C11 atomics, a compare-and-swap to take a slot and
 * to raise a time.  A reader may see a slot's user before its new time:
 * only while that write is being recorded, which happens before its
 * answer is sent, so never by the writer's next request.
 */
#ifndef CONDUITD_LASTWRITE_H
#define CONDUITD_LASTWRITE_H

#include <stdatomic.h>
#include <stdint.h>

#define LASTWRITE_SLOTS 4096 /* a power of two */
#define LASTWRITE_PROBES 8

struct lastwrite_slot {
    _Atomic int64_t user; /* 0: never used */
    _Atomic int64_t at_ns;
};

struct lastwrite {
    struct lastwrite_slot slot[LASTWRITE_SLOTS];
    _Atomic int64_t overflow_ns; /* the latest write that found no slot */
};

/* Records that user (> 0) wrote at now_ns; slots older than now_ns - horizon_ns may be reused. */
void lastwrite_note(struct lastwrite *t, int64_t user, int64_t now_ns, int64_t horizon_ns);

/* When user last wrote, as far as the table knows (at least the overflow time); 0: never. */
int64_t lastwrite_get(struct lastwrite *t, int64_t user);

#endif
