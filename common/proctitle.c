/*
 * proctitle: see proctitle.h.
 */
#include "config.h"

#include "common/proctitle.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

extern char **environ;

static char *title_area;
static size_t title_len;
/*
 * The copy of the environment, owned here for the life of the process.
 * environ alone did not keep it reachable (under valgrind the copy was
 * reported definitely lost in the master and in every worker: environ no
 * longer pointed at it by exit), and a pointer that is only ever written
 * would be optimised away: hence volatile.
 */
static char **volatile env_copy;
/*
 * Every string of the copy, apart from environ: unsetenv() takes an entry
 * out of environ (LISTEN_FDS and its kin, common/listen.c), and the string
 * it named would be lost (LeakSanitizer saw it) were it held there alone.
 */
static char **volatile env_strings;

void
proctitle_init(int argc, char **argv)
{
    if (argc < 1 || argv[0] == NULL)
        return;
    /* The area runs over argv and environ while they are contiguous. */
    char *end = argv[0] + strlen(argv[0]) + 1;
    for (int i = 1; i < argc; i++)
        if (argv[i] == end)
            end = argv[i] + strlen(argv[i]) + 1;
    size_t nenv = 0;
    for (; environ[nenv] != NULL; nenv++)
        if (environ[nenv] == end)
            end = environ[nenv] + strlen(environ[nenv]) + 1;

    /* Move environ out of the way; on failure keep the short argv[0] area. */
    char **copy = calloc(2 * (nenv + 1), sizeof(char *));
    if (copy != NULL) {
        for (size_t i = 0; i < nenv; i++)
            if ((copy[i] = strdup(environ[i])) == NULL) {
                /* leave environ as it was; the title stays short */
                while (i > 0)
                    free(copy[--i]);
                free(copy);
                return;
            }
        memcpy(copy + nenv + 1, copy, nenv * sizeof(char *));
        env_strings = copy + nenv + 1;
        environ = env_copy = copy;
    } else {
        end = argv[0] + strlen(argv[0]) + 1;
    }
    title_area = argv[0];
    title_len = (size_t)(end - argv[0]);
    for (int i = 1; i < argc; i++)
        argv[i] = NULL;
}

void
proctitle_set(const char *fmt, ...)
{
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);

    /* The thread name (ps -L, top) takes 15 bytes. */
    char comm[16] = {0};
    memcpy(comm, buf, strnlen(buf, sizeof(comm) - 1));
    prctl(PR_SET_NAME, comm, 0, 0, 0);

    if (title_area == NULL || title_len < 2)
        return;
    size_t n = strlen(buf);
    if (n > title_len - 1)
        n = title_len - 1;
    memcpy(title_area, buf, n);
    memset(title_area + n, '\0', title_len - n);
}
