/*
 * report: a level (or an open-loop run) as text for a person and as JSON
 * for comparing and plotting, and the machine it ran on.  Every run writes
 * one JSON file; report_write puts it in place atomically.
 */
#ifndef CONDUIT_BENCH_REPORT_H
#define CONDUIT_BENCH_REPORT_H

#include <cjson/cJSON.h>
#include <stdio.h>

#include "bench/bench.h"

void report_level_text(FILE *f, const struct level *l, const struct profile *p);
cJSON *report_level_json(const struct level *l, const struct profile *p);
cJSON *report_criteria_json(const struct criteria *c);

/*
 * nproc, CPU model, kernel, and the 1-minute load average when the run
 * began (read by bench_init, before any level) and now, at its end.
 */
cJSON *report_machine_json(const struct bench *b);
/* "2 cores (AMD EPYC), Linux 6.1.0": the machine in one line. */
void report_machine_line(char *out, size_t cap);
void report_machine_text(FILE *f, const struct bench *b);

/* Writes root to path (path.tmp, then rename); 0 or -1 with errno. */
int report_write(const char *path, cJSON *root);

/* "DIR/conduit-bench-MODE-YYYYmmdd-HHMMSS.json" */
void report_default_path(char *out, size_t cap, const char *dir, const char *mode);

#endif
