/*
 * Unit tests for worker/json_out.c: the exact bytes written for each kind of
 * value, and that every string comes out as JSON another parser (cJSON)
 * reads back to the intended text.
 */
#include "worker/json_out.h"
#include "worker/utf8.h"

#include <check.h>
#include <cjson/cJSON.h>
#include <event2/buffer.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static struct evbuffer *buf;

static void
setup(void)
{
    buf = evbuffer_new();
    ck_assert_ptr_nonnull(buf);
}

static void
teardown(void)
{
    evbuffer_free(buf);
    buf = NULL;
}

/* The whole buffer as a NUL-terminated string; emptied for the next value. */
static char *
take(void)
{
    size_t n = evbuffer_get_length(buf);
    char *s = malloc(n + 1);

    ck_assert_ptr_nonnull(s);
    if (n > 0)
        memcpy(s, evbuffer_pullup(buf, -1), n);
    s[n] = '\0';
    evbuffer_drain(buf, n);
    return s;
}

/* json_out_string of n bytes must give exactly want. */
static void
expect_string(const char *in, size_t n, const char *want)
{
    char *got;

    json_out_string(buf, in, n);
    got = take();
    ck_assert_str_eq(got, want);
    free(got);
}

/* Writes s[0..n) and has cJSON parse it back; returns cJSON's copy. */
static char *
reparse(const char *s, size_t n)
{
    char *text, *back;
    cJSON *v;

    json_out_string(buf, s, n);
    text = take();
    v = cJSON_Parse(text);
    ck_assert_msg(v != NULL, "cJSON refused %s", text);
    ck_assert(cJSON_IsString(v));
    back = strdup(v->valuestring);
    cJSON_Delete(v);
    free(text);
    return back;
}

START_TEST(test_plain)
{
    expect_string("", 0, "\"\"");
    expect_string("hello world", 11, "\"hello world\"");
    expect_string("a/b", 3, "\"a/b\""); /* '/' needs no escape */
    expect_string("<script>", 8, "\"<script>\"");
}
END_TEST

START_TEST(test_quote_backslash)
{
    expect_string("say \"hi\"", 8, "\"say \\\"hi\\\"\"");
    expect_string("C:\\dir\\", 7, "\"C:\\\\dir\\\\\"");
    expect_string("\"", 1, "\"\\\"\"");
    expect_string("\\", 1, "\"\\\\\"");
    expect_string("\\\"", 2, "\"\\\\\\\"\"");
}
END_TEST

START_TEST(test_control_chars)
{
    expect_string("a\nb", 3, "\"a\\nb\"");
    expect_string("\t", 1, "\"\\t\"");
    expect_string("\r\b\f", 3, "\"\\r\\b\\f\"");
    expect_string("\x01", 1, "\"\\u0001\"");
    expect_string("\x1f", 1, "\"\\u001f\"");
    expect_string("\x0b", 1, "\"\\u000b\"");
    expect_string("x\x1b[31m", 6, "\"x\\u001b[31m\"");
    /* A NUL inside the counted bytes is written, escaped, not a terminator. */
    expect_string("a\0b", 3, "\"a\\u0000b\"");
    /* Every control character is escaped and nothing else of ASCII is. */
    for (int c = 0; c < 0x80; c++) {
        char in = (char)c, *got;
        json_out_string(buf, &in, 1);
        got = take();
        if (c < 0x20 || c == '"' || c == '\\')
            ck_assert_msg(got[1] == '\\', "byte %d not escaped: %s", c, got);
        else
            ck_assert_msg(strlen(got) == 3 && got[1] == (char)c, "byte %d: %s", c, got);
        free(got);
    }
}
END_TEST

START_TEST(test_del)
{
    /* JSON allows a raw DEL (RFC 8259 escapes only below U+0020). */
    char *back;

    expect_string("\x7f", 1, "\"\x7f\"");
    back = reparse("a\x7f", 2);
    ck_assert_str_eq(back, "a\x7f");
    free(back);
}
END_TEST

START_TEST(test_utf8_passthrough)
{
    /* é (2 bytes), € (3), an emoji (4), U+10FFFF (the last code point). */
    expect_string("caf\xc3\xa9", 5, "\"caf\xc3\xa9\"");
    expect_string("\xe2\x82\xac", 3, "\"\xe2\x82\xac\"");
    expect_string("\xf0\x9f\x90\x89", 4, "\"\xf0\x9f\x90\x89\"");
    expect_string("\xf4\x8f\xbf\xbf", 4, "\"\xf4\x8f\xbf\xbf\"");
    /* U+2028 and U+2029 stay raw, as json_out.h says. */
    expect_string("\xe2\x80\xa8\xe2\x80\xa9", 6, "\"\xe2\x80\xa8\xe2\x80\xa9\"");
}
END_TEST

START_TEST(test_bad_utf8_replaced)
{
    /* One U+FFFD per byte that does not start a well-formed sequence. */
    expect_string("\xff", 1, "\"\xef\xbf\xbd\"");
    expect_string("a\x80z", 3, "\"a\xef\xbf\xbdz\"");
    /* Overlong '/' (C0 AF) and overlong NUL (C0 80): two bad bytes each. */
    expect_string("\xc0\xaf", 2, "\"\xef\xbf\xbd\xef\xbf\xbd\"");
    expect_string("\xc0\x80", 2, "\"\xef\xbf\xbd\xef\xbf\xbd\"");
    /* A surrogate (ED A0 80) is three bad bytes. */
    expect_string("\xed\xa0\x80", 3, "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"");
    /* A truncated é at the end, and one cut by a quote. */
    expect_string("caf\xc3", 4, "\"caf\xef\xbf\xbd\"");
    expect_string("\xc3\"", 2, "\"\xef\xbf\xbd\\\"\"");
    /* A truncated 4-byte sequence leaves a replacement per byte. */
    expect_string("\xf0\x9f\x90", 3, "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"");
}
END_TEST

START_TEST(test_reparse)
{
    static const char *const samples[] = {
        "plain",
        "\"quoted\" and \\backslashed\\",
        "line\nbreak\ttab\rcr",
        "\x01\x02\x1f\x7f",
        "caf\xc3\xa9 \xf0\x9f\x90\x89 \xe2\x82\xac",
        "</script><!--",
    };

    for (size_t i = 0; i < sizeof(samples) / sizeof(samples[0]); i++) {
        char *back = reparse(samples[i], strlen(samples[i]));
        ck_assert_str_eq(back, samples[i]);
        free(back);
    }
}
END_TEST

START_TEST(test_every_byte_is_valid_json)
{
    /*
     * All 256 byte values in a row, then pairs: whatever comes in, the
     * output parses and is strict UTF-8 without a raw NUL (cJSON itself
     * does not check UTF-8; utf8.c has its own tests in test_worker_utf8).
     */
    char all[256];
    char *text;
    cJSON *v;

    for (int i = 0; i < 256; i++)
        all[i] = (char)i;
    json_out_string(buf, all, sizeof(all));
    text = take();
    ck_assert(json_utf8_valid(text, strlen(text)));
    /*
     * Quotes; 0x00-0x1f as \uXXXX except the 5 two-character escapes; 94
     * plain ASCII and 2 escaped; 0x80-0xff, none of them a sequence here,
     * as 3-byte U+FFFD each.
     */
    ck_assert_uint_eq(strlen(text), 2 + (32 * 6 - 5 * 4) + (94 + 2 * 2) + 128 * 3);
    v = cJSON_Parse(text);
    ck_assert_ptr_nonnull(v);
    ck_assert(cJSON_IsString(v));
    cJSON_Delete(v);
    free(text);

    for (int a = 0x80; a < 256; a++) {
        for (int b = 0; b < 256; b += 3) {
            char in[2] = {(char)a, (char)b};
            json_out_string(buf, in, 2);
            text = take();
            ck_assert_msg(json_utf8_valid(text, strlen(text)), "bytes %02x %02x", a, b);
            v = cJSON_Parse(text);
            ck_assert_msg(v != NULL, "bytes %02x %02x", a, b);
            cJSON_Delete(v);
            free(text);
        }
    }
}
END_TEST

START_TEST(test_long_strings)
{
    /*
     * Longer than the 512-byte staging buffer, with escapes straddling its
     * edge: the output must be the same as escaping byte by byte.
     */
    for (size_t len = 500; len < 1100; len += 37) {
        char *in = malloc(len), *want = malloc(2 * len + 3), *got;
        size_t w = 0;
        ck_assert_ptr_nonnull(in);
        ck_assert_ptr_nonnull(want);
        want[w++] = '"';
        for (size_t i = 0; i < len; i++) {
            in[i] = (i % 7 == 3) ? '"' : (char)('a' + i % 26);
            if (in[i] == '"')
                want[w++] = '\\';
            want[w++] = in[i];
        }
        want[w++] = '"';
        want[w] = '\0';
        json_out_string(buf, in, len);
        got = take();
        ck_assert_str_eq(got, want);
        free(got);
        free(in);
        free(want);
    }
    /* 2000 bytes needing no escape at all. */
    {
        char in[2000], *got;
        memset(in, 'x', sizeof(in));
        json_out_string(buf, in, sizeof(in));
        got = take();
        ck_assert_uint_eq(strlen(got), sizeof(in) + 2);
        ck_assert_int_eq(got[0], '"');
        ck_assert_int_eq(got[sizeof(in) + 1], '"');
        free(got);
    }
}
END_TEST

START_TEST(test_cstr)
{
    char *got;

    json_out_cstr(buf, NULL);
    got = take();
    ck_assert_str_eq(got, "null");
    free(got);
    json_out_cstr(buf, "x\"y");
    got = take();
    ck_assert_str_eq(got, "\"x\\\"y\"");
    free(got);
    json_out_cstr(buf, "");
    got = take();
    ck_assert_str_eq(got, "\"\"");
    free(got);
}
END_TEST

START_TEST(test_int)
{
    static const struct {
        int64_t v;
        const char *s;
    } cases[] = {
        {0, "0"},
        {1, "1"},
        {-1, "-1"},
        {10, "10"},
        {-10, "-10"},
        {1234567890, "1234567890"},
        {INT64_MAX, "9223372036854775807"},
        {INT64_MIN, "-9223372036854775808"},
        {INT64_MIN + 1, "-9223372036854775807"},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *got;
        json_out_int(buf, cases[i].v);
        got = take();
        ck_assert_str_eq(got, cases[i].s);
        free(got);
    }
}
END_TEST

START_TEST(test_bool_raw)
{
    char *got;

    json_out_bool(buf, 1);
    json_out_raw(buf, ",");
    json_out_bool(buf, 0);
    json_out_raw(buf, ",");
    json_out_bool(buf, -7);
    got = take();
    ck_assert_str_eq(got, "true,false,true");
    free(got);
}
END_TEST

START_TEST(test_document)
{
    /* A response as the handlers build it, read back by cJSON. */
    char *text;
    cJSON *doc, *user;

    json_out_raw(buf, "{\"user\":{\"username\":");
    json_out_cstr(buf, "j\xc3\xa9r\xc3\xb4me \"the\" \\dev\\");
    json_out_raw(buf, ",\"bio\":");
    json_out_cstr(buf, NULL);
    json_out_raw(buf, ",\"id\":");
    json_out_int(buf, INT64_MIN);
    json_out_raw(buf, ",\"following\":");
    json_out_bool(buf, 1);
    json_out_raw(buf, "}}");
    text = take();
    doc = cJSON_Parse(text);
    ck_assert_ptr_nonnull(doc);
    user = cJSON_GetObjectItemCaseSensitive(doc, "user");
    ck_assert_ptr_nonnull(user);
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(user, "username")->valuestring,
                     "j\xc3\xa9r\xc3\xb4me \"the\" \\dev\\");
    ck_assert(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(user, "bio")));
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(user, "following")));
    ck_assert(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(user, "id")));
    cJSON_Delete(doc);
    free(text);
}
END_TEST

static Suite *
json_out_suite(void)
{
    Suite *s = suite_create("json_out");
    TCase *tc = tcase_create("core");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_plain);
    tcase_add_test(tc, test_quote_backslash);
    tcase_add_test(tc, test_control_chars);
    tcase_add_test(tc, test_del);
    tcase_add_test(tc, test_utf8_passthrough);
    tcase_add_test(tc, test_bad_utf8_replaced);
    tcase_add_test(tc, test_reparse);
    tcase_add_test(tc, test_every_byte_is_valid_json);
    tcase_add_test(tc, test_long_strings);
    tcase_add_test(tc, test_cstr);
    tcase_add_test(tc, test_int);
    tcase_add_test(tc, test_bool_raw);
    tcase_add_test(tc, test_document);
    suite_add_tcase(s, tc);
    return s;
}

#include "t/unit/check_main.h"
CHECK_MAIN(json_out_suite)
