/*
 * Unit tests for worker/cache_peers.c's hearing side: which keys of the
 * cache's channel are announcements, that an instance's own words are not
 * taken for another's, that a name heard (any session may NOTIFY) reaches
 * the log and /healthz with only host-name characters, and that a mismatch
 * is reported while recent and not before anything was heard.
 */
#include "worker/cache_peers.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"

/* The instance under test, "here pid 1", which only listens: no loop, no pool. */
static struct cache_peers *p;
static char peer[96];
static int64_t ago;

static void
setup(void)
{
    log_open("/dev/null", LOG_LEVEL_ERROR); /* the errors heard are this test's to check */
    p = cache_peers_new(NULL, NULL, "here pid 1", 0);
    ck_assert_ptr_nonnull(p);
    ago = -1;
}

static void
teardown(void)
{
    cache_peers_free(p);
}

/* Hears key (taken: whether it is an announcement), then says whether a mismatch is reported. */
static int
mismatch_after(const char *key, int taken)
{
    ck_assert_int_eq(cache_peers_heard(p, key), taken);
    return cache_peers_mismatch(p, peer, sizeof(peer), &ago);
}

START_TEST(test_keys_are_not_announcements)
{
    ck_assert_int_eq(mismatch_after("u:42", 0), 0);
    ck_assert_int_eq(mismatch_after("p:bea", 0), 0);
    ck_assert_int_eq(mismatch_after("*", 0), 0);
    ck_assert_int_eq(mismatch_after("tags", 0), 0);
}
END_TEST

START_TEST(test_own_words_are_ignored)
{
    ck_assert_int_eq(mismatch_after("!nonotify here pid 1", 1), 0);
    /* A later version's announcement is no key either, and no mismatch. */
    ck_assert_int_eq(mismatch_after("!something else", 1), 0);
}
END_TEST

START_TEST(test_another_instance_is_named)
{
    ck_assert_int_eq(mismatch_after("!nonotify there pid 7", 1), 1);
    ck_assert_str_eq(peer, "there pid 7");
    ck_assert_int_ge(ago, 0);
    ck_assert_int_le(ago, CACHE_PEERS_FRESH_MS);
    /* The same host with another master's pid is another instance. */
    ck_assert_int_eq(mismatch_after("!nonotify here pid 2", 1), 1);
    ck_assert_str_eq(peer, "here pid 2");
}
END_TEST

START_TEST(test_names_are_filtered)
{
    ck_assert_int_eq(mismatch_after("!nonotify x\",\"y\\\n\x01 pid 9", 1), 1);
    ck_assert_str_eq(peer, "x???y??? pid 9");
}
END_TEST

START_TEST(test_no_peers_no_mismatch)
{
    ck_assert_int_eq(cache_peers_mismatch(NULL, peer, sizeof(peer), &ago), 0);
}
END_TEST

static Suite *
cache_peers_suite(void)
{
    Suite *s = suite_create("cache_peers");
    TCase *tc = tcase_create("core");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_keys_are_not_announcements);
    tcase_add_test(tc, test_own_words_are_ignored);
    tcase_add_test(tc, test_another_instance_is_named);
    tcase_add_test(tc, test_names_are_filtered);
    tcase_add_test(tc, test_no_peers_no_mismatch);
    suite_add_tcase(s, tc);
    return s;
}

#include "t/unit/check_main.h"
CHECK_MAIN(cache_peers_suite)
