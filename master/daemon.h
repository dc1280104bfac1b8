/*
 * daemon: the classic Unix daemon chores: detaching, the pid file, and
 * dropping privileges.
 */
#ifndef CONDUITD_DAEMON_H
#define CONDUITD_DAEMON_H

#include <sys/types.h>

/*
 * Detaches: fork, setsid, chdir /, stdio to /dev/null.  The parent waits
 * until the child calls daemon_ready() (or dies) so that whoever started us
 * (a shell, systemd's Type=forking) sees a failure at start as our exit
 * status, and sees the pid file in place on success.  Returns 0 in the
 * child, -1 on failure; the parent never returns.
 */
int daemon_detach(void);
void daemon_ready(int ok);

/*
 * The new master of a binary upgrade, when daemonized: the old master it
 * is the child of detached already (its session, stdin and stdout are
 * inherited), so it only leaves its start folder for "/", as
 * daemon_detach() does, and does not fork again: the old master must see
 * it exit.  0 or -1.
 */
int daemon_stay(void);

/*
 * Writes our pid to path, refusing when another live process owns it.
 * Returns 0, or -1 with a reason in err.
 */
int daemon_write_pidfile(const char *path, char *err, size_t errlen);
/*
 * path with ".oldbin" appended (where an old master's pid goes during a
 * binary upgrade, as nginx's does) into out; -1 when it does not fit.
 */
int daemon_oldbin_path(const char *path, char *out, size_t outlen);

/* Removes the pid file if it still names this process. */
void daemon_remove_pidfile(const char *path);
/* The pid in path, or -1 (err says why). */
pid_t daemon_read_pidfile(const char *path, char *err, size_t errlen);

/*
 * Drops to user (and group, or the user's primary group): setgroups,
 * setgid, setuid, then checks that setuid(0) fails.  user NULL: no change.
 */
int daemon_drop_privileges(const char *user, const char *group, char *err, size_t errlen);

/* Looks the names up without changing anything (for -t and start-up). */
int daemon_check_user(const char *user, const char *group, char *err, size_t errlen);

#endif
