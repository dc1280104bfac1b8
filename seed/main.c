/*
 * conduit-seed: loads the reference dataset (see seed/load.h for how, and
 * common/dataset.h for the names it loads), or lists the seeded names.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "common/dataset.h"
#include "seed/load.h"
#include "seed/options.h"

/*
 * --list: one line a row, tab-separated, computed from (scale, seed) alone:
 * "id username email", "id slug title" or "id tag".
 */
static int
list(const struct seed_options *o)
{
    struct dataset d;
    char a[DATASET_TITLE_MAX], b[DATASET_SLUG_MAX];

    if (dataset_init(&d, o->scale, o->seed) < 0)
        return SEED_EXIT_USAGE;
    if (strcmp(o->list, "users") == 0) {
        for (int64_t i = 1; i <= d.users; i++) {
            dataset_username(&d, i, a, sizeof(a));
            dataset_email(&d, i, b, sizeof(b));
            printf("%lld\t%s\t%s\n", (long long)i, a, b);
        }
    } else if (strcmp(o->list, "articles") == 0) {
        for (int64_t j = 1; j <= d.articles; j++) {
            dataset_slug(&d, j, b, sizeof(b));
            dataset_title(&d, j, a, sizeof(a));
            printf("%lld\t%s\t%s\n", (long long)j, b, a);
        }
    } else {
        for (int64_t k = 1; k <= d.tags; k++) {
            dataset_tag(&d, k, a, sizeof(a));
            printf("%lld\t%s\n", (long long)k, a);
        }
    }
    return fflush(stdout) == 0 && !ferror(stdout) ? SEED_EXIT_OK : SEED_EXIT_FAIL;
}

int
main(int argc, char **argv)
{
    struct seed_options o;
    char err[256];

    if (seed_options_parse(&o, argc, argv, err, sizeof(err)) < 0) {
        fprintf(stderr, "conduit-seed: %s\n", err);
        return SEED_EXIT_USAGE;
    }
    switch (o.action) {
    case SEED_HELP:
        fputs(seed_options_usage, stdout);
        return SEED_EXIT_OK;
    case SEED_VERSION:
        printf("conduit-seed %s\n", VERSION);
        return SEED_EXIT_OK;
    case SEED_LIST:
        return list(&o);
    case SEED_LOAD:
        break;
    }
    return load_run(&o);
}
