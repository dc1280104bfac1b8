/*
 * db: a worker's private pool of asynchronous PostgreSQL connections.
 *
 * K connections are opened non-blocking (PQconnectStart/PQconnectPoll), each
 * prepares every statement of sql/queries.sql once, then serves one query
 * at a time: PQsendQueryPrepared, results read when libevent says the
 * socket is readable.  When every connection is busy a query waits in a
 * bounded FIFO; past its bound, or while no connection is up, the caller
 * is told DB_UNAVAILABLE at once (the request gets 503 with Retry-After).
 * A query whose connection breaks after it was sent, before its result
 * (or with no result but an error), is told DB_UNKNOWN: it may have
 * committed, so a write must not be answered "try again".
 * A broken connection is re-opened with a doubling backoff; the worker
 * never exits for it.  No blocking libpq call runs here.
 *
 * Overload: a query asked on behalf of a client (given a wanted function)
 * waits in the queue at most queue_timeout; then it fails at once with
 * DB_TIMED_OUT, never sent.  Before one is taken from the queue, wanted()
 * says whether its client is still there; if not it fails with
 * DB_ABANDONED, never sent.  A statement already running is not cancelled
 * (docs/design.md, "Overload": PQcancel blocks and can hit the next
 * statement); one whose client left while it waited is counted.
 *
 * Ownership: db_query() copies the parameters.  The callback runs exactly
 * once per db_query(), always later from the loop (never inside
 * db_query()), and the PGresult it gets belongs to the pool: it is cleared
 * when the callback returns.
 */
#ifndef CONDUITD_DB_H
#define CONDUITD_DB_H

#include <stddef.h>
#include <stdint.h>

#include <libpq-fe.h>

#include "sql/queries.h"

struct event_base;
struct worker_slot;
struct db_pool;

enum db_status {
    DB_OK,          /* the query ran; res holds its rows */
    DB_SQL_ERROR,   /* PostgreSQL refused the query; res holds the error */
    DB_UNAVAILABLE, /* no connection, or the wait queue is full: try later */
    DB_TIMED_OUT,   /* waited queue_timeout for a connection: not sent (try later) */
    DB_ABANDONED,   /* wanted() said no while it waited: not sent, nobody to answer */
    DB_UNKNOWN      /* sent, and the connection broke before its result: it may have committed */
};

typedef void (*db_cb)(void *arg, enum db_status st, const PGresult *res);

/*
 * Is the query still wanted?  Asked, with the callback's arg, of a query
 * taken from the queue, never of one sent at once: a client that hung up
 * makes it 0.  Only queries given one can get DB_TIMED_OUT or
 * DB_ABANDONED; the pool's own (probes, samples) never do.
 */
typedef int (*db_wanted)(void *arg);

/*
 * options, when not NULL, is libpq's "options" for every connection
 * (server settings such as "-c conduit.cache_notify=on"); it replaces
 * PGOPTIONS and any options in conninfo, so the caller merges those in.
 */
struct db_pool *db_pool_new(struct event_base *base, const char *conninfo, const char *options,
                            int size, int queue_max, int queue_timeout_ms,
                            struct worker_slot *slot);
void db_pool_free(struct db_pool *p);

/*
 * queue_standing_timeout (0, the default: off): while the queue stands
 * (its oldest query older than 100 ms for 500 ms, every connection up),
 * the newest query is served first, a client's query waits at most wait_ms
 * (queue_timeout if shorter), and a full queue sheds its oldest client's
 * query to take a new one; those shed get DB_TIMED_OUT.
 */
void db_pool_standing(struct db_pool *p, int wait_ms);

/*
 * Is the pool backed up: has the oldest query in its queue waited more
 * than 100 ms (the standing queue's age, without its 500 ms)?  What a
 * request would wait behind now; the cache's stale answers ask it.
 */
int db_pool_backlogged(const struct db_pool *p);

/*
 * A read pool (db_read): size connections to standbys (target_session_attrs
 * = standby unless conninfo names another), each probed with the
 * replay_lsn statement on connecting and then every probe_ms while idle.
 * Its queries are sent with db_query_fenced(); whatever it cannot answer
 * goes to fallback (the primary's pool), which must outlive it, except a
 * query that timed out or was abandoned in its queue.  Its shedding counts
 * into fallback's scoreboard slot; its connections and the reads it
 * answered or passed on are counted in slot (the standby figures of
 * /metrics; NULL: none).  options as db_pool_new takes them.
 */
struct db_pool *db_read_pool_new(struct event_base *base, const char *conninfo, const char *options,
                                 int size, int queue_max, int queue_timeout_ms, int probe_ms,
                                 struct db_pool *fallback, struct worker_slot *slot);

/*
 * A read-only statement on a read pool: run on a connection whose server
 * had replayed at least need (a WAL position) when last probed, or else on
 * the fallback pool: when no connection up has that fence, the queue is
 * full, the connection breaks, or the standby refuses it.  cb is called
 * once, as with db_query().
 */
void db_query_fenced(struct db_pool *p, enum sql_query_id q, const char *const *params, db_cb cb,
                     void *arg, db_wanted wanted, int64_t need);

/* The highest fence among the connections up (INT64_MAX: a primary); -1 when none is up. */
int64_t db_pool_fence(const struct db_pool *p);

/*
 * Runs statement q with nparams text parameters (NULL is SQL NULL).
 * Results come back in binary.  wanted is NULL for the pool's own queries,
 * which wait as long as it takes.
 */
void db_query(struct db_pool *p, enum sql_query_id q, const char *const *params, db_cb cb,
              void *arg, db_wanted wanted);

/* The SQLSTATE of an error result ("23505"), or "" when there is none. */
const char *db_sqlstate(const PGresult *res);

/* Is this error PostgreSQL going away (shutdown, too many clients, ...)? */
int db_sqlstate_unavailable(const char *sqlstate);

/* Binary column readers for the result types the queries promise. */
int64_t db_int8(const PGresult *r, int row, int col);
int db_bool(const PGresult *r, int row, int col);
int db_null(const PGresult *r, int row, int col);
/* timestamptz: microseconds since 2000-01-01 UTC. */
int64_t db_timestamptz(const PGresult *r, int row, int col);
const char *db_text(const PGresult *r, int row, int col, size_t *len);

/*
 * Calls cb(arg) once, from the loop, when the pool has settled: a
 * connection is up and prepared, or every connection has failed its first
 * attempt.  A worker is ready to take requests from then on: before, a
 * new worker of a reload would answer 503 while its old twin could serve.
 */
void db_pool_on_settled(struct db_pool *p, void (*cb)(void *), void *arg);

/* How many connections are up (the tests and the logs use it). */
int db_pool_ready(const struct db_pool *p);

#endif
