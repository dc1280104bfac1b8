/*
 * pq_event: the libevent event on one asynchronous libpq connection's
 * socket, for db.c's pool and cache_sync.c's listener.
 *
 * libpq may change the socket between PQconnectPoll steps (and a reconnect
 * opens a new one), so the event is re-made whenever the socket or the
 * events wanted change (docs/design.md, "libpq, asynchronous").
 */
#ifndef CONDUITD_PQ_EVENT_H
#define CONDUITD_PQ_EVENT_H

#include <event2/event.h>
#include <libpq-fe.h>

struct pq_event {
    struct event *ev; /* NULL when not watching */
    int fd;
    short what;
};

/*
 * Watches pg's current socket for what (EV_READ and/or EV_WRITE; the event
 * persists), calling cb(fd, what, arg).  0, or -1 when there is no socket
 * or no memory.
 */
int pq_event_watch(struct pq_event *e, struct event_base *base, PGconn *pg, short what,
                   event_callback_fn cb, void *arg);

/* Stops watching (the connection is about to be closed). */
void pq_event_clear(struct pq_event *e);

#endif
