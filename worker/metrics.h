/*
 * metrics: the request counters a worker adds to its scoreboard slot, and
 * the instance's figures written out from the whole scoreboard: /metrics
 * in Prometheus' text format (version 0.0.4) and /status as JSON.
 *
 * Counting is a handful of relaxed atomic adds into the worker's own slot
 * (cache-line aligned, written by no other process); the totals are summed
 * only when a scrape asks, by whichever worker took it, from the shared
 * memory every worker maps: no process is asked for anything.  A reaped
 * worker's counters are folded into the retired totals by the master
 * (common/scoreboard.h), so a total never goes down while the master runs,
 * across worker deaths, recycling and reloads alike.
 *
 * Nothing here ever holds a token, an email, a path's parameters or a
 * body: routes are counted by their table pattern, not the path sent.
 */
#ifndef CONDUITD_METRICS_H
#define CONDUITD_METRICS_H

#include <stddef.h>
#include <stdint.h>

struct cache_zone;
struct evbuffer;
struct route;
struct scoreboard;
struct worker_slot;

/* The label values of conduitd_cache_lookups_total (also /healthz's names). */
extern const char *const metrics_cache_kind[];
extern const char *const metrics_cache_result[];

/*
 * Does a route table of nroutes entries fit the scoreboard's rows?  -1
 * when it has more (a build error), 0 otherwise.
 */
int metrics_routes_fit(size_t nroutes);

/*
 * One response sent: route is the index of its entry in the worker's
 * route table (worker/env.h), or -1 for a request that matched none; us is
 * its time from dispatch to reply, the figure the access log writes too.
 */
void metrics_count_response(struct worker_slot *s, int route, int status, int64_t us);

/*
 * The Prometheus text exposition of the instance, appended to b, with
 * the figures of its cache's zone (NULL: zeros); the route table (n
 * entries, the worker's: this layer knows no handler) labels the requests
 * with its patterns.
 */
void metrics_write_prometheus(struct evbuffer *b, const struct scoreboard *sb,
                              const struct cache_zone *zone, const struct route *routes, size_t n);

/* The instance as one JSON object; with full, every live worker too (PHP-FPM's ?full). */
void metrics_write_status(struct evbuffer *b, const struct scoreboard *sb, int full);

#endif
