/*
 * Unit tests for master/options.c: flags, and how defaults, the file, the
 * environment and the flags combine (options_resolve).
 */
#include "master/options.h"

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SECRET "0123456789abcdef0123456789abcdef-xyz"

static struct options o;
static struct config c;
static char err[CONFIG_ERR_LEN];
static char path[64];

static int
parse(int argc, const char **argv)
{
    return options_parse(&o, argc, (char **)argv, err, sizeof(err));
}

static void
write_file(const char *text)
{
    int fd;
    FILE *f;

    snprintf(path, sizeof(path), "/tmp/test_options.XXXXXX");
    fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
}

static void
setup(void)
{
    memset(&o, 0, sizeof(o));
    path[0] = '\0';
    unsetenv("CONDUITD_JWT_SECRET");
}

static void
teardown(void)
{
    options_free(&o);
    if (path[0])
        unlink(path);
}

START_TEST(test_actions)
{
    const char *v[] = {"conduitd", "-V"};
    ck_assert_int_eq(parse(2, v), 0);
    ck_assert_int_eq(o.action, OPTIONS_VERSION);
    options_free(&o);
    const char *t[] = {"conduitd", "-t", "-c", "x.conf"};
    ck_assert_int_eq(parse(4, t), 0);
    ck_assert_int_eq(o.action, OPTIONS_TEST);
    ck_assert_str_eq(o.config_file, "x.conf");
    options_free(&o);
    const char *s[] = {"conduitd", "-s", "reload"};
    ck_assert_int_eq(parse(3, s), 0);
    ck_assert_int_eq(o.action, OPTIONS_SIGNAL);
    options_free(&o);
    const char *bad[] = {"conduitd", "-s", "explode"};
    ck_assert_int_lt(parse(3, bad), 0);
    ck_assert_ptr_nonnull(strstr(err, "explode"));
}
END_TEST

START_TEST(test_unknown_flag)
{
    const char *v[] = {"conduitd", "--frobnicate"};
    ck_assert_int_lt(parse(2, v), 0);
    const char *m[] = {"conduitd", "-w"};
    ck_assert_int_lt(parse(2, m), 0);
}
END_TEST

START_TEST(test_flags_to_config)
{
    const char *v[] = {"conduitd", "-w", "3", "-b", "127.0.0.1:1", "-b", "127.0.0.1:2",
                       "--reuseport", "--pool", "7", "--timeout", "5", "--dev"};
    ck_assert_int_eq(parse(13, v), 0);
    ck_assert_msg(options_resolve(&o, &c, err, sizeof(err)) == 0, "%s", err);
    ck_assert_int_eq(c.workers, 3);
    ck_assert_int_eq(c.nlisten, 2);
    ck_assert_str_eq(c.listen[1], "127.0.0.1:2");
    ck_assert_int_eq(c.reuseport, 1);
    ck_assert_int_eq(c.pool, 7);
    ck_assert_int_eq(c.timeout, 5);
    ck_assert_str_eq(c.jwt_secret, CONFIG_DEV_JWT_SECRET);
    config_free(&c);
}
END_TEST

START_TEST(test_precedence)
{
    write_file("workers = 2\npool = 5\nlisten = 127.0.0.1:7000\njwt_secret = file-secret-"
               "file-secret-file-secret-file\n");
    const char *v[] = {"conduitd", "-c", path, "--pool", "9", "-b", "127.0.0.1:7001"};
    ck_assert_int_eq(parse(7, v), 0);
    setenv("CONDUITD_JWT_SECRET", SECRET, 1);
    ck_assert_msg(options_resolve(&o, &c, err, sizeof(err)) == 0, "%s", err);
    ck_assert_int_eq(c.workers, 2);                 /* file over default */
    ck_assert_int_eq(c.pool, 9);                    /* flag over file */
    ck_assert_str_eq(c.jwt_secret, SECRET);         /* environment over file */
    ck_assert_int_eq(c.nlisten, 1);                 /* -b replaces the file's list */
    ck_assert_str_eq(c.listen[0], "127.0.0.1:7001");
    config_free(&c);
}
END_TEST

START_TEST(test_resolve_errors)
{
    write_file("workers = 2\npool = many\n");
    const char *v[] = {"conduitd", "-c", path};
    ck_assert_int_eq(parse(3, v), 0);
    ck_assert_int_lt(options_resolve(&o, &c, err, sizeof(err)), 0);
    ck_assert_ptr_nonnull(strstr(err, ":2:"));
    options_free(&o);
    const char *n[] = {"conduitd"};
    ck_assert_int_eq(parse(1, n), 0);
    ck_assert_int_lt(options_resolve(&o, &c, err, sizeof(err)), 0);
    ck_assert_ptr_nonnull(strstr(err, "jwt_secret"));
    options_free(&o);
    const char *bad[] = {"conduitd", "--pool", "0", "--dev"};
    ck_assert_int_eq(parse(4, bad), 0);
    ck_assert_int_lt(options_resolve(&o, &c, err, sizeof(err)), 0);
}
END_TEST

START_TEST(test_signal_needs_no_secret)
{
    const char *v[] = {"conduitd", "-s", "stop", "--pid", "/tmp/x.pid"};
    ck_assert_int_eq(parse(5, v), 0);
    ck_assert_msg(options_resolve(&o, &c, err, sizeof(err)) == 0, "%s", err);
    ck_assert_str_eq(c.pid_file, "/tmp/x.pid");
    config_free(&c);
}
END_TEST

START_TEST(test_signal_numbers)
{
    ck_assert_int_eq(options_signal_number("reload"), SIGHUP);
    ck_assert_int_eq(options_signal_number("stop"), SIGTERM);
    ck_assert_int_eq(options_signal_number("quit"), SIGQUIT);
    ck_assert_int_eq(options_signal_number("reopen"), SIGUSR1);
    ck_assert_int_eq(options_signal_number("kill"), -1);
}
END_TEST

static Suite *
options_suite(void)
{
    Suite *s = suite_create("options");
    TCase *tc = tcase_create("core");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_actions);
    tcase_add_test(tc, test_unknown_flag);
    tcase_add_test(tc, test_flags_to_config);
    tcase_add_test(tc, test_precedence);
    tcase_add_test(tc, test_resolve_errors);
    tcase_add_test(tc, test_signal_needs_no_secret);
    tcase_add_test(tc, test_signal_numbers);
    suite_add_tcase(s, tc);
    return s;
}

#include "check_main.h"
CHECK_MAIN(options_suite)
