/*
 * mode_experiment: the reference experiment in one command.  Every
 * configuration of the matrix (matrix.h: cores x workers x instances x
 * cache) is started afresh, searched for its capacity and stopped, one
 * after the other, --repeat times, interleaved (A B C, A B C: drift hits
 * all alike); then one folder holds report.md with its findings and
 * charts (exp_report.h), experiment.json with every level of every search,
 * and levels/SLUG.json (SLUG-rN.json for repeat N) per configuration,
 * written as soon as that search ends so an interrupted run keeps what it
 * measured.  --budget chooses the repeats and the hold before the run.
 *
 * A first INT or TERM ends the search in progress after its level; the
 * servers are stopped and the report is written for what was measured.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench/confrun.h"
#include "bench/exp_report.h"
#include "bench/findings.h"
#include "bench/modes.h"
#include "bench/report.h"
#include "bench/spread.h"
#include "bench/units.h"
#include "common/clock.h"

#define MB (1024.0 * 1024.0)

/* What a signal sets: bench.stop points here. */
static volatile sig_atomic_t interrupted;

static void
on_signal(int sig)
{
    (void)sig;
    interrupted = 1;
}

/* The progress line's state: where in the matrix, and since when. */
struct progress {
    const struct options *o;
    int k;         /* the search being played, from 0 (repeat x configurations + configuration) */
    int nplays;    /* configurations x repeats */
    int level;     /* levels begun in it */
    int64_t t0_us; /* the run's start */
    double done_s; /* the finished configurations' time */
    double per_cfg_s; /* the estimate for one, until one has finished */
};

static double
elapsed_s(const struct progress *p)
{
    return (double)(clock_now_us() - p->t0_us) / 1e6;
}

/* The time still to come: the mean configuration so far, or the estimate. */
static double
left_s(const struct progress *p)
{
    double per = p->k ? p->done_s / p->k : p->per_cfg_s;
    double in_this = elapsed_s(p) - p->done_s;
    double rest = (p->nplays - p->k) * per - in_this;

    return rest > 0 ? rest : 0;
}

static void
on_level(void *arg, int users, const char *note)
{
    struct progress *p = arg;
    char what[32], u[32], l[32], rep[32] = "";

    if (p->o->repeat > 1)
        snprintf(rep, sizeof(rep), " repeat %d/%d", p->k / p->o->nmatrix + 1, p->o->repeat);
    if (note)
        snprintf(what, sizeof(what), "%s", note);
    else
        snprintf(what, sizeof(what), "level %d", ++p->level);
    fprintf(stderr, "[%d/%d %s%s] %s: %d users; elapsed %s, about %s left\n", p->k + 1, p->nplays,
            p->o->matrix[p->k % p->o->nmatrix].label, rep, what, users,
            units_fmt_s(elapsed_s(p), u, sizeof(u)), units_fmt_s(left_s(p), l, sizeof(l)));
}

/* The row the report and the findings read, from the best pass. */
static void
row_of(const struct confrun *w, const struct matrix_config *m, int own, struct exp_row *r)
{
    const struct level *l = confrun_best(w);

    memset(r, 0, sizeof(*r));
    r->m = *m;
    r->ran = w->ok;
    r->gen_own_cores = own;
    r->wall_s = w->wall_s;
    r->stopped = w->ok ? w->r.stopped : NULL;
    r->disturbed_levels = w->r.disturbed_levels;
    r->disturbed = w->r.disturbed;
    r->pin_failed = w->r.pin_stray > 0;
    for (int i = 0; i < w->r.nlevels && i < FINDINGS_MAX_LEVELS; i++) {
        const struct level *x = &w->r.level[i];

        r->level_users[i] = x->users;
        r->level_p95_ms[i] = (double)hist_percentile(&x->st->all, 95) / 1e3;
        r->level_pass[i] = x->pass;
        r->nlevels++;
    }
    if (!l)
        return;
    r->users = w->r.users_pass;
    r->rps = l->rps;
    r->p50_ms = (double)hist_percentile(&l->st->all, 50) / 1e3;
    r->p95_ms = (double)hist_percentile(&l->st->all, 95) / 1e3;
    r->p99_ms = (double)hist_percentile(&l->st->all, 99) / 1e3;
    r->errors_pct =
        l->st->requests ? (double)stats_errors(l->st) * 100 / (double)l->st->requests : 0;
    for (int g = 0; g < AG_NGROUPS; g++) {
        r->pss_mb[g] = l->acct.pss_mean[g] / MB;
        r->rss_mb[g] = l->acct.rss_mean[g] / MB;
        r->cpu_pct[g] = confrun_share(&l->acct, g);
    }
    r->other_pct = confrun_share(&l->acct, -1);
    r->us_per_req[AG_SERVER] = l->server_us_per_req;
    r->us_per_req[AG_POSTGRES] = l->pg_us_per_req;
    r->us_per_req[AG_BENCH] = l->gen_us_per_req;
    r->pg_backends = l->acct.pg_backends_max;
}

static cJSON *
row_json(const struct confrun *w, const struct exp_row *r, const struct profile *p)
{
    cJSON *j = confrun_json(w);

    cJSON_AddStringToObject(j, "slug", r->m.slug);
    cJSON_AddStringToObject(j, "workers_spec", r->m.spec);
    cJSON_AddStringToObject(j, "generator", r->gen_own_cores ? "own cores" : "shared cores");
    if (!w->ok)
        return j;
    cJSON_AddBoolToObject(j, "disturbed", r->disturbed);
    cJSON_AddNumberToObject(j, "disturbed_levels", r->disturbed_levels);
    cJSON_AddBoolToObject(j, "pinning_ok", !r->pin_failed);
    cJSON_AddNumberToObject(j, "users_passed", r->users);
    cJSON_AddNumberToObject(j, "users_per_core", (double)r->users / r->m.cores);
    if (r->users) {
        cJSON *s = cJSON_AddObjectToObject(j, "best");

        cJSON_AddNumberToObject(s, "rps", r->rps);
        cJSON_AddNumberToObject(s, "p50_ms", r->p50_ms);
        cJSON_AddNumberToObject(s, "p95_ms", r->p95_ms);
        cJSON_AddNumberToObject(s, "p99_ms", r->p99_ms);
        cJSON_AddNumberToObject(s, "error_pct", r->errors_pct);
        cJSON_AddNumberToObject(s, "server_side_pss_mb", findings_server_mb(r));
        cJSON_AddNumberToObject(s, "postgres_connections", r->pg_backends);
    }
    cJSON_AddItemToObject(j, "search", search_json(&w->r, p));
    return j;
}

/* "SLUG" for the first repeat, "SLUG-rN" for repeat N: files and folders. */
static void
play_name(const struct exp_row *r, int rep, char *out, size_t cap)
{
    if (rep)
        snprintf(out, cap, "%s-r%d", r->m.slug, rep + 1);
    else
        snprintf(out, cap, "%s", r->m.slug);
}

/* DIR/levels/NAME.json: one search, as soon as it has ended. */
static void
write_levels(const char *dir, const struct exp_row *r, int rep, cJSON *j)
{
    char path[4096], name[64];

    play_name(r, rep, name, sizeof(name));
    snprintf(path, sizeof(path), "%s/levels/%s.json", dir, name);
    if (report_write(path, j) < 0)
        fprintf(stderr, "conduit-bench: cannot write %s: %s\n", path, strerror(errno));
}

/* Refuses before anything is written: what the matrix needs must be here. */
static int
check_tools(const struct options *o, char *conduitd, char *tmpl, size_t cap)
{
    char nginx[4096];
    int need_nginx = 0;

    for (int i = 0; i < o->nmatrix; i++)
        need_nginx |= o->matrix[i].instances > 1;
    if (confrun_tools(o, need_nginx, conduitd, tmpl, cap) < 0)
        return -1;
    if (need_nginx &&
        servers_find(o->nginx ? o->nginx : "nginx", (const char *const[]){"/usr/sbin", NULL}, nginx,
                     sizeof(nginx)) < 0) {
        fprintf(stderr, "conduit-bench: the matrix has several instances, which need nginx: not "
                        "found (apt-get install nginx-light, or --nginx PATH)\n");
        return -1;
    }
    if (servers_find("gnuplot", NULL, nginx, sizeof(nginx)) < 0)
        fprintf(stderr, "conduit-bench: gnuplot not found (apt-get install gnuplot-nox): the "
                        "report will have no charts\n");
    return 0;
}

static void
command_line(const struct options *o, char *out, size_t cap)
{
    size_t len = 0;

    out[0] = '\0';
    for (int i = 0; i < o->argc && len + 4 < cap; i++) {
        const char *a = o->argv[i];
        int quote = !*a || strpbrk(a, " \t\"'$;&|<>*?") != NULL;

        len += (size_t)snprintf(out + len, cap - len, "%s%s%s%s", i ? " " : "", quote ? "'" : "",
                                i ? a : "conduit-bench", quote ? "'" : "");
    }
}

/* --budget: the repeats and the hold that fit, said; -1 when nothing fits. */
static int
fit_budget(struct options *o)
{
    char b[32], h[32], e[32];
    int rc = matrix_fit_budget(o->budget_s, o->nmatrix, o->ramp_s, o->warmup_s, o->max_levels,
                               o->set_hold, o->repeat, &o->repeat, &o->hold_s);
    double est = o->repeat * o->nmatrix *
                 matrix_config_max_s(o->ramp_s, 1, o->hold_s, o->warmup_s, o->max_levels);

    units_fmt_s(o->budget_s, b, sizeof(b));
    units_fmt_s(o->hold_s, h, sizeof(h));
    units_fmt_s(est, e, sizeof(e));
    if (rc < 0) {
        fprintf(stderr,
                "conduit-bench: --budget %s: too short for %d configurations: one repeat at "
                "%s holds takes about %s (fewer configurations, --max-levels, or a longer "
                "budget)\n",
                b, o->nmatrix, h, e);
        return -1;
    }
    fprintf(stderr, "budget %s: chose %d repeat%s of %s holds%s (about %s)\n", b, o->repeat,
            o->repeat == 1 ? "" : "s", h, o->set_hold ? " (as given)" : "", e);
    return 0;
}

int
mode_experiment(struct options *o)
{
    struct profile *prof;
    struct bench b;
    struct confrun *runs;
    struct exp_row *rows, *reprows;
    struct servers_cfg base = {0};
    struct progress pr = {0};
    struct exp_info in = {0};
    char conduitd[4096], tmpl[4096], dir[2048], abs[PATH_MAX], path[4096], started[64],
        command[4096], machine[512], err[512], u[32], l[32];
    const char *db = o->db ? o->db : getenv("DATABASE_URL");
    cJSON *root, *configs;
    time_t t = time(NULL);
    struct tm tm;
    pid_t pg;
    int cost = 0, rc = 0, played = 0, nconf, *median;

    if (check_tools(o, conduitd, tmpl, sizeof(tmpl)) < 0)
        return 2;
    if (o->budget_s > 0 && fit_budget(o) < 0)
        return 2;
    localtime_r(&t, &tm);
    strftime(started, sizeof(started), "%Y%m%d-%H%M%S", &tm);
    snprintf(dir, sizeof(dir), "%s/experiment-%s", o->out_dir, started);
    /* Absolute: nginx reads its files relative to its own prefix. */
    if (mkdir(dir, 0755) < 0 || !realpath(dir, abs)) {
        fprintf(stderr, "conduit-bench: cannot create %s: %s\n", dir, strerror(errno));
        return 2;
    }
    snprintf(dir, sizeof(dir), "%.2000s", abs);
    snprintf(path, sizeof(path), "%s/levels", dir);
    mkdir(path, 0755);
    if (modes_setup(o, &prof, &b) < 0)
        return 2;
    runs = calloc((size_t)(o->nmatrix * o->repeat), sizeof(*runs));
    reprows = calloc((size_t)(o->nmatrix * o->repeat), sizeof(*reprows));
    rows = calloc((size_t)o->nmatrix, sizeof(*rows));
    median = calloc((size_t)o->nmatrix, sizeof(*median));
    pg = confrun_postgres(&b, o, db, &cost);
    base.conduitd = conduitd;
    base.nginx = o->nginx;
    base.nginx_tmpl = tmpl;
    base.db = db;
    base.pool = o->pool;
    base.reuseport = o->reuseport;
    base.base_port = o->base_port;
    base.clients = o->b.max_users;

    pr.o = o;
    pr.nplays = o->nmatrix * o->repeat;
    pr.t0_us = clock_now_us();
    /*
     * The settle after a ramp (the new users' logins) is what varies: a
     * second when the server keeps up, up to --settle-max when it does not.
     */
    pr.per_cfg_s = matrix_config_max_s(o->ramp_s, 1, o->hold_s, o->warmup_s, o->max_levels);
    in.estimate_s = pr.per_cfg_s * pr.nplays;
    fprintf(stderr,
            "experiment: %d configurations x %d repeat%s into %s; each at most %d levels plus a "
            "replay, hold %.0f s%s: about %s in all if the new users of each level log in at "
            "once, up to %s if every level waits --settle-max for them (the estimate is updated "
            "as each search ends; a disturbed level adds a pause and a replay)\n",
            o->nmatrix, o->repeat, o->repeat == 1 ? "" : "s", dir, o->max_levels, o->hold_s,
            o->hold_s < 300 ? " (short: a sketch; --hold 5m for docs/workload.md's holds)" : "",
            units_fmt_s(in.estimate_s, u, sizeof(u)),
            units_fmt_s(matrix_config_max_s(o->ramp_s, o->settle_max_s, o->hold_s, o->warmup_s,
                                            o->max_levels) *
                            pr.nplays,
                        l, sizeof(l)));
    b.level_begin = on_level;
    b.level_arg = &pr;
    b.stop = &interrupted;
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);

    /* Interleaved: every configuration once, then again (drift hits all alike). */
    for (int k = 0; k < pr.nplays && !interrupted; k++) {
        int rep = k / o->nmatrix, c = k % o->nmatrix;
        const struct matrix_config *m = &o->matrix[c];
        struct confrun *w = &runs[k];
        double t1 = elapsed_s(&pr);
        char name[64];
        cJSON *j;

        pr.k = k;
        pr.level = 0;
        snprintf(w->label, sizeof(w->label), "%s", m->label);
        w->cfg = base;
        w->cfg.workers = m->workers * m->instances;
        w->cfg.instances = m->instances;
        w->cfg.cores = m->cores;
        w->cfg.cache = m->cache;
        reprows[k].m = *m;
        play_name(&reprows[k], rep, name, sizeof(name));
        snprintf(path, sizeof(path), "%s/%s", dir, name);
        mkdir(path, 0755);
        w->cfg.dir = path;
        w->own_cores = confrun_pin_generator(&b.acct, m->cores);
        confrun_play(&b, o, pg, w);
        row_of(w, m, w->own_cores, &reprows[k]);
        j = row_json(w, &reprows[k], prof);
        write_levels(dir, &reprows[k], rep, j);
        cJSON_Delete(j);
        pr.done_s += elapsed_s(&pr) - t1;
        played++;
    }
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    if (pg)
        servers_pin(pg, 0);
    confrun_pin_generator(&b.acct, 0);
    /* A configuration with a search played is reported, from the repeats it had. */
    nconf = played < o->nmatrix ? played : o->nmatrix;
    for (int c = 0; c < nconf; c++) {
        struct exp_row reps[SPREAD_MAX];
        int k = 0;

        for (int i = c; i < played; i += o->nmatrix)
            reps[k++] = reprows[i];
        median[c] = c + o->nmatrix * findings_merge(reps, k, &rows[c]);
        in.disturbed_levels += rows[c].disturbed_levels;
        in.disturbed_configs += rows[c].disturbed;
        in.pin_failed += rows[c].pin_failed;
    }
    if (interrupted)
        fprintf(stderr,
                "conduit-bench: interrupted: the report covers the %d search(es) played, of %d "
                "configuration(s)\n",
                played, nconf);

    in.command = command;
    command_line(o, command, sizeof(command));
    in.scale = b.ds.scale;
    in.profile = prof->name;
    report_machine_line(machine, sizeof(machine));
    in.machine = machine;
    in.load_start = b.load_start;
    in.load_end = acct_loadavg(b.loadavg_path);
    in.hold_s = o->hold_s;
    in.ramp_s = o->ramp_s;
    in.warmup_s = o->warmup_s;
    in.max_levels = o->max_levels;
    in.repeat = o->repeat;
    in.budget_s = o->budget_s;
    in.disturbed_other_pct = o->disturbed_other_pct;
    in.reference = o->reference_dir;
    in.pool = o->pool;
    in.crit = &b.crit;
    strftime(started, sizeof(started), "%Y-%m-%d %H:%M", &tm);
    in.started = started;
    in.wall_s = elapsed_s(&pr);

    root = modes_json_header(o, &b);
    cJSON_AddNumberToObject(cJSON_GetObjectItem(root, "load"), "seeded_bcrypt_cost", cost);
    cJSON_AddStringToObject(root, "command", command);
    cJSON_AddNumberToObject(root, "wall_s", in.wall_s);
    cJSON_AddBoolToObject(root, "interrupted", interrupted != 0);
    cJSON_AddNumberToObject(root, "estimate_s", in.estimate_s);
    cJSON_AddNumberToObject(root, "repeat", o->repeat);
    if (o->budget_s > 0)
        cJSON_AddNumberToObject(root, "budget_s", o->budget_s);
    cJSON_AddNumberToObject(root, "disturbed_other_pct", o->disturbed_other_pct);
    cJSON_AddNumberToObject(root, "disturbed_levels", in.disturbed_levels);
    cJSON_AddNumberToObject(root, "disturbed_configurations", in.disturbed_configs);
    modes_json_totals(root, &b);
    configs = cJSON_AddArrayToObject(root, "configurations");
    for (int c = 0; c < nconf; c++) {
        /* The median repeat's search, the figures of every repeat beside it. */
        cJSON *j = row_json(&runs[median[c]], &rows[c], prof), *reps;

        cJSON_AddNumberToObject(j, "repeats_played", rows[c].nrep);
        cJSON_AddNumberToObject(j, "median_repeat", median[c] / o->nmatrix + 1);
        cJSON_AddBoolToObject(j, "disturbed", rows[c].disturbed);
        cJSON_ReplaceItemInObject(j, "disturbed_levels",
                                  cJSON_CreateNumber(rows[c].disturbed_levels));
        reps = cJSON_AddArrayToObject(j, "repeats");
        for (int i = c; i < played; i += o->nmatrix)
            cJSON_AddItemToArray(reps, row_json(&runs[i], &reprows[i], prof));
        cJSON_AddItemToArray(configs, j);
    }
    snprintf(path, sizeof(path), "%s/experiment.json", dir);
    if (!o->json)
        o->json = path;
    if (modes_write_json(o, root, abs, sizeof(abs)) < 0)
        rc = 2;
    cJSON_Delete(root);
    if (exp_report_md(dir, &in, rows, nconf) < 0) {
        fprintf(stderr, "conduit-bench: cannot write %s/report.md: %s\n", dir, strerror(errno));
        rc = 2;
    } else {
        printf("report: %s/report.md\n", dir);
    }
    if (exp_report_charts(dir, &in, rows, nconf, b.crit.p95_ms, err, sizeof(err)) < 0)
        fprintf(stderr, "conduit-bench: charts: %s\n", err);
    else
        printf("charts: %s/{capacity,memory,cpu,latency,reference}.png\n", dir);
    printf("\n");
    findings_write(stdout, rows, nconf);
    for (int k = 0; k < played; k++) {
        if (!runs[k].ok || runs[k].r.pin_stray)
            rc = rc ? rc : 1;
        confrun_free(&runs[k]);
    }
    free(runs);
    free(reprows);
    free(rows);
    free(median);
    bench_free(&b);
    profile_free(prof);
    return rc ? rc : (interrupted ? 1 : 0);
}
