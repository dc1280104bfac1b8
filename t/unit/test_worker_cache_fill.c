/*
 * Unit tests for worker/cache_fill.c on a real event loop: the first miss
 * of a key fills it and the others wait; waiters are resumed in the order
 * they came, only once the fill's answer has been handled (from the loop,
 * not from cache_fill_done()), and only those of that key; a fill without
 * waiters ends quietly; a waiter resumed may start a fill of its own, and
 * its waiters are resumed in turn; waits are counted; freeing with fills
 * in flight resumes nobody; a fill is pending from its join to its end.
 */
#include "worker/cache_fill.h"

#include <check.h>
#include <string.h>

#include <event2/event.h>

#include "common/scoreboard.h"

static struct worker_slot slot;

/* What a waiter did: its number in resumed[], in order. */
static int resumed[16], nresumed;

struct req {
    int id;
    struct cache_fill_waiter w;
};

static void
resume(void *arg)
{
    struct req *r = arg;

    resumed[nresumed++] = r->id;
}

static int
join(struct cache_fills *f, const char *key, struct req *r, struct cache_fill **fill)
{
    r->w.resume = resume;
    r->w.arg = r;
    return cache_fill_join(f, key, &r->w, fill);
}

static void
run(struct event_base *base)
{
    event_base_loop(base, EVLOOP_NONBLOCK);
}

START_TEST(test_one_fill_many_waiters)
{
    struct event_base *base = event_base_new();
    struct cache_fills *f = cache_fills_new(base, &slot);
    struct cache_fill *fill = NULL, *other = NULL, *unused = NULL;
    struct req r[5] = {{.id = 0}, {.id = 1}, {.id = 2}, {.id = 3}, {.id = 4}};

    memset(&slot, 0, sizeof(slot));
    nresumed = 0;
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(cache_fill_pending(f, "tags"), 0);
    ck_assert_int_eq(join(f, "tags", &r[0], &fill), 1); /* the filler */
    ck_assert_ptr_nonnull(fill);
    ck_assert_int_eq(cache_fill_pending(f, "tags"), 1);
    ck_assert_int_eq(cache_fill_pending(f, "L|10|0"), 0);
    ck_assert_int_eq(join(f, "tags", &r[1], &unused), 0);
    ck_assert_int_eq(join(f, "L|10|0", &r[2], &other), 1); /* another key: its own fill */
    ck_assert_int_eq(join(f, "tags", &r[3], &unused), 0);
    ck_assert_int_eq(join(f, "L|10|0", &r[4], &unused), 0);
    ck_assert_ptr_null(unused);
    ck_assert_uint_eq(slot.c.cache_waits, 3);
    run(base);
    ck_assert_int_eq(nresumed, 0); /* nobody before its fill ends */
    cache_fill_done(f, fill);
    ck_assert_int_eq(cache_fill_pending(f, "tags"),
                     0);           /* ended: a stale answer waits for nothing */
    ck_assert_int_eq(nresumed, 0); /* not from within the answer's callback */
    run(base);
    ck_assert_int_eq(nresumed, 2);
    ck_assert_int_eq(resumed[0], 1); /* in the order they came */
    ck_assert_int_eq(resumed[1], 3);
    /* The key is free again: the next miss fills it. */
    ck_assert_int_eq(join(f, "tags", &r[1], &fill), 1);
    cache_fill_done(f, fill); /* no waiters: nothing to resume */
    cache_fill_done(f, other);
    run(base);
    ck_assert_int_eq(nresumed, 3);
    ck_assert_int_eq(resumed[2], 4);
    cache_fills_free(f);
    event_base_free(base);
}
END_TEST

/* A waiter that, resumed, fills the key itself; the ones after it wait for that fill. */
static struct cache_fills *chain_f;
static struct cache_fill *chain_fill;
static struct req chain_r[3];

static void
resume_and_fill(void *arg)
{
    struct req *r = arg;
    struct cache_fill *unused = NULL;

    resumed[nresumed++] = r->id;
    if (r->id == 1)
        ck_assert_int_eq(join(chain_f, "tags", r, &chain_fill), 1);
    else
        ck_assert_int_eq(join(chain_f, "tags", r, &unused), 0); /* waits for 1's */
}

START_TEST(test_resumed_waiter_refills)
{
    struct event_base *base = event_base_new();
    struct cache_fill *fill = NULL, *unused = NULL;

    nresumed = 0;
    chain_f = cache_fills_new(base, NULL); /* no slot: not counted, still works */
    for (int i = 0; i < 3; i++)
        chain_r[i].id = i;
    ck_assert_int_eq(join(chain_f, "tags", &chain_r[0], &fill), 1);
    for (int i = 1; i < 3; i++) {
        chain_r[i].w.resume = resume_and_fill;
        chain_r[i].w.arg = &chain_r[i];
        ck_assert_int_eq(cache_fill_join(chain_f, "tags", &chain_r[i].w, &unused), 0);
    }
    cache_fill_done(chain_f, fill);
    run(base);
    ck_assert_int_eq(nresumed, 2); /* 1 fills again, 2 waits for it */
    cache_fill_done(chain_f, chain_fill);
    run(base);
    ck_assert_int_eq(nresumed, 3);
    ck_assert_int_eq(resumed[2], 2);
    cache_fills_free(chain_f);
    event_base_free(base);
}
END_TEST

START_TEST(test_free_with_fills_in_flight)
{
    struct event_base *base = event_base_new();
    struct cache_fills *f = cache_fills_new(base, NULL);
    struct cache_fill *fill = NULL, *unused = NULL;
    struct req r[2] = {{.id = 0}, {.id = 1}};

    nresumed = 0;
    ck_assert_int_eq(join(f, "a:x", &r[0], &fill), 1);
    ck_assert_int_eq(join(f, "a:x", &r[1], &unused), 0);
    cache_fill_done(f, fill); /* ended, its waiter not yet resumed */
    ck_assert_int_eq(join(f, "a:y", &r[0], &fill), 1);
    cache_fills_free(f); /* a worker exiting */
    run(base);
    ck_assert_int_eq(nresumed, 0);
    event_base_free(base);
}
END_TEST

static Suite *
cache_fill_suite(void)
{
    Suite *s = suite_create("cache_fill");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, test_one_fill_many_waiters);
    tcase_add_test(tc, test_resumed_waiter_refills);
    tcase_add_test(tc, test_free_with_fills_in_flight);
    suite_add_tcase(s, tc);
    return s;
}

#include "check_main.h"
CHECK_MAIN(cache_fill_suite)
