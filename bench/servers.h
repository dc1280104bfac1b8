/*
 * servers: the processes `compare` starts and stops itself: one or more
 * conduitd masters on their own loopback ports, nginx in front of them
 * when there are several (etc/nginx-upstream.conf.in, least_conn), and the
 * CPU affinity that pins them and PostgreSQL to the first C cores (what
 * `taskset -a -c 0-(C-1)` does, done with sched_setaffinity for every
 * thread of every process).
 *
 * Every process started here is stopped here, by pid: TERM, then KILL
 * after a grace period.
 */
#ifndef CONDUIT_BENCH_SERVERS_H
#define CONDUIT_BENCH_SERVERS_H

#include <stddef.h>

#include <sched.h>
#include <sys/types.h>

#define SERVERS_MAX 64

struct servers_cfg {
    const char *conduitd;
    const char *nginx;      /* used when instances > 1 */
    const char *nginx_tmpl; /* etc/nginx-upstream.conf.in */
    const char *db;
    const char *dir; /* logs and generated configs go here */
    int workers;     /* in all; each instance runs workers / instances */
    int instances;
    int pool;
    int reuseport;
    int cache;     /* conduitd --cache on */
    int base_port; /* 0: free ports; else instance k on base_port + 1 + k, nginx on base_port */
    int cores;     /* 0: not pinned */
    int clients;   /* the most users that will connect: nginx's workers, conduitd's cap */
};

struct servers {
    pid_t master[SERVERS_MAX];
    int port[SERVERS_MAX];
    int n;
    pid_t nginx;
    int target_port; /* where the load goes: nginx, or the only master */
    int probes;      /* readiness requests the servers answered (and count) */
    char log[SERVERS_MAX][4096];
};

/* Starts and waits until every worker is ready; -1 with a message. */
int servers_start(const struct servers_cfg *c, struct servers *s, char *err, size_t errlen);
void servers_stop(struct servers *s);

/*
 * Each server process may hold as many descriptors as the hard limit
 * allows (raising it needs CAP_SYS_RESOURCE); nginx gets enough workers,
 * and conduitd a --max-connections high enough, that c->clients fit.
 */
int servers_nginx_workers(const struct servers_cfg *c, long nofile);
int servers_max_connections(const struct servers_cfg *c);

/* Pins pid, its threads and all its descendants to cores 0..n-1 (n 0: all). */
int servers_pin(pid_t pid, int n);

/* Finds an executable: the path itself if it has a '/', else in PATH or dirs. */
int servers_find(const char *name, const char *const *dirs, char *out, size_t cap);

#endif
