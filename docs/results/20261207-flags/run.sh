#!/bin/sh
# run.sh: the flags' viewer and the comment list's single range, before
# and after, side by side, against the seeded cluster of script/seed
# (./var/pg, port 54329), nothing preloaded, shared_buffers 6026MB, the
# database read into PostgreSQL's buffers first (pg_prewarm).  Both sides
# run on the same database: the change is in the statements and the
# worker, not in the schema.
#   1. 8,000 users, -w 2, cache on then off, BEFORE then AFTER; then the
#      same again with the sides in the other order (NAME-r2);
#   2. 8,000 users, -w 5, cache on, BEFORE then AFTER;
#   3. 16,000 users, -w 2, cache on, BEFORE then AFTER;
#   4. the capacity search of AFTER, -w 2, cache on, from a fresh
#      instance at 25,000 users (x 1.12, at most 3 levels, 60 s holds);
#   5. the same search of BEFORE;
#   6. two more rounds of 1's cache-on pair (NAME-r3, NAME-r4, in both
#      orders), run after a pg_stat_statements comparison (not kept here)
#      showed the machine's speed drifting by up to 10 % between runs.
# Each run of 1 to 3 is a fresh `conduitd -w W --pool 4 --cache C` (cold
# caches), conduit-bench run, 20 s ramp, 60 s hold.  STEPS picks among
# 1 to 6 (1 to 5 by default).
cd "$(dirname "$0")/../../.." || exit 1
OUT=${OUT:-docs/results/20261207-flags}
STEPS=${STEPS:-1 2 3 4 5}
PGH=$PWD/var/pg/run
DB=${DB:-conduit_v3}
BENCH=${BENCH:-build-release/conduit-bench}
BEFORE=${BEFORE:?} AFTER=${AFTER:?}
PORT=18557

sql() { psql -X -h "$PGH" -p 54329 -U postgres -d postgres -qAt "$@"; }

# The cluster restarted with nothing preloaded, the database prewarmed.
cluster() {
    sql -c "alter system set shared_buffers = '6026MB'" -c "alter system reset shared_preload_libraries"
    runuser -u postgres -- /usr/lib/postgresql/15/bin/pg_ctl -D "$PWD/var/pg/data" -w -m fast \
        -l "$PWD/var/pg/postgresql.log" restart >/dev/null
    psql -X -h "$PGH" -p 54329 -U postgres -d "$DB" -qAt -c "create extension if not exists pg_prewarm" \
        -c "select sum(pg_prewarm(c.oid)) from pg_class c where c.relnamespace = 'public'::regnamespace and c.relkind in ('r', 'i', 't') or c.oid = (select reltoastrelid from pg_class where relname = 'articles')" >/dev/null
    echo "$(date -u +%H:%M:%S) cluster: shared_buffers $(sql -c 'show shared_buffers'), preload '$(sql -c 'show shared_preload_libraries')', prewarmed $DB" >>"$OUT/sitting.txt"
}

start() { # NAME BINARY WORKERS CACHE
    "$2" -b 127.0.0.1:$PORT --dev --allow-root -w "$3" --pool 4 --cache "$4" \
        --max-connections 20000 --log "$OUT/$1.log" \
        --db "host=$PGH port=54329 user=postgres dbname=$DB" </dev/null >"$OUT/$1.out" 2>&1 &
    PID=$!
    i=0
    until curl -sf -o /dev/null http://127.0.0.1:$PORT/healthz; do
        i=$((i + 1)); [ $i -gt 100 ] && { echo "$1: conduitd did not start" >&2; exit 1; }
        sleep 0.1
    done
    echo "$(date -u +%H:%M:%S) $1: conduitd $PID ($2, -w $3, cache $4, database $DB), load $(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/sitting.txt"
}

stop() {
    kill -TERM $PID
    wait $PID
}

one() { # NAME BINARY WORKERS CACHE USERS
    start "$1" "$2" "$3" "$4"
    "$BENCH" run --users "$5" --ramp 20s --hold 60s --port $PORT --server-pid $PID \
        --pg-data "$PWD/var/pg/data" --json "$OUT/$1.json" --out "$OUT" >"$OUT/$1.txt" 2>&1
    stop
}

search() { # NAME BINARY
    start "$1" "$2" 2 on
    "$BENCH" search --start 25000 --growth 1.12 --max-users 40000 --max-levels 3 \
        --settle-max 60s --ramp 20s --hold 60s --port $PORT --server-pid $PID \
        --pg-data "$PWD/var/pg/data" --json "$OUT/$1.json" --out "$OUT" >"$OUT/$1.txt" 2>&1
    stop
}

cluster
for s in $STEPS; do
    case $s in
    1)
        for ca in on off; do
            one "before-w2-$ca-8000" "$BEFORE" 2 "$ca" 8000
            one "after-w2-$ca-8000" "$AFTER" 2 "$ca" 8000
        done
        for ca in on off; do
            one "after-w2-$ca-8000-r2" "$AFTER" 2 "$ca" 8000
            one "before-w2-$ca-8000-r2" "$BEFORE" 2 "$ca" 8000
        done
        ;;
    2)
        one before-w5-on-8000 "$BEFORE" 5 on 8000
        one after-w5-on-8000 "$AFTER" 5 on 8000
        ;;
    3)
        one before-w2-on-16000 "$BEFORE" 2 on 16000
        one after-w2-on-16000 "$AFTER" 2 on 16000
        ;;
    4) search search-after-w2-on "$AFTER" ;;
    5) search search-before-w2-on "$BEFORE" ;;
    6)
        one before-w2-on-8000-r3 "$BEFORE" 2 on 8000
        one after-w2-on-8000-r3 "$AFTER" 2 on 8000
        one after-w2-on-8000-r4 "$AFTER" 2 on 8000
        one before-w2-on-8000-r4 "$BEFORE" 2 on 8000
        ;;
    esac
done
echo "$(date -u +%H:%M:%S) done" >>"$OUT/sitting.txt"
