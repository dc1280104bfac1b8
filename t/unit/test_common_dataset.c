/*
 * Unit tests for common/dataset.c: the names the seeder loads and the load
 * generator asks for.  What matters to users of the two tools: the sizes
 * follow the scale, names are the same for the same seed and differ for
 * another, every name is unique and usable in a URL, and out-of-range
 * indexes are refused rather than invented.
 */
#include "common/dataset.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int
url_safe(const char *s, const char *extra)
{
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || strchr(extra, *s)))
            return 0;
    return 1;
}

static int
cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

START_TEST(test_sizes)
{
    struct dataset d;

    ck_assert_int_eq(dataset_init(&d, 1.0, 1), 0);
    ck_assert_int_eq(d.users, 100000);
    ck_assert_int_eq(d.articles, 500000);
    ck_assert_int_eq(d.favorites, 5000000);
    ck_assert_int_eq(d.comments, 2500000);
    ck_assert_int_eq(d.follows, 2000000);
    ck_assert_int_eq(d.tags, 200);

    ck_assert_int_eq(dataset_init(&d, 0.01, 1), 0);
    ck_assert_int_eq(d.users, 1000);
    ck_assert_int_eq(d.articles, 5000);
    ck_assert_int_eq(d.favorites, 50000);

    /* Tiny scales still have a row in every table. */
    ck_assert_int_eq(dataset_init(&d, 1e-9, 1), 0);
    ck_assert_int_eq(d.users, 1);
    ck_assert_int_eq(d.articles, 1);
    ck_assert_int_eq(d.follows, 1);

    ck_assert_int_eq(dataset_init(&d, 0, 1), -1);
    ck_assert_int_eq(dataset_init(&d, -1, 1), -1);
    ck_assert_int_eq(dataset_init(&d, 101, 1), -1);
    ck_assert_int_eq(dataset_init(&d, 0.0 / 0.0, 1), -1);
}
END_TEST

START_TEST(test_user_names)
{
    struct dataset d;
    char a[DATASET_NAME_MAX], b[DATASET_NAME_MAX], e[DATASET_NAME_MAX];
    char num[24];

    dataset_init(&d, 1.0, 42);
    for (int64_t i = 1; i <= d.users; i += 997) {
        size_t n = dataset_username(&d, i, a, sizeof(a));
        ck_assert_uint_eq(n, strlen(a));
        ck_assert_msg(n > 0 && url_safe(a, "_"), "user %lld: \"%s\"", (long long)i, a);
        /* The number at the end is the id: that is what makes names unique. */
        snprintf(num, sizeof(num), "%lld", (long long)i);
        ck_assert_str_eq(a + n - strlen(num), num);
        ck_assert_uint_gt(dataset_email(&d, i, e, sizeof(e)), n);
        ck_assert_int_eq(strncmp(e, a, n), 0);
        ck_assert_str_eq(e + n, "@example.org");
        /* The same (scale, seed) always names the same user. */
        dataset_username(&d, i, b, sizeof(b));
        ck_assert_str_eq(a, b);
    }
    dataset_username(&d, 100000, a, sizeof(a));
    ck_assert_uint_eq(dataset_username(&d, 0, a, sizeof(a)), 0);
    ck_assert_uint_eq(dataset_username(&d, 100001, a, sizeof(a)), 0);
    ck_assert_uint_eq(dataset_email(&d, -5, e, sizeof(e)), 0);
    ck_assert_uint_eq(dataset_username(&d, 1, a, 4), 0);
}
END_TEST

START_TEST(test_seed_changes_names)
{
    struct dataset d1, d2;
    char a[DATASET_NAME_MAX], b[DATASET_NAME_MAX];
    int differ = 0;

    dataset_init(&d1, 0.01, 1);
    dataset_init(&d2, 0.01, 2);
    for (int64_t i = 1; i <= 100; i++) {
        dataset_username(&d1, i, a, sizeof(a));
        dataset_username(&d2, i, b, sizeof(b));
        differ += strcmp(a, b) != 0;
    }
    ck_assert_int_gt(differ, 90);
    differ = 0;
    for (int64_t i = 1; i <= 100; i++) {
        dataset_slug(&d1, i, a, sizeof(a));
        dataset_slug(&d2, i, b, sizeof(b));
        differ += strcmp(a, b) != 0;
    }
    ck_assert_int_gt(differ, 90);
    differ = 0;
    for (int64_t i = 1; i <= 200; i++) {
        dataset_tag(&d1, i, a, sizeof(a));
        dataset_tag(&d2, i, b, sizeof(b));
        differ += strcmp(a, b) != 0;
    }
    ck_assert_int_gt(differ, 180);
}
END_TEST

START_TEST(test_slugs)
{
    struct dataset d;
    char title[DATASET_TITLE_MAX], slug[DATASET_SLUG_MAX], base[SLUG_MAX_BASE + 1];
    char want[DATASET_SLUG_MAX];
    int64_t n = 20000;
    char **all = calloc((size_t)n, sizeof(char *));

    dataset_init(&d, 1.0, 7);
    for (int64_t j = 1; j <= n; j++) {
        size_t tl = dataset_title(&d, j, title, sizeof(title));
        size_t sl = dataset_slug(&d, j, slug, sizeof(slug));
        ck_assert_uint_gt(tl, 0);
        ck_assert_msg(title[0] >= 'A' && title[0] <= 'Z', "title \"%s\"", title);
        ck_assert_msg(sl > 0 && url_safe(slug, "-"), "slug \"%s\"", slug);
        /* What the API itself would make of the title, with the id as suffix. */
        slug_from_title(title, tl, base, sizeof(base));
        slug_with_suffix(base, (uint64_t)j, want, sizeof(want));
        ck_assert_str_eq(slug, want);
        all[j - 1] = strdup(slug);
    }
    qsort(all, (size_t)n, sizeof(char *), cmp_str);
    for (int64_t j = 1; j < n; j++)
        ck_assert_msg(strcmp(all[j - 1], all[j]) != 0, "duplicate slug %s", all[j]);
    for (int64_t j = 0; j < n; j++)
        free(all[j]);
    free(all);
    ck_assert_uint_eq(dataset_slug(&d, 0, slug, sizeof(slug)), 0);
    ck_assert_uint_eq(dataset_slug(&d, 500001, slug, sizeof(slug)), 0);
    ck_assert_uint_eq(dataset_title(&d, 1, title, 10), 0);
}
END_TEST

START_TEST(test_tags)
{
    struct dataset d;
    char *all[DATASET_TAGS], t[DATASET_NAME_MAX];

    dataset_init(&d, 0.001, 3);
    for (int64_t k = 1; k <= DATASET_TAGS; k++) {
        ck_assert_uint_gt(dataset_tag(&d, k, t, sizeof(t)), 0);
        ck_assert_msg(url_safe(t, "-"), "tag \"%s\"", t);
        all[k - 1] = strdup(t);
    }
    qsort(all, DATASET_TAGS, sizeof(char *), cmp_str);
    for (int k = 1; k < DATASET_TAGS; k++)
        ck_assert_msg(strcmp(all[k - 1], all[k]) != 0, "duplicate tag %s", all[k]);
    for (int k = 0; k < DATASET_TAGS; k++)
        free(all[k]);
    ck_assert_uint_eq(dataset_tag(&d, 0, t, sizeof(t)), 0);
    ck_assert_uint_eq(dataset_tag(&d, DATASET_TAGS + 1, t, sizeof(t)), 0);
    ck_assert_uint_eq(dataset_tag(&d, 1, t, 1), 0);
}
END_TEST

START_TEST(test_hash_streams)
{
    /* Different streams and seeds give unrelated values. */
    ck_assert(dataset_hash(1, 1, 1) != dataset_hash(1, 2, 1));
    ck_assert(dataset_hash(1, 1, 1) != dataset_hash(2, 1, 1));
    ck_assert(dataset_hash(1, 1, 1) != dataset_hash(1, 1, 2));
    ck_assert(dataset_hash(5, 6, 7) == dataset_hash(5, 6, 7));
}
END_TEST

START_TEST(test_popularity)
{
    struct dataset d;
    struct dataset_perm p;
    int64_t n = 5000, hits[5000] = {0};
    char *seen = calloc(50001, 1);

    /* Each popularity order is a permutation of the ids: every id once. */
    dataset_init(&d, 0.1, 11);
    for (int64_t r = 0; r < d.articles; r++) {
        int64_t id = dataset_popular_article(&d, r);
        ck_assert(id >= 1 && id <= d.articles);
        ck_assert_msg(!seen[id], "article %lld twice", (long long)id);
        seen[id] = 1;
    }
    memset(seen, 0, 50001);
    for (int64_t r = 0; r < d.users; r++) {
        int64_t id = dataset_popular_user(&d, r);
        ck_assert(id >= 1 && id <= d.users && !seen[id]);
        seen[id] = 1;
    }
    free(seen);
    ck_assert_int_eq(dataset_popular_article(&d, -1), 0);
    ck_assert_int_eq(dataset_popular_article(&d, d.articles), 0);
    ck_assert_int_eq(dataset_popular_user(&d, d.users), 0);
    /* Popular articles are not simply the oldest (lowest ids). */
    ck_assert_int_gt(dataset_popular_article(&d, 0) + dataset_popular_article(&d, 1) +
                         dataset_popular_article(&d, 2),
                     300);
    /* Another seed, another order. */
    dataset_init(&d, 0.1, 12);
    ck_assert(dataset_popular_article(&d, 0) != 0);
    {
        struct dataset d11;
        dataset_init(&d11, 0.1, 11);
        ck_assert(dataset_popular_article(&d, 0) != dataset_popular_article(&d11, 0) ||
                  dataset_popular_article(&d, 1) != dataset_popular_article(&d11, 1));
    }
    /* n = 1 and n = 2 are permutations too. */
    dataset_perm_init(&p, 99, 1);
    ck_assert_int_eq(dataset_perm_apply(&p, 0), 0);
    dataset_perm_init(&p, 99, 2);
    ck_assert_int_eq(dataset_perm_apply(&p, 0) + dataset_perm_apply(&p, 1), 1);

    /* The skewed draw: rank 0 gets about 1/sqrt(n) of the draws, the top
     * 1 % about 10 %, and every rank stays in range. */
    for (uint64_t i = 0; i < 200000; i++) {
        int64_t r = dataset_skewed_rank(dataset_hash(5, 77, i), n);
        ck_assert(r >= 0 && r < n);
        hits[r]++;
    }
    ck_assert_msg(hits[0] > 2400 && hits[0] < 3260, "rank 0: %lld", (long long)hits[0]);
    {
        int64_t top = 0;
        for (int r = 0; r < 50; r++)
            top += hits[r];
        ck_assert_msg(top > 19000 && top < 21000, "top 1 %%: %lld", (long long)top);
    }
    ck_assert_int_gt(hits[0], 50 * (hits[n / 2] + hits[n / 2 + 1]) / 2);
    ck_assert_int_eq(dataset_skewed_rank(UINT64_MAX, n), n - 1);
    ck_assert_int_eq(dataset_skewed_rank(0, n), 0);
    ck_assert_int_eq(dataset_skewed_rank(12345, 0), 0);
}
END_TEST

static Suite *
dataset_suite(void)
{
    Suite *s = suite_create("dataset");
    TCase *tc = tcase_create("names");

    tcase_add_test(tc, test_sizes);
    tcase_add_test(tc, test_user_names);
    tcase_add_test(tc, test_seed_changes_names);
    tcase_add_test(tc, test_slugs);
    tcase_add_test(tc, test_tags);
    tcase_add_test(tc, test_hash_streams);
    tcase_add_test(tc, test_popularity);
    suite_add_tcase(s, tc);
    return s;
}

#include "check_main.h"
CHECK_MAIN(dataset_suite)
