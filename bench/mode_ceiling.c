/*
 * mode_ceiling: `ceiling`, what PostgreSQL alone sustains.  The profile's
 * request mix is replayed as the SQL the server would run for it (each
 * request's "sql": a statement of sql/queries.sql, the generated table
 * sql/queries.c, with its parameters), straight through libpq: pipelined,
 * each statement its own transaction as the server's are, on as many
 * connections as the server would hold (workers x pool).  No HTTP, no
 * JSON, no bcrypt: the rate it reaches is the physical limit of the
 * server on this machine, and `compare` gives the server's rate as a
 * fraction of it.
 */
#include "config.h"

#include "bench/ceiling.h"

#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/modes.h"
#include "bench/report.h"
#include "bench/req.h"
#include "common/clock.h"
#include "sql/direct.h"
#include "sql/queries.h"

struct pgc;

struct ceiling {
    struct bench *b;
    const struct profile *prof;
    struct pgc *c;
    int nconns, depth;
    double p_start; /* share of requests that are session starts */
    uint64_t rng, n;
    int stopping;
};

struct pgc {
    struct ceiling *cl;
    PGconn *pg;
    struct event *ev;
    int inflight;
    int head;      /* oldest in the rings */
    int64_t *sent; /* [depth] */
    int *ep;       /* [depth] */
    int *failed;   /* [depth] */
    int writing;
};

/* A request of the mix, session starts included at their share. */
static const struct prof_request *
draw(struct ceiling *cl)
{
    const struct profile *p = cl->prof;

    if (req_uniform(&cl->rng) < cl->p_start)
        return &p->start.req[req_rand(&cl->rng) % (uint64_t)p->start.nreq];
    return profile_pick_request(p, req_uniform(&cl->rng), req_uniform(&cl->rng));
}

static int
send_one(struct pgc *c)
{
    struct ceiling *cl = c->cl;
    const struct prof_request *r;
    struct req_pick pick = {0};
    struct req_vals vals;
    char params[PROF_MAX_PARAMS][512];
    const char *values[PROF_MAX_PARAMS];
    int slot = (c->head + c->inflight) % cl->depth;

    /* Requests without SQL (none in the default profile) are skipped. */
    for (int tries = 0;; tries++) {
        r = draw(cl);
        if (r->sql.query >= 0)
            break;
        if (tries > 1000)
            return -1;
    }
    pick.me = 1 + (int64_t)(req_rand(&cl->rng) % (uint64_t)cl->b->ds.users);
    req_pick_page(&pick, &cl->b->ds, &cl->rng);
    pick.n = ++cl->n;
    for (int i = 0; i < r->sql.nparams; i++) {
        values[i] = NULL;
        if (r->sql.is_null[i])
            continue;
        if (req_values(&vals, &pick, &cl->b->ds, r->sql.param[i].vars) < 0 ||
            profile_expand(&r->sql.param[i], &vals.v, params[i], sizeof(params[i])) < 0)
            return -1;
        values[i] = params[i];
    }
    if (!PQsendQueryPrepared(c->pg, sql_queries[r->sql.query].name, r->sql.nparams, values, NULL,
                             NULL, 0) ||
        !PQpipelineSync(c->pg))
        return -1;
    c->sent[slot] = clock_now_us();
    c->ep[slot] = r->endpoint;
    c->failed[slot] = 0;
    c->inflight++;
    return 0;
}

static void on_io(evutil_socket_t fd, short what, void *arg);

static void
fill(struct pgc *c)
{
    while (!c->cl->stopping && c->inflight < c->cl->depth)
        if (send_one(c) < 0)
            break;
    if (PQflush(c->pg) == 1 && !c->writing) {
        c->writing = 1;
        event_del(c->ev);
        event_assign(c->ev, c->cl->b->base, PQsocket(c->pg), EV_READ | EV_WRITE | EV_PERSIST, on_io,
                     c);
        event_add(c->ev, NULL);
    }
}

static void
complete(struct pgc *c)
{
    struct ceiling *cl = c->cl;
    struct conn_result r = {CONN_OK, 200, c->sent[c->head], clock_now_us(), NULL, 0};

    if (c->failed[c->head]) {
        r.err = CONN_ESTATUS;
        r.status = 500;
    }
    bench_record(cl->b, c->ep[c->head], &r);
    c->head = (c->head + 1) % cl->depth;
    c->inflight--;
}

static void
on_io(evutil_socket_t fd, short what, void *arg)
{
    struct pgc *c = arg;

    (void)fd;
    if ((what & EV_WRITE) && PQflush(c->pg) == 0 && c->writing) {
        c->writing = 0;
        event_del(c->ev);
        event_assign(c->ev, c->cl->b->base, PQsocket(c->pg), EV_READ | EV_PERSIST, on_io, c);
        event_add(c->ev, NULL);
    }
    if (!(what & EV_READ))
        return;
    if (!PQconsumeInput(c->pg)) {
        fprintf(stderr, "conduit-bench: ceiling: %s", PQerrorMessage(c->pg));
        event_del(c->ev);
        return;
    }
    while (c->inflight > 0 && !PQisBusy(c->pg)) {
        PGresult *res = PQgetResult(c->pg);

        if (!res)
            continue; /* the end of one statement's results */
        switch (PQresultStatus(res)) {
        case PGRES_PIPELINE_SYNC:
            complete(c);
            break;
        case PGRES_TUPLES_OK:
        case PGRES_COMMAND_OK:
            break;
        default:
            c->failed[c->head] = 1;
            snprintf(c->cl->b->cc.last_error, sizeof(c->cl->b->cc.last_error), "%s",
                     PQresultErrorMessage(res));
            break;
        }
        PQclear(res);
    }
    fill(c);
}

/* The postmaster: the parent of our backend. */
static pid_t
postmaster_of(PGconn *pg)
{
    PGresult *res = PQexec(pg, sql_direct[SQL_DIRECT_CEILING_BACKEND_PID].text);
    char path[64], buf[512], *p;
    int backend = 0, ppid = 0;
    FILE *f;
    size_t n;

    if (PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1)
        backend = atoi(PQgetvalue(res, 0, 0));
    PQclear(res);
    snprintf(path, sizeof(path), "/proc/%d/stat", backend);
    if (!backend || !(f = fopen(path, "r")))
        return 0;
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    if ((p = strrchr(buf, ')')) && sscanf(p + 2, "%*c %d", &ppid) == 1)
        return ppid;
    return 0;
}

/* The cost in a "$2b$NN$..." hash of the first user; 0 when unknown. */
static int
seeded_cost(PGconn *pg)
{
    PGresult *res = PQexec(pg, sql_direct[SQL_DIRECT_CEILING_SEEDED_HASH].text);
    int cost = 0;

    if (PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1)
        sscanf(PQgetvalue(res, 0, 0), "$2%*c$%d$", &cost);
    PQclear(res);
    return cost;
}

pid_t
ceiling_db_facts(const char *db, int *bcrypt_cost)
{
    PGconn *pg = PQconnectdb(db);
    pid_t pid = 0;

    *bcrypt_cost = 0;
    if (pg && PQstatus(pg) == CONNECTION_OK) {
        pid = postmaster_of(pg);
        *bcrypt_cost = seeded_cost(pg);
    } else
        fprintf(stderr, "conduit-bench: cannot connect to %s: %s", db,
                pg ? PQerrorMessage(pg) : "out of memory\n");
    PQfinish(pg);
    return pid;
}

/* Prepares every statement the profile uses, as the server does. */
static int
prepare(PGconn *pg, const struct profile *p)
{
    int used[SQL_QUERY_COUNT] = {0};

    for (int i = -1; i < p->npages; i++) {
        const struct prof_page *pg_ = i < 0 ? &p->start : &p->page[i];

        for (int k = 0; k < pg_->nreq; k++)
            if (pg_->req[k].sql.query >= 0)
                used[pg_->req[k].sql.query] = 1;
    }
    for (int q = 0; q < SQL_QUERY_COUNT; q++) {
        PGresult *res;
        int ok;

        if (!used[q])
            continue;
        res = PQprepare(pg, sql_queries[q].name, sql_queries[q].text, 0, NULL);
        ok = PQresultStatus(res) == PGRES_COMMAND_OK;
        if (!ok)
            fprintf(stderr, "conduit-bench: ceiling: preparing %s: %s", sql_queries[q].name,
                    PQresultErrorMessage(res));
        PQclear(res);
        if (!ok)
            return -1;
    }
    return 0;
}

static void
close_all(struct ceiling *cl)
{
    for (int i = 0; i < cl->nconns; i++) {
        struct pgc *c = &cl->c[i];

        if (c->ev)
            event_free(c->ev);
        if (c->pg)
            PQfinish(c->pg);
        free(c->sent);
        free(c->ep);
        free(c->failed);
    }
    free(cl->c);
    cl->c = NULL;
}

static int
open_all(struct ceiling *cl, const char *db, pid_t *postmaster)
{
    for (int i = 0; i < cl->nconns; i++) {
        struct pgc *c = &cl->c[i];

        c->cl = cl;
        c->pg = PQconnectdb(db);
        c->sent = calloc((size_t)cl->depth, sizeof(*c->sent));
        c->ep = calloc((size_t)cl->depth, sizeof(*c->ep));
        c->failed = calloc((size_t)cl->depth, sizeof(*c->failed));
        if (!c->pg || PQstatus(c->pg) != CONNECTION_OK) {
            fprintf(stderr, "conduit-bench: ceiling: cannot connect: %s",
                    c->pg ? PQerrorMessage(c->pg) : "out of memory\n");
            return -1;
        }
        if (!c->sent || !c->ep || !c->failed || prepare(c->pg, cl->prof) < 0)
            return -1;
        if (i == 0)
            *postmaster = postmaster_of(c->pg);
        if (!PQenterPipelineMode(c->pg) || PQsetnonblocking(c->pg, 1) < 0) {
            fprintf(stderr, "conduit-bench: ceiling: no pipeline mode: %s", PQerrorMessage(c->pg));
            return -1;
        }
        c->ev = event_new(cl->b->base, PQsocket(c->pg), EV_READ | EV_PERSIST, on_io, c);
        if (!c->ev || event_add(c->ev, NULL) < 0)
            return -1;
    }
    return 0;
}

int
ceiling_measure(struct bench *b, const char *db, int nconns, int depth, double warmup_s,
                double duration_s, struct level *out)
{
    struct ceiling cl = {0};
    pid_t pm = 0;
    double pages_per_session;
    int rc = -1;

    cl.b = b;
    cl.prof = b->prof;
    cl.nconns = nconns;
    cl.depth = depth;
    cl.rng = 0x2545f4914f6cdd1dULL ^ (uint64_t)clock_now_us();
    /* A session is its start and session / (think + page) pages. */
    pages_per_session = b->prof->session_s / (profile_think_mean(b->prof) + 0.005);
    cl.p_start = b->prof->start.nreq / (b->prof->start.nreq + pages_per_session * 1.8);
    memset(out, 0, sizeof(*out));
    if (!(cl.c = calloc((size_t)nconns, sizeof(*cl.c))))
        return -1;
    if (open_all(&cl, db, &pm) < 0)
        goto out;
    acct_clear_roots(&b->acct, AG_POSTGRES);
    if (pm)
        acct_add_root(&b->acct, AG_POSTGRES, pm);
    b->conns = nconns;
    for (int i = 0; i < nconns; i++)
        fill(&cl.c[i]);
    b->phase = "warmup";
    bench_wait(b, warmup_s);
    b->phase = "sql";
    bench_window_begin(b);
    bench_wait(b, duration_s);
    bench_window_end(b, out);
    out->users = nconns;
    out->users_mean = nconns;
    out->open_loop = 1;
    bench_judge(b, out);
    /* Let the pipelines empty, so the connections close cleanly. */
    cl.stopping = 1;
    for (int i = 0; i < 100; i++) {
        int left = 0;

        for (int k = 0; k < nconns; k++)
            left += cl.c[k].inflight;
        if (!left)
            break;
        bench_wait(b, 0.05);
    }
    rc = 0;
out:
    b->conns = 0;
    close_all(&cl);
    return rc;
}

int
mode_ceiling(struct options *o)
{
    struct profile *prof;
    struct bench b;
    struct level l;
    const char *db = o->db ? o->db : getenv("DATABASE_URL");
    int conns = o->ceiling_conns
                    ? o->ceiling_conns
                    : o->pool * (int)(o->cores ? o->cores : sysconf(_SC_NPROCESSORS_ONLN));
    cJSON *root;

    if (modes_setup(o, &prof, &b) < 0)
        return 2;
    if (ceiling_measure(&b, db, conns, o->depth, o->warmup_s, o->duration_s, &l) < 0) {
        bench_free(&b);
        profile_free(prof);
        return 2;
    }
    printf("conduit-bench ceiling: the profile's SQL through libpq, %d connections, "
           "pipelined %d deep\n",
           conns, o->depth);
    report_machine_text(stdout, &b);
    report_level_text(stdout, &l, prof);
    if (stats_errors(l.st))
        printf("  last SQL error: %s", b.cc.last_error);
    printf("ceiling: %.0f statements/s (one per request of the mix)\n", l.rps);
    root = modes_json_header(o, &b);
    cJSON_AddNumberToObject(root, "ceiling_rps", l.rps);
    cJSON_AddNumberToObject(root, "connections", conns);
    cJSON_AddNumberToObject(root, "depth", o->depth);
    cJSON_AddItemToObject(root, "level", report_level_json(&l, prof));
    level_free(&l);
    return modes_finish(o, root, &b, prof, 0);
}
