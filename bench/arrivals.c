/*
 * arrivals: see arrivals.h.
 */
#include "config.h"

#include "bench/arrivals.h"

#include <math.h>

int64_t
arrivals_at(int64_t t0_us, double rps, uint64_t k)
{
    return t0_us + (int64_t)floor((double)k * 1e6 / rps);
}

uint64_t
arrivals_due(int64_t t0_us, double rps, int64_t now_us)
{
    double k;

    if (now_us < t0_us)
        return 0;
    /* An estimate, then made to agree exactly with arrivals_at. */
    k = floor((double)(now_us - t0_us) * rps / 1e6);
    while (k > 0 && arrivals_at(t0_us, rps, (uint64_t)k) > now_us)
        k--;
    while (arrivals_at(t0_us, rps, (uint64_t)k + 1) <= now_us)
        k++;
    return (uint64_t)k + 1;
}
