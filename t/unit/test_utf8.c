/*
 * Unit tests for common/utf8.c: what may reach PostgreSQL as text.
 */
#include "common/utf8.h"

#include <check.h>
#include <string.h>

#define OK(s) ck_assert_msg(json_utf8_valid(s, sizeof(s) - 1), "refused %s", #s)
#define BAD(s) ck_assert_msg(!json_utf8_valid(s, sizeof(s) - 1), "accepted %s", #s)

START_TEST(test_valid)
{
    OK("");
    OK("plain ascii");
    OK("caf\xc3\xa9");             /* 2 bytes */
    OK("\xe2\x82\xac");            /* 3 bytes: euro */
    OK("\xf0\x9f\x90\x89");        /* 4 bytes: dragon */
    OK("\xf4\x8f\xbf\xbf");        /* U+10FFFF */
    OK("\xef\xbb\xbf");            /* BOM is a character */
}
END_TEST

START_TEST(test_invalid)
{
    BAD("\x80");                   /* lone continuation */
    BAD("\xc3");                   /* truncated */
    BAD("\xe2\x82");               /* truncated */
    BAD("\xc0\x80");               /* overlong NUL */
    BAD("\xc1\xbf");               /* overlong */
    BAD("\xe0\x80\x80");           /* overlong */
    BAD("\xf0\x80\x80\x80");       /* overlong */
    BAD("\xed\xa0\x80");           /* surrogate U+D800 */
    BAD("\xf4\x90\x80\x80");       /* above U+10FFFF */
    BAD("\xff");
    BAD("ok\xfe");
}
END_TEST

START_TEST(test_nul)
{
    /* A NUL byte is refused: PostgreSQL text cannot hold it. */
    ck_assert(!json_utf8_valid("a\0b", 3));
}
END_TEST

static Suite *
utf8_suite(void)
{
    Suite *s = suite_create("utf8");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, test_valid);
    tcase_add_test(tc, test_invalid);
    tcase_add_test(tc, test_nul);
    suite_add_tcase(s, tc);
    return s;
}

#include "check_main.h"
CHECK_MAIN(utf8_suite)
