/*
 * health: the endpoints about the server itself rather than the API:
 * GET /healthz, and, in builds configured with --enable-test-hooks only,
 * the /debug/ endpoints the fault tests use to hold or stall a worker.
 */
#ifndef CONDUITD_HEALTH_H
#define CONDUITD_HEALTH_H

struct http_ctx;

void health_get(struct http_ctx *c);

#ifdef CONDUITD_TEST_HOOKS
void debug_sleep(struct http_ctx *c);
void debug_spin(struct http_ctx *c);
void debug_cache_die(struct http_ctx *c);
#endif

#endif
