/*
 * slug: see slug.h.  Only ASCII is kept on purpose: a slug goes into URLs
 * and logs, and folding non-ASCII letters correctly needs Unicode tables
 * that are not worth having for this.
 */
#include "config.h"

#include "common/slug.h"

#include <string.h>

static const char fallback[] = "article";
/*
 * GET /api/articles/feed is the feed route, listed before /api/articles/:slug
 * (worker/routes.c): an article with this slug could never be read.
 */
static const char reserved[] = "feed";

size_t
slug_from_title(const char *title, size_t n, char *out, size_t outcap)
{
    size_t limit, len = 0;
    int gap = 0;

    if (outcap == 0)
        return 0;
    limit = outcap - 1 < SLUG_MAX_BASE ? outcap - 1 : SLUG_MAX_BASE;

    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)title[i];
        if (c >= 'A' && c <= 'Z')
            c = (unsigned char)(c - 'A' + 'a');
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) {
            gap = 1;
            continue;
        }
        /* A '-' is written only with the character after it, never last. */
        if (gap && len > 0) {
            if (len + 2 > limit)
                break;
            out[len++] = '-';
        }
        gap = 0;
        if (len + 1 > limit)
            break;
        out[len++] = (char)c;
    }

    if (len == sizeof(reserved) - 1 && memcmp(out, reserved, len) == 0) {
        if (len + 1 + sizeof(fallback) - 1 <= limit) {
            out[len++] = '-';
            memcpy(out + len, fallback, sizeof(fallback) - 1);
            len += sizeof(fallback) - 1;
        } else {
            len = 0;
        }
    }
    if (len == 0) {
        len = sizeof(fallback) - 1 < outcap - 1 ? sizeof(fallback) - 1 : outcap - 1;
        memcpy(out, fallback, len);
    }
    out[len] = '\0';
    return len;
}

size_t
slug_with_suffix(const char *base, uint64_t n, char *out, size_t outcap)
{
    static const char digits[] = "0123456789abcdefghijklmnopqrstuvwxyz";
    char suffix[16], *p = suffix + sizeof(suffix);
    size_t slen, blen = strlen(base);

    do {
        *--p = digits[n % 36];
        n /= 36;
    } while (n != 0);
    *--p = '-';
    slen = (size_t)(suffix + sizeof(suffix) - p);

    if (outcap < slen + 2)
        return 0;
    if (blen > outcap - 1 - slen)
        blen = outcap - 1 - slen;
    while (blen > 0 && base[blen - 1] == '-')
        blen--;
    if (blen == 0)
        return 0;
    memmove(out, base, blen);
    memcpy(out + blen, p, slen);
    out[blen + slen] = '\0';
    return blen + slen;
}
