/*
 * reqbody: request body parsing and validation.  See reqbody.h.
 */
#include "config.h"

#include "worker/reqbody.h"

#include <stdio.h>
#include <string.h>

#include "worker/utf8.h"
#include "worker/http.h"

/* Depth of the deepest array or object, without recursion (bounded input). */
static int
too_deep(const unsigned char *s, size_t n)
{
    int depth = 0, in_string = 0;

    for (size_t i = 0; i < n; i++) {
        unsigned char ch = s[i];
        if (in_string) {
            if (ch == '\\')
                i++;
            else if (ch == '"')
                in_string = 0;
        } else if (ch == '"') {
            in_string = 1;
        } else if (ch == '{' || ch == '[') {
            if (++depth > REQBODY_MAX_DEPTH)
                return 1;
        } else if (ch == '}' || ch == ']') {
            depth--;
        }
    }
    return 0;
}

/* \u0000 anywhere (an escaped NUL would cut the C string short). */
static int
has_escaped_nul(const unsigned char *s, size_t n)
{
    for (size_t i = 0; i + 5 < n; i++) {
        if (s[i] != '\\')
            continue;
        if (s[i + 1] == 'u' && s[i + 2] == '0' && s[i + 3] == '0' && s[i + 4] == '0' &&
            s[i + 5] == '0')
            return 1;
        i++; /* skip the escaped character, so "\\u0000" is text */
    }
    return 0;
}

cJSON *
reqbody_parse(const unsigned char *body, size_t n, const char *root, cJSON **doc, char *why,
              size_t whylen)
{
    const char *end = NULL;
    cJSON *tree, *obj;

    *doc = NULL;
    if (!body || n == 0) {
        snprintf(why, whylen, "body can't be empty: send {\"%s\": {...}}", root);
        return NULL;
    }
    if (memchr(body, '\0', n) || !json_utf8_valid((const char *)body, n) ||
        has_escaped_nul(body, n)) {
        snprintf(why, whylen, "body must be UTF-8 text without NUL characters");
        return NULL;
    }
    if (too_deep(body, n)) {
        snprintf(why, whylen, "body is nested too deeply");
        return NULL;
    }
    tree = cJSON_ParseWithLengthOpts((const char *)body, n, &end, 0);
    if (!tree) {
        snprintf(why, whylen, "body is not valid JSON");
        return NULL;
    }
    /* Only whitespace may follow the value. */
    while (end && (size_t)(end - (const char *)body) < n &&
           (*end == ' ' || *end == '\n' || *end == '\r' || *end == '\t'))
        end++;
    if (end && (size_t)(end - (const char *)body) < n) {
        cJSON_Delete(tree);
        snprintf(why, whylen, "body is not valid JSON");
        return NULL;
    }
    obj = cJSON_IsObject(tree) ? cJSON_GetObjectItemCaseSensitive(tree, root) : NULL;
    if (!cJSON_IsObject(obj)) {
        cJSON_Delete(tree);
        snprintf(why, whylen, "%s must be an object", root);
        return NULL;
    }
    *doc = tree;
    return obj;
}

cJSON *
reqbody_object(struct http_ctx *c, const char *root, cJSON **doc)
{
    size_t n;
    const unsigned char *body = http_body(c, &n);
    char why[96];
    cJSON *obj = reqbody_parse(body, n, root, doc, why, sizeof(why));

    if (!obj)
        http_error(c, 422, why);
    return obj;
}

static int
blank(const char *s)
{
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
        s++;
    return *s == '\0';
}

int
reqbody_check_string(const cJSON *obj, const char *name, int flags, const char **out, int *present,
                     char *why, size_t whylen)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);

    *out = NULL;
    if (present)
        *present = 0;
    if (!v) {
        if (!(flags & REQBODY_REQUIRED))
            return 0;
        snprintf(why, whylen, "%s can't be blank", name);
        return -1;
    }
    if (cJSON_IsNull(v) && (flags & REQBODY_NULLABLE)) {
        if (present)
            *present = 1;
        return 0;
    }
    if (!cJSON_IsString(v)) {
        snprintf(why, whylen, "%s must be a string", name);
        return -1;
    }
    /* A lone surrogate escape (\ud800) decodes to bytes that are no UTF-8. */
    if (!json_utf8_valid(v->valuestring, strlen(v->valuestring))) {
        snprintf(why, whylen, "%s must be valid UTF-8", name);
        return -1;
    }
    if ((flags & REQBODY_NONEMPTY) && blank(v->valuestring)) {
        snprintf(why, whylen, "%s can't be blank", name);
        return -1;
    }
    *out = v->valuestring;
    if (present)
        *present = 1;
    return 0;
}

int
reqbody_string(struct http_ctx *c, const cJSON *obj, const char *name, int flags, const char **out,
               int *present)
{
    char why[96];

    if (reqbody_check_string(obj, name, flags, out, present, why, sizeof(why)) < 0) {
        http_error(c, 422, why);
        return -1;
    }
    return 0;
}
