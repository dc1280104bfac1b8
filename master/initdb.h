/*
 * initdb: `conduitd --init-db` applies the schema this binary was built
 * with (sql/schema.sql, embedded) to the configured database, once.  It
 * runs before any worker exists, so it may block: it is a command, not
 * part of the server.  A database of an older schema version is upgraded
 * to the latest (for each later version, the parts of schema.sql between
 * "-- @@ version N" and its end marker, all in one transaction).
 */
#ifndef CONDUITD_INITDB_H
#define CONDUITD_INITDB_H

#include "common/settings.h"

/* 0 when applied or already there at this version; 1 with a message. */
int initdb_run(const struct config *c);

#endif
