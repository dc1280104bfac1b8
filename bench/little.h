/*
 * little: what Little's law says a closed loop of virtual users offers,
 * and how far the measured rate may stray from it before the level is
 * said not to have offered its load.
 *
 * Users that think think_s between pages of page_s send pages at
 * users / (think_s + page_s) a second, each of req_per_page requests.
 * The count over a hold is a random count: pages arrive about as a
 * Poisson stream (exponential think times), so over a hold expecting P
 * pages whose sizes X have mean m and mean square q, the request count has
 * a relative standard error of sqrt(q) / (m sqrt(P)).  The tolerance is
 * the larger of the fixed floor (5 % by default) and three of those
 * standard errors: 50 users over a minute expect about 430 pages, whose
 * count alone is uncertain by 5 %, and would fail a fixed 5 % for noise.
 */
#ifndef CONDUIT_BENCH_LITTLE_H
#define CONDUIT_BENCH_LITTLE_H

/* users / (think_s + page_s) x req_per_page; 0 when nothing is known. */
double little_expected_rps(double users, double think_s, double page_s, double req_per_page);

/*
 * The tolerance in percent for a hold expecting pages pages of rpp_mean
 * requests (rpp_sq_mean the mean of their squares); *statistical is 1
 * when three standard errors exceeded floor_pct, else 0.
 */
double little_tolerance(double floor_pct, double pages, double rpp_mean, double rpp_sq_mean,
                        int *statistical);

#endif
