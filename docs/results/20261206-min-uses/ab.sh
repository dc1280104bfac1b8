#!/bin/sh
# ab.sh: cache_min_uses 1 (every value stored at its first read, as before)
# against 2 (stored at its second), at USERS users (default 16000) over a
# HOLD (default 5m), through docs/results/20261206-cache-pages/one.sh
# (conduitd -w 2 --pool 4 --cache on, 64 MB a worker, a 20 s ramp, every
# worker's /healthz with its lookups by kind, and pg_stat_statements).
# ROUNDS (default 1) plays the pair that many times, alternating.
cd "$(dirname "$0")/../../.." || exit 1
export OUT=docs/results/20261206-min-uses HOLD=${HOLD:-5m}
USERS=${USERS:-16000}
for r in $(seq 1 "${ROUNDS:-1}"); do
    docs/results/20261206-cache-pages/one.sh "uses1-$r" on "$USERS" --cache-min-uses 1
    docs/results/20261206-cache-pages/one.sh "uses2-$r" on "$USERS" --cache-min-uses 2
done
