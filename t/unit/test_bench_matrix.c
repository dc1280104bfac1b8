/*
 * Unit tests for experiment's matrix (bench/matrix.c): the configurations
 * four lists make, in a fixed order; 1 and n on one core played once under
 * both names; every bad list refused with the flag named; the estimate.
 */
#include "bench/matrix.h"

#include <check.h>
#include <string.h>

static struct matrix_config m[MATRIX_MAX];
static char err[256];

START_TEST(full_default_matrix)
{
    /* The default on two cores: 1,n,2n+1 is {1,3} on one core, {1,2,5} on two. */
    int n = matrix_expand("1,2", "1,n,2n+1", "1,2", "off,on", 2, m, MATRIX_MAX, err, sizeof(err));

    ck_assert_int_eq(n, 20);
    ck_assert_str_eq(m[0].label, "c1 1x1 cache-off");
    ck_assert_str_eq(m[1].label, "c1 1x1 cache-on");
    ck_assert_str_eq(m[2].label, "c1 2x1 cache-off");
    ck_assert_str_eq(m[0].spec, "1,n");
    ck_assert_str_eq(m[4].label, "c1 1x3 cache-off");
    ck_assert_str_eq(m[4].spec, "2n+1");
    ck_assert_str_eq(m[8].label, "c2 1x1 cache-off");
    ck_assert_str_eq(m[8].spec, "1");
    ck_assert_str_eq(m[12].label, "c2 1x2 cache-off");
    ck_assert_str_eq(m[12].spec, "n");
    ck_assert_str_eq(m[19].label, "c2 2x5 cache-on");
    ck_assert_str_eq(m[19].slug, "c2-2x5-cache-on");
    ck_assert_int_eq(m[19].workers, 5);
    ck_assert_int_eq(m[19].instances, 2);
    ck_assert_int_eq(m[19].cache, 1);
    ck_assert_int_eq(m[19].cores, 2);
    /* No configuration twice. */
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            ck_assert_str_ne(m[i].label, m[j].label);
}
END_TEST

START_TEST(specs)
{
    int n = matrix_expand("1", "1,n", "1", "off", 4, m, MATRIX_MAX, err, sizeof(err));

    ck_assert_int_eq(n, 1);
    ck_assert(matrix_has_spec(&m[0], "1"));
    ck_assert(matrix_has_spec(&m[0], "n"));
    /* An item is a whole item: "n" is not found in "2n+1", nor "1" in "2n+1". */
    n = matrix_expand("1", "2n+1", "1", "off", 4, m, MATRIX_MAX, err, sizeof(err));
    ck_assert_int_eq(n, 1);
    ck_assert(!matrix_has_spec(&m[0], "n"));
    ck_assert(!matrix_has_spec(&m[0], "1"));
    ck_assert(matrix_has_spec(&m[0], "2n+1"));
}
END_TEST

START_TEST(subsets)
{
    int n = matrix_expand("2", "n", "1", "on", 2, m, MATRIX_MAX, err, sizeof(err));

    ck_assert_int_eq(n, 1);
    ck_assert_str_eq(m[0].label, "c2 1x2 cache-on");
    n = matrix_expand("2,1", "4", "2,1", "on,off", 2, m, MATRIX_MAX, err, sizeof(err));
    ck_assert_int_eq(n, 8);
    ck_assert_str_eq(m[0].label, "c2 2x4 cache-on");
    ck_assert_str_eq(m[7].label, "c1 1x4 cache-off");
}
END_TEST

static void
refused(const char *cores, const char *workers, const char *instances, const char *cache,
        const char *says)
{
    err[0] = '\0';
    ck_assert_int_eq(
        matrix_expand(cores, workers, instances, cache, 2, m, MATRIX_MAX, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, says) != NULL, "'%s' does not say '%s'", err, says);
}

START_TEST(bad_lists)
{
    refused("3", "1", "1", "off", "--cores 3: want distinct core counts from 1 to 2");
    refused("0", "1", "1", "off", "--cores 0");
    refused("1,1", "1", "1", "off", "--cores 1,1");
    refused("1,x", "1", "1", "off", "--cores 1,x");
    refused("", "1", "1", "off", "--cores");
    refused("1", "1,zz", "1", "off", "--workers 1,zz");
    refused("1", "0", "1", "off", "--workers 0");
    refused("1", "1", "0", "off", "--instances 0");
    refused("1", "1", "17", "off", "--instances 17");
    refused("1", "1", "1", "maybe", "--cache maybe: want off, on or off,on");
    refused("1", "1", "1", "on,on", "--cache on,on");
    /* 16 workers x 16 instances x 2 = 512 configurations: more than 64. */
    refused("1", "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16", "1,2,3,4", "off,on",
            "too many configurations");
}
END_TEST

START_TEST(estimate)
{
    /* Start and stop 5 s, warm-up ramp 6 + 6, then 9 levels of 6 + 1 + 12. */
    ck_assert_double_eq_tol(matrix_config_max_s(6, 1, 12, 6, 8), 5 + 12 + 9 * 19, 1e-9);
    /* No warm-up: no warm-up ramp either. */
    ck_assert_double_eq_tol(matrix_config_max_s(6, 1, 12, 0, 8), 5 + 9 * 19, 1e-9);
}
END_TEST

START_TEST(budget)
{
    int r;
    double hold;

    /* 6 s ramps and warm-up, 8 levels: a repeat of one configuration is
       5 + 12 + 9 x (7 + hold) s; 20 configurations. */
    hold = 12;
    /* 2 h = 7,200 s: 3 x 20 x (80 + 9 x 5) = 7,500 is too much even at 5 s;
       2 x 20 x (80 + 9 x 12) = 7,520 too, 2 x 20 x (80 + 9 x 8) = 6,080 fits. */
    ck_assert_int_eq(matrix_fit_budget(7200, 20, 6, 6, 8, 0, 3, &r, &hold), 0);
    ck_assert_int_eq(r, 2);
    ck_assert_double_eq(hold, 8);
    /* 5 h = 18,000 s: 3 x 20 x (80 + 9 x 20) = 15,600 fits at 20 s, 30 s does not (20,400). */
    ck_assert_int_eq(matrix_fit_budget(18000, 20, 6, 6, 8, 0, 3, &r, &hold), 0);
    ck_assert_int_eq(r, 3);
    ck_assert_double_eq(hold, 20);
    /* A hold given is kept: 3 x 2 x (80 + 9 x 12) = 1,128 s; 1,000 s fits 2 repeats (752). */
    hold = 12;
    ck_assert_int_eq(matrix_fit_budget(1000, 2, 6, 6, 8, 1, 3, &r, &hold), 0);
    ck_assert_int_eq(r, 2);
    ck_assert_double_eq(hold, 12);
    /* Room for the reference's five-minute holds. */
    ck_assert_int_eq(matrix_fit_budget(1e6, 4, 6, 6, 8, 0, 3, &r, &hold), 0);
    ck_assert_int_eq(r, 3);
    ck_assert_double_eq(hold, 300);
    /* Not even one repeat at 5 s: 20 x (80 + 9 x 5) = 2,500 s. */
    ck_assert_int_eq(matrix_fit_budget(2400, 20, 6, 6, 8, 0, 3, &r, &hold), -1);
    ck_assert_int_eq(r, 1);
    ck_assert_double_eq(hold, 5);
}
END_TEST

static Suite *
matrix_suite(void)
{
    Suite *s = suite_create("matrix");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, full_default_matrix);
    tcase_add_test(tc, specs);
    tcase_add_test(tc, subsets);
    tcase_add_test(tc, bad_lists);
    tcase_add_test(tc, estimate);
    tcase_add_test(tc, budget);
    suite_add_tcase(s, tc);
    return s;
}

#include "check_main.h"
CHECK_MAIN(matrix_suite)
