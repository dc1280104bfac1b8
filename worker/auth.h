/*
 * auth: the caller behind "Authorization: Token <jwt>" (or "Bearer <jwt>"),
 * and fresh tokens for users who log in, register or update themselves.
 * Tokens are verified in memory (jwt.c): no database round trip.
 */
#ifndef CONDUITD_AUTH_H
#define CONDUITD_AUTH_H

#include <stddef.h>
#include <stdint.h>

#include "common/jwt.h"

struct http_ctx;

/*
 * What a route makes of the caller's token: the route table's column
 * (worker/routes.c), checked once by api_gate() before the handler runs.
 * AUTH_UNSET (0) is a route whose line forgot to say: refused by the
 * route table's unit test, and treated as AUTH_REQUIRED should one slip
 * through.
 */
enum auth_need {
    AUTH_UNSET,    /* not said: a build mistake */
    AUTH_NONE,     /* never looks at a token (/healthz, login, registration) */
    AUTH_OPTIONAL, /* anonymous or authenticated; a bad token is still 401 */
    AUTH_REQUIRED  /* 401 without a valid token */
};

/* The token in an Authorization value ("Token x", "Bearer x"), or NULL. */
const char *auth_token_of(const char *header);

/*
 * The caller behind the Authorization header, into *user (0: anonymous).
 * Returns 0 when the request may go on (authenticated, or anonymous where
 * that is allowed), -1 when it has been answered with 401: missing where
 * required, or bad anywhere (a bad token is never silently anonymous).
 */
int auth_caller(struct http_ctx *c, enum auth_need need, int64_t *user);

/*
 * For a route that reads no token (AUTH_NONE) but must still know its
 * caller quietly (worker/api.h, api_cache_stale(): the writer is never
 * answered stale): the user a valid token names, 0 without an
 * Authorization header, -1 when one is there but names nobody valid (a
 * caller who cannot be told from a writer).  Answers nothing.
 */
int64_t auth_caller_quiet(struct http_ctx *c);

/* A token for user id into out (JWT_MAX_LEN + 1 bytes): its length, or -1. */
int auth_token(struct http_ctx *c, int64_t user_id, char *out, size_t outlen);

#endif
