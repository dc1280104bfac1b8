/*
 * req: see req.h.
 */
#include "config.h"

#include "bench/req.h"

#include <stdio.h>
#include <string.h>

void
req_pick_page(struct req_pick *pk, const struct dataset *ds, uint64_t *rng)
{
    pk->article = 1 + (int64_t)(req_rand(rng) % (uint64_t)ds->articles);
    pk->user = 1 + (int64_t)(req_rand(rng) % (uint64_t)ds->users);
    if (pk->user == pk->me && ds->users > 1)
        pk->user = pk->user % ds->users + 1;
    pk->tag = 1 + (int64_t)(req_rand(rng) % (uint64_t)ds->tags);
    pk->offset = 10 * (1 + (int)(req_rand(rng) % 20));
}

#define WANT(var) (mask & (1u << (var)))

int
req_values(struct req_vals *out, const struct req_pick *pk, const struct dataset *ds, uint32_t mask)
{
    struct prof_values *v = &out->v;

    memset(v, 0, sizeof(*v));
    if (WANT(PV_SLUG) && dataset_slug(ds, pk->article, out->slug, sizeof(out->slug)))
        v->v[PV_SLUG] = out->slug;
    if (WANT(PV_ARTICLE)) {
        snprintf(out->article, sizeof(out->article), "%lld", (long long)pk->article);
        v->v[PV_ARTICLE] = out->article;
    }
    if (WANT(PV_USER) && dataset_username(ds, pk->user, out->user, sizeof(out->user)))
        v->v[PV_USER] = out->user;
    if (WANT(PV_USER_ID)) {
        snprintf(out->user_id, sizeof(out->user_id), "%lld", (long long)pk->user);
        v->v[PV_USER_ID] = out->user_id;
    }
    if (WANT(PV_TAG) && dataset_tag(ds, pk->tag, out->tag, sizeof(out->tag)))
        v->v[PV_TAG] = out->tag;
    if (WANT(PV_OFFSET)) {
        snprintf(out->offset, sizeof(out->offset), "%d", pk->offset);
        v->v[PV_OFFSET] = out->offset;
    }
    if (WANT(PV_ME) && dataset_username(ds, pk->me, out->me, sizeof(out->me)))
        v->v[PV_ME] = out->me;
    if (WANT(PV_EMAIL) && dataset_email(ds, pk->me, out->email, sizeof(out->email)))
        v->v[PV_EMAIL] = out->email;
    if (WANT(PV_VIEWER)) {
        snprintf(out->viewer, sizeof(out->viewer), "%lld", (long long)pk->me);
        v->v[PV_VIEWER] = out->viewer;
    }
    if (WANT(PV_N)) {
        snprintf(out->n, sizeof(out->n), "%llu", (unsigned long long)pk->n);
        v->v[PV_N] = out->n;
    }
    v->v[PV_MY_SLUG] = pk->my_slug;
    for (int i = 0; i < PV_COUNT; i++)
        if (WANT(i) && !v->v[i])
            return -1;
    return 0;
}

int
req_http(char *out, size_t cap, const struct prof_request *r, const struct req_vals *v,
         const char *host, const char *token)
{
    char body[8192];
    int blen = 0, len;
    size_t n;

    if (r->body.nseg && (blen = profile_expand(&r->body, &v->v, body, sizeof(body))) < 0)
        return -1;
    len = snprintf(out, cap, "%s ", r->method);
    if (len < 0 || (size_t)len >= cap)
        return -1;
    n = (size_t)len;
    if ((len = profile_expand(&r->path, &v->v, out + n, cap - n)) < 0)
        return -1;
    n += (size_t)len;
    len = snprintf(out + n, cap - n, " HTTP/1.1\r\nHost: %s\r\n%s%s%s", host,
                   token ? "Authorization: Token " : "", token ? token : "", token ? "\r\n" : "");
    if (len < 0 || (size_t)len >= cap - n)
        return -1;
    n += (size_t)len;
    if (r->body.nseg)
        len = snprintf(out + n, cap - n,
                       "Content-Type: application/json\r\nContent-Length: %d\r\n\r\n", blen);
    else
        len = snprintf(out + n, cap - n, "\r\n");
    if (len < 0 || (size_t)len + (size_t)blen >= cap - n)
        return -1;
    n += (size_t)len;
    memcpy(out + n, body, (size_t)blen);
    out[n + (size_t)blen] = '\0';
    return (int)(n + (size_t)blen);
}
