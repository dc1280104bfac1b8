/*
 * reference: see reference.h.
 */
#include "config.h"

#include "bench/reference.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef DATADIR
#define DATADIR "/usr/local/share/conduitd"
#endif

void
reference_find(const char *given, char *out, size_t cap)
{
    char exe[2048], path[4200];
    ssize_t n;

    if (given) {
        snprintf(out, cap, "%s", given);
        return;
    }
    snprintf(out, cap, "%s/reference", DATADIR);
    snprintf(path, sizeof(path), "%s/stacks.csv", out);
    if (access(path, R_OK) == 0)
        return;
    out[0] = '\0';
    n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n <= 0)
        return;
    exe[n] = '\0';
    *strrchr(exe, '/') = '\0';
    snprintf(path, sizeof(path), "%s/../bench/reference/stacks.csv", exe);
    if (access(path, R_OK) == 0)
        snprintf(out, cap, "%s/../bench/reference", exe);
}

/* Splits line at commas into at most max fields (empty ones kept). */
static int
split(char *line, char **field, int max)
{
    int n = 0;

    line[strcspn(line, "\r\n")] = '\0';
    while (n < max) {
        field[n++] = line;
        if (!(line = strchr(line, ',')))
            break;
        *line++ = '\0';
    }
    return n;
}

static double
num(const char *s)
{
    return *s ? strtod(s, NULL) : 0;
}

/*
 * Each data line of DIR/NAME (comments and the column line skipped) to
 * row(), which returns -1 on a line it cannot use.
 */
static int
each_line(const char *dir, const char *name, int want, struct reference *r,
          int (*row)(struct reference *r, char **f), char *err, size_t errlen)
{
    char path[4200], line[512];
    FILE *f;
    int lineno = 0, header = 1;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    if (!(f = fopen(path, "r"))) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    while (fgets(line, sizeof(line), f)) {
        char *field[8];

        lineno++;
        if (line[0] == '#' || line[0] == '\n')
            continue;
        if (header) {
            header = 0;
            continue;
        }
        if (split(line, field, 8) != want || row(r, field) < 0) {
            snprintf(err, errlen, "%s:%d: want %d fields of the kind the first line names", path,
                     lineno, want);
            fclose(f);
            return -1;
        }
    }
    fclose(f);
    return 0;
}

static int
stack_row(struct reference *r, char **f)
{
    struct reference_stack *s = &r->stack[r->nstack];

    if (r->nstack == REFERENCE_MAX || (s->vcpu = atoi(f[1])) < 1 || num(f[2]) <= 0)
        return -1;
    snprintf(s->name, sizeof(s->name), "%s", f[0]);
    s->users = num(f[2]);
    s->rps = num(f[3]);
    s->mem_mb = num(f[4]);
    r->nstack++;
    return 0;
}

static int
scaling_row(struct reference *r, char **f)
{
    r->scale_from = atoi(f[0]);
    r->scale_to = atoi(f[1]);
    r->scale_lo = num(f[2]);
    r->scale_hi = num(f[3]);
    return r->scale_from > 0 && r->scale_to > r->scale_from && r->scale_lo > 0 &&
                   r->scale_hi >= r->scale_lo
               ? 0
               : -1;
}

static int
layout_row(struct reference *r, char **f)
{
    struct reference_layout *l = &r->inst[r->ninst];

    if (r->ninst == REFERENCE_MAX)
        return -1;
    snprintf(l->layout, sizeof(l->layout), "%s", f[0]);
    l->instances = atoi(f[1]);
    l->workers = atoi(f[2]);
    l->cores = atoi(f[3]);
    l->rps = num(f[4]);
    r->ninst++;
    return l->instances > 0 && l->rps > 0 ? 0 : -1;
}

int
reference_load(const char *dir, struct reference *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof(*r));
    if (each_line(dir, "stacks.csv", 5, r, stack_row, err, errlen) < 0 ||
        each_line(dir, "scaling.csv", 4, r, scaling_row, err, errlen) < 0 ||
        each_line(dir, "instances.csv", 5, r, layout_row, err, errlen) < 0)
        return -1;
    return 0;
}
