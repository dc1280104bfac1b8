/*
 * scoreboard: the shared memory the master maps before forking, one slot
 * per worker process.  A worker writes its heartbeat (from a timer on its
 * own event loop, so a blocked loop is exactly what stops it) and its
 * counters; the master reads them to find stuck workers and to report, and
 * any worker reads them all to answer /metrics and /status for the whole
 * instance (worker/metrics.h), with no call to another process.
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
#include "common/stamps.h"

/* Twice the worker limit: during a reload old and new workers overlap. */
#define SCOREBOARD_SLOTS 2048

/*
 * The metrics' fixed shape (worker/metrics.c names them): a row of
 * request counters per entry of the route table, the last row for
 * requests that matched none (404, 405, a preflight, a request cut short);
 * five status classes; the latency histogram's buckets, the last one +Inf.
 */
#define SCOREBOARD_ROUTES 32
#define SCOREBOARD_ROUTE_OTHER (SCOREBOARD_ROUTES - 1)
#define SCOREBOARD_CLASSES 5
#define SCOREBOARD_BUCKETS 14

/* Database errors, by what went wrong (conduitd_db_errors_total's kind). */
enum scoreboard_db_error {
    SB_DB_CONSTRAINT,  /* SQLSTATE class 23: a duplicate, a missing row referred to */
    SB_DB_TRANSACTION, /* class 40: a deadlock or a serialization failure */
    SB_DB_QUERY,       /* any other error PostgreSQL answered a query with */
    SB_DB_CONNECTION,  /* a connection lost, or one that could not be opened */
    SB_DB_UNAVAILABLE, /* a query refused at once: no connection was up */
    SB_DB_ERRORS
};

/*
 * Where a read-only statement ran when standbys take reads (db_read):
 * conduitd_db_standby_reads_total is the first, the rest are
 * conduitd_db_primary_reads_total's reason (worker/replica.h).
 */
enum scoreboard_read {
    SB_READ_STANDBY,    /* a standby answered it */
    SB_READ_NO_SAMPLE,  /* primary: the primary's recent position is unknown */
    SB_READ_NO_STANDBY, /* primary: no standby connection was up */
    SB_READ_LAG,        /* primary: the standbys lag past db_read_max_lag */
    SB_READ_OWN_WRITE,  /* primary: the standbys have not replayed the caller's last write yet */
    SB_READ_FAILED,     /* primary: a standby was asked and could not answer */
    SB_READS
};

/* Where a shed request was waiting (conduitd_shed_total's queue). */
enum scoreboard_queue {
    SB_QUEUE_DB,     /* for a database connection (pool_queue) */
    SB_QUEUE_BCRYPT, /* for a hashing thread (bcrypt_queue) */
    SB_QUEUES
};

/* Why it was answered 503 unserved, or dropped (conduitd_shed_total's reason). */
enum scoreboard_shed {
    SB_SHED_FULL,     /* the queue was full when it came */
    SB_SHED_TIMEOUT,  /* it waited queue_timeout */
    SB_SHED_STANDING, /* it waited the shorter wait of a standing queue (worker/db.c) */
    SB_SHED_GONE,     /* its client hung up while it waited: dropped, nobody answered */
    SB_SHEDS
};

/*
 * What a cache lookup was for, by its key (worker/cache.h names them):
 * conduitd_cache_lookups_total's kind.
 */
enum scoreboard_cache_kind {
    SB_CACHE_USER,           /* u:<id>, the user behind a token */
    SB_CACHE_PROFILE,        /* p:<username> */
    SB_CACHE_FOLLOWEES,      /* f:<id>, the ids a viewer follows */
    SB_CACHE_FAVORITES,      /* v:<id>, the ids a viewer favorited */
    SB_CACHE_TAGS,           /* the tag list */
    SB_CACHE_ARTICLE,        /* a:<slug>, alone or as one of a page's */
    SB_CACHE_LIST_GLOBAL,    /* a page of the global list */
    SB_CACHE_LIST_TAG,       /* of ?tag= */
    SB_CACHE_LIST_AUTHOR,    /* of ?author= */
    SB_CACHE_LIST_FAVORITED, /* of ?favorited= */
    SB_CACHE_FEED,           /* of a viewer's feed */
    SB_CACHE_OTHER,          /* a key of none of those shapes */
    SB_CACHE_KINDS
};

/* How a lookup ended (conduitd_cache_lookups_total's result). */
enum scoreboard_cache_result {
    SB_CACHE_HIT,    /* answered from the cache */
    SB_CACHE_STALE,  /* held, but something it depends on changed since its read: dropped */
    SB_CACHE_ABSENT, /* not held: never read here, evicted, or dropped by name */
    SB_CACHE_RESULTS
};

/* Why a worker ended (conduitd_worker_exits_total's cause). */
enum scoreboard_exit {
    SB_EXIT_RETIRED,   /* asked to stop (reload, recycling, fewer workers, shutdown) */
    SB_EXIT_SIGNAL,    /* killed by a signal the master did not send */
    SB_EXIT_ERROR,     /* exited on its own with a non-zero status */
    SB_EXIT_CONFIG,    /* exited with the "bad configuration" status */
    SB_EXIT_HEARTBEAT, /* SIGKILLed by the master: no heartbeat for timeout seconds */
    SB_EXIT_STUCK,     /* SIGKILLed by the master: not gone by graceful_timeout */
    SB_EXITS
};

/*
 * A worker's counters: only ever added to, by that worker alone (relaxed
 * atomic adds, no lock); the master folds them into the retired totals
 * when it reaps the worker, so the instance's totals never go down.
 */
struct scoreboard_counters {
    _Atomic uint64_t requests[SCOREBOARD_ROUTES][SCOREBOARD_CLASSES];
    _Atomic uint64_t latency[SCOREBOARD_BUCKETS]; /* per bucket, not cumulative */
    _Atomic uint64_t latency_us;                  /* the sum */
    _Atomic uint64_t db_errors[SB_DB_ERRORS];
    _Atomic uint64_t db_queue_full; /* queries refused: the wait queue was full */
    _Atomic uint64_t cache_lookups[SB_CACHE_KINDS][SB_CACHE_RESULTS]; /* worker/cache.h */
    _Atomic uint64_t cache_invalidations;
    _Atomic uint64_t cache_unadmitted; /* not stored: keys put fewer than cache_min_uses times */
    _Atomic uint64_t cache_waits; /* misses that waited for another request's fill (cache_fill.h) */
    _Atomic uint64_t cache_stale_answers; /* answered stale, not waiting for a refresh (cache.h) */
    _Atomic uint64_t cache_flag_resends;  /* reads sent again: their sets went stale (flags) */
    _Atomic uint64_t bcrypt_jobs;         /* hashes and verifications handed to the threads */
    _Atomic uint64_t reads[SB_READS];     /* read-only statements, with db_read: where they ran */
    _Atomic uint64_t standby_skips;       /* times the worker began skipping the standbys */
    _Atomic uint64_t shed[SB_QUEUES][SB_SHEDS];
    _Atomic uint64_t db_orphaned; /* statements that had waited, whose client left as they ran */
};

enum slot_state { SLOT_FREE, SLOT_STARTING, SLOT_READY, SLOT_DRAINING };

/* Cache-line aligned: no two workers ever write the same line. */
struct worker_slot {
    _Atomic int state;
    _Atomic int pid;
    _Atomic int index;
    _Atomic int generation;
    _Atomic int recycle;          /* the worker reached max_requests: replace it */
    _Atomic int pool_busy;        /* database connections running a query */
    _Atomic int pool_idle;        /* database connections up and free */
    _Atomic int bcrypt_queued;    /* hashing jobs not yet done */
    _Atomic int64_t started_ms;   /* CLOCK_MONOTONIC, milliseconds */
    _Atomic int64_t heartbeat_ms; /* CLOCK_MONOTONIC, milliseconds */
    _Atomic uint64_t requests;    /* responses sent */
    _Atomic uint64_t errors;      /* responses with a 5xx status */
    _Atomic int64_t in_flight;    /* requests received, not yet answered */
    _Atomic int64_t queued;       /* requests waiting for a database connection */
    /*
     * The stamps' tick since which the worker uses the instance's cache
     * (worker/cache.h: listening, when cache_sync is on); 0 while it does
     * not.  The master reads it when it reaps the worker: see
     * scoreboard_cache_gap().
     */
    _Atomic int64_t cache_on_ns;

    /* The standbys (db_read), as worker/replica.c last saw them. */
    _Atomic int read_busy;             /* standby connections running a query */
    _Atomic int read_idle;             /* standby connections up and free */
    _Atomic int standby_skipped;       /* 1 while the worker's reads skip the standbys */
    _Atomic int64_t standby_lag_us;    /* replay lag at the last tick; -1: unknown */
    _Atomic int64_t standby_lag_bytes; /* the same in bytes of WAL; -1: unknown */
    struct scoreboard_counters c;
} __attribute__((aligned(64)));

/* The master's own counters: only the master writes them. */
struct scoreboard_master {
    _Atomic uint64_t worker_starts;
    _Atomic uint64_t exits[SB_EXITS];
    _Atomic uint64_t reloads;         /* HUPs that brought a new generation */
    _Atomic uint64_t reload_failures; /* HUPs refused: the running configuration was kept */
    _Atomic uint64_t heartbeat_kills;
    _Atomic int generation;
    _Atomic int workers;          /* the target */
    _Atomic int64_t started_unix; /* when the master started, Unix seconds */
    _Atomic int slots_used;       /* slots below this were claimed once: readers stop there */
    /*
     * Odd while the master folds a reaped worker's counters into retired
     * and frees its slot: a reader that saw it change sums again, so it
     * never counts a worker twice, or not at all.
     */
    _Atomic uint64_t fold_seq;
} __attribute__((aligned(64)));

struct scoreboard {
    struct scoreboard_master master;
    struct scoreboard_counters retired __attribute__((aligned(64)));
    struct worker_slot slots[SCOREBOARD_SLOTS];
    struct lastwrite writes; /* who wrote when, for reads on standbys (db_read) */
    struct stamps stamps;    /* when each cached thing last changed (worker/cache.h) */
};

/* Maps the page (MAP_SHARED | MAP_ANONYMOUS); NULL on failure. */
struct scoreboard *scoreboard_create(void);
void scoreboard_destroy(struct scoreboard *sb);

/* A free slot, zeroed and marked STARTING, or -1 when all are taken. */
int scoreboard_claim(struct scoreboard *sb, int index, int generation, int64_t now_ms);

/* The worker of slot has been reaped: its counters go to the retired totals, its slot is free. */
void scoreboard_release(struct scoreboard *sb, int slot);

/*
 * The instance's totals: the retired counters plus every live slot's,
 * read consistently with the master's folds.  Any process may call it.
 */
void scoreboard_sum(const struct scoreboard *sb, struct scoreboard_counters *out);

/*
 * The worker of slot, just reaped, had the cache on (and so, with
 * cache_sync, listened for other instances' invalidations) and no other
 * live worker has had it on since before that worker was last seen alive:
 * for a while nobody of the instance may have listened, and what was
 * changed meanwhile is in nobody's stamps.  The master then clears the
 * instance's cache (common/cache_zone.h).  A worker that loses its
 * listener clears it itself (worker/cache.h); this covers the one that
 * dies, or exits, with its cache on.  Another worker's cover counts only
 * from when it turned its cache on, and the reaped one's only up to its
 * last heartbeat: when in doubt, clear.
 */
int scoreboard_cache_gap(const struct scoreboard *sb, int slot);

/* Adds one to a counter: the one write a request path makes, relaxed. */
static inline void
scoreboard_add(_Atomic uint64_t *counter, uint64_t n)
{
    atomic_fetch_add_explicit(counter, n, memory_order_relaxed);
}

/* Cache lookups of every kind that ended as result (enum scoreboard_cache_result). */
uint64_t scoreboard_cache_total(const struct scoreboard_counters *c, int result);
/* Those that missed: stale and absent (/healthz's misses, conduitd_cache_misses_total). */
uint64_t scoreboard_cache_misses(const struct scoreboard_counters *c);

#endif
