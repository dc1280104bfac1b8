/*
 * mode_compare: `compare --workers 1,n,2n+1`, the question the project
 * exists for.  For each configuration: start conduitd afresh (pinned with
 * PostgreSQL to --cores when asked; several masters behind nginx with
 * --instances), warm up, search the capacity, stop it; --repeat times
 * (default 3), interleaved (1 n 2n+1, 1 n 2n+1).  Then a table of each
 * configuration's median repeat, the range of the repeats and what they
 * separate (spread.h), one JSON report and a PNG chart.  The SQL ceiling (mode_ceiling.c) is
 * measured first, with the connections the n-worker server would hold,
 * and every configuration's rate is given as a fraction of it.
 */
#include "config.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench/ceiling.h"
#include "bench/chart.h"
#include "bench/confrun.h"
#include "bench/findings.h"
#include "bench/modes.h"
#include "bench/report.h"
#include "bench/search.h"
#include "bench/servers.h"
#include "bench/spread.h"

#define MB (1024.0 * 1024.0)

static void
print_table(FILE *f, const struct confrun *rows, int n, const struct options *o, double ceiling)
{
    fprintf(f, "\n%-9s %7s %6s %8s %8s %8s %9s %9s %21s %8s %6s %8s\n", "config", "workers",
            "users", "req/s", "p95", "p99", "srv PSS", "pg PSS", "CPU srv/pg/gen/other %",
            "users/w", "pg cx", "ceiling");
    for (int i = 0; i < n; i++) {
        const struct level *l = confrun_best(&rows[i]);
        char shares[32], frac[16] = "-";

        if (!l) {
            fprintf(f, "%-9s %7d %6d  %s\n", rows[i].label, rows[i].cfg.workers,
                    rows[i].ok ? rows[i].r.users_pass : 0,
                    rows[i].err[0] ? rows[i].err : "nothing passed");
            continue;
        }
        if (ceiling > 0)
            snprintf(frac, sizeof(frac), "%.1f%%", l->rps * 100 / ceiling);
        snprintf(shares, sizeof(shares), "%.0f/%.0f/%.0f/%.0f", confrun_share(&l->acct, AG_SERVER),
                 confrun_share(&l->acct, AG_POSTGRES), confrun_share(&l->acct, AG_BENCH),
                 confrun_share(&l->acct, -1));
        fprintf(f, "%-9s %7d %6d %8.1f %7.1fms %7.1fms %8.1fM %8.1fM %21s %8.0f %6d %8s\n",
                rows[i].label, rows[i].cfg.workers, rows[i].r.users_pass, l->rps,
                (double)hist_percentile(&l->st->all, 95) / 1e3,
                (double)hist_percentile(&l->st->all, 99) / 1e3,
                (l->acct.pss_mean[AG_SERVER] + l->acct.pss_mean[AG_NGINX]) / MB,
                l->acct.pss_mean[AG_POSTGRES] / MB, shares,
                (double)rows[i].r.users_pass / rows[i].cfg.workers, l->acct.pg_backends_max, frac);
    }
    fprintf(f,
            "(pool %d per worker%s%s; cores: %s; hold %.0f s a level; CPU shares of the "
            "machine's busy time over the best pass's hold)\n",
            o->pool, o->reuseport ? ", reuseport" : "", o->instances > 1 ? ", behind nginx" : "",
            o->cores ? "pinned" : "all, shared with the load generator", o->hold_s);
}

static cJSON *
row_json(const struct confrun *w, const struct profile *p, double ceiling)
{
    cJSON *j = confrun_json(w);
    const struct level *l = confrun_best(w);

    if (!w->ok)
        return j;
    cJSON_AddNumberToObject(j, "users_passed", w->r.users_pass);
    cJSON_AddNumberToObject(j, "users_per_worker", (double)w->r.users_pass / w->cfg.workers);
    if (l) {
        cJSON_AddNumberToObject(j, "rps", l->rps);
        cJSON_AddNumberToObject(j, "fraction_of_ceiling", ceiling > 0 ? l->rps / ceiling : 0);
    }
    cJSON_AddItemToObject(j, "search", search_json(&w->r, p));
    return j;
}

/* The index in runs of configuration i's median repeat by users passed (the lower middle). */
static int
median_run(const struct confrun *runs, int n, int k, int i)
{
    struct exp_row reps[SPREAD_MAX], out;

    memset(reps, 0, sizeof(reps));
    for (int r = 0; r < k; r++)
        reps[r].users = runs[i + r * n].ok ? runs[i + r * n].r.users_pass : 0;
    return i + n * findings_merge(reps, k, &out);
}

/* The users passed by each repeat of configuration i. */
static int
users_of(const struct confrun *runs, int n, int k, int i, double *users)
{
    for (int r = 0; r < k; r++)
        users[r] = runs[i + r * n].ok ? runs[i + r * n].r.users_pass : 0;
    return k;
}

/* The range of every configuration, and the verdict on the one with the highest median. */
static void
print_repeats(FILE *f, const struct confrun *runs, int n, int k, const int *median)
{
    double u[SPREAD_MAX], v[SPREAD_MAX], lo, hi;
    int best = 0;

    if (k < 2)
        return;
    fprintf(f, "repeats (%d each, interleaved): users passed, median (lowest to highest):", k);
    for (int i = 0; i < n; i++) {
        users_of(runs, n, k, i, u);
        spread_range(u, k, &lo, &hi);
        fprintf(f, "%s %s %.0f (%.0f to %.0f)", i ? "," : "", runs[i].label, spread_median(u, k),
                lo, hi);
        if (runs[median[i]].r.users_pass > runs[median[best]].r.users_pass)
            best = i;
    }
    fprintf(f, "\n");
    users_of(runs, n, k, best, u);
    for (int i = 0; i < n; i++) {
        if (i == best)
            continue;
        users_of(runs, n, k, i, v);
        fprintf(f, "%s against %s: %s\n", runs[best].label, runs[i].label,
                spread_compare(u, k, v, k) > 0 ? "more users, a difference the repeats show"
                                               : "no difference measured (the repeats overlap)");
    }
}

int
mode_compare(struct options *o)
{
    struct profile *prof;
    struct bench b;
    struct confrun *runs, rows[OPT_MAX_CONFIGS];
    int median[OPT_MAX_CONFIGS], k = o->repeat, n_cfg = o->nworkers;
    char rdir[SPREAD_MAX][2100];
    struct servers_cfg base = {0};
    struct level ceil_l = {0};
    struct chart_row chart[OPT_MAX_CONFIGS];
    char conduitd[4096], tmpl[4096], dir[2048], abs[PATH_MAX], path[4096], json[4096],
        chart_base[4096], title[256], err[512];
    const char *db = o->db ? o->db : getenv("DATABASE_URL");
    int n = o->cores ? o->cores : (int)sysconf(_SC_NPROCESSORS_ONLN);
    double ceiling = 0;
    pid_t pg;
    cJSON *root, *configs;
    time_t t = time(NULL);
    struct tm tm;
    int rc = 0, cost = 0, own;

    if (confrun_tools(o, o->instances > 1, conduitd, tmpl, sizeof(tmpl)) < 0)
        return 2;
    localtime_r(&t, &tm);
    strftime(title, sizeof(title), "%Y%m%d-%H%M%S", &tm);
    snprintf(dir, sizeof(dir), "%s/compare-%s", o->out_dir, title);
    /* Absolute: nginx reads its files relative to its own prefix. */
    if (mkdir(dir, 0755) < 0 || !realpath(dir, abs)) {
        fprintf(stderr, "conduit-bench: cannot create %s\n", dir);
        return 2;
    }
    snprintf(dir, sizeof(dir), "%.2000s", abs);
    if (modes_setup(o, &prof, &b) < 0)
        return 2;
    pg = confrun_postgres(&b, o, db, &cost);
    own = confrun_pin_generator(&b.acct, o->cores);
    if (pg && o->cores)
        servers_pin(pg, o->cores);
    if (!o->no_ceiling) {
        fprintf(stderr, "==== the SQL ceiling: %d connections (n = %d workers x pool %d)\n",
                n * o->pool, n, o->pool);
        if (ceiling_measure(&b, db, n * o->pool, o->depth, 5, o->hold_s < 60 ? o->hold_s : 60,
                            &ceil_l) == 0) {
            ceiling = ceil_l.rps;
            fprintf(stderr, "ceiling: %.0f statements/s\n", ceiling);
        }
    }
    base.conduitd = conduitd;
    base.nginx = o->nginx;
    base.nginx_tmpl = tmpl;
    base.db = db;
    base.dir = dir;
    base.instances = o->instances;
    base.pool = o->pool;
    base.reuseport = o->reuseport;
    base.cache = o->cache;
    base.base_port = o->base_port;
    base.cores = o->cores;
    base.clients = o->b.max_users;
    runs = calloc((size_t)(n_cfg * k), sizeof(*runs));
    if (!runs) {
        fprintf(stderr, "conduit-bench: out of memory\n");
        bench_free(&b);
        profile_free(prof);
        return 2;
    }
    /* Interleaved: every configuration once, then again (drift hits all alike). */
    for (int p = 0; p < n_cfg * k; p++) {
        int i = p % n_cfg;

        runs[p].cfg = base;
        runs[p].cfg.workers = o->workers[i];
        runs[p].own_cores = own;
        snprintf(runs[p].label, sizeof(runs[p].label), "%dx%d", o->instances,
                 o->workers[i] / o->instances);
        if (k > 1)
            fprintf(stderr, "==== repeat %d of %d\n", p / n_cfg + 1, k);
        if (p >= n_cfg) {
            /* Each repeat's logs in a folder of its own: DIR/rN. */
            snprintf(rdir[p / n_cfg], sizeof(rdir[0]), "%s/r%d", dir, p / n_cfg + 1);
            mkdir(rdir[p / n_cfg], 0755);
            runs[p].cfg.dir = rdir[p / n_cfg];
        }
        confrun_play(&b, o, pg, &runs[p]);
    }
    /* The table and the chart show each configuration's median repeat. */
    for (int i = 0; i < n_cfg; i++) {
        median[i] = median_run(runs, n_cfg, k, i);
        rows[i] = runs[median[i]];
    }
    if (pg && o->cores)
        servers_pin(pg, 0);

    printf("conduit-bench compare: %s worker(s), scale %g, profile %s\n",
           o->workers_spec ? o->workers_spec : "1,n,2n+1", b.ds.scale, prof->name);
    report_machine_text(stdout, &b);
    if (ceiling > 0)
        printf("SQL ceiling: %.0f statements/s with %d connections (PostgreSQL %.0f %% of the "
               "busy CPU)\n",
               ceiling, n * o->pool, confrun_share(&ceil_l.acct, AG_POSTGRES));
    print_table(stdout, rows, o->nworkers, o, ceiling);
    print_repeats(stdout, runs, n_cfg, k, median);
    printf("(logins verify the seeded users' bcrypt hash, cost %d)\n", cost);

    root = modes_json_header(o, &b);
    cJSON_AddNumberToObject(cJSON_GetObjectItem(root, "load"), "seeded_bcrypt_cost", cost);
    if (ceiling > 0) {
        cJSON *cj = report_level_json(&ceil_l, prof);

        cJSON_AddNumberToObject(cj, "ceiling_rps", ceiling);
        cJSON_AddItemToObject(root, "ceiling", cj);
    }
    modes_json_totals(root, &b);
    configs = cJSON_AddArrayToObject(root, "configurations");
    for (int i = 0; i < o->nworkers; i++) {
        const struct level *l = confrun_best(&rows[i]);

        cJSON *j = row_json(&rows[i], prof, ceiling), *reps;

        cJSON_AddNumberToObject(j, "median_repeat", median[i] / n_cfg + 1);
        reps = cJSON_AddArrayToObject(j, "repeats");
        for (int r = 0; r < k; r++)
            cJSON_AddItemToArray(reps, row_json(&runs[i + r * n_cfg], prof, ceiling));
        cJSON_AddItemToArray(configs, j);
        chart[i].label = rows[i].label;
        chart[i].users = rows[i].ok ? rows[i].r.users_pass : 0;
        chart[i].server_pss_mb =
            l ? (l->acct.pss_mean[AG_SERVER] + l->acct.pss_mean[AG_NGINX]) / MB : 0;
        chart[i].pg_pss_mb = l ? l->acct.pss_mean[AG_POSTGRES] / MB : 0;
    }
    snprintf(chart_base, sizeof(chart_base), "%s/compare", dir);
    snprintf(title, sizeof(title), "conduitd users passed and PSS, scale %g, pool %d, %s",
             b.ds.scale, o->pool,
             o->cores ? "pinned cores" : "all cores shared with the generator");
    if (chart_draw(chart_base, title, chart, o->nworkers, err, sizeof(err)) < 0)
        fprintf(stderr, "conduit-bench: chart: %s\n", err);
    else
        printf("chart: %s.png\n", chart_base);
    cJSON_AddStringToObject(root, "chart", chart_base);
    if (!o->json) {
        snprintf(json, sizeof(json), "%s/compare.json", dir);
        o->json = json;
    }
    if (modes_write_json(o, root, path, sizeof(path)) < 0)
        rc = 2;
    cJSON_Delete(root);
    level_free(&ceil_l);
    for (int p = 0; p < n_cfg * k; p++)
        confrun_free(&runs[p]);
    free(runs);
    bench_free(&b);
    profile_free(prof);
    return rc;
}
