/*
 * bench: what every mode shares: the event loop, the connections' shared
 * context, the profile and the dataset, the statistics windows, the CPU
 * and memory accounting, the one-line-a-second progress, and the load
 * level (ramp, settle, hold, judge) that `run` plays once and `search`
 * plays many times.
 *
 * The modes are written as straight-line code: bench_wait() runs the event
 * loop for a while and returns, so a search is a plain loop of levels.
 *
 * Ownership: struct bench owns the engine, the statistics and the
 * accounting; bench_free releases them.  The profile is borrowed.
 */
#ifndef CONDUIT_BENCH_BENCH_H
#define CONDUIT_BENCH_BENCH_H

#include <signal.h>
#include <stdio.h>

#include "bench/acct.h"
#include "bench/conn.h"
#include "bench/profile.h"
#include "bench/stats.h"
#include "bench/vu.h"
#include "common/dataset.h"

/* docs/workload.md, "Passing"; every figure can be changed by a flag. */
struct criteria {
    double p95_ms, p99_ms;
    double max_errors_pct;
    double little_tol_pct;  /* achieved rate against Little's law, at least */
    double gen_cpu_max_pct; /* the generator's own CPU, of one core */
};
#define CRITERIA_DEFAULT                                                                           \
    {                                                                                              \
        500, 1000, 1, 5, 80                                                                        \
    }

/* One load level, judged over its hold only. */
struct level {
    int users;
    double ramp_s, settle_s, hold_s;
    struct stats *st; /* the hold (owned) */
    double rps;
    double users_mean;       /* active users, sampled every second */
    double think_s;          /* the profile's expected think time */
    double page_s;           /* measured mean page time */
    double req_per_page;     /* measured */
    double little_rps;       /* users / (think + page) x requests per page */
    double little_dev_pct;   /* (rps - little) / little */
    double little_pages;     /* pages Little's law expects over the hold */
    double little_tol_pct;   /* the tolerance applied (little.h) */
    int little_statistical;  /* 1: three standard errors; 0: the fixed floor */
    double gen_cpu_pct;      /* the generator's CPU over the hold, of one core */
    double gen_cpu_peak_pct; /* its busiest second */
    long conns_open;         /* the users' sockets open at the hold's end */
    long users_starting;     /* users still logging in then */
    int gen_procs;           /* generator processes that played the users */
    int gen_missing;         /* of them, those whose window never came: a level not judged whole */
    double gen_cpu_proc_max_pct; /* the busiest of them, of one core (judged) */
    double gen_us_per_req, server_us_per_req, pg_us_per_req;
    struct acct_result acct;
    int open_loop; /* rate mode: no Little's law */
    int pass;
    char why[256];           /* why it failed, or "" */
    double load_before;      /* the 1-minute load average as it began */
    double own_load_before;  /* of it, ours (bench.own_load then) */
    int disturbed;           /* others used the machine (spread_disturbed) */
    char disturbed_why[160]; /* why, or "" */
};

/* What the generator processes of a window sent back (procs.h). */
struct remote_window {
    double users_mean;   /* summed */
    long conns_open;     /* summed: sockets open at the window's end */
    long users_starting; /* summed: users still in their session start then */
    int missing;         /* processes that did not answer */
    double cpu_max_pct;  /* the busiest process, of one core */
    double cpu_peak_pct; /* the busiest second of any of them */
};

/*
 * Users that run in other processes (procs.h) rather than in this one's
 * engine: bench.c drives them through these, never through the module.
 * starting and in_flight count a process not yet up to date with the
 * last command as at least 1, so a wait for 0 waits for every answer.
 */
struct bench_remote {
    void (*set_users)(void *arg, int users, double ramp_s);
    int (*active)(void *arg);
    int (*starting)(void *arg);
    int (*in_flight)(void *arg);
    void (*window_begin)(void *arg);
    /* Ends every window, merges their stats into st (waits for them). */
    void (*window_end)(void *arg, struct stats *st, struct remote_window *out);
    /* Every process's totals since the start, merged into total (reset first). */
    void (*totals)(void *arg, struct stats *total, uint64_t *connects, char *last_error,
                   size_t cap);
    void (*set_target)(void *arg, int port);
    void (*free)(void *arg); /* stops them */
    int procs;
    void *arg;
};

struct bench {
    struct event_base *base;
    struct conn_ctx cc;
    const struct profile *prof;
    struct dataset ds;
    struct vu_engine *vu;
    struct stats *sec;   /* the current second, for the progress line */
    struct stats *win;   /* the hold, while one runs; else NULL */
    struct stats *total; /* everything since the start */
    struct acct acct;
    struct criteria crit;
    struct event *tick;
    struct event *wake;
    int64_t t0_us, tick_prev_us;
    double self_cpu_prev;
    double gen_cpu_peak_pct;
    double users_sum;
    int users_samples;
    const char *phase;
    int conns; /* the open-loop modes' connections, for the progress line */
    int quiet;
    FILE *log;                /* progress lines; stderr by default */
    const char *loadavg_path; /* NULL: /proc/loadavg */
    double load_start;        /* the 1-minute load average before any level */
    double own_load;          /* our part of the load average: acct_load_decay() of our threads */
    int64_t own_load_us;      /* when own_load was last brought up to date; 0: never */
    int probe_requests;       /* sent by the dataset probe (probe.h), not measured */
    struct bench_remote *remote; /* the users' processes (owned), or NULL: this one */
    void (*second)(void *arg);   /* called once a second before the second's stats reset */
    void *second_arg;
    /* Called as each level begins, with its users (experiment's progress). */
    void (*level_begin)(void *arg, int users, const char *note);
    void *level_arg;
    const char *level_note; /* what the next levels are for, if not the search ("warm-up") */
    /* Set (by a signal handler): a search ends after the level in progress. */
    volatile sig_atomic_t *stop;
};

struct bench_opts {
    const char *host;
    int port;
    const char *source; /* first loopback source address */
    int sources;        /* how many; 0 = auto from the number of users */
    int max_users;      /* for the automatic number of sources */
    double scale;
    uint64_t seed;
    double think_mean_s, think_cap_s, session_s; /* < 0: the profile's */
    int quiet;
    const char *loadavg_path; /* where the load average is read (tests); NULL: /proc */
    int precise_timer;        /* timers to the microsecond (the open loop's arrivals) */
};

int bench_init(struct bench *b, const struct bench_opts *o, struct profile *prof, char *err,
               size_t errlen);
void bench_free(struct bench *b);

/* Counts a finished request in the second, the total and the hold window. */
void bench_record(struct bench *b, int ep, const struct conn_result *r);

/* Runs the loop for seconds. */
void bench_wait(struct bench *b, double seconds);
/* Runs the loop until cond(b) holds or seconds pass; 0 when it held. */
int bench_wait_until(struct bench *b, double seconds, int (*cond)(struct bench *));

/*
 * Plays one level: move to users over ramp_s, wait until the new users are
 * past their session start (at most settle_max_s), hold for hold_s while
 * recording, then judge.  out->st is allocated; level_free releases it.
 */
int bench_level(struct bench *b, int users, double ramp_s, double settle_max_s, double hold_s,
                struct level *out);
void level_free(struct level *l);

/* The hold window, started and ended by the modes that are not levels. */
void bench_window_begin(struct bench *b);
void bench_window_end(struct bench *b, struct level *out);
/* Pass or fail by the criteria; fills out->pass and out->why. */
void bench_judge(const struct bench *b, struct level *out);

/*
 * Lets requests in flight end (at most seconds), users stopped; then
 * b->total and b->cc.connects hold every process's totals.
 */
void bench_drain(struct bench *b, double seconds);

/* The users, wherever they run. */
void bench_set_users(struct bench *b, int users, double ramp_s);
int bench_active(struct bench *b);
int bench_starting(struct bench *b);
int bench_in_flight(struct bench *b);
/* Where the load goes from now on (compare's servers). */
void bench_set_target(struct bench *b, int port);

/* Raises RLIMIT_NOFILE to at least want; the limit reached. */
long bench_raise_nofile(long want);

#endif
