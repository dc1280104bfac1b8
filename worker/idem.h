/*
 * idem: the Idempotency-Key request header of the POST routes that create
 * (the IETF httpapi draft "The Idempotency-Key HTTP Header Field", as
 * Stripe's API uses it; docs/api.md, "Idempotency-Key").
 *
 * A keyed request first asks for the answer stored under its key (the
 * route's *_replay statement, sql/queries.sql): none, and the write runs,
 * storing the key and its answer in its own statement, so the key exists
 * exactly when the write committed; an answer from the same request
 * (the same fingerprint: method, route, path, body) is given again, with
 * Idempotent-Replayed: true, and nothing is written; one from another
 * request is a 422.  A key stored by a concurrent request while this one
 * ran makes its write fail with 23505 on the key (nothing of it lands):
 * 409, and a retry then gets the stored answer.  Keys are scoped by user
 * (0: a registration) and live 24 hours.
 *
 * Ownership: a struct idem lives in the handler's state; c->idem points to
 * it from idem_begin() on.
 */
#ifndef CONDUITD_IDEM_H
#define CONDUITD_IDEM_H

#include <stddef.h>
#include <stdint.h>

#include <libpq-fe.h>

#include "worker/db.h"

struct http_ctx;

#define IDEM_HEADER "Idempotency-Key"
#define IDEM_KEY_MAX 255
#define IDEM_FINGERPRINT_LEN 64 /* hex SHA-256 */

struct idem {
    char key[IDEM_KEY_MAX + 1];                 /* "" when the request carries none */
    char fingerprint[IDEM_FINGERPRINT_LEN + 1]; /* of the request, when keyed */
    char scope[24];                             /* the caller's id, "0" when anonymous */
    void (*write)(struct http_ctx *c);          /* runs the write, keyed */
    db_cb answer;                               /* answers from the write's row */
};

/*
 * The header's value into key (IDEM_KEY_MAX + 1 bytes): 1 to IDEM_KEY_MAX
 * printable ASCII characters other than space, '"' and '\', bare or as a
 * structured-field string in double quotes (the draft's form).  0, or -1
 * when it is not one.  Pure.
 */
int idem_parse_key(const char *value, char *key);

/*
 * Reads the request's header into k (zeroed by the caller): 0 (k->key ""
 * without one), or -1 after answering 400.  A keyed request's fingerprint
 * is computed here (-1 after a 503 when it cannot be), from its route, its
 * path's parameters and its body, or, when fields is not NULL, the n
 * strings of fields instead of the body (a registration: not the
 * password, which must not be kept unhashed, even digested).
 */
int idem_read(struct http_ctx *c, struct idem *k, const char *const *fields, int n);

/* The write statement's key parameter: NULL when the request has none. */
const char *idem_key(const struct idem *k);

/*
 * Without a key: write(c) at once.  With one: the stored answer is looked
 * for with replay (parameters scope, key, fingerprint) first; answer(c,
 * DB_OK, row) gives it (with Idempotent-Replayed: true; nothing was
 * written), or write(c) runs when there is none.
 */
void idem_begin(struct http_ctx *c, struct idem *k, int64_t scope, enum sql_query_id replay,
                void (*write)(struct http_ctx *c), db_cb answer);

/*
 * The 422 to a key stored by another request (a replay found not to be
 * this request's after all drops its Idempotent-Replayed header here).
 */
void idem_mismatch(struct http_ctx *c);

/*
 * For a keyed write's callback: 23505 on the key (a concurrent request
 * stored it) is answered 409 and 1 returned, else 0.
 */
int idem_conflict(struct http_ctx *c, enum db_status st, const PGresult *res);

#endif
