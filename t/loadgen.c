/*
 * loadgen: a small, bounded HTTP/1.1 load generator for the fault tests.
 * Plain non-blocking sockets and poll(); loopback only.
 *
 *   loadgen -p PORT [-c CONNS] [-d SECONDS] [-n MAX] [-r RATE] [-k] [-K] [-w]
 *           [-m METHOD] [-u PATH] [-b BODY] [-H HEADER] [-t TIMEOUT_MS]
 *           [-s STOPFILE] [-o CSV] [-I IDLE] [-S SLOW] [-R BYTES_PER_S]
 *
 * CONNS clients each send one request at a time for SECONDS (at most MAX
 * requests, at most RATE per second over all), on a new connection each
 * time ("Connection: close"), or on one kept-alive connection with -k.
 * With -w (implies -k) every connection first asks GET /healthz, to learn
 * which worker pid holds it; a failed request is then charged to that pid.
 * No request is ever retried: a failure is whatever did not end in a
 * complete response (refused, reset, closed early, timed out).  As every
 * HTTP client does, a kept-alive connection that the server closed while
 * it sat idle is replaced before a request is sent on it.
 *
 * -K (strict keep-alive, implies -k) does not even do that: a client opens
 * a new connection only after a response that carried "Connection: close"
 * (or after a failure), and sends its next request on the same connection
 * the moment it has read a response, as a client that never retries and
 * trusts the server to say when it closes.  Against a server that keeps
 * that contract, no request fails.  Each request that got the end of the
 * stream (or a reset) before any byte of its response is reported on
 * stderr, with how many requests its connection had served.
 *
 * -R reads each response at most that fast, steadily (a small receive
 * buffer, a share every few ms): a slow but steady reader.  Responses of
 * any size are counted; only their first 64 kB are kept.
 *
 * IDLE connections are opened and never sent a byte; SLOW connections send
 * a request header one byte every 500 ms and never finish it (slowloris).
 * Both only count when and whether the server closes them.
 *
 * Prints one line of key=value figures (see report()); with -o, one CSV
 * line per request: end time in Unix ms (to compare with `date +%s%3N`),
 * status (0 failed,
 * -1 timed out), latency in us, Retry-After present (0/1), worker pid,
 * Retry-After's value in seconds (0 when absent).
 * Exit 0, or 2 on bad usage.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONNS 20000
#define BUF_CAP 65536
#define MAX_PIDS 64

enum cstate { C_FREE, C_CONNECTING, C_SENDING, C_READING, C_IDLE_HOLD, C_SLOW };

struct conn {
    enum cstate state;
    int fd;
    int kind;    /* 0 client, 1 idle, 2 slow */
    int learned; /* -w: the /healthz answer told the pid */
    int probing; /* -w: the request in flight is the /healthz probe */
    int reused;  /* a request was already answered on this connection */
    long served; /* requests answered on this connection */
    long pid;
    int64_t opened_us, started_us, next_byte_us;
    size_t sent;
    char *req;
    size_t reqlen;
    char buf[BUF_CAP];
    size_t got;
    size_t dropped; /* body bytes read and not kept: the buffer was full */
    int slow_pos;
};

static struct {
    const char *host;
    int port;
    int conns, idle, slow;
    double seconds;
    long max_requests;
    double rate;
    int keepalive, learn_pid, strict;
    const char *method, *path, *body, *stopfile, *csv;
    const char *headers[8];
    int nheaders;
    int timeout_ms;
    double read_rate; /* -R: bytes per second per connection, 0 for no limit */
} opt = {"127.0.0.1", 0,     8,          0,    0,    10,   0,   0, 0,     0,
         0,           "GET", "/healthz", NULL, NULL, NULL, {0}, 0, 10000, 0};

static struct {
    long started, ok, failed, timeouts, s2xx, s3xx, s4xx, s503, s5xx, retry_after_missing;
    long fail_unknown;
    /* How failures ended: no byte of a response, then EOF or a reset; cut
     * inside one; the request could not be sent; the connect failed. */
    long eof_before_response, reset_before_response, partial, send_failed, refused;
    long fail_pid_n;
    long fail_pid[MAX_PIDS];
    long fail_count[MAX_PIDS];
    int64_t *lat;
    long nlat, caplat;
    long idle_closed, slow_closed, idle_open_fail;
    int64_t idle_close_min, idle_close_max, slow_close_max;
    long idle_closed_before_min;
} st;

static struct conn *conns;
static int nconns;
static int64_t t0;
static FILE *csv;
static char *client_req, *probe_req;
static size_t client_reqlen, probe_reqlen;

static int64_t
now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static char *
build_request(const char *method, const char *path, const char *body, int keepalive, size_t *len)
{
    size_t cap = 4096 + (body ? strlen(body) : 0);
    char *r = malloc(cap);
    int n;

    if (!r)
        exit(1);
    n = snprintf(r, cap, "%s %s HTTP/1.1\r\nHost: %s:%d\r\nConnection: %s\r\n", method, path,
                 opt.host, opt.port, keepalive ? "keep-alive" : "close");
    for (int i = 0; i < opt.nheaders; i++)
        n += snprintf(r + n, cap - (size_t)n, "%s\r\n", opt.headers[i]);
    if (body)
        n += snprintf(r + n, cap - (size_t)n,
                      "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
                      strlen(body), body);
    else
        n += snprintf(r + n, cap - (size_t)n, "\r\n");
    *len = (size_t)n;
    return r;
}

static int
open_socket(void)
{
    struct sockaddr_in sa;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;

    if (fd < 0)
        return -1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (opt.read_rate > 0) {
        int rcvbuf = 65536; /* small, so the pace is steady, not bursts of megabytes */
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
    }
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)opt.port);
    inet_pton(AF_INET, opt.host, &sa.sin_addr);
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 && errno != EINPROGRESS) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Close without TIME_WAIT on our side: thousands of connections reuse ports. */
static void
close_hard(int fd)
{
    struct linger l = {1, 0};

    setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
    close(fd);
}

static void
note_failure(struct conn *c, int timed_out)
{
    if (timed_out)
        st.timeouts++;
    st.failed++;
    if (!opt.learn_pid)
        return;
    if (!c->learned) {
        st.fail_unknown++;
        return;
    }
    for (long i = 0; i < st.fail_pid_n; i++) {
        if (st.fail_pid[i] == c->pid) {
            st.fail_count[i]++;
            return;
        }
    }
    if (st.fail_pid_n < MAX_PIDS) {
        st.fail_pid[st.fail_pid_n] = c->pid;
        st.fail_count[st.fail_pid_n++] = 1;
    }
}

static void
record(struct conn *c, int status, int retry_after)
{
    int64_t end = now_us();
    int64_t lat = end - c->started_us;

    if (status > 0) {
        st.ok += status < 500;
        if (status >= 200 && status < 300)
            st.s2xx++;
        else if (status < 400)
            st.s3xx++;
        else if (status < 500)
            st.s4xx++;
        else if (status == 503) {
            st.s503++;
            st.retry_after_missing += !retry_after;
        } else
            st.s5xx++;
        if (st.nlat == st.caplat) {
            st.caplat = st.caplat ? st.caplat * 2 : 65536;
            st.lat = realloc(st.lat, (size_t)st.caplat * sizeof(*st.lat));
            if (!st.lat)
                exit(1);
        }
        st.lat[st.nlat++] = lat;
    } else {
        note_failure(c, status < 0);
    }
    if (csv) {
        struct timespec wall;
        clock_gettime(CLOCK_REALTIME, &wall);
        fprintf(csv, "%lld,%d,%lld,%d,%ld,%d\n",
                (long long)wall.tv_sec * 1000 + wall.tv_nsec / 1000000, status, (long long)lat,
                retry_after != 0, c->learned ? c->pid : 0L, retry_after ? retry_after - 1 : 0);
    }
}

static int
may_start(int64_t now)
{
    double elapsed = (double)(now - t0) / 1e6;

    if (elapsed >= opt.seconds)
        return 0;
    if (opt.max_requests && st.started >= opt.max_requests)
        return 0;
    if (opt.rate > 0 && st.started >= (long)(opt.rate * elapsed) + 1)
        return 0;
    return 1;
}

/*
 * A kept-alive connection the server closed while it sat idle on our side
 * is not reused: like any HTTP client, open a new one.  (A request sent on
 * it would fail, but no request was lost: none was sent before the close.)
 */
static int
closed_while_idle(int fd)
{
    struct pollfd p = {.fd = fd, .events = POLLIN | POLLRDHUP};

    return poll(&p, 1, 0) > 0 && (p.revents & (POLLIN | POLLRDHUP | POLLHUP | POLLERR));
}

/*
 * A request failed without its response: say how.  One cut before any byte
 * of its response is reported one by one: with -K, that is a request the
 * server dropped (or, for a write, may have run without answering).
 */
static void
note_cut(struct conn *c, int eof)
{
    if (c->got > 0) {
        st.partial++;
        return;
    }
    if (eof)
        st.eof_before_response++;
    else
        st.reset_before_response++;
    fprintf(stderr,
            "client %d: %s before any byte of a response to request %ld of its connection "
            "(%lld ms after it was sent)\n",
            (int)(c - conns), eof ? "end of stream" : "reset", c->served + 1,
            (long long)((now_us() - c->started_us) / 1000));
}

static void
start_request(struct conn *c, int64_t now)
{
    if (c->fd >= 0 && !opt.strict && closed_while_idle(c->fd)) {
        close_hard(c->fd);
        c->fd = -1;
        c->learned = 0;
    }
    c->probing = opt.learn_pid && !c->learned;
    c->req = c->probing ? probe_req : client_req;
    c->reqlen = c->probing ? probe_reqlen : client_reqlen;
    c->sent = 0;
    c->got = 0;
    c->dropped = 0;
    c->started_us = now;
    if (!c->probing)
        st.started++;
    if (c->fd < 0) {
        c->fd = open_socket();
        c->reused = 0;
        c->served = 0;
        c->learned = 0;
        c->probing = opt.learn_pid;
        if (c->probing) {
            c->req = probe_req;
            c->reqlen = probe_reqlen;
        }
        if (c->fd < 0) {
            st.refused++;
            if (!c->probing)
                record(c, 0, 0);
            c->state = C_FREE;
            return;
        }
        c->state = C_CONNECTING;
        return;
    }
    c->state = C_SENDING;
}

static void
conn_reset(struct conn *c)
{
    if (c->fd >= 0)
        close_hard(c->fd);
    c->fd = -1;
    c->learned = 0;
    c->state = C_FREE;
}

/* A complete response?  1 yes (status set), 0 need more, -1 malformed. */
static int
parse_response(struct conn *c, int eof, int *status, int *retry_after, int *close_after)
{
    char *hend, *p;
    long clen = -1;

    c->buf[c->got] = '\0';
    hend = strstr(c->buf, "\r\n\r\n");
    if (!hend)
        return eof ? -1 : 0;
    if (sscanf(c->buf, "HTTP/1.%*d %d", status) != 1)
        return -1;
    *retry_after = 0;
    *close_after = 0;
    for (p = strstr(c->buf, "\r\n"); p && p < hend; p = strstr(p + 2, "\r\n")) {
        const char *h = p + 2;
        if (strncasecmp(h, "Content-Length:", 15) == 0)
            clen = strtol(h + 15, NULL, 10);
        else if (strncasecmp(h, "Retry-After:", 12) == 0)
            *retry_after = 1 + (atoi(h + 12) > 0 ? atoi(h + 12) : 0); /* 0: absent */
        else if (strncasecmp(h, "Connection:", 11) == 0 && strcasestr(h, "close") &&
                 strcasestr(h, "close") < strstr(h, "\r\n"))
            *close_after = 1;
    }
    if (*status == 204 || *status == 304)
        clen = 0;
    if (clen < 0)
        return eof ? 1 : 0; /* until the server closes */
    if ((size_t)(hend + 4 - c->buf) + (size_t)clen > c->got + c->dropped)
        return eof ? -1 : 0;
    if (c->probing) {
        const char *pid = strstr(hend, "\"pid\":");
        if (pid) {
            c->pid = strtol(pid + 6, NULL, 10);
            c->learned = 1;
        }
    }
    return 1;
}

static void
finish(struct conn *c, int status, int retry_after, int close_after)
{
    if (!c->probing)
        record(c, status, retry_after);
    c->reused = 1;
    c->served += status > 0;
    if (!opt.keepalive || close_after || status <= 0 || (c->probing && !c->learned))
        conn_reset(c);
    else
        c->state = C_FREE;
}

/* A body larger than the buffer: keep the header, count the rest. */
static void
keep_header(struct conn *c)
{
    char *hend;

    c->buf[c->got] = '\0';
    hend = strstr(c->buf, "\r\n\r\n");
    if (!hend) {
        c->got = 0; /* a header over 64 kB: it will not parse */
        return;
    }
    c->dropped += c->got - (size_t)(hend + 4 - c->buf);
    c->got = (size_t)(hend + 4 - c->buf);
}

/* -R: how many more bytes of its response the connection may read now. */
static int64_t
read_budget(const struct conn *c, int64_t now)
{
    return (int64_t)(opt.read_rate * (double)(now - c->started_us) / 1e6) -
           (int64_t)(c->got + c->dropped);
}

static void
on_readable(struct conn *c)
{
    for (;;) {
        ssize_t n;
        int status, ra, cl, r;

        size_t want;

        if (c->got >= BUF_CAP - 1)
            keep_header(c);
        want = BUF_CAP - 1 - c->got;
        if (opt.read_rate > 0) {
            int64_t budget = read_budget(c, now_us());
            if (budget <= 0)
                return;
            if ((size_t)budget < want)
                want = (size_t)budget;
        }
        n = read(c->fd, c->buf + c->got, want);
        if (n > 0) {
            c->got += (size_t)n;
            r = parse_response(c, 0, &status, &ra, &cl);
            if (r == 1) {
                finish(c, status, ra, cl);
                return;
            }
            if (r < 0) {
                st.partial++;
                finish(c, 0, 0, 1);
                return;
            }
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            return;
        /* EOF or error */
        r = n == 0 ? parse_response(c, 1, &status, &ra, &cl) : -1;
        if (r == 1) {
            finish(c, status, ra, 1);
            return;
        }
        note_cut(c, n == 0);
        finish(c, 0, 0, 1);
        return;
    }
}

static void
on_writable(struct conn *c)
{
    while (c->sent < c->reqlen) {
        ssize_t n = send(c->fd, c->req + c->sent, c->reqlen - c->sent, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR)
                return;
            st.send_failed++;
            finish(c, 0, 0, 1);
            return;
        }
        c->sent += (size_t)n;
    }
    c->state = C_READING;
}

static void
hold_closed(struct conn *c, int64_t now)
{
    int64_t life = (now - c->opened_us) / 1000;

    if (c->kind == 1) {
        st.idle_closed++;
        if (!st.idle_close_min || life < st.idle_close_min)
            st.idle_close_min = life;
        if (life > st.idle_close_max)
            st.idle_close_max = life;
    } else {
        st.slow_closed++;
        if (life > st.slow_close_max)
            st.slow_close_max = life;
    }
    close_hard(c->fd);
    c->fd = -1;
    c->state = C_FREE;
    c->kind = 0;
}

static void
open_holders(int64_t now, int kind, int n)
{
    for (int i = 0; i < n && nconns < MAX_CONNS; i++) {
        struct conn *c = &conns[nconns];
        c->fd = open_socket();
        if (c->fd < 0) {
            st.idle_open_fail++;
            continue;
        }
        nconns++;
        c->kind = kind;
        c->opened_us = now;
        c->state = kind == 1 ? C_IDLE_HOLD : C_SLOW;
        c->next_byte_us = now + 500000;
    }
}

static void
slow_step(struct conn *c, int64_t now)
{
    static const char header[] = "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: aaaaaaaaaaaaaaaaaaaa"
                                 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
                                 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    char ch;

    if (now < c->next_byte_us)
        return;
    ch = header[c->slow_pos % (int)(sizeof(header) - 1)];
    if (c->slow_pos >= (int)sizeof(header) - 1)
        ch = 'a';
    if (send(c->fd, &ch, 1, MSG_NOSIGNAL) == 1)
        c->slow_pos++;
    c->next_byte_us = now + 500000;
}

static int
cmp64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

    return (x > y) - (x < y);
}

static double
pct(double p)
{
    long i;

    if (!st.nlat)
        return 0;
    i = (long)(p / 100.0 * (double)(st.nlat - 1) + 0.5);
    return (double)st.lat[i] / 1000.0;
}

static void
report(double elapsed)
{
    if (st.nlat) /* st.lat is NULL until a latency is kept */
        qsort(st.lat, (size_t)st.nlat, sizeof(*st.lat), cmp64);
    printf("requests=%ld ok=%ld failed=%ld timeouts=%ld s2xx=%ld s3xx=%ld s4xx=%ld s503=%ld "
           "s5xx_other=%ld retry_after_missing=%ld p50_ms=%.2f p99_ms=%.2f max_ms=%.2f "
           "rps=%.0f seconds=%.2f",
           st.started, st.ok, st.failed, st.timeouts, st.s2xx, st.s3xx, st.s4xx, st.s503, st.s5xx,
           st.retry_after_missing, pct(50), pct(99), pct(100),
           elapsed > 0 ? (double)st.started / elapsed : 0, elapsed);
    printf(" eof_before_response=%ld reset_before_response=%ld partial=%ld send_failed=%ld "
           "refused=%ld",
           st.eof_before_response, st.reset_before_response, st.partial, st.send_failed,
           st.refused);
    if (opt.learn_pid) {
        printf(" fail_unknown=%ld fail_pids=", st.fail_unknown);
        for (long i = 0; i < st.fail_pid_n; i++)
            printf("%s%ld:%ld", i ? "," : "", st.fail_pid[i], st.fail_count[i]);
        if (!st.fail_pid_n)
            printf("none");
    }
    if (opt.idle || opt.slow)
        printf(" idle=%d idle_open_fail=%ld idle_closed=%ld idle_close_min_ms=%lld "
               "idle_close_max_ms=%lld slow=%d slow_closed=%ld slow_close_max_ms=%lld",
               opt.idle, st.idle_open_fail, st.idle_closed, (long long)st.idle_close_min,
               (long long)st.idle_close_max, opt.slow, st.slow_closed,
               (long long)st.slow_close_max);
    printf("\n");
}

static void
usage(void)
{
    fprintf(stderr, "usage: loadgen -p PORT [-c CONNS] [-d SECONDS] [-n MAX] [-r RATE] [-k] "
                    "[-K] [-w] [-m METHOD] [-u PATH] [-b BODY] [-H HEADER] [-t TIMEOUT_MS] "
                    "[-s STOPFILE] [-o CSV] [-I IDLE] [-S SLOW] [-R BYTES_PER_S]\n");
    exit(2);
}

int
main(int argc, char **argv)
{
    struct pollfd *pfd;
    struct rlimit rl;
    int ch, idle_left, slow_left;
    int64_t end_us, hard_end_us;

    while ((ch = getopt(argc, argv, "p:c:d:n:r:kKwm:u:b:H:t:s:o:I:S:R:h:")) != -1) {
        switch (ch) {
        case 'p':
            opt.port = atoi(optarg);
            break;
        case 'h':
            opt.host = optarg;
            break;
        case 'c':
            opt.conns = atoi(optarg);
            break;
        case 'd':
            opt.seconds = atof(optarg);
            break;
        case 'n':
            opt.max_requests = atol(optarg);
            break;
        case 'r':
            opt.rate = atof(optarg);
            break;
        case 'k':
            opt.keepalive = 1;
            break;
        case 'K':
            opt.strict = opt.keepalive = 1;
            break;
        case 'w':
            opt.learn_pid = opt.keepalive = 1;
            break;
        case 'm':
            opt.method = optarg;
            break;
        case 'u':
            opt.path = optarg;
            break;
        case 'b':
            opt.body = optarg;
            break;
        case 'H':
            if (opt.nheaders < 8)
                opt.headers[opt.nheaders++] = optarg;
            break;
        case 't':
            opt.timeout_ms = atoi(optarg);
            break;
        case 's':
            opt.stopfile = optarg;
            break;
        case 'o':
            opt.csv = optarg;
            break;
        case 'I':
            opt.idle = atoi(optarg);
            break;
        case 'S':
            opt.slow = atoi(optarg);
            break;
        case 'R':
            opt.read_rate = atof(optarg);
            break;
        default:
            usage();
        }
    }
    /* Loopback only: this tool must never load another machine. */
    if (opt.port <= 0 || strncmp(opt.host, "127.", 4) != 0 ||
        opt.conns + opt.idle + opt.slow > MAX_CONNS || opt.conns < 0 || opt.seconds <= 0 ||
        opt.seconds > 600)
        usage();
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    conns = calloc(MAX_CONNS, sizeof(*conns));
    pfd = calloc(MAX_CONNS, sizeof(*pfd));
    if (!conns || !pfd)
        return 1;
    if (opt.csv && !(csv = fopen(opt.csv, "w")))
        return 1;
    if (csv)
        setvbuf(csv, NULL, _IOLBF, 0); /* a test may read it while the load runs */
    client_req = build_request(opt.method, opt.path, opt.body, opt.keepalive, &client_reqlen);
    probe_req = build_request("GET", "/healthz", NULL, 1, &probe_reqlen);
    for (int i = 0; i < MAX_CONNS; i++)
        conns[i].fd = -1;
    nconns = opt.conns;
    t0 = now_us();
    end_us = t0 + (int64_t)(opt.seconds * 1e6);
    hard_end_us = end_us + (int64_t)opt.timeout_ms * 1000 + 1000000;
    idle_left = opt.idle;
    slow_left = opt.slow;

    for (;;) {
        int64_t now = now_us();
        int n = 0, busy = 0;

        /* Holders open in batches, so the server's backlog is not the test. */
        if (idle_left > 0 || slow_left > 0) {
            int a = idle_left < 500 ? idle_left : 500;
            int b = slow_left < 50 ? slow_left : 50;
            open_holders(now, 1, a);
            open_holders(now, 2, b);
            idle_left -= a;
            slow_left -= b;
        }
        if (opt.stopfile && access(opt.stopfile, F_OK) == 0 && now < end_us)
            end_us = now, hard_end_us = now + (int64_t)opt.timeout_ms * 1000 + 1000000;
        if (now >= end_us)
            opt.seconds = (double)(end_us - t0) / 1e6; /* no new request */
        /* Rotate who goes first, so a rate limit starves no connection. */
        for (int k = 0, first = (int)(st.started % (nconns ? nconns : 1)); k < nconns; k++) {
            int i = (first + k) % nconns;
            struct conn *c = &conns[i];
            if (c->kind == 0 && c->state == C_FREE && may_start(now))
                start_request(c, now);
            if (c->kind == 0 &&
                (c->state == C_CONNECTING || c->state == C_SENDING || c->state == C_READING)) {
                if (now - c->started_us > (int64_t)opt.timeout_ms * 1000) {
                    if (!c->probing)
                        record(c, -1, 0);
                    conn_reset(c);
                    continue;
                }
                busy++;
            }
            if (c->state == C_SLOW)
                slow_step(c, now);
            pfd[i].fd = c->fd;
            pfd[i].events = 0;
            pfd[i].revents = 0;
            if (c->state == C_CONNECTING || c->state == C_SENDING)
                pfd[i].events = POLLOUT;
            else if (c->state == C_READING && opt.read_rate > 0 && read_budget(c, now) <= 0)
                pfd[i].fd = -1; /* -R: not yet; the poll's 5 ms tick paces it */
            else if (c->state == C_READING || c->state == C_IDLE_HOLD || c->state == C_SLOW)
                pfd[i].events = POLLIN;
            else
                pfd[i].fd = -1;
            n++;
        }
        if (now >= end_us && (busy == 0 || now >= hard_end_us))
            break;
        if (poll(pfd, (nfds_t)nconns, 5) < 0 && errno != EINTR)
            return 1;
        now = now_us();
        for (int i = 0; i < nconns; i++) {
            struct conn *c = &conns[i];
            short re = pfd[i].revents;
            if (pfd[i].fd < 0 || !re)
                continue;
            if (c->state == C_IDLE_HOLD || c->state == C_SLOW) {
                char tmp[512];
                ssize_t r = read(c->fd, tmp, sizeof(tmp));
                if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR))
                    hold_closed(c, now);
                else if (r > 0 && c->state == C_SLOW)
                    hold_closed(c, now); /* answered (408/400) and closing */
                continue;
            }
            if (c->state == C_CONNECTING) {
                int err = 0;
                socklen_t len = sizeof(err);
                getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len);
                if (err || (re & (POLLERR | POLLHUP))) {
                    st.refused++;
                    finish(c, 0, 0, 1);
                    continue;
                }
                c->state = C_SENDING;
            }
            if (c->state == C_SENDING)
                on_writable(c);
            else if (c->state == C_READING && (re & (POLLIN | POLLHUP | POLLERR)))
                on_readable(c);
        }
        (void)n;
    }
    /* Whatever the holders still hold is counted open; close them now. */
    for (int i = 0; i < nconns; i++)
        if (conns[i].fd >= 0)
            close_hard(conns[i].fd);
    report((double)(now_us() - t0) / 1e6);
    if (csv)
        fclose(csv);
    free(st.lat);
    free(client_req);
    free(probe_req);
    free(pfd);
    free(conns);
    return 0;
}
