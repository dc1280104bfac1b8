/*
 * Unit tests for common/jwt.c.  The fixed vector was computed outside the
 * project, with openssl dgst -sha256 -hmac and base64url by hand.
 */
#include "common/jwt.h"

#include <check.h>
#include <string.h>

#define SECRET "0123456789abcdef0123456789abcdef"
#define S (const unsigned char *)SECRET, strlen(SECRET)
#define VECTOR "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOjQyLCJpYXQiOjE3MDAwMDAwMDAsImV4cCI6MTkwMDAwMDAwMH0.2XIJoqmktxouFjgEffeK8KvjKACU0pB9pxzwCEhikIs"

static enum jwt_status
verify(const char *tok, int64_t now, int64_t *sub)
{
    return jwt_verify(S, tok, strlen(tok), now, sub);
}

START_TEST(test_known_vector)
{
    int64_t sub = 0;
    char out[JWT_MAX_LEN + 1];

    ck_assert_int_eq(verify(VECTOR, 1800000000, &sub), JWT_OK);
    ck_assert_int_eq(sub, 42);
    /* Our own signing gives the same bytes for the same claims. */
    ck_assert_int_gt(jwt_sign(S, 42, 1700000000, 1900000000, out, sizeof(out)), 0);
    ck_assert_str_eq(out, VECTOR);
}
END_TEST

START_TEST(test_round_trip)
{
    char out[JWT_MAX_LEN + 1];
    int64_t sub = 0;

    ck_assert_int_gt(jwt_sign(S, 7, 1000, 2000, out, sizeof(out)), 0);
    ck_assert_int_eq(verify(out, 1500, &sub), JWT_OK);
    ck_assert_int_eq(sub, 7);
}
END_TEST

START_TEST(test_expired)
{
    int64_t sub;

    ck_assert_int_eq(verify(VECTOR, 1900000001, &sub), JWT_EXPIRED);
}
END_TEST

START_TEST(test_tampered)
{
    char tok[] = VECTOR;
    int64_t sub;
    char *dot = strchr(tok, '.');

    /* One payload character changed. */
    dot[2] = dot[2] == 'A' ? 'B' : 'A';
    ck_assert_int_ne(verify(tok, 1800000000, &sub), JWT_OK);
    /* One signature character changed. */
    char tok2[] = VECTOR;
    size_t n = strlen(tok2);
    tok2[n - 2] = tok2[n - 2] == 'A' ? 'B' : 'A';
    ck_assert_int_eq(verify(tok2, 1800000000, &sub), JWT_BAD_SIGNATURE);
    /* Signed with another secret. */
    char other[JWT_MAX_LEN + 1];
    const char *k2 = "another-secret-another-secret-another";
    ck_assert_int_gt(jwt_sign((const unsigned char *)k2, strlen(k2), 42, 1, 1900000000, other,
                              sizeof(other)),
                     0);
    ck_assert_int_eq(verify(other, 1800000000, &sub), JWT_BAD_SIGNATURE);
}
END_TEST

START_TEST(test_bad_alg)
{
    int64_t sub;

    ck_assert_int_ne(verify("eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.eyJzdWIiOjQyLCJpYXQiOjE3MDAwMDAwMDAsImV4cCI6MTkwMDAwMDAwMH0.", 1800000000, &sub), JWT_OK); /* alg none, no signature */
    ck_assert_int_ne(verify("eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.eyJzdWIiOjQyLCJpYXQiOjE3MDAwMDAwMDAsImV4cCI6MTkwMDAwMDAwMH0.2XIJoqmktxouFjgEffeK8KvjKACU0pB9pxzwCEhikIs", 1800000000, &sub), JWT_OK);
    ck_assert_int_eq(verify("eyJhbGciOiJIUzUxMiIsInR5cCI6IkpXVCJ9.eyJzdWIiOjQyLCJpYXQiOjE3MDAwMDAwMDAsImV4cCI6MTkwMDAwMDAwMH0.zaXhGWw7k7DSMxXCl3CXIQUbwC31h7X8b2YCDnaNkFc", 1800000000, &sub), JWT_BAD_ALG);
}
END_TEST

START_TEST(test_malformed)
{
    int64_t sub;
    static const char *const bad[] = {"", "abc", "a.b", "a.b.c.d", "...", "!!!.@@@.###",
                                      "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOjQyLCJpYXQiOjE3MDAwMDAwMDAsImV4cCI6MTkwMDAwMDAwMH0", "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9..2XIJoqmktxouFjgEffeK8KvjKACU0pB9pxzwCEhikIs", ".eyJzdWIiOjQyLCJpYXQiOjE3MDAwMDAwMDAsImV4cCI6MTkwMDAwMDAwMH0.2XIJoqmktxouFjgEffeK8KvjKACU0pB9pxzwCEhikIs"};

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        ck_assert_msg(verify(bad[i], 1800000000, &sub) != JWT_OK, "accepted %s", bad[i]);
    char longtok[JWT_MAX_LEN + 10];
    memset(longtok, 'a', sizeof(longtok) - 1);
    longtok[sizeof(longtok) - 1] = '\0';
    ck_assert_int_ne(verify(longtok, 1800000000, &sub), JWT_OK);
}
END_TEST

START_TEST(test_short_secret)
{
    char out[JWT_MAX_LEN + 1];

    ck_assert_int_eq(jwt_sign((const unsigned char *)"short", 5, 1, 1, 2, out, sizeof(out)), -1);
    ck_assert_int_eq(jwt_sign(S, 1, 1, 2, out, 10), -1);
}
END_TEST

static Suite *
jwt_suite(void)
{
    Suite *s = suite_create("jwt");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, test_known_vector);
    tcase_add_test(tc, test_round_trip);
    tcase_add_test(tc, test_expired);
    tcase_add_test(tc, test_tampered);
    tcase_add_test(tc, test_bad_alg);
    tcase_add_test(tc, test_malformed);
    tcase_add_test(tc, test_short_secret);
    suite_add_tcase(s, tc);
    return s;
}

#include "check_main.h"
CHECK_MAIN(jwt_suite)
