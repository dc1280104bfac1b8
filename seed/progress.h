/*
 * progress: one line per stage on stderr, with rows done, rate and ETA.
 * On a terminal the line is redrawn in place a few times a second; in a
 * log (not a terminal) a stage prints its final line, plus a line every
 * 30 s while it runs.  Each stage's seconds are kept for the summary.
 */
#ifndef CONDUITD_SEED_PROGRESS_H
#define CONDUITD_SEED_PROGRESS_H

#include <stdint.h>
#include <stdio.h>

#define PROGRESS_MAX_STAGES 24
#define PROGRESS_NAME_MAX 48

struct progress_stage {
    char name[PROGRESS_NAME_MAX];
    int64_t rows; /* -1: a stage without rows */
    double seconds;
};

struct progress {
    FILE *out;
    int tty, quiet;
    double start, stage_start, last_draw;
    int64_t total;
    int n;
    struct progress_stage stages[PROGRESS_MAX_STAGES];
};

/* Seconds on a monotonic clock. */
double progress_now(void);

/* quiet: print nothing (the stages are still timed). */
void progress_init(struct progress *p, FILE *out, int quiet);
/* total: the rows expected, or -1 for a stage that has none. */
void progress_begin(struct progress *p, const char *name, int64_t total);
void progress_update(struct progress *p, int64_t done);
/* Prints the stage's final line and records it; its seconds. */
double progress_end(struct progress *p, int64_t done);

#endif
