/*
 * acct: CPU and memory by group of processes, read from /proc
 * (docs/workload.md, "What every measurement reports").
 *
 * A group is a set of root pids and all their descendants: the conduitd
 * masters (and so their workers), the postmaster (and its backends), nginx,
 * and the load generator itself (alone: its own children are the servers
 * it started, which belong to their groups).  A process belongs to the
 * first group that reaches it.
 *
 * CPU: utime + stime of every member between acct_begin and acct_end
 * (members born meanwhile count from zero), and the machine's busy time
 * from /proc/stat, so what no group used shows as "other" (other people's
 * processes on a shared machine).  Memory: each acct_sample() sums PSS
 * (/proc/PID/smaps_rollup) and RSS per group; the result has the mean and
 * the max of those sums.  PSS is the honest figure for forked processes:
 * RSS counts a shared page once per process.
 *
 * Reading smaps_rollup walks page tables, which is not free for a
 * PostgreSQL backend mapping shared_buffers: 10 to 20 ms a backend once it
 * has touched 6 GB of them, 0.3 s for 16 backends.  So the memory is read
 * by a thread of its own, never by the caller's event loop (whose
 * latencies it would add to every request in flight), once a second or
 * less often when a sample costs more than 2 % of a core; and the CPU
 * this module spends is measured (overhead_s) so the generator's own
 * figure can leave it out.
 */
#ifndef CONDUIT_BENCH_ACCT_H
#define CONDUIT_BENCH_ACCT_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

enum acct_group { AG_SERVER, AG_POSTGRES, AG_BENCH, AG_NGINX, AG_NGROUPS };
extern const char *const acct_group_names[AG_NGROUPS];

#define ACCT_MAX_ROOTS 32
#define ACCT_MAX_PROCS 4096

struct acct_proc {
    pid_t pid;
    int group;
    uint64_t start; /* start time: a reused pid is another process */
    uint64_t ticks; /* utime + stime */
};

struct acct_result {
    double wall_s;
    double cpu_s[AG_NGROUPS];
    double machine_busy_s; /* every core's busy time added up */
    double other_s;        /* busy time no group accounts for */
    int cores;
    double pss_mean[AG_NGROUPS], pss_max[AG_NGROUPS]; /* bytes */
    double rss_mean[AG_NGROUPS], rss_max[AG_NGROUPS];
    int procs_max[AG_NGROUPS];
    int pg_backends_max; /* client backends of the postmaster */
    int samples;         /* acct_sample calls */
    int mem_samples;     /* memory samples, which the means are over */
    double overhead_s;   /* this process's CPU spent reading /proc for it */
    /* The pinning check (acct_set_pinning): threads seen, and those found
       allowed or running outside their group's cores, the first named. */
    int pin_threads;
    double runnable_mean; /* our threads in state R (the load average's count), mean of samples */
    int pin_stray;
    char pin_stray_what[160];
};

struct acct {
    pid_t root[AG_NGROUPS][ACCT_MAX_ROOTS];
    int nroots[AG_NGROUPS];
    struct acct_proc *snap;
    int nsnap;
    uint64_t busy0, total0;
    int64_t t0_us;
    double pss_sum[AG_NGROUPS], rss_sum[AG_NGROUPS];
    double overhead_s;
    int pin_lo[AG_NGROUPS], pin_hi[AG_NGROUPS]; /* cores [lo, hi); hi 0: not checked */
    double runnable_sum;
    struct acct_result r;
    /* The memory thread, between acct_begin and acct_end: it reads the
       members acct_sample last listed (mem_pid, mem_group, mem_n). */
    pthread_t mem_thread;
    pthread_mutex_t mem_lock;
    pthread_cond_t mem_wake;
    int mem_running, mem_stop;
    pid_t mem_pid[ACCT_MAX_PROCS];
    int mem_group[ACCT_MAX_PROCS], mem_n;
    double mem_overhead_s;
};

void acct_init(struct acct *a);
void acct_free(struct acct *a);
/* -1 when the group is full or pid is not alive. */
int acct_add_root(struct acct *a, enum acct_group g, pid_t pid);
void acct_clear_roots(struct acct *a, enum acct_group g);

/*
 * From now on every acct_sample checks, for every thread of group g (from
 * /proc/PID/task), that its affinity allows no core outside [lo, hi) and,
 * when it is running, that it runs there: a backend PostgreSQL starts
 * during the hold is seen as soon as it exists.  hi 0: no check.
 */
void acct_set_pinning(struct acct *a, enum acct_group g, int lo, int hi);

/* Starts the memory thread (acct_end stops it). */
void acct_begin(struct acct *a);
/*
 * Once a second: the threads that count in the load average (returned, as
 * acct_loadavg_threads counts them), the pinning check, and the members
 * the memory thread reads next.
 */
int acct_sample(struct acct *a);
/* The CPU since acct_begin and the memory samples since then. */
void acct_end(struct acct *a, struct acct_result *out);

/* The 1-minute load average from path (NULL: /proc/loadavg); -1 if unreadable. */
double acct_loadavg(const char *path);

/*
 * The threads of every group that count in the load average now: running,
 * waiting for a core, or in uninterruptible sleep (states R and D), as
 * the kernel counts them.
 */
int acct_loadavg_threads(struct acct *a);

/*
 * The kernel's 1-minute load average step: avg after dt_s seconds in
 * which n threads counted, exponentially decayed with a 60 s constant.
 * Kept for our own threads (acct_loadavg_threads once a second), it is
 * our part of the load average, lags included, so that what the load
 * average holds beyond it is other people's.
 */
double acct_load_decay(double avg, double n, double dt_s);

/* The CPU seconds (utime + stime) this process used so far. */
double acct_self_cpu_s(void);

#endif
