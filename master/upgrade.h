/*
 * upgrade: the binary upgrade on the fly (nginx's USR2).  The master
 * remembers at start how it was started (the binary's path, the arguments,
 * the folder), and on SIGUSR2 forks a child that execs that path again,
 * with the same arguments and the listening sockets passed as systemd's
 * socket activation passes them (common/listen.h): the new master binds
 * nothing and loses no connection.  The new master is the old one's child
 * and does not detach again, so the old master sees it exit (SIGCHLD) and
 * can take the service back.  master.c drives it (the pidfile's .oldbin,
 * WINCH, the rollback); upgrade_cmd.c is "conduitd -s upgrade".
 */
#ifndef CONDUITD_UPGRADE_H
#define CONDUITD_UPGRADE_H

#include <stddef.h>
#include <sys/types.h>

#include "common/listen.h"

/*
 * Keeps a copy of argv, the start folder and the binary's path (argv[0]
 * made absolute when it names a path, else /proc/self/exe), for
 * upgrade_exec().  Before proctitle_init() overwrites argv.  0 or -1.
 */
int upgrade_init(int argc, char **argv);

/* The binary an upgrade would run. */
const char *upgrade_binary(void);

/*
 * The old master's pid when this process is the new master of an upgrade
 * (its parent set CONDUITD_UPGRADE_FROM to its own pid), else 0.  Reads
 * and unsets the variable: once, at start.
 */
pid_t upgrade_from(void);

/*
 * Forks and execs the new master with the sockets of ls and status, and
 * stderr_fd (-1: none) as its stderr: a daemon's log file, so that what
 * the new binary says before it opens its own log (a configuration it
 * refuses) is not lost on /dev/null.  Returns its pid once the exec has
 * succeeded, or -1 with err saying why (the binary missing or not
 * executable: nothing was started).
 */
pid_t upgrade_exec(const struct listener_set *ls, const struct listener *status, int stderr_fd,
                   char *err, size_t errlen);

#endif
