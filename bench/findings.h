/*
 * findings: what an experiment's numbers say, as the paragraph of
 * report.md: which configuration served the most users and by how much,
 * which worker count won, what an extra worker and an extra instance cost
 * in memory and gave in users, what the cache and a second core gave.
 * Every figure is computed from the rows; a sentence whose comparison the
 * matrix does not contain is left out.
 *
 * Pure logic on plain rows (no levels, no I/O but the FILE written to), so
 * t/unit/test_bench_findings.c checks it on rows it makes up.
 */
#ifndef CONDUIT_BENCH_FINDINGS_H
#define CONDUIT_BENCH_FINDINGS_H

#include <stdio.h>

#include "bench/acct.h"
#include "bench/matrix.h"
#include "bench/spread.h"

#define FINDINGS_MAX_LEVELS 64 /* search.h's SEARCH_MAX_LEVELS */

/*
 * One configuration's result, from its best pass (all zero when none);
 * after findings_merge, of its median repeat, with every repeat's figures
 * in the rep_ arrays.
 */
struct exp_row {
    struct matrix_config m;
    int ran;   /* the servers started and the search ran */
    int users; /* passed; 0 when nothing did */
    double rps, p50_ms, p95_ms, p99_ms, errors_pct;
    double pss_mb[AG_NGROUPS], rss_mb[AG_NGROUPS]; /* mean over the hold, by group */
    double cpu_pct[AG_NGROUPS], other_pct;         /* shares of the machine's busy time */
    double us_per_req[AG_NGROUPS];                 /* CPU per request (server, postgres, bench) */
    int pg_backends;                               /* PostgreSQL client backends, at most */
    const char *stopped;                           /* why its search ended (search.h), or NULL */
    int gen_own_cores;                             /* the generator had cores of its own */
    double wall_s;                                 /* start to stop */
    /* every level the search played, in order: the latency chart */
    int nlevels;
    int level_users[FINDINGS_MAX_LEVELS];
    double level_p95_ms[FINDINGS_MAX_LEVELS];
    int level_pass[FINDINGS_MAX_LEVELS];
    /* the repeats (findings_merge); nrep 0: one search, users alone */
    int nrep;
    double rep_users[SPREAD_MAX], rep_rps[SPREAD_MAX], rep_pss_mb[SPREAD_MAX];
    double rep_us[AG_NGROUPS][SPREAD_MAX]; /* CPU per request by group */
    int disturbed_levels;                  /* plays others disturbed, every repeat */
    int disturbed;  /* a repeat's result stayed disturbed: no conclusion drawn */
    int pin_failed; /* a thread ran outside its cores: no conclusion drawn */
};

/*
 * The k repeats of one configuration as one row: the median repeat's
 * figures (by users passed; of an even count, the lower middle), every
 * repeat's in the rep_ arrays, disturbed or failed pinning if any was.
 * Returns the median repeat's index.
 */
int findings_merge(const struct exp_row *reps, int k, struct exp_row *out);

/* Whether the findings draw conclusions from the row: it passed, undisturbed, pinned right. */
int findings_usable(const struct exp_row *r);

/*
 * 1 when a served more users than b in a way the repeats show (spread.h),
 * -1 when fewer, 0 when no difference is measured.
 */
int findings_compare(const struct exp_row *a, const struct exp_row *b);

/* The server side's PSS: conduitd and nginx. */
double findings_server_mb(const struct exp_row *r);

/* The row with the most users (ties: the smaller server PSS), or -1. */
int findings_winner(const struct exp_row *rows, int n);

/*
 * The row's twin on fewer cores (the most of them below its own): same
 * instances, cache and an item of the workers list in common, 1 and n
 * alike; or -1.
 */
int findings_twin(const struct exp_row *rows, int n, int i);

/* users(row) / users(its twin), or 0 when there is none or either passed nothing. */
double findings_scaling(const struct exp_row *rows, int n, int i);

/* The paragraph; returns the number of sentences written. */
int findings_write(FILE *f, const struct exp_row *rows, int n);

#endif
