/*
 * upgrade: see upgrade.h.
 */
#include "config.h"

#include "master/upgrade.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define UPGRADE_ENV "CONDUITD_UPGRADE_FROM"

/* How this process was started: kept for the whole life of the master. */
static struct {
    char **argv;
    char cwd[PATH_MAX];
    char binary[PATH_MAX];
} U;

int
upgrade_init(int argc, char **argv)
{
    ssize_t n;

    U.argv = calloc((size_t)argc + 1, sizeof(char *));
    if (!U.argv)
        return -1;
    for (int i = 0; i < argc; i++)
        if (!(U.argv[i] = strdup(argv[i])))
            return -1;
    if (!getcwd(U.cwd, sizeof(U.cwd)))
        snprintf(U.cwd, sizeof(U.cwd), "/");
    /*
     * The path it was started by, not the file it resolves to: a release
     * installed as a new file at that path (or a symlink moved to a new
     * release) is what the next upgrade runs.
     */
    if (argc > 0 && strchr(argv[0], '/')) {
        if (argv[0][0] == '/')
            snprintf(U.binary, sizeof(U.binary), "%s", argv[0]);
        else if (snprintf(U.binary, sizeof(U.binary), "%s/%s", U.cwd, argv[0]) >=
                 (int)sizeof(U.binary))
            return -1;
        return 0;
    }
    n = readlink("/proc/self/exe", U.binary, sizeof(U.binary) - 1);
    if (n < 0)
        return -1;
    U.binary[n] = '\0';
    return 0;
}

const char *
upgrade_binary(void)
{
    return U.binary;
}

pid_t
upgrade_from(void)
{
    const char *v = getenv(UPGRADE_ENV);
    long pid = v ? atol(v) : 0;

    unsetenv(UPGRADE_ENV);
    return pid > 1 && pid == (long)getppid() ? (pid_t)pid : 0;
}

/* The watchdog follows the new master when it was this one's. */
static void
pass_watchdog(pid_t old)
{
    const char *wd = getenv("WATCHDOG_PID");
    char num[32];

    if (!wd || atol(wd) != (long)old)
        return;
    snprintf(num, sizeof(num), "%ld", (long)getpid());
    setenv("WATCHDOG_PID", num, 1);
}

/*
 * In the child: the sockets, the environment, the folder the arguments
 * are relative to, then the exec.  On failure its errno goes up the
 * report pipe (closed by a successful exec) and the child exits.
 */
static void
child(const struct listener_set *ls, const struct listener *status, int stderr_fd, pid_t old,
      int report, const sigset_t *mask)
{
    char num[32];
    int e;

    snprintf(num, sizeof(num), "%ld", (long)old);
    /* First: listen_pass() may put a socket where stderr_fd was. */
    if (stderr_fd >= 0 && dup2(stderr_fd, STDERR_FILENO) < 0)
        goto fail;
    if (listen_pass(ls, status) < 0 || setenv(UPGRADE_ENV, num, 1) < 0)
        goto fail;
    pass_watchdog(old);
    /* The start folder, which relative arguments name; gone, "/" (and the new binary says so). */
    if (chdir(U.cwd) < 0 && chdir("/") < 0)
        goto fail;
    /* The master's handlers are gone with the exec; its mask must not stay. */
    for (int s = 1; s < NSIG; s++)
        signal(s, SIG_DFL);
    signal(SIGPIPE, SIG_IGN);
    sigprocmask(SIG_SETMASK, mask, NULL);
    execv(U.binary, U.argv);
fail:
    e = errno;
    if (write(report, &e, sizeof(e)) < 0)
        _exit(127);
    _exit(127);
}

pid_t
upgrade_exec(const struct listener_set *ls, const struct listener *status, int stderr_fd, char *err,
             size_t errlen)
{
    int p[2], e = 0, hi;
    sigset_t all, old;
    pid_t pid, self = getpid();
    ssize_t n;

    if (!U.argv) {
        snprintf(err, errlen, "how the master was started is not known");
        return -1;
    }
    if (pipe2(p, O_CLOEXEC) < 0) {
        snprintf(err, errlen, "pipe: %s", strerror(errno));
        return -1;
    }
    /* Above the descriptors listen_pass() fills, so that it cannot land on them. */
    hi = fcntl(p[1], F_DUPFD_CLOEXEC, 3 + 2 * CONFIG_MAX_LISTEN + 2);
    close(p[1]);
    if (hi < 0) {
        snprintf(err, errlen, "fcntl: %s", strerror(errno));
        close(p[0]);
        return -1;
    }
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, &old);
    pid = fork();
    if (pid == 0)
        child(ls, status, stderr_fd, self, hi, &old);
    sigprocmask(SIG_SETMASK, &old, NULL);
    close(hi);
    if (pid < 0) {
        snprintf(err, errlen, "fork: %s", strerror(errno));
        close(p[0]);
        return -1;
    }
    do
        n = read(p[0], &e, sizeof(e));
    while (n < 0 && errno == EINTR);
    close(p[0]);
    if (n == (ssize_t)sizeof(e)) {
        /* The child exits right after it wrote: reaped here, it never reaches the loop's reap. */
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
            ;
        snprintf(err, errlen, "cannot execute %s: %s", U.binary, strerror(e));
        return -1;
    }
    return pid;
}
