/*
 * log: see log.h.  Kept free of allocation after log_open() so that it can be
 * used on any path, including out-of-memory ones.
 */
#include "config.h"

#include "common/log.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

enum target_kind { TARGET_STDERR, TARGET_FILE, TARGET_SYSLOG };

static struct {
    enum target_kind kind;
    int fd;
    int level;
    char path[PATH_MAX];
    char role[32];
    pid_t echo_pid; /* the process that echoes to stderr, or 0 */
} logger = {TARGET_STDERR, STDERR_FILENO, LOG_LEVEL_INFO, "", "conduitd", 0};

static const char *const level_names[] = {"debug", "info", "notice", "warning", "error"};
static const int syslog_prio[] = {LOG_DEBUG, LOG_INFO, LOG_NOTICE, LOG_WARNING, LOG_ERR};

static int
open_file(const char *path)
{
    return open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
}

int
log_open(const char *target, int level)
{
    logger.level = level;
    if (target == NULL || strcmp(target, "stderr") == 0) {
        log_close();
        logger.kind = TARGET_STDERR;
        logger.fd = STDERR_FILENO;
        return 0;
    }
    if (strcmp(target, "syslog") == 0) {
        log_close();
        logger.kind = TARGET_SYSLOG;
        logger.fd = -1;
        openlog("conduitd", LOG_PID | LOG_NDELAY, LOG_DAEMON);
        return 0;
    }
    if (strlen(target) >= sizeof(logger.path)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    int fd = open_file(target);
    if (fd < 0)
        return -1;
    log_close();
    logger.kind = TARGET_FILE;
    logger.fd = fd;
    snprintf(logger.path, sizeof(logger.path), "%s", target);
    return 0;
}

int
log_reopen(void)
{
    if (logger.kind != TARGET_FILE)
        return 0;
    int fd = open_file(logger.path);
    if (fd < 0)
        return -1;
    /* dup2 keeps the descriptor number, so nothing else holding it goes stale. */
    if (dup2(fd, logger.fd) < 0) {
        close(fd);
        return -1;
    }
    close(fd);
    return 0;
}

void
log_close(void)
{
    if (logger.kind == TARGET_FILE && logger.fd >= 0)
        close(logger.fd);
    else if (logger.kind == TARGET_SYSLOG)
        closelog();
    logger.kind = TARGET_STDERR;
    logger.fd = STDERR_FILENO;
}

void
log_set_role(const char *role)
{
    snprintf(logger.role, sizeof(logger.role), "%s", role);
}

void
log_echo_stderr(int on)
{
    logger.echo_pid = on ? getpid() : 0;
}

/* A message (without the stamp) on stderr too, while the echo is on. */
static void
echo(int level, const char *msg)
{
    if (level < LOG_LEVEL_WARNING || logger.kind == TARGET_STDERR || logger.echo_pid == 0 ||
        logger.echo_pid != getpid())
        return;
    char line[2048];
    int n = snprintf(line, sizeof(line), "conduitd: %s\n", msg);
    if (n < 0)
        return;
    if (n >= (int)sizeof(line))
        n = (int)sizeof(line) - 1;
    ssize_t w = write(STDERR_FILENO, line, (size_t)n);
    (void)w;
}

int
log_fd(void)
{
    return logger.fd;
}

void
log_vmsg(int level, const char *fmt, va_list ap)
{
    if (level < logger.level)
        return;
    int saved_errno = errno;
    char line[2048];
    size_t n = 0;

    if (logger.kind == TARGET_SYSLOG) {
        n = (size_t)snprintf(line, sizeof(line), "%s: ", logger.role);
        vsnprintf(line + n, sizeof(line) - n, fmt, ap);
        syslog(syslog_prio[level], "%s", line);
        echo(level, line + n);
        errno = saved_errno;
        return;
    }

    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    n = strftime(line, sizeof(line), "%Y-%m-%dT%H:%M:%S", &tm);
    n += (size_t)snprintf(line + n, sizeof(line) - n, ".%03ldZ [%ld] %s %s: ", ts.tv_nsec / 1000000,
                          (long)getpid(), logger.role, level_names[level]);
    size_t start = n;
    int m = vsnprintf(line + n, sizeof(line) - n, fmt, ap);
    if (m < 0)
        m = 0;
    n += (size_t)m;
    if (n > sizeof(line) - 2)
        n = sizeof(line) - 2; /* truncated: still one whole line */
    line[n] = '\0';
    echo(level, line + start);
    line[n++] = '\n';
    /* One write(2) per line: O_APPEND makes it atomic between processes. */
    ssize_t w = write(logger.fd, line, n);
    (void)w;
    errno = saved_errno;
}

void
log_msg(int level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_vmsg(level, fmt, ap);
    va_end(ap);
}

void
fatal(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_vmsg(LOG_LEVEL_ERROR, fmt, ap);
    va_end(ap);
    abort();
}
