/*
 * main: parse the command line, then do the one thing it asks for.  The
 * logic lives in options.c (what the settings are), daemon.c (becoming a
 * daemon) and master.c (supervising workers).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <libpq-fe.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/settings.h"
#include "common/log.h"
#include "common/proctitle.h"
#include "master/daemon.h"
#include "master/initdb.h"
#include "master/master.h"
#include "master/options.h"
#include "master/upgrade.h"
#include "master/upgrade_cmd.h"

static void
print_version(void)
{
    printf("conduitd %s\n", VERSION);
#ifdef CONDUITD_TEST_HOOKS
    printf("built with test-hooks (the /debug/ endpoints): not for production\n");
#endif
#ifdef CONDUITD_SANITIZERS
    printf("built with sanitizers (ASan, UBSan): slower, timings are not representative\n");
#endif
}

/*
 * A daemon runs in "/", so a relative path given at start would point
 * elsewhere by the next reload or log reopen: anchor them to the start
 * directory now.
 */
static char *
absolute(const char *path)
{
    char cwd[PATH_MAX];
    char *out;

    if (path[0] == '/' || strcmp(path, "stderr") == 0 || strcmp(path, "syslog") == 0 ||
        strcmp(path, "off") == 0 || !getcwd(cwd, sizeof(cwd)))
        return strdup(path);
    if (asprintf(&out, "%s/%s", cwd, path) < 0)
        return NULL;
    return out;
}

static int
anchor_paths(struct options *o)
{
    char *p;

    if (o->config_file) {
        if (!(p = absolute(o->config_file)))
            return -1;
        free(o->config_file);
        o->config_file = p;
    }
    for (int i = 0; i < o->noverrides; i++) {
        if (strcmp(o->overrides[i].key, "log") != 0 &&
            strcmp(o->overrides[i].key, "pid_file") != 0 &&
            strcmp(o->overrides[i].key, "access_log") != 0)
            continue;
        if (!(p = absolute(o->overrides[i].value)))
            return -1;
        free(o->overrides[i].value);
        o->overrides[i].value = p;
    }
    return 0;
}

static int
send_signal(const struct config *c, const char *name)
{
    char err[256];
    pid_t pid;
    int sig = options_signal_number(name);

    if (!c->pid_file) {
        fprintf(stderr, "conduitd: -s %s needs the pid file: give --pid FILE or pid_file\n", name);
        return 1;
    }
    pid = daemon_read_pidfile(c->pid_file, err, sizeof(err));
    if (pid <= 0) {
        fprintf(stderr, "conduitd: %s\n", err);
        return 1;
    }
    if (kill(pid, sig) < 0) {
        fprintf(stderr, "conduitd: cannot signal pid %d: %s\n", (int)pid, strerror(errno));
        return 1;
    }
    return 0;
}

/* Root workers only when asked: a bug in a handler should not own the machine. */
static int
check_identity(const struct config *c, char *err, size_t errlen)
{
    if (c->user)
        return daemon_check_user(c->user, c->group, err, errlen);
    if (geteuid() == 0 && !c->allow_root) {
        snprintf(err, errlen,
                 "refusing to run workers as root: give --user USER "
                 "(or --allow-root if you really mean it)");
        return -1;
    }
    return 0;
}

/*
 * A connection string as libpq reads it (what names it in messages); a
 * worker would exit with the fatal status on one it cannot parse, so say
 * it before forking any.  The standbys' (read = 1) must not ask for the
 * primary: every read would go there, with none of the checks.
 */
static int
check_one_conninfo(const char *conninfo, const char *what, int read, char *err, size_t errlen)
{
    char *perr = NULL;
    PQconninfoOption *opts = PQconninfoParse(conninfo ? conninfo : "", &perr);

    if (!opts) {
        snprintf(err, errlen, "the %s connection string is invalid: %s", what,
                 perr ? perr : "out of memory");
        PQfreemem(perr);
        /* libpq ends its messages with a newline; the log adds its own. */
        err[strcspn(err, "\n")] = '\0';
        return -1;
    }
    for (const PQconninfoOption *o = opts; read && o->keyword; o++) {
        if (strcmp(o->keyword, "target_session_attrs") == 0 && o->val &&
            (strcmp(o->val, "read-write") == 0 || strcmp(o->val, "primary") == 0)) {
            snprintf(err, errlen,
                     "the %s connection string asks for the primary (target_session_attrs=%s): "
                     "db_read names standbys (standby or prefer-standby)",
                     what, o->val);
            PQconninfoFree(opts);
            return -1;
        }
    }
    PQconninfoFree(opts);
    return 0;
}

static int
check_conninfo(const struct config *c, char *err, size_t errlen)
{
    const char *conninfo = c->db ? c->db : getenv("DATABASE_URL");

    if (check_one_conninfo(conninfo, "database", 0, err, errlen) < 0)
        return -1;
    return c->db_read ? check_one_conninfo(c->db_read, "db_read", 1, err, errlen) : 0;
}

/*
 * A log file (what = "log" or "access log") can be opened for appending:
 * created if missing, as a start would.
 */
static int
check_log_file(const char *path, const char *what, char *err, size_t errlen)
{
    int fd;

    if (!path || strcmp(path, "stderr") == 0 || strcmp(path, "syslog") == 0 ||
        strcmp(path, "off") == 0)
        return 0;
    fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
    if (fd < 0) {
        snprintf(err, errlen, "cannot open the %s %s: %s", what, path, strerror(errno));
        return -1;
    }
    close(fd);
    return 0;
}

/*
 * The access log is opened by the workers, after they drop privileges:
 * created here by root, it would be root's and closed to them.  So it is
 * only checked: an existing file opens for appending, a new one has its
 * folder.
 */
static int
check_access_log(const char *path, char *err, size_t errlen)
{
    char dir[4096];
    const char *slash;
    struct stat st;
    int fd;

    if (!path || strcmp(path, "syslog") == 0 || strcmp(path, "off") == 0)
        return 0;
    fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd >= 0) {
        close(fd);
        return 0;
    }
    slash = strrchr(path, '/');
    snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
    if (errno == ENOENT && stat(dir[0] ? dir : "/", &st) == 0 && S_ISDIR(st.st_mode))
        return 0;
    snprintf(err, errlen, "cannot open the access log %s: %s", path,
             errno == ENOENT ? "no such folder" : strerror(errno));
    return -1;
}

static int
check_log(const struct config *c, char *err, size_t errlen)
{
    return check_log_file(c->log, "log", err, errlen) < 0 ||
                   check_access_log(c->access_log, err, errlen) < 0
               ? -1
               : 0;
}

/*
 * Every check a start makes before it forks, in the order a start makes
 * them, so that -t reaches the verdict a start would.  Returns 0, or the
 * exit status of a start that fails there (2: the identity; 1: the rest),
 * with the reason in err.  What depends on the moment rather than the
 * configuration (an address in use, a live pidfile) is left to the start,
 * as nginx -t leaves it: -t beside a running server must say yes.
 */
static int
preflight(const struct config *c, char *err, size_t errlen)
{
    if (check_identity(c, err, errlen) < 0)
        return 2;
    if (check_log(c, err, errlen) < 0 || check_conninfo(c, err, errlen) < 0)
        return 1;
    return 0;
}

/* Removes what names this process: the pidfile, or its .oldbin after an upgrade began. */
static void
remove_pidfiles(const char *pid_file)
{
    char oldbin[PATH_MAX + 8];

    if (!pid_file[0])
        return;
    daemon_remove_pidfile(pid_file);
    if (daemon_oldbin_path(pid_file, oldbin, sizeof(oldbin)) == 0)
        daemon_remove_pidfile(oldbin);
}

static int
run(const struct options *o, struct config *c)
{
    char err[CONFIG_ERR_LEN];
    /* First: the new master of an upgrade knows it by its parent's word. */
    pid_t old_master = upgrade_from();
    int status = preflight(c, err, sizeof(err));

    if (status != 0) {
        fprintf(stderr, "conduitd: %s\n", err);
        /* Said in the log too, where an operator of a daemon looks. */
        if (status == 1 && log_open(c->log, c->log_level) == 0) {
            log_error("%s", err);
            log_close();
        }
        return status;
    }
    if (log_open(c->log, c->log_level) < 0) {
        fprintf(stderr, "conduitd: cannot open the log %s: %s\n", c->log, strerror(errno));
        return 1;
    }
    /*
     * Until the workers are ready, what refuses the start is said here too;
     * but not by the new master of a daemon's upgrade, whose stderr is the
     * log itself (master.c, start_upgrade).
     */
    log_echo_stderr(!(old_master && c->daemonize));
    /*
     * master_init takes the config, so the pidfile's path is copied first:
     * onto the stack, not the heap, since the processes that fork from
     * here (the daemon's parent, the workers) exit without coming back.
     */
    char pid_file[PATH_MAX] = "";
    if (c->pid_file &&
        snprintf(pid_file, sizeof(pid_file), "%s", c->pid_file) >= (int)sizeof(pid_file)) {
        fprintf(stderr, "conduitd: the pid file's path is too long\n");
        log_close();
        return 1;
    }
    int daemonize = c->daemonize;
    if (master_init(o, c, old_master) < 0) {
        status = 1;
        goto out;
    }
    if (daemonize && !old_master && daemon_detach() < 0) {
        log_error("cannot become a daemon: %s", strerror(errno));
        status = 1;
        goto out;
    }
    if (daemonize && old_master && daemon_stay() < 0)
        log_warning("cannot change to /: %s", strerror(errno));
    if (daemonize && !old_master)
        log_echo_stderr(1); /* the daemon is a new process: echo from it */
    /* The new master of an upgrade writes it once its workers are ready (master.c). */
    if (pid_file[0] && !old_master && daemon_write_pidfile(pid_file, err, sizeof(err)) < 0) {
        log_error("%s", err);
        daemon_ready(0);
        return 1; /* the pidfile is another master's: leave it */
    }
    status = master_run();
    remove_pidfiles(pid_file);
out:
    log_close();
    return status;
}

int
main(int argc, char **argv)
{
    struct options o;
    struct config c;
    char err[CONFIG_ERR_LEN];
    int status = 0;

    if (options_parse(&o, argc, argv, err, sizeof(err)) < 0) {
        fprintf(stderr, "conduitd: %s\n(try conduitd -h)\n", err);
        return 1;
    }
    /* How it was started, for a binary upgrade (SIGUSR2): before argv holds the title. */
    if (o.action == OPTIONS_RUN && upgrade_init(argc, argv) < 0)
        fprintf(stderr, "conduitd: cannot note how it was started (%s): SIGUSR2 cannot upgrade\n",
                strerror(errno));
    /* options_parse copied what it keeps: argv may now hold the title. */
    proctitle_init(argc, argv);

    switch (o.action) {
    case OPTIONS_VERSION:
        print_version();
        break;
    case OPTIONS_HELP:
        options_usage(stdout);
        break;
    default:
        if (anchor_paths(&o) < 0 || options_resolve(&o, &c, err, sizeof(err)) < 0) {
            fprintf(stderr, "conduitd: %s\n", err);
            status = 1;
            break;
        }
        if (o.action == OPTIONS_TEST) {
            const char *name = o.config_file ? o.config_file : "(built-in defaults)";
            /* The settings only for a configuration that would start: else the reason alone. */
            if (preflight(&c, err, sizeof(err)) != 0) {
                fprintf(stderr, "conduitd: %s\nconduitd: configuration %s would not start\n", err,
                        name);
                status = 1;
            } else {
                config_print(&c, stdout);
                fprintf(stderr, "conduitd: configuration %s is valid\n", name);
            }
        } else if (o.action == OPTIONS_INIT_DB) {
            status = initdb_run(&c);
        } else if (o.action == OPTIONS_SIGNAL && strcmp(o.signal_name, "upgrade") == 0) {
            status = upgrade_command(&c);
        } else if (o.action == OPTIONS_SIGNAL) {
            status = send_signal(&c, o.signal_name);
        } else {
            status = run(&o, &c);
        }
        config_free(&c);
    }
    options_free(&o);
    return status;
}
