/*
 * Unit tests for common/slug.c: the slugs users see in article URLs, the
 * length limits, and the base 36 suffix used to make them unique.
 */
#include "common/slug.h"

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The slug of a NUL-terminated title, with a roomy buffer. */
static const char *
slug(const char *title)
{
    static char out[SLUG_MAX_LEN + 1];
    size_t n;

    memset(out, 'x', sizeof(out));
    n = slug_from_title(title, strlen(title), out, sizeof(out));
    ck_assert_uint_eq(n, strlen(out));
    return out;
}

/* Only [a-z0-9] and single inner dashes, 1..max characters. */
static void
assert_well_formed(const char *s, size_t max)
{
    size_t n = strlen(s);

    ck_assert_msg(n >= 1 && n <= max, "length %zu: \"%s\"", n, s);
    ck_assert_msg(s[0] != '-' && s[n - 1] != '-', "dash at an end: \"%s\"", s);
    ck_assert_msg(strstr(s, "--") == NULL, "double dash: \"%s\"", s);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-',
                      "byte %02x in \"%s\"", (unsigned char)s[i], s);
}

START_TEST(test_basic)
{
    ck_assert_str_eq(slug("How to train your dragon"), "how-to-train-your-dragon");
    ck_assert_str_eq(slug("how-to-train-your-dragon"), "how-to-train-your-dragon");
    ck_assert_str_eq(slug("HTTP/2 in 10 minutes"), "http-2-in-10-minutes");
    ck_assert_str_eq(slug("a"), "a");
    ck_assert_str_eq(slug("2024"), "2024");
}
END_TEST

START_TEST(test_punctuation_collapses)
{
    ck_assert_str_eq(slug("Hello,   World!!!  --  Again?"), "hello-world-again");
    ck_assert_str_eq(slug("C++ & Rust: a love story"), "c-rust-a-love-story");
    ck_assert_str_eq(slug("tabs\tand\nnewlines\r\n"), "tabs-and-newlines");
    ck_assert_str_eq(slug("under_score.dot"), "under-score-dot");
    ck_assert_str_eq(slug("it's"), "it-s");
}
END_TEST

START_TEST(test_trimmed)
{
    ck_assert_str_eq(slug("  --Leading and trailing--  "), "leading-and-trailing");
    ck_assert_str_eq(slug("!!!wow!!!"), "wow");
    ck_assert_str_eq(slug("-x-"), "x");
}
END_TEST

START_TEST(test_non_ascii)
{
    /*
     * Non-ASCII bytes count as separators (slug.c keeps ASCII only): an
     * accented letter splits its word, and it never leaks a byte >= 0x80
     * into the URL.
     */
    ck_assert_str_eq(slug("Caf\xc3\xa9 au lait"), "caf-au-lait");
    ck_assert_str_eq(slug("na\xc3\xafve \xc3\xbc"
                          "ber"),
                     "na-ve-ber");
    ck_assert_str_eq(slug("\xf0\x9f\x90\x89 dragons \xf0\x9f\x90\x89"), "dragons");
    ck_assert_str_eq(slug("\xce\x95\xce\xbb\xce\xbb\xce\xac\xce\xb4\xce\xb1 2"), "2");
    /* Invalid UTF-8 is just more separators. */
    ck_assert_str_eq(slug("a\xff\xfe"
                          "b"),
                     "a-b");
}
END_TEST

START_TEST(test_never_empty)
{
    /* A title with nothing to keep gets the fallback, never "". */
    static const char *const empty[] = {
        "",
        " ",
        "!!!",
        "---",
        "?!.,;:",
        "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e",
        "\xf0\x9f\x90\x89\xf0\x9f\x94\xa5",
    };
    char out[SLUG_MAX_LEN + 1];

    for (size_t i = 0; i < sizeof(empty) / sizeof(empty[0]); i++)
        ck_assert_str_eq(slug(empty[i]), "article");
    /* NUL bytes inside the counted title are separators too. */
    ck_assert_uint_eq(slug_from_title("\0\0\0", 3, out, sizeof(out)), 7);
    ck_assert_str_eq(out, "article");
    ck_assert_uint_eq(slug_from_title("ab\0cd", 5, out, sizeof(out)), 5);
    ck_assert_str_eq(out, "ab-cd");
    /* Every single byte gives a well-formed, non-empty slug. */
    for (int c = 0; c < 256; c++) {
        char in = (char)c;
        slug_from_title(&in, 1, out, sizeof(out));
        assert_well_formed(out, SLUG_MAX_BASE);
    }
}
END_TEST

START_TEST(test_reserved)
{
    /*
     * GET /api/articles/feed is the feed: an article slugged "feed" could
     * never be read back, so that one name is avoided.
     */
    char out[8];

    ck_assert_str_eq(slug("Feed"), "feed-article");
    ck_assert_str_eq(slug("  FEED!  "), "feed-article");
    ck_assert_str_eq(slug("Feed me"), "feed-me");
    ck_assert_str_eq(slug("Feeds"), "feeds");
    /* Too small for "feed-article": the plain fallback, still not "feed". */
    ck_assert_uint_eq(slug_from_title("feed", 4, out, sizeof(out)), 7);
    ck_assert_str_eq(out, "article");
    ck_assert_uint_eq(slug_from_title("feed", 4, out, 5), 4);
    ck_assert_str_eq(out, "arti");
}
END_TEST

START_TEST(test_only_n_bytes)
{
    char out[SLUG_MAX_LEN + 1];

    ck_assert_uint_eq(slug_from_title("hello world", 5, out, sizeof(out)), 5);
    ck_assert_str_eq(out, "hello");
}
END_TEST

START_TEST(test_truncation)
{
    char title[400], out[SLUG_MAX_LEN + 1];
    size_t n;

    /* One long word: cut at exactly SLUG_MAX_BASE. */
    memset(title, 'A', 200);
    n = slug_from_title(title, 200, out, sizeof(out));
    ck_assert_uint_eq(n, SLUG_MAX_BASE);
    ck_assert_uint_eq(strlen(out), SLUG_MAX_BASE);
    for (size_t i = 0; i < n; i++)
        ck_assert_int_eq(out[i], 'a');

    /* A word boundary at the limit: no trailing dash. */
    memset(title, 'a', SLUG_MAX_BASE - 1);
    strcpy(title + SLUG_MAX_BASE - 1, " bcd");
    n = slug_from_title(title, strlen(title), out, sizeof(out));
    ck_assert_uint_eq(n, SLUG_MAX_BASE - 1);
    assert_well_formed(out, SLUG_MAX_BASE);
    memset(title, 'a', SLUG_MAX_BASE);
    strcpy(title + SLUG_MAX_BASE, " bcd");
    ck_assert_uint_eq(slug_from_title(title, strlen(title), out, sizeof(out)), SLUG_MAX_BASE);

    /*
     * Words of every length and separators of every kind, including UTF-8,
     * at every cut position: always well-formed and within the limit.
     */
    for (size_t wl = 1; wl <= 9; wl++) {
        for (size_t shift = 0; shift < 12; shift++) {
            size_t len = 0;
            for (size_t i = 0; i < shift; i++)
                title[len++] = 'q';
            while (len + wl + 4 < sizeof(title)) {
                for (size_t i = 0; i < wl; i++, len++)
                    title[len] = (char)('a' + (len % 26));
                memcpy(title + len, shift % 2 ? " \xc3\xa9 " : "-", shift % 2 ? 4 : 1);
                len += shift % 2 ? 4 : 1;
            }
            n = slug_from_title(title, len, out, sizeof(out));
            ck_assert_uint_eq(n, strlen(out));
            assert_well_formed(out, SLUG_MAX_BASE);
            /* Close to the limit: a cut wastes at most one character (the dash). */
            ck_assert_uint_ge(n, SLUG_MAX_BASE - 1);
        }
    }
}
END_TEST

START_TEST(test_outcap)
{
    char out[16];

    memset(out, 'x', sizeof(out));
    ck_assert_uint_eq(slug_from_title("hello world", 11, out, 0), 0);
    ck_assert_int_eq(out[0], 'x'); /* nothing written */
    /* Room for the NUL only: the one case of an empty result. */
    ck_assert_uint_eq(slug_from_title("hello world", 11, out, 1), 0);
    ck_assert_str_eq(out, "");
    ck_assert_uint_eq(slug_from_title("hello world", 11, out, 6), 5);
    ck_assert_str_eq(out, "hello");
    /* The dash would be the last character that fits: left out. */
    ck_assert_uint_eq(slug_from_title("hello world", 11, out, 7), 5);
    ck_assert_str_eq(out, "hello");
    ck_assert_uint_eq(slug_from_title("hello world", 11, out, 8), 7);
    ck_assert_str_eq(out, "hello-w");
    ck_assert_uint_eq(slug_from_title("!!!", 3, out, 4), 3);
    ck_assert_str_eq(out, "art");
}
END_TEST

START_TEST(test_suffix)
{
    char out[SLUG_MAX_LEN + 1];

    ck_assert_uint_eq(slug_with_suffix("hello", 0, out, sizeof(out)), 7);
    ck_assert_str_eq(out, "hello-0");
    slug_with_suffix("hello", 35, out, sizeof(out));
    ck_assert_str_eq(out, "hello-z");
    slug_with_suffix("hello", 36, out, sizeof(out));
    ck_assert_str_eq(out, "hello-10");
    slug_with_suffix("hello", 1295, out, sizeof(out));
    ck_assert_str_eq(out, "hello-zz");
    slug_with_suffix("hello", 1296, out, sizeof(out));
    ck_assert_str_eq(out, "hello-100");
    slug_with_suffix("hello", 123456789, out, sizeof(out));
    ck_assert_str_eq(out, "hello-21i3v9");
    ck_assert_uint_eq(slug_with_suffix("hello", UINT64_MAX, out, sizeof(out)), 5 + 1 + 13);
    ck_assert_str_eq(out, "hello-3w5e11264sgsf");
}
END_TEST

START_TEST(test_suffix_longest)
{
    /* The longest base with the longest suffix fits SLUG_MAX_LEN exactly. */
    char base[SLUG_MAX_BASE + 1], out[SLUG_MAX_LEN + 1];

    memset(base, 'b', SLUG_MAX_BASE);
    base[SLUG_MAX_BASE] = '\0';
    ck_assert_uint_eq(slug_with_suffix(base, UINT64_MAX, out, sizeof(out)), SLUG_MAX_LEN);
    ck_assert_str_eq(out + SLUG_MAX_BASE, "-3w5e11264sgsf");
    ck_assert_int_eq(memcmp(out, base, SLUG_MAX_BASE), 0);
}
END_TEST

START_TEST(test_suffix_shortens_base)
{
    char out[32];

    /* 7 bytes: 4 of base, "-5"; the cut base "abc-" loses its dash. */
    ck_assert_uint_eq(slug_with_suffix("abc-def", 5, out, 7), 5);
    ck_assert_str_eq(out, "abc-5");
    ck_assert_uint_eq(slug_with_suffix("abc-def", 5, out, 8), 7);
    ck_assert_str_eq(out, "abc-d-5");
    /* Just room for "x-<suffix>", and not even that. */
    ck_assert_uint_eq(slug_with_suffix("abcdef", 36, out, 5), 4);
    ck_assert_str_eq(out, "a-10");
    ck_assert_uint_eq(slug_with_suffix("abcdef", 36, out, 4), 0);
    ck_assert_uint_eq(slug_with_suffix("abcdef", 36, out, 0), 0);
    /* An empty or all-dash base cannot take a suffix. */
    ck_assert_uint_eq(slug_with_suffix("", 1, out, sizeof(out)), 0);
    ck_assert_uint_eq(slug_with_suffix("---", 1, out, sizeof(out)), 0);
}
END_TEST

START_TEST(test_suffix_in_place)
{
    /* out may be base itself, as slug.h allows: retrying in one buffer. */
    char buf[SLUG_MAX_LEN + 1];

    slug_from_title("How to train your dragon", 24, buf, sizeof(buf));
    ck_assert_uint_eq(slug_with_suffix(buf, 1000, buf, sizeof(buf)), 24 + 3);
    ck_assert_str_eq(buf, "how-to-train-your-dragon-rs");
    /* In place and shortened. */
    ck_assert_uint_eq(slug_with_suffix(buf, 7, buf, 8), 7);
    ck_assert_str_eq(buf, "how-t-7");
}
END_TEST

static Suite *
slug_suite(void)
{
    Suite *s = suite_create("slug");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, test_basic);
    tcase_add_test(tc, test_punctuation_collapses);
    tcase_add_test(tc, test_trimmed);
    tcase_add_test(tc, test_non_ascii);
    tcase_add_test(tc, test_never_empty);
    tcase_add_test(tc, test_reserved);
    tcase_add_test(tc, test_only_n_bytes);
    tcase_add_test(tc, test_truncation);
    tcase_add_test(tc, test_outcap);
    tcase_add_test(tc, test_suffix);
    tcase_add_test(tc, test_suffix_longest);
    tcase_add_test(tc, test_suffix_shortens_base);
    tcase_add_test(tc, test_suffix_in_place);
    suite_add_tcase(s, tc);
    return s;
}

#include "t/unit/check_main.h"
CHECK_MAIN(slug_suite)
