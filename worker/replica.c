/*
 * replica: which server answers a read.  See replica.h.
 */
#include "config.h"

#include "worker/replica.h"

#include <stdlib.h>

#include <event2/event.h>

#include "common/clock.h"
#include "common/lastwrite.h"
#include "common/log.h"
#include "common/scoreboard.h"
#include "common/settings.h"

/* Samples kept to find the primary's position max_lag ago (at most this many). */
#define RING 256

struct sample {
    int64_t sent_ns; /* 0: none */
    int64_t lsn;
};

enum replica_state { STANDBYS_STARTING, STANDBYS_USED, STANDBYS_SKIPPED };

struct replica {
    struct db_pool *primary, *read;
    struct lastwrite *writes;
    struct worker_slot *slot; /* the standby figures of /metrics */
    struct event *tick;
    int64_t max_lag_ns;
    int64_t step_ns; /* the least time between two kept samples */
    int sampling;    /* a sample is in flight */
    int64_t sampling_sent_ns;
    struct sample latest;
    struct sample ring[RING]; /* the oldest at (next - n) */
    int next, n;
    enum replica_state state;
    int64_t started_ns;
};

static void
keep(struct replica *r, struct sample s)
{
    if (r->n > 0 && s.sent_ns - r->ring[(r->next + RING - 1) % RING].sent_ns < r->step_ns)
        return;
    r->ring[r->next] = s;
    r->next = (r->next + 1) % RING;
    if (r->n < RING)
        r->n++;
}

/*
 * The position of the oldest sample sent at or after t: every write
 * committed before t is at or below it.  -1 when no sample that recent
 * came back.
 */
static int64_t
sample_since(const struct replica *r, int64_t t)
{
    for (int i = 0; i < r->n; i++) {
        const struct sample *s = &r->ring[(r->next + RING - r->n + i) % RING];
        if (s->sent_ns >= t)
            return s->lsn;
    }
    return r->latest.sent_ns && r->latest.sent_ns >= t ? r->latest.lsn : -1;
}

/*
 * The primary's position max_lag ago, what every standby read needs; -1
 * when no sample that recent came back (the primary is away: nothing can
 * be promised, so the primary answers).
 */
static int64_t
lag_need(const struct replica *r, int64_t now)
{
    return sample_since(r, now - r->max_lag_ns);
}

static void
on_sample(void *arg, enum db_status st, const PGresult *res)
{
    struct replica *r = arg;

    r->sampling = 0;
    if (st != DB_OK || PQntuples(res) != 1 || db_null(res, 0, 0))
        return;
    r->latest.sent_ns = r->sampling_sent_ns;
    r->latest.lsn = db_int8(res, 0, 0);
    keep(r, r->latest);
}

/*
 * How far behind the standbys are, in time: the newest sample at or below
 * fence was sent at t, so they have every write the primary had at t, and
 * now - t bounds their lag to within a sample's spacing.  When even the
 * oldest sample kept is past fence, the lag is at least its age (a bound
 * from below: more than about max_lag).  -1 when unknown.
 */
static int64_t
lag_ns(const struct replica *r, int64_t fence, int64_t now)
{
    if (fence < 0 || r->latest.sent_ns == 0)
        return -1;
    if (fence == INT64_MAX || r->latest.lsn <= fence)
        return fence == INT64_MAX ? 0 : now - r->latest.sent_ns;
    for (int i = 1; i <= r->n; i++) {
        const struct sample *s = &r->ring[(r->next + RING - i) % RING];
        if (s->lsn <= fence || i == r->n)
            return now - s->sent_ns;
    }
    return now - r->latest.sent_ns;
}

/* The standbys' state, for /metrics: a few relaxed stores into the worker's own slot. */
static void
publish(const struct replica *r, int64_t fence, int64_t now)
{
    int64_t ns = lag_ns(r, fence, now), bytes = -1;

    if (ns >= 0)
        bytes = fence == INT64_MAX || r->latest.lsn <= fence ? 0 : r->latest.lsn - fence;
    atomic_store_explicit(&r->slot->standby_lag_us, ns < 0 ? -1 : ns / 1000, memory_order_relaxed);
    atomic_store_explicit(&r->slot->standby_lag_bytes, bytes, memory_order_relaxed);
    atomic_store_explicit(&r->slot->standby_skipped, r->state != STANDBYS_USED,
                          memory_order_relaxed);
}

static void
say_skipped(struct replica *r, int64_t fence)
{
    scoreboard_add(&r->slot->c.standby_skips, 1);
    if (fence < 0)
        log_warning("standbys skipped: no standby connection is up; reads go to the primary");
    else
        log_warning("standbys skipped: replayed up to %X/%X, behind what the primary had "
                    "written %d ms ago (db_read_max_lag); reads go to the primary until they "
                    "catch up",
                    (unsigned)((uint64_t)fence >> 32), (unsigned)fence,
                    (int)(r->max_lag_ns / 1000000));
}

/* Every REPLICA_SAMPLE_MS: a sample of the primary, and the standbys' state for the log. */
static void
on_tick(evutil_socket_t fd, short what, void *arg)
{
    struct replica *r = arg;
    int64_t now = clock_now_ns();
    int64_t fence = db_pool_fence(r->read), need = lag_need(r, now);
    int usable = need >= 0 && fence >= need;

    (void)fd;
    (void)what;
    if (!r->sampling) {
        r->sampling = 1;
        r->sampling_sent_ns = now;
        db_query(r->primary, SQL_WAL_INSERT_LSN, NULL, on_sample, r, NULL);
    }
    if (usable && r->state != STANDBYS_USED) {
        if (r->state == STANDBYS_SKIPPED)
            log_notice("standbys back: within db_read_max_lag of the primary; reads go to them "
                       "again");
        else
            log_info("standbys in use: reads go to them");
        r->state = STANDBYS_USED;
    } else if (!usable && r->state == STANDBYS_USED) {
        say_skipped(r, fence);
        r->state = STANDBYS_SKIPPED;
    } else if (!usable && r->state == STANDBYS_STARTING &&
               now - r->started_ns > r->max_lag_ns + 1000000000) {
        /* Connecting takes a moment: only a start that never got there is news. */
        say_skipped(r, fence);
        r->state = STANDBYS_SKIPPED;
    }
    publish(r, fence, now);
}

struct replica *
replica_new(struct event_base *base, const struct config *cfg, const char *options,
            struct db_pool *primary, struct lastwrite *writes, struct worker_slot *slot)
{
    struct replica *r = calloc(1, sizeof(*r));
    struct timeval tv = {0, REPLICA_SAMPLE_MS * 1000};

    if (!r)
        return NULL;
    r->primary = primary;
    r->writes = writes;
    r->slot = slot;
    r->max_lag_ns = (int64_t)cfg->db_read_max_lag * 1000000;
    r->step_ns = r->max_lag_ns / (RING - 16);
    r->started_ns = clock_now_ns();
    r->read = db_read_pool_new(base, cfg->db_read, options, cfg->pool, cfg->pool_queue,
                               cfg->queue_timeout, REPLICA_SAMPLE_MS, primary, slot);
    if (r->read)
        db_pool_standing(r->read, cfg->queue_standing_timeout);
    r->tick = event_new(base, -1, EV_PERSIST, on_tick, r);
    if (!r->read || !r->tick || event_add(r->tick, &tv) < 0) {
        replica_free(r);
        return NULL;
    }
    return r;
}

void
replica_free(struct replica *r)
{
    if (!r)
        return;
    if (r->tick)
        event_free(r->tick);
    db_pool_free(r->read);
    free(r);
}

void
replica_query(struct replica *r, int64_t user, enum sql_query_id q, const char *const *params,
              db_cb cb, void *arg, db_wanted wanted)
{
    int64_t need = lag_need(r, clock_now_ns()), mine = need;
    int64_t fence = db_pool_fence(r->read);
    enum scoreboard_read why;

    if (need >= 0 && user > 0) {
        int64_t wrote = lastwrite_get(r->writes, user);
        /*
         * A sample sent after the write was answered is at or past its
         * commit; none yet (within a sample's time of the write): the
         * primary answers.
         */
        if (wrote > 0) {
            int64_t since = wrote == INT64_MAX ? -1 : sample_since(r, wrote + 1);
            mine = since < 0 ? -1 : since > need ? since : need;
        }
    }
    /* The first reason that holds, in this order, is the one /metrics counts. */
    why = need < 0                   ? SB_READ_NO_SAMPLE
          : fence < 0                ? SB_READ_NO_STANDBY
          : fence < need             ? SB_READ_LAG
          : mine < 0 || fence < mine ? SB_READ_OWN_WRITE
                                     : SB_READ_STANDBY;
    if (why != SB_READ_STANDBY) {
        log_debug("read %s of user %lld: primary (needs %llX, standbys at %llX)",
                  sql_queries[q].name, (long long)user, (long long)mine, (long long)fence);
        scoreboard_add(&r->slot->c.reads[why], 1);
        db_query(r->primary, q, params, cb, arg, wanted);
        return;
    }
    /* Counted by the read pool: answered there, or passed on to the primary. */
    db_query_fenced(r->read, q, params, cb, arg, wanted, mine);
}
