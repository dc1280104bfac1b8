/*
 * notify: see notify.h.
 */
#include "config.h"

#include "master/notify.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"

void
notify_init(struct notifier *n)
{
    const char *sock = getenv("NOTIFY_SOCKET");
    const char *wd = getenv("WATCHDOG_USEC"), *wdpid = getenv("WATCHDOG_PID");
    size_t len;

    memset(n, 0, sizeof(*n));
    n->fd = -1;
    if (!sock || (sock[0] != '/' && sock[0] != '@'))
        return;
    len = strlen(sock);
    if (len >= sizeof(n->path)) {
        log_warning("NOTIFY_SOCKET is too long (%zu bytes): not telling the service manager", len);
        return;
    }
    memcpy(n->path, sock, len);
    if (n->path[0] == '@')
        n->path[0] = '\0'; /* the abstract namespace: no NUL at the end, length counts */
    n->pathlen = (int)len;
    n->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (n->fd < 0) {
        log_warning("cannot open a socket to the service manager: %s", strerror(errno));
        return;
    }
    /* The watchdog is ours only when it names this process (or no process). */
    if (wd && (!wdpid || atol(wdpid) == (long)getpid())) {
        long long usec = atoll(wd);
        if (usec > 0)
            n->watchdog_ms = usec / 2000 > 0 ? usec / 2000 : 1;
    }
}

void
notify_close(struct notifier *n)
{
    if (n->fd >= 0)
        close(n->fd);
    n->fd = -1;
}

void
notify_mute(struct notifier *n, int muted)
{
    n->muted = muted;
}

static void
send_message(struct notifier *n, const char *msg, size_t len)
{
    struct sockaddr_un sa;

    if (n->fd < 0)
        return;
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    memcpy(sa.sun_path, n->path, (size_t)n->pathlen);
    if (sendto(n->fd, msg, len, MSG_NOSIGNAL, (struct sockaddr *)&sa,
               (socklen_t)(offsetof(struct sockaddr_un, sun_path) + (size_t)n->pathlen)) < 0)
        log_debug("cannot notify the service manager: %s", strerror(errno));
}

void
notify_send(struct notifier *n, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    int len;

    if (n->fd < 0 || n->muted)
        return;
    va_start(ap, fmt);
    len = vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (len < 0 || (size_t)len >= sizeof(msg))
        return;
    send_message(n, msg, (size_t)len);
}

void
notify_reloading(struct notifier *n)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    notify_send(n, "RELOADING=1\nMONOTONIC_USEC=%llu\nSTATUS=reloading the configuration",
                (unsigned long long)ts.tv_sec * 1000000ULL + (unsigned long long)ts.tv_nsec / 1000);
}

void
notify_watchdog(struct notifier *n, int64_t now_ms)
{
    if (n->fd < 0 || !n->watchdog_ms || now_ms - n->watchdog_sent_ms < n->watchdog_ms)
        return;
    n->watchdog_sent_ms = now_ms;
    send_message(n, "WATCHDOG=1", strlen("WATCHDOG=1"));
}
