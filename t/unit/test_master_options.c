/*
 * Unit tests for master/options.c: every kind of flag, the errors a user
 * sees for bad ones, and the order in which defaults, the file, the
 * environment and the flags combine in options_resolve().  Each test runs
 * in its own process (CK_FORK), so setenv() and getopt's globals do not leak
 * from one to the next.
 */
#include "master/options.h"
#include "t/unit/test_file.h"

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SECRET_FILE "file-secret-0123456789abcdef0123456789"
#define SECRET_ENV "env-secret-0123456789abcdef0123456789ab"

static struct options opts;
static struct config cfg;
static int have_cfg;
static char err[CONFIG_ERR_LEN];
static char path[64];

static void
setup(void)
{
    memset(&opts, 0, sizeof(opts));
    have_cfg = 0;
    err[0] = '\0';
    path[0] = '\0';
    unsetenv("CONDUITD_JWT_SECRET");
}

static void
teardown(void)
{
    options_free(&opts);
    if (have_cfg)
        config_free(&cfg);
    if (path[0] != '\0')
        unlink(path);
}

/* argv from a NULL-terminated list; argv[0] is added. */
#define PARSE(...) parse_list((const char *[]){"conduitd", __VA_ARGS__, NULL})

static int
parse_list(const char **list)
{
    char *argv[2 * OPTIONS_MAX_OVERRIDES + 8];
    int argc = 0, rc;

    options_free(&opts);
    /* Writable copies, as the kernel gives them (getopt may permute argv). */
    for (; list[argc] != NULL; argc++) {
        ck_assert_uint_lt((size_t)argc + 1, sizeof(argv) / sizeof(argv[0]));
        argv[argc] = strdup(list[argc]);
    }
    argv[argc] = NULL;
    err[0] = '\0';
    rc = options_parse(&opts, argc, argv, err, sizeof(err));
    /* Freed at once: options_parse promises to keep copies of what it needs. */
    for (int i = 0; i < argc; i++) {
        memset(argv[i], 'X', strlen(argv[i]));
        free(argv[i]);
    }
    return rc;
}

static void
write_config(const char *text)
{
    FILE *f;
    int fd;

    if (path[0] != '\0')
        unlink(path);
    snprintf(path, sizeof(path), "/tmp/conduitd-test-options-XXXXXX");
    fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    f = fdopen(fd, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    ck_assert_int_eq(fclose(f), 0);
}

static int
resolve(void)
{
    if (have_cfg)
        config_free(&cfg);
    have_cfg = 0;
    err[0] = '\0';
    if (options_resolve(&opts, &cfg, err, sizeof(err)) < 0)
        return -1;
    have_cfg = 1;
    return 0;
}

/* The value of the i-th override, which must be for key. */
static const char *
override(int i, const char *key)
{
    ck_assert_int_lt(i, opts.noverrides);
    ck_assert_str_eq(opts.overrides[i].key, key);
    return opts.overrides[i].value;
}

START_TEST(test_no_flags)
{
    ck_assert_int_eq(parse_list((const char *[]){"conduitd", NULL}), 0);
    ck_assert_int_eq(opts.action, OPTIONS_RUN);
    ck_assert_int_eq(opts.noverrides, 0);
    ck_assert_ptr_null(opts.config_file);
    ck_assert_ptr_null(opts.signal_name);
}
END_TEST

START_TEST(test_actions)
{
    ck_assert_int_eq(PARSE("-t"), 0);
    ck_assert_int_eq(opts.action, OPTIONS_TEST);
    ck_assert_int_eq(PARSE("--test-config"), 0);
    ck_assert_int_eq(opts.action, OPTIONS_TEST);
    ck_assert_int_eq(PARSE("-V"), 0);
    ck_assert_int_eq(opts.action, OPTIONS_VERSION);
    ck_assert_int_eq(PARSE("--version"), 0);
    ck_assert_int_eq(opts.action, OPTIONS_VERSION);
    ck_assert_int_eq(PARSE("-h"), 0);
    ck_assert_int_eq(opts.action, OPTIONS_HELP);
    ck_assert_int_eq(PARSE("--help"), 0);
    ck_assert_int_eq(opts.action, OPTIONS_HELP);
    ck_assert_int_eq(PARSE("--init-db"), 0);
    ck_assert_int_eq(opts.action, OPTIONS_INIT_DB);
    ck_assert_int_eq(PARSE("-s", "stop"), 0);
    ck_assert_int_eq(opts.action, OPTIONS_SIGNAL);
    ck_assert_str_eq(opts.signal_name, "stop");
    ck_assert_int_eq(PARSE("--signal=reopen"), 0);
    ck_assert_str_eq(opts.signal_name, "reopen");
    ck_assert_int_eq(PARSE("-sreload"), 0);
    ck_assert_str_eq(opts.signal_name, "reload");
    ck_assert_int_eq(PARSE("-c", "/etc/conduitd/conduitd.conf"), 0);
    ck_assert_str_eq(opts.config_file, "/etc/conduitd/conduitd.conf");
    ck_assert_int_eq(PARSE("--config=a.conf", "--config", "b.conf"), 0);
    ck_assert_str_eq(opts.config_file, "b.conf"); /* the last one wins */
}
END_TEST

START_TEST(test_setting_flags)
{
    static const struct {
        const char *flag, *arg, *key, *value;
    } flags[] = {
        {"-w", "4", "workers", "4"},
        {"--workers", "auto", "workers", "auto"},
        {"-b", "127.0.0.1:1", "listen", "127.0.0.1:1"},
        {"--bind", "[::1]:2", "listen", "[::1]:2"},
        {"-d", NULL, "daemonize", "yes"},
        {"--daemonize", NULL, "daemonize", "yes"},
        {"--pid", "/run/c.pid", "pid_file", "/run/c.pid"},
        {"--user", "www-data", "user", "www-data"},
        {"--group", "www-data", "group", "www-data"},
        {"--allow-root", NULL, "allow_root", "yes"},
        {"--log", "syslog", "log", "syslog"},
        {"--log-level", "debug", "log_level", "debug"},
        {"--reuseport", NULL, "reuseport", "yes"},
        {"--timeout", "5", "timeout", "5"},
        {"--graceful-timeout", "6", "graceful_timeout", "6"},
        {"--max-body-size", "4096", "max_body_size", "4096"},
        {"--max-header-size", "8192", "max_header_size", "8192"},
        {"--idle-timeout", "7", "idle_timeout", "7"},
        {"--send-timeout", "8", "send_timeout", "8"},
        {"--db", "dbname=x", "db", "dbname=x"},
        {"--pool", "2", "pool", "2"},
        {"--pool-queue", "9", "pool_queue", "9"},
        {"--queue-timeout", "250ms", "queue_timeout", "250ms"},
        {"--jwt-lifetime", "3600", "jwt_lifetime", "3600"},
        {"--bcrypt-cost", "12", "bcrypt_cost", "12"},
        {"--bcrypt-threads", "3", "bcrypt_threads", "3"},
        {"--bcrypt-queue", "0", "bcrypt_queue", "0"},
        {"--dev", NULL, "dev", "yes"},
    };

    for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
        int rc = flags[i].arg ? PARSE(flags[i].flag, flags[i].arg) : PARSE(flags[i].flag);
        ck_assert_msg(rc == 0, "%s: %s", flags[i].flag, err);
        ck_assert_int_eq(opts.action, OPTIONS_RUN);
        ck_assert_int_eq(opts.noverrides, 1);
        ck_assert_str_eq(override(0, flags[i].key), flags[i].value);
        /* The key points into the table, so it outlives argv and opts. */
        ck_assert_ptr_eq(opts.overrides[0].key, config_find(flags[i].key)->name);
    }
    /* The --name=value form. */
    ck_assert_int_eq(PARSE("--pool=5", "-w3"), 0);
    ck_assert_str_eq(override(0, "pool"), "5");
    ck_assert_str_eq(override(1, "workers"), "3");
    /* Clustered short flags. */
    ck_assert_int_eq(PARSE("-dt"), 0);
    ck_assert_int_eq(opts.action, OPTIONS_TEST);
    ck_assert_str_eq(override(0, "daemonize"), "yes");
}
END_TEST

START_TEST(test_bind_repeatable)
{
    ck_assert_int_eq(PARSE("-b", "127.0.0.1:1", "--bind=127.0.0.1:2", "-b127.0.0.1:3"), 0);
    ck_assert_int_eq(opts.noverrides, 3);
    ck_assert_str_eq(override(0, "listen"), "127.0.0.1:1");
    ck_assert_str_eq(override(1, "listen"), "127.0.0.1:2");
    ck_assert_str_eq(override(2, "listen"), "127.0.0.1:3");
}
END_TEST

START_TEST(test_argv_copied)
{
    /* The process title overwrites argv after parsing: nothing may point into it. */
    char *argv[] = {strdup("conduitd"), strdup("-c"), strdup("my.conf"), strdup("--pool"),
                    strdup("7"),        strdup("-s"), strdup("quit"),    NULL};

    ck_assert_int_eq(options_parse(&opts, 7, argv, err, sizeof(err)), 0);
    for (int i = 0; i < 7; i++) {
        memset(argv[i], 'X', strlen(argv[i]));
        free(argv[i]);
    }
    ck_assert_str_eq(opts.config_file, "my.conf");
    ck_assert_str_eq(override(0, "pool"), "7");
    ck_assert_str_eq(opts.signal_name, "quit");
}
END_TEST

START_TEST(test_errors)
{
    ck_assert_int_eq(PARSE("--no-such-flag"), -1);
    ck_assert_str_eq(err, "unknown option --no-such-flag");
    ck_assert_int_eq(PARSE("-x"), -1);
    ck_assert_str_eq(err, "unknown option -x");
    ck_assert_int_eq(PARSE("-w"), -1);
    ck_assert_str_eq(err, "option -w needs a value");
    ck_assert_int_eq(PARSE("--pid"), -1);
    ck_assert_str_eq(err, "option --pid needs a value");
    ck_assert_int_eq(PARSE("-s", "kill"), -1);
    ck_assert_str_eq(err, "-s takes reload, stop, quit, reopen or upgrade, not \"kill\"");
    ck_assert_int_eq(PARSE("stray"), -1);
    ck_assert_str_eq(err, "unexpected argument \"stray\"");
    ck_assert_int_eq(PARSE("-t", "stray", "-d"), -1);
    ck_assert_str_eq(err, "unexpected argument \"stray\"");
    /* A boolean flag takes no value, and the message says so in plain text. */
    ck_assert_int_eq(PARSE("--dev=yes"), -1);
    ck_assert_str_eq(err, "option --dev takes no value");
    ck_assert_int_eq(PARSE("--daemonize=no"), -1);
    ck_assert_str_eq(err, "option --daemonize takes no value");
    ck_assert_int_eq(PARSE("-dq"), -1);
    ck_assert_str_eq(err, "unknown option -q");
    ck_assert_int_eq(PARSE("--frobnicate=3"), -1);
    ck_assert_str_eq(err, "unknown option --frobnicate=3");
    /* The secret never comes from the command line (it would show in ps). */
    ck_assert_int_eq(PARSE("--jwt-secret", "abc"), -1);
    ck_assert_ptr_nonnull(strstr(err, "unknown option"));
}
END_TEST

START_TEST(test_parse_twice)
{
    /*
     * An error in the middle of a cluster ("-xd": x is unknown) must not
     * leave getopt half-way through the old argv for the next parse.
     */
    ck_assert_int_eq(PARSE("-xd"), -1);
    ck_assert_int_eq(PARSE("-t"), 0);
    ck_assert_int_eq(opts.action, OPTIONS_TEST);
    ck_assert_int_eq(opts.noverrides, 0);
    ck_assert_int_eq(PARSE("-w", "2"), 0);
    ck_assert_int_eq(PARSE("-w", "3"), 0);
    ck_assert_int_eq(opts.noverrides, 1);
    ck_assert_str_eq(override(0, "workers"), "3");
}
END_TEST

START_TEST(test_too_many_overrides)
{
    const char *list[2 * OPTIONS_MAX_OVERRIDES + 4];
    int n = 0;

    list[n++] = "conduitd";
    for (int i = 0; i <= OPTIONS_MAX_OVERRIDES; i++) {
        list[n++] = "--pool";
        list[n++] = "3";
    }
    list[n] = NULL;
    ck_assert_int_eq(parse_list(list), -1);
    ck_assert_str_eq(err, "too many options");
}
END_TEST

START_TEST(test_signal_number)
{
    ck_assert_int_eq(options_signal_number("reload"), SIGHUP);
    ck_assert_int_eq(options_signal_number("stop"), SIGTERM);
    ck_assert_int_eq(options_signal_number("quit"), SIGQUIT);
    ck_assert_int_eq(options_signal_number("reopen"), SIGUSR1);
    ck_assert_int_eq(options_signal_number("STOP"), -1);
    ck_assert_int_eq(options_signal_number("kill"), -1);
    ck_assert_int_eq(options_signal_number("TERM"), -1);
    ck_assert_int_eq(options_signal_number(""), -1);
}
END_TEST

START_TEST(test_resolve_defaults)
{
    ck_assert_int_eq(PARSE("--dev"), 0);
    ck_assert_int_eq(resolve(), 0);
    ck_assert_int_eq(cfg.pool, 4);
    ck_assert_int_eq(cfg.nlisten, 1);
    ck_assert_str_eq(cfg.listen[0], "127.0.0.1:8080");
    /* --dev without a secret gets the public development one. */
    ck_assert_str_eq(cfg.jwt_secret, CONFIG_DEV_JWT_SECRET);
}
END_TEST

START_TEST(test_resolve_precedence)
{
    /* defaults < file < environment < flags, key by key. */
    write_config("pool = 6\ntimeout = 10\nworkers = 2\njwt_secret = " SECRET_FILE "\n");

    ck_assert_int_eq(PARSE("-c", path), 0);
    ck_assert_int_eq(resolve(), 0);
    ck_assert_int_eq(cfg.pool, 6);          /* the file over the default */
    ck_assert_int_eq(cfg.idle_timeout, 60); /* the default where the file is silent */
    ck_assert_str_eq(cfg.jwt_secret, SECRET_FILE);

    setenv("CONDUITD_JWT_SECRET", SECRET_ENV, 1);
    ck_assert_int_eq(resolve(), 0);
    ck_assert_str_eq(cfg.jwt_secret, SECRET_ENV); /* the environment over the file */
    ck_assert_int_eq(cfg.pool, 6);

    ck_assert_int_eq(PARSE("-c", path, "--pool", "8", "-w", "auto"), 0);
    ck_assert_int_eq(resolve(), 0);
    ck_assert_int_eq(cfg.pool, 8);     /* the flag over the file */
    ck_assert_int_eq(cfg.workers, 0);  /* auto over the file's 2 */
    ck_assert_int_eq(cfg.timeout, 10); /* the file where no flag says otherwise */
    ck_assert_str_eq(cfg.jwt_secret, SECRET_ENV);

    /* An empty variable is no secret: the file's stands. */
    setenv("CONDUITD_JWT_SECRET", "", 1);
    ck_assert_int_eq(resolve(), 0);
    ck_assert_str_eq(cfg.jwt_secret, SECRET_FILE);
}
END_TEST

START_TEST(test_resolve_env_without_file)
{
    setenv("CONDUITD_JWT_SECRET", SECRET_ENV, 1);
    ck_assert_int_eq(PARSE("-w", "3"), 0);
    ck_assert_int_eq(resolve(), 0);
    ck_assert_str_eq(cfg.jwt_secret, SECRET_ENV);
    ck_assert_int_eq(cfg.workers, 3);
    /* With --dev a real secret is kept, not replaced by the public one. */
    ck_assert_int_eq(PARSE("--dev"), 0);
    ck_assert_int_eq(resolve(), 0);
    ck_assert_str_eq(cfg.jwt_secret, SECRET_ENV);
}
END_TEST

START_TEST(test_resolve_bind_replaces_file_list)
{
    write_config("listen = 127.0.0.1:9001\nlisten = 127.0.0.1:9002\njwt_secret = " SECRET_FILE
                 "\n");

    ck_assert_int_eq(PARSE("-c", path), 0);
    ck_assert_int_eq(resolve(), 0);
    ck_assert_int_eq(cfg.nlisten, 2);
    ck_assert_str_eq(cfg.listen[0], "127.0.0.1:9001");
    ck_assert_str_eq(cfg.listen[1], "127.0.0.1:9002");

    /* -b says where to listen now: the file's addresses go, all the -b stay. */
    ck_assert_int_eq(PARSE("-c", path, "-b", "127.0.0.1:7001", "-b", "127.0.0.1:7002"), 0);
    ck_assert_int_eq(resolve(), 0);
    ck_assert_int_eq(cfg.nlisten, 2);
    ck_assert_str_eq(cfg.listen[0], "127.0.0.1:7001");
    ck_assert_str_eq(cfg.listen[1], "127.0.0.1:7002");

    /* Without a file, -b replaces the built-in default the same way. */
    ck_assert_int_eq(PARSE("--dev", "-b", "127.0.0.1:7003"), 0);
    ck_assert_int_eq(resolve(), 0);
    ck_assert_int_eq(cfg.nlisten, 1);
    ck_assert_str_eq(cfg.listen[0], "127.0.0.1:7003");
}
END_TEST

START_TEST(test_resolve_errors)
{
    /* No secret anywhere, not dev: refused, and the message says how to fix it. */
    ck_assert_int_eq(PARSE(NULL), 0);
    ck_assert_int_eq(resolve(), -1);
    ck_assert_ptr_nonnull(strstr(err, "jwt_secret"));
    ck_assert_ptr_nonnull(strstr(err, "CONDUITD_JWT_SECRET"));
    ck_assert_int_eq(PARSE("-t"), 0);
    ck_assert_int_eq(resolve(), -1);

    /* A bad flag value is the command line's fault. */
    ck_assert_int_eq(PARSE("--dev", "--pool", "0"), 0);
    ck_assert_int_eq(resolve(), -1);
    ck_assert_str_eq(err, "command line: pool: 0 is out of range (1 to 256)");
    ck_assert_int_eq(PARSE("--dev", "-b", "nowhere"), 0);
    ck_assert_int_eq(resolve(), -1);
    ck_assert_ptr_nonnull(strstr(err, "command line: listen"));

    /* A bad file names itself and the line. */
    write_config("pool = 2\nwokers = 3\n");
    ck_assert_int_eq(PARSE("--dev", "-c", path), 0);
    ck_assert_int_eq(resolve(), -1);
    ck_assert_ptr_nonnull(strstr(err, ":2: unknown key \"wokers\""));
    ck_assert_int_eq(strncmp(err, path, strlen(path)), 0);

    /* A missing file. */
    ck_assert_int_eq(PARSE("--dev", "-c", "/nonexistent/conduitd.conf"), 0);
    ck_assert_int_eq(resolve(), -1);
    ck_assert_ptr_nonnull(strstr(err, "/nonexistent/conduitd.conf"));
}
END_TEST

START_TEST(test_resolve_short_secret)
{
    /* A short secret is refused, and the message names where it came from. */
    setenv("CONDUITD_JWT_SECRET", "too-short", 1);
    write_config("pool = 2\n");
    ck_assert_int_eq(PARSE("-c", path), 0);
    ck_assert_int_eq(resolve(), -1);
    ck_assert_ptr_nonnull(strstr(err, "CONDUITD_JWT_SECRET"));
    ck_assert_ptr_nonnull(strstr(err, "shorter than 32 bytes"));

    unsetenv("CONDUITD_JWT_SECRET");
    write_config("jwt_secret = too-short\n");
    ck_assert_int_eq(PARSE("-c", path), 0);
    ck_assert_int_eq(resolve(), -1);
    ck_assert_int_eq(strncmp(err, path, strlen(path)), 0);
    ck_assert_ptr_nonnull(strstr(err, "shorter than 32 bytes"));
}
END_TEST

START_TEST(test_resolve_signal_needs_no_secret)
{
    /* "conduitd -s stop" must work on a box where only the service has the secret. */
    write_config("pid_file = /run/conduitd-test.pid\n");
    ck_assert_int_eq(PARSE("-c", path, "-s", "stop"), 0);
    ck_assert_int_eq(resolve(), 0);
    ck_assert_str_eq(cfg.pid_file, "/run/conduitd-test.pid");
    ck_assert_int_eq(PARSE("--pid", "/run/x.pid", "-s", "reload"), 0);
    ck_assert_int_eq(resolve(), 0);
    ck_assert_str_eq(cfg.pid_file, "/run/x.pid");
    /* A short secret in the environment does not stop it either. */
    setenv("CONDUITD_JWT_SECRET", "too-short", 1);
    ck_assert_int_eq(resolve(), 0);
    /* But a broken file is still an error: the pid file may be in it. */
    write_config("pid_file /run/x.pid\n");
    ck_assert_int_eq(PARSE("-c", path, "-s", "stop"), 0);
    ck_assert_int_eq(resolve(), -1);
    ck_assert_ptr_nonnull(strstr(err, ":1: expected key = value"));
}
END_TEST

START_TEST(test_usage)
{
    char *text = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&text, &n);

    ck_assert_ptr_nonnull(f);
    options_usage(f);
    fclose(f);
    /* Every long option that sets a key is listed. */
    static const char *const names[] = {"--workers", "--bind",        "--config",    "--daemonize",
                                        "--signal",  "--pid",         "--log-level", "--reuseport",
                                        "--pool",    "--bcrypt-cost", "--dev",       "--init-db"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        ck_assert_msg(strstr(text, names[i]) != NULL, "%s missing", names[i]);
    free(text);
}
END_TEST

/* text has a line that begins with prefix followed by a space or its end. */
static int
has_line(const char *text, const char *prefix)
{
    size_t n = strlen(prefix);

    for (const char *p = text; p; p = strchr(p, '\n')) {
        if (*p == '\n')
            p++;
        if (strncmp(p, prefix, n) == 0 && (p[n] == ' ' || p[n] == '\n' || p[n] == '\0'))
            return 1;
    }
    return 0;
}

/*
 * text has a line "<before_a><name><after>" or "<before_b><name><after>"
 * (see has_line).  The pieces are joined, not used as formats, so that
 * -Wformat-nonliteral has nothing to say.
 */
static int
described(const char *text, const char *before_a, const char *before_b, const char *name,
          const char *after)
{
    char want[128];

    snprintf(want, sizeof(want), "%s%s%s", before_a, name, after);
    if (has_line(text, want))
        return 1;
    snprintf(want, sizeof(want), "%s%s%s", before_b, name, after);
    return has_line(text, want);
}

/*
 * The README's settings table ("| flag | config key | default | meaning |"):
 * each row's first three cells, split at the '|' not escaped by '\\'.
 */
struct readme_row {
    char cell[3][256];
};

static size_t
readme_rows(const char *readme, struct readme_row *rows, size_t max)
{
    const char *p = strstr(readme, "\n| flag | config key | default | meaning |\n");
    size_t n = 0;

    ck_assert_msg(p != NULL, "README.md has no settings table");
    p = strchr(p + 1, '\n') + 1;
    p = strchr(p, '\n') + 1; /* the | --- | line */
    for (; *p == '|' && n < max; n++) {
        const char *eol = strchr(p, '\n');
        int c = -1;
        size_t len = 0;

        ck_assert_ptr_nonnull(eol);
        memset(&rows[n], 0, sizeof(rows[n]));
        for (const char *q = p; q < eol && c < 3; q++) {
            if (*q == '|' && q[-1] != '\\') {
                if (c >= 0) {
                    while (len > 0 && rows[n].cell[c][len - 1] == ' ')
                        rows[n].cell[c][--len] = '\0';
                }
                c++, len = 0;
                while (q[1] == ' ')
                    q++;
            } else if (c >= 0 && c < 3 && len + 1 < sizeof(rows[n].cell[c])) {
                rows[n].cell[c][len++] = *q;
            }
        }
        p = eol + 1;
    }
    return n;
}

/* The row whose config key cell names `name` (alone or among others). */
static const struct readme_row *
readme_find(const struct readme_row *rows, size_t n, const char *name)
{
    char want[80];

    snprintf(want, sizeof(want), "`%s`", name);
    for (size_t i = 0; i < n; i++)
        if (strstr(rows[i].cell[1], want) != NULL)
            return &rows[i];
    return NULL;
}

/* The paragraph of conduitd.conf(5) that describes name, up to the next .TP. */
static char *
man5_entry(const char *man5, const char *name)
{
    char want[80];
    const char *p, *end;

    for (int form = 0; form < 2; form++) {
        snprintf(want, sizeof(want), form ? "\n.BR %s " : "\n.B %s\n", name);
        if ((p = strstr(man5, want)) != NULL)
            break;
    }
    if (p == NULL)
        return NULL;
    end = strstr(p + 1, "\n.TP\n");
    if (end == NULL)
        end = strstr(p + 1, "\n.SH");
    return strndup(p, end ? (size_t)(end - p) : strlen(p));
}

/*
 * One source per setting: every key of the config table has its flag (but
 * a secret, which never goes on a command line), that flag parses into the
 * key and is listed by -h, and the key is described in etc/conduitd.conf,
 * conduitd.conf(5) (which says whether it is reloadable, as the table
 * does), (its flag) conduitd(8) and the README's settings table, with the
 * table's default.  Adding a setting to the table without the rest fails
 * here, and so does a README row naming a key the table does not have.
 */
START_TEST(test_every_key_everywhere)
{
    char *conf = test_slurp("etc/conduitd.conf"), *man5 = test_slurp("man/conduitd.conf.5.in");
    char *man8 = test_slurp("man/conduitd.8.in"), *usage = NULL;
    char *readme = test_slurp("README.md");
    static struct readme_row rows[128];
    size_t nrows = readme_rows(readme, rows, 128);
    size_t usage_len = 0;
    FILE *f = open_memstream(&usage, &usage_len);

    ck_assert_ptr_nonnull(f);
    options_usage(f);
    fclose(f);
    for (size_t i = 0; i < config_nkeys; i++) {
        const struct config_key *k = &config_keys[i];
        char flag[64], want[128], esc[128];
        size_t e = 0;

        ck_assert_msg(described(conf, "# ", "", k->name, " ="),
                      "etc/conduitd.conf has no line for %s", k->name);
        ck_assert_msg(described(man5, ".B ", ".BR ", k->name, ""),
                      "conduitd.conf(5) has no entry for %s", k->name);
        ck_assert_msg(!(k->flags & CONFIG_RELOADABLE) != !(k->flags & CONFIG_RESTART),
                      "%s: the table says neither or both of reloadable and restart", k->name);
        char *entry = man5_entry(man5, k->name);
        ck_assert_msg(entry != NULL, "conduitd.conf(5) has no paragraph for %s", k->name);
        ck_assert_msg((strstr(entry, "Not reloadable.") != NULL) == !!(k->flags & CONFIG_RESTART),
                      "conduitd.conf(5) and the table differ on whether %s is reloadable", k->name);
        free(entry);
        const struct readme_row *row = readme_find(rows, nrows, k->name);
        ck_assert_msg(row != NULL, "README.md's settings table has no row for %s", k->name);
        ck_assert_msg(strcmp(row->cell[2], k->defval ? k->defval : "") == 0,
                      "README.md's default of %s is \"%s\", the table's \"%s\"", k->name,
                      row->cell[2], k->defval ? k->defval : "");
        config_flag_name(k, flag, sizeof(flag));
        if (k->flags & CONFIG_SECRET) {
            ck_assert_msg(flag[0] == '\0', "%s is secret but has a flag", k->name);
            continue;
        }
        ck_assert_msg(flag[0] != '\0', "%s has no flag", k->name);
        for (size_t j = 0; j < i; j++) {
            char other[64];
            config_flag_name(&config_keys[j], other, sizeof(other));
            ck_assert_msg(strcmp(flag, other) != 0, "--%s is two keys' flag", flag);
            ck_assert_msg(!k->short_flag || k->short_flag != config_keys[j].short_flag,
                          "-%c is two keys' flag", k->short_flag);
        }
        snprintf(want, sizeof(want), "--%s", flag);
        ck_assert_msg(strstr(usage, want) != NULL, "-h does not list %s", want);
        /* conduitd(8) writes it as \-\-name\-with\-dashes. */
        esc[e++] = '\\', esc[e++] = '-', esc[e++] = '\\', esc[e++] = '-';
        for (const char *c = flag; *c && e + 3 < sizeof(esc); c++) {
            if (*c == '-')
                esc[e++] = '\\';
            esc[e++] = *c;
        }
        esc[e] = '\0';
        ck_assert_msg(strstr(man8, esc) != NULL, "conduitd(8) does not describe %s", want);
        {
            char sf[4] = {'-', k->short_flag, '\0'};
            ck_assert_msg(strstr(row->cell[0], want) != NULL ||
                              (k->short_flag && strstr(row->cell[0], sf) != NULL),
                          "README.md's row for %s does not give %s", k->name, want);
        }

        /* The flag sets its key: with the default as its value, or "yes". */
        const char *value = k->argname ? (k->defval && *k->defval ? k->defval : "x") : NULL;
        int rc = value ? PARSE(want, value) : PARSE(want);
        ck_assert_msg(rc == 0, "%s: %s", want, err);
        ck_assert_int_eq(opts.noverrides, 1);
        ck_assert_ptr_eq(opts.overrides[0].key, k->name);
        ck_assert_str_eq(opts.overrides[0].value, value ? value : "yes");
        if (k->short_flag) {
            char sf[3] = {'-', k->short_flag, '\0'};
            rc = value ? PARSE(sf, value) : PARSE(sf);
            ck_assert_msg(rc == 0, "%s: %s", sf, err);
            ck_assert_ptr_eq(opts.overrides[0].key, k->name);
        }
    }
    /* And every key the README names is one. */
    for (size_t i = 0; i < nrows; i++) {
        for (const char *p = rows[i].cell[1]; (p = strchr(p, '`')) != NULL;) {
            const char *close = strchr(p + 1, '`');
            char name[80];

            ck_assert_ptr_nonnull(close);
            snprintf(name, sizeof(name), "%.*s", (int)(close - p - 1), p + 1);
            ck_assert_msg(config_find(name) != NULL,
                          "README.md's settings table names %s, not a key", name);
            p = close + 1;
        }
    }
    free(conf);
    free(man5);
    free(man8);
    free(usage);
    free(readme);
}
END_TEST

static Suite *
options_suite(void)
{
    Suite *s = suite_create("options");
    TCase *tc = tcase_create("core");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_no_flags);
    tcase_add_test(tc, test_actions);
    tcase_add_test(tc, test_setting_flags);
    tcase_add_test(tc, test_bind_repeatable);
    tcase_add_test(tc, test_argv_copied);
    tcase_add_test(tc, test_errors);
    tcase_add_test(tc, test_parse_twice);
    tcase_add_test(tc, test_too_many_overrides);
    tcase_add_test(tc, test_signal_number);
    tcase_add_test(tc, test_resolve_defaults);
    tcase_add_test(tc, test_resolve_precedence);
    tcase_add_test(tc, test_resolve_env_without_file);
    tcase_add_test(tc, test_resolve_bind_replaces_file_list);
    tcase_add_test(tc, test_resolve_errors);
    tcase_add_test(tc, test_resolve_short_secret);
    tcase_add_test(tc, test_resolve_signal_needs_no_secret);
    tcase_add_test(tc, test_usage);
    tcase_add_test(tc, test_every_key_everywhere);
    suite_add_tcase(s, tc);
    return s;
}

#include "t/unit/check_main.h"
CHECK_MAIN(options_suite)
