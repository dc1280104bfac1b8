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

static struct cache_peers *
listener(const char *self)
{
    /* No announcing: neither the loop nor the pool is touched. */
    struct cache_peers *p = cache_peers_new(NULL, NULL, self, 0);

    log_open("/dev/null", LOG_LEVEL_ERROR); /* the errors heard are this test's to check */

    ck_assert_ptr_nonnull(p);
    return p;
}

START_TEST(test_keys_are_not_announcements)
{
    struct cache_peers *p = listener("here pid 1");
    char peer[96];
    int64_t ago;

    ck_assert_int_eq(cache_peers_heard(p, "u:42"), 0);
    ck_assert_int_eq(cache_peers_heard(p, "p:bea"), 0);
    ck_assert_int_eq(cache_peers_heard(p, "*"), 0);
    ck_assert_int_eq(cache_peers_heard(p, "tags"), 0);
    ck_assert_int_eq(cache_peers_mismatch(p, peer, sizeof(peer), &ago), 0);
    cache_peers_free(p);
}
END_TEST

START_TEST(test_own_words_are_ignored)
{
    struct cache_peers *p = listener("here pid 1");
    char peer[96];
    int64_t ago;

    ck_assert_int_eq(cache_peers_heard(p, "!nonotify here pid 1"), 1);
    ck_assert_int_eq(cache_peers_mismatch(p, peer, sizeof(peer), &ago), 0);
    /* A later version's announcement is no key either, and no mismatch. */
    ck_assert_int_eq(cache_peers_heard(p, "!something else"), 1);
    ck_assert_int_eq(cache_peers_mismatch(p, peer, sizeof(peer), &ago), 0);
    cache_peers_free(p);
}
END_TEST

START_TEST(test_another_instance_is_named)
{
    struct cache_peers *p = listener("here pid 1");
    char peer[96];
    int64_t ago = -1;

    ck_assert_int_eq(cache_peers_heard(p, "!nonotify there pid 7"), 1);
    ck_assert_int_eq(cache_peers_mismatch(p, peer, sizeof(peer), &ago), 1);
    ck_assert_str_eq(peer, "there pid 7");
    ck_assert_int_ge(ago, 0);
    ck_assert_int_le(ago, CACHE_PEERS_FRESH_MS);
    /* The same host with another master's pid is another instance. */
    ck_assert_int_eq(cache_peers_heard(p, "!nonotify here pid 2"), 1);
    ck_assert_int_eq(cache_peers_mismatch(p, peer, sizeof(peer), &ago), 1);
    ck_assert_str_eq(peer, "here pid 2");
    cache_peers_free(p);
}
END_TEST

START_TEST(test_names_are_filtered)
{
    struct cache_peers *p = listener("here pid 1");
    char peer[96];
    int64_t ago;

    ck_assert_int_eq(cache_peers_heard(p, "!nonotify x\",\"y\\\n\x01 pid 9"), 1);
    ck_assert_int_eq(cache_peers_mismatch(p, peer, sizeof(peer), &ago), 1);
    ck_assert_str_eq(peer, "x???y??? pid 9");
    cache_peers_free(p);
}
END_TEST

START_TEST(test_no_peers_no_mismatch)
{
    char peer[96];
    int64_t ago;

    ck_assert_int_eq(cache_peers_mismatch(NULL, peer, sizeof(peer), &ago), 0);
}
END_TEST

static Suite *
cache_peers_suite(void)
{
    Suite *s = suite_create("cache_peers");
    TCase *tc = tcase_create("core");

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
