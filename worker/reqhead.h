/*
 * reqhead: a request's header, checked as its bytes arrive, before evhttp
 * reads any of them: its size, and its framing, to RFC 9112's letter.
 *
 * Size: evhttp 2.1 enforces max_header_size itself, but answers a header
 * over it with its own HTML 400 and offers no hook to change that; so
 * conduitd counts the header first (conn.c feeds every byte evhttp's
 * buffer receives until the header is complete) and answers in JSON, and
 * evhttp's own limit is set higher, a backstop only.  Every byte counts,
 * the line ends included, and the empty lines before the request line.
 *
 * Framing: evhttp's parser is looser than RFC 9112 (the first of two
 * Content-Length fields wins, "+2" is a length, "Name : value" is a field,
 * a Transfer-Encoding it does not know is ignored and the Content-Length
 * used instead, a body on a GET is read as the next request).  Behind a
 * proxy that reads the same bytes otherwise, the two disagree on where a
 * request ends, and what one takes for a body the other runs as a request
 * (request smuggling).  So whatever the two could read differently is
 * refused here, and conn.c answers it and closes the connection unread
 * (RFC 9112 sections 2.2, 3, 5, 6.1, 6.3, 7.1):
 *   - every line ends in CRLF: no bare LF, no bare CR;
 *   - the request line is METHOD SP TARGET SP HTTP/1.x, one space each;
 *   - a field name is a token followed at once by ':' (no space before
 *     it); a value holds no control character but HTAB; no line folding
 *     (a line that begins with a space or a tab);
 *   - Content-Length is digits only, once; Transfer-Encoding is exactly
 *     "chunked", once, never with a Content-Length, never in HTTP/1.0;
 *     a method no route reads a body for (all but POST, PUT and PATCH;
 *     evhttp reads none on a HEAD) carries neither a non-zero length nor
 *     a chunked body;
 *   - an HTTP/1.1 request has exactly one Host field;
 *   - a chunked body is read along: chunk sizes in hex digits only (no
 *     extension: evhttp's own chunk parser refuses most of them anyway),
 *     each chunk followed by CRLF, the trailer fields checked as fields.
 */
#ifndef CONDUITD_REQHEAD_H
#define CONDUITD_REQHEAD_H

#include <stddef.h>
#include <stdint.h>

enum reqhead_state {
    REQHEAD_MORE,      /* fine so far: more to come */
    REQHEAD_DONE,      /* the header (and a chunked body) complete and fine */
    REQHEAD_TOO_LARGE, /* the header over max bytes */
    REQHEAD_BAD        /* broken framing: see reqhead_fault */
};

/* Why a request is refused: each has its status and message. */
enum reqhead_fault {
    REQHEAD_FAULT_NONE,
    REQHEAD_FAULT_REQUEST_LINE,
    REQHEAD_FAULT_VERSION,
    REQHEAD_FAULT_LINE_END,
    REQHEAD_FAULT_FIELD_NAME,
    REQHEAD_FAULT_FIELD_VALUE,
    REQHEAD_FAULT_FOLDED,
    REQHEAD_FAULT_CONTENT_LENGTH,
    REQHEAD_FAULT_TWO_LENGTHS,
    REQHEAD_FAULT_LENGTH_AND_CHUNKED,
    REQHEAD_FAULT_NOT_CHUNKED,
    REQHEAD_FAULT_CODING,
    REQHEAD_FAULT_OLD_CODING,
    REQHEAD_FAULT_BODY_NOT_READ,
    REQHEAD_FAULT_HOST,
    REQHEAD_FAULT_CHUNK,
    REQHEAD_NFAULTS
};

struct reqhead {
    size_t bytes; /* of the header so far */
    enum reqhead_state state;
    enum reqhead_fault fault; /* REQHEAD_BAD: why */
    /* The rest is the parser's own. */
    unsigned char at;         /* where in the message */
    unsigned char version;    /* minor version of HTTP/1.x */
    unsigned char has_body;   /* the method is one evhttp reads a body for */
    unsigned char special;    /* the field being read: Content-Length, Transfer-Encoding, Host */
    unsigned char lengths;    /* Content-Length fields seen */
    unsigned char codings;    /* Transfer-Encoding fields seen */
    unsigned char hosts;      /* Host fields seen */
    unsigned char chunked_ok; /* the Transfer-Encoding is exactly "chunked" */
    unsigned char last_is_chunked;
    unsigned char in_trailer;
    unsigned short pos;  /* bytes into the current token or value */
    unsigned matches;    /* names the current field name may still be */
    uint64_t length;     /* the Content-Length */
    uint64_t chunk_left; /* of the current chunk's data, or its size being read */
    char word[40];       /* the method, or a special field's value, so far */
};

/* A new request begins: nothing counted. */
void reqhead_reset(struct reqhead *h);

/*
 * Reads the next n bytes received (they may run past the message: its
 * end stops the reading).  Returns the state: REQHEAD_TOO_LARGE as soon as
 * more than max bytes came before the header's blank line (0: no limit),
 * REQHEAD_BAD at the first byte that breaks the framing; either, and
 * REQHEAD_DONE, for good until reqhead_reset.
 */
enum reqhead_state reqhead_feed(struct reqhead *h, const void *p, size_t n, size_t max);

/* The status to answer a fault with: 400, 501 (a coding) or 505 (a version). */
int reqhead_fault_status(enum reqhead_fault f);

/* The fault in a few words, for the error body; never NULL. */
const char *reqhead_fault_str(enum reqhead_fault f);

#endif
