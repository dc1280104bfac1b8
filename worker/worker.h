/*
 * worker: one process, one event loop.  The master forks it with the
 * listening sockets open and the shared scoreboard mapped; everything else
 * (the event base, evhttp, the database pool, the hashing threads) is
 * created here, after the fork.
 *
 * Signals arrive as libevent events, so their work runs in the loop:
 * TERM drains (stop accepting, finish what is in flight, exit 0), INT and
 * QUIT exit at once, USR1 reopens the log, HUP is the master's business.
 */
#ifndef CONDUITD_WORKER_H
#define CONDUITD_WORKER_H

#include <stdint.h>

struct config;
struct listener_set;
struct scoreboard;
struct evbuffer;
struct event_base;
struct db_pool;
struct bcrypt_pool;
struct cache;
struct cache_sync;
struct access_log;
struct worker_slot;

/* The exit status that tells the master not to respawn: the config is bad. */
#define WORKER_EXIT_FATAL 2

struct worker_args {
    const struct config *cfg;
    struct listener_set *listeners;
    struct scoreboard *sb;
    int slot;
    int index;
    int generation;
};

struct worker;

/* Runs the worker until it is told to stop; never returns. */
void worker_main(const struct worker_args *a) __attribute__((noreturn));

/* For the request layer (http.c). */
void worker_request_begin(struct worker *w);
void worker_request_done(struct worker *w);
/* Bracket a reply's write, so a drain does not exit with bytes unsent. */
void worker_reply_sending(struct worker *w);
void worker_reply_sent(struct worker *w);
void worker_count_response(struct worker *w, int status);
int worker_draining(const struct worker *w);
struct evbuffer *worker_scratch(struct worker *w);
struct access_log *worker_access_log(struct worker *w); /* NULL when off */
struct event_base *worker_base(struct worker *w);
const struct config *worker_config(const struct worker *w);
int worker_index(const struct worker *w);
struct db_pool *worker_db(struct worker *w);
struct bcrypt_pool *worker_bcrypt(struct worker *w);
/* This worker's scoreboard slot (its counters). */
const struct worker_slot *worker_slot(const struct worker *w);
/* NULL when the cache is off (config key cache). */
struct cache *worker_cache(struct worker *w);
/* NULL unless the cache is kept in sync (cache_sync). */
struct cache_sync *worker_cache_sync(struct worker *w);

#endif
