/*
 * mode_compare: `compare --workers 1,n,2n+1`, the question the project
 * exists for.  For each configuration: start conduitd afresh (pinned with
 * PostgreSQL to --cores when asked; several masters behind nginx with
 * --instances), warm up, search the capacity, stop it.  Then a table, one
 * JSON report and a PNG chart.  The SQL ceiling (mode_ceiling.c) is
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
#include "bench/modes.h"
#include "bench/report.h"
#include "bench/search.h"
#include "bench/servers.h"

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

int
mode_compare(struct options *o)
{
    struct profile *prof;
    struct bench b;
    struct confrun rows[OPT_MAX_CONFIGS];
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
    for (int i = 0; i < o->nworkers; i++) {
        memset(&rows[i], 0, sizeof(rows[i]));
        rows[i].cfg = base;
        rows[i].cfg.workers = o->workers[i];
        rows[i].own_cores = own;
        snprintf(rows[i].label, sizeof(rows[i].label), "%dx%d", o->instances,
                 o->workers[i] / o->instances);
        confrun_play(&b, o, pg, &rows[i]);
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

        cJSON_AddItemToArray(configs, row_json(&rows[i], prof, ceiling));
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
    for (int i = 0; i < o->nworkers; i++)
        confrun_free(&rows[i]);
    bench_free(&b);
    profile_free(prof);
    return rc;
}
