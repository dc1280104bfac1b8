/*
 * httpc: see httpc.h.
 */
#include "config.h"

#include "bench/httpc.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum { ST_STATUS, ST_HEADER, ST_BODY, ST_DONE };

void
httpc_init(struct httpc *p)
{
    memset(p, 0, sizeof(*p));
    p->content_length = -1;
}

static int
prefix(const char *line, size_t len, const char *name)
{
    size_t n = strlen(name);

    return len >= n && strncasecmp(line, name, n) == 0;
}

static int64_t
number(const char *s, size_t len)
{
    int64_t v = 0;
    size_t i = 0;

    while (i < len && (s[i] == ' ' || s[i] == '\t'))
        i++;
    if (i == len || s[i] < '0' || s[i] > '9')
        return -1;
    for (; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
        v = v * 10 + (s[i] - '0');
        if (v > (int64_t)1 << 40)
            return -1;
    }
    return v;
}

/* A whole line (its first HTTPC_LINE bytes) has arrived. */
static int
on_line(struct httpc *p, const char **why)
{
    const char *l = p->line;
    size_t n = p->line_len;

    if (n > 0 && l[n - 1] == '\r')
        n--;
    if (p->state == ST_STATUS) {
        /* "HTTP/1.1 200 OK" */
        if (n < 12 || memcmp(l, "HTTP/1.", 7) != 0 || l[8] != ' ') {
            *why = "not an HTTP/1.x status line";
            return -1;
        }
        p->status = (int)number(l + 9, 3);
        if (p->status < 100 || p->status > 599) {
            *why = "bad status code";
            return -1;
        }
        p->close = l[7] == '0'; /* HTTP/1.0 closes unless told otherwise */
        p->state = ST_HEADER;
        return 0;
    }
    if (n == 0) {
        if (p->chunked) {
            *why = "chunked responses are not supported";
            return -1;
        }
        if (p->status == 204 || p->status == 304 || p->status < 200)
            p->content_length = 0;
        if (p->content_length < 0) {
            *why = "response without Content-Length";
            return -1;
        }
        p->body_left = p->content_length;
        p->state = p->body_left ? ST_BODY : ST_DONE;
        return 0;
    }
    if (prefix(l, n, "content-length:")) {
        p->content_length = number(l + 15, n - 15);
        if (p->content_length < 0) {
            *why = "bad Content-Length";
            return -1;
        }
    } else if (prefix(l, n, "connection:")) {
        const char *v = l + 11;
        size_t vn = n - 11;

        while (vn && *v == ' ')
            v++, vn--;
        if (prefix(v, vn, "close"))
            p->close = 1;
        else if (prefix(v, vn, "keep-alive"))
            p->close = 0;
    } else if (prefix(l, n, "transfer-encoding:")) {
        p->chunked = 1;
    }
    return 0;
}

static int
keep_bytes(struct httpc_body *keep, const char *s, size_t n)
{
    if (keep->len + n > keep->cap) {
        size_t cap = keep->cap ? keep->cap : 1024;
        char *grown;

        while (cap < keep->len + n)
            cap *= 2;
        if (cap > HTTPC_BODY_MAX || !(grown = realloc(keep->buf, cap + 1)))
            return -1;
        keep->buf = grown;
        keep->cap = cap;
    }
    memcpy(keep->buf + keep->len, s, n);
    keep->len += n;
    keep->buf[keep->len] = '\0';
    return 0;
}

enum httpc_rc
httpc_feed(struct httpc *p, const char *buf, size_t len, size_t *used, struct httpc_body *keep,
           const char **why)
{
    size_t i = 0;

    while (i < len && p->state != ST_DONE) {
        if (p->state == ST_BODY) {
            size_t n = len - i;

            if ((int64_t)n > p->body_left)
                n = (size_t)p->body_left;
            if (keep && keep_bytes(keep, buf + i, n) < 0) {
                *used = i;
                *why = "response body too large to keep";
                return HTTPC_ERROR;
            }
            p->body_left -= (int64_t)n;
            i += n;
            if (p->body_left == 0)
                p->state = ST_DONE;
            continue;
        }
        /* A header byte: find the end of the line within this piece. */
        const char *nl = memchr(buf + i, '\n', len - i);
        size_t n = nl ? (size_t)(nl - (buf + i)) : len - i;
        size_t room = HTTPC_LINE - p->line_len;

        memcpy(p->line + p->line_len, buf + i, n < room ? n : room);
        p->line_len = (uint8_t)(p->line_len + (n < room ? n : room));
        i += n;
        if (!nl)
            break;
        i++; /* the '\n' */
        if (on_line(p, why) < 0) {
            *used = i;
            return HTTPC_ERROR;
        }
        p->line_len = 0;
    }
    *used = i;
    return p->state == ST_DONE ? HTTPC_DONE : HTTPC_MORE;
}

int
httpc_json_string(const char *json, size_t len, const char *key, char *out, size_t cap)
{
    size_t klen = strlen(key);

    for (size_t i = 0; i + klen + 4 < len; i++) {
        const char *v, *end;

        if (json[i] != '"' || memcmp(json + i + 1, key, klen) != 0 || json[i + 1 + klen] != '"')
            continue;
        v = json + i + klen + 2;
        while (v < json + len && (*v == ' ' || *v == ':'))
            v++;
        if (v >= json + len || *v != '"')
            continue;
        v++;
        end = memchr(v, '"', (size_t)(json + len - v));
        if (!end || (size_t)(end - v) + 1 > cap)
            return -1;
        memcpy(out, v, (size_t)(end - v));
        out[end - v] = '\0';
        return 0;
    }
    return -1;
}
