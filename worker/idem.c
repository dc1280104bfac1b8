/*
 * idem: the Idempotency-Key header of the POST routes that create.  See
 * idem.h.
 */
#include "config.h"

#include "worker/idem.h"

#include <stdio.h>
#include <string.h>

#include <event2/http.h>
#include <openssl/evp.h>

#include "worker/api.h"
#include "worker/http.h"

int
idem_parse_key(const char *value, char *key)
{
    size_t n = strlen(value);

    /* The draft's form is a structured-field string: "key". */
    if (n >= 2 && value[0] == '"' && value[n - 1] == '"') {
        value++;
        n -= 2;
    }
    if (n == 0 || n > IDEM_KEY_MAX)
        return -1;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)value[i];
        if (ch <= 0x20 || ch >= 0x7f || ch == '"' || ch == '\\')
            return -1;
    }
    memcpy(key, value, n);
    key[n] = '\0';
    return 0;
}

/*
 * SHA-256 over what makes the request this one: its route, its path's
 * parameters and its body (or the fields given), each followed by a NUL
 * (no part can then pass for the start of the next).  Byte for byte: a
 * client repeats a request, it does not rewrite it.
 */
static int
fingerprint(struct http_ctx *c, const char *const *fields, int n,
            char out[IDEM_FINGERPRINT_LEN + 1])
{
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int dlen = 0;
    const unsigned char *body;
    size_t blen;
    int ok;

    ok = md && EVP_DigestInit_ex(md, EVP_sha256(), NULL) == 1 &&
         EVP_DigestUpdate(md, c->match.route->pattern, strlen(c->match.route->pattern) + 1) == 1;
    for (int i = 0; ok && i < c->match.nparams; i++)
        ok = EVP_DigestUpdate(md, c->match.params[i], c->match.param_len[i] + 1) == 1;
    if (fields) {
        for (int i = 0; ok && i < n; i++)
            ok = EVP_DigestUpdate(md, fields[i], strlen(fields[i]) + 1) == 1;
    } else {
        body = http_body(c, &blen);
        ok = ok && (blen == 0 || EVP_DigestUpdate(md, body, blen) == 1);
    }
    ok = ok && EVP_DigestFinal_ex(md, digest, &dlen) == 1 && dlen * 2 == IDEM_FINGERPRINT_LEN;
    EVP_MD_CTX_free(md);
    if (!ok)
        return -1;
    for (unsigned int i = 0; i < dlen; i++)
        snprintf(out + 2 * i, 3, "%02x", digest[i]);
    return 0;
}

int
idem_read(struct http_ctx *c, struct idem *k, const char *const *fields, int n)
{
    const char *v = http_header(c, IDEM_HEADER);

    k->key[0] = '\0';
    if (!v)
        return 0;
    if (idem_parse_key(v, k->key) < 0) {
        http_error(c, 400,
                   "Idempotency-Key must be 1 to 255 printable ASCII characters (no space, '\"' "
                   "or '\\'), bare or in double quotes");
        return -1;
    }
    if (fingerprint(c, fields, n, k->fingerprint) < 0) {
        k->key[0] = '\0';
        http_error(c, 503, "out of memory");
        return -1;
    }
    return 0;
}

const char *
idem_key(const struct idem *k)
{
    return k->key[0] ? k->key : NULL;
}

static void
on_replay(void *arg, enum db_status st, const PGresult *res)
{
    struct http_ctx *c = arg;
    struct idem *k = api_req(c)->idem;
    int same;

    /* The lookup changes nothing a client sees: asking again is safe. */
    if (st == DB_UNKNOWN)
        st = DB_UNAVAILABLE;
    if (api_db_failed(c, st, res))
        return;
    if (PQntuples(res) == 0) {
        k->write(c);
        return;
    }
    same = PQfnumber(res, "same_request");
    if (same < 0 || !db_bool(res, 0, same)) {
        idem_mismatch(c);
        return;
    }
    if (c->req)
        evhttp_add_header(evhttp_request_get_output_headers(c->req), "Idempotent-Replayed", "true");
    k->answer(c, DB_OK, res);
}

void
idem_mismatch(struct http_ctx *c)
{
    if (c->req)
        evhttp_remove_header(evhttp_request_get_output_headers(c->req), "Idempotent-Replayed");
    http_error(c, 422,
               "Idempotency-Key was already used with another request (another method, path or "
               "body): a key names one request");
}

void
idem_begin(struct http_ctx *c, struct idem *k, int64_t scope, enum sql_query_id replay,
           void (*write)(struct http_ctx *c), db_cb answer)
{
    const char *params[3];

    if (!k->key[0]) {
        write(c);
        return;
    }
    api_req(c)->idem = k;
    k->write = write;
    k->answer = answer;
    api_itoa(scope, k->scope);
    params[0] = k->scope;
    params[1] = k->key;
    params[2] = k->fingerprint;
    api_query(c, replay, params, on_replay);
}

int
idem_conflict(struct http_ctx *c, enum db_status st, const PGresult *res)
{
    const char *constraint;

    if (st != DB_SQL_ERROR || strcmp(db_sqlstate(res), "23505") != 0)
        return 0;
    constraint = PQresultErrorField(res, PG_DIAG_CONSTRAINT_NAME);
    if (!constraint || strcmp(constraint, "idempotency_keys_pkey") != 0)
        return 0;
    http_error(c, 409,
               "Idempotency-Key: another request with this key was in progress and has now "
               "stored its answer; repeat this one to be given it");
    return 1;
}
