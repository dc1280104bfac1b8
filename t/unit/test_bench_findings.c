/*
 * Unit tests for experiment's findings (bench/findings.c): the paragraph
 * of report.md is computed from the numbers, so made-up rows with known
 * answers must give exactly those answers: the winner and its margin, the
 * worker count that won each group, the memory of an extra worker and of
 * a second instance, the cache's and a second core's gain; a comparison
 * the matrix lacks is not written at all.
 */
#include "bench/findings.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct exp_row rows[8];
static struct matrix_config mx[MATRIX_MAX];
static char err[256];

/* The rows of a matrix, with users and conduitd's PSS given per row. */
static int
make(const char *cores, const char *workers, const char *instances, const char *cache,
     const int *users, const double *pss)
{
    int n = matrix_expand(cores, workers, instances, cache, 2, mx, MATRIX_MAX, err, sizeof(err));

    ck_assert_int_le(n, 8);
    memset(rows, 0, sizeof(rows));
    for (int i = 0; i < n; i++) {
        rows[i].m = mx[i];
        rows[i].ran = 1;
        rows[i].users = users[i];
        rows[i].pss_mb[AG_SERVER] = pss[i];
        rows[i].rps = users[i] / 4.0;
        rows[i].p95_ms = 100;
    }
    return n;
}

/* The paragraph as a string (the caller frees it). */
static char *
paragraph(int n, int *sentences)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    *sentences = findings_write(f, rows, n);
    fclose(f);
    return buf;
}

#define SAYS(text, want)                                                                           \
    ck_assert_msg(strstr(text, want) != NULL, "missing '%s' in: %s", want, text)

START_TEST(workers_on_two_cores)
{
    /* c2: 1, 2 and 5 workers, one instance, cache off. */
    int users[] = {1000, 1200, 900};
    double pss[] = {20, 30, 60};
    int n = make("2", "1,n,2n+1", "1", "off", users, pss), s;
    char *p;

    ck_assert_int_eq(n, 3);
    ck_assert_int_eq(findings_winner(rows, n), 1);
    p = paragraph(n, &s);
    SAYS(p,
         "**c2 1x2 cache-off** served the most users: 1,200 (300 req/s, p95 100 ms, "
         "conduitd and nginx 30.0 MB PSS), 20.0 % more than the next, c2 1x1 cache-off (1,000).");
    SAYS(p, "Of the 1 group of configurations that differ only in the worker count, n workers per "
            "instance won 1");
    /* Pairs (1,2): 10 MB/worker, +20 %; (1,5): 10 MB, -10 %; (2,5): 10 MB, -25 %. */
    SAYS(p, "Each extra worker cost 10.0 MB of PSS (conduitd, mean of 3 pairs) and changed the "
            "users served by -5.0 %.");
    ck_assert_ptr_null(strstr(p, "instance behind nginx"));
    ck_assert_ptr_null(strstr(p, "The cache"));
    ck_assert_ptr_null(strstr(p, "One core more"));
    ck_assert_int_eq(s, 3);
    free(p);
}
END_TEST

START_TEST(instances_cache_and_cores)
{
    /* c1 and c2, 1 worker, 1 and 2 instances, cache off and on. */
    int users[] = {1000, 1100, 800, 800, 1800, 2200, 1600, 1600};
    double pss[] = {20, 22, 90, 92, 20, 22, 90, 92};
    int n = make("1,2", "1", "1,2", "off,on", users, pss), s;
    char *p;

    ck_assert_int_eq(n, 8);
    ck_assert_str_eq(rows[5].m.label, "c2 1x1 cache-on");
    ck_assert_int_eq(findings_winner(rows, n), 5);
    /* Twins: 1800/1000, 2200/1100, 1600/800, 1600/800. */
    ck_assert_double_eq_tol(findings_scaling(rows, n, 4), 1.8, 1e-9);
    ck_assert_double_eq_tol(findings_scaling(rows, n, 5), 2.0, 1e-9);
    ck_assert_double_eq_tol(findings_scaling(rows, n, 0), 0, 1e-9);
    p = paragraph(n, &s);
    SAYS(p, "**c2 1x1 cache-on** served the most users: 2,200");
    SAYS(p, "22.2 % more than the next, c2 1x1 cache-off (1,800)");
    /* 1->2 instances: -20, -27.27, -11.11, -27.27 % => -21.4 %; +70 MB each. */
    SAYS(p, "A second instance of the same workers behind nginx changed the users by -21.4 % at "
            "+70.0 MB of PSS (conduitd and nginx, mean of 4 pairs).");
    /* Cache: +10, 0, +22.2, 0 % => +8.1 %. */
    SAYS(p, "The cache changed the users by +8.1 % (mean of 4 pairs).");
    SAYS(p, "One core more multiplied the users by 1.95 (mean of 4 pairs).");
    ck_assert_ptr_null(strstr(p, "Each extra worker"));
    ck_assert_ptr_null(strstr(p, "differ only in the worker count"));
    free(p);
}
END_TEST

START_TEST(twins_by_name)
{
    /* 1,n: on one core both are 1 worker; on two, n is 2: twin of "1,n" by n. */
    int users[] = {1000, 1500, 2600};
    double pss[] = {20, 20, 30};
    int n = make("1,2", "1,n", "1", "off", users, pss);

    ck_assert_int_eq(n, 3);
    ck_assert_str_eq(rows[0].m.spec, "1,n");
    ck_assert_double_eq_tol(findings_scaling(rows, n, 1), 1.5, 1e-9);
    ck_assert_double_eq_tol(findings_scaling(rows, n, 2), 2.6, 1e-9);
}
END_TEST

START_TEST(spread_over_instances)
{
    int users[] = {1000, 900, 1100, 700};
    double pss[] = {20, 80, 30, 120};
    int n = make("2", "1,2", "1,2", "off", users, pss), s;
    char *p;

    /* Rows: 1x1, 2x1, 1x2, 2x2: 1x2 against 2x1 has the same 2 workers. */
    ck_assert_int_eq(n, 4);
    p = paragraph(n, &s);
    SAYS(p, "The same workers spread over more instances (as 2x1 against 1x2) changed the users by "
            "-18.2 % at +50.0 MB (mean of 1 pairs).");
    free(p);
}
END_TEST

START_TEST(nothing_passed)
{
    int users[] = {0, 0};
    double pss[] = {0, 0};
    int n = make("1", "1", "1,2", "off", users, pss), s;
    char *p;

    ck_assert_int_eq(findings_winner(rows, n), -1);
    p = paragraph(n, &s);
    SAYS(p, "No configuration passed a level");
    ck_assert_int_eq(s, 1);
    free(p);
}
END_TEST

START_TEST(tie_goes_to_less_memory)
{
    int users[] = {1000, 1000};
    double pss[] = {40, 25};
    int n = make("1", "1", "1", "off,on", users, pss);

    ck_assert_int_eq(findings_winner(rows, n), 1);
}
END_TEST

START_TEST(tie_is_said)
{
    int users[] = {1000, 1000};
    double pss[] = {40, 25};
    int n = make("1", "1", "1", "off,on", users, pss), s;
    char *p = paragraph(n, &s);

    SAYS(p, "**c1 1x1 cache-on** served the most users: 1,000");
    SAYS(p, "as many as c1 1x1 cache-off, which used more memory.");
    ck_assert_ptr_null(strstr(p, "0.0 % more"));
    free(p);
}
END_TEST

static Suite *
findings_suite(void)
{
    Suite *s = suite_create("findings");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, workers_on_two_cores);
    tcase_add_test(tc, instances_cache_and_cores);
    tcase_add_test(tc, twins_by_name);
    tcase_add_test(tc, spread_over_instances);
    tcase_add_test(tc, nothing_passed);
    tcase_add_test(tc, tie_goes_to_less_memory);
    tcase_add_test(tc, tie_is_said);
    suite_add_tcase(s, tc);
    return s;
}

#include "check_main.h"
CHECK_MAIN(findings_suite)
