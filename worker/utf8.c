/*
 * utf8: see utf8.h.  The byte ranges follow table 3-7 of the Unicode
 * standard ("well-formed UTF-8 byte sequences"), which rules out overlongs
 * and surrogates by narrowing the second byte's range after E0, ED, F0, F4.
 */
#include "config.h"

#include "worker/utf8.h"

size_t
json_utf8_seq_len(const unsigned char *s, size_t n)
{
    unsigned char c = s[0], lo = 0x80, hi = 0xbf;
    size_t len;

    if (c < 0x80)
        return 1;
    if (c < 0xc2)
        return 0; /* continuation byte, or C0/C1 which only start overlongs */
    if (c < 0xe0) {
        len = 2;
    } else if (c < 0xf0) {
        len = 3;
        if (c == 0xe0)
            lo = 0xa0;
        else if (c == 0xed)
            hi = 0x9f;
    } else if (c < 0xf5) {
        len = 4;
        if (c == 0xf0)
            lo = 0x90;
        else if (c == 0xf4)
            hi = 0x8f;
    } else {
        return 0;
    }
    if (n < len)
        return 0;
    if (s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < len; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    return len;
}

int
json_utf8_valid(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + n;

    while (p < end) {
        /* Most input is ASCII: stay in the cheap loop while it lasts. */
        if (*p >= 0x01 && *p < 0x80) {
            p++;
            continue;
        }
        if (*p == 0)
            return 0;
        size_t len = json_utf8_seq_len(p, (size_t)(end - p));
        if (len == 0)
            return 0;
        p += len;
    }
    return 1;
}
