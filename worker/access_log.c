/*
 * access_log: see access_log.h.
 */
#include "config.h"

#include "worker/access_log.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/http_struct.h>

#include "worker/json_out.h"
#include "common/log.h"

#define FLUSH_AT (64 * 1024)
#define FLUSH_EVERY_MS 1000

struct access_log {
    int fd;     /* -1 with syslog */
    int syslog; /* one syslog() call a line, nothing buffered */
    int json;
    int index;
    char path[4096];
    struct evbuffer *buf;
    struct event *timer;
};

static void
flush(struct access_log *a)
{
    size_t len = evbuffer_get_length(a->buf);

    /*
     * The buffer holds whole lines only and goes out in one write(): with
     * O_APPEND, lines of several workers sharing the file do not mix.
     */
    while (len > 0 && a->fd >= 0) {
        ssize_t n = write(a->fd, evbuffer_pullup(a->buf, -1), len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            log_warning("access log %s: %s; %zu bytes dropped", a->path,
                        n < 0 ? strerror(errno) : "short write", len);
            break;
        }
        evbuffer_drain(a->buf, (size_t)n);
        len -= (size_t)n;
    }
    evbuffer_drain(a->buf, evbuffer_get_length(a->buf));
}

static void
on_timer(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    flush(arg);
}

static int
open_file(struct access_log *a)
{
    a->fd = open(a->path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
    return a->fd < 0 ? -1 : 0;
}

struct access_log *
access_log_open(struct event_base *base, const char *target, int json, int worker_index, char *err,
                size_t errlen)
{
    struct access_log *a;
    struct timeval tv = {FLUSH_EVERY_MS / 1000, (FLUSH_EVERY_MS % 1000) * 1000};

    if (!target || !*target || strcmp(target, "off") == 0)
        return NULL;
    a = calloc(1, sizeof(*a));
    if (!a || !(a->buf = evbuffer_new()))
        goto oom;
    a->fd = -1;
    a->json = json;
    a->index = worker_index;
    if (strcmp(target, "syslog") == 0) {
        a->syslog = 1;
        openlog("conduitd", LOG_PID | LOG_NDELAY, LOG_DAEMON);
        return a;
    }
    snprintf(a->path, sizeof(a->path), "%s", target);
    if (open_file(a) < 0) {
        snprintf(err, errlen, "cannot open the access log %s: %s", target, strerror(errno));
        access_log_close(a);
        return NULL;
    }
    a->timer = event_new(base, -1, EV_PERSIST, on_timer, a);
    if (!a->timer || event_add(a->timer, &tv) < 0)
        goto oom;
    return a;
oom:
    snprintf(err, errlen, "access log: out of memory");
    access_log_close(a);
    return NULL;
}

static const char *
method_name(enum evhttp_cmd_type t)
{
    switch (t) {
    case EVHTTP_REQ_GET:
        return "GET";
    case EVHTTP_REQ_POST:
        return "POST";
    case EVHTTP_REQ_PUT:
        return "PUT";
    case EVHTTP_REQ_DELETE:
        return "DELETE";
    case EVHTTP_REQ_HEAD:
        return "HEAD";
    case EVHTTP_REQ_OPTIONS:
        return "OPTIONS";
    case EVHTTP_REQ_PATCH:
        return "PATCH";
    default:
        return "OTHER";
    }
}

/* A header for the combined format: "-" when absent, '"' and '\' escaped as nginx does. */
static void
quoted(struct evbuffer *b, const char *s)
{
    evbuffer_add(b, "\"", 1);
    if (!s || !*s)
        evbuffer_add(b, "-", 1);
    for (; s && *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\' || ch < 0x20 || ch >= 0x7f)
            evbuffer_add_printf(b, "\\x%02X", ch);
        else
            evbuffer_add(b, s, 1);
    }
    evbuffer_add(b, "\"", 1);
}

void
access_log_write(struct access_log *a, struct evhttp_request *req, int status, size_t body_len,
                 int64_t request_us, int64_t db_us)
{
    struct evkeyvalq *in;
    struct evhttp_connection *conn;
    const char *uri, *method, *referer, *agent;
    char *addr = NULL, tbuf[64], proto[16];
    ev_uint16_t port = 0;
    struct timespec ts;
    struct tm tm;
    struct evbuffer *b;

    if (!a || !req)
        return;
    in = evhttp_request_get_input_headers(req);
    conn = evhttp_request_get_connection(req);
    if (conn)
        evhttp_connection_get_peer(conn, &addr, &port);
    uri = evhttp_request_get_uri(req);
    method = method_name(evhttp_request_get_command(req));
    referer = evhttp_find_header(in, "Referer");
    agent = evhttp_find_header(in, "User-Agent");
    snprintf(proto, sizeof(proto), "HTTP/%d.%d", req->major, req->minor);
    clock_gettime(CLOCK_REALTIME, &ts);
    b = a->syslog ? evbuffer_new() : a->buf;
    if (!b)
        return;
    if (a->json) {
        gmtime_r(&ts.tv_sec, &tm);
        strftime(tbuf, sizeof(tbuf), "%Y-%m-%dT%H:%M:%S", &tm);
        evbuffer_add_printf(b, "{\"time\":\"%s.%03ldZ\",\"remote_addr\":", tbuf,
                            ts.tv_nsec / 1000000);
        json_out_cstr(b, addr ? addr : "-");
        evbuffer_add_printf(b, ",\"method\":\"%s\",\"uri\":", method);
        json_out_cstr(b, uri ? uri : "");
        evbuffer_add_printf(b,
                            ",\"protocol\":\"%s\",\"status\":%d,\"bytes\":%zu,\"referer\":", proto,
                            status, body_len);
        json_out_cstr(b, referer ? referer : "");
        evbuffer_add(b, ",\"user_agent\":", 14);
        json_out_cstr(b, agent ? agent : "");
        evbuffer_add_printf(b,
                            ",\"request_time\":%.6f,\"db_time\":%.6f,\"worker\":%d,\"pid\":%d}\n",
                            (double)request_us / 1e6, (double)db_us / 1e6, a->index, (int)getpid());
    } else {
        localtime_r(&ts.tv_sec, &tm);
        strftime(tbuf, sizeof(tbuf), "%d/%b/%Y:%H:%M:%S %z", &tm);
        evbuffer_add_printf(b, "%s - - [%s] \"%s ", addr ? addr : "-", tbuf, method);
        /* The URI as evhttp read it: printable ASCII, anything else escaped. */
        for (const char *p = uri ? uri : ""; *p; p++) {
            unsigned char ch = (unsigned char)*p;
            if (ch == '"' || ch == '\\' || ch < 0x20 || ch >= 0x7f)
                evbuffer_add_printf(b, "\\x%02X", ch);
            else
                evbuffer_add(b, p, 1);
        }
        evbuffer_add_printf(b, " %s\" %d %zu ", proto, status, body_len);
        quoted(b, referer);
        evbuffer_add(b, " ", 1);
        quoted(b, agent);
        evbuffer_add_printf(b, " %.3f %.3f\n", (double)request_us / 1e6, (double)db_us / 1e6);
    }
    if (a->syslog) {
        size_t n = evbuffer_get_length(b);
        syslog(LOG_INFO, "%.*s", (int)(n > 0 ? n - 1 : 0), (const char *)evbuffer_pullup(b, -1));
        evbuffer_free(b);
        return;
    }
    if (evbuffer_get_length(a->buf) >= FLUSH_AT)
        flush(a);
}

int
access_log_reopen(struct access_log *a)
{
    if (!a || a->syslog)
        return 0;
    flush(a);
    if (a->fd >= 0)
        close(a->fd);
    return open_file(a);
}

void
access_log_close(struct access_log *a)
{
    if (!a)
        return;
    if (a->buf) {
        flush(a);
        evbuffer_free(a->buf);
    }
    if (a->timer)
        event_free(a->timer);
    if (a->fd >= 0)
        close(a->fd);
    free(a);
}
