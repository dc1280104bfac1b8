/*
 * bcrypt_pool: a worker's few hashing threads.  A hash at cost 10 takes
 * tens of milliseconds; on the loop thread it would stall every connection
 * of the worker, so the loop hands the job to a thread and carries on.
 * The result comes back through a pipe the loop watches, and the callback
 * runs on the loop thread.
 *
 * Ownership: the pool copies the password and hash it is given, and wipes
 * the password copy when the job is done.  The callback runs exactly once
 * per job, on the loop thread, never inside bcrypt_hash()/bcrypt_verify().
 *
 * Overload: at most queue_max jobs wait for a thread; beyond, and for a
 * job that has waited queue_timeout or whose asker no longer wants it
 * (wanted(arg) is 0: its client hung up), the callback gets BCRYPT_SHED
 * and no hash is computed.  A storm of logins then costs the rest of the
 * API its hashing threads' CPU and no more, instead of a queue that grows
 * without bound and answers clients long gone.
 */
#ifndef CONDUITD_BCRYPT_POOL_H
#define CONDUITD_BCRYPT_POOL_H

struct event_base;
struct bcrypt_pool;
struct worker_slot;

/* The job was not run (see above): answer 503, or nobody. */
#define BCRYPT_SHED (-1)

/*
 * hash: ok 1 and the new hash, or 0.  verify: ok 1 on a match, else 0.
 * Either: BCRYPT_SHED.
 */
typedef void (*bcrypt_cb)(void *arg, int ok, const char *hash);

/* Is the job still wanted?  Asked on the loop thread, of jobs still waiting. */
typedef int (*bcrypt_wanted)(void *arg);

/* slot, when not NULL, gets the jobs' counts (common/scoreboard.h). */
struct bcrypt_pool *bcrypt_pool_new(struct event_base *base, int threads, int cost, int queue_max,
                                    int queue_timeout_ms, struct worker_slot *slot);
void bcrypt_pool_free(struct bcrypt_pool *p);

/*
 * Would a job be refused now (the queue is full)?  1 then, and it counts
 * as a job shed: for a request that would do other work (a query) before
 * its hash, so that a storm of logins is refused before it costs anything.
 */
int bcrypt_full(struct bcrypt_pool *p);

void bcrypt_hash(struct bcrypt_pool *p, const char *password, bcrypt_cb cb, void *arg,
                 bcrypt_wanted wanted);
void bcrypt_verify(struct bcrypt_pool *p, const char *password, const char *hash, bcrypt_cb cb,
                   void *arg, bcrypt_wanted wanted);

#endif
