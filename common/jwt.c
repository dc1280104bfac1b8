/*
 * jwt: see jwt.h.
 */
#include "config.h"

#include "common/jwt.h"

#include "common/base64url.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/core_names.h>
#include <openssl/params.h>
#include <stdio.h>
#include <string.h>

#define MAC_LEN 32
/* base64url of {"alg":"HS256","typ":"JWT"}, the only header ever issued. */
#define HEADER_B64 "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"

/*
 * HMAC-SHA256, keyed once.  OpenSSL 3's one-shot HMAC() fetches the MAC and
 * the digest from the provider and keys a new context at every call: 4.4 %
 * of a worker's CPU at 6,000 users (perf record, issue 17), more than the
 * rest of a request's token check.  So the context keyed with the last
 * secret used is kept, and EVP_MAC_init() without a key restarts it from
 * the key's precomputed state.  One per process: only the loop's thread
 * signs and verifies.
 */
static struct {
    EVP_MAC_CTX *ctx;
    unsigned char *key; /* the secret ctx is keyed with */
    size_t key_len;
} hm;

static EVP_MAC_CTX *
keyed(const unsigned char *secret, size_t secret_len)
{
    OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, "SHA256", 0),
                           OSSL_PARAM_construct_end()};
    EVP_MAC *hmac;

    if (hm.ctx && hm.key_len == secret_len && memcmp(hm.key, secret, secret_len) == 0)
        return hm.ctx;
    EVP_MAC_CTX_free(hm.ctx);
    OPENSSL_clear_free(hm.key, hm.key_len);
    hm.key = OPENSSL_memdup(secret, secret_len);
    hm.key_len = secret_len;
    hmac = EVP_MAC_fetch(NULL, "HMAC", NULL);
    hm.ctx = hmac ? EVP_MAC_CTX_new(hmac) : NULL;
    EVP_MAC_free(hmac);
    if (!hm.key || !hm.ctx || EVP_MAC_init(hm.ctx, secret, secret_len, params) != 1) {
        EVP_MAC_CTX_free(hm.ctx);
        OPENSSL_clear_free(hm.key, hm.key_len);
        memset(&hm, 0, sizeof(hm));
    }
    return hm.ctx;
}

static int
mac(const unsigned char *secret, size_t secret_len, const char *data, size_t n,
    unsigned char out[MAC_LEN])
{
    EVP_MAC_CTX *ctx = keyed(secret, secret_len);
    size_t len = 0;

    if (!ctx || EVP_MAC_init(ctx, NULL, 0, NULL) != 1 ||
        EVP_MAC_update(ctx, (const unsigned char *)data, n) != 1 ||
        EVP_MAC_final(ctx, out, &len, MAC_LEN) != 1 || len != MAC_LEN)
        return -1;
    return 0;
}

const char *
jwt_status_str(enum jwt_status st)
{
    switch (st) {
    case JWT_OK:
        return "token is valid";
    case JWT_MALFORMED:
        return "token is malformed";
    case JWT_BAD_ALG:
        return "token algorithm is not HS256";
    case JWT_BAD_SIGNATURE:
        return "token signature is invalid";
    case JWT_EXPIRED:
        return "token is expired";
    case JWT_UNSUPPORTED:
        return "token header has an unsupported parameter";
    case JWT_NOT_YET_VALID:
        return "token is not valid yet";
    }
    return "token is invalid";
}

int
jwt_sign(const unsigned char *secret, size_t secret_len, int64_t sub, int64_t iat, int64_t exp,
         char *out, size_t outcap)
{
    char payload[128];
    unsigned char sig[MAC_LEN];
    size_t hlen = sizeof(HEADER_B64) - 1, plen, blen, total;
    int n;

    if (secret == NULL || secret_len < JWT_SECRET_MIN)
        return -1;
    n = snprintf(payload, sizeof(payload),
                 "{\"sub\":%" PRId64 ",\"iat\":%" PRId64 ",\"exp\":%" PRId64 "}", sub, iat, exp);
    if (n < 0 || (size_t)n >= sizeof(payload))
        return -1;
    plen = (size_t)n;
    blen = b64url_encoded_len(plen);
    total = hlen + 1 + blen + 1 + b64url_encoded_len(MAC_LEN);
    if (total >= outcap || total > JWT_MAX_LEN)
        return -1;

    memcpy(out, HEADER_B64, hlen);
    out[hlen] = '.';
    b64url_encode((const unsigned char *)payload, plen, out + hlen + 1);
    if (mac(secret, secret_len, out, hlen + 1 + blen, sig) != 0)
        return -1;
    out[hlen + 1 + blen] = '.';
    b64url_encode(sig, MAC_LEN, out + hlen + 1 + blen + 1);
    return (int)total;
}

/*
 * Decodes one part and parses it as a JSON object that must span the whole
 * part.  Returns the tree, owned by the caller, or NULL.
 */
static cJSON *
parse_part(const char *b64, size_t n)
{
    unsigned char buf[JWT_MAX_LEN];
    size_t len;
    const char *end = NULL;
    cJSON *obj;

    if (b64url_decode(b64, n, buf, sizeof(buf), &len) != 0 || len == 0)
        return NULL;
    obj = cJSON_ParseWithLengthOpts((const char *)buf, len, &end, 0);
    if (obj == NULL)
        return NULL;
    while (end < (const char *)buf + len &&
           (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r'))
        end++;
    if (end != (const char *)buf + len || !cJSON_IsObject(obj)) {
        cJSON_Delete(obj);
        return NULL;
    }
    return obj;
}

/*
 * An integer claim as conduitd writes it: a JSON number with no fraction,
 * within [lo, hi].  cJSON keeps numbers as doubles, which name every
 * integer up to 2^53 exactly, so the bounds stay below that.  A string of
 * digits, a fraction or 1e300 is refused: tokens of another shape were not
 * issued by conduitd, and accepting them would let two readings of one
 * token disagree.
 */
static int
int_claim(const cJSON *item, int64_t lo, int64_t hi, int64_t *out)
{
    double d;

    if (!cJSON_IsNumber(item))
        return -1;
    d = item->valuedouble;
    if (!(d >= (double)lo && d <= (double)hi) || d != (double)(int64_t)d)
        return -1;
    *out = (int64_t)d;
    return 0;
}

/*
 * The header, beyond its alg: "typ", if present, must say JWT, and a
 * "crit" list of any kind is refused, as RFC 7515 4.1.11 requires of a
 * recipient that understands no extension.
 */
static enum jwt_status
check_header(const cJSON *header)
{
    const cJSON *alg = cJSON_GetObjectItemCaseSensitive(header, "alg");
    const cJSON *typ = cJSON_GetObjectItemCaseSensitive(header, "typ");

    if (!cJSON_IsString(alg) || alg->valuestring == NULL || strcmp(alg->valuestring, "HS256") != 0)
        return JWT_BAD_ALG;
    if (cJSON_GetObjectItemCaseSensitive(header, "crit") != NULL)
        return JWT_UNSUPPORTED;
    if (typ != NULL &&
        (!cJSON_IsString(typ) || typ->valuestring == NULL || strcmp(typ->valuestring, "JWT") != 0))
        return JWT_UNSUPPORTED;
    return JWT_OK;
}

/*
 * The claims conduitd issues, each an integer: sub a user id in
 * [1, 2^53]; iat not later than now plus a little clock skew between
 * instances; exp after iat and at most JWT_LIFETIME_MAX after it; and now
 * before exp.  An nbf is not one of them, but a claim a verifier ignores
 * is one an issuer relied on (RFC 7519 4.1.5): if present it is checked,
 * with no leeway, like exp.
 */
static enum jwt_status
check_claims(const cJSON *payload, int64_t now, int64_t *sub_out)
{
    const cJSON *nbf_item = cJSON_GetObjectItemCaseSensitive(payload, "nbf");
    int64_t sub, iat, exp, nbf = 0;

    if (int_claim(cJSON_GetObjectItemCaseSensitive(payload, "sub"), 1, JWT_CLAIM_MAX, &sub) != 0 ||
        int_claim(cJSON_GetObjectItemCaseSensitive(payload, "iat"), 0, JWT_CLAIM_MAX, &iat) != 0 ||
        int_claim(cJSON_GetObjectItemCaseSensitive(payload, "exp"), 1, JWT_CLAIM_MAX, &exp) != 0 ||
        (nbf_item && int_claim(nbf_item, 0, JWT_CLAIM_MAX, &nbf) != 0))
        return JWT_MALFORMED;
    if (iat > now + JWT_CLOCK_SKEW || exp <= iat || exp - iat > JWT_LIFETIME_MAX)
        return JWT_MALFORMED;
    if (!(now < exp))
        return JWT_EXPIRED;
    if (now < nbf)
        return JWT_NOT_YET_VALID;
    *sub_out = sub;
    return JWT_OK;
}

enum jwt_status
jwt_verify(const unsigned char *secret, size_t secret_len, const char *token, size_t token_len,
           int64_t now, int64_t *sub_out)
{
    enum jwt_status st = JWT_MALFORMED;
    const char *dot1, *dot2;
    unsigned char want[MAC_LEN], got[JWT_MAX_LEN];
    size_t got_len, hlen, plen;
    cJSON *header = NULL, *payload = NULL;

    if (secret == NULL || secret_len < JWT_SECRET_MIN)
        return JWT_BAD_SIGNATURE;
    if (token == NULL || token_len == 0 || token_len > JWT_MAX_LEN)
        return JWT_MALFORMED;
    if (memchr(token, '\0', token_len) != NULL)
        return JWT_MALFORMED;
    dot1 = memchr(token, '.', token_len);
    if (dot1 == NULL)
        return JWT_MALFORMED;
    dot2 = memchr(dot1 + 1, '.', token_len - (size_t)(dot1 + 1 - token));
    if (dot2 == NULL || memchr(dot2 + 1, '.', token_len - (size_t)(dot2 + 1 - token)) != NULL)
        return JWT_MALFORMED;
    hlen = (size_t)(dot1 - token);
    plen = (size_t)(dot2 - dot1 - 1);
    if (hlen == 0 || plen == 0)
        return JWT_MALFORMED;

    /*
     * Signature first: until it matches, the header and payload are
     * attacker-controlled and are not even decoded.  An empty or short
     * signature (alg "none" tokens) lands here as a bad signature.
     */
    if (b64url_decode(dot2 + 1, token_len - (size_t)(dot2 + 1 - token), got, sizeof(got),
                      &got_len) != 0)
        return JWT_MALFORMED;
    if (mac(secret, secret_len, token, (size_t)(dot2 - token), want) != 0)
        return JWT_BAD_SIGNATURE;
    if (got_len != MAC_LEN || CRYPTO_memcmp(got, want, MAC_LEN) != 0)
        return JWT_BAD_SIGNATURE;

    /*
     * The header every token of ours carries passes check_header as it
     * stands: only another one is decoded and parsed (a cJSON parse per
     * request, 1 % of a worker's CPU).
     */
    if (hlen != sizeof(HEADER_B64) - 1 || memcmp(token, HEADER_B64, hlen) != 0) {
        header = parse_part(token, hlen);
        if (header == NULL)
            goto out;
        st = check_header(header);
        if (st != JWT_OK)
            goto out;
    }
    payload = parse_part(dot1 + 1, plen);
    st = payload == NULL ? JWT_MALFORMED : check_claims(payload, now, sub_out);
out:
    cJSON_Delete(payload);
    cJSON_Delete(header);
    return st;
}
