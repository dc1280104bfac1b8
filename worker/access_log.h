/*
 * access_log: one line per answered request, as nginx's access_log: the
 * combined format by default (with the request time and the time spent
 * waiting for the database appended, in seconds), or JSON lines.
 *
 * Lines are buffered per worker and written with one write() of whole
 * lines (O_APPEND), at 64 kB, once a second, on a reopen and at exit, so
 * the workers of an instance can share one file and it costs little.
 * Never logged: the Authorization header, cookies, bodies.  Answers that
 * libevent writes itself (an early 413) do not go through the worker and
 * are not logged.
 */
#ifndef CONDUITD_ACCESS_LOG_H
#define CONDUITD_ACCESS_LOG_H

#include <stddef.h>
#include <stdint.h>

struct event_base;
struct evhttp_request;
struct access_log;

/*
 * target: a file path, "syslog", or NULL/"off" (returns NULL, no error);
 * json: JSON lines rather than the combined format.  NULL with err set on
 * failure.
 */
struct access_log *access_log_open(struct event_base *base, const char *target, int json,
                                   int worker_index, char *err, size_t errlen);

/* One line for req, answered with status and body_len bytes. */
void access_log_write(struct access_log *a, struct evhttp_request *req, int status, size_t body_len,
                      int64_t request_us, int64_t db_us);

/* Writes what is buffered, then reopens the file (USR1, after logrotate). */
int access_log_reopen(struct access_log *a);

/* Writes what is buffered and closes.  NULL is fine. */
void access_log_close(struct access_log *a);

#endif
