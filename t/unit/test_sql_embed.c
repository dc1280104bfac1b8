/*
 * The SQL the binaries carry is the SQL of the files, byte for byte:
 * sql/queries.c and sql/direct.c (from gen-queries.awk) against
 * sql/queries.sql and sql/direct.sql, and sql/schema.c (from embed.awk)
 * against sql/schema.sql.  Both go through
 * a C string literal, where a backslash is an escape: E'\x1f' in the SQL
 * must reach PostgreSQL as those six characters, not as one 0x1F byte.
 * The files are read from $top_srcdir, which make check sets.
 */
#include "sql/direct.h"
#include "sql/queries.h"
#include "t/unit/test_file.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const char schema_sql[];

START_TEST(test_schema_byte_for_byte)
{
    char *file = test_slurp("sql/schema.sql");

    ck_assert_uint_eq(strlen(schema_sql), strlen(file));
    ck_assert_msg(strcmp(schema_sql, file) == 0, "schema_sql differs from sql/schema.sql");
    free(file);
}
END_TEST

static int
blank_or_comment(const char *line)
{
    line += strspn(line, " \t");
    return *line == '\0' || strncmp(line, "--", 2) == 0;
}

/*
 * The statement named `name` as the file's format defines it: the lines
 * after "-- name: NAME" up to the one ending in ";", without comment and
 * blank lines, trailing blanks or the ";", joined by newlines.
 */
static char *
statement_in_file(char *file, const char *path, const char *name)
{
    char want[128], *out = calloc(1, strlen(file) + 1), *line, *save = NULL;
    int in = 0;

    ck_assert_ptr_nonnull(out);
    snprintf(want, sizeof(want), "-- name: %s", name);
    for (line = strtok_r(file, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        size_t n = strlen(line);
        if (!in) {
            in = strcmp(line, want) == 0;
            continue;
        }
        if (blank_or_comment(line))
            continue;
        while (n > 0 && (line[n - 1] == ' ' || line[n - 1] == '\t'))
            line[--n] = '\0';
        int last = n > 0 && line[n - 1] == ';';
        if (last)
            line[--n] = '\0';
        if (n > 0) {
            if (*out)
                strcat(out, "\n");
            strcat(out, line);
        }
        if (last)
            return out;
    }
    ck_abort_msg("query %s not found in %s", name, path);
    return NULL;
}

/* Every statement of one generated table against its file; the count of
 * statements that write the tag separator as an escape. */
static int
table_byte_for_byte(const struct sql_query *table, int n, const char *path)
{
    int escapes = 0;

    for (int i = 0; i < n; i++) {
        char *file = test_slurp(path);
        char *text = statement_in_file(file, path, table[i].name);

        ck_assert_msg(strcmp(table[i].text, text) == 0,
                      "query %s: the embedded text differs from %s", table[i].name, path);
        for (const char *p = table[i].text; *p; p++)
            ck_assert_msg((unsigned char)*p >= 0x20 || *p == '\n',
                          "query %s: a control byte 0x%02x", table[i].name, (unsigned char)*p);
        escapes += strstr(table[i].text, "E'\\x1f'") != NULL;
        free(text);
        free(file);
    }
    return escapes;
}

START_TEST(test_queries_byte_for_byte)
{
    /* The tag separator is written as an escape in several statements. */
    ck_assert_int_gt(table_byte_for_byte(sql_queries, SQL_QUERY_COUNT, "sql/queries.sql"), 0);
}
END_TEST

START_TEST(test_direct_byte_for_byte)
{
    table_byte_for_byte(sql_direct, SQL_DIRECT_COUNT, "sql/direct.sql");
    /* Several statements on a line, the ";" between them kept. */
    ck_assert_ptr_nonnull(strstr(sql_direct[SQL_DIRECT_CACHE_LISTEN].text,
                                 "LISTEN conduit_cache; SELECT count(*)"));
}
END_TEST

static Suite *
sql_embed_suite(void)
{
    Suite *s = suite_create("sql_embed");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, test_schema_byte_for_byte);
    tcase_add_test(tc, test_queries_byte_for_byte);
    tcase_add_test(tc, test_direct_byte_for_byte);
    suite_add_tcase(s, tc);
    return s;
}

#include "t/unit/check_main.h"
CHECK_MAIN(sql_embed_suite)
