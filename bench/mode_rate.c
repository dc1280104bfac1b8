/*
 * mode_rate: `rate --rps R`, an open loop.  Requests arrive at a constant
 * rate whatever the server does, each drawn from the profile's request
 * mix, and go out on the first idle connection (or wait in a queue for
 * one).  Latency runs from the intended send time, so a server that stalls
 * is charged for every request that should have gone out meanwhile (no
 * coordinated omission).  Each connection first opens a session as its
 * own user (the profile's session_start, not measured).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "bench/arrivals.h"
#include "bench/modes.h"
#include "bench/report.h"
#include "bench/req.h"
#include "common/clock.h"

#define REQ_BUF (16 * 1024)

struct rate;

struct slot {
    struct conn conn; /* first: the callback finds the slot from it */
    struct rate *r;
    int setup; /* index of the next session_start request, or -1 when done */
    int ep;
    const struct prof_request *req;
    int64_t intended_us;
    struct req_pick pick;
    char *token;
};

struct rate {
    struct bench *b;
    const struct profile *prof;
    struct slot *slot;
    int nslots;
    int *idle; /* stack of idle slot indexes */
    int nidle;
    int64_t *queue; /* ring of intended times waiting for a connection */
    size_t qcap, qhead, qlen, qmax;
    uint64_t issued, dropped;
    struct event *timer; /* set for the next arrival */
    int64_t t0_us;
    double rps;
    uint64_t rng, n;
    char buf[REQ_BUF];
};

static void send_one(struct slot *s, const struct prof_request *req);

static void
send_setup(struct slot *s)
{
    struct rate *r = s->r;

    send_one(s, &r->prof->start.req[s->setup]);
}

/* Expands and sends req on s; a request that cannot be built is an error. */
static void
send_one(struct slot *s, const struct prof_request *req)
{
    struct rate *r = s->r;
    struct req_vals vals;
    int len;

    s->ep = req->endpoint;
    s->req = req;
    s->pick.n = ++r->n;
    if (s->setup < 0)
        req_pick_page(&s->pick, &r->b->ds, &r->rng);
    if (req_values(&vals, &s->pick, &r->b->ds, req->path.vars | req->body.vars) < 0 ||
        (len = req_http(r->buf, REQ_BUF, req, &vals, r->b->cc.host, s->token)) < 0 ||
        conn_request(&s->conn, r->buf, (size_t)len, req->capture == CAPTURE_TOKEN) < 0) {
        struct conn_result res = {CONN_ETRANSPORT, 0, s->intended_us, clock_now_us(), NULL, 0};

        bench_record(r->b, s->ep, &res);
        r->idle[r->nidle++] = (int)(s - r->slot);
    }
}

static const struct prof_request *
draw(struct rate *r)
{
    return profile_pick_request(r->prof, req_uniform(&r->rng), req_uniform(&r->rng));
}

static void
dispatch(struct rate *r, int64_t intended)
{
    struct slot *s;

    if (!r->nidle) {
        if (r->qlen == r->qcap) {
            r->dropped++; /* a queue of millions: the run is hopeless anyway */
            return;
        }
        r->queue[(r->qhead + r->qlen++) % r->qcap] = intended;
        if (r->qlen > r->qmax)
            r->qmax = r->qlen;
        return;
    }
    s = &r->slot[r->idle[--r->nidle]];
    s->intended_us = intended;
    send_one(s, draw(r));
}

static void
on_done(struct conn *c, const struct conn_result *res)
{
    struct slot *s = (struct slot *)c;
    struct rate *r = s->r;

    if (s->setup >= 0) {
        const struct prof_request *req = &r->prof->start.req[s->setup];
        char tok[1024];

        if (res->err == CONN_OK && req->capture == CAPTURE_TOKEN && res->body &&
            httpc_json_string(res->body, res->body_len, "token", tok, sizeof(tok)) == 0) {
            free(s->token);
            s->token = strdup(tok);
        }
        if (++s->setup < r->prof->start.nreq) {
            send_setup(s);
            return;
        }
        s->setup = -1;
    } else {
        struct conn_result out = *res;

        /* Latency from when the request should have gone out. */
        out.sent_us = s->intended_us;
        if (out.err == CONN_OK && !profile_expected(s->req, out.status))
            out.err = CONN_ESTATUS;
        bench_record(r->b, s->ep, &out);
    }
    if (r->qlen) {
        s->intended_us = r->queue[r->qhead];
        r->qhead = (r->qhead + 1) % r->qcap;
        r->qlen--;
        send_one(s, draw(r));
        return;
    }
    r->idle[r->nidle++] = (int)(s - r->slot);
}

/* Sends every arrival now due, each at its intended time, then waits for the next. */
static void
on_arrival(evutil_socket_t fd, short what, void *arg)
{
    struct rate *r = arg;
    uint64_t due = arrivals_due(r->t0_us, r->rps, clock_now_us());
    int64_t wait;
    struct timeval tv;

    (void)fd;
    (void)what;
    while (r->issued < due) {
        dispatch(r, arrivals_at(r->t0_us, r->rps, r->issued));
        r->issued++;
    }
    wait = arrivals_at(r->t0_us, r->rps, r->issued) - clock_now_us();
    if (wait < 0)
        wait = 0;
    tv.tv_sec = (time_t)(wait / 1000000);
    tv.tv_usec = (suseconds_t)(wait % 1000000);
    evtimer_add(r->timer, &tv);
}

int
mode_rate(struct options *o)
{
    struct profile *prof;
    struct bench b;
    struct rate *r;
    struct level l;
    cJSON *root;
    int rc;

    if (modes_setup(o, &prof, &b) < 0)
        return 2;
    r = calloc(1, sizeof(*r));
    if (!r || !(r->slot = calloc((size_t)o->connections, sizeof(*r->slot))) ||
        !(r->idle = calloc((size_t)o->connections, sizeof(int))) ||
        !(r->queue = calloc(r->qcap = 1u << 20, sizeof(int64_t)))) {
        fprintf(stderr, "conduit-bench: out of memory\n");
        return 2;
    }
    r->b = &b;
    r->prof = prof;
    r->rps = o->rps;
    r->nslots = o->connections;
    b.conns = o->connections;
    r->rng = 0x853c49e6748fea9bULL ^ (uint64_t)clock_now_us();
    b.phase = "login";
    for (int i = 0; i < r->nslots; i++) {
        struct slot *s = &r->slot[i];

        s->r = r;
        conn_init(&s->conn, &b.cc, i, on_done);
        s->pick.me = 1 + (int64_t)(req_rand(&r->rng) % (uint64_t)b.ds.users);
        send_setup(s);
    }
    for (int i = 0; i < 600 && r->nidle < r->nslots; i++)
        bench_wait(&b, 0.05);
    /* Every slot is idle now: arrivals start, the first one at once. */
    r->timer = evtimer_new(b.base, on_arrival, r);
    r->t0_us = clock_now_us();
    on_arrival(-1, 0, r);
    b.phase = "warmup";
    bench_wait(&b, o->warmup_s);
    b.phase = "hold";
    memset(&l, 0, sizeof(l));
    l.users = o->connections;
    l.open_loop = 1;
    l.hold_s = o->duration_s;
    bench_window_begin(&b);
    bench_wait(&b, o->duration_s);
    bench_window_end(&b, &l);
    l.users_mean = o->connections;
    bench_judge(&b, &l);
    event_free(r->timer);
    b.phase = "drain";
    for (int i = 0; i < 100 && r->nidle < r->nslots; i++)
        bench_wait(&b, 0.1);
    printf("conduit-bench rate: %.0f req/s offered, %d connections, against %s\n", o->rps,
           o->connections, b.cc.host);
    report_machine_text(stdout, &b);
    report_level_text(stdout, &l, prof);
    printf("  queue: at most %zu requests waited for a connection; %llu dropped\n", r->qmax,
           (unsigned long long)r->dropped);
    root = modes_json_header(o, &b);
    cJSON_AddNumberToObject(root, "offered_rps", o->rps);
    cJSON_AddNumberToObject(root, "queue_max", (double)r->qmax);
    cJSON_AddNumberToObject(root, "dropped", (double)r->dropped);
    cJSON_AddItemToObject(root, "level", report_level_json(&l, prof));
    rc = l.pass ? 0 : 1;
    level_free(&l);
    for (int i = 0; i < r->nslots; i++) {
        conn_close(&r->slot[i].conn);
        free(r->slot[i].token);
    }
    free(r->slot);
    free(r->idle);
    free(r->queue);
    free(r);
    return modes_finish(o, root, &b, prof, rc);
}
