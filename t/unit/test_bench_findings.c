/*
 * Unit tests for experiment's findings (bench/findings.c): the paragraph
 * of report.md is computed from the numbers, so made-up rows with known
 * answers must give exactly those answers: the winner and its margin, the
 * worker count that won each group, the memory of an extra worker and of
 * a second instance, the cache's and a second core's gain; a comparison
 * the matrix lacks is not written at all.  With repeats, a configuration
 * is called better only where the repeats separate, and a disturbed one
 * (or one whose threads strayed from their cores) is named and left out.
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
    SAYS(p, "Each extra worker changed conduitd's PSS by +10.0 MB (mean of 3 pairs, each at its "
            "best pass, so with the users' connections in it) and the users served by -5.0 %.");
    ck_assert_ptr_null(strstr(p, "instance behind nginx"));
    ck_assert_ptr_null(strstr(p, "The cache"));
    ck_assert_ptr_null(strstr(p, "One core more"));
    /* No count is named twice on two cores: no word of it (the idle run's report had it). */
    ck_assert_ptr_null(strstr(p, "named twice"));
    ck_assert_int_eq(s, 3);
    free(p);
}
END_TEST

START_TEST(a_count_named_twice_is_said)
{
    /* On one core, 1 and n are one configuration, "1,n"; 2n+1 is 3 workers. */
    int users[] = {1000, 600, 2000, 1500, 900};
    double pss[] = {20, 40, 20, 30, 60};
    int n = make("1,2", "1,n,2n+1", "1", "off", users, pss), s;
    char *p;

    ck_assert_int_eq(n, 5);
    ck_assert_str_eq(rows[0].m.spec, "1,n");
    p = paragraph(n, &s);
    SAYS(p, "1 worker per instance won 2");
    SAYS(p, "(a count named twice on one core, 1 and n, wins for both).");
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

/* Gives row i the repeats' users (its users become their median, via findings_merge). */
static void
repeats(int i, const double *users, int k)
{
    struct exp_row reps[SPREAD_MAX];

    for (int r = 0; r < k; r++) {
        reps[r] = rows[i];
        reps[r].users = (int)users[r];
        reps[r].rps = users[r] / 4.0;
    }
    findings_merge(reps, k, &rows[i]);
}

START_TEST(merge_takes_the_median_repeat)
{
    int users[] = {0};
    double pss[] = {20};
    struct exp_row reps[3];

    make("1", "1", "1", "off", users, pss);
    for (int r = 0; r < 3; r++) {
        reps[r] = rows[0];
        reps[r].users = (int[]){1200, 900, 1000}[r];
        reps[r].rps = reps[r].users / 4.0;
        reps[r].us_per_req[AG_POSTGRES] = 100 + r;
    }
    reps[1].disturbed_levels = 2;
    reps[2].disturbed_levels = 1;
    reps[2].disturbed = 1;
    findings_merge(reps, 3, &rows[1]);
    ck_assert_int_eq(rows[1].nrep, 3);
    ck_assert_int_eq(rows[1].users, 1000);
    ck_assert_double_eq(rows[1].rps, 250);
    ck_assert_double_eq(rows[1].rep_users[0], 1200);
    ck_assert_double_eq(rows[1].rep_users[1], 900);
    ck_assert_double_eq(rows[1].rep_us[AG_POSTGRES][1], 101);
    ck_assert_double_eq(rows[1].rep_pss_mb[2], 20);
    ck_assert_int_eq(rows[1].disturbed_levels, 3);
    ck_assert_int_eq(rows[1].disturbed, 1);
    ck_assert_int_eq(findings_usable(&rows[1]), 0);
    /* Of an even count, the lower middle. */
    findings_merge(reps, 2, &rows[1]);
    ck_assert_int_eq(rows[1].users, 900);
    ck_assert_int_eq(rows[1].disturbed, 0);
}
END_TEST

START_TEST(overlapping_repeats_are_no_difference)
{
    /* 1 and 2 workers on two cores; the second's median is higher, but the ranges overlap. */
    int users[] = {0, 0};
    double pss[] = {20, 30};
    int n = make("2", "1,n", "1", "off", users, pss), s;
    char *p;

    repeats(0, (double[]){17000, 18750, 17500}, 3);
    repeats(1, (double[]){18000, 19000, 18200}, 3);
    ck_assert_int_eq(findings_compare(&rows[1], &rows[0]), 0);
    p = paragraph(n, &s);
    SAYS(p, "**c2 1x2 cache-off** served the most users: 18,200 (median of 3 repeats, 18,000 to "
            "19,000)");
    SAYS(p, "but no difference was measured from the next, c2 1x1 cache-off (17,500 (median of 3 "
            "repeats, 17,000 to 18,750)): their repeats overlap.");
    SAYS(p, "no difference was measured in 1");
    SAYS(p, "No difference was measured in any pair: the means are noise.");
    SAYS(p, "worst repeat of one configuration beats the best of the other");
    ck_assert_ptr_null(strstr(p, "% more than the next"));
    ck_assert_ptr_null(strstr(p, "won 1"));
    free(p);
}
END_TEST

START_TEST(separated_repeats_name_a_winner)
{
    int users[] = {0, 0};
    double pss[] = {20, 30};
    int n = make("2", "1,n", "1", "off", users, pss), s;
    char *p;

    repeats(0, (double[]){1000, 1050, 980}, 3);
    repeats(1, (double[]){1200, 1100, 1150}, 3);
    ck_assert_int_eq(findings_compare(&rows[1], &rows[0]), 1);
    p = paragraph(n, &s);
    SAYS(p, "**c2 1x2 cache-off** served the most users: 1,150");
    SAYS(p, "15.0 % more than the next, c2 1x1 cache-off (1,000 (median of 3 repeats, 980 to "
            "1,050)), a difference its repeats show.");
    SAYS(p, "n workers per instance won 1");
    SAYS(p, "By pair: more users in 1, fewer in 0, no difference measured in 0.");
    free(p);
}
END_TEST

START_TEST(disturbed_and_stray_rows_are_left_out)
{
    /* The cache-on row has the most users, but it was disturbed; two cores strayed. */
    int users[] = {1000, 5000, 1800, 1900};
    double pss[] = {20, 20, 20, 20};
    int n = make("1,2", "1", "1", "off,on", users, pss), s;
    char *p;

    rows[1].disturbed = 1;
    rows[1].disturbed_levels = 2;
    rows[3].pin_failed = 1;
    ck_assert_int_eq(findings_winner(rows, n), 2);
    ck_assert_double_eq(findings_scaling(rows, n, 3), 0);
    p = paragraph(n, &s);
    SAYS(p, "c1 1x1 cache-on was disturbed (a level found the machine busy with other work, and "
            "again when it was played again: see its levels): no conclusion is drawn from it.");
    SAYS(p, "c2 1x1 cache-on ran threads outside their cores: no conclusion is drawn from it.");
    SAYS(p, "**c2 1x1 cache-off** served the most users: 1,800");
    ck_assert_ptr_null(strstr(p, "The cache changed"));
    SAYS(p, "One core more multiplied the users by 1.80 (mean of 1 pairs).");
    free(p);
    /* Nothing left to conclude from. */
    rows[0].disturbed = rows[2].disturbed = 1;
    p = paragraph(n, &s);
    SAYS(p, "No configuration passed a level undisturbed");
    free(p);
}
END_TEST

START_TEST(the_only_undisturbed_row_wins_nothing)
{
    /*
     * As a real run went: 1, n and 2n+1 workers all passed 15,000 users,
     * but 1 and 2n+1 were disturbed.  n is not "the most", and no worker
     * count wins a group where it was the only one measured.
     */
    int users[] = {0, 0, 0};
    double pss[] = {43, 44, 47};
    int n = make("2", "1,n,2n+1", "1", "off", users, pss), s;
    char *p;

    repeats(0, (double[]){15000, 15000, 15000}, 3);
    repeats(1, (double[]){15000, 14375, 18750}, 3);
    repeats(2, (double[]){15000, 14375, 15000}, 3);
    rows[0].disturbed = rows[2].disturbed = 1;
    p = paragraph(n, &s);
    SAYS(p, "**c2 1x2 cache-off** is the only configuration with a result to compare: 15,000");
    SAYS(p, "; it is ranked against none.");
    ck_assert_ptr_null(strstr(p, "served the most users"));
    ck_assert_ptr_null(strstr(p, "no other configuration passed a level"));
    ck_assert_ptr_null(strstr(p, "won 1"));
    ck_assert_ptr_null(strstr(p, "groups of configurations that differ only"));
    ck_assert_ptr_null(strstr(p, "group of configurations that differ only"));
    free(p);
}
END_TEST

static Suite *
findings_suite(void)
{
    Suite *s = suite_create("findings");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, workers_on_two_cores);
    tcase_add_test(tc, a_count_named_twice_is_said);
    tcase_add_test(tc, instances_cache_and_cores);
    tcase_add_test(tc, twins_by_name);
    tcase_add_test(tc, spread_over_instances);
    tcase_add_test(tc, nothing_passed);
    tcase_add_test(tc, tie_goes_to_less_memory);
    tcase_add_test(tc, tie_is_said);
    tcase_add_test(tc, merge_takes_the_median_repeat);
    tcase_add_test(tc, overlapping_repeats_are_no_difference);
    tcase_add_test(tc, separated_repeats_name_a_winner);
    tcase_add_test(tc, disturbed_and_stray_rows_are_left_out);
    tcase_add_test(tc, the_only_undisturbed_row_wins_nothing);
    suite_add_tcase(s, tc);
    return s;
}

#include "check_main.h"
CHECK_MAIN(findings_suite)
