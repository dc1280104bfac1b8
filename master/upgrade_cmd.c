/*
 * upgrade_cmd: see upgrade_cmd.h.  It runs on the same host as the
 * masters and reads /proc for their children (the old master's workers).
 */
#include "config.h"

#include "master/upgrade_cmd.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "master/daemon.h"

#define POLL_MS 100
#define ACT_WAIT_S 5    /* for the old master to act on USR2 */
#define START_WAIT_S 60 /* for the new master's workers to be ready */
#define EXIT_WAIT_S 10  /* for a master with no worker left to exit */
#define MAX_CHILDREN 1100

static void __attribute__((format(printf, 1, 2))) say(const char *fmt, ...)
{
    va_list ap;

    fputs("conduitd: upgrade: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static void
pause_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

    nanosleep(&ts, NULL);
}

/* Running, and not a zombie waiting for its parent. */
static int
alive(pid_t pid)
{
    char path[64], line[512], *p;
    FILE *f;
    int live;

    if (pid <= 0 || (kill(pid, 0) < 0 && errno != EPERM))
        return 0;
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    if (!(f = fopen(path, "r")))
        return 0;
    live = fgets(line, sizeof(line), f) && (p = strrchr(line, ')')) && p[1] && p[2] != 'Z';
    fclose(f);
    return live;
}

/* The pid a pidfile names, or 0. */
static pid_t
pid_in(const char *path)
{
    char err[PATH_MAX + 64];
    pid_t pid = daemon_read_pidfile(path, err, sizeof(err));

    return pid > 0 ? pid : 0;
}

/* A worker: its title says so (proctitle.h). */
static int
is_worker(pid_t pid)
{
    char path[64], title[32] = "";
    FILE *f;

    snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
    if (!(f = fopen(path, "r")))
        return 0;
    if (!fgets(title, sizeof(title), f))
        title[0] = '\0';
    fclose(f);
    return strncmp(title, "conduitd: worker", 16) == 0;
}

/* The children of pid, workers (want_workers) or not, into out; how many. */
static int
children(pid_t pid, int want_workers, pid_t *out, int max)
{
    char path[64];
    FILE *f;
    long c;
    int n = 0;

    snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)pid);
    if (!(f = fopen(path, "r")))
        return 0;
    while (n < max && fscanf(f, "%ld", &c) == 1)
        if (is_worker((pid_t)c) == want_workers)
            out[n++] = (pid_t)c;
    fclose(f);
    return n;
}

static int
workers_of(pid_t pid)
{
    pid_t w[MAX_CHILDREN];

    return children(pid, 1, w, MAX_CHILDREN);
}

/* Waits until the pidfile names pid again (the old master took it back). */
static int
wait_pidfile(const char *pid_file, pid_t pid, int seconds)
{
    int64_t until = clock_now_ms() + (int64_t)seconds * 1000;

    while (pid_in(pid_file) != pid) {
        if (clock_now_ms() > until || !alive(pid))
            return -1;
        pause_ms(POLL_MS);
    }
    return 0;
}

/*
 * Undoes what was done: HUP brings back the old master's workers (when
 * WINCH had retired them), then TERM ends the new master (new 0: every
 * child of the old master that is not a worker, the new master that never
 * wrote the pidfile), and the old master, which sees it go, takes the
 * pidfile back.
 */
static int
roll_back(const struct config *c, pid_t old, pid_t new, int winched)
{
    pid_t others[MAX_CHILDREN];
    int64_t until = clock_now_ms() + (int64_t)START_WAIT_S * 1000;
    int n = 0;

    if (winched) {
        say("SIGHUP to the old master (pid %d): its workers start again", (int)old);
        kill(old, SIGHUP);
        while (workers_of(old) == 0 && clock_now_ms() < until)
            pause_ms(POLL_MS);
    }
    if (new)
        others[n++] = new;
    else
        n = children(old, 0, others, MAX_CHILDREN);
    for (int i = 0; i < n; i++) {
        say("SIGTERM to the new master (pid %d)", (int)others[i]);
        kill(others[i], SIGTERM);
    }
    if (wait_pidfile(c->pid_file, old, c->graceful_timeout + EXIT_WAIT_S) < 0) {
        say("rolled back, but %s does not name the old master (pid %d) yet: see the log",
            c->pid_file, (int)old);
        return 1;
    }
    say("rolled back: the old master (pid %d) serves, as before", (int)old);
    return 1;
}

/* Step 1: USR2, then the new master's pid once its workers are ready; 0 when none came. */
static pid_t
start_new(const struct config *c, pid_t old, const char *oldbin)
{
    int64_t t0 = clock_now_ms();
    int acted = 0;

    say("SIGUSR2 to the master (pid %d): it starts the binary again", (int)old);
    if (kill(old, SIGUSR2) < 0) {
        say("cannot signal pid %d: %s", (int)old, strerror(errno));
        return 0;
    }
    for (;;) {
        pid_t cur = pid_in(c->pid_file);
        int64_t waited = clock_now_ms() - t0;

        acted |= pid_in(oldbin) == old;
        if (cur > 0 && cur != old && alive(cur))
            return cur;
        if (!alive(old)) {
            say("the master (pid %d) is gone", (int)old);
            return 0;
        }
        if (cur == old && (acted || waited > ACT_WAIT_S * 1000)) {
            say("no new master took over: the new binary did not start, or the master refused "
                "the upgrade; the master (pid %d) serves on, and its log says why",
                (int)old);
            return 0;
        }
        if (waited > START_WAIT_S * 1000) {
            say("the new master's workers were not ready after %d s", START_WAIT_S);
            roll_back(c, old, 0, 0);
            return 0;
        }
        pause_ms(POLL_MS);
    }
}

int
upgrade_command(const struct config *c)
{
    char oldbin[PATH_MAX + 8];
    pid_t old, new, older;
    int64_t until;

    if (!c->pid_file) {
        fprintf(stderr, "conduitd: -s upgrade needs the pid file: give --pid FILE or pid_file\n");
        return 1;
    }
    if (daemon_oldbin_path(c->pid_file, oldbin, sizeof(oldbin)) < 0) {
        fprintf(stderr, "conduitd: %s: path too long\n", c->pid_file);
        return 1;
    }
    old = pid_in(c->pid_file);
    if (!alive(old)) {
        fprintf(stderr, "conduitd: %s: %s\n", c->pid_file,
                old ? "names a process that is not running"
                    : "no pid in it (is conduitd running?)");
        return 1;
    }
    older = pid_in(oldbin);
    if (alive(older)) {
        say("an upgrade is under way already: %s names the old master (pid %d), still running; "
            "finish it (WINCH, then TERM to it) or roll it back (TERM to pid %d) first",
            oldbin, (int)older, (int)old);
        return 1;
    }

    new = start_new(c, old, oldbin);
    if (!new)
        return 1;
    say("the new master (pid %d) serves with all its workers ready", (int)new);

    say("SIGWINCH to the old master (pid %d): its workers drain", (int)old);
    kill(old, SIGWINCH);
    until = clock_now_ms() + (int64_t)(c->graceful_timeout + EXIT_WAIT_S) * 1000;
    while (workers_of(old) > 0) {
        if (!alive(new)) {
            say("the new master (pid %d) exited: the old master (pid %d) starts its workers "
                "again and keeps the service; its log says why",
                (int)new, (int)old);
            return 1;
        }
        if (clock_now_ms() > until) {
            say("the old master's workers did not exit within %d s",
                c->graceful_timeout + EXIT_WAIT_S);
            return roll_back(c, old, new, 1);
        }
        pause_ms(POLL_MS);
    }
    if (!alive(new)) {
        say("the new master (pid %d) exited: the old master (pid %d) keeps the service", (int)new,
            (int)old);
        return 1;
    }

    say("SIGTERM to the old master (pid %d): no worker left, it exits", (int)old);
    kill(old, SIGTERM);
    until = clock_now_ms() + (int64_t)EXIT_WAIT_S * 1000;
    while (alive(old) && clock_now_ms() < until)
        pause_ms(POLL_MS);
    if (alive(old)) {
        say("the old master (pid %d) did not exit within %d s; the new one (pid %d) serves",
            (int)old, EXIT_WAIT_S, (int)new);
        return 1;
    }
    say("done: the new master (pid %d) serves alone", (int)new);
    return 0;
}
