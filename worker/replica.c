/*
 * replica: which server answers a read.  See replica.h.
 */
#include "config.h"

#include "worker/replica.h"

#include <stdlib.h>

#include <event2/event.h>

#include "common/lastwrite.h"
#include "common/log.h"
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
    uint64_t reads_standby, reads_primary;
    int64_t lag_bytes;
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

static void
say_skipped(const struct replica *r, int64_t fence)
{
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
    int64_t now = lastwrite_now_ns();
    int64_t fence = db_pool_fence(r->read), need = lag_need(r, now);
    int usable = need >= 0 && fence >= need;

    (void)fd;
    (void)what;
    if (!r->sampling) {
        r->sampling = 1;
        r->sampling_sent_ns = now;
        db_query(r->primary, SQL_WAL_INSERT_LSN, NULL, on_sample, r, NULL);
    }
    r->lag_bytes = fence >= 0 && fence != INT64_MAX && r->latest.sent_ns
                       ? (r->latest.lsn > fence ? r->latest.lsn - fence : 0)
                       : -1;
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
}

struct replica *
replica_new(struct event_base *base, const struct config *cfg, struct db_pool *primary,
            struct lastwrite *writes)
{
    struct replica *r = calloc(1, sizeof(*r));
    struct timeval tv = {0, REPLICA_SAMPLE_MS * 1000};

    if (!r)
        return NULL;
    r->primary = primary;
    r->writes = writes;
    r->max_lag_ns = (int64_t)cfg->db_read_max_lag * 1000000;
    r->step_ns = r->max_lag_ns / (RING - 16);
    r->started_ns = lastwrite_now_ns();
    r->lag_bytes = -1;
    r->read = db_read_pool_new(base, cfg->db_read, cfg->pool, cfg->pool_queue, cfg->queue_timeout,
                               REPLICA_SAMPLE_MS, primary);
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
    int64_t need = lag_need(r, lastwrite_now_ns());

    if (need >= 0 && user > 0) {
        int64_t wrote = lastwrite_get(r->writes, user);
        /*
         * A sample sent after the write was answered is at or past its
         * commit; none yet (within a sample's time of the write): the
         * primary answers.
         */
        if (wrote > 0) {
            int64_t mine = wrote == INT64_MAX ? -1 : sample_since(r, wrote + 1);
            need = mine < 0 ? -1 : mine > need ? mine : need;
        }
    }
    if (need < 0 || db_pool_fence(r->read) < need) {
        log_debug("read %s of user %lld: primary (needs %llX, standbys at %llX)",
                  sql_queries[q].name, (long long)user, (long long)need,
                  (long long)db_pool_fence(r->read));
        r->reads_primary++;
        db_query(r->primary, q, params, cb, arg, wanted);
        return;
    }
    r->reads_standby++;
    db_query_fenced(r->read, q, params, cb, arg, wanted, need);
}

void
replica_wrote(struct replica *r, int64_t user)
{
    /* A slot older than max_lag (and a second) may go: the lag rule covers that write. */
    lastwrite_note(r->writes, user, lastwrite_now_ns(), r->max_lag_ns + 1000000000);
}

void
replica_stats(const struct replica *r, struct replica_stats *out)
{
    out->reads_standby = r->reads_standby;
    out->reads_primary = r->reads_primary;
    out->skipped = r->state != STANDBYS_USED;
    out->lag_bytes = r->lag_bytes;
}
