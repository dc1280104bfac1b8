#!/bin/sh
# ab.sh: the cache off, on (cache_memory 64 MB a worker, the default), on
# with 256 MB, at USERS users (default 16000) with a HOLD (default 5m)
# long enough for the workers' caches to fill, through
# docs/results/20261206-cache-pages/one.sh (conduitd -w 2 --pool 4, a 20 s
# ramp, every worker's /healthz and pg_stat_statements after the run).
cd "$(dirname "$0")/../../.." || exit 1
export OUT=docs/results/20261206-long-hold HOLD=${HOLD:-5m}
USERS=${USERS:-16000}
docs/results/20261206-cache-pages/one.sh off off "$USERS"
docs/results/20261206-cache-pages/one.sh on on "$USERS"
docs/results/20261206-cache-pages/one.sh on256 on "$USERS" --cache-memory 256
