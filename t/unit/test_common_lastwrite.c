/*
 * Unit tests for common/lastwrite.c: the shared table of when each user
 * last wrote.  A user's time only rises; a lookup never answers older than
 * the truth (a user whose slot was taken has a write older than the
 * horizon, or its time is in the overflow); a full neighbourhood spills
 * into the overflow time, which every lookup then returns.
 */
#include "common/lastwrite.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#define SEC 1000000000LL

static struct lastwrite *
table(void)
{
    struct lastwrite *t = calloc(1, sizeof(*t));

    ck_assert_ptr_nonnull(t);
    return t;
}

START_TEST(test_note_and_get)
{
    struct lastwrite *t = table();

    ck_assert_int_eq(lastwrite_get(t, 7), 0);
    lastwrite_note(t, 7, 100 * SEC, 5 * SEC);
    ck_assert_int_eq(lastwrite_get(t, 7), 100 * SEC);
    ck_assert_int_eq(lastwrite_get(t, 8), 0);
    /* Later raises, earlier (a slower worker's note) does not lower. */
    lastwrite_note(t, 7, 103 * SEC, 5 * SEC);
    lastwrite_note(t, 7, 101 * SEC, 5 * SEC);
    ck_assert_int_eq(lastwrite_get(t, 7), 103 * SEC);
    /* Anonymous (0) and nonsense ids record nothing. */
    lastwrite_note(t, 0, 200 * SEC, 5 * SEC);
    lastwrite_note(t, -3, 200 * SEC, 5 * SEC);
    ck_assert_int_eq(lastwrite_get(t, 0), 0);
    ck_assert_int_eq(t->overflow_ns, 0);
    free(t);
}
END_TEST

/* Many users: each finds its own time (the ids spread over the table). */
START_TEST(test_many_users)
{
    struct lastwrite *t = table();
    int64_t n = LASTWRITE_SLOTS / 2;

    for (int64_t u = 1; u <= n; u++)
        lastwrite_note(t, u, (1000 + u) * SEC, 5 * SEC);
    for (int64_t u = 1; u <= n; u++)
        ck_assert_int_ge(lastwrite_get(t, u), (1000 + u) * SEC);
    ck_assert_int_eq(lastwrite_get(t, n + 1), t->overflow_ns);
    free(t);
}
END_TEST

/*
 * More recent writers than the table holds: the ones without a slot go to
 * the overflow, so no recent writer is ever answered "never".  Once their
 * writes are older than the horizon, slots are reused.
 */
START_TEST(test_overflow_and_reuse)
{
    struct lastwrite *t = table();
    int64_t n = LASTWRITE_SLOTS * 2;

    for (int64_t u = 1; u <= n; u++)
        lastwrite_note(t, u, 1000 * SEC, 5 * SEC);
    ck_assert_int_eq(t->overflow_ns, 1000 * SEC);
    for (int64_t u = 1; u <= n; u++)
        ck_assert_int_eq(lastwrite_get(t, u), 1000 * SEC);
    /* Ten seconds on, with a 5 s horizon: new writers take the old slots. */
    t->overflow_ns = 0; /* as if that write were long past */
    for (int64_t u = n + 1; u <= n + LASTWRITE_SLOTS / 2; u++)
        lastwrite_note(t, u, 1010 * SEC, 5 * SEC);
    ck_assert_int_eq(t->overflow_ns, 0);
    for (int64_t u = n + 1; u <= n + LASTWRITE_SLOTS / 2; u++)
        ck_assert_int_eq(lastwrite_get(t, u), 1010 * SEC);
    free(t);
}
END_TEST

/* A slot being handed over reads as "now" for whoever it names. */
START_TEST(test_taking_is_conservative)
{
    struct lastwrite *t = table();
    int found = 0;

    lastwrite_note(t, 42, 100 * SEC, 5 * SEC);
    for (int i = 0; i < LASTWRITE_SLOTS; i++) {
        if (t->slot[i].user == 42) {
            t->slot[i].at_ns = INT64_MAX; /* mid-take */
            found = 1;
        }
    }
    ck_assert(found);
    ck_assert_int_eq(lastwrite_get(t, 42), INT64_MAX);
    /* A writer of 42 meeting it records its write elsewhere, not lost. */
    lastwrite_note(t, 42, 200 * SEC, 5 * SEC);
    ck_assert_int_ge(lastwrite_get(t, 42), 200 * SEC);
    free(t);
}
END_TEST

static Suite *
lastwrite_suite(void)
{
    Suite *s = suite_create("lastwrite");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, test_note_and_get);
    tcase_add_test(tc, test_many_users);
    tcase_add_test(tc, test_overflow_and_reuse);
    tcase_add_test(tc, test_taking_is_conservative);
    suite_add_tcase(s, tc);
    return s;
}

#include "check_main.h"
CHECK_MAIN(lastwrite_suite)
