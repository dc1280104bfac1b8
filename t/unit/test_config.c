/*
 * Unit tests for common/config.c: the config file parser (good and bad
 * files), validation, printing with secrets masked, and reload checks.
 */
#include "common/config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"

#define SECRET "0123456789abcdef0123456789abcdef-xyz"

static struct config c;
static char err[CONFIG_ERR_LEN];

static void
setup(void)
{
    config_init(&c);
    err[0] = '\0';
}

static void
teardown(void)
{
    config_free(&c);
}

START_TEST(test_defaults)
{
    ck_assert_int_eq(c.workers, 0);
    ck_assert_int_eq(c.nlisten, 1);
    ck_assert_str_eq(c.listen[0], "127.0.0.1:8080");
    ck_assert_int_eq(c.pool, 4);
    ck_assert_int_eq(c.bcrypt_cost, 10);
    ck_assert_int_eq(c.max_body_size, 1048576);
    ck_assert_ptr_null(c.jwt_secret);
}
END_TEST

START_TEST(test_good_file)
{
    const char *text = "# comment\n"
                       "\n"
                       "workers = 3\n"
                       "listen = 127.0.0.1:9001\n"
                       "listen = [::1]:9002   # trailing comment\n"
                       "daemonize = yes\n"
                       "reuseport = on\n"
                       "log_level = debug\n"
                       "db = \"host=/tmp dbname=x\"\n"
                       "jwt_secret = " SECRET "\n"
                       "   pool   =   8   \n";

    ck_assert_msg(config_load_text(&c, "good.conf", text, err, sizeof(err)) == 0, "%s", err);
    ck_assert_int_eq(c.workers, 3);
    ck_assert_int_eq(c.nlisten, 2);
    ck_assert_str_eq(c.listen[0], "127.0.0.1:9001");
    ck_assert_str_eq(c.listen[1], "[::1]:9002");
    ck_assert_int_eq(c.daemonize, 1);
    ck_assert_int_eq(c.reuseport, 1);
    ck_assert_int_eq(c.log_level, LOG_LEVEL_DEBUG);
    ck_assert_str_eq(c.db, "host=/tmp dbname=x");
    ck_assert_int_eq(c.pool, 8);
    ck_assert_int_eq(config_validate(&c, err, sizeof(err)), 0);
}
END_TEST

START_TEST(test_workers_auto)
{
    ck_assert_int_eq(config_load_text(&c, "w.conf", "workers = auto\n", err, sizeof(err)), 0);
    ck_assert_int_eq(c.workers, 0);
    ck_assert_int_ge(config_workers(&c), 1);
}
END_TEST

/* Each bad file fails with "NAME:LINE:" and a word of the reason. */
static const struct {
    const char *text;
    const char *where;
    const char *why;
} bad[] = {
    {"workers = 2\nno_such_key = 1\n", "bad.conf:2:", "no_such_key"},
    {"workers 2\n", "bad.conf:1:", ""},
    {"\n\npool =\n", "bad.conf:3:", "pool"},
    {"pool = lots\n", "bad.conf:1:", "pool"},
    {"pool = 0\n", "bad.conf:1:", "pool"},
    {"pool = 100000\n", "bad.conf:1:", "pool"},
    {"daemonize = perhaps\n", "bad.conf:1:", "daemonize"},
    {"log_level = loud\n", "bad.conf:1:", "log_level"},
    {"workers = -1\n", "bad.conf:1:", "workers"},
    {"db = \"unterminated\n", "bad.conf:1:", ""},
};

START_TEST(test_bad_files)
{
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct config t;
        config_init(&t);
        err[0] = '\0';
        ck_assert_msg(config_load_text(&t, "bad.conf", bad[i].text, err, sizeof(err)) < 0,
                      "accepted: %s", bad[i].text);
        ck_assert_msg(strstr(err, bad[i].where) != NULL, "'%s' lacks %s", err, bad[i].where);
        ck_assert_msg(strstr(err, bad[i].why) != NULL, "'%s' lacks %s", err, bad[i].why);
        config_free(&t);
    }
}
END_TEST

START_TEST(test_missing_file)
{
    ck_assert_int_lt(config_load_file(&c, "/nonexistent/conduitd.conf", err, sizeof(err)), 0);
    ck_assert_ptr_nonnull(strstr(err, "/nonexistent/conduitd.conf"));
}
END_TEST

START_TEST(test_validate)
{
    ck_assert_int_lt(config_validate(&c, err, sizeof(err)), 0);
    ck_assert_ptr_nonnull(strstr(err, "jwt_secret"));
    ck_assert_int_eq(config_set(&c, "jwt_secret", "too-short", 0, err, sizeof(err)), 0);
    ck_assert_int_lt(config_validate(&c, err, sizeof(err)), 0);
    ck_assert_int_eq(config_set(&c, "jwt_secret", SECRET, 0, err, sizeof(err)), 0);
    ck_assert_int_eq(config_validate(&c, err, sizeof(err)), 0);
    ck_assert_int_eq(config_set(&c, "group", "nogroup", 0, err, sizeof(err)), 0);
    ck_assert_int_lt(config_validate(&c, err, sizeof(err)), 0);
    ck_assert_ptr_nonnull(strstr(err, "user"));
}
END_TEST

START_TEST(test_list_replace)
{
    ck_assert_int_eq(config_set(&c, "listen", "127.0.0.1:1", 0, err, sizeof(err)), 0);
    ck_assert_int_eq(c.nlisten, 1); /* the built-in default gave way */
    ck_assert_int_eq(config_set(&c, "listen", "127.0.0.1:2", 0, err, sizeof(err)), 0);
    ck_assert_int_eq(c.nlisten, 2);
    ck_assert_int_eq(config_set(&c, "listen", "127.0.0.1:3", 1, err, sizeof(err)), 0);
    ck_assert_int_eq(c.nlisten, 1);
    ck_assert_str_eq(c.listen[0], "127.0.0.1:3");
}
END_TEST

START_TEST(test_print_masks_secret)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    config_set(&c, "jwt_secret", SECRET, 0, err, sizeof(err));
    config_print(&c, f);
    fclose(f);
    ck_assert_ptr_null(strstr(buf, "0123456789abcdef"));
    ck_assert_ptr_nonnull(strstr(buf, "jwt_secret"));
    ck_assert_ptr_nonnull(strstr(buf, "workers = auto"));
    free(buf);
}
END_TEST

START_TEST(test_nonreloadable)
{
    struct config d;

    config_init(&d);
    config_copy(&d, &c);
    ck_assert_ptr_null(config_nonreloadable_change(&c, &d));
    config_set(&d, "workers", "7", 0, err, sizeof(err));
    ck_assert_ptr_null(config_nonreloadable_change(&c, &d));
    config_set(&d, "user", "nobody", 0, err, sizeof(err));
    ck_assert_str_eq(config_nonreloadable_change(&c, &d), "user");
    config_free(&d);
}
END_TEST

static Suite *
config_suite(void)
{
    Suite *s = suite_create("config");
    TCase *tc = tcase_create("core");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_defaults);
    tcase_add_test(tc, test_good_file);
    tcase_add_test(tc, test_workers_auto);
    tcase_add_test(tc, test_bad_files);
    tcase_add_test(tc, test_missing_file);
    tcase_add_test(tc, test_validate);
    tcase_add_test(tc, test_list_replace);
    tcase_add_test(tc, test_print_masks_secret);
    tcase_add_test(tc, test_nonreloadable);
    suite_add_tcase(s, tc);
    return s;
}

#include "check_main.h"
CHECK_MAIN(config_suite)
