/*
 * reqbody: the JSON request body, parsed and checked before anything else
 * sees it.  Every failure answers the request (422, with the field named)
 * and returns NULL or -1, so a handler just returns.
 *
 * The body must be valid UTF-8, hold no NUL byte (raw or as \u0000) and
 * nest at most REQBODY_MAX_DEPTH deep: such bytes must never reach
 * PostgreSQL, which would refuse them with an error that is not the
 * client's to read.
 *
 * Ownership: the cJSON tree belongs to the request (freed with it, through
 * c->state_free unless the handler takes the state slot itself: then it
 * must free the tree with reqbody_free).
 */
#ifndef CONDUITD_REQBODY_H
#define CONDUITD_REQBODY_H

#include <stddef.h>

#include <cjson/cJSON.h>

struct http_ctx;

#define REQBODY_MAX_DEPTH 32

/*
 * Parses {"<root>": {...}} and returns the inner object.  *doc gets the
 * whole tree (the caller frees it with cJSON_Delete).
 */
cJSON *reqbody_object(struct http_ctx *c, const char *root, cJSON **doc);

/*
 * The same checks without a request (the fuzz target and the unit tests
 * call it): NULL with the 422 message in why.
 */
cJSON *reqbody_parse(const unsigned char *body, size_t n, const char *root, cJSON **doc, char *why,
                     size_t whylen);

enum reqbody_flags {
    REQBODY_REQUIRED = 1, /* absent: 422 "<name> can't be blank" */
    REQBODY_NONEMPTY = 2, /* "" (or only spaces): 422 */
    REQBODY_NULLABLE = 4  /* JSON null accepted: *out = NULL, *present = 1 */
};

/*
 * Reads a string field.  Sets *out (NULL when absent) and, when present is
 * not NULL, *present.  -1 after a 422 for a wrong type or an empty value.
 */
int reqbody_string(struct http_ctx *c, const cJSON *obj, const char *name, int flags,
                   const char **out, int *present);

/* The same without a request: -1 with the 422 message in why. */
int reqbody_check_string(const cJSON *obj, const char *name, int flags, const char **out,
                         int *present, char *why, size_t whylen);

#endif
