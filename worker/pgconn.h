/*
 * pgconn: one asynchronous libpq connection's life, for db.c's pools and
 * cache_sync.c's listener.  It connects (PQconnectStartParams, then
 * PQconnectPoll driven by a libevent event on the socket), gives each
 * attempt at a host a timeout and then moves on to the next host of the
 * connection string, and after a failed attempt tries again with a
 * doubling backoff.  Once connected, the owner sends and reads on the
 * PGconn and asks pgconn_watch() for the socket events it needs.
 *
 * Why a module: libpq changes the socket between PQconnectPoll steps when
 * it moves to the next host or address of a list, and the new socket may
 * get the old one's descriptor number.  An event left on that number
 * watches a socket the kernel already forgot (closing a descriptor takes
 * it out of epoll), so the connection waits forever.  Every step here
 * looks at the socket again (its number and its inode) and re-makes the
 * event when it changed.  And libpq applies connect_timeout only to
 * blocking connections, so a host that accepts and never answers (or a
 * dead machine that drops the SYN) would hold the connection forever
 * without the timer here (docs/design.md, "libpq, asynchronous").
 *
 * Ownership: the pgconn owns the PGconn, its event and its timers.  The
 * owner's callbacks run from the loop; on a failure the owner does its
 * own cleanup and then calls pgconn_retry(), which closes the PGconn.
 */
#ifndef CONDUITD_PGCONN_H
#define CONDUITD_PGCONN_H

#include <stddef.h>

#include <libpq-fe.h>

struct event_base;
struct pgconn;

/* The default time an attempt at one host may take (connect_timeout unset). */
#define PGCONN_TIMEOUT_DEFAULT_MS 5000

struct pgconn_conf {
    const char *conninfo;      /* key=value or URI; may name several hosts */
    const char *session_attrs; /* target_session_attrs unless conninfo says; NULL: libpq's */
    const char *appname;       /* fallback_application_name */
    const char *options;       /* libpq "options", overriding conninfo's; NULL: none */
    int backoff_min_ms;        /* the first wait after a failure, doubled up to ... */
    int backoff_max_ms;
};

struct pgconn_ops {
    /* Connected (PQconnectPoll said OK): the PGconn is ready for commands. */
    void (*up)(void *arg);
    /* The socket is ready (EV_READ and/or EV_WRITE) while connected. */
    void (*io)(void *arg, short what);
    /*
     * An attempt failed (every host refused, timed out or was the wrong
     * kind): why is one line.  The owner calls pgconn_retry().
     */
    void (*failed)(void *arg, const char *why);
};

/*
 * A connection that does not connect yet.  conf's strings are copied.
 * NULL when out of memory, or when conninfo does not parse (why then says
 * so, in a buffer of whylen bytes).
 */
struct pgconn *pgconn_new(struct event_base *base, const struct pgconn_conf *conf,
                          const struct pgconn_ops *ops, void *arg, char *why, size_t whylen);
void pgconn_free(struct pgconn *pc);

/* Starts an attempt now (ops->failed may run before it returns). */
void pgconn_start(struct pgconn *pc);

/*
 * Closes the connection (if open) and starts again after ms, or after the
 * next step of the backoff when ms is 0.
 */
void pgconn_retry(struct pgconn *pc, int ms);

/* The connection proved usable: the next failure waits the least again. */
void pgconn_reset_backoff(struct pgconn *pc);

/* Watches the socket for what (EV_READ, EV_WRITE) while connected: 0 or -1. */
int pgconn_watch(struct pgconn *pc, short what);

/* The connection, NULL unless connected. */
PGconn *pgconn_pg(const struct pgconn *pc);

/* "host:port" of the server reached (or being tried), for the log. */
const char *pgconn_where(const struct pgconn *pc);

/* PQerrorMessage's lines on one line ("; " between them), in buf. */
const char *pgconn_error(PGconn *pg, char *buf, size_t len);

/* The time one attempt at a host may take, in ms (0: no limit). */
int pgconn_timeout_ms(const struct pgconn *pc);

#endif
