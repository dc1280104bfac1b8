/*
 * probe: before any level, asks the target whether it holds the dataset
 * the virtual users are about to ask for (--scale, --seed).  The first and
 * the last seeded user of that scale must log in, the user after the last
 * must not exist, and the last seeded article must be there while the one
 * after it is not.  Without this, a run against a server seeded at another
 * scale is a run of 401s and 404s with nothing to say why.
 *
 * On a mismatch the message names what failed and the likely scale: the
 * number of seeded users the server has, found by bisection over
 * GET /api/profiles/NAME (no password hashing), over 100,000 a scale.
 * Names do not depend on the scale (common/dataset.h), so the names past
 * the last user of one scale are those of a larger one.
 */
#ifndef CONDUIT_BENCH_PROBE_H
#define CONDUIT_BENCH_PROBE_H

#include <netinet/in.h>
#include <stddef.h>

#include "bench/profile.h"
#include "common/dataset.h"

/* Whether the profile names seeded users or articles (then the probe applies). */
int probe_needed(const struct profile *p);

/*
 * 0 when the target holds ds; -1 with the mismatch in msg; -2 when it
 * could not be asked (msg says why).  host is the Host header; *asked
 * counts the requests sent (the server counts them too).
 */
int probe_dataset(const struct sockaddr_in *server, const char *host, const struct dataset *ds,
                  double timeout_s, int *asked, char *msg, size_t cap);

#endif
