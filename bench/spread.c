/*
 * spread: see spread.h.
 */
#include "config.h"

#include "bench/spread.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int
cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;

    return (a > b) - (a < b);
}

double
spread_median(const double *x, int n)
{
    double s[SPREAD_MAX * 2];

    if (n <= 0)
        return 0;
    if (n > SPREAD_MAX * 2)
        n = SPREAD_MAX * 2;
    memcpy(s, x, (size_t)n * sizeof(*s));
    qsort(s, (size_t)n, sizeof(*s), cmp_double);
    return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

void
spread_range(const double *x, int n, double *lo, double *hi)
{
    *lo = *hi = n > 0 ? x[0] : 0;
    for (int i = 1; i < n; i++) {
        if (x[i] < *lo)
            *lo = x[i];
        if (x[i] > *hi)
            *hi = x[i];
    }
}

/* Mid ranks (1-based) of the pooled values, in the order given. */
static void
ranks(const double *v, int n, double *rank)
{
    for (int i = 0; i < n; i++) {
        int below = 0, equal = 0;

        for (int j = 0; j < n; j++) {
            below += v[j] < v[i];
            equal += v[j] == v[i];
        }
        rank[i] = below + (equal + 1) / 2.0;
    }
}

/*
 * Counts the subsets of size k of rank[from..n) that, added to sum,
 * reach a rank sum at least as far from mean as dev; total counts all.
 */
static void
walk(const double *rank, int n, int from, int k, double sum, double mean, double dev, double *hits,
     double *total)
{
    if (k == 0) {
        *total += 1;
        if (fabs(sum - mean) >= dev - 1e-9)
            *hits += 1;
        return;
    }
    for (int i = from; i <= n - k; i++)
        walk(rank, n, i + 1, k - 1, sum + rank[i], mean, dev, hits, total);
}

double
spread_mann_whitney_p(const double *a, int na, const double *b, int nb)
{
    double v[SPREAD_MAX * 2], rank[SPREAD_MAX * 2], ra = 0, hits = 0, total = 0;
    int n = na + nb;

    if (na <= 0 || nb <= 0 || na > SPREAD_MAX || nb > SPREAD_MAX)
        return 1;
    memcpy(v, a, (size_t)na * sizeof(*v));
    memcpy(v + na, b, (size_t)nb * sizeof(*v));
    ranks(v, n, rank);
    for (int i = 0; i < na; i++)
        ra += rank[i];
    /* U = ra - na(na+1)/2, so U's distance from its mean is ra's. */
    walk(rank, n, 0, na, 0, na * (n + 1) / 2.0, fabs(ra - na * (n + 1) / 2.0), &hits, &total);
    return total > 0 ? hits / total : 1;
}

int
spread_compare(const double *a, int na, const double *b, int nb)
{
    double alo, ahi, blo, bhi;

    if (na <= 0 || nb <= 0)
        return 0;
    spread_range(a, na, &alo, &ahi);
    spread_range(b, nb, &blo, &bhi);
    if (alo > bhi)
        return 1;
    if (blo > ahi)
        return -1;
    if (spread_mann_whitney_p(a, na, b, nb) < SPREAD_ALPHA)
        return spread_median(a, na) > spread_median(b, nb) ? 1 : -1;
    return 0;
}

int
spread_disturbed(double other_s, double busy_s, double load_before, double own_load, int cores,
                 double max_other_pct, char *why, size_t cap)
{
    double other_pct = busy_s > 0 ? other_s * 100 / busy_s : 0;

    why[0] = '\0';
    if (max_other_pct < 0)
        return 0;
    if (other_pct > max_other_pct) {
        snprintf(why, cap, "other processes used %.0f %% of the busy CPU (bound %.0f %%)",
                 other_pct, max_other_pct);
        return 1;
    }
    if (load_before - own_load > cores) {
        snprintf(why, cap,
                 "load average %.2f before it began, %.2f of it not ours, above the %d cores",
                 load_before, load_before - own_load, cores);
        return 1;
    }
    return 0;
}
