/*
 * upgrade_cmd: "conduitd -s upgrade", the binary upgrade as one command
 * that checks each step before the next, as etc/conduitd-rolling-reload
 * does for HUP: USR2 to the master the pidfile names; wait until the new
 * master writes the pidfile (it does once all its workers are ready) while
 * the old one's pid is in PIDFILE.oldbin; WINCH to the old master; wait
 * until its workers are gone; TERM to it (its graceful stop: nothing is
 * left to stop).  A step that fails rolls back what the ones before did
 * (HUP to the old master brings its workers back, TERM ends the new one)
 * and the command exits 1, saying which step; the old master's log says
 * why a new binary did not start.
 */
#ifndef CONDUITD_UPGRADE_CMD_H
#define CONDUITD_UPGRADE_CMD_H

#include "common/settings.h"

/* The exit status: 0 once the new master alone serves, 1 otherwise. */
int upgrade_command(const struct config *c);

#endif
