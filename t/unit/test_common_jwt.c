/*
 * Unit tests for common/jwt.c.  The known vectors were computed outside this
 * code, with `openssl dgst -sha256 -hmac` and base64url in a shell (and
 * checked again with Python's hmac module), so a bug shared by jwt.c and
 * base64url.c cannot hide behind a round trip.  Tokens with other headers
 * or payloads are built here with OpenSSL's HMAC directly.
 */
#include "common/base64url.h"
#include "common/jwt.h"

#include <check.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SECRET "0123456789abcdef0123456789abcdef"
#define SECRET_LEN (sizeof(SECRET) - 1)

/*
 * H=$(printf '%s' '{"alg":"HS256","typ":"JWT"}' | b64u)
 * P=$(printf '%s' '{"sub":42,"iat":1700000000,"exp":1700003600}' | b64u)
 * printf '%s' "$H.$P" | openssl dgst -sha256 -hmac "$SECRET" -binary | b64u
 * with b64u() { base64 -w0 | tr '+/' '-_' | tr -d '='; }
 */
static const char known_token[] = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9."
                                  "eyJzdWIiOjQyLCJpYXQiOjE3MDAwMDAwMDAsImV4cCI6MTcwMDAwMzYwMH0."
                                  "T6YJ3OzcN2hmvL_vdhlhYk14925wLiaG4mq2l-H9j7Q";

#define HS256_HEADER "{\"alg\":\"HS256\",\"typ\":\"JWT\"}"
/* The known token's claims: valid at 1700000001. */
#define GOOD_CLAIMS "{\"sub\":42,\"iat\":1700000000,\"exp\":1700003600}"

static const unsigned char *
secret(void)
{
    return (const unsigned char *)SECRET;
}

static enum jwt_status
verify_str(const char *token, int64_t now, int64_t *sub)
{
    return jwt_verify(secret(), SECRET_LEN, token, strlen(token), now, sub);
}

/*
 * header_json and payload_json base64url-encoded as they are, joined with a
 * dot and signed with HMAC-SHA256 under key: a token jwt_sign() would never
 * make but whose signature is genuine, to reach the checks behind it.
 */
static void
make_token(const char *header_json, const char *payload_json, const unsigned char *key,
           size_t keylen, char *out, size_t outcap)
{
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int maclen = 0;
    size_t hl = strlen(header_json), pl = strlen(payload_json), n;

    ck_assert_uint_lt(b64url_encoded_len(hl) + b64url_encoded_len(pl) + 48, outcap);
    n = b64url_encode((const unsigned char *)header_json, hl, out);
    out[n++] = '.';
    n += b64url_encode((const unsigned char *)payload_json, pl, out + n);
    ck_assert_ptr_nonnull(
        HMAC(EVP_sha256(), key, (int)keylen, (unsigned char *)out, n, mac, &maclen));
    ck_assert_uint_eq(maclen, 32);
    out[n++] = '.';
    b64url_encode(mac, maclen, out + n);
}

/* A token signed with SECRET whose header says HS256. */
static void
make_payload_token(const char *payload_json, char *out, size_t outcap)
{
    make_token(HS256_HEADER, payload_json, secret(), SECRET_LEN, out, outcap);
}

START_TEST(test_known_vector_sign)
{
    char tok[JWT_MAX_LEN + 1];
    int n = jwt_sign(secret(), SECRET_LEN, 42, 1700000000, 1700003600, tok, sizeof(tok));

    ck_assert_int_eq(n, (int)strlen(known_token));
    ck_assert_str_eq(tok, known_token);
}
END_TEST

START_TEST(test_known_vector_verify)
{
    int64_t sub = 0;

    ck_assert_int_eq(verify_str(known_token, 1700000001, &sub), JWT_OK);
    ck_assert_int_eq(sub, 42);
}
END_TEST

START_TEST(test_round_trip)
{
    static const int64_t subs[] = {1, 2, 42, 1000000, INT64_C(9007199254740992)};
    char tok[JWT_MAX_LEN + 1];

    for (size_t i = 0; i < sizeof(subs) / sizeof(subs[0]); i++) {
        int64_t sub = -1;
        int n = jwt_sign(secret(), SECRET_LEN, subs[i], 1000, 2000, tok, sizeof(tok));
        ck_assert_int_gt(n, 0);
        ck_assert_uint_eq(strlen(tok), (size_t)n);
        ck_assert_int_eq(verify_str(tok, 1500, &sub), JWT_OK);
        ck_assert_int_eq(sub, subs[i]);
    }
}
END_TEST

START_TEST(test_no_nul_needed)
{
    /* The token is given by length: the bytes after it must not matter. */
    char buf[sizeof(known_token) + 8];
    int64_t sub = 0;

    memcpy(buf, known_token, sizeof(known_token) - 1);
    memcpy(buf + sizeof(known_token) - 1, "XYZ.abc", 8);
    ck_assert_int_eq(
        jwt_verify(secret(), SECRET_LEN, buf, sizeof(known_token) - 1, 1700000001, &sub), JWT_OK);
    ck_assert_int_eq(sub, 42);
}
END_TEST

START_TEST(test_expiry)
{
    int64_t sub = 99;

    ck_assert_int_eq(verify_str(known_token, 1700003599, &sub), JWT_OK);
    sub = 99;
    /* exp must be later than now: at exp itself the token is dead. */
    ck_assert_int_eq(verify_str(known_token, 1700003600, &sub), JWT_EXPIRED);
    ck_assert_int_eq(verify_str(known_token, 1800000000, &sub), JWT_EXPIRED);
    ck_assert_int_eq(sub, 99);
}
END_TEST

START_TEST(test_tampered_header_or_payload)
{
    size_t signed_len = (size_t)(strrchr(known_token, '.') - known_token);

    /* Every character before the signature, changed to another valid one. */
    for (size_t i = 0; i < signed_len; i++) {
        char tok[sizeof(known_token)];
        int64_t sub = 99;
        if (known_token[i] == '.')
            continue;
        memcpy(tok, known_token, sizeof(known_token));
        tok[i] = tok[i] == 'A' ? 'B' : 'A';
        ck_assert_msg(verify_str(tok, 1700000001, &sub) == JWT_BAD_SIGNATURE, "position %zu", i);
        ck_assert_int_eq(sub, 99);
    }
}
END_TEST

START_TEST(test_forged_payload)
{
    /* An attacker's payload with sub 1 under the known token's signature. */
    char tok[JWT_MAX_LEN + 1], forged[2 * JWT_MAX_LEN];
    int64_t sub = 99;

    make_token(HS256_HEADER, "{\"sub\":1,\"exp\":1700003600}",
               (const unsigned char *)"another-secret-of-thirty-two-byt", 32, tok, sizeof(tok));
    snprintf(forged, sizeof(forged), "%.*s%s", (int)(strrchr(tok, '.') - tok), tok,
             strrchr(known_token, '.'));
    ck_assert_int_eq(verify_str(forged, 1700000001, &sub), JWT_BAD_SIGNATURE);
    /* And the same payload genuinely signed, but with another secret. */
    ck_assert_int_eq(verify_str(tok, 1700000001, &sub), JWT_BAD_SIGNATURE);
    ck_assert_int_eq(sub, 99);
}
END_TEST

START_TEST(test_tampered_signature)
{
    const char *sig = strrchr(known_token, '.') + 1;
    size_t off = (size_t)(sig - known_token), siglen = strlen(sig);
    char tok[sizeof(known_token) + 8];
    int64_t sub = 99;

    for (size_t i = 0; i < siglen; i++) {
        enum jwt_status st;
        memcpy(tok, known_token, sizeof(known_token));
        tok[off + i] = tok[off + i] == 'A' ? 'B' : 'A';
        st = verify_str(tok, 1700000001, &sub);
        /*
         * The last character carries 2 unused bits, so changing it may also
         * make the encoding non-canonical (malformed); never accepted.
         */
        if (i + 1 < siglen)
            ck_assert_msg(st == JWT_BAD_SIGNATURE, "position %zu: %d", i, st);
        else
            ck_assert(st == JWT_BAD_SIGNATURE || st == JWT_MALFORMED);
    }
    /* Shortened (40 characters: 30 bytes), extended, and dropped signatures. */
    memcpy(tok, known_token, sizeof(known_token));
    tok[strlen(tok) - 3] = '\0';
    ck_assert_int_eq(verify_str(tok, 1700000001, &sub), JWT_BAD_SIGNATURE);
    snprintf(tok, sizeof(tok), "%sAAAA", known_token);
    ck_assert_int_eq(verify_str(tok, 1700000001, &sub), JWT_BAD_SIGNATURE);
    memcpy(tok, known_token, off);
    tok[off] = '\0';
    ck_assert_int_eq(verify_str(tok, 1700000001, &sub), JWT_BAD_SIGNATURE);
    ck_assert_int_eq(sub, 99);
}
END_TEST

START_TEST(test_bad_alg)
{
    static const char *const headers[] = {
        "{\"alg\":\"none\",\"typ\":\"JWT\"}",
        "{\"alg\":\"HS512\",\"typ\":\"JWT\"}",
        "{\"alg\":\"RS256\",\"typ\":\"JWT\"}",
        "{\"alg\":\"hs256\",\"typ\":\"JWT\"}",
        "{\"alg\":\"HS256 \",\"typ\":\"JWT\"}",
        "{\"typ\":\"JWT\"}",
        "{\"alg\":256}",
        "{\"alg\":null}",
        "{\"alg\":[\"HS256\"]}",
    };

    /* Even under a genuine HS256 MAC, a header naming anything else is refused. */
    for (size_t i = 0; i < sizeof(headers) / sizeof(headers[0]); i++) {
        char tok[JWT_MAX_LEN + 1];
        int64_t sub = 99;
        make_token(headers[i], "{\"sub\":42,\"exp\":1700003600}", secret(), SECRET_LEN, tok,
                   sizeof(tok));
        ck_assert_msg(verify_str(tok, 1700000001, &sub) == JWT_BAD_ALG, "%s", headers[i]);
        ck_assert_int_eq(sub, 99);
    }
}
END_TEST

START_TEST(test_unsigned_alg_none)
{
    /*
     * The classic attack: alg none and an empty signature.  The signature is
     * checked before the header is even decoded, so this fails there, as a
     * bad signature rather than a bad algorithm.
     */
    const char *h = "{\"alg\":\"none\",\"typ\":\"JWT\"}", *p = "{\"sub\":1,\"exp\":4102444800}";
    char tok[256];
    int64_t sub = 99;
    size_t n;

    n = b64url_encode((const unsigned char *)h, strlen(h), tok);
    tok[n++] = '.';
    n += b64url_encode((const unsigned char *)p, strlen(p), tok + n);
    tok[n++] = '.';
    tok[n] = '\0';
    ck_assert_int_eq(verify_str(tok, 1700000001, &sub), JWT_BAD_SIGNATURE);
    ck_assert_int_eq(sub, 99);
}
END_TEST

START_TEST(test_malformed_shape)
{
    static const char *const bad[] = {
        "",
        "garbage",
        "abc.def",
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9",
        ".eyJzdWIiOjF9.T6YJ3OzcN2hmvL_vdhlhYk14925wLiaG4mq2l-H9j7Q",
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9..T6YJ3OzcN2hmvL_vdhlhYk14925wLiaG4mq2l-H9j7Q",
        "a.b.c.d",
        "..",
        "...",
        /* the known token with a fourth, empty part */
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9."
        "eyJzdWIiOjQyLCJpYXQiOjE3MDAwMDAwMDAsImV4cCI6MTcwMDAwMzYwMH0."
        "T6YJ3OzcN2hmvL_vdhlhYk14925wLiaG4mq2l-H9j7Q.",
        /* its signature in the standard alphabet, or padded: not base64url */
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9."
        "eyJzdWIiOjQyLCJpYXQiOjE3MDAwMDAwMDAsImV4cCI6MTcwMDAwMzYwMH0."
        "T6YJ3OzcN2hmvL/vdhlhYk14925wLiaG4mq2l+H9j7Q",
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9."
        "eyJzdWIiOjQyLCJpYXQiOjE3MDAwMDAwMDAsImV4cCI6MTcwMDAwMzYwMH0."
        "T6YJ3OzcN2hmvL_vdhlhYk14925wLiaG4mq2l-H9j7Q=",
        /* a trailing newline, as a careless header parser might leave it */
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9."
        "eyJzdWIiOjQyLCJpYXQiOjE3MDAwMDAwMDAsImV4cCI6MTcwMDAwMzYwMH0."
        "T6YJ3OzcN2hmvL_vdhlhYk14925wLiaG4mq2l-H9j7Q\n",
        "!!!.@@@.###",
    };

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int64_t sub = 99;
        enum jwt_status st = verify_str(bad[i], 1700000001, &sub);
        ck_assert_msg(st == JWT_MALFORMED, "case %zu: %d", i, st);
        ck_assert_int_eq(sub, 99);
    }
}
END_TEST

START_TEST(test_nul_and_null)
{
    char tok[sizeof(known_token)];
    int64_t sub = 99;

    memcpy(tok, known_token, sizeof(known_token));
    tok[5] = '\0';
    ck_assert_int_eq(
        jwt_verify(secret(), SECRET_LEN, tok, sizeof(known_token) - 1, 1700000001, &sub),
        JWT_MALFORMED);
    ck_assert_int_eq(jwt_verify(secret(), SECRET_LEN, NULL, 0, 1700000001, &sub), JWT_MALFORMED);
    ck_assert_int_eq(sub, 99);
}
END_TEST

START_TEST(test_signed_but_malformed_content)
{
    /* Genuine signatures over content that is not a usable claim set. */
    static const char *const payloads[] = {
        "not json",
        "[42]",
        "\"sub\"",
        "42",
        "{\"sub\":42,\"iat\":1700000000,\"exp\":1700003600}x",
        "{\"sub\":42,\"iat\":1700000000,\"exp\":1700003600}{}",
        "{\"sub\":42,\"iat\":1700000000,\"exp\":1700003600",
        "{\"iat\":1700000000,\"exp\":1700003600}",
        "{\"sub\":0,\"iat\":1700000000,\"exp\":1700003600}",
        "{\"sub\":-5,\"iat\":1700000000,\"exp\":1700003600}",
        "{\"sub\":1.5,\"iat\":1700000000,\"exp\":1700003600}",
        "{\"sub\":9007199254740994,\"iat\":1700000000,\"exp\":1700003600}",
        "{\"sub\":1e300,\"iat\":1700000000,\"exp\":1700003600}",
        /* sub as a string: not what conduitd issues */
        "{\"sub\":\"12\",\"iat\":1700000000,\"exp\":1700003600}",
        "{\"sub\":\"\",\"iat\":1700000000,\"exp\":1700003600}",
        "{\"sub\":\"9223372036854775807\",\"iat\":1700000000,\"exp\":1700003600}",
        "{\"sub\":true,\"iat\":1700000000,\"exp\":1700003600}",
        "{\"sub\":null,\"iat\":1700000000,\"exp\":1700003600}",
        "{\"sub\":[42],\"iat\":1700000000,\"exp\":1700003600}",
        "{\"sub\":42,\"iat\":1700000000}",
        "{\"sub\":42,\"iat\":1700000000,\"exp\":\"1700003600\"}",
        "{\"sub\":42,\"iat\":1700000000,\"exp\":null}",
        "{\"Sub\":42,\"iat\":1700000000,\"exp\":1700003600}",
        /* exp of every odd type and size */
        "{\"sub\":42,\"iat\":1700000000,\"exp\":1e300}",
        "{\"sub\":42,\"iat\":1700000000,\"exp\":1700003600.5}",
        "{\"sub\":42,\"iat\":1700000000,\"exp\":-1}",
        "{\"sub\":42,\"iat\":1700000000,\"exp\":9007199254740994}",
        /* iat missing, of another type, after exp, in the future, or too long before exp */
        "{\"sub\":42,\"exp\":1700003600}",
        "{\"sub\":42,\"iat\":\"1700000000\",\"exp\":1700003600}",
        "{\"sub\":42,\"iat\":1.5,\"exp\":1700003600}",
        "{\"sub\":42,\"iat\":-1,\"exp\":1700003600}",
        "{\"sub\":42,\"iat\":1700003600,\"exp\":1700003600}",
        "{\"sub\":42,\"iat\":1700000302,\"exp\":1700003600}",
        "{\"sub\":42,\"iat\":1000000000,\"exp\":1700003600}",
    };
    char tok[JWT_MAX_LEN + 1];
    int64_t sub = 99;

    for (size_t i = 0; i < sizeof(payloads) / sizeof(payloads[0]); i++) {
        make_payload_token(payloads[i], tok, sizeof(tok));
        ck_assert_msg(verify_str(tok, 1700000001, &sub) == JWT_MALFORMED, "%s", payloads[i]);
        ck_assert_int_eq(sub, 99);
    }
    /* A header that is not a JSON object, with a genuine signature. */
    make_token("HS256", GOOD_CLAIMS, secret(), SECRET_LEN, tok, sizeof(tok));
    ck_assert_int_eq(verify_str(tok, 1700000001, &sub), JWT_MALFORMED);
    make_token("[\"HS256\"]", GOOD_CLAIMS, secret(), SECRET_LEN, tok, sizeof(tok));
    ck_assert_int_eq(verify_str(tok, 1700000001, &sub), JWT_MALFORMED);
    ck_assert_int_eq(sub, 99);
}
END_TEST

START_TEST(test_signed_content_accepted)
{
    /* What the checks must still let through. */
    static const struct {
        const char *payload;
        int64_t sub;
    } ok[] = {
        {"{\"sub\":1,\"iat\":1599999999,\"exp\":1700003600}", 1},
        {"{\"sub\":9007199254740992,\"iat\":1600000000,\"exp\":1700003600}",
         INT64_C(9007199254740992)},
        /* key order, spaces, unknown claims and an integral exponent form are JSON, not type games
         */
        {"{\"exp\": 1.7e9, \"iat\": 1600000000, \"sub\": 5, \"extra\": [1,2]}", 5},
        {" {\"sub\":6,\"iat\":1600000000,\"exp\":1700003600} \n", 6},
        /* iat a little in the future: another instance's clock */
        {"{\"sub\":7,\"iat\":1600000300,\"exp\":1700003600}", 7},
        /* the longest lifetime jwt_lifetime allows */
        {"{\"sub\":8,\"iat\":1500000000,\"exp\":1815360000}", 8},
    };

    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        char tok[JWT_MAX_LEN + 1];
        int64_t sub = 0;
        make_payload_token(ok[i].payload, tok, sizeof(tok));
        ck_assert_msg(verify_str(tok, 1600000000, &sub) == JWT_OK, "%s", ok[i].payload);
        ck_assert_int_eq(sub, ok[i].sub);
    }
}
END_TEST

/*
 * The HMAC context is keyed once and kept: a call with another secret
 * (even one that begins with the last, or is a prefix of it) must key it
 * again, and going back to the first must too.
 */
START_TEST(test_secret_changes)
{
    static const char *const secrets[] = {SECRET, SECRET "x", "another-secret-of-thirty-two-byt",
                                          SECRET};
    char tok[4][JWT_MAX_LEN + 1];
    int64_t sub = 0;

    for (int i = 0; i < 4; i++)
        ck_assert_int_gt(jwt_sign((const unsigned char *)secrets[i], strlen(secrets[i]), 42,
                                  1700000000, 1700003600, tok[i], sizeof(tok[i])),
                         0);
    ck_assert_str_eq(tok[0], known_token);
    ck_assert_str_eq(tok[3], known_token);
    ck_assert_str_ne(tok[1], tok[0]);
    ck_assert_str_ne(tok[2], tok[0]);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            int same = strcmp(secrets[i], secrets[j]) == 0;
            ck_assert_int_eq(jwt_verify((const unsigned char *)secrets[j], strlen(secrets[j]),
                                        tok[i], strlen(tok[i]), 1700000001, &sub),
                             same ? JWT_OK : JWT_BAD_SIGNATURE);
        }
    ck_assert_int_eq(sub, 42);
}
END_TEST

START_TEST(test_too_long)
{
    char payload[JWT_MAX_LEN], tok[2 * JWT_MAX_LEN], big[JWT_MAX_LEN + 2];
    int64_t sub = 99;
    int accepted = 0;

    /*
     * Grow a genuine token one character of payload at a time: accepted up
     * to JWT_MAX_LEN characters, refused beyond.
     */
    for (int pad = 600;; pad++) {
        snprintf(payload, sizeof(payload),
                 "{\"sub\":42,\"iat\":1700000000,\"exp\":1700003600,\"x\":\"%*s\"}", pad, "");
        make_payload_token(payload, tok, sizeof(tok));
        sub = 99;
        if (strlen(tok) <= JWT_MAX_LEN) {
            ck_assert_int_eq(verify_str(tok, 1700000001, &sub), JWT_OK);
            ck_assert_int_eq(sub, 42);
            accepted = 1;
        } else {
            ck_assert_int_eq(verify_str(tok, 1700000001, &sub), JWT_MALFORMED);
            ck_assert_int_eq(sub, 99);
            break;
        }
    }
    ck_assert(accepted);
    /* Plain garbage, one character over the limit. */
    memset(big, 'A', sizeof(big));
    big[100] = '.';
    big[200] = '.';
    ck_assert_int_eq(jwt_verify(secret(), SECRET_LEN, big, JWT_MAX_LEN + 1, 0, &sub),
                     JWT_MALFORMED);
}
END_TEST

START_TEST(test_short_secret)
{
    static const unsigned char short_key[] = "0123456789abcdef0123456789abcde"; /* 31 bytes */
    static const unsigned char long_key[] =
        "a key that is longer than one sha256 block of sixty-four bytes, by a bit";
    char tok[JWT_MAX_LEN + 1];
    int64_t sub = 99;

    ck_assert_int_eq(jwt_sign(short_key, 31, 42, 1, 2, tok, sizeof(tok)), -1);
    ck_assert_int_eq(jwt_sign(short_key, 0, 42, 1, 2, tok, sizeof(tok)), -1);
    ck_assert_int_eq(jwt_sign(NULL, 0, 42, 1, 2, tok, sizeof(tok)), -1);
    /* A token genuinely signed with the short key does not verify under it either. */
    make_token(HS256_HEADER, "{\"sub\":42,\"exp\":1700003600}", short_key, 31, tok, sizeof(tok));
    ck_assert_int_eq(jwt_verify(short_key, 31, tok, strlen(tok), 1700000001, &sub),
                     JWT_BAD_SIGNATURE);
    ck_assert_int_eq(jwt_verify(NULL, 0, known_token, strlen(known_token), 1700000001, &sub),
                     JWT_BAD_SIGNATURE);
    ck_assert_int_eq(sub, 99);
    /* Exactly 32 bytes is enough, and a key longer than a SHA-256 block works. */
    ck_assert_int_gt(jwt_sign(secret(), 32, 42, 1, 2, tok, sizeof(tok)), 0);
    ck_assert_int_gt(jwt_sign(long_key, sizeof(long_key) - 1, 42, 1, 2000, tok, sizeof(tok)), 0);
    ck_assert_int_eq(jwt_verify(long_key, sizeof(long_key) - 1, tok, strlen(tok), 1000, &sub),
                     JWT_OK);
    ck_assert_int_eq(sub, 42);
    ck_assert_int_eq(jwt_verify(secret(), SECRET_LEN, tok, strlen(tok), 1000, &sub),
                     JWT_BAD_SIGNATURE);
}
END_TEST

START_TEST(test_sign_outcap)
{
    char tok[JWT_MAX_LEN + 1];
    size_t n = strlen(known_token);

    /* Room for the token and its NUL is enough; one byte less is refused. */
    ck_assert_int_eq(jwt_sign(secret(), SECRET_LEN, 42, 1700000000, 1700003600, tok, n + 1),
                     (int)n);
    ck_assert_str_eq(tok, known_token);
    ck_assert_int_eq(jwt_sign(secret(), SECRET_LEN, 42, 1700000000, 1700003600, tok, n), -1);
    ck_assert_int_eq(jwt_sign(secret(), SECRET_LEN, 42, 1700000000, 1700003600, tok, 0), -1);
    /* The longest numbers still fit in JWT_MAX_LEN + 1, as jwt.h promises. */
    ck_assert_int_gt(
        jwt_sign(secret(), SECRET_LEN, INT64_MIN, INT64_MIN, INT64_MIN, tok, sizeof(tok)), 0);
}
END_TEST

/* nbf (RFC 7519 4.1.5): before it the token is refused, with no leeway. */
START_TEST(test_not_before)
{
    static const char *const bad_type[] = {
        "{\"sub\":42,\"iat\":1700000000,\"exp\":1700003600,\"nbf\":\"1700000000\"}",
        "{\"sub\":42,\"iat\":1700000000,\"exp\":1700003600,\"nbf\":1700000000.5}",
        "{\"sub\":42,\"iat\":1700000000,\"exp\":1700003600,\"nbf\":-1}",
        "{\"sub\":42,\"iat\":1700000000,\"exp\":1700003600,\"nbf\":null}",
        "{\"sub\":42,\"iat\":1700000000,\"exp\":1700003600,\"nbf\":1e300}",
    };
    char tok[JWT_MAX_LEN + 1];
    int64_t sub = 99;

    make_payload_token("{\"sub\":42,\"iat\":1700000000,\"exp\":1700003600,\"nbf\":1700001000}", tok,
                       sizeof(tok));
    ck_assert_int_eq(verify_str(tok, 1700000001, &sub), JWT_NOT_YET_VALID);
    ck_assert_int_eq(verify_str(tok, 1700000999, &sub), JWT_NOT_YET_VALID);
    ck_assert_int_eq(sub, 99);
    /* From nbf itself on, it is valid. */
    ck_assert_int_eq(verify_str(tok, 1700001000, &sub), JWT_OK);
    ck_assert_int_eq(sub, 42);
    /* Expired is said first: the token will never be valid again. */
    ck_assert_int_eq(verify_str(tok, 1700003600, &sub), JWT_EXPIRED);
    for (size_t i = 0; i < sizeof(bad_type) / sizeof(bad_type[0]); i++) {
        make_payload_token(bad_type[i], tok, sizeof(tok));
        sub = 99;
        ck_assert_msg(verify_str(tok, 1700001001, &sub) == JWT_MALFORMED, "%s", bad_type[i]);
        ck_assert_int_eq(sub, 99);
    }
    ck_assert_str_eq(jwt_status_str(JWT_NOT_YET_VALID), "token is not valid yet");
}
END_TEST

START_TEST(test_status_strings)
{
    static const enum jwt_status all[] = {
        JWT_OK,      JWT_MALFORMED,   JWT_BAD_ALG,      JWT_BAD_SIGNATURE,
        JWT_EXPIRED, JWT_UNSUPPORTED, JWT_NOT_YET_VALID};

    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
        ck_assert_ptr_nonnull(jwt_status_str(all[i]));
        for (size_t j = 0; j < i; j++)
            ck_assert_str_ne(jwt_status_str(all[i]), jwt_status_str(all[j]));
    }
    ck_assert_str_eq(jwt_status_str(JWT_EXPIRED), "token is expired");
    ck_assert_ptr_nonnull(jwt_status_str((enum jwt_status)77));
}
END_TEST

START_TEST(test_header_parameters)
{
    /* RFC 7515 4.1.11: a "crit" the recipient does not understand rejects the token. */
    static const char *const refused[] = {
        "{\"alg\":\"HS256\",\"typ\":\"JWT\",\"crit\":[\"exp\"]}",
        "{\"alg\":\"HS256\",\"crit\":[\"b64\"],\"b64\":false}",
        "{\"alg\":\"HS256\",\"crit\":[]}",
        "{\"alg\":\"HS256\",\"crit\":null}",
        "{\"alg\":\"HS256\",\"typ\":\"JWE\"}",
        "{\"alg\":\"HS256\",\"typ\":7}",
        "{\"alg\":\"HS256\",\"typ\":null}",
    };
    static const char *const accepted[] = {
        "{\"alg\":\"HS256\"}",
        "{\"typ\":\"JWT\",\"alg\":\"HS256\"}",
        "{\"alg\":\"HS256\",\"kid\":\"k1\"}",
    };
    char tok[JWT_MAX_LEN + 1];

    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        int64_t sub = 99;
        make_token(refused[i], GOOD_CLAIMS, secret(), SECRET_LEN, tok, sizeof(tok));
        ck_assert_msg(verify_str(tok, 1700000001, &sub) == JWT_UNSUPPORTED, "%s", refused[i]);
        ck_assert_int_eq(sub, 99);
    }
    for (size_t i = 0; i < sizeof(accepted) / sizeof(accepted[0]); i++) {
        int64_t sub = 0;
        make_token(accepted[i], GOOD_CLAIMS, secret(), SECRET_LEN, tok, sizeof(tok));
        ck_assert_msg(verify_str(tok, 1700000001, &sub) == JWT_OK, "%s", accepted[i]);
        ck_assert_int_eq(sub, 42);
    }
}
END_TEST

static Suite *
jwt_suite(void)
{
    Suite *s = suite_create("jwt");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, test_known_vector_sign);
    tcase_add_test(tc, test_known_vector_verify);
    tcase_add_test(tc, test_round_trip);
    tcase_add_test(tc, test_no_nul_needed);
    tcase_add_test(tc, test_expiry);
    tcase_add_test(tc, test_tampered_header_or_payload);
    tcase_add_test(tc, test_forged_payload);
    tcase_add_test(tc, test_tampered_signature);
    tcase_add_test(tc, test_bad_alg);
    tcase_add_test(tc, test_unsigned_alg_none);
    tcase_add_test(tc, test_malformed_shape);
    tcase_add_test(tc, test_nul_and_null);
    tcase_add_test(tc, test_signed_but_malformed_content);
    tcase_add_test(tc, test_signed_content_accepted);
    tcase_add_test(tc, test_header_parameters);
    tcase_add_test(tc, test_secret_changes);
    tcase_add_test(tc, test_too_long);
    tcase_add_test(tc, test_short_secret);
    tcase_add_test(tc, test_sign_outcap);
    tcase_add_test(tc, test_status_strings);
    tcase_add_test(tc, test_not_before);
    suite_add_tcase(s, tc);
    return s;
}

#include "t/unit/check_main.h"
CHECK_MAIN(jwt_suite)
