/*
 * worker: one process, one event loop.  The master forks it with the
 * listening sockets open and the shared scoreboard and cache mapped; everything else
 * (the event base, evhttp, the database pool, the hashing threads) is
 * created here, after the fork.
 *
 * Signals arrive as libevent events, so their work runs in the loop:
 * TERM drains (stop accepting, finish what is in flight, exit 0), INT and
 * QUIT exit at once, USR1 reopens the log, HUP is the master's business.
 * A worker whose master died (kill -9, a crash) drains and exits too:
 * unsupervised, it would serve on with nobody to reload, replace or stop it.
 */
#ifndef CONDUITD_WORKER_H
#define CONDUITD_WORKER_H

#include <sys/types.h>

struct cache_zone;
struct config;
struct listener;
struct listener_set;
struct scoreboard;

/* The exit status that tells the master not to respawn: the config is bad. */
#define WORKER_EXIT_FATAL 2

struct worker_args {
    const struct config *cfg;
    struct listener_set *listeners;
    const struct listener *status; /* status_listen's socket, or NULL */
    struct scoreboard *sb;
    struct cache_zone *zone; /* the instance's cache (common/cache_zone.h), mapped by the master */
    int slot;
    int index;
    int generation;
    pid_t master_pid; /* the worker drains and exits once its parent is another */
};

/* Runs the worker until it is told to stop; never returns. */
void worker_main(const struct worker_args *a) __attribute__((noreturn));

#endif
