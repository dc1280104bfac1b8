/*
 * little: see little.h.
 */
#include "config.h"

#include "bench/little.h"

#include <math.h>

double
little_expected_rps(double users, double think_s, double page_s, double req_per_page)
{
    return think_s + page_s > 0 ? users / (think_s + page_s) * req_per_page : 0;
}

double
little_tolerance(double floor_pct, double pages, double rpp_mean, double rpp_sq_mean,
                 int *statistical)
{
    double three_se;

    *statistical = 0;
    if (!(pages > 0) || !(rpp_mean > 0) || !(rpp_sq_mean > 0))
        return floor_pct;
    three_se = 300 * sqrt(rpp_sq_mean) / (rpp_mean * sqrt(pages));
    if (three_se <= floor_pct)
        return floor_pct;
    *statistical = 1;
    return three_se;
}
