/*
 * confrun: one configuration played from start to stop, what `compare`
 * and `experiment` both do for each of theirs: start the servers it names
 * (servers.h), account for them, check they hold the dataset, warm up,
 * search the capacity (search.h), let the last requests end, stop them.
 * When the configuration has cores, every thread of the servers and of
 * the generator is checked, each second of every hold, to run where it
 * was pinned (acct_set_pinning); a stray thread is the result's error.
 *
 * Ownership: the result owns its search's levels (confrun_free).
 */
#ifndef CONDUIT_BENCH_CONFRUN_H
#define CONDUIT_BENCH_CONFRUN_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "bench/bench.h"
#include "bench/options.h"
#include "bench/search.h"
#include "bench/servers.h"

struct confrun {
    char label[48];
    struct servers_cfg cfg; /* workers in all, instances, cores, cache */
    int ok;                 /* the search ran */
    int own_cores;          /* the generator has cores of its own (set by the caller) */
    int server_probes;      /* readiness requests servers.c sent its servers */
    double wall_s;          /* start to stop */
    struct search_result r;
    char err[512];
};

/*
 * The postmaster behind db (or --pg-pid, --pg-data), made b's PostgreSQL
 * accounting group; its pid, or 0 with a warning that it is neither
 * pinned nor accounted for.  *cost: the seeded users' bcrypt cost, or 0.
 */
pid_t confrun_postgres(struct bench *b, const struct options *o, const char *db, int *cost);

/* Plays w->cfg; PostgreSQL (pg, 0 if unknown) is pinned to its cores too. */
void confrun_play(struct bench *b, const struct options *o, pid_t pg, struct confrun *w);
void confrun_free(struct confrun *w);

/*
 * What compare's and experiment's reports say of every configuration:
 * its label, workers in all and per instance, instances, cores, pool, the
 * PostgreSQL connections it was given, reuseport, cache, the readiness
 * probes, its time and its error, if any.
 */
cJSON *confrun_json(const struct confrun *w);

/* The best pass's last play, or NULL when nothing passed. */
const struct level *confrun_best(const struct confrun *w);

/*
 * conduitd (--conduitd, beside this program, or in PATH) and the nginx
 * template (--nginx-template, installed, or in the source tree beside a
 * build), the latter checked only when need_nginx; -1 with a message.
 */
int confrun_tools(const struct options *o, int need_nginx, char *conduitd, char *tmpl, size_t cap);

/*
 * The generator (this process and its generator processes) on the cores
 * the servers do not use, when there are any; on every core otherwise.
 * Returns 1 when it has cores of its own.
 */
int confrun_pin_generator(const struct acct *a, int cores);

/* A share of the machine's busy time over a level: group g, or "other" (-1). */
double confrun_share(const struct acct_result *a, int g);

#endif
