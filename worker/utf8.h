/*
 * utf8: strict UTF-8 checks for text that crosses a trust boundary.
 *
 * Strict means RFC 3629: no overlong forms, no UTF-16 surrogates
 * (U+D800..U+DFFF), nothing above U+10FFFF.  PostgreSQL refuses such text
 * with an error, and a NUL cannot be stored in a text column at all, so
 * client strings are checked here first and refused with a 422 instead.
 */
#ifndef CONDUITD_UTF8_H
#define CONDUITD_UTF8_H

#include <stddef.h>

/* 1 when s[0..n) is strict UTF-8 without any NUL byte, else 0. */
int json_utf8_valid(const char *s, size_t n);

/*
 * Length (1..4) of the well-formed sequence starting at s, looking at no more
 * than n (> 0) bytes; 0 when the bytes there do not start one.  A NUL counts
 * as a well-formed one-byte sequence here; json_utf8_valid() refuses it.
 */
size_t json_utf8_seq_len(const unsigned char *s, size_t n);

#endif
