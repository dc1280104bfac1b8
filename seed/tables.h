/*
 * tables: the row generators, one a table, that copy_table() runs to
 * stream the model's rows in primary-key order (so each primary key index
 * grows at its right edge during the load).
 *
 * The order matters for the counters the rows carry: favorites before
 * articles (favorites_count is tallied while favorites are written),
 * article_tags before tags (article_count likewise).  TABLES lists them
 * in that order.
 */
#ifndef CONDUITD_SEED_TABLES_H
#define CONDUITD_SEED_TABLES_H

#include <stdint.h>

#include "seed/copy.h"
#include "seed/model.h"

/* What every generator reads; owned by the caller. */
struct tables_ctx {
    struct model *m;
    const char *password_hash;
};

struct table_def {
    const char *name;
    const char *copy_sql;
    copy_gen_fn gen; /* its argument: a struct tables_ctx */
};

#define TABLES_N 7
extern const struct table_def tables[TABLES_N];

/* The rows a table gets from model m. */
int64_t tables_rows(const struct model *m, const struct table_def *t);

#endif
