/*
 * chart: the comparison as a PNG, drawn by gnuplot (Debian's gnuplot-nox):
 * users passed for each configuration as bars, conduitd's and PostgreSQL's
 * PSS as lines on the right axis.  The data and the script are kept beside
 * the picture, so it can be redrawn or restyled by hand.  experiment's
 * charts (exp_report.c) run gnuplot through chart_run too.
 */
#ifndef CONDUIT_BENCH_CHART_H
#define CONDUIT_BENCH_CHART_H

#include <stddef.h>

struct chart_row {
    const char *label;
    double users;
    double server_pss_mb, pg_pss_mb;
};

/* Runs gnuplot on the script gp (its data in data, named in the error); 0 or -1. */
int chart_run(const char *gp, const char *data, char *err, size_t errlen);

/* Writes base.dat, base.gp and runs gnuplot for base.png; 0 or -1 (err). */
int chart_draw(const char *base, const char *title, const struct chart_row *rows, int n, char *err,
               size_t errlen);

#endif
