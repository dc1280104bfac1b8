/*
 * jwt: the bearer tokens of the API, HS256 only (RFC 7519, RFC 7515).
 *
 * A token is base64url(header) "." base64url(payload) "." base64url(mac)
 * with the header {"alg":"HS256","typ":"JWT"} and the payload
 * {"sub":<user id>,"iat":<issued>,"exp":<expires>} in Unix seconds.  Every
 * worker and every instance signs with the same secret, so any of them can
 * verify a token another one issued.
 *
 * The secret is only read.  What outlives a call is one HMAC context per
 * process, keyed with the last secret used (and a copy of it, to tell a
 * new one): keying costs more than the rest of a check.  Not for use from
 * two threads at once.
 */
#ifndef CONDUITD_JWT_H
#define CONDUITD_JWT_H

#include <stddef.h>
#include <stdint.h>

/* Shorter secrets are refused: HMAC-SHA256 wants a key of at least 256 bits. */
#define JWT_SECRET_MIN 32
/* Longest token accepted or produced; a bound on the work an attacker causes. */
#define JWT_MAX_LEN 1024

/* The largest integer claim: every integer up to 2^53 is exact in a double. */
#define JWT_CLAIM_MAX INT64_C(9007199254740992)
/* Longest lifetime a token may claim (exp - iat): 10 years, jwt_lifetime's bound. */
#define JWT_LIFETIME_MAX (10L * 365 * 86400)
/* How far in the future an iat may be: the clocks of two instances differ a little. */
#define JWT_CLOCK_SKEW 300

enum jwt_status {
    JWT_OK = 0,
    JWT_MALFORMED,
    JWT_BAD_ALG,
    JWT_BAD_SIGNATURE,
    JWT_EXPIRED,
    JWT_UNSUPPORTED,
    JWT_NOT_YET_VALID
};

/* A short reason for a 401 body, e.g. "token is expired". Never NULL. */
const char *jwt_status_str(enum jwt_status st);

/*
 * Writes a NUL-terminated token for user sub into out.  Returns its length,
 * or -1 when the secret is shorter than JWT_SECRET_MIN or out is too small
 * (outcap of JWT_MAX_LEN + 1 is always enough).
 */
int jwt_sign(const unsigned char *secret, size_t secret_len, int64_t sub, int64_t iat, int64_t exp,
             char *out, size_t outcap);

/*
 * Checks token[0..token_len) (no NUL needed) at Unix time now.  On JWT_OK,
 * *sub_out is the positive user id from "sub"; otherwise it is untouched.
 *
 * The signature is checked first, in constant time, so nothing in a forged
 * token is ever parsed; then the header must say alg HS256 (JWT_BAD_ALG),
 * carry no "crit" and no typ other than "JWT" (JWT_UNSUPPORTED), and the
 * payload must carry the three claims jwt_sign() writes, each a JSON
 * integer: sub in [1, JWT_CLAIM_MAX], iat no later than now +
 * JWT_CLOCK_SKEW, exp after iat by at most JWT_LIFETIME_MAX
 * (JWT_MALFORMED otherwise), and exp later than now (JWT_EXPIRED).  An
 * "nbf" (RFC 7519 4.1.5), which conduitd never writes but a token signed
 * with the same secret may carry, must be such an integer too
 * (JWT_MALFORMED) and not later than now (JWT_NOT_YET_VALID): no leeway,
 * as exp has none.  A secret shorter than JWT_SECRET_MIN verifies nothing
 * (JWT_BAD_SIGNATURE).
 */
enum jwt_status jwt_verify(const unsigned char *secret, size_t secret_len, const char *token,
                           size_t token_len, int64_t now, int64_t *sub_out);

#endif
