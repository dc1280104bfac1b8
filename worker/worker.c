/*
 * worker: the event loop of one worker process.  See worker.h.
 *
 * The worker's state is one struct worker: the services its requests get
 * (struct env), the request layer's (struct http_state, worker/http.h),
 * the connections' (struct conn_set, worker/conn.h) and the loop's own.
 * worker_main() holds it for the process's life and hands it, or the part
 * each needs, to every module and callback; only the accept error
 * callbacks, which cannot be given it, find it at file scope (the_worker).
 */
#include "config.h"

#include "worker/worker.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/listener.h>

#include "common/clock.h"
#include "common/listen.h"
#include "common/log.h"
#include "common/proctitle.h"
#include "common/scoreboard.h"
#include "common/settings.h"
#include "worker/access_log.h"
#include "worker/api.h"
#include "worker/bcrypt_pool.h"
#include "worker/cache.h"
#include "worker/cache_fill.h"
#include "worker/cache_peers.h"
#include "worker/cache_sync.h"
#include "worker/conn.h"
#include "worker/db.h"
#include "worker/env.h"
#include "worker/http.h"
#include "worker/metrics.h"
#include "worker/status.h"
#include "worker/replica.h"
#include "worker/routes.h"

#define HEARTBEAT_MS 250
#define ACCEPT_RETRY_MS 100
#define READY_WAIT_MS 5000     /* ready by then even if the pool is still connecting */
#define FD_RESERVE 64          /* descriptors kept for the pool, the log, the threads */
#define INTERRUPT_WAIT_MS 1000 /* SIGINT: how long the master has to follow (see on_signal) */
#define HEADER_BACKSTOP 65536  /* evhttp's header limit, above max_header_size */

struct worker {
    struct env env;             /* the base, the configuration, the services: what requests get */
    struct http_state requests; /* the request layer: what is in flight, being written */
    struct conn_set conns;      /* the client connections: their phases, cap and limits */
    struct evhttp *http;
    int nbound;
    struct evhttp_bound_socket *bound[CONFIG_MAX_LISTEN];
    struct evconnlistener *listener[CONFIG_MAX_LISTEN];
    struct evhttp *status_http; /* status_listen: its own evhttp (worker/status.h) */
    struct evhttp_bound_socket *status_bound;
    struct evconnlistener *status_listener;
    struct event *heartbeat;
    struct event *accept_retry;
    struct event *drain_deadline;
    struct event *accept_close; /* a drain closes the listeners once their queues are empty */
    struct event *retire;       /* ... a pass after disabling them (retire_listeners) */
    int api_stopping;           /* the API's listeners are disabled, to be closed */
    int accept_close_tries;
    struct event *interrupt_wait; /* SIGINT: the master's SIGQUIT, or a stop on our own */
    struct event *ready_wait;
    struct event *signals[5];
    int generation;
    pid_t master_pid;
    int orphaned; /* the master is gone: logged, draining */
    int ready;
    int at_cap;       /* max_connections reached: accepts paused */
    int tearing_down; /* evhttp_free() runs: connection news are ignored */
};

/*
 * The loop batches its epoll changes (EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST):
 * a request turns its socket's read interest off while it is served, write
 * on for the reply, read on again, and each was an epoll_ctl; batched, a
 * socket costs one per loop pass at most, about one less a request
 * (docs/results/20261206-cpu).  The price: a change reaches the kernel at
 * the next pass, after the callbacks.  A descriptor closed before then
 * leaves no trace if it was the socket's last (the kernel forgets a closed
 * socket), but if the socket stays open elsewhere (a duplicate, or a
 * listener the master and the other workers hold too), the kernel keeps
 * the registration under the closed number and goes on waking this worker
 * for it, at full CPU when the socket is writable.  So the listeners are
 * retired in two passes (retire_listeners), and conn.c's lingering close
 * keeps evhttp's descriptor instead of a duplicate; t/integration/epoll_fds.sh
 * checks both.
 */
static struct event_base *
loop_new(void)
{
    struct event_config *cfg = event_config_new();
    struct event_base *base;

    if (!cfg)
        return NULL;
    event_config_set_flag(cfg, EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST);
    base = event_base_new_with_config(cfg);
    event_config_free(cfg);
    return base;
}

/*
 * The process's worker (worker_main's), for the two callbacks that cannot
 * be handed it: evconnlistener gives its error callback the listener's
 * argument, which evhttp_bind_listener took for its own accept callback
 * (the evhttp, which carries no argument of ours).  Every other callback
 * is given the worker, or its part, as its argument.
 */
static struct worker *the_worker;

/*
 * A draining worker exits once nothing is in flight, every reply is
 * written, no connection is in the middle of sending a request (one
 * accepted just before the drain began is served, not dropped), and no
 * lingering close is left (exiting would close those sockets with what
 * their clients still send unread: a reset, instead of the end of the
 * stream after the reply).
 */
/* A listener is still open: a drain closes them once their queues are empty. */
static int
listening(const struct worker *w)
{
    for (int i = 0; i < w->nbound; i++)
        if (w->bound[i])
            return 1;
    return 0;
}

static void
exit_if_drained(struct worker *w)
{
    if (w->env.draining && http_in_flight(&w->requests) == 0 && http_sending(&w->requests) == 0 &&
        conn_active(&w->conns) == 0 && conn_lingering(&w->conns) == 0 && !listening(w))
        event_base_loopexit(w->env.base, NULL);
}

/* http.c's news: a request ended or a reply was written. */
static void
on_http_settled(void *arg)
{
    exit_if_drained(arg);
}

static void drain(struct worker *w);

/*
 * The master is gone when the worker's parent is another process: init, or
 * a subreaper, adopted it.  The kernel's parent-death signal (SIGTERM, set
 * in watch_master) says so at once; the heartbeat looks too, in case that
 * signal was lost (it is reset when credentials change, say).  The worker
 * then drains as on SIGTERM: it answers what it has read and exits within
 * graceful_timeout, so no unsupervised worker keeps the port.
 */
static int
master_gone(struct worker *w)
{
    if (getppid() == w->master_pid)
        return 0;
    if (!w->orphaned) {
        w->orphaned = 1;
        log_error("the master (pid %d) is gone: draining and exiting; restart conduitd",
                  (int)w->master_pid);
    }
    drain(w);
    return 1;
}

/*
 * The heartbeat comes from a timer in the loop itself, so a loop that is
 * stuck (a busy handler, a blocking call) stops it, and the master notices.
 * It also looks for the master (master_gone).
 */
static void
on_heartbeat(evutil_socket_t fd, short what, void *arg)
{
    struct worker *w = arg;

    (void)fd;
    (void)what;
    atomic_store_explicit(&w->env.slot->heartbeat_ms, clock_now_ms(), memory_order_relaxed);
    master_gone(w);
}

/*
 * Asks the kernel for SIGTERM when the master dies.  After the privileges
 * are dropped (a change of credentials clears the request), and followed by
 * a look at the parent, for a master that died before the request was made.
 */
static void
watch_master(struct worker *w)
{
    if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0)
        log_warning("cannot ask for a signal at the master's death (%s): the heartbeat "
                    "watches it instead",
                    strerror(errno));
    if (getppid() != w->master_pid)
        kill(getpid(), SIGTERM); /* blocked until the loop handles it: see setup_signals */
}

static void
set_accepting(struct worker *w, int on)
{
    for (int i = 0; i < w->nbound; i++) {
        if (!w->listener[i])
            continue;
        if (on)
            evconnlistener_enable(w->listener[i]);
        else
            evconnlistener_disable(w->listener[i]);
    }
}

static void
on_accept_retry(evutil_socket_t fd, short what, void *arg)
{
    struct worker *w = arg;

    (void)fd;
    (void)what;
    if (w->ready && !w->env.draining && !w->at_cap)
        set_accepting(w, 1);
    if (w->status_listener && !w->env.draining)
        evconnlistener_enable(w->status_listener);
}

/* accept() failed on the status socket: pause it alone, as on_accept_error does the API's. */
static void
on_status_accept_error(struct evconnlistener *l, void *arg)
{
    struct worker *w = the_worker; /* arg is evhttp's (see the_worker) */
    struct timeval tv = {0, ACCEPT_RETRY_MS * 1000};

    (void)arg;
    log_warning("accept failed on the status socket: %s; pausing it for %d ms",
                strerror(EVUTIL_SOCKET_ERROR()), ACCEPT_RETRY_MS);
    evconnlistener_disable(l);
    event_add(w->accept_retry, &tv);
}

/*
 * accept() failed.  Out of descriptors (EMFILE, ENFILE) or memory, the
 * listener would fail again at once, in a loop at full CPU: pause it.
 */
static void
on_accept_error(struct evconnlistener *l, void *arg)
{
    struct worker *w = the_worker; /* arg is evhttp's (see the_worker) */
    int err = EVUTIL_SOCKET_ERROR();
    struct timeval tv = {0, ACCEPT_RETRY_MS * 1000};

    (void)l;
    (void)arg;
    log_warning("accept failed: %s; pausing accepts for %d ms", strerror(err), ACCEPT_RETRY_MS);
    set_accepting(w, 0);
    event_add(w->accept_retry, &tv);
}

/* conn.c's news (worker/conn.h): the cap reached or left, or one connection settled. */
static void
on_conn_event(enum conn_news news, void *arg)
{
    struct worker *w = arg;

    if (w->tearing_down)
        return;
    if (news == CONN_FULL) {
        w->at_cap = 1;
        set_accepting(w, 0);
    } else if (news == CONN_ROOM) {
        w->at_cap = 0;
        if (w->ready && !w->env.draining)
            set_accepting(w, 1);
    }
    exit_if_drained(w);
}

/*
 * Closing a listener takes two passes of the loop.  Its socket is the
 * master's and the other workers' too, so closing this worker's descriptor
 * does not close it, and with the epoll changes batched (loop_new) the
 * listener's removal from epoll would reach the kernel only after the
 * close: the kernel would go on waking this worker for every connection
 * the others take.  So stop_status and stop_accepting only disable their
 * listeners; retire_listeners, a pass later, when the loop has applied
 * that, closes them.
 */
static void
retire_later(struct worker *w)
{
    static const struct timeval next_pass = {0, 0};

    evtimer_add(w->retire, &next_pass);
}

/* A retiring worker leaves the scrapes to the others, as it leaves them new requests. */
static void
stop_status(struct worker *w)
{
    if (w->status_listener)
        evconnlistener_disable(w->status_listener);
    retire_later(w);
}

static void
stop_accepting(struct worker *w)
{
    set_accepting(w, 0);
    w->api_stopping = 1;
    retire_later(w);
}

static void
on_drain_deadline(evutil_socket_t fd, short what, void *arg)
{
    struct worker *w = arg;

    (void)fd;
    (void)what;
    log_warning("graceful timeout: exiting with %lld request(s) still in flight",
                (long long)http_in_flight(&w->requests));
    event_base_loopbreak(w->env.base);
}

/* Connections the kernel completed and no worker accepted yet, on any listener. */
static int
accept_queue_pending(const struct worker *w)
{
    for (int i = 0; i < w->nbound; i++) {
        struct pollfd pfd = {.events = POLLIN};
        if (!w->listener[i])
            continue;
        pfd.fd = evconnlistener_get_fd(w->listener[i]);
        if (poll(&pfd, 1, 0) > 0 && (pfd.revents & POLLIN))
            return 1;
    }
    return 0;
}

/*
 * Closing the last descriptor of a listening socket resets every
 * connection still in its accept queue: clients whose connect() had
 * succeeded read a reset on their first request (2 of 31,550 in a strict
 * TERM test on a loaded machine).  So a drain closes its listeners only
 * once their queues are empty, accepting (and serving, with "Connection:
 * close") what is there meanwhile, for at most ACCEPT_CLOSE_TRIES passes of
 * ACCEPT_CLOSE_MS: the window left is the microseconds between that check
 * and the close.  Accepts paused at the connection cap do not wait.
 */
#define ACCEPT_CLOSE_MS 5
#define ACCEPT_CLOSE_TRIES 20

/* Connections still wait in the queues, and the drain may yet take them. */
static int
queued_to_take(const struct worker *w)
{
    return !w->at_cap && w->ready && w->accept_close_tries < ACCEPT_CLOSE_TRIES &&
           accept_queue_pending(w);
}

/* Accept for ACCEPT_CLOSE_MS more, then look at the queues again. */
static void
accept_a_while(struct worker *w)
{
    struct timeval tv = {0, ACCEPT_CLOSE_MS * 1000};

    w->accept_close_tries++;
    evtimer_add(w->accept_close, &tv);
}

static void
on_accept_close(evutil_socket_t fd, short what, void *arg)
{
    struct worker *w = arg;

    (void)fd;
    (void)what;
    if (queued_to_take(w)) {
        accept_a_while(w);
        return;
    }
    stop_accepting(w); /* retire_listeners then exits if drained */
}

/*
 * The second pass of closing listeners (see retire_later).  A connection
 * that reached the API's queues since on_accept_close found them empty is
 * accepted first, as that one says why, within the same ACCEPT_CLOSE_TRIES.
 */
static void
retire_listeners(evutil_socket_t fd, short what, void *arg)
{
    struct worker *w = arg;

    (void)fd;
    (void)what;
    if (w->env.draining && w->status_bound) { /* stop_status: drain() disabled it */
        evhttp_del_accept_socket(w->status_http, w->status_bound); /* frees the listener too */
        w->status_bound = NULL;
        w->status_listener = NULL;
    }
    if (!w->api_stopping)
        return;
    if (queued_to_take(w)) {
        w->api_stopping = 0;
        set_accepting(w, 1);
        accept_a_while(w);
        return;
    }
    for (int i = 0; i < w->nbound; i++) {
        if (w->bound[i])
            evhttp_del_accept_socket(w->http, w->bound[i]); /* frees the listener too */
        w->bound[i] = NULL;
        w->listener[i] = NULL;
    }
    exit_if_drained(w);
}

/* SIGTERM: stop accepting, let what is in flight finish, then exit. */
static void
drain(struct worker *w)
{
    struct timeval tv = {w->env.cfg->graceful_timeout, 0};

    if (w->env.draining)
        return;
    w->env.draining = 1;
    stop_status(w);
    atomic_store(&w->env.slot->state, SLOT_DRAINING);
    event_active(w->accept_close, EV_TIMEOUT, 0);
    conn_drain(&w->conns);
    log_info("draining: %lld request(s) in flight, %d connection(s) open",
             (long long)http_in_flight(&w->requests), conn_count(&w->conns));
    event_add(w->drain_deadline, &tv);
    exit_if_drained(w);
}

/* SIGINT came to this worker alone: the master did not follow with SIGQUIT. */
static void
on_interrupt_wait(evutil_socket_t fd, short what, void *arg)
{
    struct worker *w = arg;

    (void)fd;
    (void)what;
    log_info("fast shutdown (SIGINT)");
    event_base_loopbreak(w->env.base);
}

static void
on_signal(evutil_socket_t sig, short what, void *arg)
{
    struct worker *w = arg;
    struct timeval wait = {INTERRUPT_WAIT_MS / 1000, (INTERRUPT_WAIT_MS % 1000) * 1000};

    (void)what;
    switch (sig) {
    case SIGTERM:
        if (!master_gone(w))
            drain(w);
        break;
    case SIGINT:
        /*
         * Ctrl-C in a terminal reaches every process of the group, and the
         * master answers its copy with SIGQUIT to each worker.  A worker
         * that exited on its own copy first would look to the master like
         * one that died, to be replaced (the kernel sends the copies one by
         * one: under load the master's came 500 ms after the workers had
         * gone).  So the worker waits for the master's word, and stops on
         * its own only if none comes (SIGINT sent to this worker alone).
         */
        if (!evtimer_pending(w->interrupt_wait, NULL))
            evtimer_add(w->interrupt_wait, &wait);
        break;
    case SIGQUIT:
        log_info("fast shutdown");
        event_base_loopbreak(w->env.base);
        break;
    case SIGUSR1:
        if (log_reopen() < 0)
            log_warning("could not reopen the log: %s", strerror(errno));
        if (access_log_reopen(w->env.access) < 0)
            log_warning("could not reopen the access log %s: %s", w->env.cfg->access_log,
                        strerror(errno));
        break;
    default:
        break; /* SIGHUP: reloads are the master's; a worker ignores it */
    }
}

static int
setup_signals(struct worker *w)
{
    static const int sigs[] = {SIGTERM, SIGINT, SIGQUIT, SIGUSR1, SIGHUP};
    sigset_t none;

    for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
        w->signals[i] = evsignal_new(w->env.base, sigs[i], on_signal, w);
        if (!w->signals[i] || event_add(w->signals[i], NULL) < 0)
            return -1;
    }
    /* The master forked the worker with every signal blocked: handled now, they may come. */
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    return 0;
}

/*
 * The connection cap: max_connections, but never so close to the open
 * file limit that accept() would fail with EMFILE (in a loop, at full CPU).
 */
static int
connection_cap(const struct config *c)
{
    struct rlimit rl;
    int cap = c->max_connections;

    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        (rlim_t)cap + FD_RESERVE > rl.rlim_cur) {
        int fit = rl.rlim_cur > 2 * FD_RESERVE ? (int)(rl.rlim_cur - FD_RESERVE) : FD_RESERVE;
        log_info("max_connections %d lowered to %d: the open file limit is %llu", cap, fit,
                 (unsigned long long)rl.rlim_cur);
        cap = fit;
    }
    return cap;
}

/*
 * The responses after which this worker asks to be replaced: max_requests
 * plus a random part of up to max_requests_jitter, which spreads the
 * workers' replacements (gunicorn's); 0 for never.
 */
static uint64_t
request_limit(const struct config *c)
{
    uint64_t x = (uint64_t)getpid() * 0x9E3779B97F4A7C15ull ^ (uint64_t)time(NULL);

    if (c->max_requests <= 0)
        return 0;
    return (uint64_t)c->max_requests +
           (c->max_requests_jitter ? (x >> 17) % ((uint64_t)c->max_requests_jitter + 1) : 0);
}

static int
setup_http(struct worker *w, struct listener_set *ls)
{
    const struct config *c = w->env.cfg;
    struct evbuffer *reject;

    w->http = evhttp_new(w->env.base);
    if (!w->http ||
        conn_init(&w->conns, w->env.base, connection_cap(c), c->header_timeout, c->idle_timeout,
                  c->send_timeout, &w->env.draining, on_conn_event, w) < 0)
        return -1;
    evhttp_set_bevcb(w->http, conn_bevcb, &w->conns);
    evhttp_set_max_body_size(w->http, c->max_body_size);
    /*
     * max_header_size is counted in conn.c, which answers in JSON; evhttp's
     * own limit (its HTML 400) is a backstop above it, never reached: the
     * count stops reading at the limit, one read (16 kB at most) past it.
     */
    reject = http_header_too_large_reply();
    if (!reject)
        return -1;
    conn_set_max_header(&w->conns, (size_t)c->max_header_size, reject);
    for (int f = REQHEAD_FAULT_NONE + 1; f < REQHEAD_NFAULTS; f++) {
        reject = http_raw_error_reply(reqhead_fault_status(f), reqhead_fault_str(f));
        if (!reject)
            return -1;
        conn_set_fault_reply(&w->conns, f, reject);
    }
    evhttp_set_max_headers_size(w->http, (size_t)c->max_header_size + HEADER_BACKSTOP);
    evhttp_set_timeout(w->http, c->idle_timeout);
    evhttp_set_default_content_type(w->http, "application/json; charset=utf-8");
    evhttp_set_allowed_methods(w->http, EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_PUT |
                                            EVHTTP_REQ_DELETE | EVHTTP_REQ_HEAD |
                                            EVHTTP_REQ_OPTIONS | EVHTTP_REQ_PATCH);
    http_init(&w->requests, &w->env, &w->conns, api_gate, sizeof(struct api_req), request_limit(c),
              on_http_settled, w);
    evhttp_set_gencb(w->http, http_dispatch, &w->requests);

    for (int i = 0; i < ls->n; i++) {
        struct listener *l = &ls->l[i];
        int fd = ls->reuseport ? listen_reuseport_socket(l) : l->fd;
        if (fd < 0) {
            log_error("cannot open a reuseport socket on %s: %s", l->name, strerror(errno));
            return -1;
        }
        /*
         * Backlog 0: the socket already listens.  Disabled until the worker
         * is ready (become_ready): what it accepted before could only get 503.
         */
        w->listener[i] = evconnlistener_new(
            w->env.base, NULL, NULL,
            LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC | LEV_OPT_DISABLED, 0, fd);
        if (!w->listener[i])
            return -1;
        evconnlistener_set_error_cb(w->listener[i], on_accept_error);
        w->bound[i] = evhttp_bind_listener(w->http, w->listener[i]);
        if (!w->bound[i])
            return -1;
        w->nbound++;
    }
    return 0;
}

/*
 * The status listener: its own small evhttp on the master's socket, with
 * no connection cap and no pause at the API's, so a scrape is answered
 * while the API is saturated.  A scrape is a few hundred bytes in, a few
 * kilobytes out: small limits, and a short idle timeout.
 */
#define STATUS_TIMEOUT_S 10
#define STATUS_MAX_HEADERS 8192

static int
setup_status(struct worker *w, const struct listener *l)
{
    if (metrics_routes_fit(w->env.nroutes) < 0)
        fatal("the route table has more entries than the scoreboard has rows");
    if (!l)
        return 0;
    w->status_http = evhttp_new(w->env.base);
    if (!w->status_http)
        return -1;
    evhttp_set_timeout(w->status_http, STATUS_TIMEOUT_S);
    evhttp_set_max_headers_size(w->status_http, STATUS_MAX_HEADERS);
    evhttp_set_max_body_size(w->status_http, 0);
    evhttp_set_allowed_methods(w->status_http, EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_PUT |
                                                   EVHTTP_REQ_DELETE | EVHTTP_REQ_HEAD |
                                                   EVHTTP_REQ_OPTIONS | EVHTTP_REQ_PATCH);
    evhttp_set_gencb(w->status_http, status_dispatch, &w->env);
    /* Backlog 0: the master listens already; the descriptor is this process's copy. */
    w->status_listener = evconnlistener_new(
        w->env.base, NULL, NULL, LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, 0, l->fd);
    if (!w->status_listener)
        return -1;
    evconnlistener_set_error_cb(w->status_listener, on_status_accept_error);
    w->status_bound = evhttp_bind_listener(w->status_http, w->status_listener);
    return w->status_bound ? 0 : -1;
}

/*
 * Readiness is what the master waits for before it retires the old
 * generation of a reload: the new worker says so once its database pool
 * can take queries (or PostgreSQL is found down, or READY_WAIT_MS passed).
 */
static void
become_ready(void *arg)
{
    struct worker *w = arg;

    if (w->ready)
        return;
    w->ready = 1;
    evtimer_del(w->ready_wait);
    if (!w->env.draining && !w->at_cap)
        set_accepting(w, 1);
    atomic_store(&w->env.slot->state, SLOT_READY);
    log_debug("ready (generation %d, %d database connection(s) up)", w->generation,
              db_pool_ready(w->env.db));
}

static void
on_ready_wait(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    become_ready(arg);
}

/*
 * libpq's "options" for every session of a pool (the primary's and the
 * standbys').  First the planner settings the statements are written for
 * (sql/queries.sql, "Plans"; the reasons are in sql/schema.sql, which also
 * sets them on the database): a database copied with CREATE DATABASE ...
 * TEMPLATE, or restored from a dump without --create, does not carry them,
 * and without them every list statement is planned again at each call
 * (0.3 to 0.4 ms).  Then whatever options the connection string (or else
 * PGOPTIONS) holds, which may override them.  Last, with notify (cache
 * sync on), conduit.cache_notify=on, so the schema's triggers notify the
 * other workers' caches of every write.  NULL, logged, when conninfo
 * (whose: "database" or "db_read") does not parse or memory ran out.
 * The caller frees the result.
 */
static char *
session_options(const char *conninfo, int notify, const char *whose)
{
    static const char plans[] =
        "-c plan_cache_mode=force_generic_plan -c jit=off -c random_page_cost=1.1";
    static const char sync[] = " -c conduit.cache_notify=on";
    char *err = NULL;
    PQconninfoOption *opts = PQconninfoParse(conninfo, &err);
    const char *theirs = NULL;
    char *out;

    if (!opts) {
        log_error("the %s connection string is invalid: %s", whose, err ? err : "out of memory");
        PQfreemem(err);
        return NULL;
    }
    for (const PQconninfoOption *o = opts; o->keyword; o++)
        if (strcmp(o->keyword, "options") == 0)
            theirs = o->val;
    if (!theirs)
        theirs = getenv("PGOPTIONS");
    if (!theirs)
        theirs = "";
    out = malloc(sizeof(plans) + 1 + strlen(theirs) + sizeof(sync));
    if (out)
        sprintf(out, "%s%s%s%s", plans, *theirs ? " " : "", theirs, notify ? sync : "");
    else
        log_error("out of memory");
    PQconninfoFree(opts);
    return out;
}

/*
 * Instances that share the database must share the cache's notifications
 * (worker/cache_peers.h): a worker whose writes send none says so on the
 * cached instances' channel, and a cached worker hears such words from the
 * others.  The instance is named by its host and its master's pid.
 */
static int
setup_peers(struct worker *w)
{
    const struct config *c = w->env.cfg;
    char host[64], self[96];

    if (gethostname(host, sizeof(host)) < 0)
        snprintf(host, sizeof(host), "?");
    host[sizeof(host) - 1] = '\0';
    snprintf(self, sizeof(self), "%s pid %d", host, (int)w->master_pid);
    w->env.peers = cache_peers_new(w->env.base, w->env.db, self, !(c->cache && c->cache_sync));
    if (!w->env.peers) {
        log_error("out of memory");
        return -1;
    }
    if (w->env.sync)
        cache_sync_hear_peers(w->env.sync, w->env.peers);
    return 0;
}

/*
 * The table of recent writers, for those who read it: the standbys'
 * reads (a caller's next read waits for its write) and the cache's stale
 * answers (never a value read before the caller's write).  A user's slot
 * may go to another once the write it holds is older than both need: the
 * standbys' lag rule covers a write older than db_read_max_lag, and a
 * stale value is given at most cache_stale_max after it was last known
 * current, which was before the write's stamp (a second for the moment
 * between the note and the stamp, and for a busy loop).
 */
static void
note_writes(struct worker *w, struct lastwrite *writes)
{
    const struct config *c = w->env.cfg;
    int64_t lag = c->db_read ? c->db_read_max_lag : 0;
    int64_t stale = c->cache ? c->cache_stale_max : 0;

    if (!c->db_read && !stale)
        return; /* nobody reads it: no write pays for noting */
    w->env.writes = writes;
    w->env.writes_horizon_ns = ((lag > stale ? lag : stale) + 1000) * 1000000;
}

/*
 * The database pool, the standbys' (db_read), the hashing threads, the
 * access log and a handle on the instance's cache.  The connection string
 * is --db / db, else DATABASE_URL, else libpq's own PG* variables and
 * defaults.  The standbys' reads wait for the writes any worker noted in
 * writes; the cache judges staleness by the stamps every worker bumps.  Any
 * failure here (a connection string that cannot parse, an access log that
 * cannot open, memory) will not mend by itself, so the worker exits with
 * the fatal status and the master stops respawning until a reload brings
 * another configuration.
 */
static int
setup_services(struct worker *w, struct lastwrite *writes, struct stamps *stamps)
{
    const struct config *c = w->env.cfg;
    const char *conninfo = c->db ? c->db : getenv("DATABASE_URL");
    char *options;

    if (!conninfo)
        conninfo = "";
    if (!(options = session_options(conninfo, c->cache && c->cache_sync, "database")))
        return -1;
    w->env.db = db_pool_new(w->env.base, conninfo, options, c->pool, c->pool_queue,
                            c->queue_timeout, w->env.slot);
    if (w->env.db)
        db_pool_standing(w->env.db, c->queue_standing_timeout);
    free(options);
    w->env.bcrypt = bcrypt_pool_new(w->env.base, c->bcrypt_threads, c->bcrypt_cost, c->bcrypt_queue,
                                    c->queue_timeout, w->env.slot);
    if (!w->env.db || !w->env.bcrypt) {
        log_error("cannot create the database pool or the hashing threads");
        return -1;
    }
    note_writes(w, writes);
    if (c->db_read) {
        if (!(options = session_options(c->db_read, 0, "db_read")))
            return -1;
        w->env.replica = replica_new(w->env.base, c, options, w->env.db, writes, w->env.slot);
        free(options);
        if (!w->env.replica) {
            log_error("cannot create the standbys' pool");
            return -1;
        }
    }
    if (c->access_log && strcmp(c->access_log, "off") != 0) {
        char why[512];
        w->env.access = access_log_open(w->env.base, c->access_log,
                                        c->access_log_format == CONFIG_ACCESS_LOG_JSON,
                                        w->env.index, why, sizeof(why));
        if (!w->env.access) {
            log_error("%s", why);
            return -1;
        }
    }
    if (c->cache) {
        /* A handle on the instance's cache, sized by the master (cache_size, cache_memory). */
        w->env.cache = cache_new(w->env.zone, stamps, w->env.slot);
        if (w->env.cache) {
            cache_stale_max(w->env.cache, c->cache_stale_max);
            if (cache_min_uses(w->env.cache, (unsigned)c->cache_min_uses) < 0)
                log_warning("cache_min_uses %d: out of memory for its table; every value is "
                            "stored at once",
                            c->cache_min_uses);
        }
        if (w->env.cache && !(w->env.fills = cache_fills_new(w->env.base, w->env.slot)))
            log_warning("cannot share the cache's fills: each miss sends its own statement");
        if (w->env.cache && c->cache_sync)
            w->env.sync = cache_sync_new(w->env.base, conninfo, "conduitd cache", w->env.cache);
        else if (w->env.cache)
            cache_enable(w->env.cache, 1); /* a static deployment: nothing to listen for */
        if (!w->env.cache || (c->cache_sync && !w->env.sync)) {
            log_error("cannot create the cache");
            return -1;
        }
    }
    return setup_peers(w);
}

static void
teardown(struct worker *w)
{
    sigset_t all;

    /*
     * No signal is handled from here on, and none may take its default
     * action either: freeing the signal events below restores those, and a
     * stop signal may still come (Ctrl-C reaches the workers and the
     * master, which then sends each SIGQUIT).  The worker is exiting
     * already; blocked, such a signal dies with it instead of killing it
     * first ("killed by signal 3" in the master's log).
     */
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, NULL);
    http_abort_all(&w->requests); /* before the pools: a ctx's state may hold their jobs */
    bcrypt_pool_free(w->env.bcrypt);
    cache_sync_free(w->env.sync);
    cache_free(w->env.cache);
    replica_free(w->env.replica); /* first: its reads may have gone to the primary's pool */
    db_pool_free(w->env.db);
    cache_peers_free(w->env.peers); /* after the pool, which may still answer its announcement */
    cache_fills_free(w->env.fills); /* after the pools: nothing can end a fill any more */
    w->tearing_down = 1;
    if (w->http)
        evhttp_free(w->http); /* closes every connection still open */
    if (w->status_http)
        evhttp_free(w->status_http);
    access_log_close(w->env.access); /* writes what is buffered */
    conn_shutdown(&w->conns);
    for (size_t i = 0; i < sizeof(w->signals) / sizeof(w->signals[0]); i++)
        if (w->signals[i])
            event_free(w->signals[i]);
    if (w->heartbeat)
        event_free(w->heartbeat);
    if (w->accept_retry)
        event_free(w->accept_retry);
    if (w->drain_deadline)
        event_free(w->drain_deadline);
    if (w->accept_close)
        event_free(w->accept_close);
    if (w->retire)
        event_free(w->retire);
    if (w->interrupt_wait)
        event_free(w->interrupt_wait);
    if (w->ready_wait)
        event_free(w->ready_wait);
    if (w->env.scratch)
        evbuffer_free(w->env.scratch);
    if (w->env.base)
        event_base_free(w->env.base);
}

void
worker_main(const struct worker_args *a)
{
    struct worker worker = {0}; /* never returns: lives as long as the process */
    struct worker *w = &worker;
    struct timeval hb = {0, HEARTBEAT_MS * 1000};
    char role[32];
    int status = 0;

    snprintf(role, sizeof(role), "worker %d", a->index);
    log_set_role(role);
    proctitle_set("conduitd: worker %d", a->index);

    the_worker = w;
    w->master_pid = a->master_pid;
    watch_master(w);
    w->env.cfg = a->cfg;
    w->env.routes = routes;
    w->env.nroutes = nroutes;
    w->env.index = a->index;
    w->env.slot = &a->sb->slots[a->slot];
    w->env.sb = a->sb;
    w->env.zone = a->zone;
    atomic_store(&w->env.slot->pid, (int)getpid());
    atomic_store(&w->env.slot->heartbeat_ms, clock_now_ms());

    w->env.base = loop_new();
    w->env.scratch = evbuffer_new();
    if (!w->env.base || !w->env.scratch)
        fatal("cannot create the event loop");
    w->heartbeat = event_new(w->env.base, -1, EV_PERSIST, on_heartbeat, w);
    w->accept_retry = evtimer_new(w->env.base, on_accept_retry, w);
    w->drain_deadline = evtimer_new(w->env.base, on_drain_deadline, w);
    w->accept_close = evtimer_new(w->env.base, on_accept_close, w);
    w->retire = evtimer_new(w->env.base, retire_listeners, w);
    w->interrupt_wait = evtimer_new(w->env.base, on_interrupt_wait, w);
    w->ready_wait = evtimer_new(w->env.base, on_ready_wait, w);
    if (!w->heartbeat || !w->accept_retry || !w->drain_deadline || !w->accept_close || !w->retire ||
        !w->interrupt_wait || !w->ready_wait || event_add(w->heartbeat, &hb) < 0 ||
        setup_signals(w) < 0)
        fatal("cannot create the loop's events");

    if (setup_http(w, a->listeners) < 0 || setup_status(w, a->status) < 0) {
        log_error("cannot set up HTTP; exiting");
        teardown(w);
        exit(1);
    }
    if (setup_services(w, &a->sb->writes, &a->sb->stamps) < 0) {
        teardown(w);
        exit(WORKER_EXIT_FATAL);
    }

    w->generation = a->generation;
    {
        struct timeval tv = {READY_WAIT_MS / 1000, (READY_WAIT_MS % 1000) * 1000};
        evtimer_add(w->ready_wait, &tv);
    }
    db_pool_on_settled(w->env.db, become_ready, w);
    if (event_base_dispatch(w->env.base) < 0)
        status = 1;
    /* The count lets a load generator check its own against the server's. */
    log_info("exiting after %llu response(s), %llu with a 5xx status",
             (unsigned long long)atomic_load(&w->env.slot->requests),
             (unsigned long long)atomic_load(&w->env.slot->errors));
    teardown(w);
    exit(status);
}
