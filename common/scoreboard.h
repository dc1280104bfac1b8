/*
 * scoreboard: the shared memory page the master maps before forking, one
 * slot per worker process.  A worker writes its heartbeat (from a timer on
 * its own event loop, so a blocked loop is exactly what stops it) and its
 * counters; the master reads them to find stuck workers and to report.
 *
 * Ownership: the master allocates and frees slots; a worker only writes the
 * slot it was given.  Fields are C11 atomics with relaxed ordering: each is
 * an independent figure, and a reader may see one a moment older than
 * another.
 */
#ifndef CONDUITD_SCOREBOARD_H
#define CONDUITD_SCOREBOARD_H

#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/lastwrite.h"

/* Twice the worker limit: during a reload old and new workers overlap. */
#define SCOREBOARD_SLOTS 2048

enum slot_state { SLOT_FREE, SLOT_STARTING, SLOT_READY, SLOT_DRAINING };

struct worker_slot {
    _Atomic int state;
    _Atomic int pid;
    _Atomic int index;
    _Atomic int recycle;          /* the worker reached max_requests: replace it */
    _Atomic int64_t heartbeat_ms; /* CLOCK_MONOTONIC, milliseconds */
    _Atomic uint64_t requests;    /* responses sent */
    _Atomic uint64_t errors;      /* responses with a 5xx status */
    _Atomic int64_t in_flight;    /* requests received, not yet answered */
    _Atomic int64_t queued;       /* requests waiting for a database connection */
    _Atomic int64_t connections;  /* open client connections */
    _Atomic uint64_t cache_hits;  /* worker/cache.h */
    _Atomic uint64_t cache_misses;
    _Atomic uint64_t cache_invalidations;
    char pad[128 - 9 * 8 - 4 * 4];
};
_Static_assert(sizeof(struct worker_slot) == 128, "a slot is two cache lines");

struct scoreboard {
    struct worker_slot slots[SCOREBOARD_SLOTS];
    struct lastwrite writes; /* who wrote when, for reads on standbys (db_read) */
};

/* Maps the page (MAP_SHARED | MAP_ANONYMOUS); NULL on failure. */
struct scoreboard *scoreboard_create(void);
void scoreboard_destroy(struct scoreboard *sb);

/* A free slot marked STARTING, or -1 when all are taken. */
int scoreboard_claim(struct scoreboard *sb, int index, int64_t now_ms);
void scoreboard_release(struct scoreboard *sb, int slot);

/* Milliseconds on CLOCK_MONOTONIC: heartbeats compare against it. */
int64_t scoreboard_now_ms(void);

#endif
