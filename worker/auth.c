/*
 * auth: JWT in the Authorization header.  See auth.h.
 */
#include "config.h"

#include "worker/auth.h"

#include <string.h>
#include <strings.h>
#include <time.h>

#include "common/settings.h"
#include "worker/env.h"
#include "worker/http.h"

const char *
auth_token_of(const char *h)
{
    if (strncasecmp(h, "Token ", 6) == 0)
        h += 6;
    else if (strncasecmp(h, "Bearer ", 7) == 0)
        h += 7;
    else
        return NULL;
    while (*h == ' ')
        h++;
    return h;
}

/* The token checked with the instance's secret, now; *sub the user it names. */
static enum jwt_status
verify(const struct http_ctx *c, const char *tok, int64_t *sub)
{
    const struct config *cfg = c->env->cfg;

    return jwt_verify((const unsigned char *)cfg->jwt_secret, strlen(cfg->jwt_secret), tok,
                      strlen(tok), (int64_t)time(NULL), sub);
}

int
auth_caller(struct http_ctx *c, enum auth_need need, int64_t *user)
{
    const char *h = http_header(c, "Authorization");
    const char *tok;
    int64_t sub = 0;
    enum jwt_status st;

    *user = 0;
    if (!h) {
        if (need == AUTH_OPTIONAL)
            return 0;
        http_error(c, 401, "authorization required: send Authorization: Token <jwt>");
        return -1;
    }
    tok = auth_token_of(h);
    if (!tok) {
        http_error(c, 401, "authorization must be \"Token <jwt>\" or \"Bearer <jwt>\"");
        return -1;
    }
    st = verify(c, tok, &sub);
    if (st != JWT_OK || sub <= 0) {
        http_error(c, 401, st == JWT_EXPIRED ? "token expired" : "token invalid");
        return -1;
    }
    *user = sub;
    return 0;
}

int64_t
auth_caller_quiet(struct http_ctx *c)
{
    const char *h = http_header(c, "Authorization");
    const char *tok;
    int64_t sub = 0;

    if (!h)
        return 0;
    if (!(tok = auth_token_of(h)) || verify(c, tok, &sub) != JWT_OK || sub <= 0)
        return -1;
    return sub;
}

int
auth_token(struct http_ctx *c, int64_t user_id, char *out, size_t outlen)
{
    const struct config *cfg = c->env->cfg;
    int64_t now = (int64_t)time(NULL);

    return jwt_sign((const unsigned char *)cfg->jwt_secret, strlen(cfg->jwt_secret), user_id, now,
                    now + cfg->jwt_lifetime, out, outlen);
}
