/*
 * reqhead: a request header's size as it arrives.  See reqhead.h.
 */
#include "config.h"

#include "worker/reqhead.h"

#include <string.h>

void
reqhead_reset(struct reqhead *h)
{
    memset(h, 0, sizeof(*h));
    h->state = REQHEAD_MORE;
}

enum reqhead_state
reqhead_feed(struct reqhead *h, const void *p, size_t n, size_t max)
{
    const unsigned char *s = p;

    for (size_t i = 0; i < n && h->state == REQHEAD_MORE; i++) {
        if (++h->bytes > max) {
            h->state = REQHEAD_TOO_LARGE;
            break;
        }
        if (s[i] == '\n') {
            if (h->line > 0)
                h->lines++;
            else if (h->lines > 0)
                h->state = REQHEAD_DONE; /* the blank line */
            h->line = 0;
        } else if (s[i] != '\r') {
            h->line++;
        }
    }
    return h->state;
}
