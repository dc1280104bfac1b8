/*
 * daemon: see daemon.h.
 */
#include "config.h"

#include "master/daemon.h"

#include "common/log.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int ready_fd = -1;

int
daemon_detach(void)
{
    int p[2];
    if (pipe(p) < 0)
        return -1;
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid > 0) {
        /* The original process: wait for the verdict of the daemon. */
        close(p[1]);
        char verdict = 0;
        ssize_t n;
        do
            n = read(p[0], &verdict, 1);
        while (n < 0 && errno == EINTR);
        _exit(n == 1 && verdict == '1' ? 0 : 1);
    }
    close(p[0]);
    ready_fd = p[1];
    if (setsid() < 0)
        return -1;
    /*
     * A second fork is not needed: the session leader never opens a terminal
     * (all files here are opened with O_NOCTTY semantics by default on Linux
     * for regular files), and systemd tracks the pid file.
     */
    if (chdir("/") < 0)
        return -1;
    int null = open("/dev/null", O_RDWR);
    if (null < 0)
        return -1;
    dup2(null, STDIN_FILENO);
    dup2(null, STDOUT_FILENO);
    /* stderr stays until the log is set up: start-up errors still show. */
    if (null > STDERR_FILENO)
        close(null);
    return 0;
}

int
daemon_stay(void)
{
    return chdir("/");
}

void
daemon_ready(int ok)
{
    /* The verdict is given: from here on errors are the log's alone. */
    log_echo_stderr(0);
    if (ready_fd < 0)
        return;
    char verdict = ok ? '1' : '0';
    ssize_t w = write(ready_fd, &verdict, 1);
    (void)w;
    close(ready_fd);
    ready_fd = -1;
    if (ok) {
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0) {
            dup2(null, STDERR_FILENO);
            close(null);
        }
    }
}

pid_t
daemon_read_pidfile(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    long pid = 0;
    int ok = fscanf(f, "%ld", &pid) == 1 && pid > 1;
    fclose(f);
    if (!ok) {
        snprintf(err, errlen, "%s: no pid in the file", path);
        return -1;
    }
    return (pid_t)pid;
}

int
daemon_write_pidfile(const char *path, char *err, size_t errlen)
{
    char reason[256];
    pid_t old = daemon_read_pidfile(path, reason, sizeof(reason));
    if (old > 0 && old != getpid() && (kill(old, 0) == 0 || errno == EPERM)) {
        snprintf(err, errlen, "%s: conduitd is already running with pid %ld", path, (long)old);
        return -1;
    }
    /* Written to a temporary name and renamed, so a reader never sees half. */
    char tmp[4096];
    if (snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", path, (long)getpid()) >= (int)sizeof(tmp)) {
        snprintf(err, errlen, "%s: path too long", path);
        return -1;
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
        return -1;
    }
    char buf[32];
    int n = snprintf(buf, sizeof(buf), "%ld\n", (long)getpid());
    if (write(fd, buf, (size_t)n) != n || close(fd) < 0 || rename(tmp, path) < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

int
daemon_oldbin_path(const char *path, char *out, size_t outlen)
{
    return snprintf(out, outlen, "%s.oldbin", path) >= (int)outlen ? -1 : 0;
}

void
daemon_remove_pidfile(const char *path)
{
    char reason[256];
    if (path != NULL && daemon_read_pidfile(path, reason, sizeof(reason)) == getpid())
        unlink(path);
}

static int
lookup(const char *user, const char *group, uid_t *uid, gid_t *gid, char *err, size_t errlen)
{
    struct passwd *pw = getpwnam(user);
    if (pw == NULL) {
        snprintf(err, errlen, "user \"%s\" does not exist", user);
        return -1;
    }
    *uid = pw->pw_uid;
    *gid = pw->pw_gid;
    if (group != NULL) {
        struct group *gr = getgrnam(group);
        if (gr == NULL) {
            snprintf(err, errlen, "group \"%s\" does not exist", group);
            return -1;
        }
        *gid = gr->gr_gid;
    }
    return 0;
}

int
daemon_check_user(const char *user, const char *group, char *err, size_t errlen)
{
    uid_t uid;
    gid_t gid;
    if (user == NULL)
        return 0;
    return lookup(user, group, &uid, &gid, err, errlen);
}

int
daemon_drop_privileges(const char *user, const char *group, char *err, size_t errlen)
{
    uid_t uid;
    gid_t gid;
    if (user == NULL)
        return 0;
    if (lookup(user, group, &uid, &gid, err, errlen) < 0)
        return -1;
    if (getuid() == uid && geteuid() == uid && getgid() == gid)
        return 0; /* already that user: nothing to drop */
    /* The order matters: once setuid() has run, setgid() is no longer allowed. */
    if (setgroups(1, &gid) < 0 || setgid(gid) < 0 || setuid(uid) < 0) {
        snprintf(err, errlen, "cannot drop to user %s: %s", user, strerror(errno));
        return -1;
    }
    if (uid != 0 && setuid(0) == 0) {
        snprintf(err, errlen, "privileges were not dropped: setuid(0) still works");
        return -1;
    }
    return 0;
}
