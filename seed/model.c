/*
 * model: see model.h.
 */
#include "config.h"

#include "seed/model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seed/text.h"

/* A uniform number in [0, 1) from 53 bits of a hash. */
static double
unit(uint64_t h)
{
    return (double)(h >> 11) * 0x1p-53;
}

/* The hash of (seed, stream, a, b): two levels, for per-row sequences. */
static uint64_t
hash2(const struct model *m, uint64_t stream, int64_t a, int64_t b)
{
    return dataset_hash(dataset_hash(m->d.seed, stream, (uint64_t)a), stream, (uint64_t)b);
}

/* A rank in [0, n), skewed milder than dataset_skewed_rank: floor(n u^1.5). */
static int64_t
mild_rank(uint64_t h, int64_t n)
{
    double u = unit(h);
    int64_t r = (int64_t)((double)n * (u * sqrt(u)));

    return r < n ? r : n - 1;
}

/*
 * Out-degrees in activity order: the user of activity rank q gets
 * round(total G((q+1)/users)) - round(total G(q/users)), so they sum to
 * total exactly.  G(x) = sqrt(x) (steep) or x^(3/4) (milder).  A degree
 * above cap is cut to cap and the excess given, one at a time, to the
 * users with room, most active first (feasible: total <= users * cap).
 */
static void
spread(const struct model *m, int64_t *deg, int64_t total, int64_t cap, int milder)
{
    int64_t users = m->d.users, prev = 0, excess = 0;

    for (int64_t q = 0; q < users; q++) {
        double x = (double)(q + 1) / (double)users;
        double g = milder ? sqrt(x * sqrt(x)) : sqrt(x);
        int64_t c = q + 1 == users ? total : (int64_t)((double)total * g + 0.5);
        int64_t k = c - prev;

        prev = c;
        if (k > cap) {
            excess += k - cap;
            k = cap;
        }
        deg[1 + dataset_perm_apply(&m->user_act, q)] = k;
    }
    while (excess > 0)
        for (int64_t q = 0; q < users && excess > 0; q++) {
            int64_t *d = &deg[1 + dataset_perm_apply(&m->user_act, q)];
            if (*d < cap) {
                (*d)++;
                excess--;
            }
        }
}

/* How many tags article has: 1 (40 %), 2 (35 %) or 3 (25 %). */
static int64_t
tag_count(const struct model *m, int64_t article)
{
    unsigned pct = (unsigned)(dataset_hash(m->d.seed, MODEL_STREAM_TAGS, (uint64_t)article) % 100);

    return pct < 40 ? 1 : pct < 75 ? 2 : 3;
}

int
model_init(struct model *m, double scale, uint64_t seed, char *err, size_t errcap)
{
    int64_t users, articles;

    memset(m, 0, sizeof(*m));
    if (dataset_init(&m->d, scale, seed) < 0) {
        snprintf(err, errcap, "the scale must be a number in (0, 100], not %g", scale);
        return -1;
    }
    users = m->d.users;
    articles = m->d.articles;
    /* Exact counts need enough distinct pairs. */
    if (m->d.follows > users * (users - 1) || m->d.favorites > users * articles) {
        snprintf(err, errcap,
                 "the scale %g is too small: %lld users cannot make %lld distinct follows "
                 "and %lld favorites (use a scale of at least 0.0003)",
                 scale, (long long)users, (long long)m->d.follows, (long long)m->d.favorites);
        return -1;
    }
    dataset_perm_init(&m->user_pop, dataset_hash(seed, DATASET_STREAM_USER_POP, 0), users);
    dataset_perm_init(&m->article_pop, dataset_hash(seed, DATASET_STREAM_ARTICLE_POP, 0), articles);
    dataset_perm_init(&m->user_act, dataset_hash(seed, MODEL_STREAM_USER_ACT, 0), users);

    m->user_articles = calloc((size_t)users + 1, sizeof(int64_t));
    m->user_favorites = calloc((size_t)users + 1, sizeof(int64_t));
    m->user_follows = calloc((size_t)users + 1, sizeof(int64_t));
    m->user_followers = calloc((size_t)users + 1, sizeof(int64_t));
    m->article_favorites = calloc((size_t)articles + 1, sizeof(int64_t));
    m->article_comments = calloc((size_t)articles + 1, sizeof(int64_t));
    m->seen_article = calloc((size_t)articles + 1, 1);
    m->seen_user = calloc((size_t)users + 1, 1);
    if (!m->user_articles || !m->user_favorites || !m->user_follows || !m->user_followers ||
        !m->article_favorites || !m->article_comments || !m->seen_article || !m->seen_user) {
        snprintf(err, errcap, "out of memory for scale %g", scale);
        model_free(m);
        return -2;
    }
    for (int64_t j = 1; j <= articles; j++) {
        m->user_articles[model_article_author(m, j)]++;
        m->article_tags += tag_count(m, j);
    }
    spread(m, m->user_favorites, m->d.favorites, articles, 0);
    spread(m, m->user_follows, m->d.follows, users - 1, 1);
    for (int64_t k = 0; k < m->d.comments; k++) {
        uint64_t h = dataset_hash(seed, MODEL_STREAM_COMMENT_ARTICLE, (uint64_t)k);
        m->article_comments[1 + dataset_perm_apply(&m->article_pop,
                                                   dataset_skewed_rank(h, articles))]++;
    }
    return 0;
}

void
model_free(struct model *m)
{
    free(m->user_articles);
    free(m->user_favorites);
    free(m->user_follows);
    free(m->user_followers);
    free(m->article_favorites);
    free(m->article_comments);
    free(m->seen_article);
    free(m->seen_user);
    memset(m, 0, sizeof(*m));
}

/* The start of slot i of n slots over span, plus a jitter inside it. */
static int64_t
slot_time(int64_t start, int64_t span, int64_t i, int64_t n, uint64_t h)
{
    int64_t width = span / n;

    return start + width * i + (width > 1 ? (int64_t)(h % (uint64_t)width) : 0);
}

int64_t
model_user_time(const struct model *m, int64_t user)
{
    return slot_time(MODEL_T0, MODEL_SPAN / 2, user - 1, m->d.users,
                     dataset_hash(m->d.seed, MODEL_STREAM_USER_TIME, (uint64_t)user));
}

int64_t
model_article_time(const struct model *m, int64_t article)
{
    return slot_time(MODEL_T0, MODEL_SPAN, article - 1, m->d.articles,
                     dataset_hash(m->d.seed, MODEL_STREAM_ARTICLE_TIME, (uint64_t)article));
}

int64_t
model_article_updated(const struct model *m, int64_t article)
{
    int64_t t = model_article_time(m, article), end = MODEL_T0 + MODEL_SPAN;
    uint64_t h = hash2(m, MODEL_STREAM_ARTICLE_TIME, article, 1);

    /* One article in eight was edited, within 30 days. */
    if (h % 8)
        return t;
    t += (int64_t)((h >> 3) % (UINT64_C(30) * 86400 * 1000000));
    return t < end ? t : end;
}

int64_t
model_article_author(const struct model *m, int64_t article)
{
    uint64_t h = dataset_hash(m->d.seed, MODEL_STREAM_AUTHOR, (uint64_t)article);

    return 1 + dataset_perm_apply(&m->user_pop, dataset_skewed_rank(h, m->d.users));
}

static int
cmp_id(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

    return (x > y) - (x < y);
}

/*
 * k distinct ids from a popularity order over n: each draw a skewed rank,
 * a taken id (seen[id] set) replaced by the one of the next rank.  Sorted,
 * and seen[] left clear.
 */
static size_t
draw_distinct(uint64_t key, int64_t k, const struct dataset_perm *order, int64_t n, uint8_t *seen,
              int64_t *out)
{
    uint64_t s = key;

    for (int64_t i = 0; i < k; i++) {
        int64_t r, id;

        s += 0x9e3779b97f4a7c15ULL;
        r = dataset_skewed_rank(dataset_hash(s, 0, 0), n);
        while (seen[id = 1 + dataset_perm_apply(order, r)])
            r = r + 1 < n ? r + 1 : 0;
        seen[id] = 1;
        out[i] = id;
    }
    for (int64_t i = 0; i < k; i++)
        seen[out[i]] = 0;
    qsort(out, (size_t)k, sizeof(*out), cmp_id);
    return (size_t)k;
}

size_t
model_favorites(struct model *m, int64_t user, int64_t *out)
{
    size_t k = draw_distinct(dataset_hash(m->d.seed, MODEL_STREAM_FAVORITES, (uint64_t)user),
                             m->user_favorites[user], &m->article_pop, m->d.articles,
                             m->seen_article, out);

    for (size_t i = 0; i < k; i++)
        m->article_favorites[out[i]]++;
    return k;
}

size_t
model_follows(struct model *m, int64_t user, int64_t *out)
{
    size_t k;

    /* Marked as taken: nobody follows themselves. */
    m->seen_user[user] = 1;
    k = draw_distinct(dataset_hash(m->d.seed, MODEL_STREAM_FOLLOWS, (uint64_t)user),
                      m->user_follows[user], &m->user_pop, m->d.users, m->seen_user, out);
    m->seen_user[user] = 0;
    for (size_t i = 0; i < k; i++)
        m->user_followers[out[i]]++;
    return k;
}

size_t
model_article_tags(struct model *m, int64_t article, int64_t out[MODEL_MAX_TAGS])
{
    uint64_t h = dataset_hash(m->d.seed, MODEL_STREAM_TAGS, (uint64_t)article);
    int64_t n = tag_count(m, article);
    /* Tag ids are their popularity rank + 1: the identity order. */
    struct dataset_perm identity = {1, 0, (uint64_t)m->d.tags};
    uint8_t seen[DATASET_TAGS + 1] = {0};
    size_t k = draw_distinct(h, n, &identity, m->d.tags, seen, out);

    for (size_t i = 0; i < k; i++)
        m->tag_articles[out[i]]++;
    return k;
}

int64_t
model_comment_author(const struct model *m, int64_t article, int64_t k)
{
    uint64_t h = hash2(m, MODEL_STREAM_COMMENT, article, 3 * k);

    return 1 + dataset_perm_apply(&m->user_act, mild_rank(h, m->d.users));
}

void
model_comment_times(const struct model *m, int64_t article, int64_t *out)
{
    int64_t t = model_article_time(m, article), n = m->article_comments[article];
    double left = (double)(MODEL_T0 + MODEL_SPAN - t);

    /* Most comments come soon after publication: t + left u^3. */
    for (int64_t k = 0; k < n; k++) {
        double u = unit(hash2(m, MODEL_STREAM_COMMENT, article, 3 * k + 1));
        out[k] = t + 1000000 + (int64_t)(left * (u * u * u));
    }
    qsort(out, (size_t)n, sizeof(*out), cmp_id);
}

int64_t
model_follow_time(const struct model *m, int64_t follower, int64_t followee)
{
    int64_t a = model_user_time(m, follower), b = model_user_time(m, followee);
    int64_t t = a > b ? a : b;
    double u = unit(hash2(m, MODEL_STREAM_FOLLOWS, follower, followee));

    return t + (int64_t)((double)(MODEL_T0 + MODEL_SPAN - t) * u);
}

size_t
model_article_body(const struct model *m, int64_t article, char *out)
{
    uint64_t h = hash2(m, MODEL_STREAM_ARTICLE_TEXT, article, 0);
    double u = unit(h);
    /* 250 to ~3,300 characters, half below 650, mean ~1,000: 250 + 3,000 u^3. */
    size_t len = 250 + (size_t)(3000.0 * (u * u * u));

    return text_prose(h, len, 1, out, MODEL_TEXT_MAX);
}

size_t
model_article_description(const struct model *m, int64_t article, char *out)
{
    return text_prose(hash2(m, MODEL_STREAM_ARTICLE_TEXT, article, 1), 40, 0, out, MODEL_TEXT_MAX);
}

size_t
model_comment_body(const struct model *m, int64_t article, int64_t k, char *out)
{
    uint64_t h = hash2(m, MODEL_STREAM_COMMENT, article, 3 * k + 2);

    /* A line to a few sentences: 20 to ~220 characters, ~110 on average. */
    return text_prose(h, 20 + (size_t)(h % 120), 0, out, MODEL_TEXT_MAX);
}

size_t
model_user_bio(const struct model *m, int64_t user, char *out)
{
    uint64_t h = dataset_hash(m->d.seed, MODEL_STREAM_USER_TEXT, (uint64_t)user);

    out[0] = '\0';
    /* Two users in five wrote a bio. */
    if (h % 5 >= 2)
        return 0;
    return text_prose(h, 30 + (size_t)(h % 100), 0, out, MODEL_TEXT_MAX);
}

size_t
model_user_image(const struct model *m, int64_t user, char *out)
{
    uint64_t h = hash2(m, MODEL_STREAM_USER_TEXT, user, 1);
    int n;

    out[0] = '\0';
    /* One user in three set a picture. */
    if (h % 3)
        return 0;
    n = snprintf(out, MODEL_TEXT_MAX, "https://images.example.org/avatars/%lld.jpg",
                 (long long)user);
    return n > 0 ? (size_t)n : 0;
}
