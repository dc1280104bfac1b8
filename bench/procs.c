/*
 * procs: see procs.h.
 */
#include "config.h"

#include "bench/procs.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stddef.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/wire.h"

#define STATE_MS 100
#define REPLY_TIMEOUT_S 30

/* Parent to child. */
enum { P_USERS = 1, P_WIN_BEGIN, P_WIN_END, P_TOTALS, P_TARGET, P_QUIT };
/* Child to parent. */
enum { C_HELLO = 101, C_STATE, C_SECOND, C_WINDOW, C_TOTALS };

struct cmd {
    uint32_t seq;
    int32_t users, port;
    double ramp_s;
};

struct state {
    uint32_t seq; /* the last command done */
    int32_t active, starting, in_flight, ramping;
};

struct window_msg {
    uint32_t seq;
    double users_mean, cpu_pct, cpu_peak_pct;
    int64_t conns_open, users_starting;
};

struct totals_msg {
    uint32_t seq;
    uint64_t connects;
    char last_error[160];
};

/* A frame being read: bytes gathered until one or more frames are whole. */
struct inbuf {
    unsigned char *p;
    size_t len, cap;
};

/* Reads what fd has; -1 at EOF or on an error. */
static int
inbuf_fill(struct inbuf *in, int fd)
{
    for (;;) {
        ssize_t n;

        if (in->cap - in->len < 65536) {
            size_t cap = in->cap ? in->cap * 2 : 262144;
            unsigned char *grown = realloc(in->p, cap);

            if (!grown)
                return -1;
            in->p = grown;
            in->cap = cap;
        }
        n = recv(fd, in->p + in->len, in->cap - in->len, MSG_DONTWAIT);
        if (n > 0) {
            in->len += (size_t)n;
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
            return 0;
        return -1;
    }
}

/* Calls fn for every whole frame, then keeps the rest. */
static void
inbuf_frames(struct inbuf *in, void (*fn)(void *, uint32_t, const unsigned char *, size_t),
             void *arg)
{
    size_t off = 0;

    while (in->len - off >= WIRE_HEADER) {
        uint32_t len, type;

        memcpy(&len, in->p + off, 4);
        memcpy(&type, in->p + off + 4, 4);
        if (in->len - off - 4 < len)
            break;
        fn(arg, type, in->p + off + WIRE_HEADER, len - 4);
        off += 4 + len;
    }
    memmove(in->p, in->p + off, in->len - off);
    in->len -= off;
}

static int
write_all(int fd, const unsigned char *p, size_t n)
{
    while (n) {
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL);

        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* ---------------------------------------------------------------- the child */

struct child {
    struct bench b;
    int fd, index, n;
    uint32_t seq;
    struct inbuf in;
    struct wbuf out;
    struct event *ev, *state_timer;
};

static void
child_send(struct child *c)
{
    wire_frame_end(&c->out);
    if (!c->out.failed && write_all(c->fd, c->out.p, c->out.len) < 0)
        event_base_loopbreak(c->b.base); /* the parent is gone */
}

static void
child_state(struct child *c)
{
    struct state st = {c->seq, vu_active(c->b.vu), vu_starting(c->b.vu), vu_in_flight(c->b.vu),
                       vu_ramping(c->b.vu)};

    wire_frame_begin(&c->out, C_STATE);
    wbuf_put(&c->out, &st, sizeof(st));
    child_send(c);
}

static void
on_state_timer(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    child_state(arg);
}

/* The second's stats, before bench.c resets them. */
static void
on_second(void *arg)
{
    struct child *c = arg;

    wire_frame_begin(&c->out, C_SECOND);
    wire_pack_stats(&c->out, c->b.sec);
    child_send(c);
}

static void
child_command(void *arg, uint32_t type, const unsigned char *p, size_t len)
{
    struct child *c = arg;
    struct cmd cmd = {0};
    int64_t share;

    if (len >= sizeof(cmd))
        memcpy(&cmd, p, sizeof(cmd));
    c->seq = cmd.seq;
    switch (type) {
    case P_USERS:
        /* Its share: users i/n to (i+1)/n of the whole, so the shares add up. */
        share = (int64_t)cmd.users * (c->index + 1) / c->n - (int64_t)cmd.users * c->index / c->n;
        vu_set_users(c->b.vu, (int)share, cmd.ramp_s);
        break;
    case P_WIN_BEGIN:
        bench_window_begin(&c->b);
        break;
    case P_WIN_END: {
        struct level l;
        struct window_msg m = {c->seq, 0, 0, 0, 0, 0};

        memset(&l, 0, sizeof(l));
        bench_window_end(&c->b, &l);
        m.users_mean = l.users_mean;
        m.conns_open = l.conns_open;
        m.users_starting = l.users_starting;
        m.cpu_pct = l.gen_cpu_pct;
        m.cpu_peak_pct = l.gen_cpu_peak_pct;
        wire_frame_begin(&c->out, C_WINDOW);
        wbuf_put(&c->out, &m, sizeof(m));
        wire_pack_stats(&c->out, l.st);
        child_send(c);
        level_free(&l);
        break;
    }
    case P_TOTALS: {
        struct totals_msg m = {c->seq, c->b.cc.connects, ""};

        snprintf(m.last_error, sizeof(m.last_error), "%s", c->b.cc.last_error);
        wire_frame_begin(&c->out, C_TOTALS);
        wbuf_put(&c->out, &m, sizeof(m));
        wire_pack_stats(&c->out, c->b.total);
        child_send(c);
        break;
    }
    case P_TARGET:
        c->b.cc.server.sin_port = htons((uint16_t)cmd.port);
        snprintf(c->b.cc.host, sizeof(c->b.cc.host), "127.0.0.1:%d", cmd.port);
        break;
    case P_QUIT:
    default:
        event_base_loopbreak(c->b.base);
        return;
    }
    child_state(c);
}

static void
on_command(evutil_socket_t fd, short what, void *arg)
{
    struct child *c = arg;

    (void)what;
    if (inbuf_fill(&c->in, (int)fd) < 0) {
        event_base_loopbreak(c->b.base);
        return;
    }
    inbuf_frames(&c->in, child_command, c);
}

/* The child's life: a generator of its own until told to stop.  Never returns. */
static void
child_main(int fd, int index, int n, const struct bench_opts *o, struct profile *prof)
{
    struct child c;
    char err[512];
    struct timeval tv = {0, STATE_MS * 1000};
    long want = o->max_users + 1024;

    memset(&c, 0, sizeof(c));
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() == 1)
        _exit(1);
    /* Its own file limit: the point of being a process of its own. */
    if (bench_raise_nofile(want) < want)
        fprintf(stderr, "conduit-bench: generator process %d: the open file limit is below %ld\n",
                index, want);
    if (bench_init(&c.b, o, prof, err, sizeof(err)) < 0) {
        fprintf(stderr, "conduit-bench: generator process %d: %s\n", index, err);
        _exit(2);
    }
    c.fd = fd;
    c.index = index;
    c.n = n;
    /* {n} is unique in the run: each process counts in its own range. */
    vu_set_serial(c.b.vu, (uint64_t)index << 40);
    c.b.second = on_second;
    c.b.second_arg = &c;
    c.ev = event_new(c.b.base, fd, EV_READ | EV_PERSIST, on_command, &c);
    c.state_timer = event_new(c.b.base, -1, EV_PERSIST, on_state_timer, &c);
    event_add(c.ev, NULL);
    event_add(c.state_timer, &tv);
    wire_frame_begin(&c.out, C_HELLO);
    child_send(&c);
    event_base_loop(c.b.base, 0);
    event_free(c.ev);
    event_free(c.state_timer);
    bench_free(&c.b);
    wbuf_free(&c.out);
    free(c.in.p);
    _exit(0);
}

/* ---------------------------------------------------------------- the parent */

struct procs;

struct proc {
    struct procs *ps;
    pid_t pid;
    int fd;
    struct event *ev;
    struct inbuf in;
    struct state st;
    int hello, replied, gone;
};

struct procs {
    int n;
    struct proc p[PROCS_MAX];
    uint32_t seq;
    struct bench *b;
    struct bench_remote ops;
    struct stats *tmp;    /* what a child sent, unpacked */
    struct stats *gather; /* replies are merged into this */
    struct remote_window rw;
    uint64_t connects;
    char *last_error;
    size_t last_error_cap;
    struct wbuf out;
};

static void
parent_frame(void *arg, uint32_t type, const unsigned char *p, size_t len)
{
    struct proc *pr = arg;
    struct procs *ps = pr->ps;
    const unsigned char *end = p + len;

    switch (type) {
    case C_HELLO:
        pr->hello = 1;
        return;
    case C_STATE:
        if (len >= sizeof(pr->st))
            memcpy(&pr->st, p, sizeof(pr->st));
        return;
    case C_SECOND:
        if (ps->b && wire_unpack_stats(&p, end, ps->tmp) == 0)
            stats_merge(ps->b->sec, ps->tmp);
        return;
    case C_WINDOW: {
        struct window_msg m;

        if (wire_take(&p, end, &m, sizeof(m)) < 0 || m.seq != ps->seq ||
            wire_unpack_stats(&p, end, ps->tmp) < 0)
            return;
        stats_merge(ps->gather, ps->tmp);
        ps->rw.users_mean += m.users_mean;
        ps->rw.conns_open += (long)m.conns_open;
        ps->rw.users_starting += (long)m.users_starting;
        if (m.cpu_pct > ps->rw.cpu_max_pct)
            ps->rw.cpu_max_pct = m.cpu_pct;
        if (m.cpu_peak_pct > ps->rw.cpu_peak_pct)
            ps->rw.cpu_peak_pct = m.cpu_peak_pct;
        pr->replied = 1;
        return;
    }
    case C_TOTALS: {
        struct totals_msg m;

        if (wire_take(&p, end, &m, sizeof(m)) < 0 || m.seq != ps->seq ||
            wire_unpack_stats(&p, end, ps->tmp) < 0)
            return;
        stats_merge(ps->gather, ps->tmp);
        ps->connects += m.connects;
        if (m.last_error[0] && ps->last_error)
            snprintf(ps->last_error, ps->last_error_cap, "%.159s", m.last_error);
        pr->replied = 1;
        return;
    }
    default:
        return;
    }
}

static void
on_child(evutil_socket_t fd, short what, void *arg)
{
    struct proc *pr = arg;
    int rc = inbuf_fill(&pr->in, (int)fd);

    (void)what;
    inbuf_frames(&pr->in, parent_frame, arg);
    if (rc < 0 && !pr->gone) {
        pr->gone = 1;
        event_del(pr->ev);
        fprintf(stderr, "conduit-bench: generator process %d stopped\n", (int)pr->pid);
    }
}

/* One command to every child; the next state each sends answers it. */
static void
broadcast(struct procs *ps, uint32_t type, int users, double ramp_s, int port)
{
    struct cmd c = {++ps->seq, users, port, ramp_s};

    wire_frame_begin(&ps->out, type);
    wbuf_put(&ps->out, &c, sizeof(c));
    wire_frame_end(&ps->out);
    for (int i = 0; i < ps->n; i++) {
        ps->p[i].replied = 0;
        if (!ps->p[i].gone && write_all(ps->p[i].fd, ps->out.p, ps->out.len) < 0)
            ps->p[i].gone = 1;
    }
}

static int
all_replied(struct bench *b)
{
    struct procs *ps = b->remote->arg;

    for (int i = 0; i < ps->n; i++)
        if (!ps->p[i].replied && !ps->p[i].gone)
            return 0;
    return 1;
}

static int
sum_state(struct procs *ps, size_t field, int unsynced_min)
{
    int sum = 0, behind = 0;

    for (int i = 0; i < ps->n; i++) {
        const struct proc *pr = &ps->p[i];
        int32_t v;

        if (pr->gone)
            continue;
        memcpy(&v, (const char *)&pr->st + field, sizeof(v));
        sum += v;
        behind |= pr->st.seq != ps->seq || (unsynced_min && pr->st.ramping);
    }
    return behind && sum < unsynced_min ? unsynced_min : sum;
}

static void
r_set_users(void *arg, int users, double ramp_s)
{
    broadcast(arg, P_USERS, users, ramp_s, 0);
}

static int
r_active(void *arg)
{
    return sum_state(arg, offsetof(struct state, active), 0);
}

static int
r_starting(void *arg)
{
    return sum_state(arg, offsetof(struct state, starting), 1);
}

static int
r_in_flight(void *arg)
{
    return sum_state(arg, offsetof(struct state, in_flight), 1);
}

static void
r_window_begin(void *arg)
{
    broadcast(arg, P_WIN_BEGIN, 0, 0, 0);
}

/* Sends type, waits for every child's reply, merged into into (reset first). */
static void
gather(struct procs *ps, uint32_t type, struct stats *into)
{
    stats_reset(into);
    ps->gather = into;
    memset(&ps->rw, 0, sizeof(ps->rw));
    ps->connects = 0;
    broadcast(ps, type, 0, 0, 0);
    if (bench_wait_until(ps->b, REPLY_TIMEOUT_S, all_replied) < 0)
        fprintf(stderr, "conduit-bench: a generator process did not answer in %d s\n",
                REPLY_TIMEOUT_S);
    for (int i = 0; i < ps->n; i++)
        ps->rw.missing += !ps->p[i].replied;
    ps->gather = NULL;
}

static void
r_window_end(void *arg, struct stats *st, struct remote_window *out)
{
    struct procs *ps = arg;

    gather(ps, P_WIN_END, st);
    *out = ps->rw;
}

static void
r_totals(void *arg, struct stats *total, uint64_t *connects, char *last_error, size_t cap)
{
    struct procs *ps = arg;

    ps->last_error = last_error;
    ps->last_error_cap = cap;
    gather(ps, P_TOTALS, total);
    ps->last_error = NULL;
    *connects = ps->connects;
}

static void
r_set_target(void *arg, int port)
{
    broadcast(arg, P_TARGET, 0, 0, port);
}

void
procs_stop(struct procs *ps)
{

    broadcast(ps, P_QUIT, 0, 0, 0);
    for (int i = 0; i < ps->n; i++) {
        struct proc *pr = &ps->p[i];

        if (pr->ev)
            event_free(pr->ev);
        close(pr->fd);
        /* The socket is closed: a child that missed QUIT sees EOF and stops. */
        if (pr->pid > 0)
            waitpid(pr->pid, NULL, 0);
        free(pr->in.p);
    }
    stats_free(ps->tmp);
    wbuf_free(&ps->out);
    free(ps);
}

static void
r_free(void *arg)
{
    procs_stop(arg);
}

/* The first source address of child i, as text. */
static int
child_source(const struct bench_opts *o, int i, int per, char *out, size_t cap)
{
    struct in_addr a;

    if (inet_pton(AF_INET, o->source, &a) != 1)
        return -1;
    a.s_addr = htonl(ntohl(a.s_addr) + (uint32_t)(i * per));
    if ((ntohl(a.s_addr) >> 24) != 127)
        return -1;
    return inet_ntop(AF_INET, &a, out, (socklen_t)cap) ? 0 : -1;
}

struct procs *
procs_start(int n, const struct bench_opts *o, struct profile *prof, char *err, size_t errlen)
{
    struct procs *ps;
    int share = (o->max_users + n - 1) / n;
    int per = o->sources ? o->sources / n : share / CONN_USERS_PER_SOURCE + 1;

    if (n < 2 || n > PROCS_MAX) {
        snprintf(err, errlen, "--procs: 1 to %d", PROCS_MAX);
        return NULL;
    }
    if (per < 1) {
        snprintf(err, errlen, "--sources %d: fewer than the %d generator processes", o->sources, n);
        return NULL;
    }
    if (!(ps = calloc(1, sizeof(*ps)))) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    ps->n = n;
    for (int i = 0; i < n; i++) {
        struct bench_opts co = *o;
        char src[INET_ADDRSTRLEN];
        int sv[2];

        if (child_source(o, i, per, src, sizeof(src)) < 0) {
            snprintf(err, errlen, "%d processes of %d source addresses from %s leave 127.0.0.0/8",
                     n, per, o->source);
            goto fail;
        }
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
            snprintf(err, errlen, "socketpair: %s", strerror(errno));
            goto fail;
        }
        co.source = src;
        co.sources = per;
        co.max_users = share;
        co.quiet = 1;
        fflush(NULL);
        ps->p[i].pid = fork();
        if (ps->p[i].pid == 0) {
            /* Only its own end: the others' belong to the parent. */
            for (int k = 0; k < i; k++)
                close(ps->p[k].fd);
            close(sv[0]);
            child_main(sv[1], i, n, &co, prof);
        }
        close(sv[1]);
        ps->p[i].fd = sv[0];
        if (ps->p[i].pid < 0) {
            snprintf(err, errlen, "fork: %s", strerror(errno));
            close(sv[0]);
            goto fail;
        }
    }
    return ps;
fail:
    for (int i = 0; i < n; i++) {
        if (ps->p[i].pid > 0) {
            close(ps->p[i].fd);
            waitpid(ps->p[i].pid, NULL, 0);
        }
    }
    free(ps);
    return NULL;
}

static int
all_hello(struct bench *b)
{
    struct procs *ps = b->remote->arg;

    for (int i = 0; i < ps->n; i++)
        if (!ps->p[i].hello)
            return ps->p[i].gone ? 1 : 0;
    return 1;
}

int
procs_attach(struct procs *ps, struct bench *b, char *err, size_t errlen)
{
    ps->b = b;
    ps->tmp = stats_new(b->prof->nendpoints);
    ps->ops = (struct bench_remote){
        .set_users = r_set_users,
        .active = r_active,
        .starting = r_starting,
        .in_flight = r_in_flight,
        .window_begin = r_window_begin,
        .window_end = r_window_end,
        .totals = r_totals,
        .set_target = r_set_target,
        .free = r_free,
        .procs = ps->n,
        .arg = ps,
    };
    b->remote = &ps->ops;
    for (int i = 0; i < ps->n; i++) {
        ps->p[i].ps = ps;
        ps->p[i].ev = event_new(b->base, ps->p[i].fd, EV_READ | EV_PERSIST, on_child, &ps->p[i]);
        event_add(ps->p[i].ev, NULL);
        acct_add_root(&b->acct, AG_BENCH, ps->p[i].pid);
    }
    bench_wait_until(b, REPLY_TIMEOUT_S, all_hello);
    for (int i = 0; i < ps->n; i++) {
        if (!ps->p[i].hello) {
            snprintf(err, errlen, "generator process %d of %d did not start", i + 1, ps->n);
            return -1;
        }
    }
    return 0;
}
