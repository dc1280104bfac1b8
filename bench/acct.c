/*
 * acct: see acct.h.
 */
#include "config.h"

#include "bench/acct.h"

#include <dirent.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "bench/conn.h"
#include "common/clock.h"

const char *const acct_group_names[AG_NGROUPS] = {
    [AG_SERVER] = "conduitd",
    [AG_POSTGRES] = "postgres",
    [AG_BENCH] = "conduit-bench",
    [AG_NGINX] = "nginx",
};

#define MAX_PROCS ACCT_MAX_PROCS

void
acct_init(struct acct *a)
{
    pthread_condattr_t attr;

    memset(a, 0, sizeof(*a));
    pthread_mutex_init(&a->mem_lock, NULL);
    /* The memory thread's waits are durations: on the one clock (common/clock.h). */
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&a->mem_wake, &attr);
    pthread_condattr_destroy(&attr);
}

static void mem_start(struct acct *a);
static void mem_stop(struct acct *a);

void
acct_free(struct acct *a)
{
    mem_stop(a);
    free(a->snap);
    a->snap = NULL;
    pthread_mutex_destroy(&a->mem_lock);
    pthread_cond_destroy(&a->mem_wake);
}

int
acct_add_root(struct acct *a, enum acct_group g, pid_t pid)
{
    if (pid <= 0 || a->nroots[g] == ACCT_MAX_ROOTS || kill(pid, 0) < 0)
        return -1;
    a->root[g][a->nroots[g]++] = pid;
    return 0;
}

void
acct_clear_roots(struct acct *a, enum acct_group g)
{
    a->nroots[g] = 0;
}

/* utime + stime and the start time of a process; -1 when it is gone. */
static int
read_stat(pid_t pid, uint64_t *ticks, uint64_t *start)
{
    char path[64], buf[1024], *p;
    unsigned long long ut, st, sta;
    FILE *f;
    size_t n;

    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    if (!(f = fopen(path, "r")))
        return -1;
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* The name may hold spaces and parentheses: fields follow the last ')'. */
    if (!(p = strrchr(buf, ')')))
        return -1;
    if (sscanf(p + 2,
               "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d %*d %*d %*d %llu",
               &ut, &st, &sta) != 3)
        return -1;
    *ticks = ut + st;
    *start = sta;
    return 0;
}

static int
is_root_elsewhere(const struct acct *a, int g, pid_t pid)
{
    for (int o = 0; o < AG_NGROUPS; o++)
        for (int i = 0; o != g && i < a->nroots[o]; i++)
            if (a->root[o][i] == pid)
                return 1;
    return 0;
}

/* Adds pid's children (of every thread) to list. */
static int
add_children(pid_t pid, pid_t *list, int n, int cap)
{
    char path[64];
    DIR *d;
    struct dirent *de;

    snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
    if (!(d = opendir(path)))
        return n;
    while ((de = readdir(d)) && n < cap) {
        char cpath[300];
        FILE *f;
        int c;

        if (de->d_name[0] == '.')
            continue;
        snprintf(cpath, sizeof(cpath), "/proc/%d/task/%s/children", (int)pid, de->d_name);
        if (!(f = fopen(cpath, "r")))
            continue;
        while (n < cap && fscanf(f, "%d", &c) == 1)
            list[n++] = c;
        fclose(f);
    }
    closedir(d);
    return n;
}

/* Every member of every group, each once, with its group. */
static int
members(const struct acct *a, pid_t *pid, int *group, int cap)
{
    int n = 0;

    for (int g = 0; g < AG_NGROUPS; g++) {
        int first = n;

        for (int i = 0; i < a->nroots[g] && n < cap; i++) {
            pid[n] = a->root[g][i];
            group[n++] = g;
        }
        if (g == AG_BENCH)
            continue; /* its children are the servers it started */
        for (int i = first; i < n; i++) {
            int before = n, w = n;

            n = add_children(pid[i], pid, n, cap);
            for (int k = before; k < n; k++) {
                int dup = is_root_elsewhere(a, g, pid[k]);

                for (int j = 0; j < before && !dup; j++)
                    dup = pid[j] == pid[k];
                if (!dup) {
                    pid[w] = pid[k];
                    group[w++] = g;
                }
            }
            n = w;
        }
    }
    return n;
}

static void
machine_ticks(uint64_t *busy, uint64_t *total)
{
    unsigned long long v[8] = {0};
    FILE *f = fopen("/proc/stat", "r");

    *busy = *total = 0;
    if (!f)
        return;
    if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4],
               &v[5], &v[6], &v[7]) == 8) {
        for (int i = 0; i < 8; i++)
            *total += v[i];
        *busy = *total - v[3] - v[4];
    }
    fclose(f);
}

static int
snapshot(const struct acct *a, struct acct_proc *out, int cap)
{
    pid_t pid[MAX_PROCS];
    int group[MAX_PROCS], n = members(a, pid, group, MAX_PROCS), k = 0;

    for (int i = 0; i < n && k < cap; i++) {
        out[k].pid = pid[i];
        out[k].group = group[i];
        if (read_stat(pid[i], &out[k].ticks, &out[k].start) == 0)
            k++;
    }
    return k;
}

static double
thread_cpu_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void
acct_begin(struct acct *a)
{
    double t;

    mem_stop(a);
    t = thread_cpu_s();

    free(a->snap);
    a->snap = calloc(MAX_PROCS, sizeof(*a->snap));
    a->nsnap = a->snap ? snapshot(a, a->snap, MAX_PROCS) : 0;
    machine_ticks(&a->busy0, &a->total0);
    a->t0_us = clock_now_us();
    memset(&a->r, 0, sizeof(a->r));
    memset(a->pss_sum, 0, sizeof(a->pss_sum));
    memset(a->rss_sum, 0, sizeof(a->rss_sum));
    a->runnable_sum = 0;
    a->overhead_s = thread_cpu_s() - t;
    mem_start(a);
}

/* Rss and Pss of a process in bytes; -1 when it is gone. */
static int
read_mem(pid_t pid, double *rss, double *pss)
{
    char path[64], line[256];
    unsigned long long kb;
    FILE *f;

    snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", (int)pid);
    if (!(f = fopen(path, "r")))
        return -1;
    *rss = *pss = 0;
    while (fgets(line, sizeof(line), f)) {
        if (sscanf(line, "Rss: %llu kB", &kb) == 1)
            *rss = (double)kb * 1024;
        else if (sscanf(line, "Pss: %llu kB", &kb) == 1)
            *pss = (double)kb * 1024;
    }
    fclose(f);
    return 0;
}

/* Read the members' memory once and add it to the sums (under mem_lock). */
static void
mem_sample(struct acct *a, const pid_t *pid, const int *group, int n)
{
    double pss[AG_NGROUPS] = {0}, rss[AG_NGROUPS] = {0};
    int procs[AG_NGROUPS] = {0};

    for (int i = 0; i < n; i++) {
        double r, p;

        if (read_mem(pid[i], &r, &p) < 0)
            continue;
        rss[group[i]] += r;
        pss[group[i]] += p;
        procs[group[i]]++;
    }
    pthread_mutex_lock(&a->mem_lock);
    for (int g = 0; g < AG_NGROUPS; g++) {
        a->pss_sum[g] += pss[g];
        a->rss_sum[g] += rss[g];
        if (pss[g] > a->r.pss_max[g])
            a->r.pss_max[g] = pss[g];
        if (rss[g] > a->r.rss_max[g])
            a->r.rss_max[g] = rss[g];
        if (procs[g] > a->r.procs_max[g])
            a->r.procs_max[g] = procs[g];
    }
    a->r.mem_samples++;
    pthread_mutex_unlock(&a->mem_lock);
}

/*
 * The memory thread: a sample of the members acct_sample listed last, then
 * a wait of a second, or of 50 times what the sample cost (at most 2 % of
 * a core), or until acct_end.  Before the first list, it waits for one.
 */
static void *
mem_loop(void *arg)
{
    struct acct *a = arg;
    pid_t *pid = malloc(MAX_PROCS * sizeof(*pid));
    int *group = malloc(MAX_PROCS * sizeof(*group));

    pthread_mutex_lock(&a->mem_lock);
    while (!a->mem_stop && pid && group) {
        int n = a->mem_n;
        double t, cost, wait_s = 1;
        int64_t at;
        struct timespec until;

        if (n > 0) {
            memcpy(pid, a->mem_pid, (size_t)n * sizeof(*pid));
            memcpy(group, a->mem_group, (size_t)n * sizeof(*group));
            pthread_mutex_unlock(&a->mem_lock);
            t = thread_cpu_s();
            mem_sample(a, pid, group, n);
            cost = thread_cpu_s() - t;
            pthread_mutex_lock(&a->mem_lock);
            a->mem_overhead_s += cost;
            if (cost * 50 > wait_s)
                wait_s = cost * 50;
        }
        at = clock_now_ns() + (int64_t)(wait_s * 1e9);
        until.tv_sec = (time_t)(at / 1000000000);
        until.tv_nsec = (long)(at % 1000000000);
        while (!a->mem_stop && (n > 0 || a->mem_n == 0) &&
               pthread_cond_timedwait(&a->mem_wake, &a->mem_lock, &until) == 0)
            ;
    }
    pthread_mutex_unlock(&a->mem_lock);
    free(pid);
    free(group);
    return NULL;
}

static void
mem_start(struct acct *a)
{
    a->mem_stop = 0;
    a->mem_n = 0;
    a->mem_overhead_s = 0;
    a->mem_running = pthread_create(&a->mem_thread, NULL, mem_loop, a) == 0;
}

static void
mem_stop(struct acct *a)
{
    if (!a->mem_running)
        return;
    pthread_mutex_lock(&a->mem_lock);
    a->mem_stop = 1;
    pthread_cond_signal(&a->mem_wake);
    pthread_mutex_unlock(&a->mem_lock);
    pthread_join(a->mem_thread, NULL);
    a->mem_running = 0;
}

/* A client backend's title names its client: "[local]" or "addr(port)". */
static int
is_pg_client(pid_t pid)
{
    char path[64], buf[256];
    FILE *f;
    size_t n;

    snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
    if (!(f = fopen(path, "r")))
        return 0;
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    return strncmp(buf, "postgres: ", 10) == 0 && (strstr(buf, "[local]") || strchr(buf, '('));
}

void
acct_set_pinning(struct acct *a, enum acct_group g, int lo, int hi)
{
    a->pin_lo[g] = lo;
    a->pin_hi[g] = hi;
}

/* A thread's state and the core it last ran on, from its stat; -1 when gone. */
static int
thread_cpu(pid_t pid, const char *tid, char *state, int *cpu)
{
    char path[300], buf[1024], *p;
    FILE *f;
    size_t n;

    snprintf(path, sizeof(path), "/proc/%d/task/%s/stat", (int)pid, tid);
    if (!(f = fopen(path, "r")))
        return -1;
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* The command may hold spaces and parentheses: fields follow the last ')'. */
    if (!(p = strrchr(buf, ')')) || sscanf(p + 1, " %c", state) != 1)
        return -1;
    /* Field 39, the processor: the 37th space from the one before the state (field 3). */
    for (int i = 0; i < 37 && p; i++)
        p = strchr(p + 1, ' ');
    return p && sscanf(p + 1, "%d", cpu) == 1 ? 0 : -1;
}

/*
 * Returns pid's threads in state R (running or waiting for a core) and
 * adds to *counted those the load average counts (R, and D: waiting for
 * I/O); when pins is set and its group is pinned, counts its threads and
 * those outside [lo, hi), naming the first.
 */
static int
walk_threads(struct acct *a, pid_t pid, int g, int pins, int *counted)
{
    int runnable = 0;
    char path[64];
    DIR *d;
    struct dirent *de;

    snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
    if (!(d = opendir(path)))
        return 0;
    while ((de = readdir(d))) {
        cpu_set_t set;
        char state;
        int cpu, bad = -1;

        if (de->d_name[0] == '.' || thread_cpu(pid, de->d_name, &state, &cpu) < 0)
            continue;
        runnable += state == 'R';
        *counted += state == 'R' || state == 'D';
        if (!pins || a->pin_hi[g] <= 0)
            continue;
        a->r.pin_threads++;
        if (sched_getaffinity(atoi(de->d_name), sizeof(set), &set) == 0)
            for (int c = 0; c < CPU_SETSIZE && bad < 0; c++)
                if (CPU_ISSET(c, &set) && (c < a->pin_lo[g] || c >= a->pin_hi[g]))
                    bad = c;
        if (bad < 0 && state == 'R' && (cpu < a->pin_lo[g] || cpu >= a->pin_hi[g]))
            bad = cpu;
        if (bad < 0)
            continue;
        if (!a->r.pin_stray++)
            snprintf(a->r.pin_stray_what, sizeof(a->r.pin_stray_what),
                     "%s thread %d of pid %d %s core %d, outside %d-%d", acct_group_names[g],
                     atoi(de->d_name), (int)pid,
                     state == 'R' && cpu == bad ? "ran on" : "was allowed", bad, a->pin_lo[g],
                     a->pin_hi[g] - 1);
    }
    closedir(d);
    return runnable;
}

int
acct_loadavg_threads(struct acct *a)
{
    pid_t pid[MAX_PROCS];
    int group[MAX_PROCS], n = members(a, pid, group, MAX_PROCS), counted = 0;

    for (int i = 0; i < n; i++)
        walk_threads(a, pid[i], group[i], 0, &counted);
    return counted;
}

double
acct_load_decay(double avg, double n, double dt_s)
{
    double e = exp(-dt_s / 60.0);

    return avg * e + n * (1 - e);
}

int
acct_sample(struct acct *a)
{
    pid_t pid[MAX_PROCS];
    int group[MAX_PROCS], n = members(a, pid, group, MAX_PROCS), backends = 0, runnable = 0;
    int counted = 0;
    double t = thread_cpu_s();

    for (int i = 0; i < n; i++) {
        if (group[i] == AG_POSTGRES && is_pg_client(pid[i]))
            backends++;
        runnable += walk_threads(a, pid[i], group[i], 1, &counted);
    }
    a->runnable_sum += runnable;
    pthread_mutex_lock(&a->mem_lock);
    /* The first list wakes the memory thread, which waits for one. */
    if (a->mem_n == 0)
        pthread_cond_signal(&a->mem_wake);
    memcpy(a->mem_pid, pid, (size_t)n * sizeof(*pid));
    memcpy(a->mem_group, group, (size_t)n * sizeof(*group));
    a->mem_n = n;
    if (backends > a->r.pg_backends_max)
        a->r.pg_backends_max = backends;
    a->r.samples++;
    pthread_mutex_unlock(&a->mem_lock);
    a->overhead_s += thread_cpu_s() - t;
    return counted;
}

void
acct_end(struct acct *a, struct acct_result *out)
{
    double t = thread_cpu_s();
    struct acct_proc *now = calloc(MAX_PROCS, sizeof(*now));
    double tck = (double)sysconf(_SC_CLK_TCK);
    uint64_t busy, total;
    double sum = 0;
    int n = now ? snapshot(a, now, MAX_PROCS) : 0;

    mem_stop(a);
    /* A level too short for the thread's first sample gets one here. */
    if (a->r.mem_samples == 0 && a->mem_n > 0)
        mem_sample(a, a->mem_pid, a->mem_group, a->mem_n);
    *out = a->r;
    for (int i = 0; i < n; i++) {
        uint64_t before = 0;

        for (int j = 0; j < a->nsnap; j++)
            if (a->snap[j].pid == now[i].pid && a->snap[j].start == now[i].start)
                before = a->snap[j].ticks;
        out->cpu_s[now[i].group] += (double)(now[i].ticks - before) / tck;
    }
    free(now);
    machine_ticks(&busy, &total);
    out->wall_s = (double)(clock_now_us() - a->t0_us) / 1e6;
    out->machine_busy_s = (double)(busy - a->busy0) / tck;
    out->cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
    for (int g = 0; g < AG_NGROUPS; g++) {
        sum += out->cpu_s[g];
        if (out->mem_samples) {
            out->pss_mean[g] = a->pss_sum[g] / out->mem_samples;
            out->rss_mean[g] = a->rss_sum[g] / out->mem_samples;
        }
    }
    out->runnable_mean = out->samples ? a->runnable_sum / out->samples : 0;
    out->other_s = out->machine_busy_s > sum ? out->machine_busy_s - sum : 0;
    out->overhead_s = a->overhead_s + a->mem_overhead_s + (thread_cpu_s() - t);
}

double
acct_self_cpu_s(void)
{
    struct rusage ru;

    if (getrusage(RUSAGE_SELF, &ru) < 0)
        return 0;
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec / 1e6;
}

double
acct_loadavg(const char *path)
{
    FILE *f = fopen(path ? path : "/proc/loadavg", "r");
    double l = -1;

    if (!f)
        return -1;
    if (fscanf(f, "%lf", &l) != 1)
        l = -1;
    fclose(f);
    return l;
}
