/*
 * Unit tests for the memory figures of bench/acct.c, read by a thread of
 * their own: a child that holds 64 MB of touched private memory is seen
 * in its group's PSS and RSS, mean and max, over a level of a second and
 * a half (several samples) and over a level too short for the thread's
 * first sample (acct_end takes one); a level without members has no
 * samples and zero figures; the groups keep their own figures; and
 * acct_free stops a thread still running.
 */
#include "bench/acct.h"

#include <check.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MB (1024.0 * 1024.0)
#define HELD (64 * 1024 * 1024)

/* A child that touches HELD bytes of its own, says so on a pipe, and waits. */
static pid_t
holder(void)
{
    int p[2];
    char c;
    pid_t pid;

    ck_assert_int_eq(pipe(p), 0);
    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        char *m = mmap(NULL, HELD, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

        if (m == MAP_FAILED)
            _exit(1);
        memset(m, 1, HELD);
        if (write(p[1], "x", 1) != 1)
            _exit(1);
        for (;;)
            pause();
    }
    close(p[1]);
    ck_assert_int_eq(read(p[0], &c, 1), 1);
    close(p[0]);
    return pid;
}

static void
reap(pid_t pid)
{
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

static void
sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

    nanosleep(&ts, NULL);
}

START_TEST(memory_over_a_level)
{
    struct acct a;
    struct acct_result r;
    pid_t pid = holder();

    acct_init(&a);
    ck_assert_int_eq(acct_add_root(&a, AG_SERVER, pid), 0);
    acct_begin(&a);
    for (int i = 0; i < 3; i++) {
        acct_sample(&a);
        sleep_ms(500);
    }
    acct_end(&a, &r);
    /* A second a sample: the first at once, then at 1 s. */
    ck_assert_int_ge(r.mem_samples, 2);
    ck_assert_int_eq(r.samples, 3);
    ck_assert_double_ge(r.pss_mean[AG_SERVER], 60 * MB);
    ck_assert_double_ge(r.pss_max[AG_SERVER], r.pss_mean[AG_SERVER]);
    ck_assert_double_ge(r.rss_mean[AG_SERVER], 60 * MB);
    ck_assert_int_eq(r.procs_max[AG_SERVER], 1);
    /* The other groups have no members. */
    ck_assert_double_eq(r.pss_max[AG_POSTGRES], 0);
    ck_assert_int_eq(r.procs_max[AG_NGINX], 0);
    acct_free(&a);
    reap(pid);
}
END_TEST

START_TEST(memory_of_a_short_level)
{
    struct acct a;
    struct acct_result r;
    pid_t pid = holder();

    acct_init(&a);
    ck_assert_int_eq(acct_add_root(&a, AG_POSTGRES, pid), 0);
    /* Twice: a second level starts the thread again from nothing. */
    for (int level = 0; level < 2; level++) {
        acct_begin(&a);
        acct_sample(&a);
        acct_end(&a, &r);
        ck_assert_int_ge(r.mem_samples, 1);
        ck_assert_double_ge(r.pss_mean[AG_POSTGRES], 60 * MB);
        ck_assert_double_ge(r.rss_max[AG_POSTGRES], 60 * MB);
    }
    acct_free(&a);
    reap(pid);
}
END_TEST

START_TEST(no_members_no_samples)
{
    struct acct a;
    struct acct_result r;

    acct_init(&a);
    acct_begin(&a);
    sleep_ms(200);
    acct_end(&a, &r);
    ck_assert_int_eq(r.mem_samples, 0);
    for (int g = 0; g < AG_NGROUPS; g++)
        ck_assert_double_eq(r.pss_mean[g], 0);
    acct_free(&a);
}
END_TEST

START_TEST(free_stops_a_running_thread)
{
    struct acct a;
    pid_t pid = holder();

    acct_init(&a);
    ck_assert_int_eq(acct_add_root(&a, AG_SERVER, pid), 0);
    acct_begin(&a);
    acct_sample(&a);
    /* No acct_end: acct_free joins the thread (the sanitizers would see
       it run on freed memory, or leak). */
    acct_free(&a);
    reap(pid);
}
END_TEST

static Suite *
acct_suite(void)
{
    Suite *s = suite_create("bench_acct");
    TCase *tc = tcase_create("memory");

    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, memory_over_a_level);
    tcase_add_test(tc, memory_of_a_short_level);
    tcase_add_test(tc, no_members_no_samples);
    tcase_add_test(tc, free_stops_a_running_thread);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(acct_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
