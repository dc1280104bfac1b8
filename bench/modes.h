/*
 * modes: the six things conduit-bench does (see conduit-bench(1)), and
 * the setup they share: the profile, the descriptor limit, the bench
 * context, whom to account for, the JSON header and file.
 */
#ifndef CONDUIT_BENCH_MODES_H
#define CONDUIT_BENCH_MODES_H

#include <cjson/cJSON.h>

#include "bench/bench.h"
#include "bench/options.h"

/* Each returns the process exit status: 0, 1 (a level failed), 2 (error). */
int mode_run(struct options *o);
int mode_search(struct options *o);
int mode_rate(struct options *o);
int mode_compare(struct options *o);
int mode_ceiling(struct options *o);
int mode_experiment(struct options *o);

/* The profile named by --profile, else the installed default. */
struct profile *modes_profile(const struct options *o);
/* Profile, descriptor limit, bench context, accounting roots; 0 or -1. */
int modes_setup(struct options *o, struct profile **prof, struct bench *b);
void modes_account(struct bench *b, const struct options *o);
/*
 * Unless --no-probe, or the profile names nothing seeded: checks that the
 * target of b holds the dataset of --scale and --seed (probe.h); -1 with
 * the reason on stderr.
 */
int modes_probe(const struct options *o, struct bench *b);
/* The postmaster's pid from DIR/postmaster.pid (DIR or DIR/data); 0 if none. */
pid_t modes_pg_pid(const char *dir);
/* The document every report starts with: tool, mode, machine, load, criteria. */
cJSON *modes_json_header(const struct options *o, const struct bench *b);
/*
 * "totals": requests, responses, connects and probe requests since the
 * start, in every generator process: what a test compares with the
 * server's own count.
 */
void modes_json_totals(cJSON *root, const struct bench *b);
/* Writes the report where --json or --out says; prints the path. */
int modes_write_json(const struct options *o, cJSON *root, char *path, size_t cap);
/*
 * The end every mode shares: writes and frees root, frees the bench and
 * the profile.  Returns rc, or 2 when the report could not be written.
 */
int modes_finish(const struct options *o, cJSON *root, struct bench *b, struct profile *prof,
                 int rc);

#endif
