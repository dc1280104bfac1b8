/*
 * options: the command line, and how it combines with the config file and
 * the environment into one struct config.
 *
 * Order of precedence, lowest first: built-in defaults, the config file, the
 * environment (CONDUITD_JWT_SECRET), the flags.  options_resolve() runs that
 * whole sequence and is what both start-up and every reload call, so a
 * reload sees the same flags the master was started with.
 */
#ifndef CONDUITD_OPTIONS_H
#define CONDUITD_OPTIONS_H

#include "common/settings.h"

enum options_action {
    OPTIONS_RUN,
    OPTIONS_TEST,
    OPTIONS_SIGNAL,
    OPTIONS_INIT_DB,
    OPTIONS_VERSION,
    OPTIONS_HELP
};

#define OPTIONS_MAX_OVERRIDES 64

struct options {
    enum options_action action;
    char *config_file; /* owned */
    char *signal_name; /* owned; for OPTIONS_SIGNAL */
    int noverrides;
    struct {
        const char *key; /* points into config_keys */
        char *value;     /* owned */
    } overrides[OPTIONS_MAX_OVERRIDES];
};

/*
 * Parses argv.  Returns 0, or -1 with a message in err.  Copies every string
 * it keeps, so argv may be overwritten afterwards (the process title is).
 */
int options_parse(struct options *o, int argc, char **argv, char *err, size_t errlen);
void options_free(struct options *o);

/* Defaults, then the file, the environment and the flags; then validation. */
int options_resolve(const struct options *o, struct config *out, char *err, size_t errlen);

/* Maps a -s name (reload, stop, quit, reopen, upgrade) to a signal; -1 if unknown. */
int options_signal_number(const char *name);

void options_usage(FILE *out);

#endif
