/*
 * proctitle: what ps shows for each process ("conduitd: master",
 * "conduitd: worker 3").  Linux has no setproctitle(3), so, as nginx and
 * PostgreSQL do, the argv area is reused after moving environ out of it.
 * proctitle_init() must run after every use of argv's strings.
 */
#ifndef CONDUITD_PROCTITLE_H
#define CONDUITD_PROCTITLE_H

void proctitle_init(int argc, char **argv);
void proctitle_set(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
