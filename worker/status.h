/*
 * status: the status listener's requests (status_listen).  A small evhttp
 * of its own beside the API's, in every worker: not the API's router, not
 * its connection cap or its accept pauses, so a scrape is answered while
 * the API is overloaded; a draining worker stops accepting on it as on the
 * public sockets.
 *
 *   GET /metrics       the instance in Prometheus' text format (0.0.4)
 *   GET /status        the instance as JSON; /status?full lists every worker
 *
 * HEAD is answered as GET without the body; other methods get 405, other
 * paths 404.  Bind it to loopback or a private address: it tells anyone
 * who asks how busy the server is (never a token, an email or a body).
 */
#ifndef CONDUITD_STATUS_H
#define CONDUITD_STATUS_H

struct evhttp_request;

/* The evhttp generic callback of the status listener (arg: the struct env). */
void status_dispatch(struct evhttp_request *req, void *arg);

#endif
