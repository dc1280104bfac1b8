/*
 * routes: the table that maps every method and path a worker serves onto
 * its handler.  The one place to read to know what the server answers.
 */
#ifndef CONDUITD_ROUTES_H
#define CONDUITD_ROUTES_H

#include <stddef.h>

#include "worker/router.h"

extern const struct route routes[];
extern const size_t nroutes;

#endif
