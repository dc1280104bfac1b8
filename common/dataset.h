/*
 * dataset: the reference dataset's naming scheme, the one place that says
 * which users, articles and tags exist for a given (scale, seed).
 *
 * The seeder (conduit-seed) loads exactly these names, and the load
 * generator (conduit-bench) computes them from the same two numbers, so it
 * can log in as seeded users and open seeded articles without asking the
 * database.  Both link this file: change it and both change together.
 *
 * The scheme (docs/workload.md, "Dataset"):
 *
 *   sizes     at scale F, users = round(100000 F), articles = round(500000 F),
 *             favorites = round(5000000 F), comments = round(2500000 F),
 *             follows = round(2000000 F), each at least 1; tags = 200 at
 *             every scale (the vocabulary; at tiny scales some are unused).
 *   ids       user i has id i (1..users), article j has id j (1..articles),
 *             tag k has id k (1..tags).  The seeder loads explicit ids.
 *   user i    username  <first>_<last><i>, e.g. "maya_okafor1234" with the
 *             first and last names picked from two lists by a hash of
 *             (seed, i); the number makes it unique.
 *             email     <username>@example.org
 *             password  "password" (DATASET_PASSWORD) for every seeded user.
 *   article j title     3 to 7 words from a list, picked by a hash of
 *             (seed, j), first letter capitalised;
 *             slug      slug_from_title(title) + "-" + j in base 36
 *             (slug_with_suffix), so every slug is unique and carries its id.
 *   tag k     a name from a fixed vocabulary of 200 distinct names, in an
 *             order shuffled by the seed: tag 1 under seed 1 is not tag 1
 *             under seed 2.
 *
 * Popularity (optional for a client; the seeder follows it):
 *   order     rank 0 is the most popular.  Article rank r is article
 *             dataset_popular_article(r): the seeder gives low ranks the
 *             most favorites and comments.  User rank r is user
 *             dataset_popular_user(r): low ranks have the most followers
 *             and write the most articles.  Both orders are affine
 *             permutations of the ids keyed by the seed, so popular
 *             articles are spread over time, not the oldest ones.
 *   skew      dataset_skewed_rank(h, n) = floor(n u^2), u = h as a number
 *             in [0, 1): rank r comes with probability
 *             (sqrt(r + 1) - sqrt(r)) / sqrt(n), a Zipf-like law of
 *             exponent 1/2 (rank 0 gets 1/sqrt(n) of all draws).  A load
 *             generator that draws articles or users this way visits them
 *             as the seeded favorites do.
 *
 * Everything else about the data (who follows whom, what is favorited,
 * bodies, timestamps) is the seeder's business (seed/model.h), drawn from
 * dataset_hash() so it is deterministic too, but a client needs only the
 * names above.
 */
#ifndef CONDUITD_DATASET_H
#define CONDUITD_DATASET_H

#include <stddef.h>
#include <stdint.h>

#include "common/slug.h"

#define DATASET_PASSWORD "password"
#define DATASET_TAGS 200

/* Room for any name this module writes, with its NUL. */
#define DATASET_NAME_MAX 64
#define DATASET_TITLE_MAX 96
#define DATASET_SLUG_MAX (SLUG_MAX_LEN + 1)

struct dataset {
    double scale;
    uint64_t seed;
    int64_t users, articles, favorites, comments, follows;
    int64_t tags;
};

/*
 * Fills d with the sizes of (scale, seed).  -1 when scale is not a finite
 * number in (0, 100].
 */
int dataset_init(struct dataset *d, double scale, uint64_t seed);

/*
 * A 64-bit hash of (seed, stream, i): splitmix64 over the three, the one
 * source of every deterministic choice.  stream separates unrelated uses
 * (DATASET_STREAM_* below, and the seeder's own above 100).
 */
uint64_t dataset_hash(uint64_t seed, uint64_t stream, uint64_t i);

enum {
    DATASET_STREAM_USERNAME = 1,
    DATASET_STREAM_TITLE = 2,
    DATASET_STREAM_TAGORDER = 3,
    DATASET_STREAM_ARTICLE_POP = 4,
    DATASET_STREAM_USER_POP = 5,
};

/*
 * The names.  Each writes a NUL-terminated string into out (cap bytes; the
 * *_MAX sizes above always suffice) and returns its length, or 0 when the
 * index is out of range (user 0, article past d->articles, ...) or cap is
 * too small.
 */
size_t dataset_username(const struct dataset *d, int64_t user, char *out, size_t cap);
size_t dataset_email(const struct dataset *d, int64_t user, char *out, size_t cap);
size_t dataset_title(const struct dataset *d, int64_t article, char *out, size_t cap);
size_t dataset_slug(const struct dataset *d, int64_t article, char *out, size_t cap);
size_t dataset_tag(const struct dataset *d, int64_t tag, char *out, size_t cap);

/*
 * Popularity: the id of the article (user) of popularity rank (0 = most
 * popular, up to articles - 1 or users - 1), or 0 when rank is out of range.
 */
int64_t dataset_popular_article(const struct dataset *d, int64_t rank);
int64_t dataset_popular_user(const struct dataset *d, int64_t rank);

/*
 * The skewed draw: a rank in [0, n) from the hash h, floor(n u^2) with u
 * uniform in [0, 1) (53 bits of h).  Only IEEE-exact arithmetic, so every
 * machine draws the same ranks.  0 when n < 1.
 */
int64_t dataset_skewed_rank(uint64_t h, int64_t n);

/*
 * The affine permutation of [0, n) keyed by key: r -> (a r + b) mod n with
 * a coprime to n, both drawn from key.  The popularity orders use it; the
 * seeder uses it for its own orders.  init once (n >= 1), apply often
 * (r in [0, n), else 0).
 */
struct dataset_perm {
    uint64_t a, b, n;
};
void dataset_perm_init(struct dataset_perm *p, uint64_t key, int64_t n);
int64_t dataset_perm_apply(const struct dataset_perm *p, int64_t r);

#endif
