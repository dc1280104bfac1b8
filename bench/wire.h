/*
 * wire: what the generator processes of one run (procs.h) send each
 * other over their socket: frames (a length, a type, a payload) and the
 * statistics of a window packed without loss.  A histogram travels as its
 * non-empty buckets, so the parent adds them bucket by bucket and the
 * merged percentiles are exactly those of all the samples.
 *
 * Both ends are the same executable on the same machine: numbers travel
 * in host order.
 *
 * Ownership: a wbuf owns its bytes (wbuf_free).
 */
#ifndef CONDUIT_BENCH_WIRE_H
#define CONDUIT_BENCH_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "bench/stats.h"

struct wbuf {
    unsigned char *p;
    size_t len, cap;
    int failed; /* out of memory: the buffer is not to be sent */
};

void wbuf_put(struct wbuf *w, const void *p, size_t n);
void wbuf_free(struct wbuf *w);

/* A frame: u32 length of what follows, u32 type, the payload. */
#define WIRE_HEADER 8
void wire_frame_begin(struct wbuf *w, uint32_t type);
void wire_frame_end(struct wbuf *w); /* fills in the length */

/* Appends s, packed. */
void wire_pack_stats(struct wbuf *w, const struct stats *s);

/*
 * Reads a packed stats at *p (not past end) into out, which is reset
 * first and must have as many endpoints; *p moves past it.  -1 when the
 * bytes are not a packed stats of that shape.
 */
int wire_unpack_stats(const unsigned char **p, const unsigned char *end, struct stats *out);

/* Reads n bytes at *p into out; -1 when fewer are left. */
int wire_take(const unsigned char **p, const unsigned char *end, void *out, size_t n);

#endif
