/*
 * routes: the route table.  Order matters where a literal segment and a
 * parameter could both fit: the literal comes first (see router.h).
 */
#include "config.h"

#include "worker/routes.h"

#include "worker/health.h"

#define H(f) ((void (*)(void))(f))

const struct route routes[] = {
    {ROUTER_GET, "/healthz", H(health_get)},
#ifdef CONDUITD_TEST_HOOKS
    {ROUTER_GET, "/debug/sleep", H(debug_sleep)},
    {ROUTER_GET, "/debug/spin", H(debug_spin)},
#endif
};

const size_t nroutes = sizeof(routes) / sizeof(routes[0]);
