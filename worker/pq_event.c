/*
 * pq_event: see pq_event.h.
 */
#include "config.h"

#include "worker/pq_event.h"

int
pq_event_watch(struct pq_event *e, struct event_base *base, PGconn *pg, short what,
               event_callback_fn cb, void *arg)
{
    int fd = PQsocket(pg);

    if (fd < 0)
        return -1;
    if (e->ev && e->fd == fd && e->what == what)
        return 0;
    pq_event_clear(e);
    e->ev = event_new(base, fd, what | EV_PERSIST, cb, arg);
    if (!e->ev || event_add(e->ev, NULL) < 0)
        return -1;
    e->fd = fd;
    e->what = what;
    return 0;
}

void
pq_event_clear(struct pq_event *e)
{
    if (e->ev)
        event_free(e->ev);
    e->ev = NULL;
    e->fd = -1;
}
