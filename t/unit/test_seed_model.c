/*
 * Unit tests for seed/model.c and seed/text.c: what a user of the seeded
 * database would notice.  Every table gets exactly its size; favorites and
 * follows are distinct and nobody follows themselves; the counters the
 * rows carry match the rows; the same seed gives the same rows and another
 * seed others; the skew is there (a few articles and users far above the
 * median); times stay within the two years and in a sensible order; texts
 * have realistic lengths.  Scale 0.01 (1,000 users, 5,000 articles) runs
 * in well under a second.
 */
#include "seed/model.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "seed/text.h"

static int
cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

    return (x > y) - (x < y);
}

static int64_t
median(const int64_t *a, int64_t n)
{
    int64_t *c = malloc((size_t)n * sizeof(*c)), m;

    memcpy(c, a, (size_t)n * sizeof(*c));
    qsort(c, (size_t)n, sizeof(*c), cmp_i64);
    m = c[n / 2];
    free(c);
    return m;
}

static int64_t
max_of(const int64_t *a, int64_t n)
{
    int64_t m = 0;

    for (int64_t i = 0; i < n; i++)
        m = a[i] > m ? a[i] : m;
    return m;
}

static int64_t
sum_of(const int64_t *a, int64_t n)
{
    int64_t s = 0;

    for (int64_t i = 0; i < n; i++)
        s += a[i];
    return s;
}

/* The whole favorites or follows table of m as a checksum; checks each user's rows. */
static uint64_t
walk_pairs(struct model *m, int favorites, int64_t *rows)
{
    int64_t *ids = malloc(((size_t)(favorites ? m->d.articles : m->d.users) + 1) * sizeof(*ids));
    uint64_t sum = 0;

    *rows = 0;
    for (int64_t u = 1; u <= m->d.users; u++) {
        size_t k = favorites ? model_favorites(m, u, ids) : model_follows(m, u, ids);
        ck_assert_int_eq((int64_t)k, favorites ? m->user_favorites[u] : m->user_follows[u]);
        for (size_t i = 0; i < k; i++) {
            int64_t hi = favorites ? m->d.articles : m->d.users;
            ck_assert(ids[i] >= 1 && ids[i] <= hi);
            /* Sorted and distinct: the primary key holds, rows come in its order. */
            if (i > 0)
                ck_assert_msg(ids[i - 1] < ids[i], "user %lld: %lld then %lld", (long long)u,
                              (long long)ids[i - 1], (long long)ids[i]);
            if (!favorites)
                ck_assert_msg(ids[i] != u, "user %lld follows themselves", (long long)u);
            sum = sum * 31 + (uint64_t)(u * 1000003 + ids[i]);
        }
        *rows += (int64_t)k;
    }
    free(ids);
    return sum;
}

START_TEST(test_sizes_exact)
{
    struct model m;
    char err[256];
    int64_t rows, tag_rows = 0, tags[MODEL_MAX_TAGS];

    ck_assert_int_eq(model_init(&m, 0.01, 1, err, sizeof(err)), 0);
    ck_assert_int_eq(m.d.users, 1000);
    ck_assert_int_eq(m.d.articles, 5000);
    walk_pairs(&m, 1, &rows);
    ck_assert_int_eq(rows, 50000);
    walk_pairs(&m, 0, &rows);
    ck_assert_int_eq(rows, 20000);
    ck_assert_int_eq(sum_of(m.article_comments + 1, m.d.articles), 25000);
    ck_assert_int_eq(sum_of(m.user_articles + 1, m.d.users), 5000);
    /* The counters are the rows: favorites received, followers, tag uses. */
    ck_assert_int_eq(sum_of(m.article_favorites + 1, m.d.articles), 50000);
    ck_assert_int_eq(sum_of(m.user_followers + 1, m.d.users), 20000);
    for (int64_t j = 1; j <= m.d.articles; j++) {
        size_t k = model_article_tags(&m, j, tags);
        ck_assert(k >= 1 && k <= MODEL_MAX_TAGS);
        for (size_t i = 0; i < k; i++) {
            ck_assert(tags[i] >= 1 && tags[i] <= DATASET_TAGS);
            if (i > 0)
                ck_assert(tags[i - 1] < tags[i]);
        }
        tag_rows += (int64_t)k;
    }
    ck_assert_int_eq(tag_rows, m.article_tags);
    ck_assert_int_eq(sum_of(m.tag_articles + 1, DATASET_TAGS), tag_rows);
    /* 1 to 3 tags an article: about 1.85 on average. */
    ck_assert(tag_rows > 5000 * 17 / 10 && tag_rows < 5000 * 2);
    model_free(&m);
}
END_TEST

START_TEST(test_deterministic)
{
    struct model a, b, c;
    char err[256], ta[MODEL_TEXT_MAX], tb[MODEL_TEXT_MAX];
    int64_t rows;
    uint64_t fa, fb, fc, oa, ob, oc;
    int differ = 0;

    ck_assert_int_eq(model_init(&a, 0.005, 42, err, sizeof(err)), 0);
    ck_assert_int_eq(model_init(&b, 0.005, 42, err, sizeof(err)), 0);
    ck_assert_int_eq(model_init(&c, 0.005, 43, err, sizeof(err)), 0);
    fa = walk_pairs(&a, 1, &rows);
    fb = walk_pairs(&b, 1, &rows);
    fc = walk_pairs(&c, 1, &rows);
    oa = walk_pairs(&a, 0, &rows);
    ob = walk_pairs(&b, 0, &rows);
    oc = walk_pairs(&c, 0, &rows);
    ck_assert(fa == fb && oa == ob);
    ck_assert(fa != fc && oa != oc);
    for (int64_t j = 1; j <= a.d.articles; j++) {
        ck_assert_int_eq(model_article_author(&a, j), model_article_author(&b, j));
        ck_assert_int_eq(model_article_time(&a, j), model_article_time(&b, j));
        ck_assert_int_eq(a.article_comments[j], b.article_comments[j]);
        model_article_body(&a, j, ta);
        model_article_body(&b, j, tb);
        ck_assert_str_eq(ta, tb);
        differ += model_article_author(&a, j) != model_article_author(&c, j);
    }
    ck_assert_int_gt(differ, a.d.articles / 2);
    model_free(&a);
    model_free(&b);
    model_free(&c);
}
END_TEST

START_TEST(test_skew)
{
    struct model m;
    char err[256];
    int64_t rows, *ids;

    ck_assert_int_eq(model_init(&m, 0.01, 1, err, sizeof(err)), 0);
    walk_pairs(&m, 1, &rows);
    walk_pairs(&m, 0, &rows);
    /*
     * Far above the median: the most followed user, the most favorited and
     * most commented article, the most prolific author and favoriter.
     */
    ck_assert_int_gt(max_of(m.user_followers + 1, m.d.users),
                     10 * median(m.user_followers + 1, m.d.users));
    ck_assert_int_gt(max_of(m.article_favorites + 1, m.d.articles),
                     10 * median(m.article_favorites + 1, m.d.articles));
    ck_assert_int_gt(max_of(m.article_comments + 1, m.d.articles),
                     10 * (median(m.article_comments + 1, m.d.articles) + 1));
    ck_assert_int_gt(max_of(m.user_articles + 1, m.d.users),
                     10 * (median(m.user_articles + 1, m.d.users) + 1));
    ck_assert_int_gt(max_of(m.user_favorites + 1, m.d.users),
                     10 * median(m.user_favorites + 1, m.d.users));
    /* The popular ones are the popularity order's first ranks (dataset.h). */
    ck_assert_int_eq(max_of(m.article_comments + 1, m.d.articles),
                     m.article_comments[dataset_popular_article(&m.d, 0)]);
    ck_assert_int_eq(max_of(m.user_followers + 1, m.d.users),
                     m.user_followers[dataset_popular_user(&m.d, 0)]);
    /* Tags: the most used far above the least used. */
    ids = m.tag_articles + 1;
    for (int64_t j = 1; j <= m.d.articles; j++) {
        int64_t t[MODEL_MAX_TAGS];
        model_article_tags(&m, j, t);
    }
    ck_assert_int_gt(max_of(ids, DATASET_TAGS), 10 * median(ids, DATASET_TAGS) / 2);
    model_free(&m);
}
END_TEST

START_TEST(test_times)
{
    struct model m;
    char err[256];
    int64_t end = MODEL_T0 + MODEL_SPAN, *times;

    ck_assert_int_eq(model_init(&m, 0.01, 9, err, sizeof(err)), 0);
    times = malloc(((size_t)max_of(m.article_comments, m.d.articles + 1) + 1) * sizeof(*times));
    for (int64_t i = 1; i <= m.d.users; i++) {
        ck_assert(model_user_time(&m, i) >= MODEL_T0 && model_user_time(&m, i) < end);
        if (i > 1)
            ck_assert(model_user_time(&m, i - 1) < model_user_time(&m, i));
    }
    for (int64_t j = 1; j <= m.d.articles; j++) {
        int64_t t = model_article_time(&m, j);
        ck_assert(t >= MODEL_T0 && t < end);
        /* Newer ids are newer articles, strictly. */
        if (j > 1)
            ck_assert(model_article_time(&m, j - 1) < t);
        ck_assert(model_article_updated(&m, j) >= t && model_article_updated(&m, j) <= end);
        model_comment_times(&m, j, times);
        for (int64_t k = 0; k < m.article_comments[j]; k++) {
            ck_assert(times[k] > t && times[k] <= end + 1000000);
            if (k > 0)
                ck_assert(times[k - 1] <= times[k]);
            ck_assert(model_comment_author(&m, j, k) >= 1 &&
                      model_comment_author(&m, j, k) <= m.d.users);
        }
    }
    /* The first article in the first days, the last in the last ones. */
    ck_assert(model_article_time(&m, 1) < MODEL_T0 + INT64_C(86400) * 1000000);
    ck_assert(model_article_time(&m, m.d.articles) > end - INT64_C(86400) * 1000000);
    free(times);
    model_free(&m);
}
END_TEST

START_TEST(test_texts)
{
    struct model m;
    char err[256], t[MODEL_TEXT_MAX];
    size_t total = 0, lo = 1 << 30, hi = 0;
    int bios = 0, images = 0;

    ck_assert_int_eq(model_init(&m, 0.01, 1, err, sizeof(err)), 0);
    for (int64_t j = 1; j <= m.d.articles; j++) {
        size_t n = model_article_body(&m, j, t);
        ck_assert_uint_eq(n, strlen(t));
        total += n;
        lo = n < lo ? n : lo;
        hi = n > hi ? n : hi;
        ck_assert(model_article_description(&m, j, t) >= 40);
        ck_assert_uint_gt(model_comment_body(&m, j, 0, t), 19);
    }
    /* A few hundred to a few thousand characters, about a thousand on average. */
    ck_assert_uint_ge(lo, 250);
    ck_assert_uint_gt(hi, 3000);
    ck_assert_uint_lt(hi, MODEL_TEXT_MAX);
    ck_assert(total / 5000 > 900 && total / 5000 < 1500);
    for (int64_t i = 1; i <= m.d.users; i++) {
        bios += model_user_bio(&m, i, t) > 0;
        images += model_user_image(&m, i, t) > 0;
    }
    ck_assert(bios > 300 && bios < 500);
    ck_assert(images > 250 && images < 420);
    model_free(&m);
}
END_TEST

START_TEST(test_prose)
{
    char a[MODEL_TEXT_MAX], b[MODEL_TEXT_MAX];
    size_t n = text_prose(7, 1000, 1, a, sizeof(a));

    ck_assert_uint_ge(n, 1000);
    ck_assert(a[0] >= 'A' && a[0] <= 'Z');
    ck_assert_int_eq(a[n - 1], '.');
    ck_assert_ptr_nonnull(strstr(a, "\n\n"));
    text_prose(7, 1000, 1, b, sizeof(b));
    ck_assert_str_eq(a, b);
    text_prose(8, 1000, 1, b, sizeof(b));
    ck_assert_str_ne(a, b);
    /* Never past the buffer, whatever is asked. */
    n = text_prose(7, 100000, 0, a, 300);
    ck_assert_uint_lt(n, 300);
    ck_assert_uint_eq(n, strlen(a));
    ck_assert_uint_eq(text_prose(7, 10, 0, a, 100), 0);
}
END_TEST

START_TEST(test_small_scales)
{
    struct model m;
    char err[256];
    int64_t rows;

    /* The smallest scale with exact counts: every pair nearly taken. */
    ck_assert_int_eq(model_init(&m, 0.0003, 5, err, sizeof(err)), 0);
    ck_assert_int_eq(m.d.users, 30);
    walk_pairs(&m, 1, &rows);
    ck_assert_int_eq(rows, m.d.favorites);
    walk_pairs(&m, 0, &rows);
    ck_assert_int_eq(rows, m.d.follows);
    model_free(&m);

    ck_assert_int_eq(model_init(&m, 0.0001, 5, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "too small"));
    ck_assert_int_eq(model_init(&m, 0, 5, err, sizeof(err)), -1);
    ck_assert_int_eq(model_init(&m, 101, 5, err, sizeof(err)), -1);
}
END_TEST

static Suite *
model_suite(void)
{
    Suite *s = suite_create("seed_model");
    TCase *tc = tcase_create("model");

    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_sizes_exact);
    tcase_add_test(tc, test_deterministic);
    tcase_add_test(tc, test_skew);
    tcase_add_test(tc, test_times);
    tcase_add_test(tc, test_texts);
    tcase_add_test(tc, test_prose);
    tcase_add_test(tc, test_small_scales);
    suite_add_tcase(s, tc);
    return s;
}

#include "check_main.h"
CHECK_MAIN(model_suite)
