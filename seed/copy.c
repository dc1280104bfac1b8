/*
 * copy: see copy.h.
 */
#include "config.h"

#include "seed/copy.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHUNK (1024 * 1024)
#define NCHUNKS 4

struct chunk {
    char *data;
    size_t len, cap;
};

/*
 * Shared between the two threads under mu: the queue of full chunks (FIFO,
 * the order rows are sent in), the free ones, and the flags.  The
 * producer alone touches chunk cur while it fills it.
 */
struct copy_out {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct chunk chunks[NCHUNKS];
    int full[NCHUNKS], full_head, full_n;
    int free_list[NCHUNKS], free_n;
    int cur;
    int done, stop, oom;
    int gen_rc;
    atomic_llong rows;
    copy_gen_fn gen;
    void *gen_arg;
};

static void
be16(char *p, uint16_t v)
{
    p[0] = (char)(v >> 8);
    p[1] = (char)v;
}

static void
be32(char *p, uint32_t v)
{
    be16(p, (uint16_t)(v >> 16));
    be16(p + 2, (uint16_t)v);
}

static void
be64(char *p, uint64_t v)
{
    be32(p, (uint32_t)(v >> 32));
    be32(p + 4, (uint32_t)v);
}

/* Room for n more bytes in the current chunk, or NULL (out of memory, noted). */
static char *
room(struct copy_out *o, size_t n)
{
    struct chunk *c = &o->chunks[o->cur];

    if (c->len + n > c->cap) {
        size_t cap = c->cap * 2 > c->len + n ? c->cap * 2 : c->len + n;
        char *p = realloc(c->data, cap);
        if (!p) {
            o->oom = 1;
            return NULL;
        }
        c->data = p;
        c->cap = cap;
    }
    c->len += n;
    return c->data + c->len - n;
}

void
copy_row(struct copy_out *o, int nfields)
{
    char *p = room(o, 2);

    if (p)
        be16(p, (uint16_t)nfields);
}

void
copy_int8(struct copy_out *o, int64_t v)
{
    char *p = room(o, 12);

    if (p) {
        be32(p, 8);
        be64(p + 4, (uint64_t)v);
    }
}

void
copy_text(struct copy_out *o, const char *s, size_t n)
{
    char *p = room(o, 4 + n);

    if (p) {
        be32(p, (uint32_t)n);
        memcpy(p + 4, s, n);
    }
}

void
copy_null(struct copy_out *o)
{
    char *p = room(o, 4);

    if (p)
        be32(p, UINT32_MAX); /* length -1 */
}

/* Queues chunk cur for sending and takes a free one.  -1 when told to stop. */
static int
hand_over(struct copy_out *o)
{
    int rc = 0;

    pthread_mutex_lock(&o->mu);
    o->full[(o->full_head + o->full_n) % NCHUNKS] = o->cur;
    o->full_n++;
    pthread_cond_broadcast(&o->cv);
    while (o->free_n == 0 && !o->stop)
        pthread_cond_wait(&o->cv, &o->mu);
    if (o->stop)
        rc = -1;
    else
        o->cur = o->free_list[--o->free_n];
    pthread_mutex_unlock(&o->mu);
    if (rc == 0)
        o->chunks[o->cur].len = 0;
    return rc;
}

int
copy_row_end(struct copy_out *o)
{
    atomic_fetch_add_explicit(&o->rows, 1, memory_order_relaxed);
    if (o->oom)
        return -1;
    if (o->chunks[o->cur].len >= CHUNK)
        return hand_over(o);
    return 0;
}

static void *
producer(void *arg)
{
    struct copy_out *o = arg;
    /* The binary COPY header: signature, flags, header extension length. */
    static const char header[19] = "PGCOPY\n\377\r\n\0\0\0\0\0\0\0\0\0";
    char *p = room(o, sizeof(header));
    int rc = -1;

    if (p) {
        memcpy(p, header, sizeof(header));
        rc = o->gen(o, o->gen_arg);
    }
    if (rc == 0 && !o->oom && (p = room(o, 2)))
        be16(p, UINT16_MAX); /* the trailer: a field count of -1 */
    if (o->oom)
        rc = -1;
    pthread_mutex_lock(&o->mu);
    o->gen_rc = rc;
    if (rc == 0 && !o->stop) {
        o->full[(o->full_head + o->full_n) % NCHUNKS] = o->cur;
        o->full_n++;
    }
    o->done = 1;
    pthread_cond_broadcast(&o->cv);
    pthread_mutex_unlock(&o->mu);
    return NULL;
}

/* Waits up to 200 ms for a full chunk: its index, -1 when none is coming, -2 on timeout. */
static int
next_full(struct copy_out *o)
{
    struct timespec until;
    int idx = -2;

    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += 200 * 1000 * 1000;
    if (until.tv_nsec >= 1000000000) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000;
    }
    pthread_mutex_lock(&o->mu);
    while (o->full_n == 0 && !o->done)
        if (pthread_cond_timedwait(&o->cv, &o->mu, &until) == ETIMEDOUT)
            break;
    if (o->full_n > 0) {
        idx = o->full[o->full_head];
        o->full_head = (o->full_head + 1) % NCHUNKS;
        o->full_n--;
    } else if (o->done) {
        idx = -1;
    }
    pthread_mutex_unlock(&o->mu);
    return idx;
}

static void
give_back(struct copy_out *o, int idx, int stop)
{
    pthread_mutex_lock(&o->mu);
    if (idx >= 0)
        o->free_list[o->free_n++] = idx;
    if (stop)
        o->stop = 1;
    pthread_cond_broadcast(&o->cv);
    pthread_mutex_unlock(&o->mu);
}

/* Ends the COPY (with an error message when failing) and reads its result. */
static int
finish(PGconn *pg, const char *fail, char *err, size_t errcap)
{
    PGresult *r;
    int ok = 1;

    if (PQputCopyEnd(pg, fail) != 1) {
        snprintf(err, errcap, "%s", PQerrorMessage(pg));
        ok = 0;
    }
    while ((r = PQgetResult(pg))) {
        if (PQresultStatus(r) != PGRES_COMMAND_OK && ok) {
            snprintf(err, errcap, "%s", PQresultErrorMessage(r));
            ok = 0;
        }
        PQclear(r);
    }
    return ok ? 0 : -1;
}

int64_t
copy_table(PGconn *pg, const char *sql, copy_gen_fn gen, void *gen_arg, copy_tick_fn tick,
           void *tick_arg, char *err, size_t errcap)
{
    struct copy_out *o = calloc(1, sizeof(*o));
    PGresult *r = NULL;
    pthread_t th;
    char ignored[256];
    int failed = 0, idx;
    int64_t rows = -1;

    if (!o) {
        snprintf(err, errcap, "out of memory");
        return -1;
    }
    pthread_mutex_init(&o->mu, NULL);
    pthread_cond_init(&o->cv, NULL);
    o->gen = gen;
    o->gen_arg = gen_arg;
    for (int i = 0; i < NCHUNKS; i++) {
        o->chunks[i].cap = CHUNK + 64 * 1024;
        if (!(o->chunks[i].data = malloc(o->chunks[i].cap))) {
            snprintf(err, errcap, "out of memory");
            goto out;
        }
        if (i > 0)
            o->free_list[o->free_n++] = i;
    }
    r = PQexec(pg, sql);
    if (PQresultStatus(r) != PGRES_COPY_IN) {
        snprintf(err, errcap, "%s", PQresultErrorMessage(r));
        goto out;
    }
    if (pthread_create(&th, NULL, producer, o) != 0) {
        snprintf(err, errcap, "cannot start the row producer thread");
        finish(pg, err, ignored, sizeof(ignored));
        goto out;
    }
    while ((idx = next_full(o)) != -1) {
        if (idx >= 0) {
            struct chunk *c = &o->chunks[idx];
            if (PQputCopyData(pg, c->data, (int)c->len) != 1) {
                snprintf(err, errcap, "%s", PQerrorMessage(pg));
                give_back(o, idx, 1);
                failed = 1;
                break;
            }
            give_back(o, idx, 0);
        }
        if (tick)
            tick(tick_arg, (int64_t)atomic_load(&o->rows));
    }
    pthread_join(th, NULL);
    if (failed) {
        /* The server's own message, when it sent one, says more. */
        if (finish(pg, "the sender failed", ignored, sizeof(ignored)) < 0 &&
            strstr(ignored, "the sender failed") == NULL)
            snprintf(err, errcap, "%s", ignored);
    } else if (o->gen_rc != 0) {
        snprintf(err, errcap, "%s", o->oom ? "out of memory" : "the row generator failed");
        finish(pg, err, ignored, sizeof(ignored));
    } else if (finish(pg, NULL, err, errcap) == 0) {
        rows = (int64_t)atomic_load(&o->rows);
    }
out:
    PQclear(r);
    for (int i = 0; i < NCHUNKS; i++)
        free(o->chunks[i].data);
    pthread_cond_destroy(&o->cv);
    pthread_mutex_destroy(&o->mu);
    free(o);
    return rows;
}
