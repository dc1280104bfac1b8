/*
 * exp_report: what `experiment` leaves in its folder for a reader:
 * report.md (how it was run, the findings paragraph, the tables of
 * capacity, memory, CPU and the 1-to-2-cores factor) and four charts
 * drawn by gnuplot, each with its .dat and .gp beside it: capacity.png
 * (users passed per configuration), memory.png (PSS stacked by group),
 * cpu.png (CPU shares stacked by group) and latency.png (p95 against
 * users, every level of every search), and reference.png (users per core
 * here against the published figures, bench/reference/).
 */
#ifndef CONDUIT_BENCH_EXP_REPORT_H
#define CONDUIT_BENCH_EXP_REPORT_H

#include <stddef.h>

#include "bench/bench.h"
#include "bench/findings.h"

struct exp_info {
    const char *command; /* as typed */
    double scale;
    const char *profile;
    const char *machine; /* cores, CPU model, kernel */
    double load_start, load_end;
    double hold_s, ramp_s, warmup_s;
    int max_levels, pool;
    const struct criteria *crit;
    const char *started; /* local time */
    double wall_s;
    double estimate_s;          /* said before the run (logins at once) */
    int repeat;                 /* searches per configuration */
    double budget_s;            /* --budget, or 0 */
    double disturbed_other_pct; /* the bound; < 0: the check was off */
    int disturbed_levels;       /* plays others disturbed, in all */
    int disturbed_configs;      /* configurations whose result stayed disturbed */
    int pin_failed;             /* configurations with a thread outside its cores */
    const char *reference;      /* --reference, or NULL: found (reference.h) */
};

/* DIR/report.md; 0 or -1 with errno. */
int exp_report_md(const char *dir, const struct exp_info *in, const struct exp_row *rows, int n);

/*
 * The four charts (the latency chart marks the p95 limit); 0, or -1 with
 * the first failure in err (the others are still tried).
 */
int exp_report_charts(const char *dir, const struct exp_info *in, const struct exp_row *rows, int n,
                      double p95_limit_ms, char *err, size_t errlen);

#endif
