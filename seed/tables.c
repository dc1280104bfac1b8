/*
 * tables: see tables.h.  Each generator writes its table's columns in the
 * order its COPY statement names them.
 */
#include "config.h"

#include "seed/tables.h"

#include <stdlib.h>
#include <string.h>

/* The largest of n counts (indexes 1..n). */
static int64_t
largest(const int64_t *a, int64_t n)
{
    int64_t max = 0;

    for (int64_t i = 1; i <= n; i++)
        if (a[i] > max)
            max = a[i];
    return max;
}

static void
text_or_null(struct copy_out *o, const char *s, size_t n)
{
    if (n)
        copy_text(o, s, n);
    else
        copy_null(o);
}

static int
gen_users(struct copy_out *o, void *arg)
{
    struct tables_ctx *c = arg;
    struct model *m = c->m;
    size_t hash_len = strlen(c->password_hash);
    char name[DATASET_NAME_MAX], email[DATASET_NAME_MAX], bio[MODEL_TEXT_MAX],
        image[MODEL_TEXT_MAX];

    for (int64_t i = 1; i <= m->d.users; i++) {
        int64_t t = model_user_time(m, i);

        copy_row(o, 10);
        copy_int8(o, i);
        copy_text(o, name, dataset_username(&m->d, i, name, sizeof(name)));
        copy_text(o, email, dataset_email(&m->d, i, email, sizeof(email)));
        copy_text(o, c->password_hash, hash_len);
        text_or_null(o, bio, model_user_bio(m, i, bio));
        text_or_null(o, image, model_user_image(m, i, image));
        copy_int8(o, m->user_articles[i]);
        copy_int8(o, m->user_favorites[i]);
        copy_int8(o, t);
        copy_int8(o, t);
        if (copy_row_end(o) < 0)
            return -1;
    }
    return 0;
}

/* Favorites and follows: a user's distinct targets, then one row each. */
static int
gen_pairs(struct copy_out *o, struct model *m, int favorites)
{
    const int64_t *deg = favorites ? m->user_favorites : m->user_follows;
    int64_t *ids = malloc(((size_t)largest(deg, m->d.users) + 1) * sizeof(int64_t));
    int rc = -1;

    if (!ids)
        return -1;
    for (int64_t u = 1; u <= m->d.users; u++) {
        size_t k = favorites ? model_favorites(m, u, ids) : model_follows(m, u, ids);
        for (size_t i = 0; i < k; i++) {
            copy_row(o, 3);
            copy_int8(o, u);
            copy_int8(o, ids[i]);
            /* favorites.created_at is the article's (schema.sql). */
            copy_int8(o,
                      favorites ? model_article_time(m, ids[i]) : model_follow_time(m, u, ids[i]));
            if (copy_row_end(o) < 0)
                goto out;
        }
    }
    rc = 0;
out:
    free(ids);
    return rc;
}

static int
gen_favorites(struct copy_out *o, void *arg)
{
    return gen_pairs(o, ((struct tables_ctx *)arg)->m, 1);
}

static int
gen_follows(struct copy_out *o, void *arg)
{
    return gen_pairs(o, ((struct tables_ctx *)arg)->m, 0);
}

static int
gen_comments(struct copy_out *o, void *arg)
{
    struct model *m = ((struct tables_ctx *)arg)->m;
    int64_t *times =
        malloc(((size_t)largest(m->article_comments, m->d.articles) + 1) * sizeof(int64_t));
    char *body = malloc(MODEL_TEXT_MAX);
    int64_t id = 0;
    int rc = -1;

    if (!times || !body)
        goto out;
    /* Ids run article by article, oldest comment first within one. */
    for (int64_t j = 1; j <= m->d.articles; j++) {
        model_comment_times(m, j, times);
        for (int64_t k = 0; k < m->article_comments[j]; k++) {
            copy_row(o, 6);
            copy_int8(o, ++id);
            copy_int8(o, j);
            copy_int8(o, model_comment_author(m, j, k));
            copy_text(o, body, model_comment_body(m, j, k, body));
            copy_int8(o, times[k]);
            copy_int8(o, times[k]);
            if (copy_row_end(o) < 0)
                goto out;
        }
    }
    rc = 0;
out:
    free(body);
    free(times);
    return rc;
}

static int
gen_article_tags(struct copy_out *o, void *arg)
{
    struct model *m = ((struct tables_ctx *)arg)->m;
    int64_t tags[MODEL_MAX_TAGS];

    for (int64_t j = 1; j <= m->d.articles; j++) {
        size_t k = model_article_tags(m, j, tags);
        int64_t t = model_article_time(m, j);
        for (size_t i = 0; i < k; i++) {
            copy_row(o, 3);
            copy_int8(o, j);
            copy_int8(o, tags[i]);
            copy_int8(o, t);
            if (copy_row_end(o) < 0)
                return -1;
        }
    }
    return 0;
}

static int
gen_articles(struct copy_out *o, void *arg)
{
    struct model *m = ((struct tables_ctx *)arg)->m;
    char title[DATASET_TITLE_MAX], slug[DATASET_SLUG_MAX], desc[MODEL_TEXT_MAX];
    char *body = malloc(MODEL_TEXT_MAX);

    if (!body)
        return -1;
    for (int64_t j = 1; j <= m->d.articles; j++) {
        copy_row(o, 9);
        copy_int8(o, j);
        copy_text(o, slug, dataset_slug(&m->d, j, slug, sizeof(slug)));
        copy_text(o, title, dataset_title(&m->d, j, title, sizeof(title)));
        copy_text(o, desc, model_article_description(m, j, desc));
        copy_text(o, body, model_article_body(m, j, body));
        copy_int8(o, model_article_author(m, j));
        copy_int8(o, m->article_favorites[j]);
        copy_int8(o, model_article_time(m, j));
        copy_int8(o, model_article_updated(m, j));
        if (copy_row_end(o) < 0) {
            free(body);
            return -1;
        }
    }
    free(body);
    return 0;
}

static int
gen_tags(struct copy_out *o, void *arg)
{
    struct model *m = ((struct tables_ctx *)arg)->m;
    char name[DATASET_NAME_MAX];

    for (int64_t k = 1; k <= m->d.tags; k++) {
        copy_row(o, 3);
        copy_int8(o, k);
        copy_text(o, name, dataset_tag(&m->d, k, name, sizeof(name)));
        copy_int8(o, m->tag_articles[k]);
        if (copy_row_end(o) < 0)
            return -1;
    }
    return 0;
}

/*
 * FREEZE: the tables were created in this transaction (the pre-load part),
 * so the rows can be written frozen and all-visible at once; the VACUUM
 * after the load then has almost nothing to do, and no reader has to set
 * hint bits page by page.
 */
#define COPY(t, cols) "COPY " t " (" cols ") FROM STDIN (FORMAT binary, FREEZE)"

const struct table_def tables[TABLES_N] = {
    {"users",
     COPY("users", "id, username, email, password_hash, bio, image, article_count, "
                   "favorite_count, created_at, updated_at"),
     gen_users},
    {"favorites", COPY("favorites", "user_id, article_id, created_at"), gen_favorites},
    {"follows", COPY("follows", "follower_id, followee_id, created_at"), gen_follows},
    {"comments", COPY("comments", "id, article_id, author_id, body, created_at, updated_at"),
     gen_comments},
    {"article_tags", COPY("article_tags", "article_id, tag_id, created_at"), gen_article_tags},
    {"articles",
     COPY("articles", "id, slug, title, description, body, author_id, favorites_count, "
                      "created_at, updated_at"),
     gen_articles},
    {"tags", COPY("tags", "id, name, article_count"), gen_tags},
};

int64_t
tables_rows(const struct model *m, const struct table_def *t)
{
    const char *n = t->name;

    if (strcmp(n, "users") == 0)
        return m->d.users;
    if (strcmp(n, "favorites") == 0)
        return m->d.favorites;
    if (strcmp(n, "follows") == 0)
        return m->d.follows;
    if (strcmp(n, "comments") == 0)
        return m->d.comments;
    if (strcmp(n, "article_tags") == 0)
        return m->article_tags;
    if (strcmp(n, "articles") == 0)
        return m->d.articles;
    return m->d.tags;
}
