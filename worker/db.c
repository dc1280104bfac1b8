/*
 * db: the asynchronous connection pool.  See db.h.
 *
 * Each connection is a small state machine driven by one libevent event on
 * its socket: CONNECTING (PQconnectPoll says what to wait for), PREPARING
 * (one PQsendPrepare per statement, in order), IDLE, BUSY (one query in
 * flight).  Anything that breaks a connection goes through pool_conn_broken(),
 * which fails its query, closes it and schedules a reconnect.
 *
 * A read pool (db_read_pool_new) also knows, per connection, how far its
 * server had replayed the primary's WAL when last probed: the fence.  The
 * probe runs on the connection itself (first thing once prepared, then
 * whenever it is idle and its last probe is older than the interval), so
 * the fence is a lower bound for every later snapshot on that connection,
 * whichever standby of the list it reached.  A query with a need is only
 * given to a connection whose fence is at least that; a query no
 * connection up can serve, and a query that fails there (the standby went
 * away, a recovery conflict), goes to the fallback pool (the primary):
 * these are reads, nothing was committed.
 */
#include "config.h"

#include "worker/db.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/scoreboard.h"
#include "worker/pgconn.h"

#define BACKOFF_MIN_MS 50
#define BACKOFF_MAX_MS 1000 /* service must come back soon after PostgreSQL does */

/*
 * The queue under overload (Facebook's adaptive LIFO, with a test for a
 * standing queue in CoDel's spirit): a queue whose oldest query has been
 * older than STANDING_AGE_NS for STANDING_NS on end is standing, not a
 * burst.  While it stands, the newest query is served first and a
 * client's query waits at most queue_standing_timeout (queue_timeout if
 * shorter), so that the requests served are served fast and the excess
 * gets its 503 at once, instead of everybody waiting about queue_timeout
 * behind a FIFO that never drains (docs/design.md, "Overload").  The age
 * of the oldest, not "never empty": more clients than connections keep a
 * queue from ever emptying while every wait in it is a few milliseconds.
 */
#define STANDING_AGE_NS (100 * 1000000LL)
#define STANDING_NS (500 * 1000000LL)

/* CONN_DOWN: not connected (pgconn.c connects, or waits to try again). */
enum conn_state { CONN_DOWN, CONN_PREPARING, CONN_IDLE, CONN_BUSY };

/* One query, from db_query() to its callback.  Owns copies of its parameters. */
struct job {
    struct job *next, *prev; /* the queue, in arrival order */
    enum sql_query_id q;
    db_cb cb;
    void *arg;
    int64_t need;             /* a read pool: the fence its connection must have */
    struct db_pool *fallback; /* where it goes if the read pool cannot answer it */
    db_wanted wanted;         /* a client's query: NULL for the pool's own */
    int64_t queued_ns;        /* when it joined the queue (CLOCK_MONOTONIC) */
    enum db_status fail_st;   /* what the failed list tells its callback */
    const char *values[8];
    char *strings; /* every parameter, NUL-separated; values[] point in here */
};

struct pool_conn {
    struct db_pool *pool;
    int id;
    struct pgconn *pc;
    PGconn *pg; /* pgconn_pg(pc) while connected, NULL while down */
    enum conn_state state;
    int prepared;
    struct job *job;
    PGresult *res; /* the first result of the command in flight */
    int was_up;
    int tried;         /* its first attempt has ended, well or not */
    int64_t fence;     /* WAL its server had replayed (INT64_MAX: no probe, or a primary) */
    int64_t probed_ns; /* when the last probe was sent (CLOCK_MONOTONIC) */
};

struct db_pool {
    struct event_base *base;
    char *conninfo;
    char *options;             /* libpq "options" (server settings), NULL for the default */
    const char *session_attrs; /* target_session_attrs unless conninfo says; NULL: libpq's */
    const char *what;          /* "database" or "standby", for the log */
    char appname[32];
    struct worker_slot *slot;      /* the primary's pool: its figures for /metrics */
    struct worker_slot *read_slot; /* a read pool: its connections, reads answered and passed on */
    struct scoreboard_counters *counters; /* shedding, for /metrics; NULL for none */
    int size;
    int ready;
    int queue_max;
    int64_t timeout_ns;   /* queue_timeout: a client's query waits no longer */
    int64_t standing_ns;  /* queue_standing_timeout: the same while it stands; 0: off */
    struct event *expire; /* fires when the oldest client's query times out */
    int queued;
    int busy, idle;          /* connections in CONN_BUSY, CONN_IDLE */
    struct job *head, *tail; /* waiting for a connection */
    int64_t old_since_ns;    /* since when its oldest query is past STANDING_AGE_NS; 0: not */
    struct job *failed;      /* to be told DB_UNAVAILABLE from the loop */
    struct event *deliver;
    int outage_logged;
    int first_failures; /* connections whose first attempt failed */
    void (*settled_cb)(void *);
    void *settled_arg;
    int64_t probe_ns;         /* a read pool: the interval of each connection's probe; 0: none */
    struct event *probe_tick; /* probes the idle connections */
    struct db_pool *fallback; /* a read pool: the primary's */
    struct pool_conn conns[];
};

static void count_read(struct db_pool *p, enum scoreboard_read where);
static void submit(struct db_pool *p, struct job *j);

/* Nothing known of a new connection of a read pool until its probe answers. */
static void
fence_reset(struct pool_conn *c)
{
    c->fence = c->pool->probe_ns ? -1 : INT64_MAX;
    c->probed_ns = 0;
}

static void
job_free(struct job *j)
{
    free(j->strings);
    free(j);
}

/* Failures are reported from the loop, never inside db_query(). */
static void
fail_later(struct db_pool *p, struct job *j)
{
    j->next = p->failed;
    p->failed = j;
    event_active(p->deliver, EV_TIMEOUT, 0);
}

static void
deliver_failures(evutil_socket_t fd, short what, void *arg)
{
    struct db_pool *p = arg;

    (void)fd;
    (void)what;
    while (p->failed) {
        struct job *j = p->failed;
        p->failed = j->next;
        if (j->fallback) {
            struct db_pool *f = j->fallback;
            log_debug("read %s: to the primary (no standby connection can serve it)",
                      sql_queries[j->q].name);
            count_read(p, SB_READ_FAILED);
            j->fallback = NULL;
            submit(f, j);
            continue;
        }
        j->cb(j->arg, j->fail_st, NULL);
        job_free(j);
    }
}

/* A connection's state, and the pool's busy and idle counts for /metrics. */
static void
set_state(struct pool_conn *c, enum conn_state st)
{
    struct db_pool *p = c->pool;

    p->busy += (st == CONN_BUSY) - (c->state == CONN_BUSY);
    p->idle += (st == CONN_IDLE) - (c->state == CONN_IDLE);
    c->state = st;
    if (p->slot) {
        atomic_store_explicit(&p->slot->pool_busy, p->busy, memory_order_relaxed);
        atomic_store_explicit(&p->slot->pool_idle, p->idle, memory_order_relaxed);
    }
    if (p->read_slot) {
        atomic_store_explicit(&p->read_slot->read_busy, p->busy, memory_order_relaxed);
        atomic_store_explicit(&p->read_slot->read_idle, p->idle, memory_order_relaxed);
    }
}

/* One more database error of this kind in the worker's counters. */
static void
count_error(struct db_pool *p, enum scoreboard_db_error kind)
{
    if (p->slot)
        scoreboard_add(&p->slot->c.db_errors[kind], 1);
}

/*
 * A read pool's statement answered by its standby, or passed to the
 * primary.  A standby's errors are not counted as the database's: what
 * they cost is the reads the primary took over.
 */
static void
count_read(struct db_pool *p, enum scoreboard_read where)
{
    if (p->read_slot)
        scoreboard_add(&p->read_slot->c.reads[where], 1);
}

/* What /metrics counts a query's error as, by its SQLSTATE class. */
static enum scoreboard_db_error
error_kind(const char *sqlstate)
{
    if (strncmp(sqlstate, "23", 2) == 0)
        return SB_DB_CONSTRAINT;
    if (strncmp(sqlstate, "40", 2) == 0)
        return SB_DB_TRANSACTION;
    return SB_DB_QUERY;
}

/* One more query shed (or orphaned), for conduitd_shed_total. */
static void
count_shed(struct db_pool *p, enum scoreboard_shed why)
{
    if (p->counters)
        scoreboard_add(&p->counters->shed[SB_QUEUE_DB][why], 1);
}

/*
 * A client's query taken out of the queue unsent: its callback gets st from
 * the loop, and a read pool's does not go to the primary (it has waited
 * its time, or nobody wants it).
 */
static void
shed(struct db_pool *p, struct job *j, enum db_status st, int64_t now)
{
    enum scoreboard_shed why = SB_SHED_GONE;

    if (st == DB_TIMED_OUT)
        why = now - j->queued_ns >= p->timeout_ns ? SB_SHED_TIMEOUT : SB_SHED_STANDING;
    count_shed(p, why);
    j->fallback = NULL;
    j->fail_st = st;
    fail_later(p, j);
}

/*
 * old_since_ns brought up to now.  The oldest query passes the age with no
 * event to say so: the moment is worked out when asked (a head that was
 * young when it became the head crossed the age at its own
 * queued_ns + STANDING_AGE_NS; take() resets it for a young new head).
 */
static void
note_age(struct db_pool *p, int64_t now)
{
    if (!p->head)
        p->old_since_ns = 0;
    else if (!p->old_since_ns && now - p->head->queued_ns > STANDING_AGE_NS)
        p->old_since_ns = p->head->queued_ns + STANDING_AGE_NS;
}

/*
 * Has the queue stood (its oldest query past the age) for STANDING_NS,
 * with every connection up?  A pool still connecting (a new worker of a reload, a
 * reconnect) queues for a moment: that is not an overload, and the FIFO
 * with its deadline absorbs it.
 */
static int
standing(struct db_pool *p, int64_t now)
{
    note_age(p, now);
    return p->standing_ns && p->old_since_ns && p->ready == p->size &&
           now - p->old_since_ns >= STANDING_NS;
}

int
db_pool_backlogged(const struct db_pool *p)
{
    return p->head && clock_now_ns() - p->head->queued_ns > STANDING_AGE_NS;
}

/* How long a client's query may wait now. */
static int64_t
wait_limit(struct db_pool *p, int64_t now)
{
    if (p->standing_ns < p->timeout_ns && standing(p, now))
        return p->standing_ns;
    return p->timeout_ns;
}

/* Has this client's query waited as long as it may? */
static int
expired(struct db_pool *p, const struct job *j, int64_t now)
{
    return j->wanted && now - j->queued_ns >= wait_limit(p, now);
}

static void
set_queued(struct db_pool *p, int delta)
{
    p->queued += delta;
    if (p->slot)
        atomic_store_explicit(&p->slot->queued, p->queued, memory_order_relaxed);
}

static int
watch(struct pool_conn *c, short what)
{
    return pgconn_watch(c->pc, what);
}

/* The highest fence of the connections up; -1 when none is up. */
int64_t
db_pool_fence(const struct db_pool *p)
{
    int64_t best = -1;

    for (int i = 0; i < p->size; i++)
        if (p->conns[i].state >= CONN_IDLE && p->conns[i].fence > best)
            best = p->conns[i].fence;
    return best;
}

/* Unlinks j from the queue. */
static void
take(struct db_pool *p, struct job *j, int64_t now)
{
    note_age(p, now);
    if (j->prev)
        j->prev->next = j->next;
    else
        p->head = j->next;
    if (j->next)
        j->next->prev = j->prev;
    else
        p->tail = j->prev;
    j->next = j->prev = NULL;
    set_queued(p, -1);
    /* A new oldest still young: the queue's age starts again from it. */
    if (!p->head || now - p->head->queued_ns <= STANDING_AGE_NS)
        p->old_since_ns = 0;
}

/*
 * The queue is in arrival order (a standing queue is served from its tail,
 * but still joined at it), so the first client's query in it is the next
 * to time out: the timer is set for it, at queue_timeout, or sooner when
 * the queue will have stood by then and its wait is shorter.  (Taking the
 * head from the queue leaves the timer early; it then only sets itself
 * again.)
 */
static void
arm_expire(struct db_pool *p, int64_t now)
{
    for (struct job *j = p->head; j; j = j->next) {
        int64_t at = j->queued_ns + p->timeout_ns, left;
        struct timeval tv;
        if (!j->wanted)
            continue;
        if (p->standing_ns && p->standing_ns < p->timeout_ns) {
            int64_t old = p->old_since_ns ? p->old_since_ns : p->head->queued_ns + STANDING_AGE_NS;
            int64_t stands = old + STANDING_NS;
            int64_t waited = j->queued_ns + p->standing_ns;
            int64_t short_at = stands > waited ? stands : waited;
            if (short_at < at)
                at = short_at;
        }
        left = at - now;
        if (left < 0)
            left = 0;
        tv.tv_sec = (time_t)(left / 1000000000);
        tv.tv_usec = (suseconds_t)((left % 1000000000 + 999) / 1000);
        evtimer_add(p->expire, &tv);
        return;
    }
}

/*
 * queue_timeout (or the shorter wait of a standing queue): the clients'
 * queries that have waited it fail now, so their clients hear 503 at once
 * instead of having them run late, for no one.  The pool's own queries
 * wait on.
 */
static void
on_expire(evutil_socket_t fd, short what, void *arg)
{
    struct db_pool *p = arg;
    int64_t now = clock_now_ns();
    int64_t limit = wait_limit(p, now);
    struct job *j = p->head;

    (void)fd;
    (void)what;
    while (j && now - j->queued_ns >= limit) {
        struct job *next = j->next;
        if (j->wanted) {
            take(p, j, now);
            shed(p, j, j->wanted(j->arg) ? DB_TIMED_OUT : DB_ABANDONED, now);
        }
        j = next;
    }
    arm_expire(p, now);
}

/*
 * The waiting queries no connection up can serve any more fail (a read
 * pool's go to its fallback): all of them when no connection is up.
 */
static void
fail_unservable(struct db_pool *p)
{
    int64_t best = db_pool_fence(p), now = clock_now_ns();
    struct job *j = p->head;

    while (j) {
        struct job *next = j->next;
        if (j->need > best) {
            take(p, j, now);
            fail_later(p, j);
        }
        j = next;
    }
}

/*
 * The pool has settled once a connection is up, or once every connection
 * has failed its first attempt (PostgreSQL is down: waiting longer helps
 * nobody, requests get 503 until it is back).  Told once.
 */
static void
settle(struct db_pool *p)
{
    void (*cb)(void *) = p->settled_cb;

    if (!cb || (p->ready == 0 && p->first_failures < p->size))
        return;
    p->settled_cb = NULL;
    cb(p->settled_arg);
}

/*
 * What a statement whose connection broke did, told by its first result
 * (from the server: libpq's own have no SQLSTATE or class 08).  An error
 * there means it failed, so it did not commit: an implicit transaction
 * commits at the Sync that follows a statement, after its CommandComplete,
 * which would have been read first.  Its rows whole, or nothing, leave the
 * commit unknown.
 */
static enum db_status
broken_outcome(const PGresult *first)
{
    const char *s = db_sqlstate(first);

    if (first && PQresultStatus(first) == PGRES_FATAL_ERROR && s[0] && strncmp(s, "08", 2) != 0)
        return DB_UNAVAILABLE;
    return DB_UNKNOWN;
}

static void
pool_conn_broken(struct pool_conn *c, const char *why)
{
    struct db_pool *p = c->pool;

    count_error(p, SB_DB_CONNECTION);
    if (c->state >= CONN_IDLE || c->was_up || !p->outage_logged) {
        log_warning("%s connection %d: %s; reconnecting", p->what, c->id, why);
        if (strstr(why, "too many clients"))
            log_warning("PostgreSQL's max_connections is too low for workers x pool (x "
                        "instances): raise it, or lower workers or pool");
        /*
         * A server that was never reached fails every connection at every
         * retry: say it once per pool, not once per connection and retry.
         */
        if (c->state < CONN_IDLE && !c->was_up && p->ready == 0 && !p->outage_logged) {
            if (p->fallback)
                log_error("cannot reach a standby: reads go to the primary until one answers "
                          "(retrying with backoff)");
            else
                log_error("cannot reach PostgreSQL: requests get 503 until it answers "
                          "(retrying with backoff)");
            p->outage_logged = 1;
        }
    }
    if (c->state >= CONN_IDLE) {
        p->ready--;
        if (p->ready == 0) {
            if (p->fallback)
                log_error("no standby connection left: reads go to the primary until one is "
                          "back");
            else
                log_error("no database connection left: requests get 503 until PostgreSQL is "
                          "back");
            p->outage_logged = 1;
        }
    }
    c->was_up = 0;
    if (!c->tried) {
        c->tried = 1;
        p->first_failures++;
    }
    if (c->job) {
        /* Sent: libpq may hold its first result still, read with the end of the stream. */
        if (c->state == CONN_BUSY) {
            PGresult *r = c->res || !c->pg || PQisBusy(c->pg) ? NULL : PQgetResult(c->pg);
            c->job->fail_st = broken_outcome(c->res ? c->res : r);
            PQclear(r);
        }
        fail_later(p, c->job);
        c->job = NULL;
    }
    if (c->res) {
        PQclear(c->res);
        c->res = NULL;
    }
    c->pg = NULL;
    pgconn_retry(c->pc, 0);
    set_state(c, CONN_DOWN);
    fence_reset(c);
    fail_unservable(p);
    settle(p);
}

static void
on_notice(void *arg, const char *message)
{
    (void)arg;
    log_debug("postgresql: %s", message);
}

static void
send_job(struct pool_conn *c, struct job *j)
{
    const struct sql_query *q = &sql_queries[j->q];
    int flush;

    c->job = j;
    set_state(c, CONN_BUSY);
    if (!PQsendQueryPrepared(c->pg, q->name, q->nparams, j->values, NULL, NULL, 1)) {
        pool_conn_broken(c, PQerrorMessage(c->pg));
        return;
    }
    flush = PQflush(c->pg);
    if (flush < 0 || watch(c, flush ? EV_READ | EV_WRITE : EV_READ) < 0)
        pool_conn_broken(c, "cannot send the query");
}

/* A read pool's probe answered: what this connection's server has replayed. */
static void
on_probe(void *arg, enum db_status st, const PGresult *res)
{
    struct pool_conn *c = arg;

    if (st != DB_OK || PQntuples(res) != 1 || PQnfields(res) != 2) {
        log_debug("%s connection %d: probe failed (%s)", c->pool->what, c->id,
                  st == DB_OK ? "no row" : db_sqlstate(res));
        return;
    }
    if (!db_bool(res, 0, 1))
        c->fence = INT64_MAX; /* not in recovery: a primary (prefer-standby, or promoted) */
    else if (!db_null(res, 0, 0))
        c->fence = db_int8(res, 0, 0);
}

static int
probe_due(const struct pool_conn *c, int64_t now)
{
    return c->pool->probe_ns && now - c->probed_ns >= c->pool->probe_ns;
}

static void
send_probe(struct pool_conn *c, int64_t now)
{
    struct job *j = calloc(1, sizeof(*j));

    if (!j)
        fatal("out of memory");
    j->q = SQL_REPLAY_LSN;
    j->fail_st = DB_UNAVAILABLE;
    j->cb = on_probe;
    j->arg = c;
    c->probed_ns = now;
    send_job(c, j);
}

/*
 * The connection is free: probe it when that is due, else give it the
 * oldest waiting query it can serve (any, but in a read pool), or the
 * newest while the queue stands.  A client's query that has waited its
 * time, or whose client has gone, is dropped on the way: PostgreSQL's time
 * goes to clients still waiting for an answer.
 */
static void
pool_conn_idle(struct pool_conn *c)
{
    struct db_pool *p = c->pool;
    int64_t now = clock_now_ns();
    int lifo = standing(p, now);
    struct job *j = lifo ? p->tail : p->head;

    set_state(c, CONN_IDLE);
    if (probe_due(c, now)) {
        send_probe(c, now);
        return;
    }
    while (j) {
        struct job *next = lifo ? j->prev : j->next;
        if (j->need > c->fence) {
            j = next;
            continue;
        }
        take(p, j, now);
        if (expired(p, j, now)) {
            shed(p, j, DB_TIMED_OUT, now);
        } else if (j->wanted && !j->wanted(j->arg)) {
            shed(p, j, DB_ABANDONED, now);
        } else {
            send_job(c, j);
            return;
        }
        j = next;
    }
}

static void
on_probe_tick(evutil_socket_t fd, short what, void *arg)
{
    struct db_pool *p = arg;
    int64_t now = clock_now_ns();

    (void)fd;
    (void)what;
    for (int i = 0; i < p->size; i++)
        if (p->conns[i].state == CONN_IDLE && probe_due(&p->conns[i], now))
            send_probe(&p->conns[i], now);
}

static void
send_next_prepare(struct pool_conn *c)
{
    const struct sql_query *q;
    int flush;

    if (c->prepared == SQL_QUERY_COUNT) {
        struct db_pool *p = c->pool;
        p->ready++;
        c->was_up = 1;
        c->tried = 1;
        pgconn_reset_backoff(c->pc);
        if (p->outage_logged) {
            log_notice("%s connection %d is back (%s)", p->what, c->id, pgconn_where(c->pc));
            if (p->ready == p->size)
                p->outage_logged = 0;
        } else {
            log_debug("database connection %d ready", c->id);
        }
        pool_conn_idle(c);
        settle(p);
        return;
    }
    q = &sql_queries[c->prepared];
    if (!PQsendPrepare(c->pg, q->name, q->text, q->nparams, NULL)) {
        pool_conn_broken(c, PQerrorMessage(c->pg));
        return;
    }
    flush = PQflush(c->pg);
    if (flush < 0 || watch(c, flush ? EV_READ | EV_WRITE : EV_READ) < 0)
        pool_conn_broken(c, "cannot send a statement");
}

const char *
db_sqlstate(const PGresult *res)
{
    const char *s = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;

    return s ? s : "";
}

/*
 * 25006 (read_only_sql_transaction): the server is a standby, or a primary
 * being demoted, so the connection is to the wrong server rather than the
 * statement wrong: like a shutdown, it breaks the connection, whose
 * reconnect finds the primary (with target_session_attrs=read-write), and
 * the request gets 503, not 500.  Nothing is retried: the write did not run.
 */
#define SQLSTATE_READ_ONLY "25006"

int
db_sqlstate_unavailable(const char *s)
{
    return strcmp(s, "57P01") == 0 || strcmp(s, "57P02") == 0 || strcmp(s, "57P03") == 0 ||
           strcmp(s, "53300") == 0 || strcmp(s, SQLSTATE_READ_ONLY) == 0 ||
           strncmp(s, "08", 2) == 0;
}

/* One command finished (PQgetResult gave NULL): hand its result over. */
static void
command_done(struct pool_conn *c)
{
    PGresult *res = c->res;
    ExecStatusType rs = res ? PQresultStatus(res) : PGRES_FATAL_ERROR;
    int ok = rs == PGRES_TUPLES_OK || rs == PGRES_COMMAND_OK;
    int lost =
        PQstatus(c->pg) == CONNECTION_BAD || (!ok && db_sqlstate_unavailable(db_sqlstate(res)));

    c->res = NULL;
    if (c->state == CONN_PREPARING) {
        if (!ok) {
            char why[512];
            snprintf(why, sizeof(why), "cannot prepare %s: %s", sql_queries[c->prepared].name,
                     res ? PQresultErrorMessage(res) : "no result");
            why[strcspn(why, "\n")] = '\0';
            PQclear(res);
            pool_conn_broken(c, why);
            return;
        }
        PQclear(res);
        c->prepared++;
        send_next_prepare(c);
        return;
    }

    /* CONN_BUSY */
    struct job *j = c->job;
    c->job = NULL;
    if (lost) {
        const char *why = !res ? "connection lost"
                          : strcmp(db_sqlstate(res), SQLSTATE_READ_ONLY) == 0
                              ? "the server is read-only (a standby? the connection string "
                                "wants target_session_attrs=read-write)"
                              : "the server ended the session";
        j->fail_st = broken_outcome(res);
        fail_later(c->pool, j);
        PQclear(res);
        pool_conn_broken(c, why);
        return;
    }
    if (!ok) {
        log_debug("query %s: %s", sql_queries[j->q].name, db_sqlstate(res));
        count_error(c->pool, error_kind(db_sqlstate(res)));
    }
    /*
     * A query that waited, whose client left while it ran: PostgreSQL's
     * work for nobody, which the queue could not save (one that never
     * waited is not asked: a peek at the socket per statement is not free).
     */
    if (j->queued_ns && j->wanted && c->pool->counters && !j->wanted(j->arg))
        scoreboard_add(&c->pool->counters->db_orphaned, 1);
    if (!ok && j->fallback) {
        /* A read a standby refused (a recovery conflict, say): the primary answers it. */
        struct db_pool *f = j->fallback;
        j->fallback = NULL;
        count_read(c->pool, SB_READ_FAILED);
        PQclear(res);
        submit(f, j);
        pool_conn_idle(c);
        return;
    }
    if (j->fallback)
        count_read(c->pool, SB_READ_STANDBY);
    j->cb(j->arg, ok ? DB_OK : DB_SQL_ERROR, res);
    job_free(j);
    PQclear(res);
    pool_conn_idle(c);
}

/* pgconn: connected.  Every statement is prepared before the first query. */
static void
pool_conn_up(void *arg)
{
    struct pool_conn *c = arg;

    c->pg = pgconn_pg(c->pc);
    PQsetNoticeProcessor(c->pg, on_notice, NULL);
    set_state(c, CONN_PREPARING);
    c->prepared = 0;
    send_next_prepare(c);
}

/* pgconn: an attempt to connect failed. */
static void
pool_conn_failed(void *arg, const char *why)
{
    pool_conn_broken(arg, why);
}

static void
pool_conn_io(void *arg, short what)
{
    struct pool_conn *c = arg;

    if (c->state != CONN_PREPARING && c->state != CONN_BUSY) {
        /* Idle: only a server going away makes the socket readable. */
        if (PQconsumeInput(c->pg) == 0 || PQstatus(c->pg) == CONNECTION_BAD)
            pool_conn_broken(c, "connection closed by the server");
        return;
    }
    if (what & EV_WRITE) {
        int flush = PQflush(c->pg);
        if (flush < 0) {
            pool_conn_broken(c, "write failed");
            return;
        }
        if (flush == 0 && watch(c, EV_READ) < 0) {
            pool_conn_broken(c, "no socket");
            return;
        }
    }
    if (what & EV_READ) {
        if (!PQconsumeInput(c->pg)) {
            pool_conn_broken(c, "connection lost");
            return;
        }
        while (!PQisBusy(c->pg)) {
            PGresult *r = PQgetResult(c->pg);
            if (!r) {
                command_done(c);
                return;
            }
            if (!c->res)
                c->res = r;
            else
                PQclear(r);
        }
    }
}

static const struct pgconn_ops pool_conn_ops = {
    .up = pool_conn_up,
    .io = pool_conn_io,
    .failed = pool_conn_failed,
};

static struct db_pool *
pool_new(struct event_base *base, const char *conninfo, const char *options, int size,
         int queue_max, int queue_timeout_ms, struct worker_slot *slot, struct db_pool *fallback,
         int probe_ms, struct worker_slot *read_slot)
{
    struct db_pool *p = calloc(1, sizeof(*p) + (size_t)size * sizeof(struct pool_conn));

    if (!p)
        return NULL;
    p->base = base;
    p->size = size;
    p->queue_max = queue_max;
    p->timeout_ns = (int64_t)queue_timeout_ms * 1000000;
    p->slot = slot;
    p->read_slot = read_slot;
    p->counters = slot ? &slot->c : fallback ? fallback->counters : NULL;
    p->fallback = fallback;
    p->probe_ns = (int64_t)probe_ms * 1000000;
    p->what = fallback ? "standby" : "database";
    p->session_attrs = fallback ? "standby" : NULL;
    p->conninfo = strdup(conninfo ? conninfo : "");
    p->options = options ? strdup(options) : NULL;
    snprintf(p->appname, sizeof(p->appname), fallback ? "conduitd read" : "conduitd");
    p->deliver = event_new(base, -1, 0, deliver_failures, p);
    p->expire = evtimer_new(base, on_expire, p);
    if (!p->conninfo || (options && !p->options) || !p->deliver || !p->expire) {
        db_pool_free(p);
        return NULL;
    }
    if (probe_ms > 0) {
        struct timeval tv = {probe_ms / 1000, (probe_ms % 1000) * 1000};
        p->probe_tick = event_new(base, -1, EV_PERSIST, on_probe_tick, p);
        if (!p->probe_tick || event_add(p->probe_tick, &tv) < 0) {
            db_pool_free(p);
            return NULL;
        }
    }
    for (int i = 0; i < size; i++) {
        struct pool_conn *c = &p->conns[i];
        struct pgconn_conf conf = {
            .conninfo = p->conninfo,
            .session_attrs = p->session_attrs,
            .appname = p->appname,
            .options = p->options,
            .backoff_min_ms = BACKOFF_MIN_MS,
            .backoff_max_ms = BACKOFF_MAX_MS,
        };
        char why[256];
        c->pool = p;
        c->id = i;
        fence_reset(c);
        c->pc = pgconn_new(base, &conf, &pool_conn_ops, c, why, sizeof(why));
        if (!c->pc) {
            log_error("%s connection %d: %s", p->what, i, why);
            db_pool_free(p);
            return NULL;
        }
    }
    for (int i = 0; i < size; i++)
        pgconn_start(p->conns[i].pc);
    return p;
}

struct db_pool *
db_pool_new(struct event_base *base, const char *conninfo, const char *options, int size,
            int queue_max, int queue_timeout_ms, struct worker_slot *slot)
{
    return pool_new(base, conninfo, options, size, queue_max, queue_timeout_ms, slot, NULL, 0,
                    NULL);
}

struct db_pool *
db_read_pool_new(struct event_base *base, const char *conninfo, const char *options, int size,
                 int queue_max, int queue_timeout_ms, int probe_ms, struct db_pool *fallback,
                 struct worker_slot *slot)
{
    return pool_new(base, conninfo, options, size, queue_max, queue_timeout_ms, NULL, fallback,
                    probe_ms, slot);
}

void
db_pool_standing(struct db_pool *p, int wait_ms)
{
    p->standing_ns = (int64_t)wait_ms * 1000000;
}

void
db_pool_free(struct db_pool *p)
{
    if (!p)
        return;
    for (int i = 0; i < p->size; i++) {
        struct pool_conn *c = &p->conns[i];
        if (c->job)
            job_free(c->job);
        if (c->res)
            PQclear(c->res);
        pgconn_free(c->pc);
    }
    while (p->head) {
        struct job *j = p->head;
        p->head = j->next;
        job_free(j);
    }
    while (p->failed) {
        struct job *j = p->failed;
        p->failed = j->next;
        job_free(j);
    }
    if (p->deliver)
        event_free(p->deliver);
    if (p->expire)
        event_free(p->expire);
    if (p->probe_tick)
        event_free(p->probe_tick);
    free(p->conninfo);
    free(p->options);
    free(p);
}

/*
 * The queue is full and a client's query comes.  While the queue stands,
 * the newest is the one worth serving (it is served first): the oldest
 * client's query makes room, with its 503 now rather than at its deadline.
 * 1 when room was made.
 */
static int
make_room(struct db_pool *p, const struct job *j, int64_t now)
{
    struct job *old = p->head;

    if (!j->wanted || j->fallback || !standing(p, now))
        return 0;
    while (old && (!old->wanted || old->fallback))
        old = old->next;
    if (!old)
        return 0;
    take(p, old, now);
    shed(p, old, old->wanted(old->arg) ? DB_TIMED_OUT : DB_ABANDONED, now);
    return 1;
}

/*
 * To an idle connection that can serve it, else to the queue, unless no
 * connection up could ever serve it (none is up, or none has its fence)
 * or the queue is full: then it fails, from the loop.
 */
static void
submit(struct db_pool *p, struct job *j)
{
    int servable = 0;

    j->next = NULL;
    for (int i = 0; i < p->size; i++) {
        struct pool_conn *c = &p->conns[i];
        if (c->state < CONN_IDLE || c->fence < j->need)
            continue;
        if (c->state == CONN_IDLE) {
            send_job(c, j);
            return;
        }
        servable = 1;
    }
    if (!servable) {
        count_error(p, SB_DB_UNAVAILABLE);
        fail_later(p, j);
        return;
    }
    if (p->queued >= p->queue_max && !make_room(p, j, clock_now_ns())) {
        if (p->slot)
            scoreboard_add(&p->slot->c.db_queue_full, 1);
        if (j->wanted && !j->fallback)
            count_shed(p, SB_SHED_FULL);
        fail_later(p, j);
        return;
    }
    j->queued_ns = clock_now_ns();
    j->prev = p->tail;
    if (p->tail) {
        p->tail->next = j;
    } else {
        p->head = j;
        p->old_since_ns = 0;
    }
    p->tail = j;
    set_queued(p, 1);
    if (j->wanted && !evtimer_pending(p->expire, NULL))
        arm_expire(p, j->queued_ns);
}

static struct job *
job_new(enum sql_query_id q, const char *const *params, db_cb cb, void *arg, db_wanted wanted)
{
    int n = sql_queries[q].nparams;
    size_t total = 0, off = 0;
    struct job *j = calloc(1, sizeof(*j));

    if (!j || n > (int)(sizeof(j->values) / sizeof(j->values[0])))
        fatal("db_query %s: cannot hold %d parameters", sql_queries[q].name, n);
    j->q = q;
    j->cb = cb;
    j->arg = arg;
    j->wanted = wanted;
    j->fail_st = DB_UNAVAILABLE;
    for (int i = 0; i < n; i++)
        if (params[i])
            total += strlen(params[i]) + 1;
    j->strings = malloc(total ? total : 1);
    if (!j->strings)
        fatal("out of memory");
    for (int i = 0; i < n; i++) {
        if (!params[i]) {
            j->values[i] = NULL;
            continue;
        }
        size_t len = strlen(params[i]) + 1;
        memcpy(j->strings + off, params[i], len);
        j->values[i] = j->strings + off;
        off += len;
    }
    return j;
}

void
db_query(struct db_pool *p, enum sql_query_id q, const char *const *params, db_cb cb, void *arg,
         db_wanted wanted)
{
    submit(p, job_new(q, params, cb, arg, wanted));
}

void
db_query_fenced(struct db_pool *p, enum sql_query_id q, const char *const *params, db_cb cb,
                void *arg, db_wanted wanted, int64_t need)
{
    struct job *j = job_new(q, params, cb, arg, wanted);

    j->need = need;
    j->fallback = p->fallback;
    submit(p, j);
}

void
db_pool_on_settled(struct db_pool *p, void (*cb)(void *), void *arg)
{
    p->settled_cb = cb;
    p->settled_arg = arg;
    settle(p);
}

int
db_pool_ready(const struct db_pool *p)
{
    return p->ready;
}

/* Binary results are in network byte order. */
int64_t
db_int8(const PGresult *r, int row, int col)
{
    const unsigned char *v = (const unsigned char *)PQgetvalue(r, row, col);
    uint64_t x = 0;

    if (PQgetisnull(r, row, col) || PQgetlength(r, row, col) != 8)
        return 0;
    for (int i = 0; i < 8; i++)
        x = (x << 8) | v[i];
    return (int64_t)x;
}

int
db_bool(const PGresult *r, int row, int col)
{
    return !PQgetisnull(r, row, col) && PQgetvalue(r, row, col)[0] != 0;
}

int
db_null(const PGresult *r, int row, int col)
{
    return PQgetisnull(r, row, col);
}

int64_t
db_timestamptz(const PGresult *r, int row, int col)
{
    return db_int8(r, row, col);
}

const char *
db_text(const PGresult *r, int row, int col, size_t *len)
{
    if (PQgetisnull(r, row, col)) {
        if (len)
            *len = 0;
        return NULL;
    }
    if (len)
        *len = (size_t)PQgetlength(r, row, col);
    return PQgetvalue(r, row, col);
}
