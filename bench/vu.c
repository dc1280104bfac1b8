/*
 * vu: see vu.h.
 */
#include "config.h"

#include "bench/vu.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/req.h"
#include "common/clock.h"

#define RAMP_TICK_MS 10
#define REQ_BUF (16 * 1024)
#define START_PAGE (-1)

enum vu_state { VU_OFF, VU_THINKING, VU_REQUEST };

/* One user.  About 600 bytes plus its token: 60,000 of them fit in 50 MB. */
struct vu {
    struct conn conn; /* first: the connection callback finds the user from it */
    struct vu_engine *e;
    struct event timer;
    uint32_t id;
    uint8_t state;
    uint8_t stopping; /* stop when the request in flight ends */
    uint8_t req_idx;
    uint8_t start_failed; /* the session start failed: begin another */
    int16_t page;         /* START_PAGE during the session start */
    struct req_pick pick;
    int64_t page_start_us, session_end_us;
    char *token;
    char *my_slug;
};

struct vu_engine {
    struct conn_ctx *cc;
    const struct profile *prof;
    const struct dataset *ds;
    struct vu_hooks hooks;
    uint64_t rng;
    uint64_t n;
    struct vu **vu;
    int nvu;      /* allocated */
    int running;  /* users 0..running-1 are wanted */
    int active;   /* state != VU_OFF and not stopping */
    int starting; /* active users in their session start */
    int in_flight;
    int ramp_from, ramp_to;
    int64_t ramp_start_us, ramp_end_us;
    struct event ramp;
    char *buf;
};

static void on_done(struct conn *c, const struct conn_result *r);
static void on_timer(evutil_socket_t fd, short what, void *arg);

static const struct prof_page *
page_of(const struct vu *v)
{
    return v->page == START_PAGE ? &v->e->prof->start : &v->e->prof->page[v->page];
}

/* The active count and the starting count follow the state. */
static void
set_off(struct vu *v)
{
    struct vu_engine *e = v->e;

    if (v->state == VU_OFF)
        return;
    if (!v->stopping) {
        e->active--;
        if (v->page == START_PAGE)
            e->starting--;
    }
    event_del(&v->timer);
    conn_close(&v->conn);
    free(v->token);
    free(v->my_slug);
    v->token = v->my_slug = NULL;
    v->state = VU_OFF;
    v->stopping = 0;
}

static void think(struct vu *v);

/* The page (or the session start) is over: think, then the next one. */
static void
page_over(struct vu *v, int failed)
{
    if (v->page == START_PAGE) {
        v->start_failed = (uint8_t)failed;
        v->e->starting--;
        v->page = 0;
    }
    think(v);
}

static void
send_current(struct vu *v)
{
    struct vu_engine *e = v->e;
    const struct prof_page *pg = page_of(v);
    const struct prof_request *r = &pg->req[v->req_idx];
    struct req_vals vals;
    int len;

    v->pick.n = ++e->n;
    v->pick.my_slug = v->my_slug;
    if (req_values(&vals, &v->pick, e->ds, r->path.vars | r->body.vars) < 0 ||
        (len = req_http(e->buf, REQ_BUF, r, &vals, e->cc->host, v->token)) < 0) {
        /* A name the dataset cannot give (an empty table): report, move on. */
        struct conn_result res = {CONN_ETRANSPORT, 0, 0, clock_now_us(), NULL, 0};

        e->hooks.request(e->hooks.arg, r->endpoint, &res);
        page_over(v, 1);
        return;
    }
    v->state = VU_REQUEST;
    e->in_flight++;
    conn_request(&v->conn, e->buf, (size_t)len, r->capture != CAPTURE_NONE);
}

static void
start_session(struct vu *v)
{
    struct vu_engine *e = v->e;
    double f = 0.5 + req_uniform(&e->rng);

    conn_close(&v->conn);
    free(v->token);
    free(v->my_slug);
    v->token = v->my_slug = NULL;
    v->pick.me = 1 + (int64_t)(req_rand(&e->rng) % (uint64_t)e->ds->users);
    v->page = START_PAGE;
    v->req_idx = 0;
    v->page_start_us = clock_now_us();
    v->session_end_us = v->page_start_us + (int64_t)(e->prof->session_s * f * 1e6);
    e->starting++;
    send_current(v);
}

static void
start_page(struct vu *v)
{
    struct vu_engine *e = v->e;
    int p = profile_pick(e->prof, req_uniform(&e->rng));

    if (e->prof->page[p].needs_my_slug && !v->my_slug)
        p = e->prof->page[p].otherwise;
    v->page = (int16_t)p;
    v->req_idx = 0;
    v->page_start_us = clock_now_us();
    req_pick_page(&v->pick, e->ds, &e->rng);
    send_current(v);
}

static void
think(struct vu *v)
{
    const struct profile *p = v->e->prof;
    double s = -p->think_mean_s * log(1 - req_uniform(&v->e->rng));
    struct timeval tv;

    if (s > p->think_cap_s)
        s = p->think_cap_s;
    tv.tv_sec = (time_t)s;
    tv.tv_usec = (suseconds_t)((s - (double)tv.tv_sec) * 1e6);
    v->state = VU_THINKING;
    event_add(&v->timer, &tv);
}

static void
on_timer(evutil_socket_t fd, short what, void *arg)
{
    struct vu *v = arg;

    (void)fd;
    (void)what;
    if (clock_now_us() >= v->session_end_us || v->start_failed) {
        /* Session over (or its start failed): a new user, a new connection. */
        start_session(v);
        return;
    }
    start_page(v);
}

static void
capture(struct vu *v, const struct prof_request *r, const struct conn_result *res)
{
    char val[1024];
    char **slot = r->capture == CAPTURE_TOKEN ? &v->token : &v->my_slug;

    if (!res->body ||
        httpc_json_string(res->body, res->body_len, r->capture == CAPTURE_TOKEN ? "token" : "slug",
                          val, sizeof(val)) < 0)
        return;
    free(*slot);
    *slot = strdup(val);
}

static void
on_done(struct conn *c, const struct conn_result *res)
{
    struct vu *v = (struct vu *)c;
    struct vu_engine *e = v->e;
    const struct prof_page *pg = page_of(v);
    const struct prof_request *r = &pg->req[v->req_idx];
    struct conn_result out = *res;

    e->in_flight--;
    if (out.err == CONN_OK && !profile_expected(r, out.status))
        out.err = CONN_ESTATUS;
    if (out.err == CONN_OK && r->capture != CAPTURE_NONE)
        capture(v, r, &out);
    e->hooks.request(e->hooks.arg, r->endpoint, &out);
    if (v->stopping) {
        set_off(v);
        return;
    }
    /* A page stops at its first failure, as a browser showing an error. */
    if (out.err == CONN_OK && v->req_idx + 1 < pg->nreq) {
        v->req_idx++;
        send_current(v);
        return;
    }
    if (out.err == CONN_OK)
        e->hooks.page(e->hooks.arg, pg->nreq, out.done_us - v->page_start_us);
    /* A login that gave no token is a failed start too. */
    page_over(v, out.err != CONN_OK || (r->capture == CAPTURE_TOKEN && !v->token));
}

static struct vu *
vu_get(struct vu_engine *e, int i)
{
    if (i >= e->nvu) {
        int n = e->nvu ? e->nvu : 64;
        struct vu **grown;

        while (n <= i)
            n *= 2;
        if (!(grown = realloc(e->vu, (size_t)n * sizeof(*grown))))
            return NULL;
        memset(grown + e->nvu, 0, (size_t)(n - e->nvu) * sizeof(*grown));
        e->vu = grown;
        e->nvu = n;
    }
    if (!e->vu[i]) {
        struct vu *v = calloc(1, sizeof(*v));

        if (!v)
            return NULL;
        v->e = e;
        v->id = (uint32_t)i;
        conn_init(&v->conn, e->cc, i, on_done);
        evtimer_assign(&v->timer, e->cc->base, on_timer, v);
        e->vu[i] = v;
    }
    return e->vu[i];
}

/* Brings the wanted users to n: start the missing, stop the extra. */
static void
set_running(struct vu_engine *e, int n)
{
    while (e->running < n) {
        struct vu *v = vu_get(e, e->running);

        if (!v)
            return;
        e->running++;
        if (v->state != VU_OFF && v->stopping) {
            /* Still finishing a request: it simply goes on. */
            v->stopping = 0;
            e->active++;
            if (v->page == START_PAGE)
                e->starting++;
            continue;
        }
        e->active++;
        start_session(v);
    }
    while (e->running > n) {
        struct vu *v = e->vu[--e->running];

        if (v->state == VU_REQUEST) {
            if (!v->stopping) {
                v->stopping = 1;
                e->active--;
                if (v->page == START_PAGE)
                    e->starting--;
            }
        } else {
            set_off(v);
        }
    }
}

static void
on_ramp(evutil_socket_t fd, short what, void *arg)
{
    struct vu_engine *e = arg;
    int64_t now = clock_now_us();
    double f;

    (void)fd;
    (void)what;
    if (now >= e->ramp_end_us) {
        set_running(e, e->ramp_to);
        event_del(&e->ramp);
        return;
    }
    f = (double)(now - e->ramp_start_us) / (double)(e->ramp_end_us - e->ramp_start_us);
    set_running(e, e->ramp_from + (int)((e->ramp_to - e->ramp_from) * f));
}

struct vu_engine *
vu_new(struct conn_ctx *cc, const struct profile *prof, const struct dataset *ds,
       const struct vu_hooks *hooks, uint64_t rng_seed)
{
    struct vu_engine *e = calloc(1, sizeof(*e));

    if (!e || !(e->buf = malloc(REQ_BUF))) {
        free(e);
        return NULL;
    }
    e->cc = cc;
    e->prof = prof;
    e->ds = ds;
    e->hooks = *hooks;
    e->rng = rng_seed ? rng_seed : 0x9e3779b97f4a7c15ULL;
    event_assign(&e->ramp, cc->base, -1, EV_PERSIST, on_ramp, e);
    return e;
}

void
vu_set_users(struct vu_engine *e, int target, double ramp_s)
{
    struct timeval tick = {0, RAMP_TICK_MS * 1000};

    event_del(&e->ramp);
    if (target < 0)
        target = 0;
    /* Going down needs no ramp: the extra users simply leave. */
    if (ramp_s <= 0 || target <= e->running) {
        set_running(e, target);
        return;
    }
    e->ramp_from = e->running;
    e->ramp_to = target;
    e->ramp_start_us = clock_now_us();
    e->ramp_end_us = e->ramp_start_us + (int64_t)(ramp_s * 1e6);
    event_add(&e->ramp, &tick);
}

int
vu_active(const struct vu_engine *e)
{
    return e->active;
}

int
vu_starting(const struct vu_engine *e)
{
    return e->starting;
}

int
vu_in_flight(const struct vu_engine *e)
{
    return e->in_flight;
}

int
vu_ramping(const struct vu_engine *e)
{
    return evtimer_pending(&e->ramp, NULL) != 0;
}

void
vu_set_serial(struct vu_engine *e, uint64_t first)
{
    e->n = first;
}

void
vu_free(struct vu_engine *e)
{
    if (!e)
        return;
    event_del(&e->ramp);
    for (int i = 0; i < e->nvu; i++) {
        if (e->vu[i]) {
            set_off(e->vu[i]);
            free(e->vu[i]);
        }
    }
    free(e->vu);
    free(e->buf);
    free(e);
}
