/*
 * cors: see cors.h.
 */
#include "config.h"

#include "common/cors.h"

#include <string.h>

#define SEPARATORS " ,\t"

/* Calls match(token, len) for each origin of list until it returns 1. */
static int
each_origin(const char *list, int (*match)(const char *tok, size_t len, void *arg), void *arg)
{
    const char *p = list;

    while (*p) {
        size_t len;
        p += strspn(p, SEPARATORS);
        len = strcspn(p, SEPARATORS);
        if (len > 0 && match(p, len, arg))
            return 1;
        p += len;
    }
    return 0;
}

static int
same_origin(const char *tok, size_t len, void *arg)
{
    const char *origin = arg;

    return strlen(origin) == len && memcmp(tok, origin, len) == 0;
}

static int
is_star(const char *tok, size_t len, void *arg)
{
    (void)arg;
    return len == 1 && tok[0] == '*';
}

const char *
cors_allow(const char *list, const char *origin)
{
    if (!list || !*list || !origin || !*origin)
        return NULL;
    if (each_origin(list, is_star, NULL))
        return "*";
    /* "null" (a sandboxed page, a file:) is never an origin to trust. */
    if (strcmp(origin, "null") == 0)
        return NULL;
    return each_origin(list, same_origin, (void *)origin) ? origin : NULL;
}

/* scheme "://" host [":" port], nothing after: what a browser's Origin is. */
static int
bad_origin(const char *tok, size_t len, void *arg)
{
    const char **why = arg;
    size_t scheme, i;

    if (len == 1 && tok[0] == '*')
        return 0;
    if (len > 8 && memcmp(tok, "https://", 8) == 0)
        scheme = 8;
    else if (len > 7 && memcmp(tok, "http://", 7) == 0)
        scheme = 7;
    else {
        *why = "an origin is scheme://host or scheme://host:port, http or https (or * alone)";
        return 1;
    }
    for (i = scheme; i < len; i++)
        if (tok[i] == '/' || tok[i] == '?' || tok[i] == '#' || tok[i] == '@') {
            *why = "an origin has no path, query or user part (not even a trailing /)";
            return 1;
        }
    return 0;
}

static int
count_one(const char *tok, size_t len, void *arg)
{
    (void)tok;
    (void)len;
    ++*(int *)arg;
    return 0;
}

const char *
cors_check_list(const char *list)
{
    const char *why = NULL;
    int n = 0;

    if (!list)
        return NULL;
    if (each_origin(list, bad_origin, &why))
        return why;
    each_origin(list, count_one, &n);
    if (n == 0)
        return "cors_origin lists no origin";
    if (n > 1 && each_origin(list, is_star, NULL))
        return "* allows every origin: give it alone";
    return NULL;
}
