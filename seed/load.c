/*
 * load: see load.h.
 */
#include "config.h"

#include "seed/load.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "common/dataset.h"
#include "common/password.h"
#include "seed/copy.h"
#include "seed/model.h"
#include "seed/parts.h"
#include "seed/progress.h"
#include "seed/tables.h"
#include "sql/direct.h"

extern const char schema_sql[];

/* The statements of sql/direct.sql, by name. */
#define SQL(name) (sql_direct[SQL_DIRECT_##name].text)

struct run {
    const struct seed_options *o;
    PGconn *pg;
    int committed;
    struct model m;
    struct parts parts;
    struct progress p;
    char err[1024];
};

/*
 * Server notices go to stderr, but for the one our own BEGIN causes: the
 * pre-load part opens with BEGIN too ("there is already a transaction in
 * progress", SQLSTATE 25001), which is expected.
 */
static void
on_notice(void *arg, const PGresult *r)
{
    const struct progress *p = arg;
    const char *state = PQresultErrorField(r, PG_DIAG_SQLSTATE);

    if (state && strcmp(state, "25001") == 0)
        return;
    /* Below a progress line being redrawn, not on it. */
    fprintf(stderr, "%sconduit-seed: server says: %s", p->tty && !p->quiet ? "\n" : "",
            PQresultErrorMessage(r));
}

/* Runs sql (one or more statements); 0, or -1 with the server's reason in err. */
static int
exec(struct run *r, const char *sql)
{
    PGresult *res = PQexec(r->pg, sql);
    ExecStatusType st = PQresultStatus(res);
    int rc = 0;

    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK && st != PGRES_EMPTY_QUERY) {
        snprintf(r->err, sizeof(r->err), "%s", PQresultErrorMessage(res));
        rc = -1;
    }
    PQclear(res);
    return rc;
}

/* The first column of the first row of sql as a number (-1 on failure). */
static long long
scalar(struct run *r, const char *sql)
{
    PGresult *res = PQexec(r->pg, sql);
    long long v = -1;

    if (PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1)
        v = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
    else
        snprintf(r->err, sizeof(r->err), "%s", PQresultErrorMessage(res));
    PQclear(res);
    return v;
}

/* 1 if the relation exists in the search path, 0 if not, -1 on failure. */
static int
relation_exists(struct run *r, const char *name)
{
    const char *params[1] = {name};
    PGresult *res = PQexecParams(r->pg, SQL(RELATION_EXISTS), 1, NULL, params, NULL, NULL, 0);
    int v = -1;

    if (PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1)
        v = strcmp(PQgetvalue(res, 0, 0), "t") == 0;
    else
        snprintf(r->err, sizeof(r->err), "%s", PQresultErrorMessage(res));
    PQclear(res);
    return v;
}

/*
 * Step 1 of load.h: refuse, or clear the way.  Returns 0 to go on,
 * SEED_EXIT_REFUSED, or -1 on a database error.  Table names come from
 * schema.sql and tables.c, never from input.
 */
static int
clear_way(struct run *r)
{
    char sql[4096], with_rows[1024] = "";
    size_t n = 0;
    int schema = relation_exists(r, "schema_version"), found = 0;

    if (schema < 0)
        return -1;
    n = (size_t)snprintf(sql, sizeof(sql), "LOCK TABLE ");
    for (int i = 0; i < r->parts.ntables; i++) {
        int e = relation_exists(r, r->parts.tables[i]);
        if (e < 0)
            return -1;
        if (!e)
            continue;
        if (!schema) {
            fprintf(stderr,
                    "conduit-seed: database \"%s\" has a table \"%s\" but no conduitd schema "
                    "(no schema_version): seed into an empty database\n",
                    PQdb(r->pg), r->parts.tables[i]);
            return SEED_EXIT_REFUSED;
        }
        n += (size_t)snprintf(sql + n, sizeof(sql) - n, "%s%s", found++ ? ", " : "",
                              r->parts.tables[i]);
    }
    if (!found)
        return 0;
    /* No writer may add a row between the look and the drop. */
    snprintf(sql + n, sizeof(sql) - n, " IN ACCESS EXCLUSIVE MODE");
    if (exec(r, sql) < 0)
        return -1;
    for (int i = 0; i < TABLES_N; i++) {
        long long rows;
        if (relation_exists(r, tables[i].name) != 1)
            continue;
        snprintf(sql, sizeof(sql), "SELECT count(*) FROM (SELECT 1 FROM %s LIMIT 1000000) s",
                 tables[i].name);
        if ((rows = scalar(r, sql)) < 0)
            return -1;
        if (rows > 0)
            snprintf(with_rows + strlen(with_rows), sizeof(with_rows) - strlen(with_rows),
                     "%s%s%lld %s", with_rows[0] ? ", " : "", rows == 1000000 ? "over " : "", rows,
                     tables[i].name);
    }
    if (with_rows[0] && !r->o->reset) {
        fprintf(stderr,
                "conduit-seed: database \"%s\" already holds data (%s); nothing was changed. "
                "Give --reset to replace it.\n",
                PQdb(r->pg), with_rows);
        return SEED_EXIT_REFUSED;
    }
    /* The cascades' notices list every foreign key: not worth a screen. */
    if (exec(r, SQL(SEED_NOTICES_OFF)) < 0)
        return -1;
    for (int i = 0; i < r->parts.ntables; i++) {
        snprintf(sql, sizeof(sql), "DROP TABLE IF EXISTS %s CASCADE", r->parts.tables[i]);
        if (exec(r, sql) < 0)
            return -1;
    }
    for (int i = 0; i < r->parts.nfunctions; i++) {
        snprintf(sql, sizeof(sql), "DROP FUNCTION IF EXISTS %s CASCADE", r->parts.functions[i]);
        if (exec(r, sql) < 0)
            return -1;
    }
    return exec(r, SQL(SEED_NOTICES_ON));
}

/*
 * Runs sql and redraws the progress line while the server works (index
 * builds take a while): the query is sent, then the socket polled.
 */
static int
exec_timed(struct run *r, const char *sql)
{
    PGresult *res;
    int rc = 0;

    if (!PQsendQuery(r->pg, sql)) {
        snprintf(r->err, sizeof(r->err), "%s", PQerrorMessage(r->pg));
        return -1;
    }
    for (;;) {
        while (PQisBusy(r->pg)) {
            struct pollfd pfd = {.fd = PQsocket(r->pg), .events = POLLIN};
            poll(&pfd, 1, 200);
            progress_update(&r->p, 0);
            if (!PQconsumeInput(r->pg)) {
                snprintf(r->err, sizeof(r->err), "%s", PQerrorMessage(r->pg));
                return -1;
            }
        }
        if (!(res = PQgetResult(r->pg)))
            break;
        if (PQresultStatus(res) != PGRES_COMMAND_OK && PQresultStatus(res) != PGRES_TUPLES_OK &&
            PQresultStatus(res) != PGRES_EMPTY_QUERY && rc == 0) {
            snprintf(r->err, sizeof(r->err), "%s", PQresultErrorMessage(res));
            rc = -1;
        }
        PQclear(res);
    }
    return rc;
}

/*
 * The global article count's 16 stripes (schema.sql: row id % 16), which
 * the pre-load part creates at 0.  Set here, like every other counter, so
 * that conduit_recount() in the post-load part finds nothing to fix: its
 * notice then means a real miscount.
 */
static int
stripes(struct run *r)
{
    char articles[24];
    const char *params[1] = {articles};
    PGresult *res;
    int rc = 0;

    snprintf(articles, sizeof(articles), "%lld", (long long)r->m.d.articles);
    res = PQexecParams(r->pg, SQL(SEED_STRIPES), 1, NULL, params, NULL, NULL, 0);
    if (PQresultStatus(res) != PGRES_COMMAND_OK) {
        snprintf(r->err, sizeof(r->err), "%s", PQresultErrorMessage(res));
        rc = -1;
    }
    PQclear(res);
    return rc;
}

static void
tick(void *arg, int64_t rows)
{
    progress_update(arg, rows);
}

/* Steps 2 to 4 of load.h, then VACUUM (ANALYZE). */
static int
load(struct run *r)
{
    struct tables_ctx ctx = {.m = &r->m};
    char hash[PASSWORD_HASH_LEN];
    unsigned char salt[16];
    char name[PROGRESS_NAME_MAX];

    progress_begin(&r->p, "password hash", -1);
    /* A salt from the seed: the same seed, the same users table, byte for byte. */
    for (int i = 0; i < 16; i++)
        salt[i] = (unsigned char)dataset_hash(r->m.d.seed, MODEL_STREAM_SALT, (uint64_t)i);
    if (password_hash_salted(DATASET_PASSWORD, r->o->bcrypt_cost, salt, hash) < 0) {
        snprintf(r->err, sizeof(r->err), "cannot compute the bcrypt hash (libxcrypt)");
        return -1;
    }
    progress_end(&r->p, 0);
    ctx.password_hash = hash;

    progress_begin(&r->p, "schema, pre-load part", -1);
    if (exec(r, r->parts.pre) < 0)
        return -1;
    progress_end(&r->p, 0);

    for (int i = 0; i < TABLES_N; i++) {
        int64_t rows;
        progress_begin(&r->p, tables[i].name, tables_rows(&r->m, &tables[i]));
        rows = copy_table(r->pg, tables[i].copy_sql, tables[i].gen, &ctx, tick, &r->p, r->err,
                          sizeof(r->err));
        if (rows < 0)
            return -1;
        progress_end(&r->p, rows);
    }

    if (stripes(r) < 0)
        return -1;
    for (int i = 0; i < r->parts.nsections; i++) {
        snprintf(name, sizeof(name), "%s", r->parts.sections[i].name);
        progress_begin(&r->p, name, -1);
        if (exec_timed(r, r->parts.sections[i].sql) < 0)
            return -1;
        progress_end(&r->p, 0);
    }
    /* The post-load part ends with COMMIT: the data is in. */
    if (PQtransactionStatus(r->pg) != PQTRANS_IDLE) {
        snprintf(r->err, sizeof(r->err), "schema.sql's post-load part did not commit");
        return -1;
    }
    r->committed = 1;
    progress_begin(&r->p, "vacuum (analyze)", -1);
    if (exec_timed(r, SQL(SEED_VACUUM)) < 0)
        return -1;
    progress_end(&r->p, 0);
    return 0;
}

/* Rows per table, the size, the skew and the stages, on stdout. */
static void
summary(struct run *r)
{
    const struct model *m = &r->m;
    int64_t top_fav = 0, top_com = 0, top_fol = 0;
    char sql[256];
    double total = progress_now() - r->p.start;

    for (int64_t j = 1; j <= m->d.articles; j++) {
        top_fav = m->article_favorites[j] > top_fav ? m->article_favorites[j] : top_fav;
        top_com = m->article_comments[j] > top_com ? m->article_comments[j] : top_com;
    }
    for (int64_t i = 1; i <= m->d.users; i++)
        top_fol = m->user_followers[i] > top_fol ? m->user_followers[i] : top_fol;

    printf("conduit-seed: scale %g, seed %llu loaded into database \"%s\" in %.1f s\n", m->d.scale,
           (unsigned long long)m->d.seed, PQdb(r->pg), total);
    printf("  %-14s %12s\n", "table", "rows");
    for (int i = 0; i < TABLES_N; i++) {
        snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s", tables[i].name);
        printf("  %-14s %12lld\n", tables[i].name, scalar(r, sql));
    }
    printf("  database size  %.2f GB (%lld bytes)\n",
           (double)scalar(r, SQL(SEED_DATABASE_SIZE)) / 1e9, scalar(r, SQL(SEED_DATABASE_SIZE)));
    printf("  most followed user %lld followers, most favorited article %lld favorites, "
           "most commented article %lld comments\n",
           (long long)top_fol, (long long)top_fav, (long long)top_com);
    printf("  %-40s %9s\n", "stage", "seconds");
    for (int i = 0; i < r->p.n; i++)
        printf("  %-40s %9.1f\n", r->p.stages[i].name, r->p.stages[i].seconds);
}

int
load_run(const struct seed_options *o)
{
    const char *conninfo = o->db ? o->db : getenv("DATABASE_URL");
    struct run *r = calloc(1, sizeof(*r));
    int status = SEED_EXIT_FAIL, c;

    if (!r) {
        fprintf(stderr, "conduit-seed: out of memory\n");
        return SEED_EXIT_FAIL;
    }
    r->o = o;
    progress_init(&r->p, stderr, o->quiet);
    progress_begin(&r->p, "model (who writes, follows, favorites)", -1);
    if ((c = model_init(&r->m, o->scale, o->seed, r->err, sizeof(r->err))) < 0) {
        fprintf(stderr, "conduit-seed: %s\n", r->err);
        status = c == -1 ? SEED_EXIT_USAGE : SEED_EXIT_FAIL;
        goto out;
    }
    progress_end(&r->p, 0);
    if (parts_split(&r->parts, schema_sql) < 0) {
        fprintf(stderr, "conduit-seed: the embedded schema has no \"-- @@ post-load\" part\n");
        goto out;
    }
    r->pg = PQconnectdb(conninfo ? conninfo : "");
    if (PQstatus(r->pg) != CONNECTION_OK) {
        fprintf(stderr, "conduit-seed: cannot connect to the database: %s", PQerrorMessage(r->pg));
        goto out;
    }
    PQsetNoticeReceiver(r->pg, on_notice, &r->p);
    if (exec(r, SQL(SEED_SESSION)) < 0)
        goto failed;
    exec(r, SQL(SEED_LZ4)); /* refused without lz4: then pglz it is */
    if (exec(r, SQL(SEED_BEGIN)) < 0)
        goto failed;
    if ((c = clear_way(r)) != 0) {
        if (c < 0)
            goto failed;
        status = c;
        goto out;
    }
    if (load(r) < 0)
        goto failed;
    summary(r);
    status = SEED_EXIT_OK;
    goto out;
failed:
    fprintf(stderr, "\nconduit-seed: %s: %s",
            r->committed ? "the data is in, but the final VACUUM (ANALYZE) failed"
                         : "the load failed, nothing was changed",
            r->err);
    if (r->err[0] && r->err[strlen(r->err) - 1] != '\n')
        fputc('\n', stderr);
out:
    /* An open transaction is rolled back when the connection closes. */
    PQfinish(r->pg);
    parts_free(&r->parts);
    model_free(&r->m);
    free(r);
    return status;
}
