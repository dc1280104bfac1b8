/*
 * master: the supervisor.  It owns the listening sockets, the scoreboard
 * and the worker table; it forks, reaps, signals and reports, and never
 * runs a request or opens a database connection (DESIGN.md, "Master").
 *
 * Signals only write their number into a self-pipe; a poll() loop with a
 * quarter-second tick reads it and does the work, so nothing of substance
 * runs in a handler and SIGCHLD can never race the worker table.
 */
#ifndef CONDUITD_MASTER_H
#define CONDUITD_MASTER_H

#include "common/config.h"
#include "master/options.h"

/*
 * Runs the master with the resolved config until it is stopped.  opts is
 * kept so that a reload resolves the same flags again.  Returns the
 * process exit status.
 */
int master_run(const struct options *opts, struct config *cfg);

#endif
