/*
 * reference: the published figures `experiment` draws beside its own
 * (bench/reference/, installed in the data directory): the stacks at
 * 8 vCPU, the 1-to-8-vCPU scaling factor and the instances table, read
 * from their CSV files so the data stays data.
 */
#ifndef CONDUIT_BENCH_REFERENCE_H
#define CONDUIT_BENCH_REFERENCE_H

#include <stddef.h>

#define REFERENCE_MAX 16

struct reference_stack {
    char name[96];
    int vcpu;
    double users, rps, mem_mb; /* 0: not published */
};

struct reference_layout {
    char layout[16];
    int instances, workers, cores;
    double rps;
};

struct reference {
    struct reference_stack stack[REFERENCE_MAX];
    int nstack;
    int scale_from, scale_to; /* vCPU */
    double scale_lo, scale_hi;
    struct reference_layout inst[REFERENCE_MAX];
    int ninst;
};

/*
 * The folder: given (--reference), installed, or the source tree's beside
 * this program's build; out is "" when none holds stacks.csv.
 */
void reference_find(const char *given, char *out, size_t cap);

/* Reads dir's three files; 0, or -1 with the file and the line in err. */
int reference_load(const char *dir, struct reference *r, char *err, size_t errlen);

#endif
