/*
 * Unit tests for common/settings.c: the file syntax, every kind of error a
 * user can make (each must name FILE:LINE: and say what is wrong), the
 * cross-key checks, -t's printout, and what a reload may not change.
 */
#include "common/settings.h"
#include "common/log.h"

#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SECRET39 "0123456789abcdef0123456789abcdef-secret"

static struct config cfg;
static char err[CONFIG_ERR_LEN];

static void
setup(void)
{
    config_init(&cfg);
    err[0] = '\0';
}

static void
teardown(void)
{
    config_free(&cfg);
}

static int
load(const char *text)
{
    err[0] = '\0';
    return config_load_text(&cfg, "t.conf", text, err, sizeof(err));
}

/* text must be refused with an error that starts with prefix and contains why. */
static void
expect_error(const char *text, const char *prefix, const char *why)
{
    struct config c;
    char e[CONFIG_ERR_LEN] = "";

    config_init(&c);
    ck_assert_msg(config_load_text(&c, "t.conf", text, e, sizeof(e)) == -1, "accepted: %s", text);
    ck_assert_msg(strncmp(e, prefix, strlen(prefix)) == 0, "error \"%s\" does not start \"%s\"", e,
                  prefix);
    ck_assert_msg(strstr(e, why) != NULL, "error \"%s\" does not say \"%s\"", e, why);
    config_free(&c);
}

/* What config_print writes, as a string (the caller frees it). */
static char *
printed(const struct config *c)
{
    char *text = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&text, &n);

    ck_assert_ptr_nonnull(f);
    config_print(c, f);
    ck_assert_int_eq(fclose(f), 0);
    return text;
}

START_TEST(test_defaults)
{
    ck_assert_int_eq(cfg.workers, 0);
    ck_assert_int_eq(cfg.nlisten, 1);
    ck_assert_str_eq(cfg.listen[0], "127.0.0.1:8080");
    ck_assert_int_eq(cfg.listen_default, 1);
    ck_assert_int_eq(cfg.daemonize, 0);
    ck_assert_ptr_null(cfg.pid_file);
    ck_assert_ptr_null(cfg.user);
    ck_assert_ptr_null(cfg.group);
    ck_assert_str_eq(cfg.log, "stderr");
    ck_assert_int_eq(cfg.log_level, LOG_LEVEL_INFO);
    ck_assert_int_eq(cfg.timeout, 30);
    ck_assert_int_eq(cfg.graceful_timeout, 30);
    ck_assert_int_eq(cfg.max_body_size, 1048576);
    ck_assert_int_eq(cfg.max_header_size, 16384);
    ck_assert_int_eq(cfg.idle_timeout, 60);
    ck_assert_int_eq(cfg.send_timeout, 60);
    ck_assert_ptr_null(cfg.db);
    ck_assert_int_eq(cfg.pool, 4);
    ck_assert_int_eq(cfg.pool_queue, 1024);
    ck_assert_int_eq(cfg.queue_timeout, 1000);
    ck_assert_ptr_null(cfg.jwt_secret);
    ck_assert_int_eq(cfg.jwt_lifetime, 2592000);
    ck_assert_int_eq(cfg.bcrypt_cost, 10);
    ck_assert_int_eq(cfg.bcrypt_threads, 2);
    ck_assert_int_eq(cfg.bcrypt_queue, 64);
    ck_assert_int_eq(cfg.dev, 0);
}
END_TEST

START_TEST(test_table)
{
    /* Names are unique, every key is documented and findable. */
    for (size_t i = 0; i < config_nkeys; i++) {
        ck_assert_ptr_eq(config_find(config_keys[i].name), &config_keys[i]);
        ck_assert_ptr_nonnull(config_keys[i].help);
        for (size_t j = 0; j < i; j++)
            ck_assert_str_ne(config_keys[i].name, config_keys[j].name);
    }
    ck_assert_ptr_null(config_find("wokers"));
    ck_assert_ptr_null(config_find(""));
    ck_assert_ptr_null(config_find("Workers"));
    ck_assert(config_find("jwt_secret")->flags & CONFIG_SECRET);
}
END_TEST

START_TEST(test_good_file)
{
    ck_assert_int_eq(load("# conduitd.conf\n"
                          "\n"
                          "   # an indented comment\n"
                          "workers = 3\n"
                          "listen = 127.0.0.1:9001\n"
                          "listen=[::1]:9002\n"
                          "daemonize = yes\n"
                          "pid_file = /run/conduitd.pid\n"
                          "user = www-data\n"
                          "group = www-data\n"
                          "allow_root = no\n"
                          "log = syslog\n"
                          "log_level = debug\n"
                          "reuseport = on\n"
                          "timeout = 1\n"
                          "graceful_timeout = 3600\n"
                          "max_body_size = 1024\n"
                          "max_header_size = 1048576\n"
                          "idle_timeout = 5\n"
                          "send_timeout = 9\n"
                          "db = host=/tmp dbname=conduit\n"
                          "pool = 8 # eight per worker\n"
                          "pool_queue = 0\n"
                          "jwt_secret = \"" SECRET39 "\"\n"
                          "jwt_lifetime = 60\n"
                          "bcrypt_cost = 4\n"
                          "bcrypt_threads = 64\n"
                          "dev = false\n"),
                     0);
    ck_assert_str_eq(err, "");
    ck_assert_int_eq(cfg.workers, 3);
    /* The first listen replaces the default; the second adds. */
    ck_assert_int_eq(cfg.nlisten, 2);
    ck_assert_str_eq(cfg.listen[0], "127.0.0.1:9001");
    ck_assert_str_eq(cfg.listen[1], "[::1]:9002");
    ck_assert_int_eq(cfg.daemonize, 1);
    ck_assert_str_eq(cfg.pid_file, "/run/conduitd.pid");
    ck_assert_str_eq(cfg.user, "www-data");
    ck_assert_str_eq(cfg.group, "www-data");
    ck_assert_int_eq(cfg.allow_root, 0);
    ck_assert_str_eq(cfg.log, "syslog");
    ck_assert_int_eq(cfg.log_level, LOG_LEVEL_DEBUG);
    ck_assert_int_eq(cfg.reuseport, 1);
    ck_assert_int_eq(cfg.timeout, 1);
    ck_assert_int_eq(cfg.graceful_timeout, 3600);
    ck_assert_int_eq(cfg.max_body_size, 1024);
    ck_assert_int_eq(cfg.max_header_size, 1048576);
    ck_assert_int_eq(cfg.idle_timeout, 5);
    ck_assert_int_eq(cfg.send_timeout, 9);
    ck_assert_str_eq(cfg.db, "host=/tmp dbname=conduit"); /* '=' in a value is kept */
    ck_assert_int_eq(cfg.pool, 8);
    ck_assert_int_eq(cfg.pool_queue, 0);
    ck_assert_str_eq(cfg.jwt_secret, SECRET39);
    ck_assert_int_eq(cfg.jwt_lifetime, 60);
    ck_assert_int_eq(cfg.bcrypt_cost, 4);
    ck_assert_int_eq(cfg.bcrypt_threads, 64);
    ck_assert_int_eq(cfg.dev, 0);
}
END_TEST

START_TEST(test_whitespace_and_line_ends)
{
    /* Tabs, CRLF, and a last line without a newline. */
    ck_assert_int_eq(load("\tworkers\t=\t7\t\r\n\r\n  pool   =   3\r\nlog_level = warning"), 0);
    ck_assert_int_eq(cfg.workers, 7);
    ck_assert_int_eq(cfg.pool, 3);
    ck_assert_int_eq(cfg.log_level, LOG_LEVEL_WARNING);
    ck_assert_int_eq(load(""), 0);
    ck_assert_int_eq(load("\n\n\n"), 0);
    ck_assert_int_eq(load("# only a comment"), 0);
}
END_TEST

START_TEST(test_quotes_and_comments)
{
    /* Quotes keep spaces and '#'; no escapes inside them. */
    ck_assert_int_eq(load("jwt_secret = \"  spaces # and a hash, 32 bytes+  \"\n"), 0);
    ck_assert_str_eq(cfg.jwt_secret, "  spaces # and a hash, 32 bytes+  ");
    ck_assert_int_eq(load("log = \"/var/log/a \\\"b\\\".log\"\n"), 0);
    ck_assert_str_eq(cfg.log, "/var/log/a \\\"b\\\".log");
    /* A comment after a quoted value. */
    ck_assert_int_eq(load("pid_file = \"/run/c d.pid\" # with a space\n"), 0);
    ck_assert_str_eq(cfg.pid_file, "/run/c d.pid");
    ck_assert_int_eq(load("pid_file = \"/run/x.pid\"   \t# spaced \"out\"\n"), 0);
    ck_assert_str_eq(cfg.pid_file, "/run/x.pid");
    /* A '#' not after whitespace is part of an unquoted value. */
    ck_assert_int_eq(load("log = /var/log/a#b\n"), 0);
    ck_assert_str_eq(cfg.log, "/var/log/a#b");
    /* A trailing comment after a tab works like one after a space. */
    ck_assert_int_eq(load("pool = 9\t# tabbed\n"), 0);
    ck_assert_int_eq(cfg.pool, 9);
    ck_assert_int_eq(load("user = nobody # comment # more\n"), 0);
    ck_assert_str_eq(cfg.user, "nobody");
    /* A quoted value ending in a quote is still one value. */
    ck_assert_int_eq(load("user = \"a\"b\"\n"), 0);
    ck_assert_str_eq(cfg.user, "a\"b");
}
END_TEST

/* Durations carry their unit, as PostgreSQL's settings do; kept in milliseconds. */
START_TEST(test_durations)
{
    ck_assert_int_eq(cfg.db_read_max_lag, 5000); /* the default, 5s */
    ck_assert_int_eq(load("db_read_max_lag = 250ms\n"), 0);
    ck_assert_int_eq(cfg.db_read_max_lag, 250);
    ck_assert_int_eq(load("db_read_max_lag = 2s\n"), 0);
    ck_assert_int_eq(cfg.db_read_max_lag, 2000);
    ck_assert_int_eq(load("db_read_max_lag = 1min\n"), 0);
    ck_assert_int_eq(cfg.db_read_max_lag, 60000);
    ck_assert_int_eq(load("db_read_max_lag = 60min\n"), 0);
    ck_assert_int_eq(cfg.db_read_max_lag, 3600000);
    ck_assert_int_eq(load("db_read = host=a,b port=5433,5434\n"), 0);
    ck_assert_str_eq(cfg.db_read, "host=a,b port=5433,5434");
    /* A bare 0 needs no unit; any other number does (below). */
    ck_assert_int_eq(cfg.queue_standing_timeout, 250); /* the default */
    ck_assert_int_eq(load("queue_standing_timeout = 0\n"), 0);
    ck_assert_int_eq(cfg.queue_standing_timeout, 0);
    ck_assert_int_eq(load("queue_standing_timeout = 100ms\n"), 0);
    ck_assert_int_eq(cfg.queue_standing_timeout, 100);
    expect_error("queue_standing_timeout = 00x\n", "t.conf:1: ", "is not a duration");
    expect_error("queue_timeout = 0\n", "t.conf:1: ", "queue_timeout: 0 is out of range");
}
END_TEST

START_TEST(test_bools_and_auto)
{
    static const char *const yes[] = {"yes", "on", "true", "1", "YES", "On", "TRUE"};
    static const char *const no[] = {"no", "off", "false", "0", "NO", "Off"};
    char line[64];

    for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
        snprintf(line, sizeof(line), "reuseport = %s\n", yes[i]);
        ck_assert_int_eq(load(line), 0);
        ck_assert_int_eq(cfg.reuseport, 1);
    }
    for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
        snprintf(line, sizeof(line), "reuseport = %s\n", no[i]);
        ck_assert_int_eq(load(line), 0);
        ck_assert_int_eq(cfg.reuseport, 0);
    }
    ck_assert_int_eq(load("workers = 12\nworkers = auto\n"), 0);
    ck_assert_int_eq(cfg.workers, 0);
    ck_assert_int_ge(config_workers(&cfg), 1);
    ck_assert_int_le(config_workers(&cfg), CONFIG_MAX_WORKERS);
    ck_assert_int_eq(load("workers = 1024\n"), 0);
    ck_assert_int_eq(config_workers(&cfg), 1024);
    ck_assert_int_eq(load("workers = 1\n"), 0);
    ck_assert_int_eq(config_workers(&cfg), 1);
}
END_TEST

START_TEST(test_log_levels)
{
    static const struct {
        const char *name;
        int level;
    } levels[] = {{"debug", LOG_LEVEL_DEBUG},
                  {"info", LOG_LEVEL_INFO},
                  {"notice", LOG_LEVEL_NOTICE},
                  {"warning", LOG_LEVEL_WARNING},
                  {"error", LOG_LEVEL_ERROR}};
    char line[64];

    for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); i++) {
        snprintf(line, sizeof(line), "log_level = %s\n", levels[i].name);
        ck_assert_int_eq(load(line), 0);
        ck_assert_int_eq(cfg.log_level, levels[i].level);
    }
}
END_TEST

START_TEST(test_repeated_keys)
{
    /* A scalar given twice: the later line wins, as in Redis. */
    ck_assert_int_eq(load("pool = 2\npool = 5\nuser = a\nuser = b\n"), 0);
    ck_assert_int_eq(cfg.pool, 5);
    ck_assert_str_eq(cfg.user, "b");
    /* Different addresses add up. */
    ck_assert_int_eq(load("listen = 127.0.0.1:1\nlisten = 127.0.0.1:2\n"), 0);
    ck_assert_int_eq(cfg.nlisten, 2);
}
END_TEST

START_TEST(test_listen_forms)
{
    ck_assert_int_eq(load("listen = 0.0.0.0:80\nlisten = [::]:443\nlisten = localhost:0\n"
                          "listen = [fe80::1%eth0]:8080\n"),
                     0);
    ck_assert_int_eq(cfg.nlisten, 4);
    ck_assert_str_eq(cfg.listen[3], "[fe80::1%eth0]:8080");
    ck_assert_int_eq(cfg.listen_default, 0);
}
END_TEST

START_TEST(test_errors)
{
    expect_error("wokers = 2\n", "t.conf:1: ", "unknown key \"wokers\"");
    expect_error("# fine\n\nworkers 3\n", "t.conf:3: ", "expected key = value");
    expect_error("workers =\n", "t.conf:1: ", "workers: empty value");
    expect_error("workers =   # nothing\n", "t.conf:1: ", "workers: empty value");
    expect_error("user = \"\"\n", "t.conf:1: ", "user: empty value");
    expect_error("= 3\n", "t.conf:1: ", "missing key");
    expect_error("jwt_secret = \"abc\n", "t.conf:1: ", "unterminated quoted value");
    expect_error("jwt_secret = \"\n", "t.conf:1: ", "unterminated quoted value");
    expect_error("user = \"a\" b\n", "t.conf:1: ", "user: text after the closing quote");
    /* Integers: not numbers, or out of bounds (the bounds are named). */
    expect_error("pool = lots\n", "t.conf:1: ", "pool: \"lots\" is not a whole number");
    expect_error("pool = 4.5\n", "t.conf:1: ", "is not a whole number");
    expect_error("pool = 4k\n", "t.conf:1: ", "is not a whole number");
    expect_error("pool = 0x10\n", "t.conf:1: ", "is not a whole number");
    expect_error("pool = 99999999999999999999\n", "t.conf:1: ", "pool: ");
    expect_error("timeout = 0\n", "t.conf:1: ", "timeout: 0 is out of range (1 to 3600)");
    expect_error("timeout = 3601\n", "t.conf:1: ", "out of range (1 to 3600)");
    expect_error("timeout = -5\n", "t.conf:1: ", "out of range");
    expect_error("workers = 0\n", "t.conf:1: ", "workers: 0 is out of range (1 to 1024)");
    expect_error("workers = 1025\n", "t.conf:1: ", "out of range");
    expect_error("workers = Auto\n", "t.conf:1: ", "workers: ");
    expect_error("max_body_size = 1023\n", "t.conf:1: ", "out of range");
    expect_error("max_body_size = 4294967296\n", "t.conf:1: ", "out of range");
    expect_error("bcrypt_cost = 32\n", "t.conf:1: ", "bcrypt_cost: 32 is out of range (4 to 31)");
    expect_error("jwt_lifetime = 59\n", "t.conf:1: ", "jwt_lifetime");
    /* Durations: a unit is required, and the bounds hold. */
    expect_error("db_read_max_lag = 5\n",
                 "t.conf:1: ", "db_read_max_lag: \"5\" is not a duration (250ms, 5s, 1min)");
    expect_error("db_read_max_lag = 5 s\n", "t.conf:1: ", "is not a duration");
    expect_error("db_read_max_lag = 5sec\n", "t.conf:1: ", "is not a duration");
    expect_error("db_read_max_lag = -1s\n", "t.conf:1: ", "is not a duration");
    expect_error("db_read_max_lag = s\n", "t.conf:1: ", "is not a duration");
    expect_error("db_read_max_lag = 99999999999999999999ms\n", "t.conf:1: ", "is not a duration");
    expect_error("db_read_max_lag = 99ms\n",
                 "t.conf:1: ", "db_read_max_lag: 99ms is out of range (100ms to 3600000ms)");
    expect_error("db_read_max_lag = 61min\n", "t.conf:1: ", "out of range");
    /* Booleans and levels. */
    expect_error("daemonize = maybe\n", "t.conf:1: ", "daemonize: \"maybe\" is not yes or no");
    expect_error("dev = y\n", "t.conf:1: ", "is not yes or no");
    expect_error("log_level = verbose\n", "t.conf:1: ", "log_level: \"verbose\" is not debug");
    expect_error("log_level = 3\n", "t.conf:1: ", "log_level: ");
    expect_error("log_level = Info\n",
                 "t.conf:1: ", "log_level: \"Info\" is not debug, info, notice, warning or error");
    expect_error("access_log_format = xml\n",
                 "t.conf:1: ", "access_log_format: \"xml\" is not combined or json");
    /* Addresses: the port is required and must be a port. */
    expect_error("listen = 8080\n", "t.conf:1: ", "listen: \"8080\" is not HOST:PORT");
    expect_error("listen = localhost\n", "t.conf:1: ", "is not HOST:PORT");
    expect_error("listen = localhost:\n", "t.conf:1: ", "is not HOST:PORT");
    expect_error("listen = :8080\n", "t.conf:1: ", "is not HOST:PORT");
    expect_error("listen = host:65536\n", "t.conf:1: ", "is not HOST:PORT");
    expect_error("listen = host:http\n", "t.conf:1: ", "is not HOST:PORT");
    expect_error("listen = ::1:80\n", "t.conf:1: ", "is not HOST:PORT");
    expect_error("listen = [::1]80\n", "t.conf:1: ", "is not HOST:PORT");
    expect_error("listen = []:80\n", "t.conf:1: ", "is not HOST:PORT");
}
END_TEST

START_TEST(test_error_line_numbers)
{
    /* Comments, blank lines and CRLF all count as lines. */
    expect_error("# one\r\n\r\nworkers = 2\r\n# four\r\npool = lots\r\n", "t.conf:5: ", "pool");
    /* The first bad line is the one named. */
    expect_error("pool = 1\nbad line\nworse = 1\n", "t.conf:2: ", "expected key = value");
    /* A long line is an error, not silently cut. */
    {
        char *text = malloc(5001);
        ck_assert_ptr_nonnull(text);
        memcpy(text, "db = ", 5);
        memset(text + 5, 'x', 4995);
        text[5000] = '\0';
        expect_error(text, "t.conf:1: ", "line too long");
        free(text);
    }
}
END_TEST

START_TEST(test_listen_limits)
{
    char text[2048];
    size_t n = 0;

    /* 16 addresses are fine, the 17th is refused on its own line. */
    for (int i = 0; i < CONFIG_MAX_LISTEN; i++)
        n += (size_t)snprintf(text + n, sizeof(text) - n, "listen = 127.0.0.1:%d\n", 9000 + i);
    ck_assert_int_eq(load(text), 0);
    ck_assert_int_eq(cfg.nlisten, CONFIG_MAX_LISTEN);
    snprintf(text + n, sizeof(text) - n, "listen = 127.0.0.1:9999\n");
    expect_error(text, "t.conf:17: ", "listen: more than 16 addresses");
    /* The same address twice could never be bound twice: refused up front. */
    expect_error("listen = 127.0.0.1:9000\nlisten = 127.0.0.1:9000\n",
                 "t.conf:2: ", "listen: \"127.0.0.1:9000\" is given twice");
    /* Port 0 (a free port each time) may be repeated. */
    config_free(&cfg);
    config_init(&cfg);
    ck_assert_int_eq(load("listen = 127.0.0.1:0\nlisten = 127.0.0.1:0\n"), 0);
    ck_assert_int_eq(cfg.nlisten, 2);
}
END_TEST

START_TEST(test_config_set)
{
    char e[CONFIG_ERR_LEN];

    ck_assert_int_eq(config_set(&cfg, "listen", "127.0.0.1:1", 0, e, sizeof(e)), 0);
    ck_assert_int_eq(config_set(&cfg, "listen", "127.0.0.1:2", 0, e, sizeof(e)), 0);
    ck_assert_int_eq(cfg.nlisten, 2);
    /* replace clears the list first (a -b flag replaces the file's list). */
    ck_assert_int_eq(config_set(&cfg, "listen", "127.0.0.1:3", 1, e, sizeof(e)), 0);
    ck_assert_int_eq(cfg.nlisten, 1);
    ck_assert_str_eq(cfg.listen[0], "127.0.0.1:3");
    ck_assert_int_eq(config_set(&cfg, "nope", "1", 0, e, sizeof(e)), -1);
    ck_assert_str_eq(e, "unknown key \"nope\"");
    /* A failed set leaves the old value. */
    ck_assert_int_eq(config_set(&cfg, "pool", "300", 0, e, sizeof(e)), -1);
    ck_assert_int_eq(cfg.pool, 4);
    ck_assert_int_eq(config_set(&cfg, "listen", "bad", 1, e, sizeof(e)), -1);
    ck_assert_int_eq(cfg.nlisten, 1);
    /* NULL err is allowed. */
    ck_assert_int_eq(config_set(&cfg, "pool", "x", 0, NULL, 0), -1);
}
END_TEST

START_TEST(test_load_file)
{
    char path[] = "/tmp/conduitd-test-config-XXXXXX";
    int fd = mkstemp(path);
    static const char text[] = "workers = 2\nlog\0 = x\n";

    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, "workers = 2\npool = 6\n", 21), 21);
    close(fd);
    ck_assert_int_eq(config_load_file(&cfg, path, err, sizeof(err)), 0);
    ck_assert_int_eq(cfg.workers, 2);
    ck_assert_int_eq(cfg.pool, 6);

    /* A NUL byte in the file is named by its line. */
    fd = open(path, O_WRONLY | O_TRUNC);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, text, sizeof(text) - 1), (ssize_t)sizeof(text) - 1);
    close(fd);
    ck_assert_int_eq(config_load_file(&cfg, path, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, ":2: NUL byte"));
    ck_assert_int_eq(strncmp(err, path, strlen(path)), 0);

    /* An error names the file by the path it was given. */
    fd = open(path, O_WRONLY | O_TRUNC);
    ck_assert_int_eq(write(fd, "\nwokers = 1\n", 12), 12);
    close(fd);
    ck_assert_int_eq(config_load_file(&cfg, path, err, sizeof(err)), -1);
    {
        char want[128];
        snprintf(want, sizeof(want), "%s:2: unknown key \"wokers\"", path);
        ck_assert_str_eq(err, want);
    }
    unlink(path);

    ck_assert_int_eq(config_load_file(&cfg, path, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "No such file"));
    ck_assert_int_eq(strncmp(err, path, strlen(path)), 0);
}
END_TEST

START_TEST(test_copy)
{
    struct config copy;

    ck_assert_int_eq(load("listen = 127.0.0.1:1\nlisten = 127.0.0.1:2\nuser = u\n"
                          "jwt_secret = " SECRET39 "\n"),
                     0);
    ck_assert_int_eq(config_copy(&copy, &cfg), 0);
    ck_assert_int_eq(copy.nlisten, 2);
    ck_assert_str_eq(copy.listen[1], "127.0.0.1:2");
    ck_assert_ptr_ne(copy.listen[1], cfg.listen[1]);
    ck_assert_str_eq(copy.user, "u");
    ck_assert_ptr_ne(copy.user, cfg.user);
    ck_assert_str_eq(copy.jwt_secret, SECRET39);
    ck_assert_ptr_null(copy.group);
    /* Changing the copy leaves the original alone. */
    ck_assert_int_eq(config_set(&copy, "user", "v", 0, NULL, 0), 0);
    ck_assert_str_eq(cfg.user, "u");
    config_free(&copy);
    ck_assert_str_eq(cfg.listen[0], "127.0.0.1:1");
}
END_TEST

START_TEST(test_validate)
{
    char e[CONFIG_ERR_LEN];

    /* Production needs a secret. */
    ck_assert_int_eq(config_validate(&cfg, e, sizeof(e)), -1);
    ck_assert_ptr_nonnull(strstr(e, "jwt_secret"));
    /* dev does not (the caller puts the public development secret in). */
    cfg.dev = 1;
    ck_assert_int_eq(config_validate(&cfg, e, sizeof(e)), 0);
    /* A short secret is refused even in dev. */
    ck_assert_int_eq(
        config_set(&cfg, "jwt_secret", "0123456789abcdef0123456789abcde", 0, e, sizeof(e)), 0);
    ck_assert_int_eq(config_validate(&cfg, e, sizeof(e)), -1);
    ck_assert_ptr_nonnull(strstr(e, "shorter than 32 bytes"));
    cfg.dev = 0;
    ck_assert_int_eq(config_validate(&cfg, e, sizeof(e)), -1);
    /* 32 bytes is enough. */
    ck_assert_int_eq(
        config_set(&cfg, "jwt_secret", "0123456789abcdef0123456789abcdef", 0, e, sizeof(e)), 0);
    ck_assert_int_eq(config_validate(&cfg, e, sizeof(e)), 0);
    ck_assert_int_ge(strlen(CONFIG_DEV_JWT_SECRET), 32);
    /* A group needs a user. */
    ck_assert_int_eq(config_set(&cfg, "group", "g", 0, e, sizeof(e)), 0);
    ck_assert_int_eq(config_validate(&cfg, e, sizeof(e)), -1);
    ck_assert_str_eq(e, "group is set but user is not");
    ck_assert_int_eq(config_set(&cfg, "user", "u", 0, e, sizeof(e)), 0);
    ck_assert_int_eq(config_validate(&cfg, e, sizeof(e)), 0);
}
END_TEST

START_TEST(test_status_listen)
{
    char e[CONFIG_ERR_LEN];
    static const char *const bad[] = {"nonsense", "127.0.0.1", "127.0.0.1:65536", ":x", "[::1]"};

    cfg.dev = 1;
    /* Off by default, and "off" spelled out. */
    ck_assert_str_eq(cfg.status_listen, "off");
    ck_assert_int_eq(config_validate(&cfg, e, sizeof(e)), 0);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ck_assert_int_eq(config_set(&cfg, "status_listen", bad[i], 0, e, sizeof(e)), 0);
        ck_assert_int_eq(config_validate(&cfg, e, sizeof(e)), -1);
        ck_assert_ptr_nonnull(strstr(e, "is not HOST:PORT or off"));
    }
    ck_assert_int_eq(config_set(&cfg, "status_listen", "127.0.0.1:9145", 0, e, sizeof(e)), 0);
    ck_assert_int_eq(config_validate(&cfg, e, sizeof(e)), 0);
    ck_assert_int_eq(config_set(&cfg, "status_listen", "[::1]:0", 0, e, sizeof(e)), 0);
    ck_assert_int_eq(config_validate(&cfg, e, sizeof(e)), 0);
    /* Never the API's port, on any of its addresses. */
    ck_assert_int_eq(config_set(&cfg, "listen", "0.0.0.0:9145", 0, e, sizeof(e)), 0);
    ck_assert_int_eq(config_set(&cfg, "status_listen", "127.0.0.1:9145", 0, e, sizeof(e)), 0);
    ck_assert_int_eq(config_validate(&cfg, e, sizeof(e)), -1);
    ck_assert_ptr_nonnull(strstr(e, "needs a port of its own"));
    /* A restart, not a reload, changes it. */
    {
        struct config other;
        ck_assert_int_eq(config_copy(&other, &cfg), 0);
        ck_assert_int_eq(config_set(&other, "status_listen", "off", 0, e, sizeof(e)), 0);
        ck_assert_str_eq(config_nonreloadable_change(&cfg, &other), "status_listen");
        config_free(&other);
    }
}
END_TEST

START_TEST(test_print)
{
    char *text;

    ck_assert_int_eq(load("workers = 3\nlisten = 127.0.0.1:1\nlisten = [::1]:2\n"
                          "jwt_secret = \"" SECRET39 "\"\nlog_level = notice\nreuseport = yes\n"),
                     0);
    text = printed(&cfg);
    ck_assert_ptr_null(strstr(text, "0123456789abcdef"));
    ck_assert_ptr_nonnull(strstr(text, "jwt_secret = (set, 39 bytes, not shown)\n"));
    ck_assert_ptr_nonnull(strstr(text, "workers = 3\n"));
    ck_assert_ptr_nonnull(strstr(text, "listen = 127.0.0.1:1\nlisten = [::1]:2\n"));
    ck_assert_ptr_nonnull(strstr(text, "log_level = notice\n"));
    ck_assert_ptr_nonnull(strstr(text, "reuseport = yes\n"));
    ck_assert_ptr_nonnull(strstr(text, "daemonize = no\n"));
    ck_assert_ptr_nonnull(strstr(text, "timeout = 30\n"));
    ck_assert_ptr_nonnull(strstr(text, "# pid_file is not set\n"));
    /* Every key appears. */
    for (size_t i = 0; i < config_nkeys; i++)
        ck_assert_msg(strstr(text, config_keys[i].name) != NULL, "%s missing", config_keys[i].name);
    free(text);

    ck_assert_int_eq(load("workers = auto\n"), 0);
    text = printed(&cfg);
    ck_assert_ptr_nonnull(strstr(text, "workers = auto ("));
    free(text);

    /* Unset, the secret says so, without a value either. */
    config_free(&cfg);
    config_init(&cfg);
    text = printed(&cfg);
    ck_assert_ptr_nonnull(strstr(text, "# jwt_secret is not set\n"));
    free(text);
}
END_TEST

/*
 * The shared cache's sizes: a reload that changes them is not refused;
 * they keep their running values, named, and the rest of it applies.
 */
START_TEST(test_keep_running)
{
    struct config b;
    char names[128];

    ck_assert_int_eq(load("cache_size = 1000\ncache_memory = 8\n"), 0);
    ck_assert_int_eq(config_copy(&b, &cfg), 0);
    ck_assert_int_eq(config_keep_running(&cfg, &b, names, sizeof(names)), 0);
    ck_assert_str_eq(names, "");
    ck_assert_int_eq(config_set(&b, "cache_memory", "16", 0, NULL, 0), 0);
    ck_assert_int_eq(config_set(&b, "cache_size", "2000", 0, NULL, 0), 0);
    ck_assert_int_eq(config_set(&b, "pool", "9", 0, NULL, 0), 0);
    ck_assert_ptr_null(config_nonreloadable_change(&cfg, &b));
    ck_assert_int_eq(config_keep_running(&cfg, &b, names, sizeof(names)), 2);
    ck_assert_str_eq(names, "cache_size, cache_memory");
    ck_assert_int_eq(b.cache_size, 1000);
    ck_assert_int_eq(b.cache_memory, 8);
    ck_assert_int_eq(b.pool, 9);
    config_free(&b);
}
END_TEST

START_TEST(test_nonreloadable_change)
{
    struct config b;

    ck_assert_int_eq(load("user = u\npid_file = /run/a.pid\n"), 0);
    ck_assert_int_eq(config_copy(&b, &cfg), 0);
    ck_assert_ptr_null(config_nonreloadable_change(&cfg, &b));

    /* Reloadable keys may change freely, the listen list included. */
    ck_assert_int_eq(config_load_text(&b, "b",
                                      "workers = 9\npool = 2\nlisten = 127.0.0.1:5\n"
                                      "log_level = debug\n",
                                      err, sizeof(err)),
                     0);
    ck_assert_ptr_null(config_nonreloadable_change(&cfg, &b));

    ck_assert_int_eq(config_set(&b, "daemonize", "yes", 0, NULL, 0), 0);
    ck_assert_str_eq(config_nonreloadable_change(&cfg, &b), "daemonize");
    ck_assert_int_eq(config_set(&b, "daemonize", "no", 0, NULL, 0), 0);

    ck_assert_int_eq(config_set(&b, "user", "v", 0, NULL, 0), 0);
    ck_assert_str_eq(config_nonreloadable_change(&cfg, &b), "user");
    ck_assert_int_eq(config_set(&b, "user", "u", 0, NULL, 0), 0);
    ck_assert_ptr_null(config_nonreloadable_change(&cfg, &b));

    /* Set against unset counts as a change, both ways. */
    ck_assert_int_eq(config_set(&b, "group", "g", 0, NULL, 0), 0);
    ck_assert_str_eq(config_nonreloadable_change(&cfg, &b), "group");
    ck_assert_str_eq(config_nonreloadable_change(&b, &cfg), "group");
    free(b.group);
    b.group = NULL;

    ck_assert_int_eq(config_set(&b, "pid_file", "/run/b.pid", 0, NULL, 0), 0);
    ck_assert_str_eq(config_nonreloadable_change(&cfg, &b), "pid_file");
    ck_assert_int_eq(config_set(&b, "pid_file", "/run/a.pid", 0, NULL, 0), 0);

    ck_assert_int_eq(config_set(&b, "allow_root", "yes", 0, NULL, 0), 0);
    ck_assert_str_eq(config_nonreloadable_change(&cfg, &b), "allow_root");
    config_free(&b);
}
END_TEST

static Suite *
config_suite(void)
{
    Suite *s = suite_create("config");
    TCase *tc = tcase_create("core");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_defaults);
    tcase_add_test(tc, test_table);
    tcase_add_test(tc, test_good_file);
    tcase_add_test(tc, test_whitespace_and_line_ends);
    tcase_add_test(tc, test_quotes_and_comments);
    tcase_add_test(tc, test_bools_and_auto);
    tcase_add_test(tc, test_durations);
    tcase_add_test(tc, test_log_levels);
    tcase_add_test(tc, test_repeated_keys);
    tcase_add_test(tc, test_listen_forms);
    tcase_add_test(tc, test_errors);
    tcase_add_test(tc, test_error_line_numbers);
    tcase_add_test(tc, test_listen_limits);
    tcase_add_test(tc, test_config_set);
    tcase_add_test(tc, test_load_file);
    tcase_add_test(tc, test_copy);
    tcase_add_test(tc, test_validate);
    tcase_add_test(tc, test_status_listen);
    tcase_add_test(tc, test_print);
    tcase_add_test(tc, test_nonreloadable_change);
    tcase_add_test(tc, test_keep_running);
    suite_add_tcase(s, tc);
    return s;
}

#include "t/unit/check_main.h"
CHECK_MAIN(config_suite)
