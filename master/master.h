/*
 * master: the supervisor.  It owns the listening sockets, the scoreboard
 * and the worker table; it forks, reaps, signals and reports, and never
 * runs a request or opens a database connection (docs/design.md, "Master").
 *
 * Signal handlers only set a flag and write a byte into a self-pipe that
 * wakes a poll() loop (a quarter-second tick otherwise).  Each pass of the
 * loop does the work in a fixed order: reap, stop, reload, add or remove
 * workers, reopen logs, upgrade (USR2, WINCH), tick.  Nothing of substance runs in a handler, and
 * SIGCHLD can never race the worker table.
 */
#ifndef CONDUITD_MASTER_H
#define CONDUITD_MASTER_H

#include <sys/types.h>

#include "common/settings.h"
#include "master/options.h"

/*
 * Takes over cfg (the caller's copy is zeroed), binds the listening sockets
 * and maps the scoreboard: everything that can fail for a reason the user
 * must see, so it runs before the process detaches.  opts is kept, so a
 * reload resolves the same flags again.  old_master: the pid of the master
 * this one replaces in a binary upgrade (upgrade_from()), or 0; such a
 * master writes the pidfile only once its workers are ready.  0 or -1,
 * logged.
 */
int master_init(const struct options *opts, struct config *cfg, pid_t old_master);

/* Forks the workers and supervises them until stopped; the exit status. */
int master_run(void);

#endif
