/*
 * json_out: writing JSON text straight into a libevent evbuffer.
 *
 * Responses are small and built in one pass, so no tree is made: the caller
 * writes the punctuation and keys with json_out_raw() and the values with
 * the typed calls, e.g.
 *
 *     json_out_raw(b, "{\"user\":{\"username\":");
 *     json_out_cstr(b, name);
 *     json_out_raw(b, "}}");
 *
 * Strings always come out as valid JSON: quotes, backslashes and control
 * characters are escaped, and any byte that is not part of well-formed UTF-8
 * is replaced by U+FFFD.  U+2028 and U+2029 are left raw; JSON allows them.
 *
 * evbuffer_add() can fail only on out-of-memory; these calls then leave a
 * truncated body, which the caller notices through the response as a whole
 * (evbuffer_get_length) if it cares.
 */
#ifndef CONDUITD_JSON_OUT_H
#define CONDUITD_JSON_OUT_H

#include <stddef.h>
#include <stdint.h>

struct evbuffer;

/* A quoted, escaped string of the n bytes at s (NULs are escaped too). */
void json_out_string(struct evbuffer *b, const char *s, size_t n);
/* A NUL-terminated string, or null for NULL (for bio and image). */
void json_out_cstr(struct evbuffer *b, const char *s);
void json_out_int(struct evbuffer *b, int64_t v);
/* true for any non-zero v. */
void json_out_bool(struct evbuffer *b, int v);
/* lit as it is: punctuation, keys, literals the caller knows are valid JSON. */
void json_out_raw(struct evbuffer *b, const char *lit);

#endif
