/*
 * search: the capacity of a configuration (docs/workload.md, "Passing"): the
 * largest number of users whose level passes.  Levels grow by a factor
 * from --start until one fails; a failing level is played again, and only
 * a second failure counts (a fluke does not end the search); then the
 * interval between the best pass and the first confirmed fail is bisected
 * until it is within the resolution (5 %).  Finally the best pass is
 * played once more, so both bounds were seen twice before they are
 * reported.  A level others disturbed (--disturbed-other) is played
 * again after --disturbed-pause, once.  Users stay connected from one level to the next: going up
 * ramps in the new ones, going down lets the extra ones leave.
 *
 * Ownership: the result owns its levels (search_free).
 */
#ifndef CONDUIT_BENCH_SEARCH_H
#define CONDUIT_BENCH_SEARCH_H

#include <cjson/cJSON.h>

#include "bench/bench.h"
#include "bench/options.h"

#define SEARCH_MAX_LEVELS 64

struct search_result {
    struct level level[SEARCH_MAX_LEVELS];
    int nlevels;
    int best;             /* index of the best pass's last play, or -1 */
    int fail;             /* index of the first confirmed fail's last play, or -1 */
    int users_pass;       /* 0 when nothing passed */
    int users_fail;       /* 0 when nothing failed up to --max-users */
    const char *stopped;  /* why the search ended */
    int disturbed_levels; /* plays others disturbed (bench.h's level.disturbed) */
    int disturbed;        /* one stayed disturbed when played again */
    int pin_stray;        /* levels where a thread ran outside its cores */
    char pin_what[160];   /* the first such thread */
};

int search_run(struct bench *b, const struct options *o, struct search_result *r);
void search_free(struct search_result *r);

/* One line per level played, for the final report. */
void search_print(FILE *f, const struct search_result *r);
cJSON *search_json(const struct search_result *r, const struct profile *p);

#endif
