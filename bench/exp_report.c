/*
 * exp_report: see exp_report.h.
 */
#include "config.h"

#include "bench/exp_report.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/chart.h"
#include "bench/units.h"

/* The groups in the order the tables and the stacked charts show them. */
static const int groups[] = {AG_SERVER, AG_NGINX, AG_POSTGRES, AG_BENCH};
static const char *const group_title[] = {"conduitd", "nginx", "PostgreSQL", "generator"};
#define NGROUPS 4

static void
header(FILE *f, const struct exp_info *in, int n)
{
    fprintf(f, "# conduit-bench experiment, %s\n\n", in->started);
    fprintf(f, "    %s\n\n", in->command);
    fprintf(f,
            "%d configurations in %.0f min. Machine: %s. Load average (1 min): %.2f when the run "
            "began, %.2f at its end; anything else running on the machine shows as \"other\" in "
            "the CPU table.\n\n",
            n, in->wall_s / 60, in->machine, in->load_start, in->load_end);
    fprintf(f,
            "**Layout**: one host, as in the reference experiment: the load generator, conduitd "
            "(nginx `least_conn` in front when there are several instances) and PostgreSQL. "
            "conduitd, nginx and PostgreSQL are pinned to the first C cores of each "
            "configuration (every thread, as `taskset -a` would); the generator runs on the "
            "other cores when there are any (\"own\" in the tables), else beside them "
            "(\"shared\"). Each instance runs the workers named; a second instance is a second "
            "master with as many workers, and its own pool of %d PostgreSQL connections per "
            "worker.\n\n",
            in->pool);
    fprintf(f,
            "**Holds**: %.0f s per level after a %.0f s ramp, a %.0f s warm-up per "
            "configuration, at most %d levels per search plus the replay of the best pass.%s\n\n",
            in->hold_s, in->ramp_s, in->warmup_s, in->max_levels,
            in->hold_s < 300 ? " **These are short holds: a sketch of the matrix, noisier than "
                               "the five-minute holds of docs/workload.md (`--hold 5m`), and a "
                               "level near the boundary may pass or fail by chance.**"
                             : "");
    fprintf(f,
            "**Passing** (docs/workload.md): p95 under %.0f ms, p99 under %.0f ms, errors under "
            "%.1f %%, the offered rate within Little's law, the generator under %.0f %% of a "
            "core. Dataset scale %g, profile %s.\n\n",
            in->crit->p95_ms, in->crit->p99_ms, in->crit->max_errors_pct, in->crit->gen_cpu_max_pct,
            in->scale, in->profile);
}

static void
capacity_table(FILE *f, const struct exp_row *rows, int n)
{
    char a[32], b[32];

    fprintf(f,
            "## Capacity\n\n"
            "| configuration | cores | instances x workers | cache | generator | users passed "
            "| users per core | req/s | p50 | p95 | p99 | errors | PostgreSQL connections | search "
            "ended |\n"
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- "
            "|\n");
    for (int i = 0; i < n; i++) {
        const struct exp_row *r = &rows[i];

        fprintf(f, "| %s | %d | %dx%d (%s) | %s | %s | ", r->m.label, r->m.cores, r->m.instances,
                r->m.workers, r->m.spec, r->m.cache ? "on" : "off",
                r->gen_own_cores ? "own" : "shared");
        if (!r->users) {
            fprintf(f, "%s | | | | | | | | %s |\n", r->ran ? "none" : "did not start",
                    r->stopped ? r->stopped : "");
            continue;
        }
        fprintf(f, "%s | %s | %.0f | %.1f ms | %.1f ms | %.1f ms | %.2f %% | %d | %s |\n",
                units_fmt_thousands(r->users, a, sizeof(a)),
                units_fmt_thousands((double)r->users / r->m.cores, b, sizeof(b)), r->rps, r->p50_ms,
                r->p95_ms, r->p99_ms, r->errors_pct, r->pg_backends, r->stopped ? r->stopped : "");
    }
    fprintf(f, "\nThe figures are those of the best pass's last play (every search replays its "
               "best level). PostgreSQL connections: client backends seen during that hold. A "
               "search that ended at --max-levels, or whose best pass failed when played "
               "again, gives a bound, not the capacity: see its levels in the JSON.\n\n");
}

static void
memory_table(FILE *f, const struct exp_row *rows, int n)
{
    fprintf(f, "## Memory\n\nPSS (proportional set size: a page shared by k processes counts 1/k "
               "in each), mean over the best pass's hold, MB; RSS beside it for comparison with "
               "other tools.\n\n"
               "| configuration | conduitd | nginx | PostgreSQL | generator | server side "
               "(conduitd + nginx) | RSS conduitd | RSS PostgreSQL |\n"
               "| --- | --- | --- | --- | --- | --- | --- | --- |\n");
    for (int i = 0; i < n; i++) {
        const struct exp_row *r = &rows[i];

        if (!r->users)
            continue;
        fprintf(f, "| %s | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f |\n", r->m.label,
                r->pss_mb[AG_SERVER], r->pss_mb[AG_NGINX], r->pss_mb[AG_POSTGRES],
                r->pss_mb[AG_BENCH], findings_server_mb(r), r->rss_mb[AG_SERVER],
                r->rss_mb[AG_POSTGRES]);
    }
    fprintf(f, "\n");
}

static void
cpu_table(FILE *f, const struct exp_row *rows, int n)
{
    fprintf(f, "## CPU\n\nShares of the machine's busy time over the best pass's hold (all "
               "cores), and CPU per request.\n\n"
               "| configuration | conduitd | nginx | PostgreSQL | generator | other | us/request "
               "conduitd + nginx | us/request PostgreSQL | us/request generator |\n"
               "| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
    for (int i = 0; i < n; i++) {
        const struct exp_row *r = &rows[i];

        if (!r->users)
            continue;
        fprintf(f,
                "| %s | %.0f %% | %.0f %% | %.0f %% | %.0f %% | %.0f %% | %.0f | %.0f | %.0f |\n",
                r->m.label, r->cpu_pct[AG_SERVER], r->cpu_pct[AG_NGINX], r->cpu_pct[AG_POSTGRES],
                r->cpu_pct[AG_BENCH], r->other_pct, r->us_per_req[AG_SERVER],
                r->us_per_req[AG_POSTGRES], r->us_per_req[AG_BENCH]);
    }
    fprintf(f, "\n");
}

static void
scaling_table(FILE *f, const struct exp_row *rows, int n)
{
    int any = 0;
    char a[32], b[32];

    for (int i = 0; i < n; i++) {
        double s = findings_scaling(rows, n, i);
        int twin = findings_twin(rows, n, i);

        if (s <= 0)
            continue;
        if (!any++)
            fprintf(f, "## From fewer cores to more\n\nEach configuration against its twin on "
                       "fewer cores (same instances, cache, and item of the workers list).\n\n"
                       "| configuration | twin | users | twin's users | factor |\n"
                       "| --- | --- | --- | --- | --- |\n");
        fprintf(f, "| %s | %s | %s | %s | %.2f |\n", rows[i].m.label, rows[twin].m.label,
                units_fmt_thousands(rows[i].users, a, sizeof(a)),
                units_fmt_thousands(rows[twin].users, b, sizeof(b)), s);
    }
    if (any)
        fprintf(f, "\n");
}

int
exp_report_md(const char *dir, const struct exp_info *in, const struct exp_row *rows, int n)
{
    char path[4096];
    FILE *f;

    snprintf(path, sizeof(path), "%s/report.md", dir);
    if (!(f = fopen(path, "w")))
        return -1;
    header(f, in, n);
    fprintf(f, "## Findings\n\n");
    findings_write(f, rows, n);
    fprintf(f, "\n");
    capacity_table(f, rows, n);
    memory_table(f, rows, n);
    cpu_table(f, rows, n);
    scaling_table(f, rows, n);
    fprintf(f, "## Charts\n\n"
               "![users passed per configuration](capacity.png)\n\n"
               "![PSS by group](memory.png)\n\n"
               "![CPU shares by group](cpu.png)\n\n"
               "![p95 against users, every level of every search](latency.png)\n\n"
               "Each chart's data and gnuplot script are beside it (`.dat`, `.gp`).\n\n"
               "## Files\n\n"
               "`experiment.json` holds everything above and every level of every search (latency "
               "by endpoint, errors, CPU and memory by group, Little's law); `levels/SLUG.json` "
               "the same for one configuration; `SLUG/` its conduitd (and nginx) logs and "
               "configuration.\n");
    return fclose(f);
}

/* The file name of a path: the scripts name their files relative to their folder. */
static const char *
base_name(const char *path)
{
    const char *slash = strrchr(path, '/');

    return slash ? slash + 1 : path;
}

/* Opens DIR/NAME.EXT for writing, its path in out; NULL with err. */
static FILE *
open_part(const char *dir, const char *name, const char *ext, char *out, size_t cap, char *err,
          size_t errlen)
{
    FILE *f;

    snprintf(out, cap, "%s/%s.%s", dir, name, ext);
    if (!(f = fopen(out, "w")))
        snprintf(err, errlen, "%s: %s", out, strerror(errno));
    return f;
}

/* What every chart's script starts with. */
static void
gp_head(FILE *f, const char *name, const char *title)
{
    fprintf(f,
            "set terminal pngcairo size 1200,640 font 'sans,10'\n"
            "set output '%s.png'\n"
            "set title \"%s\"\n"
            "set grid ytics\nset xtics rotate by -35\nset bmargin 8\n",
            name, title);
}

/* A stacked bar per configuration: the groups' values, or the capacity alone. */
static int
bars(const char *dir, const char *name, const char *title, const char *ylabel,
     const struct exp_row *rows, int n, int stacked_cpu, int capacity, char *err, size_t errlen)
{
    char dat[4096], gp[4096];
    FILE *f = open_part(dir, name, "dat", dat, sizeof(dat), err, errlen);

    if (!f)
        return -1;
    fprintf(f, "# configuration %s\n",
            capacity      ? "users_passed"
            : stacked_cpu ? "conduitd_pct nginx_pct postgres_pct generator_pct other_pct"
                          : "conduitd_mb nginx_mb postgres_mb generator_mb");
    for (int i = 0; i < n; i++) {
        const struct exp_row *r = &rows[i];

        fprintf(f, "\"%s\"", r->m.label);
        if (capacity) {
            fprintf(f, " %d\n", r->users);
            continue;
        }
        for (int g = 0; g < NGROUPS; g++)
            fprintf(f, " %.2f", r->users ? (stacked_cpu ? r->cpu_pct : r->pss_mb)[groups[g]] : 0);
        if (stacked_cpu)
            fprintf(f, " %.2f", r->users ? r->other_pct : 0);
        fprintf(f, "\n");
    }
    fclose(f);
    if (!(f = open_part(dir, name, "gp", gp, sizeof(gp), err, errlen)))
        return -1;
    gp_head(f, name, title);
    fprintf(f, "set ylabel '%s'\nset yrange [0:*]\nset style fill solid 0.7 border -1\n", ylabel);
    if (capacity) {
        fprintf(f,
                "set boxwidth 0.6\nset offsets 0.5, 0.5, 0, 0\nstats '%s' using 2 nooutput\n"
                "set yrange [0:STATS_max * 1.12 + 1]\n"
                "plot '%s' using 0:2:xtic(1) with boxes notitle, \\\n"
                "     '' using 0:2:(sprintf('%%d', $2)) with labels offset 0,0.7 notitle\n",
                base_name(dat), base_name(dat));
    } else {
        fprintf(f, "set style data histograms\nset style histogram rowstacked\n"
                   "set boxwidth 0.7\nset key outside right top\n");
        fprintf(f, "plot '%s' using 2:xtic(1) title '%s'", base_name(dat), group_title[0]);
        for (int g = 1; g < NGROUPS; g++)
            fprintf(f, ", \\\n     '' using %d title '%s'", g + 2, group_title[g]);
        if (stacked_cpu)
            fprintf(f, ", \\\n     '' using %d title 'other'", NGROUPS + 2);
        fprintf(f, "\n");
    }
    fclose(f);
    return chart_run(gp, dat, err, errlen);
}

/* p95 against users: one line per configuration, its levels by users. */
static int
latency(const char *dir, const struct exp_row *rows, int n, double p95_limit_ms, char *err,
        size_t errlen)
{
    char dat[4096], gp[4096];
    FILE *f = open_part(dir, "latency", "dat", dat, sizeof(dat), err, errlen);
    int blocks = 0;

    if (!f)
        return -1;
    fprintf(f, "# one block per configuration: users p95_ms passed (levels by users)\n");
    for (int i = 0; i < n; i++) {
        const struct exp_row *r = &rows[i];
        int order[FINDINGS_MAX_LEVELS];

        if (!r->nlevels)
            continue;
        for (int k = 0; k < r->nlevels; k++)
            order[k] = k;
        for (int k = 1; k < r->nlevels; k++) /* a few levels: insertion sort */
            for (int j = k; j > 0 && r->level_users[order[j - 1]] > r->level_users[order[j]]; j--) {
                int t = order[j];

                order[j] = order[j - 1];
                order[j - 1] = t;
            }
        fprintf(f, "%susers \"%s\" passed\n", blocks ? "\n\n" : "", r->m.label);
        for (int k = 0; k < r->nlevels; k++)
            fprintf(f, "%d %.2f %d\n", r->level_users[order[k]], r->level_p95_ms[order[k]],
                    r->level_pass[order[k]]);
        blocks++;
    }
    fclose(f);
    if (!(f = open_part(dir, "latency", "gp", gp, sizeof(gp), err, errlen)))
        return -1;
    gp_head(f, "latency", "p95 latency against users, every level of every search");
    fprintf(f, "set xtics norotate\nset bmargin\nset xlabel 'users'\nset ylabel 'p95 (ms, log "
               "scale)'\nset logscale y\nset key outside right top\n");
    /* The limit as a function: autoscaling keeps it in sight. */
    if (blocks)
        fprintf(f,
                "plot for [i=0:%d] '%s' index i using 1:2 with linespoints pt 7 ps 0.7 "
                "title columnheader(2), \\\n     %g with lines dt 2 lc rgb 'red' title 'p95 "
                "limit'\n",
                blocks - 1, base_name(dat), p95_limit_ms);
    else
        fprintf(f,
                "set label 'no level was played' at graph 0.4, graph 0.5\n"
                "plot [0:1] %g with lines dt 2 lc rgb 'red' title 'p95 limit'\n",
                p95_limit_ms);
    fclose(f);
    return chart_run(gp, dat, err, errlen);
}

int
exp_report_charts(const char *dir, const struct exp_row *rows, int n, double p95_limit_ms,
                  char *err, size_t errlen)
{
    int rc = 0;
    char e[512];

    err[0] = '\0';
    if (bars(dir, "capacity", "Users passed per configuration (cores, instances x workers, cache)",
             "users passed", rows, n, 0, 1, e, sizeof(e)) < 0 &&
        !rc++)
        snprintf(err, errlen, "%s", e);
    if (bars(dir, "memory", "PSS by group over the best pass's hold", "MB", rows, n, 0, 0, e,
             sizeof(e)) < 0 &&
        !rc++)
        snprintf(err, errlen, "%s", e);
    if (bars(dir, "cpu", "CPU shares of the machine's busy time over the best pass's hold",
             "% of busy CPU", rows, n, 1, 0, e, sizeof(e)) < 0 &&
        !rc++)
        snprintf(err, errlen, "%s", e);
    if (latency(dir, rows, n, p95_limit_ms, e, sizeof(e)) < 0 && !rc++)
        snprintf(err, errlen, "%s", e);
    return rc ? -1 : 0;
}
