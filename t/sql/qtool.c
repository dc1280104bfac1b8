/*
 * qtool: a test tool over the generated query table (queries.h / queries.c
 * from sql/gen-queries.awk).  Built by t/sql/prepare-all.sh and
 * t/integration/sql.sh, never installed.
 *
 *   qtool sql        prints one "PREPARE name AS text;" per query, so a
 *                    psql session can EXECUTE the very text the server sends.
 *   qtool describe   connects (PG* environment), prepares every query with
 *                    PQprepare exactly as the server does (nParams from the
 *                    table, types left to the server), then prints one line
 *                    per query: "name (param types) -> col:type ...".
 *                    Exits 1 when a query does not prepare or when the
 *                    server infers a parameter count other than nparams.
 *   qtool text NAME  prints the text of one query.
 *   qtool exec NAME [PARAM...]
 *                    prepares one query and runs it with PQexecPrepared, the
 *                    parameters sent as text ("\N" sends NULL), results in
 *                    text.  Prints one line per row, fields joined by '|',
 *                    NULL as "NULL"; on error one line "ERROR <sqlstate>
 *                    <constraint name or ->" and exits 1.  Each run is
 *                    its own connection and its own transaction.
 *
 * The describe output is compared with t/sql/contract.txt: it is the
 * result-column contract the handlers are written against.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "queries.h"

/* The few types the queries use, by OID (pg_type.dat). */
static const char *
type_name(Oid t)
{
    switch (t) {
    case 16:
        return "bool";
    case 20:
        return "int8";
    case 23:
        return "int4";
    case 25:
        return "text";
    case 1184:
        return "timestamptz";
    case 3220:
        return "pg_lsn";
    default:
        return "OTHER";
    }
}

static const struct sql_query *
find_query(const char *name)
{
    for (int i = 0; i < SQL_QUERY_COUNT; i++)
        if (strcmp(sql_queries[i].name, name) == 0)
            return &sql_queries[i];
    fprintf(stderr, "qtool: no query named %s\n", name);
    return NULL;
}

static int
exec_one(const char *name, int nargs, char **args)
{
    const struct sql_query *q = find_query(name);
    const char *values[16];
    PGconn *conn;
    PGresult *r;
    int rc = 0;

    if (!q)
        return 2;
    if (nargs != q->nparams || nargs > 16) {
        fprintf(stderr, "qtool: %s takes %d parameters, not %d\n", name, q->nparams, nargs);
        return 2;
    }
    for (int i = 0; i < nargs; i++)
        values[i] = strcmp(args[i], "\\N") == 0 ? NULL : args[i];
    conn = PQconnectdb("");
    if (PQstatus(conn) != CONNECTION_OK) {
        fprintf(stderr, "qtool: %s", PQerrorMessage(conn));
        PQfinish(conn);
        return 2;
    }
    r = PQprepare(conn, q->name, q->text, q->nparams, NULL);
    if (PQresultStatus(r) == PGRES_COMMAND_OK) {
        PQclear(r);
        r = PQexecPrepared(conn, q->name, nargs, values, NULL, NULL, 0);
    }
    if (PQresultStatus(r) == PGRES_TUPLES_OK || PQresultStatus(r) == PGRES_COMMAND_OK) {
        for (int t = 0; t < PQntuples(r); t++) {
            for (int f = 0; f < PQnfields(r); f++)
                printf("%s%s", f ? "|" : "", PQgetisnull(r, t, f) ? "NULL" : PQgetvalue(r, t, f));
            printf("\n");
        }
    } else {
        const char *state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
        const char *cons = PQresultErrorField(r, PG_DIAG_CONSTRAINT_NAME);

        printf("ERROR %s %s\n", state ? state : "?", cons ? cons : "-");
        fprintf(stderr, "qtool: %s: %s", name, PQresultErrorMessage(r));
        rc = 1;
    }
    PQclear(r);
    PQfinish(conn);
    return rc;
}

static int
print_sql(void)
{
    for (int i = 0; i < SQL_QUERY_COUNT; i++)
        printf("PREPARE %s AS\n%s;\n", sql_queries[i].name, sql_queries[i].text);
    return 0;
}

static int
describe(void)
{
    PGconn *conn = PQconnectdb("");
    int bad = 0;

    if (PQstatus(conn) != CONNECTION_OK) {
        fprintf(stderr, "qtool: %s", PQerrorMessage(conn));
        PQfinish(conn);
        return 1;
    }
    for (int i = 0; i < SQL_QUERY_COUNT; i++) {
        const struct sql_query *q = &sql_queries[i];
        PGresult *r = PQprepare(conn, q->name, q->text, q->nparams, NULL);

        if (PQresultStatus(r) != PGRES_COMMAND_OK) {
            printf("%s PREPARE FAILED: %s", q->name, PQresultErrorMessage(r));
            PQclear(r);
            bad = 1;
            continue;
        }
        PQclear(r);
        r = PQdescribePrepared(conn, q->name);
        if (PQresultStatus(r) != PGRES_COMMAND_OK) {
            printf("%s DESCRIBE FAILED: %s", q->name, PQresultErrorMessage(r));
            PQclear(r);
            bad = 1;
            continue;
        }
        printf("%s (", q->name);
        for (int p = 0; p < PQnparams(r); p++)
            printf("%s%s", p ? " " : "", type_name(PQparamtype(r, p)));
        printf(") ->");
        for (int f = 0; f < PQnfields(r); f++)
            printf(" %s:%s", PQfname(r, f), type_name(PQftype(r, f)));
        printf("\n");
        if (PQnparams(r) != q->nparams) {
            printf("%s NPARAMS MISMATCH: table says %d, server infers %d\n", q->name, q->nparams,
                   PQnparams(r));
            bad = 1;
        }
        PQclear(r);
    }
    PQfinish(conn);
    return bad;
}

int
main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "sql") == 0)
        return print_sql();
    if (argc == 2 && strcmp(argv[1], "describe") == 0)
        return describe();
    if (argc == 3 && strcmp(argv[1], "text") == 0) {
        const struct sql_query *q = find_query(argv[2]);
        if (!q)
            return 2;
        printf("%s;\n", q->text);
        return 0;
    }
    if (argc >= 3 && strcmp(argv[1], "exec") == 0)
        return exec_one(argv[2], argc - 3, argv + 3);
    fprintf(stderr, "usage: qtool sql|describe|text NAME|exec NAME [PARAM...]\n");
    return 2;
}
