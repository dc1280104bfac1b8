/*
 * report: see report.h.
 */
#include "config.h"

#include "bench/report.h"

#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "bench/units.h"

#define MB (1024.0 * 1024.0)

static const char *
fmt_pct(const struct hist *h, double p, char *buf, unsigned cap)
{
    return units_fmt_us((double)hist_percentile(h, p), buf, cap);
}

/* Which tolerance the Little's-law check applied (little.h). */
static const char *
little_rule(const struct level *l)
{
    return l->little_statistical ? "three standard errors of the expected count"
                                 : "the fixed floor";
}

/* The generator's CPU a request against the server side's (conduitd, nginx, PostgreSQL). */
static double
gen_share(const struct level *l)
{
    double side = l->server_us_per_req + l->pg_us_per_req;

    return side > 0 ? l->gen_us_per_req / side : 0;
}

void
report_level_text(FILE *f, const struct level *l, const struct profile *p)
{
    const struct stats *s = l->st;
    const struct acct_result *a = &l->acct;
    char b1[16], b2[16], b3[16], b4[16];
    double busy = 0;

    fprintf(f, "%s %d: %s%s\n", l->open_loop ? "connections" : "users", l->users,
            l->pass ? "PASS" : "FAIL: ", l->pass ? "" : l->why);
    fprintf(f,
            "  hold %.0f s (ramp %.0f s, settle %.1f s), %.0f users on average; at its end %ld "
            "connections open, %ld users logging in\n",
            a->wall_s, l->ramp_s, l->settle_s, l->users_mean, l->conns_open, l->users_starting);
    if (l->open_loop)
        fprintf(f, "  req/s %.1f (open loop, latency from the intended send time)\n", l->rps);
    else
        fprintf(f,
                "  req/s %.1f; Little's law %.1f (%+.1f %%): think %.2f s, page %.1f ms, "
                "%.2f req/page\n"
                "  tolerance %.1f %%: %s (%.0f pages expected over the hold)\n",
                l->rps, l->little_rps, l->little_dev_pct, l->think_s, l->page_s * 1e3,
                l->req_per_page, l->little_tol_pct, little_rule(l), l->little_pages);
    fprintf(f, "  latency p50 %s  p95 %s  p99 %s  max %s  (%llu responses)\n",
            fmt_pct(&s->all, 50, b1, sizeof(b1)), fmt_pct(&s->all, 95, b2, sizeof(b2)),
            fmt_pct(&s->all, 99, b3, sizeof(b3)),
            units_fmt_us((double)s->all.max_us, b4, sizeof(b4)), (unsigned long long)s->responses);
    fprintf(f,
            "  errors %llu of %llu (%.2f %%): connect %llu, timeout %llu, transport %llu, "
            "status %llu\n",
            (unsigned long long)stats_errors(s), (unsigned long long)s->requests,
            s->requests ? (double)stats_errors(s) * 100 / (double)s->requests : 0,
            (unsigned long long)s->err[CONN_ECONNECT], (unsigned long long)s->err[CONN_ETIMEOUT],
            (unsigned long long)s->err[CONN_ETRANSPORT], (unsigned long long)s->err[CONN_ESTATUS]);
    if (s->err[CONN_ESTATUS]) {
        fprintf(f, "  unexpected statuses:");
        for (int code = 0; code < 600; code++)
            if (s->bad_status[code])
                fprintf(f, " %d x %llu", code, (unsigned long long)s->bad_status[code]);
        fprintf(f, "\n");
    }
    fprintf(f, "  %-16s %9s %9s %9s %9s %9s %7s\n", "endpoint", "requests", "p50", "p95", "p99",
            "max", "errors");
    for (int i = 0; i < s->nep; i++) {
        const struct hist *h = &s->ep[i];
        uint64_t n = h->count + s->ep_err[i * CONN_NERR + CONN_ECONNECT] +
                     s->ep_err[i * CONN_NERR + CONN_ETIMEOUT] +
                     s->ep_err[i * CONN_NERR + CONN_ETRANSPORT];

        if (!n)
            continue;
        fprintf(f, "  %-16s %9llu %9s %9s %9s %9s %7llu\n", p->endpoint[i], (unsigned long long)n,
                fmt_pct(h, 50, b1, sizeof(b1)), fmt_pct(h, 95, b2, sizeof(b2)),
                fmt_pct(h, 99, b3, sizeof(b3)), units_fmt_us((double)h->max_us, b4, sizeof(b4)),
                (unsigned long long)stats_ep_errors(s, i));
    }
    for (int g = 0; g < AG_NGROUPS; g++)
        busy += a->cpu_s[g];
    busy += a->other_s;
    fprintf(f, "  CPU over the hold (%d cores, %.1f s busy of %.1f):", a->cores, busy,
            a->wall_s * a->cores);
    for (int g = 0; g < AG_NGROUPS; g++)
        if (a->cpu_s[g] > 0 || g != AG_NGINX)
            fprintf(f, " %s %.1f s (%.0f %%),", acct_group_names[g], a->cpu_s[g],
                    busy > 0 ? a->cpu_s[g] * 100 / busy : 0);
    fprintf(f, " other %.1f s (%.0f %%)\n", a->other_s, busy > 0 ? a->other_s * 100 / busy : 0);
    fprintf(f,
            "  CPU per request: generator %.0f us, server %.0f us (generator/server %.3f), "
            "postgres %.0f us (generator/(server + postgres) %.3f)\n",
            l->gen_us_per_req, l->server_us_per_req,
            l->server_us_per_req > 0 ? l->gen_us_per_req / l->server_us_per_req : 0,
            l->pg_us_per_req, gen_share(l));
    if (l->gen_procs > 1)
        fprintf(f,
                "  generator CPU %.0f %% of a core in all, %d processes, the busiest %.0f %% (its "
                "busiest second %.0f %%), besides %.2f s reading /proc for this accounting\n",
                l->gen_cpu_pct, l->gen_procs, l->gen_cpu_proc_max_pct, l->gen_cpu_peak_pct,
                a->overhead_s);
    else
        fprintf(f,
                "  generator CPU %.0f %% of a core (busiest second %.0f %%), besides %.2f s "
                "reading /proc for this accounting\n",
                l->gen_cpu_pct, l->gen_cpu_peak_pct, a->overhead_s);
    fprintf(f, "  memory, mean/max MB over %d samples:", a->mem_samples);
    for (int g = 0; g < AG_NGROUPS; g++)
        if (a->procs_max[g])
            fprintf(f, " %s PSS %.1f/%.1f RSS %.1f/%.1f (%d procs);", acct_group_names[g],
                    a->pss_mean[g] / MB, a->pss_max[g] / MB, a->rss_mean[g] / MB,
                    a->rss_max[g] / MB, a->procs_max[g]);
    fprintf(f, "\n");
    if (a->pg_backends_max)
        fprintf(f, "  PostgreSQL client connections: %d\n", a->pg_backends_max);
}

static cJSON *
hist_json(const struct hist *h)
{
    cJSON *o = cJSON_CreateObject();

    cJSON_AddNumberToObject(o, "count", (double)h->count);
    cJSON_AddNumberToObject(o, "mean_ms", hist_mean(h) / 1e3);
    cJSON_AddNumberToObject(o, "p50_ms", (double)hist_percentile(h, 50) / 1e3);
    cJSON_AddNumberToObject(o, "p90_ms", (double)hist_percentile(h, 90) / 1e3);
    cJSON_AddNumberToObject(o, "p95_ms", (double)hist_percentile(h, 95) / 1e3);
    cJSON_AddNumberToObject(o, "p99_ms", (double)hist_percentile(h, 99) / 1e3);
    cJSON_AddNumberToObject(o, "max_ms", (double)h->max_us / 1e3);
    return o;
}

static cJSON *
errors_json(const uint64_t *err)
{
    cJSON *o = cJSON_CreateObject();

    for (int k = CONN_ECONNECT; k < CONN_NERR; k++)
        cJSON_AddNumberToObject(o, conn_err_names[k], (double)err[k]);
    return o;
}

/* {"503": 12, ...}: the unexpected statuses seen. */
static cJSON *
statuses_json(const uint64_t *bad)
{
    cJSON *o = cJSON_CreateObject();
    char code[8];

    for (int c = 0; c < 600; c++) {
        if (!bad[c])
            continue;
        snprintf(code, sizeof(code), "%d", c);
        cJSON_AddNumberToObject(o, code, (double)bad[c]);
    }
    return o;
}

static cJSON *
groups_json(const double *v, double scale)
{
    cJSON *o = cJSON_CreateObject();

    for (int g = 0; g < AG_NGROUPS; g++)
        cJSON_AddNumberToObject(o, acct_group_names[g], v[g] / scale);
    return o;
}

static cJSON *
acct_json(const struct acct_result *a)
{
    cJSON *o = cJSON_CreateObject(), *cpu = groups_json(a->cpu_s, 1), *share;
    double busy = a->other_s, v[AG_NGROUPS];

    for (int g = 0; g < AG_NGROUPS; g++)
        busy += a->cpu_s[g];
    for (int g = 0; g < AG_NGROUPS; g++)
        v[g] = busy > 0 ? a->cpu_s[g] / busy : 0;
    share = groups_json(v, 1);
    cJSON_AddNumberToObject(cpu, "other", a->other_s);
    cJSON_AddNumberToObject(share, "other", busy > 0 ? a->other_s / busy : 0);
    cJSON_AddNumberToObject(o, "wall_s", a->wall_s);
    cJSON_AddNumberToObject(o, "cores", a->cores);
    cJSON_AddNumberToObject(o, "machine_busy_s", a->machine_busy_s);
    cJSON_AddItemToObject(o, "cpu_s", cpu);
    cJSON_AddItemToObject(o, "cpu_share", share);
    cJSON_AddItemToObject(o, "pss_mean_mb", groups_json(a->pss_mean, MB));
    cJSON_AddItemToObject(o, "pss_max_mb", groups_json(a->pss_max, MB));
    cJSON_AddItemToObject(o, "rss_mean_mb", groups_json(a->rss_mean, MB));
    cJSON_AddItemToObject(o, "rss_max_mb", groups_json(a->rss_max, MB));
    cJSON_AddNumberToObject(o, "memory_samples", a->mem_samples);
    cJSON_AddNumberToObject(o, "accounting_overhead_s", a->overhead_s);
    cJSON_AddNumberToObject(o, "pg_client_connections", a->pg_backends_max);
    return o;
}

cJSON *
report_level_json(const struct level *l, const struct profile *p)
{
    const struct stats *s = l->st;
    cJSON *o = cJSON_CreateObject(), *eps = cJSON_CreateObject();

    cJSON_AddNumberToObject(o, l->open_loop ? "connections" : "users", l->users);
    cJSON_AddBoolToObject(o, "pass", l->pass);
    cJSON_AddStringToObject(o, "why", l->why);
    cJSON_AddBoolToObject(o, "disturbed", l->disturbed);
    if (l->disturbed)
        cJSON_AddStringToObject(o, "disturbed_why", l->disturbed_why);
    cJSON_AddNumberToObject(o, "loadavg_1m_before", l->load_before);
    cJSON_AddNumberToObject(o, "own_load_before", l->own_load_before);
    cJSON_AddNumberToObject(o, "own_runnable_mean", l->acct.runnable_mean);
    if (l->acct.pin_threads)
        cJSON_AddNumberToObject(o, "pinning_threads_checked", l->acct.pin_threads);
    if (l->acct.pin_stray)
        cJSON_AddStringToObject(o, "pinning_stray", l->acct.pin_stray_what);
    cJSON_AddNumberToObject(o, "ramp_s", l->ramp_s);
    cJSON_AddNumberToObject(o, "settle_s", l->settle_s);
    cJSON_AddNumberToObject(o, "hold_s", l->acct.wall_s);
    cJSON_AddNumberToObject(o, "users_mean", l->users_mean);
    cJSON_AddNumberToObject(o, "connections_open_at_end", (double)l->conns_open);
    cJSON_AddNumberToObject(o, "users_starting_at_end", (double)l->users_starting);
    cJSON_AddNumberToObject(o, "requests", (double)s->requests);
    cJSON_AddNumberToObject(o, "responses", (double)s->responses);
    cJSON_AddNumberToObject(o, "rps", l->rps);
    if (!l->open_loop) {
        cJSON *lt = cJSON_AddObjectToObject(o, "little");

        cJSON_AddNumberToObject(lt, "expected_rps", l->little_rps);
        cJSON_AddNumberToObject(lt, "deviation_pct", l->little_dev_pct);
        cJSON_AddNumberToObject(lt, "think_s", l->think_s);
        cJSON_AddNumberToObject(lt, "page_ms", l->page_s * 1e3);
        cJSON_AddNumberToObject(lt, "requests_per_page", l->req_per_page);
        cJSON_AddNumberToObject(lt, "pages", (double)s->pages);
        cJSON_AddNumberToObject(lt, "pages_expected", l->little_pages);
        cJSON_AddNumberToObject(lt, "tolerance_pct", l->little_tol_pct);
        cJSON_AddStringToObject(lt, "tolerance_rule", little_rule(l));
    }
    cJSON_AddItemToObject(o, "latency", hist_json(&s->all));
    cJSON_AddItemToObject(o, "errors", errors_json(s->err));
    cJSON_AddItemToObject(o, "unexpected_statuses", statuses_json(s->bad_status));
    cJSON_AddNumberToObject(o, "error_pct",
                            s->requests ? (double)stats_errors(s) * 100 / (double)s->requests : 0);
    for (int i = 0; i < s->nep; i++) {
        cJSON *e = hist_json(&s->ep[i]);

        cJSON_AddItemToObject(e, "errors", errors_json(&s->ep_err[i * CONN_NERR]));
        cJSON_AddItemToObject(eps, p->endpoint[i], e);
    }
    cJSON_AddItemToObject(o, "endpoints", eps);
    cJSON_AddItemToObject(o, "accounting", acct_json(&l->acct));
    cJSON_AddNumberToObject(o, "generator_cpu_pct", l->gen_cpu_pct);
    cJSON_AddNumberToObject(o, "generator_cpu_peak_pct", l->gen_cpu_peak_pct);
    cJSON_AddNumberToObject(o, "generator_processes", l->gen_procs);
    cJSON_AddNumberToObject(o, "generator_processes_missing", l->gen_missing);
    cJSON_AddNumberToObject(o, "generator_cpu_busiest_process_pct", l->gen_cpu_proc_max_pct);
    cJSON_AddNumberToObject(o, "generator_us_per_request", l->gen_us_per_req);
    cJSON_AddNumberToObject(o, "server_us_per_request", l->server_us_per_req);
    cJSON_AddNumberToObject(o, "postgres_us_per_request", l->pg_us_per_req);
    cJSON_AddNumberToObject(o, "generator_share_of_server_side", gen_share(l));
    return o;
}

cJSON *
report_criteria_json(const struct criteria *c)
{
    cJSON *o = cJSON_CreateObject();

    cJSON_AddNumberToObject(o, "p95_ms", c->p95_ms);
    cJSON_AddNumberToObject(o, "p99_ms", c->p99_ms);
    cJSON_AddNumberToObject(o, "max_errors_pct", c->max_errors_pct);
    cJSON_AddNumberToObject(o, "little_tolerance_pct", c->little_tol_pct);
    cJSON_AddNumberToObject(o, "generator_cpu_max_pct", c->gen_cpu_max_pct);
    return o;
}

static void
cpu_model(char *out, size_t cap)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[256];

    snprintf(out, cap, "unknown");
    if (!f)
        return;
    while (fgets(line, sizeof(line), f)) {
        char *c = strchr(line, ':');

        if (strncmp(line, "model name", 10) == 0 && c) {
            snprintf(out, cap, "%s", c + 2);
            out[strcspn(out, "\n")] = '\0';
            break;
        }
    }
    fclose(f);
}

/* What the reports say about the machine. */
struct machine {
    long nproc;
    char model[128];
    struct utsname u;
};

static void
machine_read(struct machine *m)
{
    memset(m, 0, sizeof(*m));
    m->nproc = sysconf(_SC_NPROCESSORS_ONLN);
    cpu_model(m->model, sizeof(m->model));
    uname(&m->u);
}

cJSON *
report_machine_json(const struct bench *b)
{
    cJSON *o = cJSON_CreateObject();
    struct machine m;

    machine_read(&m);
    cJSON_AddNumberToObject(o, "nproc", (double)m.nproc);
    cJSON_AddStringToObject(o, "cpu_model", m.model);
    cJSON_AddStringToObject(o, "kernel", m.u.release);
    cJSON_AddNumberToObject(o, "loadavg_1m_at_start", b->load_start);
    cJSON_AddNumberToObject(o, "loadavg_1m_at_end", acct_loadavg(b->loadavg_path));
    cJSON_AddNumberToObject(o, "memory_mb",
                            (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE) / MB);
    return o;
}

void
report_machine_line(char *out, size_t cap)
{
    struct machine m;

    machine_read(&m);
    snprintf(out, cap, "%ld cores (%s), Linux %s", m.nproc, m.model, m.u.release);
}

void
report_machine_text(FILE *f, const struct bench *b)
{
    char line[512];

    report_machine_line(line, sizeof(line));
    fprintf(f, "machine: %s, load average %.2f at start, %.2f at end\n", line, b->load_start,
            acct_loadavg(b->loadavg_path));
}

int
report_write(const char *path, cJSON *root)
{
    char tmp[4096];
    char *text = cJSON_Print(root);
    FILE *f;
    int rc = 0;

    if (!text)
        return -1;
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    if (!(f = fopen(tmp, "w"))) {
        free(text);
        return -1;
    }
    if (fputs(text, f) == EOF || fputc('\n', f) == EOF)
        rc = -1;
    if (fclose(f) != 0)
        rc = -1;
    free(text);
    if (rc == 0 && rename(tmp, path) < 0)
        rc = -1;
    if (rc < 0)
        unlink(tmp);
    return rc;
}

void
report_default_path(char *out, size_t cap, const char *dir, const char *mode)
{
    time_t t = time(NULL);
    struct tm tm;
    char stamp[32];

    localtime_r(&t, &tm);
    strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
    snprintf(out, cap, "%s/conduit-bench-%s-%s.json", dir && *dir ? dir : ".", mode, stamp);
}
