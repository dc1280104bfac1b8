/*
 * bcrypt_pool: hashing threads.  See bcrypt_pool.h.
 *
 * Jobs go to the threads through a mutex-protected FIFO; finished jobs come
 * back as pointers written into a pipe, which a libevent event on the loop
 * reads.  Only the loop thread touches libevent.
 *
 * Shedding: the loop refuses a job when queue_max wait already (told from
 * the loop, through the deliver event), and a timer on the loop takes out
 * of the FIFO, at the oldest job's deadline, the jobs that have waited
 * queue_timeout or whose client has gone.  A thread that takes a job past
 * its deadline (between two firings) skips it too.
 *
 * Priority: the threads run BCRYPT_NICE steps nicer than the loop.  A
 * burst of logins (every user after a restart) is pure CPU; at the same
 * priority, two threads hashing on a two-core machine take the loop's and
 * PostgreSQL's CPU, so the logged-in users' reads slow down and the
 * database queue stands and sheds them.  Nicer, the hashes get what the
 * reads leave, and logins that wait past queue_timeout are shed with 503:
 * the burst costs logins, not everyone's reads.
 */
#include "config.h"

#include "worker/bcrypt_pool.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/password.h"
#include "common/scoreboard.h"

#define MAX_THREADS 64

struct bjob {
    struct bjob *next;
    int verify;
    char password[PASSWORD_MAX + 1];
    char hash[PASSWORD_HASH_LEN];
    int ok;  /* or BCRYPT_SHED, and then why */
    int why; /* enum scoreboard_shed */
    int64_t queued_ns;
    bcrypt_cb cb;
    void *arg;
    bcrypt_wanted wanted;
};

struct bcrypt_pool {
    int cost;
    int nthreads;
    pthread_t threads[MAX_THREADS];
    pthread_mutex_t lock;
    pthread_cond_t more;
    struct bjob *head, *tail;
    int waiting; /* jobs in the FIFO (under lock) */
    int idle;    /* threads waiting for a job (under lock) */
    int stop;
    int queue_max;
    int64_t timeout_ns;
    struct event *expire;  /* the oldest waiting job's deadline */
    struct event *deliver; /* tells the refused jobs, from the loop */
    struct bjob *refused;  /* loop thread only */
    int done_pipe[2];
    struct event *done_ev;
    struct worker_slot *slot; /* its counters, or NULL */
    int pending;              /* jobs handed over, callback not yet run (loop thread only) */
};

/* The jobs in the threads' hands, for /metrics (loop thread only). */
static void
set_pending(struct bcrypt_pool *p, int delta)
{
    p->pending += delta;
    if (p->slot)
        atomic_store_explicit(&p->slot->bcrypt_queued, p->pending, memory_order_relaxed);
}

/* Raising a nice value needs no privilege; on Linux it is the thread's own. */
#define BCRYPT_NICE 5

static void *
run_thread(void *arg)
{
    struct bcrypt_pool *p = arg;

    errno = 0;
    int prio = getpriority(PRIO_PROCESS, 0);
    if (errno == 0 && setpriority(PRIO_PROCESS, 0, prio + BCRYPT_NICE) < 0)
        log_debug("hashing thread: cannot lower its priority: %s", strerror(errno));

    for (;;) {
        struct bjob *j;
        pthread_mutex_lock(&p->lock);
        while (!p->head && !p->stop) {
            p->idle++;
            pthread_cond_wait(&p->more, &p->lock);
            p->idle--;
        }
        if (p->stop) {
            pthread_mutex_unlock(&p->lock);
            return NULL;
        }
        j = p->head;
        p->head = j->next;
        if (!p->head)
            p->tail = NULL;
        p->waiting--;
        pthread_mutex_unlock(&p->lock);

        if (clock_now_ns() - j->queued_ns >= p->timeout_ns) {
            j->ok = BCRYPT_SHED; /* its client has given up: no CPU for it */
            j->why = SB_SHED_TIMEOUT;
        } else if (j->verify)
            j->ok = password_verify(j->password, j->hash);
        else
            j->ok = password_hash(j->password, p->cost, j->hash) == 0;
        explicit_bzero(j->password, sizeof(j->password));

        /* A pointer is smaller than PIPE_BUF: the write is atomic. */
        while (write(p->done_pipe[1], &j, sizeof(j)) < 0 && errno == EINTR)
            ;
    }
}

/* A job's end, on the loop: its callback, and a shed one counted. */
static void
finish(struct bcrypt_pool *p, struct bjob *j)
{
    set_pending(p, -1);
    if (j->ok == BCRYPT_SHED && p->slot)
        scoreboard_add(&p->slot->c.shed[SB_QUEUE_BCRYPT][j->why], 1);
    j->cb(j->arg, j->ok, j->ok == BCRYPT_SHED ? NULL : j->hash);
    explicit_bzero(j, sizeof(*j));
    free(j);
}

static void
on_done(evutil_socket_t fd, short what, void *arg)
{
    struct bjob *jobs[64];
    ssize_t n;

    (void)what;
    while ((n = read(fd, jobs, sizeof(jobs))) > 0)
        for (size_t i = 0; i < (size_t)n / sizeof(jobs[0]); i++)
            finish(arg, jobs[i]);
}

static void
on_deliver(evutil_socket_t fd, short what, void *arg)
{
    struct bcrypt_pool *p = arg;

    (void)fd;
    (void)what;
    while (p->refused) {
        struct bjob *j = p->refused;
        p->refused = j->next;
        finish(p, j);
    }
}

static void
arm_expire(struct bcrypt_pool *p, int64_t deadline, int64_t now)
{
    int64_t left = deadline - now > 0 ? deadline - now : 0;
    struct timeval tv = {(time_t)(left / 1000000000),
                         (suseconds_t)((left % 1000000000 + 999) / 1000)};

    evtimer_add(p->expire, &tv);
}

/*
 * The oldest job's deadline: every job past its own, or whose client has
 * gone, leaves the FIFO unhashed (wanted() only peeks at a socket, so it
 * is cheap enough under the lock, for at most queue_max jobs).
 */
static void
on_expire(evutil_socket_t fd, short what, void *arg)
{
    struct bcrypt_pool *p = arg;
    struct bjob *out = NULL, *prev = NULL, *j;
    int64_t now = clock_now_ns(), next = -1;

    (void)fd;
    (void)what;
    pthread_mutex_lock(&p->lock);
    for (j = p->head; j;) {
        struct bjob *after = j->next;
        if (now - j->queued_ns >= p->timeout_ns)
            j->why = SB_SHED_TIMEOUT;
        else if (j->wanted && !j->wanted(j->arg))
            j->why = SB_SHED_GONE;
        else {
            prev = j;
            j = after;
            continue;
        }
        if (prev)
            prev->next = after;
        else
            p->head = after;
        if (p->tail == j)
            p->tail = prev;
        p->waiting--;
        j->ok = BCRYPT_SHED;
        j->next = out;
        out = j;
        j = after;
    }
    if (p->head)
        next = p->head->queued_ns + p->timeout_ns;
    pthread_mutex_unlock(&p->lock);
    while (out) {
        j = out;
        out = j->next;
        finish(p, j);
    }
    if (next >= 0)
        arm_expire(p, next, now);
}

struct bcrypt_pool *
bcrypt_pool_new(struct event_base *base, int threads, int cost, int queue_max, int queue_timeout_ms,
                struct worker_slot *slot)
{
    struct bcrypt_pool *p = calloc(1, sizeof(*p));
    sigset_t all, old;

    if (!p)
        return NULL;
    if (threads > MAX_THREADS)
        threads = MAX_THREADS;
    p->cost = cost;
    p->slot = slot;
    p->queue_max = queue_max;
    p->timeout_ns = (int64_t)queue_timeout_ms * 1000000;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->more, NULL);
    if (pipe2(p->done_pipe, O_CLOEXEC) < 0) {
        free(p);
        return NULL;
    }
    /* Only the loop side is non-blocking: a thread may wait for room. */
    fcntl(p->done_pipe[0], F_SETFL, O_NONBLOCK);
    p->done_ev = event_new(base, p->done_pipe[0], EV_READ | EV_PERSIST, on_done, p);
    p->expire = evtimer_new(base, on_expire, p);
    p->deliver = event_new(base, -1, 0, on_deliver, p);
    if (!p->done_ev || !p->expire || !p->deliver || event_add(p->done_ev, NULL) < 0) {
        bcrypt_pool_free(p);
        return NULL;
    }
    /*
     * The threads block every signal (they inherit the mask they are
     * created under): a signal sent to the worker is then always taken by
     * the loop's thread, which handles it, never by a hashing thread.
     */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    for (int i = 0; i < threads; i++) {
        if (pthread_create(&p->threads[i], NULL, run_thread, p) != 0) {
            log_error("cannot start a hashing thread: %s", strerror(errno));
            break;
        }
        p->nthreads++;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (p->nthreads == 0) {
        bcrypt_pool_free(p);
        return NULL;
    }
    return p;
}

void
bcrypt_pool_free(struct bcrypt_pool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    p->stop = 1;
    pthread_cond_broadcast(&p->more);
    pthread_mutex_unlock(&p->lock);
    for (int i = 0; i < p->nthreads; i++)
        pthread_join(p->threads[i], NULL);
    while (p->head) {
        struct bjob *j = p->head;
        p->head = j->next;
        explicit_bzero(j, sizeof(*j));
        free(j);
    }
    while (p->refused) {
        struct bjob *j = p->refused;
        p->refused = j->next;
        explicit_bzero(j, sizeof(*j));
        free(j);
    }
    if (p->done_ev)
        event_free(p->done_ev);
    if (p->expire)
        event_free(p->expire);
    if (p->deliver)
        event_free(p->deliver);
    close(p->done_pipe[0]);
    close(p->done_pipe[1]);
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->more);
    free(p);
}

static void
submit(struct bcrypt_pool *p, int verify, const char *password, const char *hash, bcrypt_cb cb,
       void *arg, bcrypt_wanted wanted)
{
    int armed = evtimer_pending(p->expire, NULL);
    struct bjob *j = calloc(1, sizeof(*j));

    if (!j)
        fatal("out of memory");
    j->verify = verify;
    /* Callers refuse longer passwords; a longer one here would never match. */
    snprintf(j->password, sizeof(j->password), "%s", password);
    if (hash)
        snprintf(j->hash, sizeof(j->hash), "%s", hash);
    j->cb = cb;
    j->arg = arg;
    j->wanted = wanted;
    j->queued_ns = clock_now_ns();
    set_pending(p, 1);
    pthread_mutex_lock(&p->lock);
    /* Jobs an idle thread is about to take do not wait: they are not counted. */
    if (p->waiting - p->idle >= p->queue_max) {
        pthread_mutex_unlock(&p->lock);
        j->ok = BCRYPT_SHED;
        j->why = SB_SHED_FULL;
        j->next = p->refused;
        p->refused = j;
        event_active(p->deliver, EV_TIMEOUT, 0);
        return;
    }
    if (p->tail)
        p->tail->next = j;
    else
        p->head = j;
    p->tail = j;
    p->waiting++;
    pthread_cond_signal(&p->more);
    pthread_mutex_unlock(&p->lock);
    if (p->slot)
        scoreboard_add(&p->slot->c.bcrypt_jobs, 1);
    if (!armed)
        arm_expire(p, j->queued_ns + p->timeout_ns, j->queued_ns);
}

int
bcrypt_full(struct bcrypt_pool *p)
{
    int full;

    pthread_mutex_lock(&p->lock);
    full = p->waiting - p->idle >= p->queue_max;
    pthread_mutex_unlock(&p->lock);
    if (full && p->slot)
        scoreboard_add(&p->slot->c.shed[SB_QUEUE_BCRYPT][SB_SHED_FULL], 1);
    return full;
}

void
bcrypt_hash(struct bcrypt_pool *p, const char *password, bcrypt_cb cb, void *arg,
            bcrypt_wanted wanted)
{
    submit(p, 0, password, NULL, cb, arg, wanted);
}

void
bcrypt_verify(struct bcrypt_pool *p, const char *password, const char *hash, bcrypt_cb cb,
              void *arg, bcrypt_wanted wanted)
{
    submit(p, 1, password, hash, cb, arg, wanted);
}
