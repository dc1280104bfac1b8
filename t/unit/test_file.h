/*
 * test_file.h: read a file of the source tree, for the unit tests that
 * check the code against a file beside it (the SQL, the man pages, the
 * example config).  make check sets $top_srcdir; run by hand from build/,
 * ".." is the default.
 */
#ifndef CONDUITD_TEST_FILE_H
#define CONDUITD_TEST_FILE_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>

/* The whole of $top_srcdir/rel, NUL-terminated; the caller frees it. */
static inline char *
test_slurp(const char *rel)
{
    const char *top = getenv("top_srcdir");
    char path[4096];
    FILE *f;
    char *buf;
    long n;

    snprintf(path, sizeof(path), "%s/%s", top ? top : "..", rel);
    f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
    n = ftell(f);
    ck_assert_int_ge(n, 0);
    rewind(f);
    buf = malloc((size_t)n + 1);
    ck_assert_ptr_nonnull(buf);
    ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

#endif
