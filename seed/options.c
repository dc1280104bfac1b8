/*
 * options: see options.h.
 */
#include "config.h"

#include "seed/options.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char seed_options_usage[] =
    "usage: conduit-seed --scale F [--seed N] [--db CONNINFO] [--reset] [--bcrypt-cost N] [-q]\n"
    "       conduit-seed --list users|articles|tags --scale F [--seed N]\n"
    "Loads the reference dataset (scale 1: 100,000 users, 500,000 articles,\n"
    "5,000,000 favorites, 2,500,000 comments, 2,000,000 follows) into an empty\n"
    "database; every user's password is \"password\".\n"
    "  --scale F        size factor, in (0, 100]; 0.01 is 1,000 users\n"
    "  --seed N         which dataset (default 1): the same seed, the same rows\n"
    "  --db CONNINFO    libpq connection string or URL (else DATABASE_URL, else PG*)\n"
    "  --reset          replace the data of a database that already has some\n"
    "  --bcrypt-cost N  cost of the one password hash, 4 to 31 (default 10)\n"
    "  --list WHAT      print the seeded users, articles or tags (id and names),\n"
    "                   computed from --scale and --seed; touches no database\n"
    "  -q, --quiet      no progress lines (the summary is still printed)\n"
    "  -h, --help       this text; -V, --version: the version\n"
    "Exit: 0 loaded, 1 failed (nothing changed), 2 bad arguments,\n"
    "3 refused (the database has data; use --reset).\n";

static int
parse_double(const char *s, double *out)
{
    char *end;

    errno = 0;
    *out = strtod(s, &end);
    return errno == 0 && end != s && *end == '\0' && isfinite(*out) ? 0 : -1;
}

static int
parse_u64(const char *s, uint64_t *out)
{
    char *end;

    /* strtoull accepts "-1" (as a huge number): refuse signs outright. */
    if (*s < '0' || *s > '9')
        return -1;
    errno = 0;
    *out = strtoull(s, &end, 10);
    return errno == 0 && *end == '\0' ? 0 : -1;
}

/* The value of option argv[*i], which must have one. */
static const char *
value(int argc, char **argv, int *i, char *err, size_t errcap)
{
    if (*i + 1 >= argc) {
        snprintf(err, errcap, "%s needs a value", argv[*i]);
        return NULL;
    }
    return argv[++*i];
}

int
seed_options_parse(struct seed_options *o, int argc, char **argv, char *err, size_t errcap)
{
    memset(o, 0, sizeof(*o));
    o->action = SEED_LOAD;
    o->seed = 1;
    o->bcrypt_cost = 10;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        uint64_t n;

        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            o->action = SEED_HELP;
            return 0;
        } else if (strcmp(a, "-V") == 0 || strcmp(a, "--version") == 0) {
            o->action = SEED_VERSION;
            return 0;
        } else if (strcmp(a, "--reset") == 0) {
            o->reset = 1;
        } else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
            o->quiet = 1;
        } else if (strcmp(a, "--scale") == 0) {
            if (!(v = value(argc, argv, &i, err, errcap)))
                return -1;
            if (parse_double(v, &o->scale) < 0 || !(o->scale > 0 && o->scale <= 100)) {
                snprintf(err, errcap, "--scale must be a number in (0, 100], not \"%s\"", v);
                return -1;
            }
        } else if (strcmp(a, "--seed") == 0) {
            if (!(v = value(argc, argv, &i, err, errcap)))
                return -1;
            if (parse_u64(v, &o->seed) < 0) {
                snprintf(err, errcap,
                         "--seed must be a whole number from 0 to 2^64 - 1, not \"%s\"", v);
                return -1;
            }
        } else if (strcmp(a, "--db") == 0) {
            if (!(o->db = value(argc, argv, &i, err, errcap)))
                return -1;
        } else if (strcmp(a, "--bcrypt-cost") == 0) {
            if (!(v = value(argc, argv, &i, err, errcap)))
                return -1;
            if (parse_u64(v, &n) < 0 || n < 4 || n > 31) {
                snprintf(err, errcap,
                         "--bcrypt-cost must be a whole number from 4 to 31, not \"%s\"", v);
                return -1;
            }
            o->bcrypt_cost = (int)n;
        } else if (strcmp(a, "--list") == 0) {
            if (!(v = value(argc, argv, &i, err, errcap)))
                return -1;
            if (strcmp(v, "users") != 0 && strcmp(v, "articles") != 0 && strcmp(v, "tags") != 0) {
                snprintf(err, errcap, "--list takes users, articles or tags, not \"%s\"", v);
                return -1;
            }
            o->list = v;
            o->action = SEED_LIST;
        } else {
            snprintf(err, errcap, "unknown argument \"%s\" (see --help)", a);
            return -1;
        }
    }
    if (o->scale == 0) {
        snprintf(err, errcap, "--scale is required (1 is the reference dataset; see --help)");
        return -1;
    }
    return 0;
}
