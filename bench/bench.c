/*
 * bench: see bench.h.
 */
#include "config.h"

#include "bench/bench.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "bench/little.h"
#include "bench/units.h"
#include "common/clock.h"

void
bench_record(struct bench *b, int ep, const struct conn_result *r)
{
    stats_request(b->sec, ep, r);
    stats_request(b->total, ep, r);
    if (b->win)
        stats_request(b->win, ep, r);
}

static void
on_request(void *arg, int ep, const struct conn_result *r)
{
    bench_record(arg, ep, r);
}

static void
on_page(void *arg, int nreq, int64_t page_us)
{
    struct bench *b = arg;

    stats_page(b->total, nreq, page_us);
    if (b->win)
        stats_page(b->win, nreq, page_us);
}

static void
progress(struct bench *b, double cpu_pct)
{
    char p95[16], p99[16];
    struct stats *s = b->sec;

    if (b->quiet)
        return;
    fprintf(b->log,
            "[%6.0fs] %-6s users %6d (%d starting)  req/s %8llu  p95 %8s  p99 %8s  errors %llu"
            "  gen-cpu %3.0f%%\n",
            (double)(clock_now_us() - b->t0_us) / 1e6, b->phase ? b->phase : "",
            b->conns ? b->conns : bench_active(b), bench_starting(b),
            (unsigned long long)s->requests,
            units_fmt_us((double)hist_percentile(&s->all, 95), p95, sizeof(p95)),
            units_fmt_us((double)hist_percentile(&s->all, 99), p99, sizeof(p99)),
            (unsigned long long)stats_errors(s), cpu_pct);
    fflush(b->log);
}

/*
 * Our part of the load average, followed the way the kernel follows the
 * whole: the mean of the level's hold alone left out the ramp's and the
 * previous level's threads, which the 1-minute average still holds when
 * the next level begins, and an idle machine's levels were refused as
 * disturbed by our own load (2.5 to 3.8 threads "not ours").  counted:
 * our threads the load average counts, from this second's memory sample
 * during a hold; < 0: walk /proc for them, a time that counts as the
 * generator's measuring cost.
 */
static void
own_load_tick(struct bench *b, int64_t now_us, int counted)
{
    double t = acct_self_cpu_s();
    int n = counted >= 0 ? counted : acct_loadavg_threads(&b->acct);

    if (b->own_load_us)
        b->own_load = acct_load_decay(b->own_load, n, (double)(now_us - b->own_load_us) / 1e6);
    b->own_load_us = now_us;
    b->acct.overhead_s += acct_self_cpu_s() - t;
}

/* Once a second: the progress line, a memory sample, the generator's CPU. */
static void
on_tick(evutil_socket_t fd, short what, void *arg)
{
    struct bench *b = arg;
    int64_t now = clock_now_us();
    int counted = -1;
    double cpu = acct_self_cpu_s(), wall = (double)(now - b->tick_prev_us) / 1e6;
    /* Over the time since the last tick: a loop busy for seconds ticks late. */
    double pct = wall > 0 ? (cpu - b->self_cpu_prev) * 100 / wall : 0;

    (void)fd;
    (void)what;
    b->self_cpu_prev = cpu;
    b->tick_prev_us = now;
    if (b->second)
        b->second(b->second_arg);
    progress(b, pct);
    stats_reset(b->sec);
    if (b->win) {
        counted = acct_sample(&b->acct);
        b->users_sum += bench_active(b);
        b->users_samples++;
        if (pct > b->gen_cpu_peak_pct)
            b->gen_cpu_peak_pct = pct;
    }
    own_load_tick(b, now, counted);
}

static void
on_wake(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    event_base_loopbreak(arg);
}

long
bench_raise_nofile(long want)
{
    struct rlimit rl;

    if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
        return -1;
    if ((long)rl.rlim_cur < want) {
        struct rlimit up = rl;

        up.rlim_cur = (rlim_t)want;
        if (up.rlim_max < up.rlim_cur)
            up.rlim_max = up.rlim_cur; /* root may raise the hard limit too */
        if (setrlimit(RLIMIT_NOFILE, &up) < 0) {
            rl.rlim_cur = rl.rlim_max;
            setrlimit(RLIMIT_NOFILE, &rl);
        }
        getrlimit(RLIMIT_NOFILE, &rl);
    }
    return (long)rl.rlim_cur;
}

int
bench_init(struct bench *b, const struct bench_opts *o, struct profile *prof, char *err,
           size_t errlen)
{
    struct vu_hooks hooks = {on_request, on_page, b};
    int sources = o->sources;
    struct timeval sec = {1, 0};
    struct event_config *cfg;

    memset(b, 0, sizeof(*b));
    b->log = stderr;
    b->quiet = o->quiet;
    b->prof = prof;
    b->crit = (struct criteria)CRITERIA_DEFAULT;
    /* Before any level: what the machine was doing before we loaded it. */
    b->loadavg_path = o->loadavg_path;
    b->load_start = acct_loadavg(o->loadavg_path);
    if (o->think_mean_s >= 0)
        prof->think_mean_s = o->think_mean_s;
    if (o->think_cap_s >= 0)
        prof->think_cap_s = o->think_cap_s;
    if (o->session_s >= 0)
        prof->session_s = o->session_s;
    if (prof->think_cap_s < prof->think_mean_s) {
        snprintf(err, errlen, "the think time cap (%gs) is below its mean (%gs)", prof->think_cap_s,
                 prof->think_mean_s);
        return -1;
    }
    if (dataset_init(&b->ds, o->scale, o->seed) < 0) {
        snprintf(err, errlen, "--scale: want a number in (0, 100]");
        return -1;
    }
    if (sources == 0)
        sources = o->max_users / CONN_USERS_PER_SOURCE + 1;
    if (sources > CONN_MAX_SOURCES)
        sources = CONN_MAX_SOURCES;
    if (!(cfg = event_config_new())) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    /* epoll's timeouts are whole milliseconds, late by up to one without it. */
    if (o->precise_timer)
        event_config_set_flag(cfg, EVENT_BASE_FLAG_PRECISE_TIMER);
    b->base = event_base_new_with_config(cfg);
    event_config_free(cfg);
    if (!b->base) {
        snprintf(err, errlen, "cannot create an event base");
        return -1;
    }
    if (conn_ctx_init(&b->cc, b->base, o->host, o->port, o->source, sources, prof->timeout_s, err,
                      errlen) < 0)
        return -1;
    b->sec = stats_new(prof->nendpoints);
    b->total = stats_new(prof->nendpoints);
    b->vu = vu_new(&b->cc, prof, &b->ds, &hooks, (uint64_t)getpid() * 0x9e3779b97f4a7c15ULL);
    b->tick = event_new(b->base, -1, EV_PERSIST, on_tick, b);
    b->wake = evtimer_new(b->base, on_wake, b->base);
    if (!b->sec || !b->total || !b->vu || !b->tick || !b->wake) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    acct_init(&b->acct);
    acct_add_root(&b->acct, AG_BENCH, getpid());
    b->t0_us = b->tick_prev_us = clock_now_us();
    b->self_cpu_prev = acct_self_cpu_s();
    event_add(b->tick, &sec);
    return 0;
}

void
bench_set_users(struct bench *b, int users, double ramp_s)
{
    if (b->remote)
        b->remote->set_users(b->remote->arg, users, ramp_s);
    else
        vu_set_users(b->vu, users, ramp_s);
}

int
bench_active(struct bench *b)
{
    return b->remote ? b->remote->active(b->remote->arg) : vu_active(b->vu);
}

int
bench_starting(struct bench *b)
{
    return b->remote ? b->remote->starting(b->remote->arg) : vu_starting(b->vu);
}

int
bench_in_flight(struct bench *b)
{
    return b->remote ? b->remote->in_flight(b->remote->arg) : vu_in_flight(b->vu);
}

void
bench_set_target(struct bench *b, int port)
{
    b->cc.server.sin_port = htons((uint16_t)port);
    snprintf(b->cc.host, sizeof(b->cc.host), "127.0.0.1:%d", port);
    if (b->remote)
        b->remote->set_target(b->remote->arg, port);
}

void
bench_free(struct bench *b)
{
    if (b->remote)
        b->remote->free(b->remote->arg);
    vu_free(b->vu);
    if (b->tick)
        event_free(b->tick);
    if (b->wake)
        event_free(b->wake);
    stats_free(b->sec);
    stats_free(b->total);
    acct_free(&b->acct);
    conn_ctx_free(&b->cc);
    if (b->base)
        event_base_free(b->base);
    memset(b, 0, sizeof(*b));
}

void
bench_wait(struct bench *b, double seconds)
{
    struct timeval tv;

    if (seconds < 0)
        seconds = 0;
    tv.tv_sec = (time_t)seconds;
    tv.tv_usec = (suseconds_t)((seconds - (double)tv.tv_sec) * 1e6);
    evtimer_add(b->wake, &tv);
    event_base_loop(b->base, 0);
    evtimer_del(b->wake);
}

int
bench_wait_until(struct bench *b, double seconds, int (*cond)(struct bench *))
{
    int64_t end = clock_now_us() + (int64_t)(seconds * 1e6);

    while (!cond(b)) {
        int64_t left = end - clock_now_us();

        if (left <= 0)
            return -1;
        bench_wait(b, left > 100000 ? 0.1 : (double)left / 1e6);
    }
    return 0;
}

void
bench_window_begin(struct bench *b)
{
    if (!b->win)
        b->win = stats_new(b->prof->nendpoints);
    else
        stats_reset(b->win);
    b->users_sum = 0;
    b->users_samples = 0;
    b->gen_cpu_peak_pct = 0;
    if (b->remote)
        b->remote->window_begin(b->remote->arg);
    acct_begin(&b->acct);
    acct_sample(&b->acct);
}

void
bench_window_end(struct bench *b, struct level *l)
{
    struct acct_result *a = &l->acct;
    struct stats *s = b->win;
    double reqs, gen;

    struct remote_window rw = {0};

    acct_end(&b->acct, a);
    if (b->remote)
        b->remote->window_end(b->remote->arg, s, &rw);
    b->win = NULL;
    l->st = s;
    reqs = s->requests ? (double)s->requests : 1;
    l->rps = a->wall_s > 0 ? (double)s->requests / a->wall_s : 0;
    l->conns_open = b->remote ? rw.conns_open : (long)b->cc.open;
    l->users_starting = b->remote ? rw.users_starting : vu_starting(b->vu);
    l->users_mean = b->remote          ? rw.users_mean
                    : b->users_samples ? b->users_sum / b->users_samples
                                       : vu_active(b->vu);
    l->think_s = profile_think_mean(b->prof);
    l->page_s = s->pages ? s->page_us / (double)s->pages / 1e6 : 0;
    l->req_per_page = s->pages ? (double)s->page_reqs / (double)s->pages : 0;
    l->little_rps = little_expected_rps(l->users_mean, l->think_s, l->page_s, l->req_per_page);
    l->little_dev_pct = l->little_rps > 0 ? (l->rps - l->little_rps) / l->little_rps * 100 : 0;
    /* The generator's figure leaves out what measuring the others cost it. */
    gen = a->cpu_s[AG_BENCH] > a->overhead_s ? a->cpu_s[AG_BENCH] - a->overhead_s : 0;
    l->gen_cpu_pct = a->wall_s > 0 ? gen / a->wall_s * 100 : 0;
    l->gen_cpu_peak_pct = b->remote ? rw.cpu_peak_pct : b->gen_cpu_peak_pct;
    /* Each process is one event loop: the busiest one is what may fall behind. */
    l->gen_procs = b->remote ? b->remote->procs : 1;
    l->gen_missing = rw.missing;
    l->gen_cpu_proc_max_pct = b->remote ? rw.cpu_max_pct : l->gen_cpu_pct;
    l->gen_us_per_req = gen / reqs * 1e6;
    l->server_us_per_req = (a->cpu_s[AG_SERVER] + a->cpu_s[AG_NGINX]) / reqs * 1e6;
    l->pg_us_per_req = a->cpu_s[AG_POSTGRES] / reqs * 1e6;
}

static void __attribute__((format(printf, 2, 3))) add_why(struct level *l, const char *fmt, ...)
{
    size_t n = strlen(l->why);
    va_list ap;

    if (n && n + 2 < sizeof(l->why)) {
        memcpy(l->why + n, "; ", 3);
        n += 2;
    }
    va_start(ap, fmt);
    vsnprintf(l->why + n, sizeof(l->why) - n, fmt, ap);
    va_end(ap);
}

void
bench_judge(const struct bench *b, struct level *l)
{
    const struct criteria *c = &b->crit;
    const struct stats *s = l->st;
    double p95 = (double)hist_percentile(&s->all, 95) / 1e3;
    double p99 = (double)hist_percentile(&s->all, 99) / 1e3;
    double errs = s->requests ? (double)stats_errors(s) * 100 / (double)s->requests : 0;

    l->why[0] = '\0';
    if (!l->open_loop) {
        double rate = little_expected_rps(l->users_mean, l->think_s, l->page_s, 1);
        double sq = s->pages ? (double)s->page_reqs_sq / (double)s->pages
                             : l->req_per_page * l->req_per_page;

        l->little_pages = rate * l->acct.wall_s;
        l->little_tol_pct = little_tolerance(c->little_tol_pct, l->little_pages, l->req_per_page,
                                             sq, &l->little_statistical);
    }
    if (s->requests == 0)
        add_why(l, "no request finished");
    if (p95 >= c->p95_ms)
        add_why(l, "p95 %.1f ms >= %.0f ms", p95, c->p95_ms);
    if (p99 >= c->p99_ms)
        add_why(l, "p99 %.1f ms >= %.0f ms", p99, c->p99_ms);
    if (errs >= c->max_errors_pct && stats_errors(s) > 0)
        add_why(l, "errors %.2f %% >= %.2f %%", errs, c->max_errors_pct);
    if (!l->open_loop && fabs(l->little_dev_pct) > l->little_tol_pct)
        add_why(l,
                "load not offered: %.1f req/s against %.1f by Little's law (%+.1f %%, tolerance "
                "%.1f %%)",
                l->rps, l->little_rps, l->little_dev_pct, l->little_tol_pct);
    if (l->gen_missing)
        add_why(l,
                "%d of %d generator processes did not send their hold: its figures are incomplete",
                l->gen_missing, l->gen_procs);
    if (l->gen_cpu_proc_max_pct > c->gen_cpu_max_pct)
        add_why(l, "generator%s at %.0f %% of a core (limit %.0f %%)",
                l->gen_procs > 1 ? "'s busiest process" : "", l->gen_cpu_proc_max_pct,
                c->gen_cpu_max_pct);
    l->pass = l->why[0] == '\0';
}

static int
users_started(struct bench *b)
{
    return bench_starting(b) == 0;
}

int
bench_level(struct bench *b, int users, double ramp_s, double settle_max_s, double hold_s,
            struct level *l)
{
    int64_t t;

    memset(l, 0, sizeof(*l));
    l->users = users;
    l->ramp_s = ramp_s;
    l->hold_s = hold_s;
    if (b->level_begin)
        b->level_begin(b->level_arg, users, b->level_note);
    b->phase = "ramp";
    bench_set_users(b, users, ramp_s);
    bench_wait(b, ramp_s);
    /* Logins cost the server a bcrypt each: let them finish before judging. */
    b->phase = "settle";
    t = clock_now_us();
    bench_wait_until(b, settle_max_s, users_started);
    l->settle_s = (double)(clock_now_us() - t) / 1e6;
    b->phase = "hold";
    bench_window_begin(b);
    bench_wait(b, hold_s);
    bench_window_end(b, l);
    b->phase = "";
    bench_judge(b, l);
    return 0;
}

void
level_free(struct level *l)
{
    stats_free(l->st);
    l->st = NULL;
}

static int
nothing_in_flight(struct bench *b)
{
    return bench_in_flight(b) == 0;
}

void
bench_drain(struct bench *b, double seconds)
{
    b->phase = "drain";
    bench_set_users(b, 0, 0);
    bench_wait_until(b, seconds, nothing_in_flight);
    if (b->remote)
        b->remote->totals(b->remote->arg, b->total, &b->cc.connects, b->cc.last_error,
                          sizeof(b->cc.last_error));
}
