/*
 * initdb: apply the embedded schema.  See initdb.h.
 */
#include "config.h"

#include "master/initdb.h"
#include "sql/direct.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

extern const char schema_sql[];

/* The version the schema file inserts; what an applied schema reports. */
static int
schema_version(PGconn *pg)
{
    /* Two steps: a query naming a missing table fails when it is planned. */
    const char *table[1] = {"schema_version"};
    PGresult *r = PQexecParams(pg, sql_direct[SQL_DIRECT_RELATION_EXISTS].text, 1, NULL, table,
                               NULL, NULL, 0);
    int v = -2;

    if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1)
        v = strcmp(PQgetvalue(r, 0, 0), "t") == 0 ? 0 : -1;
    PQclear(r);
    if (v != 0)
        return v;
    r = PQexec(pg, sql_direct[SQL_DIRECT_SCHEMA_VERSION_APPLIED].text);
    v = -2;
    if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1)
        v = atoi(PQgetvalue(r, 0, 0));
    PQclear(r);
    return v;
}

/*
 * The part of schema.sql that brings a database of version 1 to version 2
 * (its markers say where), as a string of its own; NULL when out of memory
 * or the markers are missing.
 */
#define V2_BEGIN "-- @@ version 2\n"
#define V2_END "-- @@ end of version 2\n"

static char *
upgrade_to_2(void)
{
    const char *from = strstr(schema_sql, V2_BEGIN);
    const char *to = from ? strstr(from, V2_END) : NULL;

    return to ? strndup(from, (size_t)(to - from)) : NULL;
}

/* 0 when applied: every statement of sql, in one transaction (PQexec's). */
static int
apply(PGconn *pg, const char *sql, const char *what)
{
    PGresult *r = PQexec(pg, sql);
    int ok = PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK;

    if (!ok)
        fprintf(stderr, "conduitd: %s failed: %s", what, PQresultErrorMessage(r));
    PQclear(r);
    return ok ? 0 : -1;
}

int
initdb_run(const struct config *c)
{
    const char *conninfo = c->db ? c->db : getenv("DATABASE_URL");
    PGconn *pg = PQconnectdb(conninfo ? conninfo : "");
    int v, status = 1;

    if (PQstatus(pg) != CONNECTION_OK) {
        fprintf(stderr, "conduitd: cannot connect to the database: %s", PQerrorMessage(pg));
        goto out;
    }
    v = schema_version(pg);
    if (v == 1) {
        /* Version 2 adds the Idempotency-Key table, which the workers' statements name. */
        char *up = upgrade_to_2();
        if (!up) {
            fprintf(stderr, "conduitd: the embedded schema has no upgrade to version 2\n");
            goto out;
        }
        status = apply(pg, up, "upgrading the schema to version 2") < 0;
        free(up);
        if (status == 0)
            printf("conduitd: schema upgraded from version 1 to version %d in database %s\n",
                   schema_version(pg), PQdb(pg));
        goto out;
    }
    if (v >= 0) {
        printf("conduitd: the schema is already applied (version %d): nothing to do\n", v);
        status = 0;
        goto out;
    }
    if (v == -2) {
        fprintf(stderr, "conduitd: cannot read the schema version: %s", PQerrorMessage(pg));
        goto out;
    }
    /* schema.sql is one transaction: all of it lands, or nothing. */
    if (apply(pg, schema_sql, "applying the schema") < 0)
        goto out;
    printf("conduitd: schema version %d applied to database %s\n", schema_version(pg), PQdb(pg));
    status = 0;
out:
    PQfinish(pg);
    return status;
}
