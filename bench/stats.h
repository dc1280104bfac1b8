/*
 * stats: what a window of the run saw: latency overall and per endpoint
 * (hist.h), requests and errors by kind, and the pages (how many, how long,
 * how many requests each) that Little's law needs.
 *
 * Ownership: stats_new allocates one block; stats_free frees it.
 */
#ifndef CONDUIT_BENCH_STATS_H
#define CONDUIT_BENCH_STATS_H

#include <stdint.h>

#include "bench/conn.h"
#include "bench/hist.h"

struct stats {
    int nep;
    struct hist all;
    struct hist *ep;         /* [nep] */
    uint64_t err[CONN_NERR]; /* err[CONN_OK]: requests that went well */
    uint64_t *ep_err;        /* [nep][CONN_NERR] */
    uint64_t requests;       /* finished, whatever the outcome */
    uint64_t responses;      /* of them, those the server answered */
    uint64_t pages, page_reqs;
    uint64_t page_reqs_sq; /* the sum of each page's requests squared (Little's law) */
    double page_us;
    uint64_t bad_status[600]; /* unexpected statuses, by code */
};

struct stats *stats_new(int nep);
void stats_free(struct stats *s);
void stats_reset(struct stats *s);

/* Latency is recorded for every request the server answered. */
void stats_request(struct stats *s, int ep, const struct conn_result *r);
void stats_page(struct stats *s, int nreq, int64_t page_us);

/*
 * Adds src into dst (the same endpoints): histograms bucket by bucket,
 * counts summed, so the merge of disjoint samples is exactly the stats of
 * all of them (the generator processes of one run merge this way).
 */
void stats_merge(struct stats *dst, const struct stats *src);

uint64_t stats_errors(const struct stats *s);
uint64_t stats_ep_errors(const struct stats *s, int ep);

#endif
