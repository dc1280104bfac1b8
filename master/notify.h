/*
 * notify: the service manager's readiness protocol (sd_notify(3)), spoken
 * directly: one datagram of "KEY=value" lines to the unix socket named by
 * $NOTIFY_SOCKET (a path, or "@name" for the abstract namespace).  No
 * libsystemd: the protocol is a documented datagram, and conduitd must run
 * the same where there is no systemd at all.  Without $NOTIFY_SOCKET every
 * call does nothing.
 */
#ifndef CONDUITD_NOTIFY_H
#define CONDUITD_NOTIFY_H

#include <stdint.h>

struct notifier {
    int fd; /* -1: no service manager listening */
    char path[108];
    int pathlen;         /* of the address, for an abstract one */
    int64_t watchdog_ms; /* WATCHDOG=1 this often (half of $WATCHDOG_USEC); 0: none */
    int64_t watchdog_sent_ms;
    int muted; /* another process (the new master of an upgrade) speaks for the service */
};

/* Reads $NOTIFY_SOCKET and $WATCHDOG_USEC/$WATCHDOG_PID. */
void notify_init(struct notifier *n);
void notify_close(struct notifier *n);

/* Sends the formatted lines as one datagram; errors are ignored, as sd_notify's are. */
void notify_send(struct notifier *n, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * While muted, notify_send() says nothing (an old master must not tell
 * systemd STOPPING=1 or a STATUS= about a service that its new master now
 * runs); the watchdog still goes, which costs nothing.
 */
void notify_mute(struct notifier *n, int muted);

/* The RELOADING=1 message, with the MONOTONIC_USEC that systemd 253+ wants beside it. */
void notify_reloading(struct notifier *n);

/* WATCHDOG=1 when it is due; call from the master's tick. */
void notify_watchdog(struct notifier *n, int64_t now_ms);

#endif
