/*
 * conduit-bench: the load generator and capacity meter for conduitd.
 * main() only parses the command line and hands over to a mode.
 */
#include "config.h"

#include <signal.h>
#include <stdio.h>

#include "bench/modes.h"
#include "bench/options.h"

int
main(int argc, char **argv)
{
    struct options o;
    char err[512];
    int rc = options_parse(argc, argv, &o, err, sizeof(err));

    if (rc == 1)
        return 0;
    if (rc < 0) {
        fprintf(stderr, "conduit-bench: %s\n", err);
        return 2;
    }
    /* A server that hangs up mid-write must not kill the generator. */
    signal(SIGPIPE, SIG_IGN);
    switch (o.mode) {
    case MODE_RUN:
        return mode_run(&o);
    case MODE_SEARCH:
        return mode_search(&o);
    case MODE_RATE:
        return mode_rate(&o);
    case MODE_COMPARE:
        return mode_compare(&o);
    case MODE_CEILING:
        return mode_ceiling(&o);
    case MODE_EXPERIMENT:
        return mode_experiment(&o);
    }
    return 2;
}
