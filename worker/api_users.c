/*
 * api_users: registration, login, and the current user (get and update).
 *
 * Registration and login need bcrypt, which runs on the worker's hashing
 * threads; the request waits for the hash, then for the query, and keeps
 * its parsed body in c->state meanwhile.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "worker/json_out.h"
#include "common/log.h"
#include "common/password.h"
#include "worker/api.h"
#include "worker/auth.h"
#include "worker/bcrypt_pool.h"
#include "worker/cache.h"
#include "worker/env.h"
#include "worker/http.h"
#include "worker/idem.h"
#include "worker/reqbody.h"

#define USERNAME_MAX 64
#define EMAIL_MAX 254

/* What a users request carries between its asynchronous steps. */
struct user_req {
    cJSON *doc; /* the parsed body; the strings below point into it */
    const char *username, *email, *password, *bio, *image;
    int has_bio, has_image;
    char hash[PASSWORD_HASH_LEN];
    /* login: the user row, kept past its PGresult while the hash is checked */
    int found;
    int64_t id;
    char *row[4];     /* username, email, bio, image; NULL for SQL NULL */
    struct idem idem; /* registration: its Idempotency-Key */
};

static void
user_req_free(void *p)
{
    struct user_req *u = p;

    cJSON_Delete(u->doc);
    for (int i = 0; i < 4; i++)
        free(u->row[i]);
    explicit_bzero(u->hash, sizeof(u->hash));
    free(u);
}

static void
cstr_or_null(struct evbuffer *b, const char *s)
{
    if (s)
        json_out_cstr(b, s);
    else
        evbuffer_add(b, "null", 4);
}

/*
 * {"user":{"email","token","username","bio","image"}}; f holds username,
 * email, bio, image.  A fresh token is signed when token is NULL.
 */
static void
reply_user_fields(struct http_ctx *c, int status, int64_t id, const char *const f[4],
                  const char *token)
{
    struct evbuffer *b = c->env->scratch;
    char fresh[JWT_MAX_LEN + 1];

    if (!token) {
        if (auth_token(c, id, fresh, sizeof(fresh)) < 0) {
            http_error(c, 500, "cannot sign a token");
            return;
        }
        token = fresh;
    }
    evbuffer_add(b, "{\"user\":{\"email\":", 17);
    cstr_or_null(b, f[1]);
    evbuffer_add(b, ",\"token\":", 9);
    json_out_cstr(b, token);
    evbuffer_add(b, ",\"username\":", 12);
    cstr_or_null(b, f[0]);
    evbuffer_add(b, ",\"bio\":", 7);
    cstr_or_null(b, f[2]);
    evbuffer_add(b, ",\"image\":", 9);
    cstr_or_null(b, f[3]);
    evbuffer_add(b, "}}", 2);
    http_reply(c, status, b);
}

/* The same from a user row: 0 id, 1 username, 2 email, 3 bio, 4 image. */
static void
reply_user(struct http_ctx *c, int status, const PGresult *r, const char *token)
{
    const char *f[4];

    for (int i = 0; i < 4; i++)
        f[i] = db_text(r, 0, i + 1, NULL);
    reply_user_fields(c, status, db_int8(r, 0, 0), f, token);
}

/* 23505 on users: which field is taken.  1 when answered. */
static int
reply_taken(struct http_ctx *c, enum db_status st, const PGresult *res)
{
    const char *constraint;

    if (st != DB_SQL_ERROR || strcmp(db_sqlstate(res), "23505") != 0)
        return 0;
    constraint = PQresultErrorField(res, PG_DIAG_CONSTRAINT_NAME);
    if (constraint && strcmp(constraint, "users_email_key") == 0)
        http_error(c, 409, "email has already been taken");
    else
        http_error(c, 409, "username has already been taken");
    return 1;
}

static int
check_lengths(struct http_ctx *c, const struct user_req *u)
{
    if (u->username && strlen(u->username) > USERNAME_MAX) {
        http_error(c, 422, "username is too long (at most 64 bytes)");
        return -1;
    }
    if (u->email && (strlen(u->email) > EMAIL_MAX || !strchr(u->email, '@'))) {
        http_error(c, 422, "email is invalid");
        return -1;
    }
    if (u->password && strlen(u->password) > PASSWORD_MAX) {
        http_error(c, 422, "password is too long (at most 72 bytes)");
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- register */

/*
 * Keeps the user row (id, then username, email, bio, image) past its
 * PGresult, which is cleared when the callback returns, while a hash is
 * checked.  -1 after answering 503.
 */
static int
keep_user_row(struct http_ctx *c, struct user_req *u, const PGresult *res)
{
    u->found = 1;
    u->id = db_int8(res, 0, 0);
    for (int i = 0; i < 4; i++) {
        const char *v = db_text(res, 0, i + 1, NULL);
        if (v && !(u->row[i] = strdup(v))) {
            http_error(c, 503, "out of memory");
            return -1;
        }
    }
    return 0;
}

static void
on_registered(void *arg, enum db_status st, const PGresult *res)
{
    struct http_ctx *c = arg;

    if (reply_taken(c, st, res) || idem_conflict(c, st, res) || api_db_failed(c, st, res))
        return;
    /* The new user's token reads next: from the primary until a standby has this row. */
    api_wrote(c, db_int8(res, 0, 0));
    reply_user(c, 201, res, NULL);
}

static void
on_register_hashed(void *arg, int ok, const char *hash)
{
    struct http_ctx *c = arg;
    struct user_req *u = c->state;
    const char *params[5];

    if (api_hash_shed(c, ok))
        return;
    if (!ok) {
        http_error(c, 500, "cannot hash the password");
        return;
    }
    if (http_gone(c)) {
        http_error(c, 499, "client gone"); /* only frees: nobody to answer */
        return;
    }
    snprintf(u->hash, sizeof(u->hash), "%s", hash);
    params[0] = u->username;
    params[1] = u->email;
    params[2] = u->hash;
    params[3] = idem_key(&u->idem);
    params[4] = u->idem.fingerprint;
    api_query(c, SQL_USER_INSERT, params, on_registered);
}

static void
register_user(struct http_ctx *c)
{
    struct user_req *u = c->state;

    bcrypt_hash(c->env->bcrypt, u->password, on_register_hashed, c, api_still_wanted);
}

static void
on_replay_checked(void *arg, int ok, const char *hash)
{
    struct http_ctx *c = arg;
    struct user_req *u = c->state;

    (void)hash;
    if (api_hash_shed(c, ok))
        return;
    if (!ok) {
        idem_mismatch(c);
        return;
    }
    reply_user_fields(c, 201, u->id, (const char *const *)u->row, NULL);
}

/*
 * The user registered with this key (user_replay's row): answered again,
 * with a fresh token, only to a request that knows its password, as a
 * login would be.  The key's fingerprint leaves the password out.
 */
static void
on_register_replay(void *arg, enum db_status st, const PGresult *res)
{
    struct http_ctx *c = arg;
    struct user_req *u = c->state;

    (void)st;
    if (keep_user_row(c, u, res) < 0)
        return;
    bcrypt_verify(c->env->bcrypt, u->password, db_text(res, 0, 5, NULL), on_replay_checked, c,
                  api_still_wanted);
}

void
api_users_register(struct http_ctx *c)
{
    struct user_req *u = api_state_new(c, sizeof(*u), user_req_free);
    const cJSON *o;
    const int need = REQBODY_REQUIRED | REQBODY_NONEMPTY;

    if (!u || !(o = reqbody_object(c, "user", &u->doc)))
        return;
    if (reqbody_string(c, o, "username", need, &u->username, NULL) < 0 ||
        reqbody_string(c, o, "email", need, &u->email, NULL) < 0 ||
        reqbody_string(c, o, "password", need, &u->password, NULL) < 0 || check_lengths(c, u) < 0)
        return;
    if (idem_read(c, &u->idem, (const char *const[]){u->username, u->email}, 2) < 0)
        return;
    idem_begin(c, &u->idem, 0, SQL_USER_REPLAY, register_user, on_register_replay);
}

/* ---------------------------------------------------------------- login */

static void
on_login_checked(void *arg, int ok, const char *hash)
{
    struct http_ctx *c = arg;
    struct user_req *u = c->state;

    (void)hash;
    if (api_hash_shed(c, ok))
        return;
    if (!ok || !u->found) {
        http_error(c, 401, "email or password is invalid");
        return;
    }
    reply_user_fields(c, 200, u->id, (const char *const *)u->row, NULL);
}

/*
 * A well-formed hash that matches no password: checking against it when
 * the email is unknown costs as much as a real check, so the answer's
 * timing does not tell which emails exist.
 */
static const char no_user_hash[] = "$2b$10$abcdefghijklmnopqrstuuOaVXpXdnIAwbKYrh/ImTaY/rMx2HQTe";

static void
on_login_row(void *arg, enum db_status st, const PGresult *res)
{
    struct http_ctx *c = arg;
    struct user_req *u = c->state;

    /* A lookup (on the primary, not marked read-only): nothing to lose by asking again. */
    if (st == DB_UNKNOWN)
        st = DB_UNAVAILABLE;
    if (api_db_failed(c, st, res))
        return;
    if (PQntuples(res) == 0) {
        bcrypt_verify(c->env->bcrypt, u->password, no_user_hash, on_login_checked, c,
                      api_still_wanted);
        return;
    }
    if (keep_user_row(c, u, res) < 0)
        return;
    bcrypt_verify(c->env->bcrypt, u->password, db_text(res, 0, 5, NULL), on_login_checked, c,
                  api_still_wanted);
}

void
api_users_login(struct http_ctx *c)
{
    struct user_req *u = api_state_new(c, sizeof(*u), user_req_free);
    const cJSON *o;
    const int need = REQBODY_REQUIRED | REQBODY_NONEMPTY;
    const char *params[1];

    if (!u || !(o = reqbody_object(c, "user", &u->doc)))
        return;
    if (reqbody_string(c, o, "email", need, &u->email, NULL) < 0 ||
        reqbody_string(c, o, "password", need, &u->password, NULL) < 0)
        return;
    if (strlen(u->password) > PASSWORD_MAX) {
        http_error(c, 401, "email or password is invalid");
        return;
    }
    /*
     * No room to check the password: refused before its query, which a
     * storm of logins would otherwise take from every other request.
     */
    if (bcrypt_full(c->env->bcrypt)) {
        http_unavailable_spread(c, "server busy, try again shortly", API_HASH_RETRY_MAX_S);
        return;
    }
    params[0] = u->email;
    api_query(c, SQL_USER_BY_EMAIL, params, on_login_row);
}

/* ---------------------------------------------------------------- current user */

/* The caller's own token, echoed back by GET /api/user. */
static const char *
caller_token(struct http_ctx *c)
{
    const char *h = http_header(c, "Authorization");
    const char *sp = h ? strchr(h, ' ') : NULL;

    while (sp && *sp == ' ')
        sp++;
    return sp;
}

/* The cache keeps a user as u:<id>: username, email, bio, image. */
static void
on_user(void *arg, enum db_status st, const PGresult *res)
{
    struct http_ctx *c = arg;
    struct cache *k = c->env->cache;

    if (api_db_failed(c, st, res))
        return;
    if (PQntuples(res) == 0) {
        /* A valid token for a user that no longer exists. */
        api_no_caller(c);
        return;
    }
    if (k) {
        const char *f[4];
        char key[CACHE_KEY_MAX];
        size_t len;
        void *val;
        for (int i = 0; i < 4; i++)
            f[i] = db_text(res, 0, i + 1, NULL);
        cache_key_id(key, "u:", api_req(c)->user_id);
        if ((val = cache_pack(f, 4, &len)) != NULL) {
            cache_put(k, key, val, len, api_req(c)->cache_epoch);
            free(val);
        }
    }
    reply_user(c, 200, res, caller_token(c));
}

void
api_user_get(struct http_ctx *c)
{
    struct cache *k = c->env->cache;
    char id[24], key[32];
    const char *params[1], *f[4];
    const void *val;
    size_t len;

    if (k) {
        cache_release(k); /* the copies earlier callbacks took (cache.h) */
        cache_key_id(key, "u:", api_req(c)->user_id);
        if ((val = cache_get(k, key, &len)) && cache_unpack(val, len, f, 4) == 0) {
            reply_user_fields(c, 200, api_req(c)->user_id, f, caller_token(c));
            return;
        }
        api_cache_fill(c, k);
    }
    params[0] = api_itoa(api_req(c)->user_id, id);
    api_query(c, SQL_USER_BY_ID, params, on_user);
}

/*
 * After the caller changed themselves: their u: entry, and the profile
 * under the old name and the new one (pages by author or favoriter
 * depend on it), for every worker of the instance at once; the other
 * instances hear it from PostgreSQL.
 */
static void
drop_cached_self(struct http_ctx *c, const PGresult *res)
{
    struct cache *k = c->env->cache;
    char key[CACHE_KEY_MAX];

    if (!k)
        return;
    cache_key_id(key, "u:", api_req(c)->user_id);
    cache_drop(k, key);
    for (int col = 1; col <= 5; col += 4) {
        const char *name = db_text(res, 0, col, NULL);
        if (name && cache_key_name(key, "p:", name) == 0)
            cache_drop(k, key);
    }
}

static void
on_updated(void *arg, enum db_status st, const PGresult *res)
{
    struct http_ctx *c = arg;

    if (reply_taken(c, st, res) || api_db_failed(c, st, res))
        return;
    if (PQntuples(res) == 0) {
        api_no_caller(c);
        return;
    }
    drop_cached_self(c, res); /* 1 username, 5 old_username */
    reply_user(c, 200, res, NULL);
}

static void
send_update(struct http_ctx *c)
{
    struct user_req *u = c->state;
    char id[24];
    const char *params[6];

    params[0] = api_itoa(api_req(c)->user_id, id);
    params[1] = u->email;
    params[2] = u->username;
    params[3] = u->hash[0] ? u->hash : NULL;
    /* For bio and image, NULL leaves them alone and '' clears them. */
    params[4] = u->has_bio ? (u->bio ? u->bio : "") : NULL;
    params[5] = u->has_image ? (u->image ? u->image : "") : NULL;
    api_query(c, SQL_USER_UPDATE, params, on_updated);
}

static void
on_update_hashed(void *arg, int ok, const char *hash)
{
    struct http_ctx *c = arg;
    struct user_req *u = c->state;

    if (api_hash_shed(c, ok))
        return;
    if (!ok) {
        http_error(c, 500, "cannot hash the password");
        return;
    }
    if (http_gone(c)) {
        http_error(c, 499, "client gone");
        return;
    }
    snprintf(u->hash, sizeof(u->hash), "%s", hash);
    send_update(c);
}

void
api_user_update(struct http_ctx *c)
{
    struct user_req *u;
    const cJSON *o;
    const int given = REQBODY_NONEMPTY;
    int has_email, has_username, has_password;

    if (!(u = api_state_new(c, sizeof(*u), user_req_free)) ||
        !(o = reqbody_object(c, "user", &u->doc)))
        return;
    if (reqbody_string(c, o, "email", given, &u->email, &has_email) < 0 ||
        reqbody_string(c, o, "username", given, &u->username, &has_username) < 0 ||
        reqbody_string(c, o, "password", given, &u->password, &has_password) < 0 ||
        reqbody_string(c, o, "bio", REQBODY_NULLABLE, &u->bio, &u->has_bio) < 0 ||
        reqbody_string(c, o, "image", REQBODY_NULLABLE, &u->image, &u->has_image) < 0 ||
        check_lengths(c, u) < 0)
        return;
    if (!has_email && !has_username && !has_password && !u->has_bio && !u->has_image) {
        http_error(c, 422, "user must have at least one of email, username, password, bio, image");
        return;
    }
    if (u->password)
        bcrypt_hash(c->env->bcrypt, u->password, on_update_hashed, c, api_still_wanted);
    else
        send_update(c);
}
