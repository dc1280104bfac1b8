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
 * What version n added to schema.sql: every part between a line "-- @@
 * version n" and the next "-- @@ end of version n", in the order of the
 * file (a version may add tables above the post-load marker and their fill
 * below it), joined; NULL when there is none or memory runs out.
 */
static char *
added_in(int n)
{
    char begin[48], end[48];
    const char *from = schema_sql, *to;
    char *out = NULL, *grown;
    size_t len = 0, k;

    snprintf(begin, sizeof(begin), "-- @@ version %d\n", n);
    snprintf(end, sizeof(end), "-- @@ end of version %d\n", n);
    while ((from = strstr(from, begin)) && (to = strstr(from, end))) {
        k = (size_t)(to - from);
        if (!(grown = realloc(out, len + k + 1))) {
            free(out);
            return NULL;
        }
        out = grown;
        memcpy(out + len, from, k);
        len += k;
        out[len] = '\0';
        from = to + strlen(end);
    }
    return out;
}

/* The version the embedded schema makes: the last one with an added part. */
static int
latest_version(void)
{
    int n = 1;
    char *part;

    while ((part = added_in(n + 1))) {
        free(part);
        n++;
    }
    return n;
}

/*
 * Everything the versions after v added, in version order: one text, so
 * that one PQexec applies it in one transaction (all of it or nothing).
 * NULL when out of memory or a version's part is missing.
 */
static char *
upgrade_from(int v, int latest)
{
    char *out = NULL, *part, *grown;
    size_t len = 0, k;

    for (int n = v + 1; n <= latest; n++) {
        if (!(part = added_in(n))) {
            free(out);
            return NULL;
        }
        k = strlen(part);
        if (!(grown = realloc(out, len + k + 1))) {
            free(part);
            free(out);
            return NULL;
        }
        out = grown;
        memcpy(out + len, part, k + 1);
        len += k;
        free(part);
    }
    return out;
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
    int v, latest, status = 1;

    if (PQstatus(pg) != CONNECTION_OK) {
        fprintf(stderr, "conduitd: cannot connect to the database: %s", PQerrorMessage(pg));
        goto out;
    }
    v = schema_version(pg);
    latest = latest_version();
    if (v >= 1 && v < latest) {
        /*
         * Version 2 added the Idempotency-Key table, version 3 the feed
         * inbox (and fills it from the data): the workers' statements name
         * them.
         */
        char *up = upgrade_from(v, latest);
        if (!up) {
            fprintf(stderr, "conduitd: the embedded schema has no upgrade from version %d\n", v);
            goto out;
        }
        status = apply(pg, up, "upgrading the schema") < 0;
        free(up);
        if (status == 0)
            printf("conduitd: schema upgraded from version %d to version %d in database %s\n", v,
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
