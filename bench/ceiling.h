/*
 * ceiling: the profile's SQL mix straight through libpq (see
 * mode_ceiling.c), for `ceiling` and for `compare`.
 */
#ifndef CONDUIT_BENCH_CEILING_H
#define CONDUIT_BENCH_CEILING_H

#include <sys/types.h>

#include "bench/bench.h"

/*
 * Runs the mix on nconns pipelined connections (depth statements in flight
 * each) for warmup_s, then measures duration_s into out (out->rps is the
 * statements per second).  Accounts the postmaster behind db as PostgreSQL.
 */
int ceiling_measure(struct bench *b, const char *db, int nconns, int depth, double warmup_s,
                    double duration_s, struct level *out);

/*
 * The postmaster behind a connection string (the parent of its backend),
 * or 0; and the bcrypt cost of the seeded users' hash (what every login
 * costs the server), or 0.
 */
pid_t ceiling_db_facts(const char *db, int *bcrypt_cost);

#endif
