/*
 * Unit tests for common/base64url.c.  The vectors are RFC 4648 section 10,
 * translated to the URL alphabet and with the padding dropped.
 */
#include "common/base64url.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    const char *raw, *enc;
} rfc[] = {
    {"", ""},           {"f", "Zg"},          {"fo", "Zm8"},          {"foo", "Zm9v"},
    {"foob", "Zm9vYg"}, {"fooba", "Zm9vYmE"}, {"foobar", "Zm9vYmFy"},
};

START_TEST(test_rfc_vectors)
{
    for (size_t i = 0; i < sizeof(rfc) / sizeof(rfc[0]); i++) {
        char enc[16];
        unsigned char dec[16];
        size_t n = strlen(rfc[i].raw), len = 99;

        ck_assert_uint_eq(b64url_encoded_len(n), strlen(rfc[i].enc));
        ck_assert_uint_eq(b64url_encode((const unsigned char *)rfc[i].raw, n, enc),
                          strlen(rfc[i].enc));
        ck_assert_str_eq(enc, rfc[i].enc);
        ck_assert_int_eq(b64url_decode(rfc[i].enc, strlen(rfc[i].enc), dec, sizeof(dec), &len), 0);
        ck_assert_uint_eq(len, n);
        ck_assert_mem_eq(dec, rfc[i].raw, n);
    }
}
END_TEST

START_TEST(test_url_alphabet)
{
    /* 0xfb 0xff 0xbf encodes to "-_-_" in base64url ("+/+/" in base64). */
    const unsigned char raw[] = {0xfb, 0xef, 0xbe};
    unsigned char dec[8];
    char enc[16];
    size_t len;

    b64url_encode(raw, sizeof(raw), enc);
    ck_assert_str_eq(enc, "----");
    b64url_encode((const unsigned char *)"\xff\xff\xff", 3, enc);
    ck_assert_str_eq(enc, "____");
    ck_assert_int_eq(b64url_decode("-_-_", 4, dec, sizeof(dec), &len), 0);
    ck_assert_uint_eq(len, 3);
    ck_assert_int_eq(dec[0], 0xfb);
    ck_assert_int_eq(dec[1], 0xff);
    ck_assert_int_eq(dec[2], 0xbf);
}
END_TEST

START_TEST(test_round_trip_all_lengths)
{
    unsigned char raw[300], dec[300];
    char enc[512];

    for (size_t i = 0; i < sizeof(raw); i++)
        raw[i] = (unsigned char)(i * 7 + 3);
    for (size_t n = 0; n <= sizeof(raw); n++) {
        size_t len = 0, elen = b64url_encode(raw, n, enc);
        ck_assert_uint_eq(elen, b64url_encoded_len(n));
        ck_assert_uint_eq(strlen(enc), elen);
        ck_assert_int_eq(b64url_decode(enc, elen, dec, n, &len), 0);
        ck_assert_uint_eq(len, n);
        ck_assert_mem_eq(dec, raw, n);
    }
}
END_TEST

START_TEST(test_rejects)
{
    unsigned char dec[16];
    size_t len;

    /* Padding, standard-alphabet characters, whitespace, NUL. */
    ck_assert_int_eq(b64url_decode("Zg==", 4, dec, sizeof(dec), &len), -1);
    ck_assert_int_eq(b64url_decode("Zm8=", 4, dec, sizeof(dec), &len), -1);
    ck_assert_int_eq(b64url_decode("+/+/", 4, dec, sizeof(dec), &len), -1);
    ck_assert_int_eq(b64url_decode("Zm9 v", 5, dec, sizeof(dec), &len), -1);
    ck_assert_int_eq(b64url_decode("Zm\0v", 4, dec, sizeof(dec), &len), -1);
    ck_assert_int_eq(b64url_decode("Zm9v\xc3\xa9", 6, dec, sizeof(dec), &len), -1);
    /* Impossible lengths: one character left over. */
    ck_assert_int_eq(b64url_decode("Z", 1, dec, sizeof(dec), &len), -1);
    ck_assert_int_eq(b64url_decode("Zm9vY", 5, dec, sizeof(dec), &len), -1);
    /* Non-canonical: unused trailing bits set ("fo" is "Zm8"; "Zm9" differs in them). */
    ck_assert_int_eq(b64url_decode("Zh", 2, dec, sizeof(dec), &len), -1);
    ck_assert_int_eq(b64url_decode("Zm8", 3, dec, sizeof(dec), &len), 0);
    ck_assert_int_eq(b64url_decode("Zm9", 3, dec, sizeof(dec), &len), -1);
    ck_assert_int_eq(b64url_decode("Zm-", 3, dec, sizeof(dec), &len), -1);
    /* Output capacity. */
    ck_assert_int_eq(b64url_decode("Zm9vYmFy", 8, dec, 5, &len), -1);
    ck_assert_int_eq(b64url_decode("Zm9vYmFy", 8, dec, 6, &len), 0);
    ck_assert_uint_eq(len, 6);
    ck_assert_int_eq(b64url_decode("", 0, dec, 0, &len), 0);
    ck_assert_uint_eq(len, 0);
}
END_TEST

START_TEST(test_every_byte_value)
{
    /* Each of the 256 characters alone in the last quad: exactly 64 pass. */
    int ok = 0;
    for (int c = 0; c < 256; c++) {
        char in[4] = {'A', 'A', 'A', (char)c};
        unsigned char dec[3];
        size_t len;
        if (b64url_decode(in, 4, dec, sizeof(dec), &len) == 0)
            ok++;
    }
    ck_assert_int_eq(ok, 64);
}
END_TEST

static Suite *
base64url_suite(void)
{
    Suite *s = suite_create("base64url");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, test_rfc_vectors);
    tcase_add_test(tc, test_url_alphabet);
    tcase_add_test(tc, test_round_trip_all_lengths);
    tcase_add_test(tc, test_rejects);
    tcase_add_test(tc, test_every_byte_value);
    suite_add_tcase(s, tc);
    return s;
}

#include "t/unit/check_main.h"
CHECK_MAIN(base64url_suite)
