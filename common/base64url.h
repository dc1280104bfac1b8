/*
 * base64url: RFC 4648 section 5 encoding without padding, as JWT uses it.
 *
 * The decoder is strict so that one byte string has exactly one accepted
 * spelling: padding, characters outside the alphabet, impossible lengths and
 * non-zero unused trailing bits are all refused.  A JWT signature can then
 * not be varied by an attacker without changing the decoded bytes.
 */
#ifndef CONDUITD_BASE64URL_H
#define CONDUITD_BASE64URL_H

#include <stddef.h>

/* Characters needed for n input bytes, without the terminating NUL. */
size_t b64url_encoded_len(size_t n);

/*
 * Writes b64url_encoded_len(n) characters and a NUL to out, which must hold
 * b64url_encoded_len(n) + 1 bytes.  Returns the length written.
 */
size_t b64url_encode(const unsigned char *in, size_t n, char *out);

/*
 * Decodes n characters of in (no NUL needed) into out.  Returns 0 and sets
 * *outlen, or -1 when the input is not canonical base64url or the result does
 * not fit in outcap bytes.
 */
int b64url_decode(const char *in, size_t n, unsigned char *out, size_t outcap, size_t *outlen);

#endif
