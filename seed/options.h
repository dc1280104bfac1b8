/*
 * options: conduit-seed's command line.
 */
#ifndef CONDUITD_SEED_OPTIONS_H
#define CONDUITD_SEED_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

enum seed_action { SEED_LOAD, SEED_LIST, SEED_HELP, SEED_VERSION };

/* Exit codes (the man page lists them). */
enum {
    SEED_EXIT_OK = 0,
    SEED_EXIT_FAIL = 1,    /* the load failed: nothing was changed */
    SEED_EXIT_USAGE = 2,   /* bad arguments */
    SEED_EXIT_REFUSED = 3, /* the database holds data and --reset was not given */
};

struct seed_options {
    enum seed_action action;
    double scale; /* 0 until given */
    uint64_t seed;
    const char *db; /* NULL: DATABASE_URL, else the PG* variables */
    int reset;
    int bcrypt_cost;
    int quiet;
    const char *list; /* --list: "users", "articles" or "tags" */
};

/*
 * Parses argv (argv[0] is the program).  Strings point into argv.  -1 with
 * a one-line reason in err on bad input.
 */
int seed_options_parse(struct seed_options *o, int argc, char **argv, char *err, size_t errcap);

/* The --help text. */
extern const char seed_options_usage[];

#endif
