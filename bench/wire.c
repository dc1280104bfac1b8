/*
 * wire: see wire.h.
 */
#include "config.h"

#include "bench/wire.h"

#include <stdlib.h>
#include <string.h>

void
wbuf_put(struct wbuf *w, const void *p, size_t n)
{
    if (w->failed)
        return;
    if (w->len + n > w->cap) {
        size_t cap = w->cap ? w->cap : 4096;
        unsigned char *grown;

        while (cap < w->len + n)
            cap *= 2;
        if (!(grown = realloc(w->p, cap))) {
            w->failed = 1;
            return;
        }
        w->p = grown;
        w->cap = cap;
    }
    memcpy(w->p + w->len, p, n);
    w->len += n;
}

void
wbuf_free(struct wbuf *w)
{
    free(w->p);
    memset(w, 0, sizeof(*w));
}

void
wire_frame_begin(struct wbuf *w, uint32_t type)
{
    uint32_t len = 0;

    w->len = 0;
    wbuf_put(w, &len, sizeof(len));
    wbuf_put(w, &type, sizeof(type));
}

void
wire_frame_end(struct wbuf *w)
{
    uint32_t len = (uint32_t)(w->len - sizeof(uint32_t));

    if (!w->failed)
        memcpy(w->p, &len, sizeof(len));
}

int
wire_take(const unsigned char **p, const unsigned char *end, void *out, size_t n)
{
    if ((size_t)(end - *p) < n)
        return -1;
    memcpy(out, *p, n);
    *p += n;
    return 0;
}

/* What a histogram is besides its buckets. */
struct hist_head {
    uint64_t count, clamped, min_us, max_us;
    double sum_us;
    uint32_t nonzero;
};

struct bucket {
    uint32_t i;
    uint64_t n;
};

static void
pack_hist(struct wbuf *w, const struct hist *h)
{
    struct hist_head hd = {h->count, h->clamped, h->min_us, h->max_us, h->sum_us, 0};

    for (int i = 0; i < HIST_BUCKETS; i++)
        hd.nonzero += h->b[i] != 0;
    wbuf_put(w, &hd, sizeof(hd));
    for (int i = 0; i < HIST_BUCKETS; i++) {
        struct bucket b = {(uint32_t)i, h->b[i]};

        if (b.n)
            wbuf_put(w, &b, sizeof(b));
    }
}

static int
unpack_hist(const unsigned char **p, const unsigned char *end, struct hist *h)
{
    struct hist_head hd;

    hist_init(h);
    if (wire_take(p, end, &hd, sizeof(hd)) < 0 || hd.nonzero > HIST_BUCKETS)
        return -1;
    for (uint32_t k = 0; k < hd.nonzero; k++) {
        struct bucket b;

        if (wire_take(p, end, &b, sizeof(b)) < 0 || b.i >= HIST_BUCKETS)
            return -1;
        h->b[b.i] = b.n;
    }
    h->count = hd.count;
    h->clamped = hd.clamped;
    h->min_us = hd.min_us;
    h->max_us = hd.max_us;
    h->sum_us = hd.sum_us;
    return 0;
}

/* The counters of a stats, in one piece. */
struct stats_head {
    int32_t nep;
    uint64_t err[CONN_NERR];
    uint64_t requests, responses, pages, page_reqs, page_reqs_sq;
    double page_us;
    uint32_t nstatus; /* (code, count) pairs that follow */
};

struct status_count {
    uint32_t code;
    uint64_t n;
};

void
wire_pack_stats(struct wbuf *w, const struct stats *s)
{
    struct stats_head hd = {
        .nep = s->nep,
        .requests = s->requests,
        .responses = s->responses,
        .pages = s->pages,
        .page_reqs = s->page_reqs,
        .page_reqs_sq = s->page_reqs_sq,
        .page_us = s->page_us,
    };

    memcpy(hd.err, s->err, sizeof(hd.err));
    for (int c = 0; c < 600; c++)
        hd.nstatus += s->bad_status[c] != 0;
    wbuf_put(w, &hd, sizeof(hd));
    for (int c = 0; c < 600; c++) {
        struct status_count sc = {(uint32_t)c, s->bad_status[c]};

        if (sc.n)
            wbuf_put(w, &sc, sizeof(sc));
    }
    wbuf_put(w, s->ep_err, (size_t)s->nep * CONN_NERR * sizeof(*s->ep_err));
    pack_hist(w, &s->all);
    for (int i = 0; i < s->nep; i++)
        pack_hist(w, &s->ep[i]);
}

int
wire_unpack_stats(const unsigned char **p, const unsigned char *end, struct stats *out)
{
    struct stats_head hd;

    stats_reset(out);
    if (wire_take(p, end, &hd, sizeof(hd)) < 0 || hd.nep != out->nep || hd.nstatus > 600)
        return -1;
    for (uint32_t k = 0; k < hd.nstatus; k++) {
        struct status_count sc;

        if (wire_take(p, end, &sc, sizeof(sc)) < 0 || sc.code >= 600)
            return -1;
        out->bad_status[sc.code] = sc.n;
    }
    if (wire_take(p, end, out->ep_err, (size_t)out->nep * CONN_NERR * sizeof(*out->ep_err)) < 0 ||
        unpack_hist(p, end, &out->all) < 0)
        return -1;
    for (int i = 0; i < out->nep; i++)
        if (unpack_hist(p, end, &out->ep[i]) < 0)
            return -1;
    memcpy(out->err, hd.err, sizeof(out->err));
    out->requests = hd.requests;
    out->responses = hd.responses;
    out->pages = hd.pages;
    out->page_reqs = hd.page_reqs;
    out->page_reqs_sq = hd.page_reqs_sq;
    out->page_us = hd.page_us;
    return 0;
}
