/*
 * Unit tests for seed/options.c: conduit-seed's command line.  Good input
 * gives the settings; bad input is refused with a reason that names the
 * option, never a half-parsed result.
 */
#include "seed/options.h"

#include <check.h>
#include <string.h>

static char err[256];

/* Parses a NULL-terminated argument list after the program name. */
#define PARSE(o, ...)                                                                              \
    ({                                                                                             \
        char *argv_[] = {"conduit-seed", __VA_ARGS__, NULL};                                       \
        seed_options_parse(o, (int)(sizeof(argv_) / sizeof(argv_[0])) - 1, argv_, err, sizeof(err));    \
    })

START_TEST(test_defaults)
{
    struct seed_options o;

    ck_assert_int_eq(PARSE(&o, "--scale", "1"), 0);
    ck_assert_int_eq(o.action, SEED_LOAD);
    ck_assert(o.scale == 1.0);
    ck_assert_uint_eq(o.seed, 1);
    ck_assert_int_eq(o.bcrypt_cost, 10);
    ck_assert_ptr_null(o.db);
    ck_assert_int_eq(o.reset, 0);
    ck_assert_int_eq(o.quiet, 0);
}
END_TEST

START_TEST(test_all)
{
    struct seed_options o;

    ck_assert_int_eq(PARSE(&o, "--scale", "0.01", "--seed", "18446744073709551615", "--db",
                           "dbname=x", "--reset", "--bcrypt-cost", "4", "-q"),
                     0);
    ck_assert(o.scale == 0.01);
    ck_assert_uint_eq(o.seed, UINT64_MAX);
    ck_assert_str_eq(o.db, "dbname=x");
    ck_assert_int_eq(o.reset, 1);
    ck_assert_int_eq(o.bcrypt_cost, 4);
    ck_assert_int_eq(o.quiet, 1);
    ck_assert_int_eq(PARSE(&o, "--list", "articles", "--scale", "1e-3"), 0);
    ck_assert_int_eq(o.action, SEED_LIST);
    ck_assert_str_eq(o.list, "articles");
    ck_assert_int_eq(PARSE(&o, "--scale", "2", "--help"), 0);
    ck_assert_int_eq(o.action, SEED_HELP);
    ck_assert_int_eq(PARSE(&o, "-V"), 0);
    ck_assert_int_eq(o.action, SEED_VERSION);
}
END_TEST

START_TEST(test_refused)
{
    struct seed_options o;

    ck_assert_int_eq(PARSE(&o, "--seed", "3"), -1);
    ck_assert_ptr_nonnull(strstr(err, "--scale is required"));
    ck_assert_int_eq(PARSE(&o, "--scale", "0"), -1);
    ck_assert_ptr_nonnull(strstr(err, "--scale"));
    ck_assert_int_eq(PARSE(&o, "--scale", "-1"), -1);
    ck_assert_int_eq(PARSE(&o, "--scale", "101"), -1);
    ck_assert_int_eq(PARSE(&o, "--scale", "nan"), -1);
    ck_assert_int_eq(PARSE(&o, "--scale", "inf"), -1);
    ck_assert_int_eq(PARSE(&o, "--scale", "1x"), -1);
    ck_assert_int_eq(PARSE(&o, "--scale", ""), -1);
    ck_assert_int_eq(PARSE(&o, "--scale"), -1);
    ck_assert_ptr_nonnull(strstr(err, "needs a value"));
    ck_assert_int_eq(PARSE(&o, "--scale", "1", "--seed", "-1"), -1);
    ck_assert_ptr_nonnull(strstr(err, "--seed"));
    ck_assert_int_eq(PARSE(&o, "--scale", "1", "--seed", "18446744073709551616"), -1);
    ck_assert_int_eq(PARSE(&o, "--scale", "1", "--seed", "12abc"), -1);
    ck_assert_int_eq(PARSE(&o, "--scale", "1", "--bcrypt-cost", "3"), -1);
    ck_assert_ptr_nonnull(strstr(err, "--bcrypt-cost"));
    ck_assert_int_eq(PARSE(&o, "--scale", "1", "--bcrypt-cost", "32"), -1);
    ck_assert_int_eq(PARSE(&o, "--scale", "1", "--list", "comments"), -1);
    ck_assert_ptr_nonnull(strstr(err, "--list"));
    ck_assert_int_eq(PARSE(&o, "--scale", "1", "--frobnicate"), -1);
    ck_assert_ptr_nonnull(strstr(err, "unknown argument \"--frobnicate\""));
    ck_assert_int_eq(PARSE(&o, "--scale", "1", "extra"), -1);
}
END_TEST

static Suite *
options_suite(void)
{
    Suite *s = suite_create("seed_options");
    TCase *tc = tcase_create("options");

    tcase_add_test(tc, test_defaults);
    tcase_add_test(tc, test_all);
    tcase_add_test(tc, test_refused);
    suite_add_tcase(s, tc);
    return s;
}

#include "check_main.h"
CHECK_MAIN(options_suite)
