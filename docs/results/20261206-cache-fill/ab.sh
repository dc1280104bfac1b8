#!/bin/sh
# ab.sh: conduitd before one statement in flight per missed key (BEFORE:
# a conduitd built at eae31d4, e.g. `git worktree add /tmp/before eae31d4
# && (cd /tmp/before && BUILD_DIR=build-release script/build)`) against
# this checkout's build-release/conduitd, at USERS users (default 16000)
# over a HOLD (default 5m), interleaved: before, after, after, before.
# Each run through docs/results/20261206-cache-pages/one.sh (conduitd -w 2
# --pool 4 --cache on, 64 MB a worker, a 20 s ramp, every worker's
# /healthz with its lookups by kind, and pg_stat_statements).
cd "$(dirname "$0")/../../.." || exit 1
: "${BEFORE:?set BEFORE to a conduitd built at eae31d4}"
export OUT=docs/results/20261206-cache-fill HOLD=${HOLD:-5m}
USERS=${USERS:-16000}
CONDUITD=$BEFORE docs/results/20261206-cache-pages/one.sh before-1 on "$USERS"
docs/results/20261206-cache-pages/one.sh after-1 on "$USERS"
docs/results/20261206-cache-pages/one.sh after-2 on "$USERS"
CONDUITD=$BEFORE docs/results/20261206-cache-pages/one.sh before-2 on "$USERS"
