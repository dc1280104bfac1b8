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
#include "bench/reference.h"
#include "bench/spread.h"
#include "bench/units.h"

/* The groups in the order the tables and the stacked charts show them. */
static const int groups[] = {AG_SERVER, AG_NGINX, AG_POSTGRES, AG_BENCH};
static const char *const group_title[] = {"conduitd", "nginx", "PostgreSQL", "generator"};
#define NGROUPS 4

/* The first lines: what a reader must know before any figure. */
static void
trust(FILE *f, const struct exp_info *in, const struct exp_row *rows, int n)
{
    char e[32], w[32];
    int any = 0;

    if (in->disturbed_other_pct < 0)
        fprintf(f, "**Disturbed levels: not checked** (--disturbed-other off): other processes "
                   "may have shared the machine unseen.\n\n");
    else
        fprintf(f,
                "**Disturbed levels: %d**; configurations whose result stayed disturbed: %d. A "
                "level is disturbed when other processes used more than %.0f %% of the busy CPU "
                "during its hold, or the load average not ours was above the cores as it began; it "
                "is played again after a pause, and if disturbed again, its configuration is "
                "named and no conclusion is drawn from it.\n\n",
                in->disturbed_levels, in->disturbed_configs, in->disturbed_other_pct);
    for (int i = 0; i < n; i++)
        if (rows[i].disturbed)
            fprintf(f, "%s%s", any++ ? ", " : "Disturbed, no conclusion drawn: ", rows[i].m.label);
    if (any)
        fprintf(f, ".\n\n");
    any = 0;
    for (int i = 0; i < n; i++)
        if (rows[i].pin_failed)
            fprintf(f, "%s%s",
                    any++ ? ", "
                          : "**Pinning failed** (a thread ran outside its cores: "
                            "see the JSON's pinning_stray): ",
                    rows[i].m.label);
    if (any)
        fprintf(f, ".\n\n");
    fprintf(f,
            "**Repeats**: %d search%s per configuration%s. **Time**: estimated %s before the "
            "run, took %s%s.\n\n",
            in->repeat, in->repeat == 1 ? "" : "es",
            in->repeat == 1 ? ": no spread was measured (--repeat 3 gives medians and ranges)"
                            : ", interleaved (every configuration once, then again), so drift "
                              "hits all alike",
            units_fmt_s(in->estimate_s, e, sizeof(e)), units_fmt_s(in->wall_s, w, sizeof(w)),
            in->budget_s > 0 ? " (--budget chose the repeats and the hold)" : "");
}

static void
header(FILE *f, const struct exp_info *in, const struct exp_row *rows, int n)
{
    fprintf(f, "# conduit-bench experiment, %s\n\n", in->started);
    trust(f, in, rows, n);
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

/* "MEDIAN (LO to HI)", or the one value when there is no spread. */
static void
med_range(FILE *f, const double *x, int k, int decimals)
{
    double lo, hi;

    spread_range(x, k, &lo, &hi);
    if (k < 2 || lo == hi) {
        fprintf(f, "%.*f", decimals, spread_median(x, k));
        return;
    }
    fprintf(f, "%.*f (%.*f to %.*f)", decimals, spread_median(x, k), decimals, lo, decimals, hi);
}

static void
repeats_table(FILE *f, const struct exp_row *rows, int n)
{
    fprintf(f, "## Repeats: median and range\n\n"
               "Every repeat's figures, from its best pass's last play: the median, and the range "
               "in brackets. The tables below are those of each configuration's median repeat "
               "(by users passed).\n\n"
               "| configuration | repeats | users passed | req/s | us/request conduitd + nginx | "
               "us/request PostgreSQL | us/request generator | server side PSS (MB) | disturbed "
               "levels | result |\n"
               "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
    for (int i = 0; i < n; i++) {
        const struct exp_row *r = &rows[i];
        int k = r->nrep;

        fprintf(f, "| %s | %d | ", r->m.label, k);
        med_range(f, r->rep_users, k, 0);
        fprintf(f, " | ");
        med_range(f, r->rep_rps, k, 0);
        fprintf(f, " | ");
        med_range(f, r->rep_us[AG_SERVER], k, 0);
        fprintf(f, " | ");
        med_range(f, r->rep_us[AG_POSTGRES], k, 0);
        fprintf(f, " | ");
        med_range(f, r->rep_us[AG_BENCH], k, 0);
        fprintf(f, " | ");
        med_range(f, r->rep_pss_mb, k, 1);
        fprintf(f, " | %d | %s |\n", r->disturbed_levels,
                r->disturbed    ? "disturbed: no conclusion"
                : r->pin_failed ? "pinning failed: no conclusion"
                                : "kept");
    }
    fprintf(f, "\n");
}

/* Users per core of every usable row: median, lowest and highest repeat. */
static void
per_core(const struct exp_row *r, double *med, double *lo, double *hi)
{
    if (r->nrep > 0) {
        spread_range(r->rep_users, r->nrep, lo, hi);
        *med = spread_median(r->rep_users, r->nrep);
    } else {
        *med = *lo = *hi = r->users;
    }
    *med /= r->m.cores;
    *lo /= r->m.cores;
    *hi /= r->m.cores;
}

static void
reference_section(FILE *f, const struct exp_info *in, const struct exp_row *rows, int n)
{
    struct reference ref;
    char dir[4096], err[512], a[32], b[32];

    reference_find(in->reference, dir, sizeof(dir));
    if (!dir[0] || reference_load(dir, &ref, err, sizeof(err)) < 0) {
        fprintf(f,
                "## Beside the reference\n\nThe published figures were not found (%s): "
                "--reference DIR names the folder of bench/reference/.\n\n",
                dir[0] ? err : "no reference folder installed or in the source tree");
        return;
    }
    fprintf(f, "## Beside the reference\n\n"
               "The published experiment this project answers (bench/reference/README.md), as "
               "printed, and this machine's configurations per core.\n\n"
               "| stack | vCPU | users passed | users per vCPU | req/s | app memory |\n"
               "| --- | --- | --- | --- | --- | --- |\n");
    for (int i = 0; i < ref.nstack; i++) {
        const struct reference_stack *s = &ref.stack[i];

        fprintf(f, "| %s | %d | %s | %s | ", s->name, s->vcpu,
                units_fmt_thousands(s->users, a, sizeof(a)),
                units_fmt_thousands(s->users / s->vcpu, b, sizeof(b)));
        if (s->rps > 0)
            fprintf(f, "~%s", units_fmt_thousands(s->rps, a, sizeof(a)));
        fprintf(f, " | ");
        if (s->mem_mb >= 1000)
            fprintf(f, "~%.1f GB", s->mem_mb / 1000);
        else if (s->mem_mb > 0)
            fprintf(f, "~%.0f MB", s->mem_mb);
        fprintf(f, " |\n");
    }
    fprintf(f,
            "\nFrom %d to %d vCPU their users grew %.1f to %.1f times (%.0f to %.0f %% of "
            "linear); at %d vCPU they would be 8-vCPU users / %.1f to / %.1f (derived, not "
            "published per stack). The same %d cores spread over instances behind nginx:\n\n"
            "| layout | instances | workers each | req/s |\n| --- | --- | --- | --- |\n",
            ref.scale_from, ref.scale_to, ref.scale_lo, ref.scale_hi,
            ref.scale_lo * 100 / (ref.scale_to / ref.scale_from),
            ref.scale_hi * 100 / (ref.scale_to / ref.scale_from), ref.scale_from, ref.scale_hi,
            ref.scale_lo, ref.ninst ? ref.inst[0].cores : 0);
    for (int i = 0; i < ref.ninst; i++)
        fprintf(f, "| %s | %d | %d | %s |\n", ref.inst[i].layout, ref.inst[i].instances,
                ref.inst[i].workers, units_fmt_thousands(ref.inst[i].rps, a, sizeof(a)));
    fprintf(f, "\nHere (median and range of the repeats; disturbed configurations left out):\n\n"
               "| configuration | cores | users per core | server side PSS |\n"
               "| --- | --- | --- | --- |\n");
    for (int i = 0; i < n; i++) {
        double med, lo, hi;

        if (!findings_usable(&rows[i]))
            continue;
        per_core(&rows[i], &med, &lo, &hi);
        fprintf(f, "| %s | %d | %s", rows[i].m.label, rows[i].m.cores,
                units_fmt_thousands(med, a, sizeof(a)));
        if (lo < hi)
            fprintf(f, " (%s to %s)", units_fmt_thousands(lo, a, sizeof(a)),
                    units_fmt_thousands(hi, b, sizeof(b)));
        fprintf(f, " | %.1f MB |\n", findings_server_mb(&rows[i]));
    }
    fprintf(f,
            "\n![users per core here and in the reference](reference.png)\n\n"
            "**Caveats**: their vCPU are cloud hyperthreads, ours the cores named above; their "
            "load generator ran on another machine, ours on this one (on cores of its own when "
            "the configuration leaves any); their holds were 5 minutes, these %.0f s; their "
            "memory is the application's as they reported it, ours PSS of conduitd and nginx. "
            "The figures sit side by side; they are not one measurement.\n\n",
            in->hold_s);
}

int
exp_report_md(const char *dir, const struct exp_info *in, const struct exp_row *rows, int n)
{
    char path[4096];
    FILE *f;

    snprintf(path, sizeof(path), "%s/report.md", dir);
    if (!(f = fopen(path, "w")))
        return -1;
    header(f, in, rows, n);
    fprintf(f, "## Findings\n\n");
    findings_write(f, rows, n);
    fprintf(f, "\n");
    repeats_table(f, rows, n);
    capacity_table(f, rows, n);
    memory_table(f, rows, n);
    cpu_table(f, rows, n);
    scaling_table(f, rows, n);
    reference_section(f, in, rows, n);
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

/* Users per core: ours (median, range) against the reference's per vCPU. */
static int
reference_chart(const char *dir, const struct exp_info *in, const struct exp_row *rows, int n,
                char *err, size_t errlen)
{
    struct reference ref;
    char rdir[4096], dat[4096], gp[4096];
    FILE *f;

    reference_find(in->reference, rdir, sizeof(rdir));
    if (!rdir[0] || reference_load(rdir, &ref, err, errlen) < 0) {
        if (!rdir[0])
            snprintf(err, errlen, "reference.png: the reference folder was not found");
        return -1;
    }
    if (!(f = open_part(dir, "reference", "dat", dat, sizeof(dat), err, errlen)))
        return -1;
    fprintf(f, "# label users_per_core low high kind(1 here, 2 published, 3 derived)\n");
    for (int i = 0; i < n; i++) {
        double med, lo, hi;

        if (!findings_usable(&rows[i]))
            continue;
        per_core(&rows[i], &med, &lo, &hi);
        fprintf(f, "\"%s\" %.1f %.1f %.1f 1\n", rows[i].m.label, med, lo, hi);
    }
    for (int i = 0; i < ref.nstack; i++) {
        const struct reference_stack *s = &ref.stack[i];
        double per = s->users / s->vcpu;

        fprintf(f, "\"%.40s, %d vCPU\" %.1f %.1f %.1f 2\n", s->name, s->vcpu, per, per, per);
        if (s->vcpu == ref.scale_to && ref.scale_hi > 0) {
            double lo = s->users / ref.scale_hi, hi = s->users / ref.scale_lo;

            fprintf(f, "\"%.40s, %d vCPU (derived)\" %.1f %.1f %.1f 3\n", s->name, ref.scale_from,
                    (lo + hi) / 2, lo, hi);
        }
    }
    fclose(f);
    if (!(f = open_part(dir, "reference", "gp", gp, sizeof(gp), err, errlen)))
        return -1;
    gp_head(f, "reference",
            "Users passed per core: here (median, range of the repeats) and published (per vCPU)");
    fprintf(f,
            "set ylabel 'users per core'\nset yrange [0:*]\nset style fill solid 0.7 border -1\n"
            "set boxwidth 0.6\nset offsets 0.5, 0.5, 0, 0\nset bmargin 14\n"
            "plot '%s' using 0:($5 == 1 ? $2 : 1/0):xtic(1) with boxes lc rgb '#1f77b4' "
            "title 'here', \\\n"
            "     '' using 0:($5 == 2 ? $2 : 1/0) with boxes lc rgb '#999999' "
            "title 'published', \\\n"
            "     '' using 0:($5 == 3 ? $2 : 1/0) with boxes lc rgb '#dddddd' "
            "title 'derived from the published 1-to-8 scaling', \\\n"
            "     '' using 0:2:3:4 with yerrorbars lc rgb 'black' pt 0 notitle\n",
            base_name(dat));
    fclose(f);
    return chart_run(gp, dat, err, errlen);
}

int
exp_report_charts(const char *dir, const struct exp_info *in, const struct exp_row *rows, int n,
                  double p95_limit_ms, char *err, size_t errlen)
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
    if (reference_chart(dir, in, rows, n, e, sizeof(e)) < 0 && !rc++)
        snprintf(err, errlen, "%s", e);
    return rc ? -1 : 0;
}
