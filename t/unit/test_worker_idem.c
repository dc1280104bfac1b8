/*
 * Unit tests for worker/idem.c's idem_parse_key(): the Idempotency-Key
 * values taken (bare or as a structured-field string) and refused.
 */
#include "worker/idem.h"

#include <check.h>
#include <string.h>

static char key[IDEM_KEY_MAX + 1];

START_TEST(test_taken)
{
    ck_assert_int_eq(idem_parse_key("8e03978e-40d5-43e8-bc93-6894a57f9324", key), 0);
    ck_assert_str_eq(key, "8e03978e-40d5-43e8-bc93-6894a57f9324");
    ck_assert_int_eq(idem_parse_key("\"8e03978e\"", key), 0);
    ck_assert_str_eq(key, "8e03978e"); /* the draft's form: the same key */
    ck_assert_int_eq(idem_parse_key("a", key), 0);
    ck_assert_str_eq(key, "a");
    ck_assert_int_eq(idem_parse_key("!#$%&'()*+,-./:;<=>?@[]^_`{|}~", key), 0);
}
END_TEST

START_TEST(test_length)
{
    char v[IDEM_KEY_MAX + 4];

    memset(v, 'k', sizeof(v));
    v[IDEM_KEY_MAX] = '\0';
    ck_assert_int_eq(idem_parse_key(v, key), 0);
    ck_assert_uint_eq(strlen(key), IDEM_KEY_MAX);
    v[IDEM_KEY_MAX] = 'k';
    v[IDEM_KEY_MAX + 1] = '\0';
    ck_assert_int_eq(idem_parse_key(v, key), -1);
    /* Quotes do not count. */
    v[0] = '"';
    v[IDEM_KEY_MAX + 1] = '"';
    v[IDEM_KEY_MAX + 2] = '\0';
    ck_assert_int_eq(idem_parse_key(v, key), 0);
    ck_assert_uint_eq(strlen(key), IDEM_KEY_MAX);
}
END_TEST

START_TEST(test_refused)
{
    ck_assert_int_eq(idem_parse_key("", key), -1);
    ck_assert_int_eq(idem_parse_key("\"\"", key), -1);
    ck_assert_int_eq(idem_parse_key("a b", key), -1);
    ck_assert_int_eq(idem_parse_key(" a", key), -1);
    ck_assert_int_eq(idem_parse_key("a\tb", key), -1);
    ck_assert_int_eq(idem_parse_key("caf\xc3\xa9", key), -1);
    ck_assert_int_eq(idem_parse_key("a\x7f", key), -1);
    ck_assert_int_eq(idem_parse_key("a\"b", key), -1);
    ck_assert_int_eq(idem_parse_key("\"a\\\"b\"", key), -1); /* no escapes */
    ck_assert_int_eq(idem_parse_key("\"ab", key), -1);
    ck_assert_int_eq(idem_parse_key("\"", key), -1);
}
END_TEST

static Suite *
idem_suite(void)
{
    Suite *s = suite_create("idem");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, test_taken);
    tcase_add_test(tc, test_length);
    tcase_add_test(tc, test_refused);
    suite_add_tcase(s, tc);
    return s;
}

#include "t/unit/check_main.h"
CHECK_MAIN(idem_suite)
