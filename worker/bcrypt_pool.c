/*
 * bcrypt_pool: hashing threads.  See bcrypt_pool.h.
 *
 * Jobs go to the threads through a mutex-protected FIFO; finished jobs come
 * back as pointers written into a pipe, which a libevent event on the loop
 * reads.  Only the loop thread touches libevent.
 */
#include "config.h"

#include "worker/bcrypt_pool.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "common/log.h"
#include "common/password.h"
#include "common/scoreboard.h"

#define MAX_THREADS 64

struct bjob {
    struct bjob *next;
    int verify;
    char password[PASSWORD_MAX + 1];
    char hash[PASSWORD_HASH_LEN];
    int ok;
    bcrypt_cb cb;
    void *arg;
};

struct bcrypt_pool {
    int cost;
    int nthreads;
    pthread_t threads[MAX_THREADS];
    pthread_mutex_t lock;
    pthread_cond_t more;
    struct bjob *head, *tail;
    int stop;
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

static void *
run_thread(void *arg)
{
    struct bcrypt_pool *p = arg;

    for (;;) {
        struct bjob *j;
        pthread_mutex_lock(&p->lock);
        while (!p->head && !p->stop)
            pthread_cond_wait(&p->more, &p->lock);
        if (p->stop) {
            pthread_mutex_unlock(&p->lock);
            return NULL;
        }
        j = p->head;
        p->head = j->next;
        if (!p->head)
            p->tail = NULL;
        pthread_mutex_unlock(&p->lock);

        if (j->verify)
            j->ok = password_verify(j->password, j->hash);
        else
            j->ok = password_hash(j->password, p->cost, j->hash) == 0;
        explicit_bzero(j->password, sizeof(j->password));

        /* A pointer is smaller than PIPE_BUF: the write is atomic. */
        while (write(p->done_pipe[1], &j, sizeof(j)) < 0 && errno == EINTR)
            ;
    }
}

static void
on_done(evutil_socket_t fd, short what, void *arg)
{
    struct bjob *jobs[64];
    ssize_t n;

    (void)what;
    while ((n = read(fd, jobs, sizeof(jobs))) > 0) {
        for (size_t i = 0; i < (size_t)n / sizeof(jobs[0]); i++) {
            struct bjob *j = jobs[i];
            set_pending(arg, -1);
            j->cb(j->arg, j->ok, j->hash);
            explicit_bzero(j, sizeof(*j));
            free(j);
        }
    }
}

struct bcrypt_pool *
bcrypt_pool_new(struct event_base *base, int threads, int cost, struct worker_slot *slot)
{
    struct bcrypt_pool *p = calloc(1, sizeof(*p));
    sigset_t all, old;

    if (!p)
        return NULL;
    if (threads > MAX_THREADS)
        threads = MAX_THREADS;
    p->cost = cost;
    p->slot = slot;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->more, NULL);
    if (pipe2(p->done_pipe, O_CLOEXEC) < 0) {
        free(p);
        return NULL;
    }
    /* Only the loop side is non-blocking: a thread may wait for room. */
    fcntl(p->done_pipe[0], F_SETFL, O_NONBLOCK);
    p->done_ev = event_new(base, p->done_pipe[0], EV_READ | EV_PERSIST, on_done, p);
    if (!p->done_ev || event_add(p->done_ev, NULL) < 0) {
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
    if (p->done_ev)
        event_free(p->done_ev);
    close(p->done_pipe[0]);
    close(p->done_pipe[1]);
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->more);
    free(p);
}

static void
submit(struct bcrypt_pool *p, int verify, const char *password, const char *hash, bcrypt_cb cb,
       void *arg)
{
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
    set_pending(p, 1);
    if (p->slot)
        scoreboard_add(&p->slot->c.bcrypt_jobs, 1);
    pthread_mutex_lock(&p->lock);
    if (p->tail)
        p->tail->next = j;
    else
        p->head = j;
    p->tail = j;
    pthread_cond_signal(&p->more);
    pthread_mutex_unlock(&p->lock);
}

void
bcrypt_hash(struct bcrypt_pool *p, const char *password, bcrypt_cb cb, void *arg)
{
    submit(p, 0, password, NULL, cb, arg);
}

void
bcrypt_verify(struct bcrypt_pool *p, const char *password, const char *hash, bcrypt_cb cb,
              void *arg)
{
    submit(p, 1, password, hash, cb, arg);
}
