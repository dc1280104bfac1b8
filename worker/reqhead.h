/*
 * reqhead: the size of a request's header, counted as its bytes arrive,
 * up to the blank line that ends it.  evhttp 2.1 enforces max_header_size
 * itself, but answers a header over it with its own HTML 400 and offers no
 * hook to change that; so conduitd counts the header first (conn.c feeds
 * every byte evhttp's buffer receives until the header is complete) and
 * answers in JSON, and evhttp's own limit is set higher, a backstop only.
 *
 * Lines end as evhttp reads them (EVBUFFER_EOL_CRLF): at a LF, a CR just
 * before it aside.  Empty lines before the request line do not end it.
 * Every byte counts, the line ends included, so the count is never below
 * the one evhttp keeps.
 */
#ifndef CONDUITD_REQHEAD_H
#define CONDUITD_REQHEAD_H

#include <stddef.h>

enum reqhead_state { REQHEAD_MORE, REQHEAD_DONE, REQHEAD_TOO_LARGE };

struct reqhead {
    size_t bytes;   /* of the header so far */
    size_t line;    /* bytes of the current line, CRs aside */
    unsigned lines; /* non-empty lines seen */
    enum reqhead_state state;
};

/* A new request begins: nothing counted. */
void reqhead_reset(struct reqhead *h);

/*
 * Counts the next n bytes received (they may run past the header: its end
 * stops the count).  Returns the state: REQHEAD_TOO_LARGE as soon as more
 * than max bytes came before the blank line, and then for good (until
 * reqhead_reset), like REQHEAD_DONE.
 */
enum reqhead_state reqhead_feed(struct reqhead *h, const void *p, size_t n, size_t max);

#endif
