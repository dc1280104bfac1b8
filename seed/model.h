/*
 * model: every row of the reference dataset, computed from (scale, seed).
 *
 * The names (usernames, emails, titles, slugs, tags, ids) and the
 * popularity orders are common/dataset.h's; this module decides the rest,
 * deterministically (dataset_hash() with the streams below, IEEE-exact
 * arithmetic only, so every machine computes the same rows):
 *
 *   time      two years, 2023-01-01 to 2025-01-01 UTC.  User i joins in the
 *             first year, article j is published at slot j of the two years
 *             (so ids grow with time, strictly), plus a jitter inside its slot.
 *   authors   article j's author: user of popularity rank
 *             dataset_skewed_rank(): popular users write the most.
 *   tags      1 to 3 per article (40 %, 35 %, 25 %), distinct, tag k's rank
 *             k - 1 drawn skewed over the 200 tags (the vocabulary's order
 *             is already shuffled by the seed).
 *   favorites user activity order (its own permutation): the user of
 *             activity rank q gives F (sqrt((q+1)/U) - sqrt(q/U)) favorites,
 *             rounded so the total is exactly F, at most one per article;
 *             each to an article drawn skewed by popularity rank, a taken
 *             one replaced by the next rank (so each user's set is distinct
 *             without a global hash set, and its size is exact).
 *   follows   the same with exponent 3/4 (milder: the most active user
 *             follows ~360 at scale 1), followees drawn skewed by user
 *             popularity, never oneself.
 *   comments  each of the C comments picks its article skewed by popularity
 *             (so popular articles get thousands), its author by a milder
 *             skew over the activity order, its time after the article's.
 *   texts     bodies, descriptions, comments and bios from a word list:
 *             bodies 300 to ~4,000 characters in paragraphs.
 *
 * Counters (users.article_count and favorite_count, articles.favorites_count,
 * tags.article_count) are computed here too, so the post-load recount finds
 * nothing to fix.
 *
 * Ownership and threads: a model owns its arrays; one thread at a time may
 * call the functions that take a non-const model (they use its scratch
 * bitmaps and fill its tallies).
 */
#ifndef CONDUITD_SEED_MODEL_H
#define CONDUITD_SEED_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "common/dataset.h"

/* The seeder's streams (dataset.h keeps those below 100). */
enum {
    MODEL_STREAM_USER_ACT = 101,
    MODEL_STREAM_USER_TIME = 102,
    MODEL_STREAM_USER_TEXT = 103,
    MODEL_STREAM_AUTHOR = 104,
    MODEL_STREAM_ARTICLE_TIME = 105,
    MODEL_STREAM_ARTICLE_TEXT = 106,
    MODEL_STREAM_TAGS = 107,
    MODEL_STREAM_FAVORITES = 108,
    MODEL_STREAM_FOLLOWS = 109,
    MODEL_STREAM_COMMENT_ARTICLE = 110,
    MODEL_STREAM_COMMENT = 111,
    MODEL_STREAM_SALT = 112, /* the password hash's salt */
};

/* Microseconds since 2000-01-01 UTC (PostgreSQL's timestamptz). */
#define MODEL_T0 INT64_C(725846400000000)           /* 2023-01-01 */
#define MODEL_SPAN (INT64_C(731) * 86400 * 1000000) /* to 2025-01-01 */

#define MODEL_MAX_TAGS 3
/* Room for any text model_*_text() writes, with its NUL. */
#define MODEL_TEXT_MAX 5000

struct model {
    struct dataset d;
    struct dataset_perm user_pop, user_act, article_pop;
    /* Indexed by id (slot 0 unused). */
    int64_t *user_articles;     /* users.article_count */
    int64_t *user_favorites;    /* users.favorite_count: favorites given */
    int64_t *user_follows;      /* followees of each user */
    int64_t *user_followers;    /* followers, tallied by model_follows() */
    int64_t *article_favorites; /* articles.favorites_count, tallied by model_favorites() */
    int64_t *article_comments;  /* comments of each article */
    int64_t tag_articles[DATASET_TAGS + 1]; /* tallied by model_article_tags() */
    int64_t article_tags;                   /* rows of article_tags */
    /* Scratch: one flag per article, per user (all clear between calls). */
    uint8_t *seen_article, *seen_user;
};

/*
 * Computes the sizes and the per-user and per-article counts.  -1 with a
 * reason in err when the scale is out of range or too small for exact
 * counts (more follows than pairs of users, ...) or memory runs out.
 */
int model_init(struct model *m, double scale, uint64_t seed, char *err, size_t errcap);
void model_free(struct model *m);

int64_t model_user_time(const struct model *m, int64_t user);
int64_t model_article_time(const struct model *m, int64_t article);
int64_t model_article_updated(const struct model *m, int64_t article);
int64_t model_article_author(const struct model *m, int64_t article);

/*
 * The sorted, distinct ids of user's favorites (articles) or follows
 * (users) into out (room for user_favorites[user] or user_follows[user]);
 * returns the count.  model_favorites also adds them to article_favorites,
 * model_follows to user_followers.
 */
size_t model_favorites(struct model *m, int64_t user, int64_t *out);
size_t model_follows(struct model *m, int64_t user, int64_t *out);

/* Article's sorted tag ids (1 to MODEL_MAX_TAGS); adds them to tag_articles. */
size_t model_article_tags(struct model *m, int64_t article, int64_t out[MODEL_MAX_TAGS]);

/* Comment k (0-based, in id order) of article: its author and time. */
int64_t model_comment_author(const struct model *m, int64_t article, int64_t k);
/* The times of article's comments, ascending, into out (article_comments[article]). */
void model_comment_times(const struct model *m, int64_t article, int64_t *out);
int64_t model_follow_time(const struct model *m, int64_t follower, int64_t followee);

/*
 * Texts: each writes a NUL-terminated text into out (MODEL_TEXT_MAX bytes)
 * and returns its length; bio returns 0 (and writes "") for the users
 * without one, image likewise.
 */
size_t model_article_body(const struct model *m, int64_t article, char *out);
size_t model_article_description(const struct model *m, int64_t article, char *out);
size_t model_comment_body(const struct model *m, int64_t article, int64_t k, char *out);
size_t model_user_bio(const struct model *m, int64_t user, char *out);
size_t model_user_image(const struct model *m, int64_t user, char *out);

#endif
