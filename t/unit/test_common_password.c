/*
 * Unit tests for common/password.c: bcrypt through libxcrypt.
 */
#include "common/password.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

START_TEST(test_hash_and_verify)
{
    char h[PASSWORD_HASH_LEN];

    ck_assert_int_eq(password_hash("correct horse", 4, h), 0);
    ck_assert(strncmp(h, "$2b$04$", 7) == 0);
    ck_assert_uint_eq(strlen(h), 60);
    ck_assert_int_eq(password_verify("correct horse", h), 1);
    ck_assert_int_eq(password_verify("correct horsf", h), 0);
    ck_assert_int_eq(password_verify("", h), 0);
}
END_TEST

START_TEST(test_salted)
{
    char a[PASSWORD_HASH_LEN], b[PASSWORD_HASH_LEN];

    ck_assert_int_eq(password_hash("same", 4, a), 0);
    ck_assert_int_eq(password_hash("same", 4, b), 0);
    ck_assert_str_ne(a, b);
}
END_TEST

START_TEST(test_given_salt)
{
    /* The seeder's one hash: the same bytes, the same hash, which verifies. */
    const unsigned char r1[16] = "0123456789abcdef", r2[16] = "0123456789abcdeg";
    char a[PASSWORD_HASH_LEN], b[PASSWORD_HASH_LEN], c[PASSWORD_HASH_LEN];

    ck_assert_int_eq(password_hash_salted("password", 4, r1, a), 0);
    ck_assert_int_eq(password_hash_salted("password", 4, r1, b), 0);
    ck_assert_int_eq(password_hash_salted("password", 4, r2, c), 0);
    ck_assert_str_eq(a, b);
    ck_assert_str_ne(a, c);
    ck_assert(strncmp(a, "$2b$04$", 7) == 0);
    ck_assert_int_eq(password_verify("password", a), 1);
    ck_assert_int_eq(password_verify("passwore", a), 0);
}
END_TEST

START_TEST(test_known_vector)
{
    /* From the OpenBSD bcrypt test vectors ($2a$ and $2b$ agree below 255 bytes). */
    ck_assert_int_eq(
        password_verify("U*U", "$2b$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW"), 1);
}
END_TEST

START_TEST(test_limits)
{
    char h[PASSWORD_HASH_LEN];
    char longpw[PASSWORD_MAX + 2];

    memset(longpw, 'x', sizeof(longpw) - 1);
    longpw[PASSWORD_MAX + 1] = '\0';
    ck_assert_int_eq(password_hash(longpw, 4, h), -1);
    longpw[PASSWORD_MAX] = '\0';
    ck_assert_int_eq(password_hash(longpw, 4, h), 0);
    ck_assert_int_eq(password_verify(longpw, h), 1);
    /* Garbage hashes never match. */
    ck_assert_int_eq(password_verify("x", ""), 0);
    ck_assert_int_eq(password_verify("x", "$2b$04$short"), 0);
    ck_assert_int_eq(password_verify("x", "plain"), 0);
}
END_TEST

static Suite *
password_suite(void)
{
    Suite *s = suite_create("password");
    TCase *tc = tcase_create("core");

    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_hash_and_verify);
    tcase_add_test(tc, test_salted);
    tcase_add_test(tc, test_given_salt);
    tcase_add_test(tc, test_known_vector);
    tcase_add_test(tc, test_limits);
    suite_add_tcase(s, tc);
    return s;
}

#include "t/unit/check_main.h"
CHECK_MAIN(password_suite)
