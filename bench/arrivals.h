/*
 * arrivals: the schedule of an open loop at a constant rate.  Arrival k
 * (from 0) is due at t0 + k / rps, and is sent then and measured from
 * then: a schedule that released arrival k only once k + 1 were due would
 * add one inter-arrival interval (1 / rps) to every latency.
 */
#ifndef CONDUIT_BENCH_ARRIVALS_H
#define CONDUIT_BENCH_ARRIVALS_H

#include <stdint.h>

/* When arrival k is due, in microseconds on t0's clock. */
int64_t arrivals_at(int64_t t0_us, double rps, uint64_t k);

/* How many arrivals are due by now_us: those with arrivals_at(k) <= now_us. */
uint64_t arrivals_due(int64_t t0_us, double rps, int64_t now_us);

#endif
