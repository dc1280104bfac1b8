/*
 * modes: the setup every mode shares.  See modes.h.
 */
#include "config.h"

#include "bench/modes.h"

#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/probe.h"
#include "bench/procs.h"
#include "bench/report.h"

#ifndef DATADIR
#define DATADIR "/usr/local/share/conduitd"
#endif

struct profile *
modes_profile(const struct options *o)
{
    char err[512], path[4096], exe[4096];
    const char *name = o->profile;
    struct profile *p;
    ssize_t n;

    if (!name) {
        /* Installed, or beside the source tree when run from a build. */
        snprintf(path, sizeof(path), "%s/bench-profile.json", DATADIR);
        name = path;
        if (access(path, R_OK) < 0 && (n = readlink("/proc/self/exe", exe, sizeof(exe) - 1)) > 0) {
            exe[n] = '\0';
            snprintf(path, sizeof(path), "%s/../bench/profiles/default.json", dirname(exe));
            if (access(path, R_OK) < 0)
                snprintf(path, sizeof(path), "%s/bench-profile.json", DATADIR);
        }
    }
    if (!(p = profile_load(name, err, sizeof(err))))
        fprintf(stderr, "conduit-bench: profile %s\n", err);
    return p;
}

pid_t
modes_pg_pid(const char *dir)
{
    for (int i = 0; i < 2; i++) {
        char path[4096];
        FILE *f;
        int pid = 0;

        snprintf(path, sizeof(path), "%s%s/postmaster.pid", dir, i ? "/data" : "");
        if (!(f = fopen(path, "r")))
            continue;
        if (fscanf(f, "%d", &pid) != 1)
            pid = 0;
        fclose(f);
        if (pid > 0)
            return pid;
    }
    return 0;
}

void
modes_account(struct bench *b, const struct options *o)
{
    pid_t pg = o->pg_pid;

    for (int i = 0; i < o->nserver_pids; i++)
        if (acct_add_root(&b->acct, AG_SERVER, o->server_pid[i]) < 0)
            fprintf(stderr, "conduit-bench: --server-pid %d: no such process\n",
                    (int)o->server_pid[i]);
    if (!pg && o->pg_data && !(pg = modes_pg_pid(o->pg_data)))
        fprintf(stderr, "conduit-bench: --pg-data %s: no postmaster.pid there\n", o->pg_data);
    if (pg && acct_add_root(&b->acct, AG_POSTGRES, pg) < 0)
        fprintf(stderr, "conduit-bench: PostgreSQL pid %d: no such process\n", (int)pg);
    if (o->nginx_pid && acct_add_root(&b->acct, AG_NGINX, o->nginx_pid) < 0)
        fprintf(stderr, "conduit-bench: --nginx-pid %d: no such process\n", (int)o->nginx_pid);
}

int
modes_probe(const struct options *o, struct bench *b)
{
    char msg[1024];

    if (o->no_probe || !probe_needed(b->prof))
        return 0;
    if (probe_dataset(&b->cc.server, b->cc.host, &b->ds, b->prof->timeout_s, &b->probe_requests,
                      msg, sizeof(msg)) == 0)
        return 0;
    fprintf(stderr, "conduit-bench: %s does not hold the dataset of --scale %g --seed %llu: %s\n",
            b->cc.host, b->ds.scale, (unsigned long long)b->ds.seed, msg);
    return -1;
}

/*
 * How many generator processes: --procs, or as many as the users need at
 * one socket each under the file limit (got) of a process.
 */
static int
how_many_procs(const struct options *o, long got)
{
    long per = got - 1024;

    if (o->procs)
        return o->procs;
    if (o->mode == MODE_RATE || o->mode == MODE_CEILING || per < 1 || o->b.max_users <= per)
        return 1;
    return (int)((o->b.max_users + per - 1) / per);
}

int
modes_setup(struct options *o, struct profile **prof, struct bench *b)
{
    char err[512];
    /* A socket per user, plus room for /proc reads, logs, the database. */
    long want = (long)o->b.max_users + 1024, got;
    struct procs *ps = NULL;
    int n;

    if (!(*prof = modes_profile(o)))
        return -1;
    got = bench_raise_nofile(want);
    n = how_many_procs(o, got);
    if (n > PROCS_MAX) {
        fprintf(stderr, "conduit-bench: %d users need %d generator processes, more than %d\n",
                o->b.max_users, n, PROCS_MAX);
        n = PROCS_MAX;
    }
    want = (o->b.max_users + n - 1) / n + 1024;
    /*
     * Raising the hard limit needs CAP_SYS_RESOURCE; without it, say so, and
     * search no higher than the descriptors allow: a level that failed for
     * want of sockets here would be blamed on the server.
     */
    if (got < want) {
        fprintf(stderr,
                "conduit-bench: the open file limit is %ld, so at most %ld users in each of %d "
                "process(es) (this run may want %d): raise it with ulimit -Hn as root "
                "(CAP_SYS_RESOURCE), or give --procs\n",
                got, got - 1024, n, o->b.max_users);
        if (o->mode == MODE_SEARCH || o->mode == MODE_COMPARE || o->mode == MODE_EXPERIMENT) {
            o->b.max_users = (int)(got - 1024) * n;
            o->max_users_why = "the generator's open file limit passed: the server's capacity is "
                               "higher, these processes cannot offer more";
        }
    }
    /* Before this process's event base: none may cross the fork. */
    if (n > 1) {
        if (!(ps = procs_start(n, &o->b, *prof, err, sizeof(err)))) {
            fprintf(stderr, "conduit-bench: %s\n", err);
            profile_free(*prof);
            *prof = NULL;
            return -1;
        }
        if (!o->b.quiet)
            fprintf(stderr, "conduit-bench: %d generator processes, up to %d users each\n", n,
                    (o->b.max_users + n - 1) / n);
    }
    if (bench_init(b, &o->b, *prof, err, sizeof(err)) < 0 ||
        (ps && procs_attach(ps, b, err, sizeof(err)) < 0)) {
        fprintf(stderr, "conduit-bench: %s\n", err);
        if (ps && !b->remote)
            procs_stop(ps);
        bench_free(b);
        profile_free(*prof);
        *prof = NULL;
        return -1;
    }
    b->crit = o->crit;
    /* compare and experiment probe each server they start; ceiling asks no server. */
    if (o->mode != MODE_COMPARE && o->mode != MODE_EXPERIMENT && o->mode != MODE_CEILING &&
        modes_probe(o, b) < 0) {
        bench_free(b);
        profile_free(*prof);
        *prof = NULL;
        return -1;
    }
    modes_account(b, o);
    return 0;
}

cJSON *
modes_json_header(const struct options *o, const struct bench *b)
{
    cJSON *root = cJSON_CreateObject(), *load = cJSON_CreateObject();

    cJSON_AddStringToObject(root, "tool", "conduit-bench " PACKAGE_VERSION);
    cJSON_AddStringToObject(root, "mode", o->mode_name);
    cJSON_AddItemToObject(root, "machine", report_machine_json(b));
    cJSON_AddStringToObject(load, "target", b->cc.host);
    cJSON_AddStringToObject(load, "profile", b->prof->name);
    cJSON_AddNumberToObject(load, "think_mean_s", b->prof->think_mean_s);
    cJSON_AddNumberToObject(load, "think_cap_s", b->prof->think_cap_s);
    cJSON_AddNumberToObject(load, "session_s", b->prof->session_s);
    cJSON_AddNumberToObject(load, "timeout_s", b->prof->timeout_s);
    cJSON_AddNumberToObject(load, "scale", b->ds.scale);
    cJSON_AddNumberToObject(load, "seed", (double)b->ds.seed);
    cJSON_AddNumberToObject(load, "source_addresses", b->cc.nsources);
    cJSON_AddNumberToObject(load, "ramp_s", o->ramp_s);
    cJSON_AddNumberToObject(load, "hold_s", o->hold_s);
    cJSON_AddItemToObject(root, "load", load);
    cJSON_AddItemToObject(root, "criteria", report_criteria_json(&b->crit));
    return root;
}

void
modes_json_totals(cJSON *root, const struct bench *b)
{
    cJSON *t = cJSON_AddObjectToObject(root, "totals");

    cJSON_AddNumberToObject(t, "requests", (double)b->total->requests);
    cJSON_AddNumberToObject(t, "responses", (double)b->total->responses);
    cJSON_AddNumberToObject(t, "connects", (double)b->cc.connects);
    cJSON_AddNumberToObject(t, "probe_requests", b->probe_requests);
    cJSON_AddStringToObject(t, "last_error", b->cc.last_error);
}

int
modes_write_json(const struct options *o, cJSON *root, char *path, size_t cap)
{
    if (o->json)
        snprintf(path, cap, "%s", o->json);
    else
        report_default_path(path, cap, o->out_dir, o->mode_name);
    if (report_write(path, root) < 0) {
        fprintf(stderr, "conduit-bench: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    printf("report: %s\n", path);
    return 0;
}

int
modes_finish(const struct options *o, cJSON *root, struct bench *b, struct profile *prof, int rc)
{
    char path[4096];

    if (modes_write_json(o, root, path, sizeof(path)) < 0)
        rc = 2;
    cJSON_Delete(root);
    bench_free(b);
    profile_free(prof);
    return rc;
}
