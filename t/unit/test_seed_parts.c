/*
 * Unit tests for seed/parts.c against the real, embedded schema.sql: the
 * cut falls at the "-- @@ post-load" marker, the pieces put together give
 * the file back, the post-load sections are whole and named, and the
 * names --reset drops are every table and function the schema creates.
 */
#include "seed/parts.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

extern const char schema_sql[];

static int
has(char names[][PARTS_NAME_MAX], int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0)
            return 1;
    return 0;
}

START_TEST(test_schema)
{
    struct parts p;
    size_t len;
    char *joined;

    ck_assert_int_eq(parts_split(&p, schema_sql), 0);
    ck_assert_ptr_nonnull(strstr(p.pre, "BEGIN;"));
    ck_assert_ptr_nonnull(strstr(p.pre, "CREATE TABLE favorites"));
    ck_assert_ptr_null(strstr(p.pre, "\n-- @@ post-load"));
    ck_assert_int_ge(p.nsections, 3);
    ck_assert(strncmp(p.sections[0].sql, "-- @@ post-load", 15) == 0);
    ck_assert_ptr_nonnull(strstr(p.sections[p.nsections - 1].sql, "COMMIT;"));
    /* The pieces, end to end, are the file. */
    len = strlen(p.pre);
    for (int i = 0; i < p.nsections; i++)
        len += strlen(p.sections[i].sql);
    ck_assert_uint_eq(len, strlen(schema_sql));
    joined = malloc(len + 1);
    strcpy(joined, p.pre);
    for (int i = 0; i < p.nsections; i++)
        strcat(joined, p.sections[i].sql);
    ck_assert_str_eq(joined, schema_sql);
    free(joined);
    /* Named by their banners, the parenthesis left out. */
    ck_assert_str_eq(p.sections[0].name, "Unique constraints and secondary indexes");
    ck_assert_str_eq(p.sections[1].name, "Foreign keys");
    for (int i = 0; i < p.nsections; i++)
        ck_assert_uint_gt(strlen(p.sections[i].name), 0);

    ck_assert_int_eq(p.ntables, 12);
    ck_assert(has(p.tables, p.ntables, "users") && has(p.tables, p.ntables, "article_tags") &&
              has(p.tables, p.ntables, "idempotency_keys") &&
              has(p.tables, p.ntables, "feed_inbox") && has(p.tables, p.ntables, "feed_readers") &&
              has(p.tables, p.ntables, "schema_version") &&
              has(p.tables, p.ntables, "article_count_stripes"));
    ck_assert(has(p.functions, p.nfunctions, "conduit_recount") &&
              has(p.functions, p.nfunctions, "conduit_base36") &&
              has(p.functions, p.nfunctions, "conduit_inbox_rebuild"));
    /* The feed inbox's fill and triggers have a section of their own. */
    ck_assert_str_eq(p.sections[p.nsections - 2].name, "Feed inbox: the fill, then its triggers");
    ck_assert(!has(p.functions, p.nfunctions, "conduit_recount()"));
    parts_free(&p);
}
END_TEST

START_TEST(test_other_texts)
{
    struct parts p;

    ck_assert_int_eq(parts_split(&p, "BEGIN;\nCREATE TABLE x (a int);\nCOMMIT;\n"), -1);
    /* No banner: one section, named post-load. */
    ck_assert_int_eq(parts_split(&p, "BEGIN;\n-- @@ post-load\nSELECT 1;\nCOMMIT;\n"), 0);
    ck_assert_int_eq(p.nsections, 1);
    ck_assert_str_eq(p.sections[0].name, "post-load");
    ck_assert_str_eq(p.pre, "BEGIN;\n");
    ck_assert_int_eq(p.ntables, 0);
    parts_free(&p);
}
END_TEST

static Suite *
parts_suite(void)
{
    Suite *s = suite_create("seed_parts");
    TCase *tc = tcase_create("parts");

    tcase_add_test(tc, test_schema);
    tcase_add_test(tc, test_other_texts);
    suite_add_tcase(s, tc);
    return s;
}

#include "check_main.h"
CHECK_MAIN(parts_suite)
