/*
 * The SQL the binaries carry is the SQL of the files, byte for byte:
 * sql/queries.c and sql/direct.c (from gen-queries.awk) against
 * sql/queries.sql and sql/direct.sql (their fragments written out by this
 * file's own reading of the format), and sql/schema.c (from embed.awk)
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

/* s with each "{key}" of args ("key=value ..." or "") replaced by its value. */
static char *
substitute(const char *s, const char *args)
{
    size_t cap = strlen(s) + 1;
    char *out;

    for (const char *p = s; (p = strchr(p, '{')) != NULL; p++)
        cap += strlen(args);
    out = calloc(1, cap);
    ck_assert_ptr_nonnull(out);
    while (*s) {
        const char *a = args + strspn(args, " \t");
        int done = 0;

        while (*s == '{' && *a && !done) {
            size_t klen = strcspn(a, "=");
            size_t vlen;

            ck_assert_msg(a[klen] == '=', "\"%s\" is not key=value", a);
            vlen = strcspn(a + klen + 1, " \t");
            if (strncmp(s + 1, a, klen) == 0 && s[1 + klen] == '}') {
                strncat(out, a + klen + 1, vlen);
                s += klen + 2;
                done = 1;
            }
            a += klen + 1 + vlen;
            a += strspn(a, " \t");
        }
        if (!done)
            strncat(out, s++, 1);
    }
    return out;
}

/*
 * Appends to out the text lines from line `from` on (comment and blank
 * lines dropped, trailing blanks cut), a "-- use: NAME key=value ..." line
 * standing for the lines of "-- fragment: NAME" with its placeholders
 * filled.  A fragment ends at the next "-- name:" or "-- fragment:" line;
 * the statement at its line that ends in ";" (the ";" dropped): then 1.
 */
static int
emit(char **lines, int n, int from, const char *args, char *out)
{
    for (int i = from; i < n; i++) {
        char *line = substitute(lines[i], args);
        size_t len = strlen(line);

        if (strncmp(line, "-- name:", 8) == 0 || strncmp(line, "-- fragment:", 12) == 0) {
            free(line);
            return 0;
        }
        if (strncmp(line, "-- use: ", 8) == 0) {
            char want[128];
            size_t nlen = strcspn(line + 8, " \t");
            int at = -1, ended;

            snprintf(want, sizeof(want), "-- fragment: %.*s", (int)nlen, line + 8);
            for (int j = 0; j < n && at < 0; j++)
                if (strcmp(lines[j], want) == 0)
                    at = j;
            ck_assert_msg(at >= 0, "no %s", want);
            ended = emit(lines, n, at + 1, line + 8 + nlen, out);
            free(line);
            if (ended)
                return 1;
            continue;
        }
        if (blank_or_comment(line)) {
            free(line);
            continue;
        }
        while (len > 0 && (line[len - 1] == ' ' || line[len - 1] == '\t'))
            line[--len] = '\0';
        int last = len > 0 && line[len - 1] == ';';
        if (last)
            line[--len] = '\0';
        if (len > 0) {
            if (*out)
                strcat(out, "\n");
            strcat(out, line);
        }
        free(line);
        if (last)
            return 1;
    }
    return 0;
}

/*
 * The statement named `name` as the file's format defines it: the lines
 * after "-- name: NAME" up to the one ending in ";", without comment and
 * blank lines, trailing blanks or the ";", joined by newlines, its
 * fragments written out.
 */
static char *
statement_in_file(char *file, const char *path, const char *name)
{
    char want[128], *out, *line, *save = NULL, **lines;
    int n = 0, cap = 1;
    /* Expanded, a statement is still far shorter than four times the file. */
    size_t size = 4 * strlen(file) + 1;

    for (const char *p = file; *p; p++)
        cap += *p == '\n';
    lines = calloc((size_t)cap, sizeof(*lines));
    ck_assert_ptr_nonnull(lines);
    for (line = strtok_r(file, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
        lines[n++] = line;
    out = calloc(1, size);
    ck_assert_ptr_nonnull(out);
    snprintf(want, sizeof(want), "-- name: %s", name);
    for (int i = 0; i < n; i++) {
        if (strcmp(lines[i], want) == 0 && emit(lines, n, i + 1, "", out)) {
            free(lines);
            return out;
        }
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
    ck_assert_ptr_nonnull(
        strstr(sql_direct[SQL_DIRECT_CACHE_LISTEN].text, "LISTEN conduit_cache; SELECT count(*)"));
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
