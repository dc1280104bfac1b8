/*
 * stats: see stats.h.
 */
#include "config.h"

#include "bench/stats.h"

#include <stdlib.h>
#include <string.h>

struct stats *
stats_new(int nep)
{
    struct stats *s = calloc(1, sizeof(*s));

    if (!s)
        return NULL;
    s->nep = nep;
    s->ep = calloc((size_t)(nep ? nep : 1), sizeof(*s->ep));
    s->ep_err = calloc((size_t)(nep ? nep : 1) * CONN_NERR, sizeof(*s->ep_err));
    if (!s->ep || !s->ep_err) {
        stats_free(s);
        return NULL;
    }
    stats_reset(s);
    return s;
}

void
stats_free(struct stats *s)
{
    if (!s)
        return;
    free(s->ep);
    free(s->ep_err);
    free(s);
}

void
stats_reset(struct stats *s)
{
    hist_init(&s->all);
    for (int i = 0; i < s->nep; i++)
        hist_init(&s->ep[i]);
    memset(s->err, 0, sizeof(s->err));
    memset(s->ep_err, 0, (size_t)s->nep * CONN_NERR * sizeof(*s->ep_err));
    memset(s->bad_status, 0, sizeof(s->bad_status));
    s->requests = s->responses = s->pages = s->page_reqs = s->page_reqs_sq = 0;
    s->page_us = 0;
}

void
stats_request(struct stats *s, int ep, const struct conn_result *r)
{
    s->requests++;
    s->err[r->err]++;
    if (r->err == CONN_ESTATUS && r->status >= 0 && r->status < 600)
        s->bad_status[r->status]++;
    if (ep >= 0 && ep < s->nep)
        s->ep_err[ep * CONN_NERR + r->err]++;
    if (r->err == CONN_OK || r->err == CONN_ESTATUS) {
        uint64_t us = r->done_us > r->sent_us ? (uint64_t)(r->done_us - r->sent_us) : 0;

        s->responses++;
        hist_record(&s->all, us);
        if (ep >= 0 && ep < s->nep)
            hist_record(&s->ep[ep], us);
    }
}

void
stats_page(struct stats *s, int nreq, int64_t page_us)
{
    s->pages++;
    s->page_reqs += (uint64_t)nreq;
    s->page_reqs_sq += (uint64_t)nreq * (uint64_t)nreq;
    s->page_us += (double)page_us;
}

void
stats_merge(struct stats *dst, const struct stats *src)
{
    int nep = dst->nep < src->nep ? dst->nep : src->nep;

    hist_merge(&dst->all, &src->all);
    for (int i = 0; i < nep; i++)
        hist_merge(&dst->ep[i], &src->ep[i]);
    for (int k = 0; k < CONN_NERR; k++)
        dst->err[k] += src->err[k];
    for (int i = 0; i < nep * CONN_NERR; i++)
        dst->ep_err[i] += src->ep_err[i];
    for (int c = 0; c < 600; c++)
        dst->bad_status[c] += src->bad_status[c];
    dst->requests += src->requests;
    dst->responses += src->responses;
    dst->pages += src->pages;
    dst->page_reqs += src->page_reqs;
    dst->page_reqs_sq += src->page_reqs_sq;
    dst->page_us += src->page_us;
}

uint64_t
stats_errors(const struct stats *s)
{
    return s->requests - s->err[CONN_OK];
}

uint64_t
stats_ep_errors(const struct stats *s, int ep)
{
    uint64_t n = 0;

    for (int k = CONN_ECONNECT; k < CONN_NERR; k++)
        n += s->ep_err[ep * CONN_NERR + k];
    return n;
}
