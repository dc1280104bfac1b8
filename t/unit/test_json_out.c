/*
 * Unit tests for common/json_out.c: escaping, numbers, and that whatever it
 * writes parses back (through cJSON) to the original string.
 */
#include "common/json_out.h"

#include <check.h>
#include <cjson/cJSON.h>
#include <stdint.h>
#include <string.h>

#include <event2/buffer.h>

static struct evbuffer *b;

static const char *
text(void)
{
    static char out[4096];
    size_t n = evbuffer_get_length(b);

    ck_assert_uint_lt(n, sizeof(out));
    evbuffer_remove(b, out, n);
    out[n] = '\0';
    return out;
}

static void
setup(void)
{
    b = evbuffer_new();
}

static void
teardown(void)
{
    evbuffer_free(b);
}

START_TEST(test_plain)
{
    json_out_cstr(b, "hello");
    ck_assert_str_eq(text(), "\"hello\"");
    json_out_cstr(b, "");
    ck_assert_str_eq(text(), "\"\"");
}
END_TEST

START_TEST(test_escapes)
{
    json_out_cstr(b, "a\"b\\c/d");
    ck_assert_str_eq(text(), "\"a\\\"b\\\\c/d\"");
    json_out_cstr(b, "\n\r\t\b\f");
    ck_assert_str_eq(text(), "\"\\n\\r\\t\\b\\f\"");
    json_out_cstr(b, "\x01\x1f");
    ck_assert_str_eq(text(), "\"\\u0001\\u001f\"");
}
END_TEST

START_TEST(test_embedded_nul)
{
    json_out_string(b, "a\0b", 3);
    ck_assert_str_eq(text(), "\"a\\u0000b\"");
}
END_TEST

START_TEST(test_utf8_passthrough)
{
    json_out_cstr(b, "caf\xc3\xa9 \xf0\x9f\x90\x89");
    ck_assert_str_eq(text(), "\"caf\xc3\xa9 \xf0\x9f\x90\x89\"");
}
END_TEST

START_TEST(test_numbers_and_bools)
{
    json_out_int(b, 0);
    ck_assert_str_eq(text(), "0");
    json_out_int(b, INT64_MAX);
    ck_assert_str_eq(text(), "9223372036854775807");
    json_out_int(b, INT64_MIN);
    ck_assert_str_eq(text(), "-9223372036854775808");
    json_out_bool(b, 1);
    json_out_bool(b, 0);
    ck_assert_str_eq(text(), "truefalse");
}
END_TEST

START_TEST(test_round_trip)
{
    char in[256];
    cJSON *v;

    /* Every byte from 1 to 127: what comes back is what went in. */
    for (int i = 0; i < 127; i++)
        in[i] = (char)(i + 1);
    in[127] = '\0';
    json_out_cstr(b, in);
    v = cJSON_Parse(text());
    ck_assert_ptr_nonnull(v);
    ck_assert(cJSON_IsString(v));
    ck_assert_str_eq(v->valuestring, in);
    cJSON_Delete(v);
}
END_TEST

static Suite *
json_out_suite(void)
{
    Suite *s = suite_create("json_out");
    TCase *tc = tcase_create("core");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_plain);
    tcase_add_test(tc, test_escapes);
    tcase_add_test(tc, test_embedded_nul);
    tcase_add_test(tc, test_utf8_passthrough);
    tcase_add_test(tc, test_numbers_and_bools);
    tcase_add_test(tc, test_round_trip);
    suite_add_tcase(s, tc);
    return s;
}

#include "check_main.h"
CHECK_MAIN(json_out_suite)
