/*
 * matrix: the configurations `experiment` plays, from four lists: cores
 * (the server's and PostgreSQL's), workers per instance (1,n,2n+1 with n
 * the cores of that configuration), instances (behind nginx when more
 * than one) and cache (off, on).  A configuration that two items of the
 * workers list name alike (1 and n on one core) is played once, and keeps
 * both names, so the 1-to-2-cores comparison can still find its twin.
 *
 * Pure logic: no I/O, so the expansion and the time estimate are unit
 * tested (t/unit/test_bench_matrix.c).
 */
#ifndef CONDUIT_BENCH_MATRIX_H
#define CONDUIT_BENCH_MATRIX_H

#include <stddef.h>

#define MATRIX_MAX 64
#define MATRIX_MAX_WORKERS 16 /* items of a workers list */

struct matrix_config {
    int cores;      /* the server's and PostgreSQL's; the generator gets the rest, if any */
    int workers;    /* per instance */
    int instances;  /* nginx least_conn in front when > 1 */
    int cache;      /* conduitd --cache: 0 off, 1 on */
    char spec[32];  /* the workers items that gave this count: "1", "n", "1,n" */
    char label[48]; /* "c2 1x5 cache-on": cores, instances x workers, cache */
    char slug[48];  /* the label as a file name: "c2-1x5-cache-on" */
};

/*
 * Every combination, cores outermost, then workers, instances, cache (so
 * one configuration differs from the next in the innermost list only).
 * ncpu bounds --cores.  The count, or -1 with the flag and the reason in
 * err.
 */
int matrix_expand(const char *cores, const char *workers, const char *instances, const char *cache,
                  int ncpu, struct matrix_config *out, int max, char *err, size_t errlen);

/*
 * "1,n,2n+1" with n the core count: each item a number, "n", "Kn", "n+B"
 * or "Kn+B".  The count, or -1 on a bad item.
 */
int matrix_workers(const char *spec, int n, int *out, int max);

/* 1 when the configuration's spec lists item ("n" in "1,n"). */
int matrix_has_spec(const struct matrix_config *c, const char *item);

/*
 * The longest one configuration can take: start, warm-up, then a search
 * of at most max_levels levels plus the replay of the best (each a ramp,
 * a settle of at most settle_s and a hold), and the stop.
 */
double matrix_config_max_s(double ramp_s, double settle_s, double hold_s, double warmup_s,
                           int max_levels);

/*
 * The repeats and the hold that fit budget_s for nconfigs configurations,
 * each at most matrix_config_max_s(ramp_s, 1, hold, warmup_s, max_levels)
 * a repeat (the new users of each level logging in at once): the most
 * repeats up to max_repeat, and for them the longest hold of 5 min, 3 min,
 * 2 min, 1 min, 30, 20, 12, 8 or 5 s that fits; or the hold given, when
 * hold_given, and the repeats alone chosen.  0, or -1 when not even one
 * repeat at the shortest hold fits (*repeat and *hold_s then say the
 * smallest run).
 */
int matrix_fit_budget(double budget_s, int nconfigs, double ramp_s, double warmup_s, int max_levels,
                      int hold_given, int max_repeat, int *repeat, double *hold_s);

#endif
