/*
 * load: the whole seeding run against one database, following the bulk
 * load procedure in the header of sql/schema.sql, in ONE transaction:
 *
 *   1. BEGIN; if conduitd's schema is there, lock its tables and look for
 *      rows: any row and no --reset, refuse (exit 3, nothing changed);
 *      otherwise drop the schema's tables and functions (its names are
 *      read from schema.sql itself, so the list cannot go stale);
 *   2. the part of schema.sql above "-- @@ post-load" (tables, primary
 *      keys, functions);
 *   3. one COPY (binary, FREEZE) per table, rows from seed/tables.c;
 *   4. the post-load part, section by section (constraints and indexes,
 *      foreign keys, counters and triggers), which ends with COMMIT;
 *
 * then VACUUM (ANALYZE) and a summary on stdout.  Any failure before the
 * COMMIT rolls everything back: the database is as it was.
 */
#ifndef CONDUITD_SEED_LOAD_H
#define CONDUITD_SEED_LOAD_H

#include "seed/options.h"

/* Returns the exit code (SEED_EXIT_*). */
int load_run(const struct seed_options *o);

#endif
