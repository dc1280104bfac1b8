/*
 * Unit tests for bench/wire.c and stats_merge: the statistics of several
 * generator processes, packed, sent and merged, must be exactly those of
 * all their samples (every bucket, count, error and status), and bytes
 * that are not a packed stats of the right shape are refused.
 */
#include "bench/wire.h"

#include <check.h>
#include <string.h>

#define NEP 3

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t
next(void)
{
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 0x2545F4914F6CDD1DULL;
}

/* A random request into both s and all. */
static void
one(struct stats *s, struct stats *all)
{
    static const int errs[] = {CONN_OK,       CONN_OK,         CONN_OK,      CONN_ESTATUS,
                               CONN_ETIMEOUT, CONN_ETRANSPORT, CONN_ECONNECT};
    struct conn_result r = {0};
    int ep = (int)(next() % NEP);

    r.err = errs[next() % 7];
    r.status = r.err == CONN_ESTATUS ? 500 + (int)(next() % 4) : 200;
    r.sent_us = 0;
    /* From tens of microseconds to past the 60 s clamp. */
    r.done_us =
        (int64_t)(next() % 1000 == 0 ? 70000000 : (next() % 2 ? next() % 2000 : next() % 3000000));
    stats_request(s, ep, &r);
    stats_request(all, ep, &r);
    if (next() % 3 == 0) {
        int n = 1 + (int)(next() % 3);

        stats_page(s, n, r.done_us);
        stats_page(all, n, r.done_us);
    }
}

static void
assert_same(const struct stats *a, const struct stats *b)
{
    ck_assert_int_eq(memcmp(&a->all, &b->all, sizeof(a->all)), 0);
    for (int i = 0; i < NEP; i++)
        ck_assert_int_eq(memcmp(&a->ep[i], &b->ep[i], sizeof(a->ep[i])), 0);
    ck_assert_int_eq(memcmp(a->err, b->err, sizeof(a->err)), 0);
    ck_assert_int_eq(memcmp(a->ep_err, b->ep_err, NEP * CONN_NERR * sizeof(*a->ep_err)), 0);
    ck_assert_int_eq(memcmp(a->bad_status, b->bad_status, sizeof(a->bad_status)), 0);
    ck_assert_uint_eq(a->requests, b->requests);
    ck_assert_uint_eq(a->responses, b->responses);
    ck_assert_uint_eq(a->pages, b->pages);
    ck_assert_uint_eq(a->page_reqs, b->page_reqs);
    ck_assert_uint_eq(a->page_reqs_sq, b->page_reqs_sq);
    ck_assert_double_eq(a->page_us, b->page_us);
    for (double p = 1; p < 100; p += 0.5)
        ck_assert_uint_eq(hist_percentile(&a->all, p), hist_percentile(&b->all, p));
}

START_TEST(test_merge_is_exact)
{
    struct stats *part[4], *all = stats_new(NEP), *merged = stats_new(NEP), *tmp = stats_new(NEP);
    struct wbuf w = {0};

    for (int k = 0; k < 4; k++) {
        part[k] = stats_new(NEP);
        for (int i = 0; i < 20000 * (k + 1); i++)
            one(part[k], all);
    }
    /* Each part packed and sent as one frame, unpacked and merged. */
    for (int k = 0; k < 4; k++) {
        const unsigned char *p, *end;
        uint32_t len, type;

        wire_frame_begin(&w, 7);
        wire_pack_stats(&w, part[k]);
        wire_frame_end(&w);
        ck_assert(!w.failed);
        p = w.p;
        end = w.p + w.len;
        ck_assert_int_eq(wire_take(&p, end, &len, sizeof(len)), 0);
        ck_assert_uint_eq(len, w.len - 4);
        ck_assert_int_eq(wire_take(&p, end, &type, sizeof(type)), 0);
        ck_assert_uint_eq(type, 7);
        ck_assert_int_eq(wire_unpack_stats(&p, end, tmp), 0);
        ck_assert(p == end);
        assert_same(tmp, part[k]);
        stats_merge(merged, tmp);
    }
    assert_same(merged, all);
    ck_assert_uint_eq(merged->all.count, merged->responses);
    ck_assert_uint_gt(merged->all.clamped, 0);
    for (int k = 0; k < 4; k++)
        stats_free(part[k]);
    stats_free(all);
    stats_free(merged);
    stats_free(tmp);
    wbuf_free(&w);
}
END_TEST

START_TEST(test_bad_bytes_refused)
{
    struct stats *s = stats_new(NEP), *other = stats_new(NEP + 1), *tmp = stats_new(NEP);
    struct wbuf w = {0};
    const unsigned char *p;

    for (int i = 0; i < 1000; i++)
        one(s, tmp);
    wire_pack_stats(&w, s);
    /* Cut anywhere: refused, never read past the end. */
    for (size_t cut = 0; cut < w.len; cut += 1 + cut / 8) {
        p = w.p;
        ck_assert_int_eq(wire_unpack_stats(&p, w.p + cut, tmp), -1);
    }
    /* Another number of endpoints: refused. */
    p = w.p;
    ck_assert_int_eq(wire_unpack_stats(&p, w.p + w.len, other), -1);
    p = w.p;
    ck_assert_int_eq(wire_unpack_stats(&p, w.p + w.len, tmp), 0);
    stats_free(s);
    stats_free(other);
    stats_free(tmp);
    wbuf_free(&w);
}
END_TEST

static Suite *
wire_suite(void)
{
    Suite *s = suite_create("bench_wire");
    TCase *tc = tcase_create("merge");

    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_merge_is_exact);
    tcase_add_test(tc, test_bad_bytes_refused);
    suite_add_tcase(s, tc);
    return s;
}

#include "check_main.h"
CHECK_MAIN(wire_suite)
