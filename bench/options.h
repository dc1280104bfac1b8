/*
 * options: the command line of conduit-bench, parsed into one struct that
 * the modes read.  Bad input gets a message naming the flag, never a
 * crash; see conduit-bench(1) for every flag.
 */
#ifndef CONDUIT_BENCH_OPTIONS_H
#define CONDUIT_BENCH_OPTIONS_H

#include <stddef.h>
#include <sys/types.h>

#include "bench/bench.h"
#include "bench/matrix.h"

enum bench_mode { MODE_RUN, MODE_SEARCH, MODE_RATE, MODE_COMPARE, MODE_CEILING, MODE_EXPERIMENT };

#define OPT_MAX_PIDS 16
#define OPT_MAX_CONFIGS MATRIX_MAX_WORKERS

struct options {
    int argc;
    char **argv; /* the command line, as the reports quote it */
    enum bench_mode mode;
    const char *mode_name;
    struct bench_opts b;
    const char *profile;
    const char *json;    /* the report file; default in out_dir */
    const char *out_dir; /* where reports (and compare's chart) go */
    struct criteria crit;
    /* run */
    int users;
    double ramp_s, hold_s, settle_max_s;
    /* search */
    int start, min_users;
    double growth, resolution_pct;
    int max_levels, no_rerun;
    /* why max_users is what it is, when not the flag (the file limit) */
    const char *max_users_why;
    /* rate */
    double rps, duration_s, warmup_s;
    int connections;
    /* who to account for */
    pid_t server_pid[OPT_MAX_PIDS];
    int nserver_pids;
    pid_t pg_pid, nginx_pid;
    const char *pg_data;
    /* compare */
    int workers[OPT_MAX_CONFIGS];
    int nworkers;
    int pool, cores, reuseport, instances;
    int cache; /* compare: conduitd --cache on */
    const char *conduitd, *db, *nginx, *nginx_template, *workers_spec;
    int base_port;
    /* ceiling */
    int depth, ceiling_conns;
    int no_ceiling;
    int no_probe; /* skip the check that the target holds the dataset (probe.h) */
    int procs;    /* generator processes (procs.h); 0: as many as the file limit needs */
    /* experiment: the lists as given, and the configurations they make */
    const char *cores_spec, *instances_spec, *cache_spec;
    struct matrix_config matrix[MATRIX_MAX];
    int nmatrix;
    int repeat;      /* searches per configuration, interleaved across them */
    double budget_s; /* experiment: choose holds and repeats that fit; 0: none */
    /* A level whose "other" CPU share is above this (or the load average
       not ours above the cores) is replayed, then marked disturbed; < 0: off. */
    double disturbed_other_pct;
    double disturbed_pause_s;  /* before the replay of a disturbed level */
    const char *reference_dir; /* the published figures (reference.h); NULL: found */
    int set_hold, set_ramp, set_warmup, set_max_levels, set_repeat,
        set_disturbed; /* given: not the mode's default */
};

/* 0, 1 when help was printed, -1 with a message in err. */
int options_parse(int argc, char **argv, struct options *o, char *err, size_t errlen);

void options_usage(FILE *f);

#endif
