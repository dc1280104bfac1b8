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

int
initdb_run(const struct config *c)
{
    const char *conninfo = c->db ? c->db : getenv("DATABASE_URL");
    PGconn *pg = PQconnectdb(conninfo ? conninfo : "");
    PGresult *r;
    int v, status = 1;

    if (PQstatus(pg) != CONNECTION_OK) {
        fprintf(stderr, "conduitd: cannot connect to the database: %s", PQerrorMessage(pg));
        goto out;
    }
    v = schema_version(pg);
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
    r = PQexec(pg, schema_sql);
    if (PQresultStatus(r) != PGRES_COMMAND_OK && PQresultStatus(r) != PGRES_TUPLES_OK) {
        fprintf(stderr, "conduitd: applying the schema failed: %s", PQresultErrorMessage(r));
        PQclear(r);
        goto out;
    }
    PQclear(r);
    printf("conduitd: schema version %d applied to database %s\n", schema_version(pg), PQdb(pg));
    status = 0;
out:
    PQfinish(pg);
    return status;
}
