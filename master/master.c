/*
 * master: fork, reap, signal, report.  See master.h.
 *
 * The worker table holds every worker process alive, of every generation.
 * A reload (HUP) starts generation g+1 beside g and retires g once the new
 * workers are ready, so some process is always accepting.  Each live worker
 * also owns one slot of the scoreboard, where it writes its heartbeat.
 *
 * A binary upgrade (USR2) starts a new master beside this one, as its
 * child (upgrade.h); WINCH then retires this master's workers, HUP brings
 * them back, and the new master's exit, whenever it comes, gives this one
 * the service back (the pidfile, systemd's MAINPID, its workers).
 */
#include "config.h"

#include "master/master.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cache_zone.h"
#include "common/clock.h"
#include "common/listen.h"
#include "common/log.h"
#include "common/proctitle.h"
#include "common/scoreboard.h"
#include "common/stamps.h"
#include "master/daemon.h"
#include "master/notify.h"
#include "master/upgrade.h"
#include "worker/worker.h"

#define TICK_MS 250
#define MAX_PROCS SCOREBOARD_SLOTS
#define RELOAD_WAIT_MS 10000   /* retire the old generation by then, ready or not */
#define STRAY_STOP_WAIT_MS 500 /* see reap() */
#define FAST_STOP_MS 2000      /* INT/QUIT: SIGKILL whatever is left after this */
#define CRASH_WINDOW_MS 10000
#define CRASH_LIMIT 5
#define BACKOFF_MIN_MS 1000
#define BACKOFF_MAX_MS 30000
#define BACKOFF_RESET_MS 60000 /* a quiet minute forgets the backoff */

enum stop_mode { RUNNING, STOP_GRACEFUL, STOP_FAST };

struct worker_proc {
    pid_t pid; /* 0: a free entry */
    int slot;
    int index;
    int generation;
    int64_t started_ms;
    int64_t kill_at_ms; /* SIGKILL when still alive at this time; 0: none */
    int stopping;       /* the master asked it to exit */
    int ready;          /* its readiness is logged */
    int killed;         /* SIGKILL sent, for kill_cause */
    int kill_cause;     /* SB_EXIT_HEARTBEAT or SB_EXIT_STUCK once killed */
    int recycling;      /* reached max_requests: retired once its replacement is ready */
};

/* A worker reaped and not yet judged: settle_exits() says what its exit was. */
struct exit_record {
    pid_t pid;
    int index;
    int generation;
    int status;
    int asked;           /* the master had asked it to stop */
    int kill_cause;      /* the master SIGKILLed it (enum scoreboard_exit), or 0 */
    int64_t judge_at_ms; /* not before; sooner if the master starts stopping */
};

static struct master {
    const struct options *opts;
    struct config cfg;
    struct listener_set ls;
    struct listener_set old_ls; /* during a rebind: closed by new children */
    struct listener status;     /* status_listen (fd -1 when off): never rebound */
    int have_old_ls;
    struct scoreboard *sb;
    struct cache_zone *zone; /* the workers' cache, shared: sized once, at the start */
    struct worker_proc procs[MAX_PROCS];
    int generation;
    int target;
    int reloading;
    int64_t reload_started_ms;
    int reload_pending; /* a HUP waits for the last reload to finish: see reload_busy() */
    enum stop_mode stopping;
    int fatal;   /* a worker exited with WORKER_EXIT_FATAL: no respawn until HUP */
    int started; /* the first generation was ready once */
    int64_t crashes[CRASH_LIMIT];
    int ncrashes;
    int64_t last_crash_ms;
    int64_t backoff_ms;
    int64_t backoff_until_ms;
    int sigpipe[2]; /* a handler's byte wakes the loop; the flags below say why */
    struct exit_record exits[MAX_PROCS]; /* reaped, not yet judged: see reap() */
    int nexits;
    sig_atomic_t ttin_done, ttou_done; /* of the signal counts below */
    struct notifier notify;            /* systemd's NOTIFY_SOCKET, when there is one */
    uint64_t served_retired;           /* responses of workers that have exited */
    int64_t status_sent_ms;            /* the last STATUS= line */
    char status_sent[160];
    pid_t old_master;      /* the master this one replaced by an upgrade; 0: none */
    pid_t new_master;      /* the master USR2 started, while it lives; 0: none */
    int new_master_exited; /* reaped, with this status: upgrade_ended() says how */
    int new_master_status;
    int winched;  /* WINCH: the workers retired for the new master; HUP or its exit undoes it */
    int resuming; /* the generation starting is the one WINCH retired, back */
} M;

static const int handled_signals[] = {SIGHUP,  SIGTERM, SIGINT,  SIGQUIT,  SIGTTIN,
                                      SIGTTOU, SIGUSR1, SIGUSR2, SIGWINCH, SIGCHLD};

/*
 * Signals for the master alone: USR2 starts a new binary, WINCH retires
 * the workers of an old master once a new one serves (nginx's meanings,
 * and unicorn's and gunicorn's).  A worker, which gets them too when they
 * are sent to the whole process group, ignores them (child_setup), as it
 * does TTIN and TTOU, which would stop it: USR2's default action would end
 * it.
 */
static const int ignored_in_workers[] = {SIGUSR2, SIGWINCH, SIGTTIN, SIGTTOU};

/*
 * What the handlers saw, for the loop to act on in its own order (as
 * nginx's master does): a handler sets a flag, or counts, and writes a
 * byte into the self-pipe only to wake the loop's poll().  Nothing else
 * happens in a handler.
 */
static volatile sig_atomic_t got_chld, got_hup, got_term, got_quit, got_usr1, got_usr2, got_winch;
static volatile sig_atomic_t ttin_seen, ttou_seen; /* counts: each one adds a worker */

static void
on_signal(int sig)
{
    int saved = errno;
    unsigned char b = (unsigned char)sig;
    ssize_t n;

    switch (sig) {
    case SIGCHLD:
        got_chld = 1;
        break;
    case SIGHUP:
        got_hup = 1;
        break;
    case SIGTERM:
        got_term = 1;
        break;
    case SIGINT:
    case SIGQUIT:
        got_quit = 1;
        break;
    case SIGTTIN:
        ttin_seen++;
        break;
    case SIGTTOU:
        ttou_seen++;
        break;
    case SIGUSR1:
        got_usr1 = 1;
        break;
    case SIGUSR2:
        got_usr2 = 1;
        break;
    case SIGWINCH:
        got_winch = 1;
        break;
    default:
        break;
    }
    n = write(M.sigpipe[1], &b, 1);
    (void)n; /* a full pipe already holds a wake-up */
    errno = saved;
}

static int
setup_signals(void)
{
    struct sigaction sa;

    if (pipe2(M.sigpipe, O_NONBLOCK | O_CLOEXEC) < 0)
        return -1;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof(handled_signals) / sizeof(handled_signals[0]); i++)
        if (sigaction(handled_signals[i], &sa, NULL) < 0)
            return -1;
    signal(SIGPIPE, SIG_IGN);
    return 0;
}

/*
 * In a new worker: forget the master's signal plumbing and its privileges.
 * Signals stay blocked (as spawn() blocked them) until the worker has its
 * own handlers: one sent in between (Ctrl-C reaches every process of the
 * group) then waits for them instead of killing it by its default action.
 */
static void
child_setup(void)
{
    close(M.sigpipe[0]);
    close(M.sigpipe[1]);
    notify_close(&M.notify); /* the service manager hears from the master only */
    for (size_t i = 0; i < sizeof(handled_signals) / sizeof(handled_signals[0]); i++)
        signal(handled_signals[i], SIG_DFL);
    for (size_t i = 0; i < sizeof(ignored_in_workers) / sizeof(ignored_in_workers[0]); i++)
        signal(ignored_in_workers[i], SIG_IGN);
    signal(SIGPIPE, SIG_IGN); /* a client that hangs up must not kill the worker */
    if (M.have_old_ls)
        listen_close(&M.old_ls);

    if (M.cfg.user) {
        char err[256];
        if (daemon_drop_privileges(M.cfg.user, M.cfg.group, err, sizeof(err)) < 0) {
            log_error("%s", err);
            exit(WORKER_EXIT_FATAL);
        }
    }
}

static struct worker_proc *
proc_by_pid(pid_t pid)
{
    for (int i = 0; i < MAX_PROCS; i++)
        if (M.procs[i].pid == pid)
            return &M.procs[i];
    return NULL;
}

static int
live_procs(void)
{
    int n = 0;

    for (int i = 0; i < MAX_PROCS; i++)
        n += M.procs[i].pid != 0;
    return n;
}

/* Forks worker `index` of the current generation. */
static int
spawn(int index)
{
    struct worker_proc *p = proc_by_pid(0);
    int64_t now = clock_now_ms();
    sigset_t all, old;
    int slot;
    pid_t pid, master_pid = getpid();

    if (!p || (slot = scoreboard_claim(M.sb, index, M.generation, now)) < 0) {
        log_error("cannot start worker %d: no free slot (%d processes alive)", index, live_procs());
        return -1;
    }
    /* Blocked until the child has reset its handlers: none may fire into our pipe. */
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, &old);
    pid = fork();
    if (pid == 0) {
        struct worker_args a = {
            .cfg = &M.cfg,
            .listeners = &M.ls,
            .status = M.status.fd >= 0 ? &M.status : NULL,
            .sb = M.sb,
            .zone = M.zone,
            .slot = slot,
            .index = index,
            .generation = M.generation,
            .master_pid = master_pid,
        };
        child_setup();
        worker_main(&a);
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (pid < 0) {
        log_error("cannot fork worker %d: %s", index, strerror(errno));
        scoreboard_release(M.sb, slot);
        return -1;
    }
    atomic_fetch_add(&M.sb->master.worker_starts, 1);
    memset(p, 0, sizeof(*p));
    p->pid = pid;
    p->slot = slot;
    p->index = index;
    p->generation = M.generation;
    p->started_ms = now;
    log_debug("worker %d (pid %d) started, generation %d", index, (int)pid, M.generation);
    return 0;
}

/* Asks a worker to exit with sig, and SIGKILLs it after deadline_ms. */
static void
stop_proc(struct worker_proc *p, int sig, int64_t deadline_ms)
{
    int64_t now = clock_now_ms();

    if (kill(p->pid, sig) < 0 && errno != ESRCH)
        log_warning("cannot signal worker %d (pid %d): %s", p->index, (int)p->pid, strerror(errno));
    p->stopping = 1;
    if (!p->kill_at_ms || now + deadline_ms < p->kill_at_ms)
        p->kill_at_ms = now + deadline_ms;
}

static void
broadcast(int sig)
{
    for (int i = 0; i < MAX_PROCS; i++)
        if (M.procs[i].pid)
            kill(M.procs[i].pid, sig);
}

/* Five deaths in ten seconds: stop forking for a while, and say so. */
static void
note_crash(int64_t now)
{
    int recent = 0;

    M.crashes[M.ncrashes++ % CRASH_LIMIT] = now;
    M.last_crash_ms = now;
    for (int i = 0; i < CRASH_LIMIT && i < M.ncrashes; i++)
        recent += now - M.crashes[i] <= CRASH_WINDOW_MS;
    if (recent < CRASH_LIMIT)
        return;
    M.backoff_ms = M.backoff_ms ? M.backoff_ms * 2 : BACKOFF_MIN_MS;
    if (M.backoff_ms > BACKOFF_MAX_MS)
        M.backoff_ms = BACKOFF_MAX_MS;
    M.backoff_until_ms = now + M.backoff_ms;
    M.ncrashes = 0;
    log_error("%d workers died within %d s: waiting %lld ms before forking again "
              "(the lines above say why they died)",
              CRASH_LIMIT, CRASH_WINDOW_MS / 1000, (long long)M.backoff_ms);
}

static void
describe_status(int status, char *out, size_t outlen)
{
    if (WIFEXITED(status))
        snprintf(out, outlen, "exit status %d", WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        snprintf(out, outlen, "killed by signal %d (%s)%s", WTERMSIG(status),
                 strsignal(WTERMSIG(status)), WCOREDUMP(status) ? ", core dumped" : "");
    else
        snprintf(out, outlen, "status 0x%x", status);
}

/*
 * A worker that exited 0 (its handler's clean stop) or by a stop signal's
 * default action, unasked: a signal was sent to it.  Most often it is
 * Ctrl-C, sent to the whole process group, whose copy for the master may
 * come a moment after the worker's exit (the kernel does not order them).
 */
static int
stopped_by_signal(int status)
{
    if (WIFEXITED(status))
        return WEXITSTATUS(status) == 0;
    return WIFSIGNALED(status) && (WTERMSIG(status) == SIGINT || WTERMSIG(status) == SIGQUIT ||
                                   WTERMSIG(status) == SIGTERM || WTERMSIG(status) == SIGHUP);
}

/*
 * Reaps exited workers and frees their entries, but does not judge them
 * yet: settle_exits() does, later in the same pass, once the stop signals
 * of this pass have been acted on.  One found dead may have been stopped
 * by a signal sent to the whole process group (Ctrl-C in a terminal
 * reaches every worker and the master at once): such an exit is part of
 * the stop, not a death to answer with a respawn.  The kernel delivers a
 * group's signal process by process, and under load the master's copy was
 * seen to come 500 ms after the workers'.  Workers wait for the master's
 * word on SIGINT (Ctrl-C); for other signals sent to the whole group
 * (TERM, say), a worker that looks stopped by a signal is judged only
 * STRAY_STOP_WAIT_MS later, or as soon as the master's own signal comes,
 * and its index is not respawned before.
 */
static void
reap(void)
{
    int status;
    pid_t pid;

    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        struct worker_proc *p = proc_by_pid(pid);
        struct exit_record *e;

        if (!p) {
            if (pid == M.new_master) {
                M.new_master_exited = 1;
                M.new_master_status = status;
            }
            continue;
        }
        e = &M.exits[M.nexits++];
        e->pid = pid;
        e->index = p->index;
        e->generation = p->generation;
        e->status = status;
        e->asked = p->stopping;
        e->kill_cause = p->killed ? p->kill_cause : 0;
        e->judge_at_ms = clock_now_ms();
        if (!e->asked && stopped_by_signal(status))
            e->judge_at_ms += STRAY_STOP_WAIT_MS;
        M.served_retired += atomic_load(&M.sb->slots[p->slot].requests);
        if (scoreboard_cache_gap(M.sb, p->slot)) {
            /* Nobody may have listened for a while: what changed then is in no stamp. */
            cache_zone_clear(M.zone, stamps_tick(&M.sb->stamps));
            if (!M.stopping)
                log_info("cache: worker %d (pid %d) was the last with its cache on: the shared "
                         "cache is cleared",
                         p->index, (int)pid);
        }
        scoreboard_release(M.sb, p->slot);
        memset(p, 0, sizeof(*p)); /* gone: a stop begun later must not signal its pid */
    }
}

/* What /metrics counts the exit as (conduitd_worker_exits_total's cause). */
static enum scoreboard_exit
exit_cause(const struct exit_record *e)
{
    int st = e->status;

    if (e->kill_cause)
        return (enum scoreboard_exit)e->kill_cause;
    if (e->asked || (M.stopping && WIFEXITED(st) && WEXITSTATUS(st) == 0))
        return SB_EXIT_RETIRED;
    if (WIFEXITED(st) && WEXITSTATUS(st) == WORKER_EXIT_FATAL)
        return SB_EXIT_CONFIG;
    return WIFSIGNALED(st) ? SB_EXIT_SIGNAL : SB_EXIT_ERROR;
}

/* Says what each reaped worker's exit was, once it can be told. */
static void
settle_exits(int64_t now)
{
    int kept = 0;

    for (int i = 0; i < M.nexits; i++) {
        struct exit_record *e = &M.exits[i];
        int st = e->status, signalled = stopped_by_signal(st);
        char how[96];

        if (!M.stopping && now < e->judge_at_ms) {
            M.exits[kept++] = *e;
            continue;
        }
        describe_status(st, how, sizeof(how));
        atomic_fetch_add(&M.sb->master.exits[exit_cause(e)], 1);
        if (e->asked || (M.stopping && WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
            log_info("worker %d (pid %d) exited (%s)", e->index, (int)e->pid, how);
        } else if (WIFEXITED(st) && WEXITSTATUS(st) == WORKER_EXIT_FATAL) {
            log_error("worker %d (pid %d) exited with status %d: its configuration cannot work; "
                      "not respawning until a reload (HUP) brings a good one",
                      e->index, (int)e->pid, WORKER_EXIT_FATAL);
            M.fatal = 1;
        } else {
            log_warning("worker %d (pid %d) %s (%s%s)%s", e->index, (int)e->pid,
                        signalled ? "stopped, though the master did not ask" : "died unexpectedly",
                        how, signalled ? ": a signal sent to it alone?" : "",
                        M.stopping ? "" : "; respawning");
            if (!M.stopping)
                note_crash(now);
        }
    }
    M.nexits = kept;
}

/* When the loop must wake for settle_exits() at the latest, in ms from now. */
static int
next_judgement_ms(int64_t now, int cap)
{
    for (int i = 0; i < M.nexits; i++) {
        int64_t left = M.exits[i].judge_at_ms - now;
        if (left < cap)
            cap = left > 0 ? (int)left : 0;
    }
    return cap;
}

/* A worker of this generation holds index, or one that exited is not judged yet. */
static int
current_proc_exists(int index)
{
    for (int i = 0; i < MAX_PROCS; i++) {
        const struct worker_proc *p = &M.procs[i];
        if (p->pid && !p->stopping && p->generation == M.generation && p->index == index)
            return 1;
    }
    for (int i = 0; i < M.nexits; i++)
        if (M.exits[i].generation == M.generation && M.exits[i].index == index && !M.exits[i].asked)
            return 1;
    return 0;
}

static void
spawn_missing(int64_t now)
{
    if (M.stopping || M.fatal || M.winched || now < M.backoff_until_ms)
        return;
    for (int i = 0; i < M.target; i++)
        if (!current_proc_exists(i) && spawn(i) < 0)
            return;
}

static int
current_generation_ready(int *nready)
{
    int ready = 0;

    for (int i = 0; i < MAX_PROCS; i++) {
        const struct worker_proc *p = &M.procs[i];
        if (p->pid && !p->stopping && p->generation == M.generation && p->ready)
            ready++;
    }
    *nready = ready;
    return ready >= M.target;
}

/*
 * PostgreSQL needs a connection per worker and pool slot, in every
 * instance: print the sum, and warn when it alone nears PostgreSQL's
 * default max_connections (100, 3 of them reserved for superusers), the
 * "too many clients" trap of pre-fork servers (docs/design.md, "Sizing").
 * The master holds no connection, so it cannot read the real setting.
 */
#define PG_DEFAULT_USABLE_CONNECTIONS 97

static void
log_db_sizing(int workers)
{
    int listen = M.cfg.cache && M.cfg.cache_sync; /* cache_sync.c's connection */
    int total = workers * (M.cfg.pool + listen);

    log_notice("PostgreSQL connections: %d worker(s) x (pool %d%s) = %d (and the new "
               "generation's as well during a reload, never more)",
               workers, M.cfg.pool, listen ? " + 1 cache listener" : "", total);
    if (total > PG_DEFAULT_USABLE_CONNECTIONS * 3 / 4)
        log_warning("%d connections is near or past PostgreSQL's default max_connections "
                    "(100): raise it, or lower workers or pool",
                    total);
}

/* Another live worker of p's generation and index, not stopping: its replacement. */
static const struct worker_proc *
replacement_of(const struct worker_proc *p)
{
    for (int i = 0; i < MAX_PROCS; i++) {
        const struct worker_proc *q = &M.procs[i];
        if (q != p && q->pid && !q->stopping && q->generation == p->generation &&
            q->index == p->index)
            return q;
    }
    return NULL;
}

/*
 * max_requests: a worker that says it has served its share gets a
 * replacement of the same index, and is retired (drained, as a reload
 * retires a generation) once the replacement is ready, so the capacity
 * never drops and no request is lost.  A replacement that dies before it
 * is ready is started again, under the same backoff as any respawn.
 */
static void
recycle_workers(int64_t now)
{
    if (M.stopping || M.fatal || M.winched || now < M.backoff_until_ms)
        return;
    for (int i = 0; i < MAX_PROCS; i++) {
        struct worker_proc *p = &M.procs[i];
        const struct worker_proc *q;

        if (!p->pid || p->stopping || p->generation != M.generation)
            continue;
        if (!p->recycling && atomic_load(&M.sb->slots[p->slot].recycle)) {
            p->recycling = 1;
            log_notice("worker %d (pid %d) served %llu responses (max_requests): replacing it",
                       p->index, (int)p->pid,
                       (unsigned long long)atomic_load(&M.sb->slots[p->slot].requests));
        }
        if (!p->recycling)
            continue;
        q = replacement_of(p);
        if (!q)
            spawn(p->index);
        else if (q->ready)
            stop_proc(p, SIGTERM, (int64_t)M.cfg.graceful_timeout * 1000);
    }
}

/* Once the new generation serves, the old ones are asked to drain. */
static void
retire_old_generations(void)
{
    for (int i = 0; i < MAX_PROCS; i++) {
        struct worker_proc *p = &M.procs[i];
        if (p->pid && !p->stopping && p->generation < M.generation)
            stop_proc(p, SIGTERM, (int64_t)M.cfg.graceful_timeout * 1000);
    }
}

/* Responses served by this instance since it started, every generation included. */
static uint64_t
requests_served(void)
{
    uint64_t n = M.served_retired;

    for (int i = 0; i < MAX_PROCS; i++)
        if (M.procs[i].pid)
            n += atomic_load(&M.sb->slots[M.procs[i].slot].requests);
    return n;
}

/*
 * The service manager's STATUS= line (systemctl status shows it): sent
 * with READY=1, and then when it changes, at most once a second.
 */
static void
send_status(int64_t now, const char *prefix)
{
    char line[sizeof(M.status_sent)];
    int nready;

    if (M.notify.fd < 0)
        return;
    current_generation_ready(&nready);
    snprintf(line, sizeof(line),
             "STATUS=%d of %d worker(s) ready, generation %d, %llu requests served", nready,
             M.target, M.generation, (unsigned long long)requests_served());
    if (!prefix && (now - M.status_sent_ms < 1000 || strcmp(line, M.status_sent) == 0))
        return;
    M.status_sent_ms = now;
    snprintf(M.status_sent, sizeof(M.status_sent), "%s", line);
    notify_send(&M.notify, "%s%s", prefix ? prefix : "", line);
}

static void upgrade_ready(void);

static void
tick(void)
{
    int64_t now = clock_now_ms();
    int64_t timeout_ms = (int64_t)M.cfg.timeout * 1000;
    int nready;

    settle_exits(now);

    for (int i = 0; i < MAX_PROCS; i++) {
        struct worker_proc *p = &M.procs[i];
        struct worker_slot *s;
        int64_t silent;

        if (!p->pid)
            continue;
        s = &M.sb->slots[p->slot];
        if (!p->ready && atomic_load(&s->state) == SLOT_READY) {
            p->ready = 1;
            log_info("worker %d (pid %d) ready", p->index, (int)p->pid);
        }
        if (p->killed)
            continue;
        silent = now - atomic_load(&s->heartbeat_ms);
        if (silent > timeout_ms) {
            log_error("worker %d (pid %d) sent no heartbeat for %lld ms (timeout %d s): "
                      "killing it with SIGKILL",
                      p->index, (int)p->pid, (long long)silent, M.cfg.timeout);
            kill(p->pid, SIGKILL);
            p->killed = 1;
            p->kill_cause = SB_EXIT_HEARTBEAT;
            atomic_fetch_add(&M.sb->master.heartbeat_kills, 1);
        } else if (p->kill_at_ms && now >= p->kill_at_ms) {
            log_warning("worker %d (pid %d) did not exit in time: killing it with SIGKILL",
                        p->index, (int)p->pid);
            kill(p->pid, SIGKILL);
            p->killed = 1;
            p->kill_cause = SB_EXIT_STUCK;
        }
    }

    if (M.backoff_ms && now - M.last_crash_ms > BACKOFF_RESET_MS)
        M.backoff_ms = 0;
    spawn_missing(now);
    recycle_workers(now);

    if (current_generation_ready(&nready)) {
        if (!M.started) {
            M.started = 1;
            log_notice("%d worker(s) ready", nready);
            if (M.old_master)
                upgrade_ready();
            daemon_ready(1);
            /* MAINPID: after -d the pid systemd started is gone. */
            send_status(now, "");
            notify_send(&M.notify, "READY=1\nMAINPID=%d", (int)getpid());
        }
        if (M.reloading) {
            M.reloading = 0;
            retire_old_generations();
            if (M.resuming)
                log_notice("workers back: generation %d, %d worker(s) ready; this master (pid %d) "
                           "serves again",
                           M.generation, nready, (int)getpid());
            else
                log_notice("reload complete: generation %d, %d worker(s)", M.generation, nready);
            M.resuming = 0;
            log_db_sizing(nready);
            send_status(now, "READY=1\n");
        }
    } else if (M.reloading && now - M.reload_started_ms > RELOAD_WAIT_MS && nready > 0) {
        M.reloading = 0;
        retire_old_generations();
        log_warning("reload: only %d of %d new worker(s) ready after %d s; retiring the old "
                    "ones anyway",
                    nready, M.target, RELOAD_WAIT_MS / 1000);
        send_status(now, "READY=1\n");
    }
    if (M.started && !M.stopping)
        send_status(now, NULL);
    notify_watchdog(&M.notify, now);
}

static void
log_listeners(const struct listener_set *ls)
{
    for (int i = 0; i < ls->n; i++)
        log_notice("listening on %s%s", ls->l[i].name,
                   ls->l[i].inherited ? " (inherited, LISTEN_FDS)"
                   : ls->reuseport    ? " (reuseport)"
                                      : "");
}

/* The log file belongs to the workers' user, so they can reopen it. */
static void
chown_log(void)
{
    struct passwd *pw;
    gid_t gid;

    if (!M.cfg.user || log_fd() < 0 || strcmp(M.cfg.log, "stderr") == 0 ||
        strcmp(M.cfg.log, "syslog") == 0)
        return;
    pw = getpwnam(M.cfg.user);
    if (!pw)
        return;
    gid = pw->pw_gid;
    if (M.cfg.group) {
        struct group *gr = getgrnam(M.cfg.group);
        if (gr)
            gid = gr->gr_gid;
    }
    if (fchown(log_fd(), pw->pw_uid, gid) < 0)
        log_warning("cannot give %s to user %s: %s", M.cfg.log, M.cfg.user, strerror(errno));
}

/*
 * Each generation opens a full pool per worker, so reloads that overlap
 * multiply the database connections (40 HUPs 0.2 s apart took 2 workers
 * to 199 of PostgreSQL's 200).  A HUP that comes while the last reload is
 * under way (its workers not all ready yet) or while the generation it
 * replaced still drains waits for that; the HUPs that wait together are one
 * reload, of the configuration as it is then.  So at most two generations
 * hold connections at once: the one serving and the one starting, or the
 * one draining and the one that took its place.  A reload whose workers
 * cannot start (exit status 2) or are not all ready after RELOAD_WAIT_MS
 * does not hold the next one back, which is how a broken configuration is
 * mended; reload() then retires its unfinished generation.
 */
static const char *
reload_busy(int64_t now)
{
    if (M.reloading && !M.fatal && now - M.reload_started_ms <= RELOAD_WAIT_MS)
        return "the last reload's workers are still starting";
    for (int i = 0; i < MAX_PROCS; i++) {
        const struct worker_proc *p = &M.procs[i];
        if (p->pid && p->stopping && p->generation < M.generation)
            return "the generation it replaced is still draining";
    }
    return NULL;
}

static void
reload(void)
{
    struct config nc;
    char err[CONFIG_ERR_LEN];
    const char *key;
    int rebind;

    log_notice("reloading the configuration");
    notify_reloading(&M.notify);
    if (options_resolve(M.opts, &nc, err, sizeof(err)) < 0) {
        atomic_fetch_add(&M.sb->master.reload_failures, 1);
        log_error("reload failed: %s; keeping the running configuration", err);
        notify_send(&M.notify, "READY=1\nSTATUS=reload failed, running configuration kept: %s",
                    err);
        return;
    }
    key = config_nonreloadable_change(&M.cfg, &nc);
    if (key) {
        log_error("reload refused: %s cannot change without a restart; keeping the running "
                  "configuration",
                  key);
        notify_send(&M.notify, "READY=1\nSTATUS=reload refused: %s needs a restart", key);
        atomic_fetch_add(&M.sb->master.reload_failures, 1);
        config_free(&nc);
        return;
    }
    if (config_keep_running(&M.cfg, &nc, err, sizeof(err)))
        log_warning("reload: %s cannot change without a restart (the shared cache is mapped once, "
                    "at the start, as PostgreSQL's shared_buffers): it keeps %d entries in %d MB; "
                    "the rest of the reload applies",
                    err, nc.cache_size, nc.cache_memory);
    rebind = !listen_same(&M.ls, &nc);
    if (rebind) {
        struct listener_set nls;
        if (listen_open(&nls, &nc, err, sizeof(err)) < 0) {
            atomic_fetch_add(&M.sb->master.reload_failures, 1);
            log_error("reload failed: %s; keeping the running configuration", err);
            notify_send(&M.notify, "READY=1\nSTATUS=reload failed, running configuration kept: %s",
                        err);
            config_free(&nc);
            return;
        }
        M.old_ls = M.ls;
        M.have_old_ls = 1;
        M.ls = nls;
        log_listeners(&M.ls);
    }
    if (strcmp(nc.log, M.cfg.log) != 0 || nc.log_level != M.cfg.log_level) {
        if (log_open(nc.log, nc.log_level) < 0)
            log_error("cannot open the log %s: %s", nc.log, strerror(errno));
    }
    config_free(&M.cfg);
    M.cfg = nc;
    chown_log();

    if (M.reloading) {
        /* The last reload never finished (see reload_busy): its workers make way. */
        for (int i = 0; i < MAX_PROCS; i++) {
            struct worker_proc *p = &M.procs[i];
            if (p->pid && !p->stopping && p->generation == M.generation)
                stop_proc(p, SIGTERM, (int64_t)M.cfg.graceful_timeout * 1000);
        }
    }
    M.fatal = 0;
    M.backoff_ms = 0;
    M.backoff_until_ms = 0;
    M.generation++;
    M.target = config_workers(&M.cfg);
    atomic_fetch_add(&M.sb->master.reloads, 1);
    atomic_store(&M.sb->master.generation, M.generation);
    atomic_store(&M.sb->master.workers, M.target);
    M.reloading = 1;
    M.reload_started_ms = clock_now_ms();
    spawn_missing(M.reload_started_ms);
    if (M.have_old_ls) {
        listen_close(&M.old_ls);
        M.have_old_ls = 0;
    }
}

static void
set_target(int n)
{
    int64_t graceful = (int64_t)M.cfg.graceful_timeout * 1000;

    if (n < 1 || n > CONFIG_MAX_WORKERS)
        return;
    log_notice("workers: %d -> %d", M.target, n);
    while (M.target > n) {
        M.target--;
        for (int i = 0; i < MAX_PROCS; i++) {
            struct worker_proc *p = &M.procs[i];
            if (p->pid && !p->stopping && p->generation == M.generation && p->index == M.target)
                stop_proc(p, SIGTERM, graceful);
        }
    }
    M.target = n;
    atomic_store(&M.sb->master.workers, n);
}

static void
begin_stop(enum stop_mode mode)
{
    if (M.stopping == STOP_FAST || M.stopping == mode)
        return;
    M.stopping = mode;
    log_notice("%s shutdown: %d worker(s) to stop", mode == STOP_FAST ? "fast" : "graceful",
               live_procs());
    notify_send(&M.notify, "STOPPING=1\nSTATUS=%s shutdown: %d worker(s) to stop",
                mode == STOP_FAST ? "fast" : "graceful", live_procs());
    /* New connections are refused from now on; the workers close their copies. */
    listen_close(&M.ls);
    listen_close_one(&M.status);
    for (int i = 0; i < MAX_PROCS; i++) {
        struct worker_proc *p = &M.procs[i];
        if (!p->pid)
            continue;
        if (mode == STOP_FAST)
            stop_proc(p, SIGQUIT, FAST_STOP_MS);
        else if (!p->stopping)
            stop_proc(p, SIGTERM, (int64_t)M.cfg.graceful_timeout * 1000);
    }
}

static void
reopen_logs(void)
{
    if (log_reopen() < 0)
        log_error("cannot reopen the log %s: %s", M.cfg.log, strerror(errno));
    chown_log();
    log_notice("log reopened");
    broadcast(SIGUSR1);
}

/* path.oldbin into out; -1 when there is no pidfile (or the name does not fit). */
static int
oldbin_path(char *out, size_t outlen)
{
    return M.cfg.pid_file ? daemon_oldbin_path(M.cfg.pid_file, out, outlen) : -1;
}

/* The pidfile names this master again, after an upgrade that did not finish. */
static void
restore_pidfile(void)
{
    char oldbin[PATH_MAX + 8], err[PATH_MAX + 64];

    if (oldbin_path(oldbin, sizeof(oldbin)) < 0 ||
        daemon_read_pidfile(oldbin, err, sizeof(err)) != getpid())
        return;
    if (rename(oldbin, M.cfg.pid_file) < 0)
        log_error("cannot rename %s back to %s: %s", oldbin, M.cfg.pid_file, strerror(errno));
}

/*
 * USR2: the pidfile becomes PIDFILE.oldbin, and the binary this master was
 * started from runs again as its child, with the same arguments and the
 * listening sockets (upgrade.h).  Refused while another upgrade is under
 * way on either side: two new masters, or a third binary, would leave no
 * master that can take the service back.
 */
static void
start_upgrade(void)
{
    char oldbin[PATH_MAX + 8], err[CONFIG_ERR_LEN];
    pid_t pid;

    if (M.stopping) {
        log_warning("SIGUSR2 ignored: the master is stopping");
        return;
    }
    if (M.new_master) {
        log_warning("SIGUSR2 ignored: the new master (pid %d) of the last upgrade still runs: "
                    "stop it (TERM) to roll back, or this one (WINCH, then TERM) to finish",
                    (int)M.new_master);
        return;
    }
    if (M.old_master && getppid() == M.old_master) {
        log_warning("SIGUSR2 ignored: the old master (pid %d) this one replaced still runs: "
                    "stop it first (TERM)",
                    (int)M.old_master);
        return;
    }
    M.old_master = 0;
    if (oldbin_path(oldbin, sizeof(oldbin)) == 0 && rename(M.cfg.pid_file, oldbin) < 0 &&
        errno != ENOENT) {
        log_error("upgrade refused: cannot rename %s to %s: %s", M.cfg.pid_file, oldbin,
                  strerror(errno));
        return;
    }
    log_notice("upgrade (SIGUSR2): starting %s", upgrade_binary());
    /* A daemon's stderr is /dev/null: the new binary's first words go to the log instead. */
    pid =
        upgrade_exec(&M.ls, &M.status, M.cfg.daemonize && log_fd() > STDERR_FILENO ? log_fd() : -1,
                     err, sizeof(err));
    if (pid < 0) {
        log_error("upgrade failed: %s; this master (pid %d) serves on", err, (int)getpid());
        restore_pidfile();
        return;
    }
    M.new_master = pid;
    /* From here systemd hears from the new master (MAINPID=, once it is ready). */
    notify_mute(&M.notify, 1);
    log_notice("upgrade: new master started, pid %d; this master (pid %d) serves beside it "
               "until SIGWINCH",
               (int)pid, (int)getpid());
}

/* The new master's workers are ready: it says so where the old master and -s upgrade look. */
static void
upgrade_ready(void)
{
    char err[PATH_MAX + 64];

    if (M.cfg.pid_file && daemon_write_pidfile(M.cfg.pid_file, err, sizeof(err)) < 0)
        log_error("upgrade: %s", err);
    log_notice("upgrade: this master (pid %d, conduitd %s) serves; the old master (pid %d) "
               "too, until it gets SIGWINCH (then SIGTERM ends it); to roll back, stop this one",
               (int)getpid(), VERSION, (int)M.old_master);
}

/* The workers WINCH retired start again (HUP, or the new master gone). */
static void
resume_workers(const char *why)
{
    int64_t now = clock_now_ms();

    M.winched = 0;
    M.generation++;
    atomic_store(&M.sb->master.generation, M.generation);
    M.reloading = 1;
    M.resuming = 1;
    M.reload_started_ms = now;
    log_notice("starting %d worker(s) again (%s): generation %d", M.target, why, M.generation);
    spawn_missing(now);
}

/*
 * WINCH: once a new master serves beside this one, this one's workers
 * drain and exit as a reload retires them; the master stays, for a
 * rollback.  Without a new master it would leave nothing serving (and a
 * terminal sends WINCH when resized): ignored then.
 */
static void
retire_for_upgrade(void)
{
    if (!M.new_master) {
        log_info("SIGWINCH ignored: no new master runs (WINCH retires the workers only during "
                 "a binary upgrade, after SIGUSR2)");
        return;
    }
    if (M.winched || M.stopping)
        return;
    M.winched = 1;
    M.reloading = 0;
    M.resuming = 0;
    log_notice("upgrade: retiring %d worker(s) (SIGWINCH): the new master (pid %d) serves; "
               "SIGHUP starts them again, SIGTERM ends this master",
               live_procs(), (int)M.new_master);
    for (int i = 0; i < MAX_PROCS; i++) {
        struct worker_proc *p = &M.procs[i];
        if (p->pid && !p->stopping)
            stop_proc(p, SIGTERM, (int64_t)M.cfg.graceful_timeout * 1000);
    }
}

/* The new master exited: this one takes the service back, whatever the stage. */
static void
upgrade_ended(void)
{
    int st = M.new_master_status;
    char how[96];

    describe_status(st, how, sizeof(how));
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
        log_notice("upgrade: the new master (pid %d) exited (%s): this master (pid %d) keeps "
                   "the service",
                   (int)M.new_master, how, (int)getpid());
    else
        log_error("upgrade failed: the new master (pid %d) ended (%s); its lines above say why; "
                  "this master (pid %d) keeps the service",
                  (int)M.new_master, how, (int)getpid());
    M.new_master = 0;
    M.new_master_exited = 0;
    restore_pidfile();
    notify_mute(&M.notify, 0);
    notify_send(&M.notify, "MAINPID=%d", (int)getpid());
    if (M.winched && !M.stopping)
        resume_workers("the new master is gone");
    else
        send_status(clock_now_ms(), "READY=1\n");
}

/*
 * One pass of the master's loop, in a fixed order (nginx's
 * ngx_master_process_cycle is the model): reap what exited (a new master
 * of an upgrade too), begin a stop, reload (or bring back the workers
 * WINCH retired), add or remove workers, reopen the logs, upgrade (USR2,
 * WINCH), then the tick
 * (judge the exits, heartbeats, respawns, readiness, the service manager).
 * Each step reads the flag its signal set; none runs from inside another,
 * so a reload never forks in the middle of a waitpid() loop, and an exit
 * is judged only after this pass's stop signal has been acted on.
 */
static void
cycle(void)
{
    got_chld = 0;
    reap(); /* every pass: SIGCHLDs coalesce */
    if (M.new_master_exited)
        upgrade_ended();
    if (got_quit) {
        got_quit = 0;
        begin_stop(STOP_FAST);
    }
    if (got_term) {
        got_term = 0;
        begin_stop(STOP_GRACEFUL);
    }
    if (got_hup && M.winched) {
        /* The rollback of an upgrade: the running configuration, as nginx's. */
        got_hup = 0;
        if (!M.stopping)
            resume_workers("SIGHUP: rollback");
    }
    if (got_hup) {
        const char *busy = reload_busy(clock_now_ms());
        got_hup = 0;
        if (!M.stopping && busy && !M.reload_pending)
            log_notice("reload deferred: %s; it follows then", busy);
        M.reload_pending = !M.stopping;
    }
    if (M.reload_pending && !M.stopping && !M.winched && !reload_busy(clock_now_ms())) {
        M.reload_pending = 0;
        reload();
    }
    while (M.ttin_done != ttin_seen) {
        M.ttin_done++;
        if (!M.stopping)
            set_target(M.target + 1);
    }
    while (M.ttou_done != ttou_seen) {
        M.ttou_done++;
        if (!M.stopping && M.target > 1)
            set_target(M.target - 1);
    }
    if (got_usr1) {
        got_usr1 = 0;
        reopen_logs();
    }
    if (got_usr2) {
        got_usr2 = 0;
        start_upgrade();
    }
    if (got_winch) {
        got_winch = 0;
        retire_for_upgrade();
    }
    tick();
}

/* Empties the self-pipe: its bytes only woke the loop. */
static void
drain_wakeups(void)
{
    unsigned char buf[64];

    while (read(M.sigpipe[0], buf, sizeof(buf)) > 0)
        ;
}

/* Raises the descriptor limit as far as allowed; every connection costs one. */
static void
raise_nofile(int max_connections)
{
    struct rlimit rl;

    if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
        return;
    if (rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    getrlimit(RLIMIT_NOFILE, &rl);
    /*
     * A warning only when it costs something: each worker keeps
     * max_connections under its limit (it logs the lowered figure itself),
     * so a limit above max_connections plus the worker's own descriptors is
     * no problem worth a warning at every start.
     */
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < (rlim_t)max_connections + 256)
        log_warning("open file limit is %llu: each worker holds fewer than max_connections %d "
                    "connections (raise it with ulimit -n or LimitNOFILE=)",
                    (unsigned long long)rl.rlim_cur, max_connections);
    else
        log_info("open file limit %llu: room for max_connections %d per worker",
                 (unsigned long long)rl.rlim_cur, max_connections);
}

int
master_init(const struct options *opts, struct config *cfg, pid_t old_master)
{
    char err[CONFIG_ERR_LEN];

    M.opts = opts;
    M.old_master = old_master;
    M.cfg = *cfg; /* the master owns it from here */
    memset(cfg, 0, sizeof(*cfg));
    M.target = config_workers(&M.cfg);
    M.generation = 1;
    M.status.fd = -1;
    log_set_role("master");

    raise_nofile(M.cfg.max_connections);
    if (listen_inherit(err, sizeof(err)) < 0 || listen_open(&M.ls, &M.cfg, err, sizeof(err)) < 0) {
        log_error("%s", err);
        return -1;
    }
    if (listen_open_status(&M.status, M.cfg.status_listen, err, sizeof(err)) < 0) {
        log_error("%s", err);
        listen_close(&M.ls);
        return -1;
    }
    /* A socket passed for an address the configuration does not name serves nobody. */
    if (listen_inherited_unused(err, sizeof(err)) > 0)
        log_warning("sockets passed in LISTEN_FDS that no listen address names, closed: %s", err);
    M.sb = scoreboard_create();
    if (!M.sb) {
        log_error("cannot map the scoreboard: %s", strerror(errno));
        listen_close(&M.ls);
        listen_close_one(&M.status);
        return -1;
    }
    /* Mapped with the cache off too: a reload may turn it on, and cannot map it then. */
    M.zone = cache_zone_create((size_t)M.cfg.cache_size, (size_t)M.cfg.cache_memory << 20);
    if (!M.zone) {
        log_error("cannot map the cache's shared memory (cache_memory %d MB): %s",
                  M.cfg.cache_memory, strerror(errno));
        scoreboard_destroy(M.sb);
        listen_close(&M.ls);
        listen_close_one(&M.status);
        return -1;
    }
    atomic_store(&M.sb->master.generation, M.generation);
    atomic_store(&M.sb->master.workers, M.target);
    return 0;
}

int
master_run(void)
{
    int status = 0;

    proctitle_set("conduitd: master");
    notify_init(&M.notify); /* here, after -d: the watchdog names this pid */
    if (setup_signals() < 0) {
        log_error("cannot set up signal handling: %s", strerror(errno));
        return 1;
    }
    chown_log();
    log_listeners(&M.ls);
    if (M.status.fd >= 0)
        log_notice("status page (/metrics, /status) on %s", M.status.name);
    log_notice("conduitd %s starting %d worker(s)%s", VERSION, M.target,
               M.cfg.reuseport ? ", each with its own SO_REUSEPORT socket" : "");
    if (M.old_master)
        log_notice("upgrade: this master (pid %d) was started by the master pid %d (SIGUSR2)",
                   (int)getpid(), (int)M.old_master);
    log_db_sizing(M.target);

    while (M.stopping == RUNNING || live_procs() > 0 || M.nexits > 0) {
        struct pollfd pfd = {.fd = M.sigpipe[0], .events = POLLIN};

        cycle();
        if (M.fatal && live_procs() == 0 && !M.stopping) {
            log_error("no worker can run with this configuration: exiting");
            status = 1;
            break;
        }
        if (poll(&pfd, 1, next_judgement_ms(clock_now_ms(), TICK_MS)) < 0 && errno != EINTR)
            fatal("poll: %s", strerror(errno));
        drain_wakeups();
    }

    if (!M.started)
        daemon_ready(0);
    log_notice("stopped");
    if (M.stopping == RUNNING) {
        listen_close(&M.ls);
        listen_close_one(&M.status);
    }
    scoreboard_destroy(M.sb);
    cache_zone_destroy(M.zone);
    notify_close(&M.notify);
    close(M.sigpipe[0]);
    close(M.sigpipe[1]);
    config_free(&M.cfg);
    return status;
}
