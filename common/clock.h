/*
 * clock: the one clock for durations, deadlines, heartbeats and write
 * stamps, CLOCK_MONOTONIC, in the unit each caller counts in.
 *
 * One clock for every process of the host: a heartbeat the master reads,
 * a write's stamp another worker compares with its cached value's epoch,
 * a deadline in the queue are all compared across processes or with each
 * other, so they must all come from here and never from a copy of it.
 */
#ifndef CONDUITD_CLOCK_H
#define CONDUITD_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline int64_t
clock_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline int64_t
clock_now_us(void)
{
    return clock_now_ns() / 1000;
}

static inline int64_t
clock_now_ms(void)
{
    return clock_now_ns() / 1000000;
}

#endif
