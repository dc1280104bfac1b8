/*
 * cache_fill: see cache_fill.h.
 *
 * The fills in flight sit in a small table by the hash of their key (a
 * worker has at most as many as its requests waiting for the database);
 * a finished fill moves to the done list, which one event, made active,
 * empties from the loop: the answer's callback has then returned, and its
 * value is in the cache.
 */
#include "config.h"

#include "worker/cache_fill.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "common/scoreboard.h"
#include "worker/cache.h"

#define BUCKETS 256 /* a power of two */

struct cache_fill {
    struct cache_fill *next; /* in its bucket, then in the done list */
    uint64_t hash;
    struct cache_fill_waiter *waiters, **tail; /* in the order they came */
    char key[];
};

struct cache_fills {
    struct cache_fill *bucket[BUCKETS];
    struct cache_fill *done;
    struct event *wake;
    struct worker_slot *slot;
};

static void
on_wake(evutil_socket_t fd, short what, void *arg)
{
    struct cache_fills *f = arg;
    struct cache_fill *done = f->done;

    (void)fd;
    (void)what;
    /* A waiter resumed may start and end a fill of its own: the next pass's. */
    f->done = NULL;
    while (done) {
        struct cache_fill *next = done->next;
        struct cache_fill_waiter *w = done->waiters;
        free(done);
        while (w) {
            struct cache_fill_waiter *wn = w->next; /* w belongs to its request */
            w->resume(w->arg);
            w = wn;
        }
        done = next;
    }
}

struct cache_fills *
cache_fills_new(struct event_base *base, struct worker_slot *slot)
{
    struct cache_fills *f = calloc(1, sizeof(*f));

    if (!f)
        return NULL;
    if (!(f->wake = event_new(base, -1, 0, on_wake, f))) {
        free(f);
        return NULL;
    }
    f->slot = slot;
    return f;
}

static void
free_list(struct cache_fill *p)
{
    while (p) {
        struct cache_fill *next = p->next;
        free(p);
        p = next;
    }
}

void
cache_fills_free(struct cache_fills *f)
{
    if (!f)
        return;
    for (int i = 0; i < BUCKETS; i++)
        free_list(f->bucket[i]);
    free_list(f->done);
    event_free(f->wake);
    free(f);
}

/* The fill of key in flight, or NULL. */
static struct cache_fill *
pending(const struct cache_fills *f, const char *key, uint64_t h)
{
    struct cache_fill *p;

    for (p = f->bucket[h & (BUCKETS - 1)]; p; p = p->next)
        if (p->hash == h && strcmp(p->key, key) == 0)
            return p;
    return NULL;
}

int
cache_fill_pending(const struct cache_fills *f, const char *key)
{
    return pending(f, key, cache_key_hash(key)) != NULL;
}

int
cache_fill_join(struct cache_fills *f, const char *key, struct cache_fill_waiter *w,
                struct cache_fill **fill)
{
    uint64_t h = cache_key_hash(key);
    struct cache_fill **b = &f->bucket[h & (BUCKETS - 1)], *p;
    size_t len = strlen(key);

    if ((p = pending(f, key, h))) {
        w->next = NULL;
        *p->tail = w;
        p->tail = &w->next;
        if (f->slot)
            scoreboard_add(&f->slot->c.cache_waits, 1);
        return 0;
    }
    if (!(p = malloc(sizeof(*p) + len + 1)))
        return -1;
    p->hash = h;
    p->waiters = NULL;
    p->tail = &p->waiters;
    memcpy(p->key, key, len + 1);
    p->next = *b;
    *b = p;
    *fill = p;
    return 1;
}

void
cache_fill_done(struct cache_fills *f, struct cache_fill *fill)
{
    struct cache_fill **pp = &f->bucket[fill->hash & (BUCKETS - 1)];

    while (*pp && *pp != fill)
        pp = &(*pp)->next;
    if (*pp)
        *pp = fill->next;
    if (!fill->waiters) {
        free(fill);
        return;
    }
    fill->next = f->done;
    f->done = fill;
    event_active(f->wake, EV_TIMEOUT, 0);
}
