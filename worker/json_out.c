/*
 * json_out: see json_out.h.
 *
 * Output is gathered in a small stack buffer and handed to the evbuffer in
 * one evbuffer_add() per string (or per 512 bytes), since each call costs
 * far more than a memcpy of a few bytes.  Long runs of bytes needing no
 * escape go out directly without being copied twice.
 */
#include "config.h"

#include "worker/json_out.h"

#include "worker/utf8.h"

#include <event2/buffer.h>
#include <string.h>

struct outbuf {
    struct evbuffer *b;
    size_t len;
    char buf[512];
};

static void
ob_flush(struct outbuf *ob)
{
    if (ob->len > 0)
        evbuffer_add(ob->b, ob->buf, ob->len);
    ob->len = 0;
}

static void
ob_put(struct outbuf *ob, const void *p, size_t n)
{
    if (n > sizeof(ob->buf) - ob->len) {
        ob_flush(ob);
        if (n >= sizeof(ob->buf)) {
            evbuffer_add(ob->b, p, n);
            return;
        }
    }
    memcpy(ob->buf + ob->len, p, n);
    ob->len += n;
}

/*
 * 1 for the ASCII bytes that go out unchanged: everything printable except
 * the quote and the backslash.  Bytes >= 0x80 are handled by the UTF-8 path.
 */
static int
plain_ascii(unsigned char c)
{
    return c >= 0x20 && c < 0x80 && c != '"' && c != '\\';
}

static void
put_escape(struct outbuf *ob, unsigned char c)
{
    static const char hex[] = "0123456789abcdef";
    char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};

    switch (c) {
    case '"':
        ob_put(ob, "\\\"", 2);
        return;
    case '\\':
        ob_put(ob, "\\\\", 2);
        return;
    case '\b':
        ob_put(ob, "\\b", 2);
        return;
    case '\f':
        ob_put(ob, "\\f", 2);
        return;
    case '\n':
        ob_put(ob, "\\n", 2);
        return;
    case '\r':
        ob_put(ob, "\\r", 2);
        return;
    case '\t':
        ob_put(ob, "\\t", 2);
        return;
    }
    ob_put(ob, e, sizeof(e));
}

void
json_out_string(struct evbuffer *b, const char *s, size_t n)
{
    struct outbuf ob = {.b = b, .len = 0};
    const unsigned char *p = (const unsigned char *)s, *end = p + n;

    ob_put(&ob, "\"", 1);
    while (p < end) {
        const unsigned char *run = p;
        /* A run of bytes that need nothing: ASCII, then whole UTF-8 sequences. */
        while (p < end) {
            if (plain_ascii(*p)) {
                p++;
            } else if (*p >= 0x80) {
                size_t len = json_utf8_seq_len(p, (size_t)(end - p));
                if (len == 0)
                    break;
                p += len;
            } else {
                break;
            }
        }
        if (p > run)
            ob_put(&ob, run, (size_t)(p - run));
        if (p == end)
            break;
        if (*p >= 0x80)
            ob_put(&ob, "\xef\xbf\xbd", 3); /* one U+FFFD per bad byte */
        else
            put_escape(&ob, *p);
        p++;
    }
    ob_put(&ob, "\"", 1);
    ob_flush(&ob);
}

void
json_out_cstr(struct evbuffer *b, const char *s)
{
    if (s == NULL)
        evbuffer_add(b, "null", 4);
    else
        json_out_string(b, s, strlen(s));
}

void
json_out_int(struct evbuffer *b, int64_t v)
{
    char buf[24], *p = buf + sizeof(buf);
    /* Work on the magnitude as unsigned so that INT64_MIN needs no case. */
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;

    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u != 0);
    if (v < 0)
        *--p = '-';
    evbuffer_add(b, p, (size_t)(buf + sizeof(buf) - p));
}

void
json_out_bool(struct evbuffer *b, int v)
{
    if (v)
        evbuffer_add(b, "true", 4);
    else
        evbuffer_add(b, "false", 5);
}

void
json_out_raw(struct evbuffer *b, const char *lit)
{
    evbuffer_add(b, lit, strlen(lit));
}
