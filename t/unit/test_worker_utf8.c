/*
 * Unit tests for worker/utf8.c: named vectors for each rule of RFC 3629,
 * then every string of 1 to 3 bytes (and a slice of the 4-byte ones)
 * against a reference decoder written the other way round: decode the bits,
 * then check the value, where utf8.c narrows byte ranges instead.
 */
#include "worker/utf8.h"

#include <check.h>
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define V(lit) json_utf8_valid(lit, sizeof(lit) - 1)
#define SEQ(lit) json_utf8_seq_len((const unsigned char *)(lit), sizeof(lit) - 1)

/* The reference: 1 when s[0..n) is strict UTF-8 without NUL. */
static int
ref_valid(const unsigned char *s, size_t n)
{
    size_t i = 0;

    while (i < n) {
        unsigned char c = s[i];
        uint32_t cp, min;
        size_t len;
        if (c == 0)
            return 0;
        if (c < 0x80) {
            i++;
            continue;
        }
        if ((c & 0xe0) == 0xc0) {
            len = 2, cp = c & 0x1f, min = 0x80;
        } else if ((c & 0xf0) == 0xe0) {
            len = 3, cp = c & 0x0f, min = 0x800;
        } else if ((c & 0xf8) == 0xf0) {
            len = 4, cp = c & 0x07, min = 0x10000;
        } else {
            return 0;
        }
        if (n - i < len)
            return 0;
        for (size_t k = 1; k < len; k++) {
            if ((s[i + k] & 0xc0) != 0x80)
                return 0;
            cp = cp << 6 | (s[i + k] & 0x3f);
        }
        if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
            return 0;
        i += len;
    }
    return 1;
}

START_TEST(test_valid)
{
    ck_assert(V(""));
    ck_assert(V("hello, world"));
    ck_assert(V("\x01\x7f"));
    ck_assert(V("caf\xc3\xa9"));      /* é U+00E9 */
    ck_assert(V("\xc2\x80"));         /* U+0080, the first 2-byte */
    ck_assert(V("\xdf\xbf"));         /* U+07FF, the last 2-byte */
    ck_assert(V("\xe0\xa0\x80"));     /* U+0800, the first 3-byte */
    ck_assert(V("\xe2\x82\xac"));     /* € U+20AC */
    ck_assert(V("\xed\x9f\xbf"));     /* U+D7FF, just below the surrogates */
    ck_assert(V("\xee\x80\x80"));     /* U+E000, just above them */
    ck_assert(V("\xef\xbf\xbd"));     /* U+FFFD */
    ck_assert(V("\xef\xbf\xbf"));     /* U+FFFF, a noncharacter but valid */
    ck_assert(V("\xf0\x90\x80\x80")); /* U+10000, the first 4-byte */
    ck_assert(V("\xf0\x9f\x90\x89")); /* the dragon emoji U+1F409 */
    ck_assert(V("\xf4\x8f\xbf\xbf")); /* U+10FFFF, the last code point */
    ck_assert(V("\xef\xbb\xbf"
                "BOM ok")); /* a BOM is just U+FEFF */
}
END_TEST

START_TEST(test_seq_len)
{
    ck_assert_uint_eq(SEQ("a"), 1);
    ck_assert_uint_eq(SEQ("\x7f"), 1);
    ck_assert_uint_eq(SEQ("\xc3\xa9"), 2);
    ck_assert_uint_eq(SEQ("\xe2\x82\xac"), 3);
    ck_assert_uint_eq(SEQ("\xf0\x9f\x90\x89"), 4);
    /* Only the first sequence counts. */
    ck_assert_uint_eq(SEQ("\xc3\xa9\xc3\xa9"), 2);
    ck_assert_uint_eq(SEQ("ab"), 1);
    /* n bounds the look: a sequence longer than n is not one. */
    ck_assert_uint_eq(json_utf8_seq_len((const unsigned char *)"\xf0\x9f\x90\x89", 3), 0);
    ck_assert_uint_eq(json_utf8_seq_len((const unsigned char *)"\xc3\xa9", 1), 0);
    /* Bad starts. */
    ck_assert_uint_eq(SEQ("\x80"), 0);
    ck_assert_uint_eq(SEQ("\xc0\x80"), 0);
    ck_assert_uint_eq(SEQ("\xed\xa0\x80"), 0);
    ck_assert_uint_eq(SEQ("\xf4\x90\x80\x80"), 0);
    ck_assert_uint_eq(SEQ("\xff"), 0);
}
END_TEST

START_TEST(test_overlong)
{
    ck_assert(!V("\xc0\x80"));         /* NUL in 2 bytes (Java's "modified UTF-8") */
    ck_assert(!V("\xc0\xaf"));         /* '/' in 2 bytes: the classic path trick */
    ck_assert(!V("\xc1\xbf"));         /* U+007F in 2 bytes */
    ck_assert(!V("\xe0\x80\x80"));     /* NUL in 3 bytes */
    ck_assert(!V("\xe0\x80\xaf"));     /* '/' in 3 bytes */
    ck_assert(!V("\xe0\x9f\xbf"));     /* U+07FF in 3 bytes */
    ck_assert(!V("\xf0\x80\x80\x80")); /* NUL in 4 bytes */
    ck_assert(!V("\xf0\x8f\xbf\xbf")); /* U+FFFF in 4 bytes */
}
END_TEST

START_TEST(test_surrogates)
{
    ck_assert(!V("\xed\xa0\x80"));             /* U+D800 */
    ck_assert(!V("\xed\xad\xbf"));             /* U+DB7F */
    ck_assert(!V("\xed\xb0\x80"));             /* U+DC00 */
    ck_assert(!V("\xed\xbf\xbf"));             /* U+DFFF */
    ck_assert(!V("\xed\xa0\xbd\xed\xb0\x89")); /* CESU-8 of U+1F409 */
}
END_TEST

START_TEST(test_above_max)
{
    ck_assert(!V("\xf4\x90\x80\x80")); /* U+110000 */
    ck_assert(!V("\xf4\xbf\xbf\xbf"));
    ck_assert(!V("\xf5\x80\x80\x80"));
    ck_assert(!V("\xf7\xbf\xbf\xbf"));         /* U+1FFFFF */
    ck_assert(!V("\xf8\x88\x80\x80\x80"));     /* old 5-byte form */
    ck_assert(!V("\xfc\x84\x80\x80\x80\x80")); /* old 6-byte form */
    ck_assert(!V("\xfe"));
    ck_assert(!V("\xff"));
}
END_TEST

START_TEST(test_truncated_and_broken)
{
    ck_assert(!V("\x80")); /* continuation with no lead */
    ck_assert(!V("a\xbf"));
    ck_assert(!V("caf\xc3")); /* cut at the end */
    ck_assert(!V("\xe2\x82"));
    ck_assert(!V("\xf0\x9f\x90"));
    ck_assert(!V("\xc3"
                 "a")); /* lead followed by ASCII */
    ck_assert(!V("\xe2\x82"
                 "a"));
    ck_assert(!V("\xe2"
                 "a\x82\xac"));
    ck_assert(!V("\xf0\x9f\x90"
                 "a"));
    ck_assert(!V("\xf0\x9f"
                 "a\x89"));
    ck_assert(!V("\xc3\xa9\xa9")); /* one continuation too many */
    ck_assert(!V("\xc3\xc3\xa9")); /* lead followed by lead */
    /* A good prefix does not save a bad tail, nor a good tail a bad start. */
    ck_assert(!V("caf\xc3\xa9 \xed\xa0\x80"));
    ck_assert(!V("\xff"
                 "caf\xc3\xa9"));
}
END_TEST

START_TEST(test_nul)
{
    /*
     * A NUL byte is refused by json_utf8_valid() even though it is valid
     * UTF-8: PostgreSQL cannot store it in text (SQLSTATE 22021), so callers
     * check the real length, never strlen(), to catch it.
     */
    ck_assert(!json_utf8_valid("\0", 1));
    ck_assert(!json_utf8_valid("a\0b", 3));
    ck_assert(!json_utf8_valid("abc\0", 4));
    ck_assert(!json_utf8_valid("caf\xc3\xa9\0", 6));
    ck_assert(json_utf8_valid("a\0b", 1)); /* only n bytes are looked at */
    /* json_utf8_seq_len() counts it as a one-byte sequence (json_out escapes it). */
    ck_assert_uint_eq(json_utf8_seq_len((const unsigned char *)"\0", 1), 1);
}
END_TEST

START_TEST(test_nul_through_cjson)
{
    /*
     * Why the NUL check must happen on the raw body: cJSON turns "\u0000"
     * into a NUL inside valuestring, so strlen() of what it returns silently
     * stops there and the validity check on it cannot see the NUL.
     */
    const char *body = "{\"title\":\"ab\\u0000cd\"}";
    cJSON *doc = cJSON_Parse(body);
    const cJSON *t;

    ck_assert_ptr_nonnull(doc);
    t = cJSON_GetObjectItemCaseSensitive(doc, "title");
    ck_assert(cJSON_IsString(t));
    ck_assert_str_eq(t->valuestring, "ab");
    ck_assert(json_utf8_valid(t->valuestring, strlen(t->valuestring)));
    cJSON_Delete(doc);
}
END_TEST

START_TEST(test_every_code_point)
{
    /* Each scalar value encoded by hand: valid exactly outside the surrogates. */
    for (uint32_t cp = 1; cp <= 0x10ffff; cp++) {
        unsigned char b[4];
        size_t n;
        if (cp < 0x80) {
            b[0] = (unsigned char)cp, n = 1;
        } else if (cp < 0x800) {
            b[0] = (unsigned char)(0xc0 | cp >> 6), b[1] = (unsigned char)(0x80 | (cp & 0x3f));
            n = 2;
        } else if (cp < 0x10000) {
            b[0] = (unsigned char)(0xe0 | cp >> 12);
            b[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
            b[2] = (unsigned char)(0x80 | (cp & 0x3f));
            n = 3;
        } else {
            b[0] = (unsigned char)(0xf0 | cp >> 18);
            b[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3f));
            b[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
            b[3] = (unsigned char)(0x80 | (cp & 0x3f));
            n = 4;
        }
        int want = !(cp >= 0xd800 && cp <= 0xdfff);
        ck_assert_msg(json_utf8_valid((const char *)b, n) == want, "U+%04X", (unsigned)cp);
        ck_assert_msg(json_utf8_seq_len(b, n) == (want ? n : 0), "U+%04X", (unsigned)cp);
    }
}
END_TEST

START_TEST(test_all_short_strings)
{
    /* Every string of 1, 2 and 3 bytes, against the reference. */
    unsigned char s[3];

    for (unsigned a = 0; a < 256; a++) {
        s[0] = (unsigned char)a;
        ck_assert_int_eq(json_utf8_valid((const char *)s, 1), ref_valid(s, 1));
        for (unsigned b = 0; b < 256; b++) {
            s[1] = (unsigned char)b;
            ck_assert_msg(json_utf8_valid((const char *)s, 2) == ref_valid(s, 2), "%02x %02x", a,
                          b);
            for (unsigned c = 0; c < 256; c++) {
                s[2] = (unsigned char)c;
                if (json_utf8_valid((const char *)s, 3) != ref_valid(s, 3))
                    ck_abort_msg("%02x %02x %02x", a, b, c);
            }
        }
    }
}
END_TEST

START_TEST(test_four_byte_strings)
{
    /* Every lead from 0xe0 up, every second and third byte, a few fourth ones. */
    static const unsigned char fourth[] = {0x00, 0x41, 0x7f, 0x80, 0x9f, 0xbf, 0xc0, 0xff};
    unsigned char s[4];

    for (unsigned a = 0xe0; a < 256; a++) {
        s[0] = (unsigned char)a;
        for (unsigned b = 0; b < 256; b++) {
            s[1] = (unsigned char)b;
            for (unsigned c = 0; c < 256; c++) {
                s[2] = (unsigned char)c;
                for (size_t d = 0; d < sizeof(fourth); d++) {
                    s[3] = fourth[d];
                    if (json_utf8_valid((const char *)s, 4) != ref_valid(s, 4))
                        ck_abort_msg("%02x %02x %02x %02x", a, b, c, s[3]);
                }
            }
        }
    }
}
END_TEST

static Suite *
utf8_suite(void)
{
    Suite *s = suite_create("utf8");
    TCase *tc = tcase_create("core");

    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_valid);
    tcase_add_test(tc, test_seq_len);
    tcase_add_test(tc, test_overlong);
    tcase_add_test(tc, test_surrogates);
    tcase_add_test(tc, test_above_max);
    tcase_add_test(tc, test_truncated_and_broken);
    tcase_add_test(tc, test_nul);
    tcase_add_test(tc, test_nul_through_cjson);
    tcase_add_test(tc, test_every_code_point);
    tcase_add_test(tc, test_all_short_strings);
    tcase_add_test(tc, test_four_byte_strings);
    suite_add_tcase(s, tc);
    return s;
}

#include "t/unit/check_main.h"
CHECK_MAIN(utf8_suite)
