/*
 * procs: the virtual users of one run spread over several generator
 * processes.  One process may hold at most RLIMIT_NOFILE sockets (20,000
 * on the project's machine, hard limit included, and raising it needs
 * CAP_SYS_RESOURCE); each user holds one, so 60,000 users need several
 * processes.  Each child is a whole generator (its own event loop, users,
 * file limit and range of loopback source addresses) playing its share
 * of every level; the parent plays none, and drives them through
 * bench->remote: it sends the level's users, begins and ends the hold's
 * window in all of them at once, and merges what they send back exactly
 * (wire.h: histograms bucket by bucket, counts summed).  The parent keeps
 * the accounting (the children are roots of the generator's group) and
 * the progress line (fed by each child's seconds).
 *
 * A child that loses its parent (the socket closes, or PR_SET_PDEATHSIG)
 * stops.
 *
 * Ownership: procs_start returns the set; procs_attach gives it to the
 * bench, whose bench_free stops the children (QUIT, then waits for them).
 */
#ifndef CONDUIT_BENCH_PROCS_H
#define CONDUIT_BENCH_PROCS_H

#include <stddef.h>

#include "bench/bench.h"

#define PROCS_MAX 24

struct procs;

/*
 * Forks n generator processes for up to o->max_users users (each its
 * share and o->sources / n source addresses, or as many as its share
 * needs, consecutive after the previous one's).  Call it before the
 * parent's own bench_init, so that no event base crosses the fork.  NULL
 * with a message.
 */
struct procs *procs_start(int n, const struct bench_opts *o, struct profile *prof, char *err,
                          size_t errlen);

/*
 * Gives the users to them (b->remote, which bench_free stops) once each
 * said it is ready; -1 with a message.
 */
int procs_attach(struct procs *p, struct bench *b, char *err, size_t errlen);
/* Stops processes never attached. */
void procs_stop(struct procs *p);

#endif
