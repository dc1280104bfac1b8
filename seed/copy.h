/*
 * copy: stream generated rows into one table with
 * COPY ... FROM STDIN (FORMAT binary).
 *
 * Two threads, so formatting rows and PostgreSQL parsing them overlap on
 * two cores: a producer thread runs the generator, which writes rows into
 * 1 MiB chunks (copy_row ... copy_row_end); the calling thread sends each
 * full chunk with PQputCopyData, in order, while the producer fills the
 * next.  A few chunks are in flight at most, so memory stays small.
 *
 * Binary format: no escaping, and the server converts no number or
 * timestamp from text.  Fields must match the column types exactly: int8
 * for bigint, a timestamp for timestamptz (microseconds since 2000-01-01
 * UTC), bytes for text.
 *
 * Ownership: copy_table owns the chunks and the thread; the generator owns
 * nothing of it and must not keep the struct copy_out pointer.
 */
#ifndef CONDUITD_SEED_COPY_H
#define CONDUITD_SEED_COPY_H

#include <stddef.h>
#include <stdint.h>

#include <libpq-fe.h>

struct copy_out;

/* Writes every row; returns 0, or -1 when copy_row_end said to stop. */
typedef int (*copy_gen_fn)(struct copy_out *o, void *arg);
/* Called on the sending thread now and then with the rows written so far. */
typedef void (*copy_tick_fn)(void *arg, int64_t rows);

void copy_row(struct copy_out *o, int nfields);
void copy_int8(struct copy_out *o, int64_t v);
void copy_text(struct copy_out *o, const char *s, size_t n);
void copy_null(struct copy_out *o);
/* Ends a row.  0, or -1 when the load failed and the generator must stop. */
int copy_row_end(struct copy_out *o);

/*
 * Runs sql (a COPY ... FROM STDIN (FORMAT binary ...)) and streams what gen
 * writes.  Returns the rows sent, or -1 with the reason in err (the
 * server's message, or "out of memory").
 */
int64_t copy_table(PGconn *pg, const char *sql, copy_gen_fn gen, void *gen_arg, copy_tick_fn tick,
                   void *tick_arg, char *err, size_t errcap);

#endif
