/*
 * Unit tests for common/slug.c.
 */
#include "common/slug.h"

#include <check.h>
#include <string.h>

static char out[SLUG_MAX_LEN + 1];

static const char *
slug(const char *title)
{
    slug_from_title(title, strlen(title), out, sizeof(out));
    return out;
}

START_TEST(test_basic)
{
    ck_assert_str_eq(slug("How to train your dragon"), "how-to-train-your-dragon");
    ck_assert_str_eq(slug("Hello, World!!  Again"), "hello-world-again");
    ck_assert_str_eq(slug("  --leading and trailing--  "), "leading-and-trailing");
    ck_assert_str_eq(slug("C99 & POSIX.1-2008"), "c99-posix-1-2008");
}
END_TEST

START_TEST(test_only_symbols)
{
    /* Never empty: the title has nothing to keep, the slug is still usable. */
    ck_assert_str_eq(slug("!!!"), "article");
    ck_assert_str_eq(slug(""), "article");
}
END_TEST

START_TEST(test_non_ascii)
{
    const char *s = slug("Caf\xc3\xa9 cr\xc3\xa8me");

    for (const char *p = s; *p; p++)
        ck_assert_msg((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-',
                      "bad byte in %s", s);
    ck_assert_uint_gt(strlen(s), 0);
}
END_TEST

START_TEST(test_truncation)
{
    char title[400];

    memset(title, 'a', sizeof(title) - 1);
    title[sizeof(title) - 1] = '\0';
    for (int i = 5; i < 399; i += 6)
        title[i] = ' ';
    slug(title);
    ck_assert_uint_le(strlen(out), SLUG_MAX_BASE);
    ck_assert_uint_gt(strlen(out), SLUG_MAX_BASE / 2);
    ck_assert(out[strlen(out) - 1] != '-');
}
END_TEST

START_TEST(test_suffix)
{
    char s[SLUG_MAX_LEN + 1];

    ck_assert_uint_eq(slug_with_suffix("dragon", 35, s, sizeof(s)), 8);
    ck_assert_str_eq(s, "dragon-z");
    slug_with_suffix("dragon", 36, s, sizeof(s));
    ck_assert_str_eq(s, "dragon-10");
    slug_with_suffix("dragon", 0, s, sizeof(s));
    ck_assert_str_eq(s, "dragon-0");
    ck_assert_uint_eq(slug_with_suffix("", 1, s, sizeof(s)), 0);
}
END_TEST

static Suite *
slug_suite(void)
{
    Suite *s = suite_create("slug");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, test_basic);
    tcase_add_test(tc, test_only_symbols);
    tcase_add_test(tc, test_non_ascii);
    tcase_add_test(tc, test_truncation);
    tcase_add_test(tc, test_suffix);
    suite_add_tcase(s, tc);
    return s;
}

#include "check_main.h"
CHECK_MAIN(slug_suite)
