#!/bin/sh
# ab-waits.sh: a request waiting at most once for another's fill (ONCE: a
# conduitd built at c7891b0) against at most CACHE_FILL_WAITS (3) times
# (this checkout's build-release/conduitd), one pair, as ab.sh runs them.
cd "$(dirname "$0")/../../.." || exit 1
: "${ONCE:?set ONCE to a conduitd built at c7891b0}"
export OUT=docs/results/20261206-cache-fill HOLD=${HOLD:-5m}
USERS=${USERS:-16000}
CONDUITD=$ONCE docs/results/20261206-cache-pages/one.sh waits1 on "$USERS"
docs/results/20261206-cache-pages/one.sh waits3 on "$USERS"
