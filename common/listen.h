/*
 * listen: the listening sockets (master and worker both use this), bound by the master before it
 * forks and before any privilege is dropped.
 *
 * Shared mode: the master binds and listens; every worker accepts on the
 * inherited descriptor.  Reuseport mode: the master binds with SO_REUSEPORT
 * but does not listen (that only reserves the port and resolves port 0);
 * each worker opens its own listening socket on the same address, and the
 * kernel spreads connections between them.
 *
 * Inherited sockets (systemd's socket activation: LISTEN_PID, LISTEN_FDS
 * and LISTEN_FDNAMES, descriptors from 3 on, as sd_listen_fds() reads
 * them): a configured address that one of them is bound to takes that
 * socket instead of binding its own, so the port stays open while the
 * server restarts (connections wait in its backlog) and may be below 1024
 * without root.  Shared mode only, except at a binary upgrade: the old
 * master passes its sockets the same way (listen_pass), a reuseport one
 * its reservations.
 */
#ifndef CONDUITD_LISTEN_H
#define CONDUITD_LISTEN_H

#include <sys/socket.h>

#include "common/settings.h"

struct listener {
    char *spec;                   /* as configured: "127.0.0.1:0" */
    char name[64];                /* as bound: "127.0.0.1:41235" */
    struct sockaddr_storage addr; /* as bound, port resolved */
    socklen_t addrlen;
    int fd;
    int inherited; /* the socket came from LISTEN_FDS */
};

struct listener_set {
    int n;
    int reuseport;
    struct listener l[CONFIG_MAX_LISTEN];
};

#define LISTEN_BACKLOG 4096

/*
 * The LISTEN_FDNAMES a master gives the sockets it passes at an upgrade
 * (listen_pass): an address configured with port 0 takes the socket of its
 * role (see take_inherited in listen.c).
 */
#define LISTEN_NAME_HTTP "listen"
#define LISTEN_NAME_STATUS "status"

/*
 * Takes the sockets passed in LISTEN_FDS when LISTEN_PID is this process
 * (and unsets the three variables, so that no child takes them again),
 * for listen_open() and listen_open_status() to use.  Returns how many, or
 * -1 with err saying why (a variable that does not parse).  Once, before
 * the first listen_open().
 */
int listen_inherit(char *err, size_t errlen);

/*
 * The inherited sockets no address of the configuration took: closed, and
 * how many (their names in names, comma-separated, for the log).
 */
int listen_inherited_unused(char *names, size_t len);

/*
 * In a child about to exec a new master (a binary upgrade): puts the
 * sockets of ls and status (NULL or fd -1: none) at descriptors 3, 4, ...
 * without FD_CLOEXEC, and sets LISTEN_FDS, LISTEN_FDNAMES and LISTEN_PID
 * (this process) for listen_inherit() in the new binary: the same path as
 * systemd's socket activation.  A reuseport set passes its reservations
 * (bound, not listening), which the new master's workers share.  How many
 * sockets, or -1 (errno).
 */
int listen_pass(const struct listener_set *ls, const struct listener *status);

/* Binds every address of c; on failure closes what it opened, err says why. */
int listen_open(struct listener_set *ls, const struct config *c, char *err, size_t errlen);
void listen_close(struct listener_set *ls);

/*
 * The status listener (status_listen): one address, always listening in
 * the master (reuseport or not), since scrapes are few.  spec NULL or
 * "off" leaves l->fd at -1.  Returns 0, or -1 with err naming the key.
 */
int listen_open_status(struct listener *l, const char *spec, char *err, size_t errlen);
void listen_close_one(struct listener *l);

/* Does the set already match what c asks for? (then a reload keeps it) */
int listen_same(const struct listener_set *ls, const struct config *c);

/* In a worker, reuseport mode: a new listening socket on l's address. */
int listen_reuseport_socket(const struct listener *l);

#endif
