/*
 * replica: reads on standbys (db_read) without losing read-your-writes.
 * See docs/design.md, "Reads on standbys".
 *
 * A worker with db_read has a second pool, to the standbys (db.h,
 * db_read_pool_new), whose connections each know how far their server had
 * replayed the primary's WAL when last probed (their fence).  This module
 * samples the primary's WAL insert position every REPLICA_SAMPLE_MS and
 * decides, for each read-only statement, the fence it needs:
 *
 *   - lag: the position the primary had max_lag ago (the oldest sample
 *     sent no earlier than max_lag ago), so whatever any reader gets from a
 *     standby misses no write committed more than max_lag ago;
 *   - the caller's own writes: the table of recent writers in the shared
 *     page (common/lastwrite.h; api_wrote() notes each write before its
 *     answer goes out) says when the caller last wrote, on any worker; the first sample sent after
 * that moment is at or past that write's commit, so the read needs it.  Until there is such a
 * sample, the read goes to the primary.
 *
 * A read no standby connection can serve, or that fails there, is run on
 * the primary.  The log says once when the standbys start being skipped
 * (they lag past max_lag, or none is up) and once when they are used again;
 * /metrics counts where each read ran and why, and shows the standby
 * connections, the workers skipping them and the lag (metrics.h).
 */
#ifndef CONDUITD_REPLICA_H
#define CONDUITD_REPLICA_H

#include <stdint.h>

#include "worker/db.h"

struct config;
struct event_base;
struct lastwrite;
struct replica;
struct worker_slot;

#define REPLICA_SAMPLE_MS 20 /* the primary's position, and each standby connection's probe */

/*
 * options: libpq's "options" for its sessions (as db_read_pool_new takes
 * them).  NULL without memory.  primary must outlive it.  Where each read ran, the
 * standbys' connections, lag and state go to slot (/metrics, metrics.h).
 */
struct replica *replica_new(struct event_base *base, const struct config *cfg, const char *options,
                            struct db_pool *primary, struct lastwrite *writes,
                            struct worker_slot *slot);
void replica_free(struct replica *r);

/*
 * A read-only statement for user (0: anonymous): on a standby that has
 * what it needs, else the primary.  wanted as for db_query().
 */
void replica_query(struct replica *r, int64_t user, enum sql_query_id q, const char *const *params,
                   db_cb cb, void *arg, db_wanted wanted);

#endif
