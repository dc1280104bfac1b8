/*
 * log: one line per event, to stderr, a file or syslog.
 *
 * Every process (master and workers) shares the same target.  A file is
 * opened with O_APPEND and each line goes out in a single write(2), so lines
 * from several processes never interleave.  log_reopen() is what USR1 runs,
 * after logrotate has moved the file away.
 */
#ifndef CONDUITD_LOG_H
#define CONDUITD_LOG_H

#include <stdarg.h>

/* In the order of the words of settings.c's log_level key. */
enum log_level {
    LOG_LEVEL_DEBUG,
    LOG_LEVEL_INFO,
    LOG_LEVEL_NOTICE,
    LOG_LEVEL_WARNING,
    LOG_LEVEL_ERROR
};

/*
 * target is "stderr", "syslog" or a file path.  Returns 0, or -1 with errno
 * set when the file cannot be opened (the previous target stays in use).
 */
int log_open(const char *target, int level);
int log_reopen(void);
void log_close(void);

/* The role shown on every line: "master", "worker 3". */
void log_set_role(const char *role);

/*
 * While on, warnings and errors also go to stderr, as "conduitd: message",
 * when the target is a file or syslog: a start refused with --log FILE says
 * why where it was typed, as nginx does until it detaches.  Only the process
 * that turned it on echoes (a worker forked from it has its own stderr
 * story), so a process that forks to detach turns it on again in the child.
 */
void log_echo_stderr(int on);

/* The file descriptor lines go to, or -1 for syslog (for closing stdio). */
int log_fd(void);

void log_msg(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void log_vmsg(int level, const char *fmt, va_list ap);

#define log_debug(...) log_msg(LOG_LEVEL_DEBUG, __VA_ARGS__)
#define log_info(...) log_msg(LOG_LEVEL_INFO, __VA_ARGS__)
#define log_notice(...) log_msg(LOG_LEVEL_NOTICE, __VA_ARGS__)
#define log_warning(...) log_msg(LOG_LEVEL_WARNING, __VA_ARGS__)
#define log_error(...) log_msg(LOG_LEVEL_ERROR, __VA_ARGS__)

/* For impossible states: logs and aborts. */
void fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif
