#!/bin/sh
# run.sh: conduitd's own CPU a request with glibc's malloc, jemalloc and
# mimalloc (preloaded: LD_PRELOAD, nothing rebuilt), side by side in one
# sitting: ROUNDS rounds of the three in turn, each a fresh
# `conduitd -w 2 --pool 4 --cache on` (cold caches) on port 18556 with
# USERS users (8,000), a 20 s ramp and a 60 s hold, against the seeded
# cluster of script/seed (./var/pg, port 54329).
# ALLOC_DIR: where libjemalloc.so.2 and libmimalloc.so.2 are
# (apt-get install libjemalloc2 libmimalloc2.0).
cd "$(dirname "$0")/../../.." || exit 1
OUT=${OUT:-docs/results/20261207-allocator}
ROUNDS=${ROUNDS:-2}
USERS=${USERS:-8000}
ALLOC_DIR=${ALLOC_DIR:-/usr/lib/x86_64-linux-gnu}
PGH=$PWD/var/pg/run
DB="host=$PGH port=54329 user=postgres dbname=conduit"
BENCH=${BENCH:-build-release/conduit-bench}
CONDUITD=${CONDUITD:-build-release/conduitd}
PORT=18556

for r in $(seq "$ROUNDS"); do
    for a in glibc jemalloc mimalloc; do
        case $a in
        glibc) pre= ;;
        jemalloc) pre=$ALLOC_DIR/libjemalloc.so.2 ;;
        mimalloc) pre=$ALLOC_DIR/libmimalloc.so.2 ;;
        esac
        n=$a-$r
        env ${pre:+LD_PRELOAD=$pre} "$CONDUITD" -b 127.0.0.1:$PORT --dev --allow-root \
            -w 2 --pool 4 --cache on --log "$OUT/$n.log" --db "$DB" </dev/null >"$OUT/$n.out" 2>&1 &
        pid=$!
        i=0
        until curl -sf -o /dev/null http://127.0.0.1:$PORT/healthz; do
            i=$((i + 1)); [ $i -gt 100 ] && { echo "$n: conduitd did not start" >&2; exit 1; }
            sleep 0.1
        done
        # Which allocator the workers run with, as the kernel maps it.
        w=$(pgrep -P $pid | head -1)
        echo "$(date -u +%H:%M:%S) $n: conduitd $pid, maps: $(grep -o -E 'lib(jemalloc|mimalloc)[^ ]*' /proc/$w/maps | sort -u | tr '\n' ' ')load $(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/sitting.txt"
        "$BENCH" run --users "$USERS" --ramp 20s --hold 60s --port $PORT --server-pid $pid \
            --pg-data "$PWD/var/pg/data" --json "$OUT/$n.json" --out "$OUT" >"$OUT/$n.txt" 2>&1
        kill -TERM $pid
        wait $pid
    done
done
echo "$(date -u +%H:%M:%S) done" >>"$OUT/sitting.txt"
