/*
 * spread: what several repeats of one measurement say, and whether two
 * configurations differ.  One capacity search on a shared machine cannot
 * rank differences of 5 to 10 %, so experiment plays each configuration
 * K times and calls one better than another only when the repeats say so:
 * when its worst repeat beats the other's best (the ranges separate), or
 * when a two-sided Mann-Whitney test, exact over every assignment of the
 * pooled ranks, gives p under 5 % (which needs 4 repeats a side: with 3,
 * the smallest p is 2/20 = 10 %).
 *
 * Pure logic on arrays of doubles, so t/unit/test_bench_spread.c checks it
 * on made-up samples of known answers.
 */
#ifndef CONDUIT_BENCH_SPREAD_H
#define CONDUIT_BENCH_SPREAD_H

#include <stddef.h>

#define SPREAD_MAX 10 /* samples a side: the exact test enumerates C(2n, n), 184,756 at 10 */
#define SPREAD_ALPHA 0.05

/* The median of n values (the mean of the middle two when n is even); 0 when n is 0. */
double spread_median(const double *x, int n);

/* The smallest and the largest of n values (both 0 when n is 0). */
void spread_range(const double *x, int n, double *lo, double *hi);

/*
 * The two-sided p of the Mann-Whitney U test of a against b: the share of
 * the ways of splitting the pooled values into groups of na and nb whose
 * U is at least as far from its mean as the observed one (ties take mid
 * ranks).  1 when either side is empty or larger than SPREAD_MAX.
 */
double spread_mann_whitney_p(const double *a, int na, const double *b, int nb);

/*
 * 1 when a is larger than b (its smallest beats b's largest, or the test
 * says p < SPREAD_ALPHA with a's median above), -1 when b is larger, 0
 * when no difference is measured.  Two single values that differ are
 * separate ranges: the caller says that one repeat shows no spread.
 */
int spread_compare(const double *a, int na, const double *b, int nb);

/*
 * Whether a level was disturbed, and why (in why): the CPU no group of
 * ours used ("other") above max_other_pct of the machine's busy time, or
 * the 1-minute load average before the level began, less our own part
 * of it (own_load: the same 1-minute average kept for our threads
 * alone, bench.c), above the machine's cores.  max_other_pct < 0: never.  1 or 0.
 */
int spread_disturbed(double other_s, double busy_s, double load_before, double own_load, int cores,
                     double max_other_pct, char *why, size_t cap);

#endif
