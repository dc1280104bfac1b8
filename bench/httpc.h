/*
 * httpc: an incremental parser for HTTP/1.1 responses, just enough for a
 * load generator: the status, Content-Length, "Connection: close", and the
 * body (kept only when asked).  It holds no buffer of the response: bytes
 * are fed as they arrive, in any pieces, and only the first HTTPC_LINE
 * bytes of each header line are looked at, so its state is small enough
 * to embed in each of 60,000 connections.
 *
 * Chunked bodies and bodies delimited by the end of the connection are not
 * supported (conduitd and nginx send Content-Length): they are errors.
 */
#ifndef CONDUIT_BENCH_HTTPC_H
#define CONDUIT_BENCH_HTTPC_H

#include <stddef.h>
#include <stdint.h>

#define HTTPC_LINE 48
#define HTTPC_BODY_MAX (4u << 20)

enum httpc_rc { HTTPC_MORE, HTTPC_DONE, HTTPC_ERROR };

struct httpc {
    uint8_t state;
    uint8_t close; /* the server will close the connection after this response */
    uint8_t chunked;
    uint8_t line_len;
    int status;
    int64_t content_length; /* -1 until a header says */
    int64_t body_left;
    char line[HTTPC_LINE];
};

/* Where the body goes when it is kept; the caller frees buf. */
struct httpc_body {
    char *buf;
    size_t len, cap;
};

void httpc_init(struct httpc *p);

/*
 * Feeds len bytes.  *used says how many were part of this response (the
 * rest, if any, follows it).  The body is appended to keep when keep is
 * not NULL.  HTTPC_ERROR leaves a reason in *why.
 */
enum httpc_rc httpc_feed(struct httpc *p, const char *buf, size_t len, size_t *used,
                         struct httpc_body *keep, const char **why);

/*
 * The string value of the first "key":"value" pair with that key in a
 * JSON text (no escapes in the value), copied into out; 0 or -1.
 */
int httpc_json_string(const char *json, size_t len, const char *key, char *out, size_t cap);

#endif
