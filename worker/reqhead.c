/*
 * reqhead: a request's header, checked as its bytes arrive.  See reqhead.h.
 *
 * One byte at a time (a chunk's data aside), so a request split anywhere
 * across reads is read the same; nothing is buffered but the few bytes of
 * the method and of the values framing depends on.
 */
#include "config.h"

#include "worker/reqhead.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

enum at {
    AT_START,    /* before the request line: empty lines are skipped */
    AT_START_LF, /* the CR of such an empty line read: its LF next */
    AT_METHOD,
    AT_TARGET,
    AT_VERSION,
    AT_LINE_LF, /* a line's CR read: its LF next */
    AT_FIELD,   /* a line's start: a field name, or the blank line */
    AT_NAME,
    AT_VALUE,
    AT_END_LF, /* the blank line's CR read */
    /* The header is over from here on. */
    AT_CHUNK_SIZE,
    AT_CHUNK_SIZE_LF,
    AT_CHUNK_DATA,
    AT_CHUNK_CR, /* a chunk's data read: its CRLF next */
    AT_CHUNK_LF
};

/* The fields framing depends on; their bits in h->matches. */
enum special { SPECIAL_NONE, SPECIAL_LENGTH, SPECIAL_CODING, SPECIAL_HOST, NSPECIAL };
static const char *const special_name[NSPECIAL] = {"", "content-length", "transfer-encoding",
                                                   "host"};

static const struct {
    int status;
    const char *what;
} faults[REQHEAD_NFAULTS] = {
    [REQHEAD_FAULT_NONE] = {200, "no fault"},
    [REQHEAD_FAULT_REQUEST_LINE] = {400, "malformed request line"},
    [REQHEAD_FAULT_VERSION] = {505, "HTTP version not supported"},
    [REQHEAD_FAULT_LINE_END] = {400, "a line not ended by CRLF"},
    [REQHEAD_FAULT_FIELD_NAME] = {400, "malformed header field name"},
    [REQHEAD_FAULT_FIELD_VALUE] = {400, "control character in a header field"},
    [REQHEAD_FAULT_FOLDED] = {400, "folded header line"},
    [REQHEAD_FAULT_CONTENT_LENGTH] = {400, "Content-Length is not a number"},
    [REQHEAD_FAULT_TWO_LENGTHS] = {400, "more than one Content-Length"},
    [REQHEAD_FAULT_LENGTH_AND_CHUNKED] = {400, "both Transfer-Encoding and Content-Length"},
    [REQHEAD_FAULT_NOT_CHUNKED] = {400, "Transfer-Encoding does not end in chunked"},
    [REQHEAD_FAULT_CODING] = {501, "transfer coding not implemented"},
    [REQHEAD_FAULT_OLD_CODING] = {400, "Transfer-Encoding in an HTTP/1.0 request"},
    [REQHEAD_FAULT_BODY_NOT_READ] = {400, "a body on a method that takes none"},
    [REQHEAD_FAULT_HOST] = {400, "Host field missing or repeated"},
    [REQHEAD_FAULT_CHUNK] = {400, "malformed chunked body"},
};

int
reqhead_fault_status(enum reqhead_fault f)
{
    return f > REQHEAD_FAULT_NONE && f < REQHEAD_NFAULTS ? faults[f].status : 400;
}

const char *
reqhead_fault_str(enum reqhead_fault f)
{
    return f >= REQHEAD_FAULT_NONE && f < REQHEAD_NFAULTS ? faults[f].what : "bad request";
}

void
reqhead_reset(struct reqhead *h)
{
    memset(h, 0, sizeof(*h));
    h->state = REQHEAD_MORE;
    h->at = AT_START;
}

/* RFC 9110 5.6.2: the characters of a token (a method, a field name). */
static int
is_tchar(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

static int
hex_value(unsigned char c)
{
    if (!isxdigit(c))
        return -1;
    return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
}

static void
fail(struct reqhead *h, enum reqhead_fault f)
{
    h->state = REQHEAD_BAD;
    h->fault = f;
}

/* Appends c to h->word while it fits; h->pos counts on (up to a bound). */
static void
word_add(struct reqhead *h, unsigned char c)
{
    if (h->pos < sizeof(h->word) - 1)
        h->word[h->pos] = (char)c;
    if (h->pos < 0xffff)
        h->pos++;
}

/* h->word as a string without the optional whitespace around it; NULL if it did not fit. */
static char *
word_trimmed(struct reqhead *h)
{
    size_t n = h->pos;
    char *s = h->word;

    if (n >= sizeof(h->word))
        return NULL;
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    s[n] = '\0';
    while (*s == ' ' || *s == '\t')
        s++;
    return s;
}

/* The value of a Content-Length or Transfer-Encoding field is complete. */
static void
end_value(struct reqhead *h)
{
    char *v = word_trimmed(h), *last;

    switch (h->special) {
    case SPECIAL_LENGTH:
        /* 1*DIGIT (RFC 9110 8.6): no sign, no space, no list. */
        if (!v || *v == '\0' || strspn(v, "0123456789") != strlen(v)) {
            fail(h, REQHEAD_FAULT_CONTENT_LENGTH);
            break;
        }
        for (h->length = 0; *v; v++)
            h->length = h->length > (UINT64_MAX - 9) / 10 ? UINT64_MAX
                                                          : h->length * 10 + (uint64_t)(*v - '0');
        break;
    case SPECIAL_CODING:
        /*
         * evhttp reads a chunked body only when the first Transfer-Encoding
         * field is "chunked" once its leading spaces (not tabs) are skipped;
         * anything else it ignores.  So that is the only one taken.
         */
        h->chunked_ok = v && h->word[strspn(h->word, " ")] != '\t' && strcasecmp(v, "chunked") == 0;
        last = v ? strrchr(v, ',') : NULL;
        last = last ? last + 1 : v;
        while (last && (*last == ' ' || *last == '\t'))
            last++;
        h->last_is_chunked = last && strcasecmp(last, "chunked") == 0;
        break;
    default:
        break;
    }
    h->special = SPECIAL_NONE;
}

/* The blank line: what the header says of the body must be unambiguous. */
static void
end_header(struct reqhead *h)
{
    if (h->hosts > 1 || (h->version >= 1 && h->hosts == 0)) {
        fail(h, REQHEAD_FAULT_HOST);
    } else if (h->codings > 0) {
        if (h->lengths > 0)
            fail(h, REQHEAD_FAULT_LENGTH_AND_CHUNKED);
        else if (h->version == 0)
            fail(h, REQHEAD_FAULT_OLD_CODING);
        else if (h->codings > 1 || !h->chunked_ok)
            fail(h, h->last_is_chunked && h->codings == 1 ? REQHEAD_FAULT_CODING
                                                          : REQHEAD_FAULT_NOT_CHUNKED);
        else if (!h->has_body)
            fail(h, REQHEAD_FAULT_BODY_NOT_READ);
        else {
            h->at = AT_CHUNK_SIZE;
            h->pos = 0;
            h->chunk_left = 0;
        }
    } else if (h->length > 0 && !h->has_body) {
        /* evhttp would read those bytes as the next request. */
        fail(h, REQHEAD_FAULT_BODY_NOT_READ);
    } else {
        h->state = REQHEAD_DONE;
    }
}

/* The first byte of a field name, or of the blank line. */
static void
field_start(struct reqhead *h, unsigned char c)
{
    if (c == '\r') {
        h->at = AT_END_LF;
    } else if (c == ' ' || c == '\t') {
        fail(h, REQHEAD_FAULT_FOLDED); /* obs-fold, or space after the request line */
    } else if (c == '\n') {
        fail(h, REQHEAD_FAULT_LINE_END);
    } else if (!is_tchar(c)) {
        fail(h, REQHEAD_FAULT_FIELD_NAME);
    } else {
        h->at = AT_NAME;
        h->matches = h->in_trailer ? 0 : (1u << NSPECIAL) - 2;
        for (int k = 1; k < NSPECIAL; k++)
            if (special_name[k][0] != (c | 0x20))
                h->matches &= ~(1u << k);
        h->pos = 1;
    }
}

/* A field name's byte after its first. */
static void
field_name(struct reqhead *h, unsigned char c)
{
    if (c == ':') {
        for (int k = 1; k < NSPECIAL; k++)
            if ((h->matches & (1u << k)) && special_name[k][h->pos] == '\0')
                h->special = (unsigned char)k;
        if (h->special == SPECIAL_LENGTH && ++h->lengths > 1)
            fail(h, REQHEAD_FAULT_TWO_LENGTHS);
        if (h->special == SPECIAL_CODING && h->codings < 255)
            h->codings++;
        if (h->special == SPECIAL_HOST && h->hosts < 255)
            h->hosts++;
        h->at = AT_VALUE;
        h->pos = 0;
        return;
    }
    if (!is_tchar(c)) {
        fail(h, c == '\n' ? REQHEAD_FAULT_LINE_END : REQHEAD_FAULT_FIELD_NAME);
        return;
    }
    for (int k = 1; k < NSPECIAL; k++)
        if (h->pos >= strlen(special_name[k]) || special_name[k][h->pos] != (c | 0x20))
            h->matches &= ~(1u << k);
    if (h->pos < 0xffff)
        h->pos++;
}

/* The request line, byte by byte. */
static void
request_line(struct reqhead *h, unsigned char c)
{
    static const char version[] = "HTTP/1.";

    switch (h->at) {
    case AT_METHOD:
        if (c == ' ') {
            h->word[h->pos < sizeof(h->word) ? h->pos : sizeof(h->word) - 1] = '\0';
            /*
             * The methods whose routes read a body.  evhttp 2.1 reads none
             * on a HEAD (its bytes would be read as the next request) and
             * one on a GET or a DELETE that nothing reads: refused alike.
             */
            h->has_body = strcmp(h->word, "POST") == 0 || strcmp(h->word, "PUT") == 0 ||
                          strcmp(h->word, "PATCH") == 0;
            h->at = AT_TARGET;
            h->pos = 0;
        } else if (is_tchar(c)) {
            word_add(h, c);
        } else {
            fail(h, c == '\n' ? REQHEAD_FAULT_LINE_END : REQHEAD_FAULT_REQUEST_LINE);
        }
        break;
    case AT_TARGET:
        if (c == ' ' && h->pos > 0) {
            h->at = AT_VERSION;
            h->pos = 0;
        } else if (c > ' ' && c != 0x7f) {
            h->pos = 1;
        } else {
            fail(h, c == '\n' ? REQHEAD_FAULT_LINE_END : REQHEAD_FAULT_REQUEST_LINE);
        }
        break;
    default: /* AT_VERSION: HTTP/1.DIGIT, then CR */
        if (h->pos < 5 && c == (unsigned char)version[h->pos]) {
            h->pos++;
        } else if (h->pos == 5) {
            if (c >= '0' && c <= '9' && c != '1')
                fail(h, REQHEAD_FAULT_VERSION);
            else if (c != '1')
                fail(h, REQHEAD_FAULT_REQUEST_LINE);
            h->pos++;
        } else if (h->pos == 6 && c == '.') {
            h->pos++;
        } else if (h->pos == 7 && c >= '0' && c <= '9') {
            h->version = (unsigned char)(c - '0');
            h->pos++;
        } else if (h->pos == 8 && c == '\r') {
            h->at = AT_LINE_LF;
        } else {
            fail(h, c == '\n' ? REQHEAD_FAULT_LINE_END : REQHEAD_FAULT_REQUEST_LINE);
        }
        break;
    }
}

/* One byte of the message up to the end of its header, or of its trailer. */
static void
header_byte(struct reqhead *h, unsigned char c)
{
    switch (h->at) {
    case AT_START:
        if (c == '\r')
            h->at = AT_START_LF;
        else if (is_tchar(c)) {
            h->at = AT_METHOD;
            h->pos = 0;
            word_add(h, c);
        } else
            fail(h, c == '\n' ? REQHEAD_FAULT_LINE_END : REQHEAD_FAULT_REQUEST_LINE);
        break;
    case AT_START_LF:
    case AT_LINE_LF:
        if (c == '\n')
            h->at = h->at == AT_START_LF ? AT_START : AT_FIELD;
        else
            fail(h, REQHEAD_FAULT_LINE_END);
        break;
    case AT_METHOD:
    case AT_TARGET:
    case AT_VERSION:
        request_line(h, c);
        break;
    case AT_FIELD:
        field_start(h, c);
        break;
    case AT_NAME:
        field_name(h, c);
        break;
    case AT_VALUE:
        if (c == '\r') {
            end_value(h);
            h->at = AT_LINE_LF;
        } else if (c == '\t' || (c >= ' ' && c != 0x7f)) {
            if (h->special != SPECIAL_NONE)
                word_add(h, c);
        } else {
            fail(h, c == '\n' ? REQHEAD_FAULT_LINE_END : REQHEAD_FAULT_FIELD_VALUE);
        }
        break;
    case AT_END_LF:
        if (c != '\n')
            fail(h, REQHEAD_FAULT_LINE_END);
        else if (h->in_trailer)
            h->state = REQHEAD_DONE;
        else
            end_header(h);
        break;
    default:
        break;
    }
}

/* One byte of a chunked body's framing (its data is skipped in bulk). */
static void
chunk_byte(struct reqhead *h, unsigned char c)
{
    int v;

    switch (h->at) {
    case AT_CHUNK_SIZE:
        if ((v = hex_value(c)) >= 0 && h->pos < 15) {
            h->chunk_left = h->chunk_left * 16 + (uint64_t)v;
            h->pos++;
        } else if (c == '\r' && h->pos > 0) {
            h->at = AT_CHUNK_SIZE_LF;
        } else {
            fail(h, REQHEAD_FAULT_CHUNK);
        }
        break;
    case AT_CHUNK_SIZE_LF:
        if (c != '\n') {
            fail(h, REQHEAD_FAULT_CHUNK);
        } else if (h->chunk_left == 0) {
            h->in_trailer = 1; /* the last chunk: trailer fields, then a blank line */
            h->at = AT_FIELD;
        } else {
            h->at = AT_CHUNK_DATA;
        }
        break;
    case AT_CHUNK_CR:
        if (c == '\r')
            h->at = AT_CHUNK_LF;
        else
            fail(h, REQHEAD_FAULT_CHUNK);
        break;
    default: /* AT_CHUNK_LF */
        if (c == '\n') {
            h->at = AT_CHUNK_SIZE;
            h->pos = 0;
            h->chunk_left = 0;
        } else {
            fail(h, REQHEAD_FAULT_CHUNK);
        }
        break;
    }
}

enum reqhead_state
reqhead_feed(struct reqhead *h, const void *p, size_t n, size_t max)
{
    const unsigned char *s = p;

    for (size_t i = 0; i < n && h->state == REQHEAD_MORE; i++) {
        if (h->at == AT_CHUNK_DATA) {
            size_t take = n - i < h->chunk_left ? n - i : (size_t)h->chunk_left;
            h->chunk_left -= take;
            i += take - 1;
            if (h->chunk_left == 0)
                h->at = AT_CHUNK_CR;
        } else if (h->at >= AT_CHUNK_SIZE) {
            chunk_byte(h, s[i]);
        } else if (h->in_trailer) {
            header_byte(h, s[i]);
        } else if (++h->bytes > max && max > 0) {
            h->state = REQHEAD_TOO_LARGE;
        } else {
            header_byte(h, s[i]);
        }
    }
    return h->state;
}
