#!/bin/sh
# run.sh: before and after, side by side in one sitting: for each
# configuration of CONFIGS (workers:cache, e.g. "2:off 2:on 5:on") and each
# of USERS, a fresh `conduitd -w W --pool 4 --cache C` of BEFORE then of
# AFTER (cold caches; ORDER swaps them), conduit-bench run with a 20 s ramp and a 60 s hold,
# against the seeded cluster of script/seed (./var/pg, port 54329):
# BEFORE_DB and AFTER_DB name each side's database (both "conduit" by
# default; a schema change gives the after side a copy upgraded with
# conduitd --init-db).
cd "$(dirname "$0")/../../.." || exit 1
OUT=${OUT:?}
CONFIGS=${CONFIGS:-2:off 2:on 5:on}
USERS=${USERS:-8000}
PGH=$PWD/var/pg/run
BEFORE_DB=${BEFORE_DB:-conduit} AFTER_DB=${AFTER_DB:-conduit}
BENCH=${BENCH:-build-release/conduit-bench}
BEFORE=${BEFORE:?} AFTER=${AFTER:?}
ORDER=${ORDER:-before after} # the order of the two sides in each pair
TAG=${TAG:-}                 # appended to every run's name (a second round)
PORT=18557

one() { # NAME BINARY WORKERS CACHE USERS DBNAME
    DB="host=$PGH port=54329 user=postgres dbname=$6"
    "$2" -b 127.0.0.1:$PORT --dev --allow-root -w "$3" --pool 4 --cache "$4" \
        --max-connections 20000 --log "$OUT/$1.log" --db "$DB" </dev/null >"$OUT/$1.out" 2>&1 &
    pid=$!
    i=0
    until curl -sf -o /dev/null http://127.0.0.1:$PORT/healthz; do
        i=$((i + 1)); [ $i -gt 100 ] && { echo "$1: conduitd did not start" >&2; exit 1; }
        sleep 0.1
    done
    echo "$(date -u +%H:%M:%S) $1: conduitd $pid ($2, database $6), load $(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/sitting.txt"
    "$BENCH" run --users "$5" --ramp 20s --hold 60s --port $PORT --server-pid $pid \
        --pg-data "$PWD/var/pg/data" --json "$OUT/$1.json" --out "$OUT" >"$OUT/$1.txt" 2>&1
    kill -TERM $pid
    wait $pid
}

for u in $USERS; do
    for c in $CONFIGS; do
        w=${c%:*} ca=${c#*:}
        for side in $ORDER; do
            if [ "$side" = before ]; then
                one "before-w$w-$ca-$u$TAG" "$BEFORE" "$w" "$ca" "$u" "$BEFORE_DB"
            else
                one "after-w$w-$ca-$u$TAG" "$AFTER" "$w" "$ca" "$u" "$AFTER_DB"
            fi
        done
    done
done
echo "$(date -u +%H:%M:%S) done" >>"$OUT/sitting.txt"
