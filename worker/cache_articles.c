/*
 * cache_articles: see cache_articles.h.
 *
 * An article's value: struct rec, then its parts as api.c writes them
 * (api_article_head(), the body's JSON string, api_article_tail(),
 * api_profile_head() of the author), so that an answer made here is the
 * very bytes the database path makes.
 */
#include "config.h"

#include "worker/cache_articles.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "worker/api.h"
#include "worker/cache.h"
#include "worker/db.h"
#include "worker/json_out.h"

#define NO_BODY UINT32_MAX
#define PAGE_MAX 100      /* the statements' cap */
#define COL_BODY 12       /* article_get's */
#define COL_COUNT 12      /* a list's articles_count */
#define COL_AUTHOR_NAME 8 /* the author's username */
#define COL_TAGS 3        /* the tags joined by 0x1f */
#define TOO_MANY "!"      /* v:<viewer> when the viewer's sets are not kept */

struct rec {
    int64_t id, author_id, favorites_count;
    uint32_t head, body, tail, author; /* the parts' lengths; body NO_BODY when not held */
};

static int
cmp_id(const void *a, const void *b)
{
    int64_t x, y;

    memcpy(&x, a, sizeof(x));
    memcpy(&y, b, sizeof(y));
    return (x > y) - (x < y);
}

int
cache_ids_parse(const char *s, int64_t *ids, size_t max)
{
    size_t n = 0;

    while (*s) {
        char *end;
        if (n == max)
            return -1;
        ids[n++] = strtoll(s, &end, 10);
        if (end == s || (*end != ',' && *end != '\0'))
            return -1; /* not what the query promises: keep nothing */
        s = *end == ',' ? end + 1 : end;
    }
    qsort(ids, n, sizeof(ids[0]), cmp_id);
    return (int)n;
}

int
cache_ids_has(const int64_t *ids, size_t n, int64_t id)
{
    return ids && bsearch(&id, ids, n, sizeof(int64_t), cmp_id) != NULL;
}

static uint64_t
hash2(const char *prefix, const char *s)
{
    char key[CACHE_KEY_MAX];

    return cache_key_name(key, prefix, s) == 0 ? cache_key_hash(key) : 0;
}

static uint64_t
hash_id(const char *prefix, int64_t id)
{
    char key[CACHE_KEY_MAX];

    cache_key_id(key, prefix, id);
    return cache_key_hash(key);
}

/* ---------------------------------------------------------------- viewer */

int
cache_viewer_get(struct cache *k, int64_t viewer, struct cache_viewer *out)
{
    char key[CACHE_KEY_MAX];
    const void *fav, *fol;
    size_t favlen, follen;

    cache_key_id(key, "v:", viewer);
    if (!(fav = cache_get(k, key, &favlen)))
        return 0;
    if (favlen % sizeof(int64_t) != 0)
        return -1; /* TOO_MANY */
    cache_key_id(key, "f:", viewer);
    if (!(fol = cache_get(k, key, &follen)))
        return 0;
    out->favorites = fav;
    out->nfavorites = favlen / sizeof(int64_t);
    out->follows = fol;
    out->nfollows = follen / sizeof(int64_t);
    return 1;
}

int
cache_viewer_now(struct cache *k, int64_t viewer, struct cache_viewer *out)
{
    if (!k || !viewer || !cache_enabled(k))
        return 0;
    cache_release(k);
    return cache_viewer_get(k, viewer, out) == 1;
}

void
cache_viewer_flags(const struct cache_viewer *v, int64_t article, int64_t author, int flags[2])
{
    flags[0] = v && cache_ids_has(v->favorites, v->nfavorites, article);
    flags[1] = v && cache_ids_has(v->follows, v->nfollows, author);
}

void
cache_fill_viewer(struct cache *k, int64_t viewer, const PGresult *res, uint64_t epoch)
{
    int64_t *fol = malloc(CACHE_SET_MAX * sizeof(int64_t));
    int64_t *fav = malloc(CACHE_SET_MAX * sizeof(int64_t));
    const char *sfol = db_text(res, 0, 0, NULL), *sfav = db_text(res, 0, 1, NULL);
    char key[CACHE_KEY_MAX];
    int nfol = -1, nfav = -1;

    if (fol && fav && sfol && sfav) {
        nfol = cache_ids_parse(sfol, fol, CACHE_SET_MAX);
        nfav = cache_ids_parse(sfav, fav, CACHE_SET_MAX);
    }
    cache_key_id(key, "v:", viewer);
    if (nfol < 0 || nfav < 0) {
        if (fol && fav) /* not for want of memory: the viewer has too many */
            cache_put_now(k, key, TOO_MANY, 1, epoch);
    } else {
        /* Empty sets are values too: a viewer who follows nobody. */
        cache_put_now(k, key, fav, (size_t)nfav * sizeof(int64_t), epoch);
        cache_key_id(key, "f:", viewer);
        cache_put_now(k, key, fol, (size_t)nfol * sizeof(int64_t), epoch);
    }
    free(fol);
    free(fav);
}

/* ---------------------------------------------------------------- articles */

/* A well-formed article value's header, or -1. */
static int
rec_read(const void *val, size_t len, struct rec *r)
{
    size_t need;

    if (len < sizeof(*r))
        return -1;
    memcpy(r, val, sizeof(*r));
    need = sizeof(*r) + (size_t)r->head + r->tail + r->author + (r->body == NO_BODY ? 0 : r->body);
    return need == len ? 0 : -1;
}

/* The article object, as api_article_object() writes it. */
static void
rec_render(struct evbuffer *b, const void *val, const struct rec *r, int with_body,
           const struct cache_viewer *v)
{
    const char *p = (const char *)val + sizeof(*r);
    int flags[2];

    evbuffer_add(b, p, r->head);
    p += r->head;
    if (with_body) {
        evbuffer_add(b, ",\"body\":", 8);
        evbuffer_add(b, p, r->body);
    }
    if (r->body != NO_BODY)
        p += r->body;
    evbuffer_add(b, p, r->tail);
    p += r->tail;
    cache_viewer_flags(v, r->id, r->author_id, flags);
    api_article_flags(b, flags[0], r->favorites_count);
    evbuffer_add(b, p, r->author);
    json_out_bool(b, flags[1]);
    evbuffer_add(b, "}}", 2);
}

/*
 * a:<slug> from row i (id and author id in columns idcol, idcol + 1),
 * with its body when body is set.  A list row has no body: an article
 * already held with one keeps it (a fresh entry is the same article).
 */
static void
rec_fill(struct cache *k, const PGresult *res, int i, int idcol, int body, uint64_t epoch)
{
    struct evbuffer *tmp;
    struct rec r;
    char key[CACHE_KEY_MAX];
    uint64_t dep;
    const void *old;
    size_t oldlen, n;

    if (cache_key_name(key, "a:", db_text(res, i, 0, NULL)) < 0)
        return;
    if (!body && (old = cache_peek(k, key, &oldlen)) && rec_read(old, oldlen, &r) == 0 &&
        r.body != NO_BODY)
        return;
    if (!(tmp = evbuffer_new()))
        return;
    r.id = db_int8(res, i, idcol);
    r.author_id = db_int8(res, i, idcol + 1);
    r.favorites_count = db_int8(res, i, 7);
    evbuffer_add(tmp, &r, sizeof(r));
    api_article_head(tmp, res, i);
    r.head = (uint32_t)(evbuffer_get_length(tmp) - sizeof(r));
    n = evbuffer_get_length(tmp);
    if (body)
        api_text_or_null(tmp, res, i, COL_BODY);
    r.body = body ? (uint32_t)(evbuffer_get_length(tmp) - n) : NO_BODY;
    n = evbuffer_get_length(tmp);
    api_article_tail(tmp, res, i);
    r.tail = (uint32_t)(evbuffer_get_length(tmp) - n);
    n = evbuffer_get_length(tmp);
    api_profile_head(tmp, res, i, 8);
    r.author = (uint32_t)(evbuffer_get_length(tmp) - n);
    n = evbuffer_get_length(tmp);
    dep = hash_id("u:", r.author_id);
    {
        unsigned char *val = evbuffer_pullup(tmp, -1);
        if (val) {
            memcpy(val, &r, sizeof(r));
            cache_put_deps(k, key, val, n, epoch, &dep, 1);
        }
    }
    evbuffer_free(tmp);
}

int
cache_article_render(struct cache *k, const char *slug, const struct cache_viewer *v,
                     struct evbuffer *b, struct cache_stale *stale)
{
    char key[CACHE_KEY_MAX];
    const void *val;
    size_t len;
    struct rec r;

    if (cache_key_name(key, "a:", slug) < 0 || !(val = cache_get_stale(k, key, &len, stale)) ||
        rec_read(val, len, &r) < 0 || r.body == NO_BODY)
        return 0;
    evbuffer_add(b, "{\"article\":", 11);
    rec_render(b, val, &r, 1, v);
    evbuffer_add(b, "}", 1);
    return 1;
}

void
cache_article_fill(struct cache *k, const PGresult *res, uint64_t epoch)
{
    int idcol = PQfnumber(res, "article_id");

    if (PQntuples(res) == 1 && idcol >= 0 && !db_null(res, 0, idcol))
        rec_fill(k, res, 0, idcol, 1, epoch);
}

/* ---------------------------------------------------------------- pages */

static const char page_kind[] = "LTAFD";

int
cache_page_key(enum cache_list kind, const char *filter, int64_t viewer, const char *limit,
               const char *offset, char *key)
{
    int n;

    if (kind == CACHE_LIST_FEED)
        n = snprintf(key, CACHE_KEY_MAX, "D|%s|%s|%lld", limit, offset, (long long)viewer);
    else if (kind == CACHE_LIST_ALL)
        n = snprintf(key, CACHE_KEY_MAX, "L|%s|%s", limit, offset);
    else
        n = snprintf(key, CACHE_KEY_MAX, "%c|%s|%s|%s", page_kind[kind], limit, offset, filter);
    return n > 0 && n < CACHE_KEY_MAX ? 0 : -1;
}

/* A page's value: count, n, then n times a length byte and a slug. */
struct page_hdr {
    int64_t count;
    uint32_t n;
};

int
cache_page_render(struct cache *k, const char *key, const struct cache_viewer *v,
                  struct evbuffer *b, int64_t *count, struct cache_stale *stale)
{
    const unsigned char *page, *p, *end;
    const void *vals[PAGE_MAX];
    struct rec recs[PAGE_MAX];
    struct page_hdr h;
    size_t len;

    if (!(page = cache_get_stale(k, key, &len, stale)) || len < sizeof(h))
        return 0;
    memcpy(&h, page, sizeof(h));
    if (h.n > PAGE_MAX)
        return 0;
    p = page + sizeof(h);
    end = page + len;
    for (uint32_t i = 0; i < h.n; i++) {
        char akey[CACHE_KEY_MAX];
        size_t vlen;
        if (p >= end || (size_t)(end - p) < 1u + *p || *p + 3u > CACHE_KEY_MAX)
            return 0;
        memcpy(akey, "a:", 2);
        memcpy(akey + 2, p + 1, *p);
        akey[2 + *p] = '\0';
        p += 1 + *p;
        /* Copies, all of them valid until cache_release() (cache.h). */
        if (!(vals[i] = cache_get_stale(k, akey, &vlen, stale)) ||
            rec_read(vals[i], vlen, &recs[i]) < 0)
            return 0;
    }
    for (uint32_t i = 0; i < h.n; i++) {
        if (i)
            evbuffer_add(b, ",", 1);
        rec_render(b, vals[i], &recs[i], 0, v);
    }
    *count = h.count;
    return 1;
}

/* The keys a page depends on besides its own; their number, or -1 when it cannot be kept. */
static int
page_deps(struct cache *k, enum cache_list kind, const char *filter, int64_t viewer, uint64_t *deps,
          size_t max)
{
    char key[CACHE_KEY_MAX];
    const void *fol;
    int64_t id;
    size_t n = 0, len;

    deps[n++] = cache_key_hash("ld");
    switch (kind) {
    case CACHE_LIST_ALL:
        deps[n++] = cache_key_hash("lg");
        break;
    case CACHE_LIST_TAG:
        deps[n++] = cache_key_hash("lt");
        if (!(deps[n++] = hash2("lt:", filter)))
            return -1;
        break;
    case CACHE_LIST_AUTHOR:
    case CACHE_LIST_FAVORITED:
        if (!(deps[n++] = hash2(kind == CACHE_LIST_AUTHOR ? "la:" : "lf:", filter)) ||
            !(deps[n++] = hash2("p:", filter)))
            return -1;
        break;
    case CACHE_LIST_FEED:
        /* The followees the feed was read for: held, or the page is not kept. */
        cache_key_id(key, "f:", viewer);
        deps[n++] = cache_key_hash(key);
        if (!(fol = cache_peek(k, key, &len)) || len / sizeof(int64_t) + n > max)
            return -1;
        for (size_t i = 0; i < len / sizeof(int64_t); i++) {
            memcpy(&id, (const char *)fol + i * sizeof(id), sizeof(id));
            deps[n++] = hash_id("aa:", id);
        }
        break;
    }
    return (int)n;
}

void
cache_page_fill(struct cache *k, const char *key, enum cache_list kind, const char *filter,
                int64_t viewer, const PGresult *res, uint64_t epoch)
{
    int rows = PQntuples(res), idcol = PQfnumber(res, "article_id");
    uint64_t deps[CACHE_SET_MAX + 8];
    struct evbuffer *tmp;
    struct page_hdr h = {0, 0};
    int ndeps;

    if (rows == 0 || rows > PAGE_MAX || idcol < 0 ||
        (ndeps = page_deps(k, kind, filter, viewer, deps, sizeof(deps) / sizeof(deps[0]))) < 0 ||
        !(tmp = evbuffer_new()))
        return;
    h.count = db_int8(res, 0, COL_COUNT);
    evbuffer_add(tmp, &h, sizeof(h));
    for (int i = 0; i < rows; i++) {
        size_t len;
        const char *slug;
        unsigned char n;
        if (db_null(res, i, 0))
            continue; /* the empty page's count-only row */
        slug = db_text(res, i, 0, &len);
        if (len + 3 > CACHE_KEY_MAX || len > 255)
            goto out;
        n = (unsigned char)len;
        evbuffer_add(tmp, &n, 1);
        evbuffer_add(tmp, slug, len);
        h.n++;
        rec_fill(k, res, i, idcol, 0, epoch);
    }
    {
        unsigned char *val = evbuffer_pullup(tmp, -1);
        if (val) {
            memcpy(val, &h, sizeof(h));
            cache_put_deps(k, key, val, evbuffer_get_length(tmp), epoch, deps, (size_t)ndeps);
        }
    }
out:
    evbuffer_free(tmp);
}

/* ---------------------------------------------------------------- writes */

static void
drop2(struct cache *k, const char *prefix, const char *s, const char *coarse)
{
    char key[CACHE_KEY_MAX];

    if (cache_key_name(key, prefix, s) == 0)
        cache_drop(k, key);
    else
        cache_drop(k, coarse); /* a name too long for a key: every list of its kind */
}

static void
drop_id(struct cache *k, const char *prefix, int64_t id)
{
    char key[CACHE_KEY_MAX];

    cache_key_id(key, prefix, id);
    cache_drop(k, key);
}

void
cache_wrote_favorite(struct cache *k, const PGresult *res, int64_t viewer)
{
    int col = PQfnumber(res, "viewer_name");

    drop2(k, "a:", db_text(res, 0, 0, NULL), "ld");
    drop_id(k, "v:", viewer);
    if (col >= 0 && !db_null(res, 0, col))
        drop2(k, "lf:", db_text(res, 0, col, NULL), "ld");
    else
        cache_drop(k, "ld");
}

void
cache_wrote_article(struct cache *k, const PGresult *res, int64_t author, const char *old_slug,
                    int tags_changed)
{
    const char *slug = db_text(res, 0, 0, NULL);

    drop2(k, "a:", slug, "ld");
    if (old_slug) {
        if (strcmp(old_slug, slug) != 0)
            drop2(k, "a:", old_slug, "ld");
        if (tags_changed)
            cache_drop(k, "lt");
        return;
    }
    /* A new article: the lists it enters. */
    cache_drop(k, "lg");
    drop_id(k, "aa:", author);
    drop2(k, "la:", db_text(res, 0, COL_AUTHOR_NAME, NULL), "ld");
    {
        size_t len;
        const char *s = db_text(res, 0, COL_TAGS, &len);
        char tag[CACHE_KEY_MAX];
        size_t start = 0;
        for (size_t i = 0; s && i <= len; i++) {
            if (i < len && s[i] != '\x1f')
                continue;
            if (i > start && i - start < sizeof(tag)) {
                memcpy(tag, s + start, i - start);
                tag[i - start] = '\0';
                drop2(k, "lt:", tag, "lt");
            } else if (i > start) {
                cache_drop(k, "lt");
            }
            start = i + 1;
        }
    }
}

void
cache_wrote_delete(struct cache *k, const char *slug)
{
    drop2(k, "a:", slug, "ld");
    cache_drop(k, "ld");
}
