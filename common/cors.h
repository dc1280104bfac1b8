/*
 * cors: cross-origin requests from browsers (the Fetch standard's CORS
 * protocol), for a front end served from another origin than the API, as
 * the RealWorld backend spec asks.  Off unless cors_origin lists origins.
 *
 * cors_origin is "*" (any origin), or exact origins ("scheme://host" or
 * "scheme://host:port", as a browser sends them in Origin) separated by
 * spaces or commas.  An allowed origin is echoed in
 * Access-Control-Allow-Origin (with Vary: Origin, so a shared cache keeps
 * one answer per origin); "*" answers "*".  A preflight (OPTIONS with
 * Access-Control-Request-Method) from an allowed origin is answered 204
 * with the methods and the two request headers the API reads
 * (Authorization, Content-Type) and a max age; from another origin, 403.
 * No credentials mode: the API's token travels in a header the page sets,
 * not in a cookie.
 */
#ifndef CONDUITD_CORS_H
#define CONDUITD_CORS_H

#include <stddef.h>

#define CORS_ALLOW_METHODS "GET, POST, PUT, DELETE"
#define CORS_ALLOW_HEADERS "Authorization, Content-Type, Idempotency-Key"
#define CORS_MAX_AGE "7200" /* Chromium's cap; Firefox takes up to a day */

/*
 * The value for Access-Control-Allow-Origin when origin (the request's
 * Origin header, NUL-terminated) is allowed by list (cors_origin, NULL:
 * off): "*" or origin itself.  NULL when it is not, or CORS is off.
 */
const char *cors_allow(const char *list, const char *origin);

/* A cors_origin value that can work: NULL, or the reason it cannot. */
const char *cors_check_list(const char *list);

#endif
