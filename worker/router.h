/*
 * router: maps a method and a path onto an entry of a route table.
 *
 * Pure (no libevent, no I/O) so it is unit-tested on its own.  A pattern is
 * a path whose segments are either literal ("articles") or a parameter
 * (":slug").  Matching walks the table in order and takes the first entry
 * whose pattern fits, so a literal route ("/api/articles/feed") is listed
 * before the parameter route that would also fit it ("/api/articles/:slug").
 *
 * Parameters are percent-decoded after the path is split on "/", so "%2F"
 * inside a slug can never reach another route.  A decoded parameter that
 * holds a NUL byte or invalid UTF-8 names nothing that can exist: the
 * result is ROUTER_NOT_FOUND, and such bytes never reach PostgreSQL.
 */
#ifndef CONDUITD_ROUTER_H
#define CONDUITD_ROUTER_H

#include <stddef.h>

enum router_method {
    ROUTER_GET = 1 << 0,
    ROUTER_POST = 1 << 1,
    ROUTER_PUT = 1 << 2,
    ROUTER_DELETE = 1 << 3,
    ROUTER_HEAD = 1 << 4,
    ROUTER_OPTIONS = 1 << 5,
    ROUTER_PATCH = 1 << 6,
    ROUTER_OTHER = 1 << 7
};

#define ROUTER_MAX_PARAMS 4
#define ROUTER_MAX_PATH 2048

struct route {
    int method;            /* one enum router_method value */
    const char *pattern;   /* "/api/articles/:slug/comments/:id" */
    void (*handler)(void); /* opaque to the router; cast back by the caller */
    int auth;              /* opaque to the router: the API's enum auth_need (worker/auth.h) */
};

enum router_result {
    ROUTER_MATCH,
    ROUTER_NOT_FOUND,         /* no pattern fits the path */
    ROUTER_METHOD_NOT_ALLOWED /* a pattern fits, not with this method */
};

struct router_match {
    const struct route *route;
    int nparams;
    const char *params[ROUTER_MAX_PARAMS]; /* NUL-terminated, inside buf */
    size_t param_len[ROUTER_MAX_PARAMS];
    int allowed; /* for 405: the methods the path does accept */
    char buf[ROUTER_MAX_PATH + ROUTER_MAX_PARAMS];
};

/*
 * Matches path (without the query string) against the table.  One trailing
 * slash is ignored.  On ROUTER_MATCH, m->route and m->params are set; on
 * ROUTER_METHOD_NOT_ALLOWED, m->allowed lists the methods that would match.
 */
enum router_result router_match(const struct route *table, size_t n, int method, const char *path,
                                struct router_match *m);

/* Decodes %XX escapes in place; returns the new length or -1 on a bad escape. */
long router_percent_decode(char *s, size_t n);

/* "GET, POST" for an Allow header; out must hold 64 bytes. */
void router_allow_header(int methods, char *out, size_t outlen);

#endif
