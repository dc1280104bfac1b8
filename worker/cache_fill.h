/*
 * cache_fill: one statement in flight per missed key (nginx's
 * proxy_cache_lock).  When a hot entry is invalidated (the first page of
 * the global list at every new article, the tag list at every new tag
 * count), every request for it misses until the statement that refills
 * it returns: under load, tens of copies of one statement.  Instead the
 * first request that misses a key fills it, and the others that miss it
 * meanwhile wait for that fill and then look again.
 *
 * Coherence is the cache's (worker/cache.h): a waiter looks the key up
 * again, so it is served only what cache_put() accepted, and a fill whose
 * read is older than an invalidation its client saw answered is refused
 * there; the waiter then joins the next fill, or sends it.  A request waits
 * at most CACHE_FILL_WAITS times, then fills for itself, so a key
 * invalidated faster than it can be read never holds anyone back longer
 * than that many statements.
 *
 * The fill ends when its statement's answer comes back, whatever it is
 * (rows, an error, shed, its client gone): cache_fill_done(), from the
 * one place every answer passes (api.c).  The waiters are resumed from
 * the loop right after that callback has returned, so the answer is
 * already in the cache when they look.
 *
 * One event loop uses it: no locking.
 */
#ifndef CONDUITD_CACHE_FILL_H
#define CONDUITD_CACHE_FILL_H

/*
 * A hot key is invalidated while its fill runs (the tag list, at a new
 * article every 70 ms under load) and the fill is refused: its waiters
 * then miss again.  Waiting once let each of them send its own statement
 * then (47,000 tag-list statements in five minutes at 16,000 users, for
 * 9,000 changes); a few more waits keep them together.
 */
#define CACHE_FILL_WAITS 3

struct event_base;
struct worker_slot;
struct cache_fills;
struct cache_fill;

/* A request that waits: kept in its own state, no allocation. */
struct cache_fill_waiter {
    struct cache_fill_waiter *next;
    void (*resume)(void *arg);
    void *arg;
};

/* NULL without memory.  slot: where waits are counted (may be NULL). */
struct cache_fills *cache_fills_new(struct event_base *base, struct worker_slot *slot);
/* At exit: forgets the fills in flight and their waiters, resuming none. */
void cache_fills_free(struct cache_fills *f);

/*
 * A miss of key.  1: nobody fills it, the caller is to (*fill is its
 * handle, for cache_fill_done()); 0: another request fills it and w was
 * added to its waiters (w->resume(w->arg) will run once, later); -1: go
 * on without (out of memory).
 */
int cache_fill_join(struct cache_fills *f, const char *key, struct cache_fill_waiter *w,
                    struct cache_fill **fill);

/*
 * Is a fill of key in flight?  A request that would wait for it may be
 * answered stale instead (cache.h, "Stale answers"): the fill refreshes
 * the key, once, whoever waits.
 */
int cache_fill_pending(const struct cache_fills *f, const char *key);

/* The fill's statement has answered: its waiters are resumed from the loop. */
void cache_fill_done(struct cache_fills *f, struct cache_fill *fill);

#endif
