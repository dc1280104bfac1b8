/*
 * confrun: see confrun.h.
 */
#include "config.h"

#include "bench/confrun.h"

#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bench/ceiling.h"
#include "bench/modes.h"
#include "common/clock.h"

#ifndef DATADIR
#define DATADIR "/usr/local/share/conduitd"
#endif

const struct level *
confrun_best(const struct confrun *w)
{
    return w->ok && w->r.best >= 0 ? &w->r.level[w->r.best] : NULL;
}

cJSON *
confrun_json(const struct confrun *w)
{
    const struct servers_cfg *c = &w->cfg;
    cJSON *j = cJSON_CreateObject();

    cJSON_AddStringToObject(j, "configuration", w->label);
    cJSON_AddNumberToObject(j, "workers", c->workers);
    cJSON_AddNumberToObject(j, "instances", c->instances);
    cJSON_AddNumberToObject(j, "workers_per_instance", c->workers / c->instances);
    cJSON_AddNumberToObject(j, "cores", c->cores);
    cJSON_AddNumberToObject(j, "pool", c->pool);
    cJSON_AddNumberToObject(j, "postgres_connections_configured", c->workers * c->pool);
    cJSON_AddBoolToObject(j, "reuseport", c->reuseport);
    cJSON_AddBoolToObject(j, "cache", c->cache);
    cJSON_AddNumberToObject(j, "server_probe_requests", w->server_probes);
    cJSON_AddNumberToObject(j, "wall_s", w->wall_s);
    if (w->err[0])
        cJSON_AddStringToObject(j, "error", w->err);
    return j;
}

double
confrun_share(const struct acct_result *a, int g)
{
    double busy = a->other_s;

    for (int i = 0; i < AG_NGROUPS; i++)
        busy += a->cpu_s[i];
    return busy > 0 ? (g < 0 ? a->other_s : a->cpu_s[g]) * 100 / busy : 0;
}

pid_t
confrun_postgres(struct bench *b, const struct options *o, const char *db, int *cost)
{
    pid_t pg = ceiling_db_facts(db, cost);

    if (o->pg_pid || o->pg_data)
        pg = o->pg_pid ? o->pg_pid : modes_pg_pid(o->pg_data);
    acct_clear_roots(&b->acct, AG_POSTGRES);
    if (pg)
        acct_add_root(&b->acct, AG_POSTGRES, pg);
    else
        fprintf(stderr, "conduit-bench: PostgreSQL's postmaster not found from the connection "
                        "string (give --pg-pid or --pg-data): it is neither pinned nor accounted "
                        "for\n");
    return pg;
}

int
confrun_pin_generator(const struct acct *a, int cores)
{
    long all = sysconf(_SC_NPROCESSORS_ONLN);
    int own = cores > 0 && cores < all;
    cpu_set_t set;

    CPU_ZERO(&set);
    for (long i = own ? cores : 0; i < all; i++)
        CPU_SET((int)i, &set);
    for (int i = 0; i < a->nroots[AG_BENCH]; i++)
        sched_setaffinity(a->root[AG_BENCH][i], sizeof(set), &set);
    return own;
}

int
confrun_tools(const struct options *o, int need_nginx, char *conduitd, char *tmpl, size_t cap)
{
    char exe[2048], dir[2048];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    const char *dirs[] = {dir, "/usr/local/sbin", "/usr/sbin", NULL};

    snprintf(dir, sizeof(dir), ".");
    if (n > 0) {
        exe[n] = '\0';
        *strrchr(exe, '/') = '\0';
        snprintf(dir, sizeof(dir), "%s", exe);
    }
    if (servers_find(o->conduitd ? o->conduitd : "conduitd", dirs, conduitd, cap) < 0) {
        fprintf(stderr, "conduit-bench: conduitd not found (--conduitd PATH)\n");
        return -1;
    }
    if (o->nginx_template)
        snprintf(tmpl, cap, "%s", o->nginx_template);
    else
        snprintf(tmpl, cap, "%s/nginx-upstream.conf.in", DATADIR);
    if (!o->nginx_template && access(tmpl, R_OK) < 0)
        snprintf(tmpl, cap, "%s/../etc/nginx-upstream.conf.in", dir);
    if (need_nginx && access(tmpl, R_OK) < 0) {
        fprintf(stderr, "conduit-bench: %s: not found (--nginx-template FILE)\n", tmpl);
        return -1;
    }
    return 0;
}

/*
 * The check that every thread ran where it was put during the holds: the
 * server side on the first cores, the generator on the others when it has
 * its own; cores 0 ends it.
 */
static void
pin_check(struct bench *b, int cores, int own)
{
    int all = (int)sysconf(_SC_NPROCESSORS_ONLN);

    acct_set_pinning(&b->acct, AG_SERVER, 0, cores);
    acct_set_pinning(&b->acct, AG_POSTGRES, 0, cores);
    acct_set_pinning(&b->acct, AG_NGINX, 0, cores);
    acct_set_pinning(&b->acct, AG_BENCH, own ? cores : 0, cores ? all : 0);
}

void
confrun_play(struct bench *b, const struct options *o, pid_t pg, struct confrun *w)
{
    const struct servers_cfg *c = &w->cfg;
    struct servers s;
    struct level warm;
    int64_t t0 = clock_now_us();

    if (pg && c->cores)
        servers_pin(pg, c->cores);
    fprintf(stderr, "==== %s: %d worker(s) in %d instance(s), pool %d%s%s\n", w->label, c->workers,
            c->instances, c->pool, c->cache ? ", cache on" : "", c->cores ? ", pinned" : "");
    if (servers_start(c, &s, w->err, sizeof(w->err)) < 0) {
        fprintf(stderr, "conduit-bench: %s\n", w->err);
        servers_stop(&s);
        w->wall_s = (double)(clock_now_us() - t0) / 1e6;
        return;
    }
    acct_clear_roots(&b->acct, AG_SERVER);
    acct_clear_roots(&b->acct, AG_NGINX);
    for (int k = 0; k < s.n; k++)
        acct_add_root(&b->acct, AG_SERVER, s.master[k]);
    if (s.nginx)
        acct_add_root(&b->acct, AG_NGINX, s.nginx);
    bench_set_target(b, s.target_port);
    if (modes_probe(o, b) < 0) {
        snprintf(w->err, sizeof(w->err), "the server does not hold the dataset (see above)");
        servers_stop(&s);
        w->wall_s = (double)(clock_now_us() - t0) / 1e6;
        return;
    }
    if (o->warmup_s > 0) {
        b->level_note = "warm-up";
        bench_level(b, o->start, o->ramp_s, o->settle_max_s, o->warmup_s, &warm);
        b->level_note = NULL;
        level_free(&warm);
    }
    pin_check(b, c->cores, w->own_cores);
    search_run(b, o, &w->r);
    pin_check(b, 0, 0);
    w->ok = 1;
    if (w->r.pin_stray)
        snprintf(w->err, sizeof(w->err), "pinning not as intended in %d level(s): %s",
                 w->r.pin_stray, w->r.pin_what);
    bench_drain(b, b->prof->timeout_s);
    search_print(stderr, &w->r);
    w->server_probes = s.probes;
    servers_stop(&s);
    w->wall_s = (double)(clock_now_us() - t0) / 1e6;
}

void
confrun_free(struct confrun *w)
{
    search_free(&w->r);
}
