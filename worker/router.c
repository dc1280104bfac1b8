/*
 * router: method and path to a route table entry.  See router.h.
 */
#include "config.h"

#include "worker/router.h"

#include <string.h>

#include "worker/utf8.h"

#define MAX_SEGMENTS 16

static int
hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

long
router_percent_decode(char *s, size_t n)
{
    size_t r = 0, w = 0;

    while (r < n) {
        if (s[r] == '%') {
            int hi, lo;
            if (r + 2 >= n)
                return -1;
            hi = hexval((unsigned char)s[r + 1]);
            lo = hexval((unsigned char)s[r + 2]);
            if (hi < 0 || lo < 0)
                return -1;
            s[w++] = (char)(hi * 16 + lo);
            r += 3;
        } else {
            s[w++] = s[r++];
        }
    }
    s[w] = '\0';
    return (long)w;
}

/* Splits "/a/b/c" into segments pointing into buf; -1 if it is no path. */
static int
split(char *buf, const char *segs[], size_t lens[])
{
    int n = 0;
    char *p = buf;

    if (*p != '/')
        return -1;
    p++;
    if (*p == '\0')
        return 0; /* "/" */
    for (;;) {
        char *slash = strchr(p, '/');
        size_t len = slash ? (size_t)(slash - p) : strlen(p);
        if (slash && slash[1] == '\0') {
            /* One trailing slash is forgiven; "a//b" is not. */
            if (len == 0 || n == MAX_SEGMENTS)
                return -1;
            segs[n] = p;
            lens[n++] = len;
            *slash = '\0';
            return n;
        }
        if (len == 0 || n == MAX_SEGMENTS)
            return -1;
        segs[n] = p;
        lens[n++] = len;
        if (!slash)
            return n;
        *slash = '\0';
        p = slash + 1;
    }
}

/* Does the pattern fit the segments?  Fills params when it does. */
static int
fits(const char *pattern, const char *segs[], const size_t lens[], int nseg, struct router_match *m)
{
    const char *p = pattern;
    int i = 0;

    m->nparams = 0;
    while (*p == '/')
        p++;
    while (*p) {
        const char *end = strchr(p, '/');
        size_t plen = end ? (size_t)(end - p) : strlen(p);
        if (i == nseg)
            return 0;
        if (p[0] == ':') {
            if (m->nparams == ROUTER_MAX_PARAMS)
                return 0;
            m->params[m->nparams] = segs[i];
            m->param_len[m->nparams] = lens[i];
            m->nparams++;
        } else if (plen != lens[i] || memcmp(p, segs[i], plen) != 0) {
            return 0;
        }
        i++;
        p += plen;
        while (*p == '/')
            p++;
    }
    return i == nseg;
}

enum router_result
router_match(const struct route *table, size_t n, int method, const char *path,
             struct router_match *m)
{
    const char *segs[MAX_SEGMENTS];
    size_t lens[MAX_SEGMENTS];
    size_t plen = strlen(path);
    int nseg;

    m->route = NULL;
    m->nparams = 0;
    m->allowed = 0;
    if (plen > ROUTER_MAX_PATH)
        return ROUTER_NOT_FOUND;
    memcpy(m->buf, path, plen + 1);
    nseg = split(m->buf, segs, lens);
    if (nseg < 0)
        return ROUTER_NOT_FOUND;

    for (size_t i = 0; i < n; i++) {
        if (!fits(table[i].pattern, segs, lens, nseg, m))
            continue;
        /* HEAD is answered wherever GET is. */
        if (table[i].method == method || (method == ROUTER_HEAD && table[i].method == ROUTER_GET)) {
            if (!m->route)
                m->route = &table[i];
            break;
        }
        m->allowed |= table[i].method;
    }
    if (!m->route)
        return m->allowed ? ROUTER_METHOD_NOT_ALLOWED : ROUTER_NOT_FOUND;

    /* Run fits() again: a failed earlier candidate may have left params. */
    fits(m->route->pattern, segs, lens, nseg, m);
    for (int i = 0; i < m->nparams; i++) {
        char *s = (char *)m->params[i];
        long len = router_percent_decode(s, m->param_len[i]);
        if (len <= 0 || memchr(s, '\0', (size_t)len) || !json_utf8_valid(s, (size_t)len)) {
            m->route = NULL;
            return ROUTER_NOT_FOUND;
        }
        m->param_len[i] = (size_t)len;
    }
    return ROUTER_MATCH;
}

void
router_allow_header(int methods, char *out, size_t outlen)
{
    static const struct {
        int bit;
        const char *name;
    } names[] = {{ROUTER_GET, "GET"},        {ROUTER_HEAD, "HEAD"},     {ROUTER_POST, "POST"},
                 {ROUTER_PUT, "PUT"},        {ROUTER_DELETE, "DELETE"}, {ROUTER_PATCH, "PATCH"},
                 {ROUTER_OPTIONS, "OPTIONS"}};
    size_t used = 0;

    if (methods & ROUTER_GET)
        methods |= ROUTER_HEAD;
    out[0] = '\0';
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        size_t len = strlen(names[i].name);
        if (!(methods & names[i].bit))
            continue;
        if (used + len + 3 > outlen)
            break;
        if (used) {
            memcpy(out + used, ", ", 2);
            used += 2;
        }
        memcpy(out + used, names[i].name, len + 1);
        used += len;
    }
}
