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
 */
#ifndef CONDUITD_BCRYPT_POOL_H
#define CONDUITD_BCRYPT_POOL_H

struct event_base;
struct bcrypt_pool;
struct worker_slot;

/* hash: ok 1 and the new hash, or 0.  verify: ok 1 on a match, else 0. */
typedef void (*bcrypt_cb)(void *arg, int ok, const char *hash);

/* slot, when not NULL, gets the jobs' counts (common/scoreboard.h). */
struct bcrypt_pool *bcrypt_pool_new(struct event_base *base, int threads, int cost,
                                    struct worker_slot *slot);
void bcrypt_pool_free(struct bcrypt_pool *p);

void bcrypt_hash(struct bcrypt_pool *p, const char *password, bcrypt_cb cb, void *arg);
void bcrypt_verify(struct bcrypt_pool *p, const char *password, const char *hash, bcrypt_cb cb,
                   void *arg);

#endif
