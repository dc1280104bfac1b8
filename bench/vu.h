/*
 * vu: the virtual users (docs/workload.md, "Virtual user").  Each one opens a
 * session on its own keep-alive connection (the profile's session_start:
 * log in, read the user), then plays pages drawn by weight, one request
 * after another, with an exponential think time between pages, until its
 * session ends (the profile's length, times a uniform factor from 0.5 to
 * 1.5 so that sessions do not end together); then it closes the
 * connection and starts again as another user.
 *
 * Names come from the dataset's scheme (common/dataset.h): a user logs in
 * as a seeded user with the seeded password, and reads seeded articles,
 * users and tags, all computed from (scale, seed).
 *
 * The engine reports every finished request and every finished page
 * through the callbacks; it keeps no statistics itself.
 *
 * Ownership: the engine owns its users and their connections; vu_free
 * closes them all.
 */
#ifndef CONDUIT_BENCH_VU_H
#define CONDUIT_BENCH_VU_H

#include <stdint.h>

#include "bench/conn.h"
#include "bench/profile.h"
#include "common/dataset.h"

struct vu_engine;

struct vu_hooks {
    /* A request ended; r->err is CONN_ESTATUS for an unexpected status. */
    void (*request)(void *arg, int endpoint, const struct conn_result *r);
    /* A page (or a session start) ended after nreq requests, in page_us. */
    void (*page)(void *arg, int nreq, int64_t page_us);
    void *arg;
};

struct vu_engine *vu_new(struct conn_ctx *cc, const struct profile *prof, const struct dataset *ds,
                         const struct vu_hooks *hooks, uint64_t rng_seed);
void vu_free(struct vu_engine *e);

/*
 * Moves the number of users to target, linearly over ramp_s seconds.
 * Users beyond it stop once their request in flight (if any) ends.
 */
void vu_set_users(struct vu_engine *e, int target, double ramp_s);

/* Users started and not stopped; of them, those still in their session start. */
int vu_active(const struct vu_engine *e);
int vu_starting(const struct vu_engine *e);
/* Requests in flight (stopping users included). */
int vu_in_flight(const struct vu_engine *e);
/* Whether a ramp is still adding users. */
int vu_ramping(const struct vu_engine *e);

/* Where {n} counts from: processes of one run use disjoint ranges. */
void vu_set_serial(struct vu_engine *e, uint64_t first);

#endif
