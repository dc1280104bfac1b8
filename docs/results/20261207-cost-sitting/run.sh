#!/bin/sh
# run.sh: the cost issue's sitting, before and after, side by side,
# against the seeded cluster of script/seed (./var/pg, port 54329), with
# nothing preloaded (no pg_stat_statements: it costs every statement
# something) and shared_buffers as script/pg-cluster now sizes a new
# cluster (a quarter of memory: 6026MB here), both databases read into
# PostgreSQL's buffers first (pg_prewarm).
#   1. for each of USERS, each configuration of CONFIGS (workers:cache),
#      BEFORE then AFTER, each a fresh `conduitd -w W --pool 4 --cache C`
#      (cold caches), conduit-bench run, 20 s ramp, 60 s hold;
#   2. the capacity search of AFTER at -w 2, cache on (60 s holds, one
#      instance for the whole search);
#   3. AFTER at 8,000 users, cache off and on, with shared_buffers 256MB
#      (the cluster restarted, its buffers filled by pg_prewarm);
#   4. a second search of AFTER, -w 2, cache on, from a fresh instance at
#      25,000 users, finer (x 1.12, at most 3 levels): step 2's best pass
#      (28,125) failed when played again after its failing level;
#   5. the same search of BEFORE, from 22,500 users (x 1.11, 3 levels);
#   6. a second round of step 1 at 8,000 users, -w 2, the sides in the
#      other order (AFTER first), named NAME-r2.
# STEPS picks among 1 2 3 4 5 6 (1 2 3 by default).  BEFORE_DB / AFTER_DB: each side's database
# (a schema change gives the after side a copy upgraded by --init-db).
cd "$(dirname "$0")/../../.." || exit 1
OUT=${OUT:-docs/results/20261207-cost-sitting}
STEPS=${STEPS:-1 2 3}
CONFIGS=${CONFIGS:-2:off 2:on 5:off 5:on}
USERS=${USERS:-8000 16000}
PGH=$PWD/var/pg/run
BEFORE_DB=${BEFORE_DB:-conduit} AFTER_DB=${AFTER_DB:-conduit_v3}
BENCH=${BENCH:-build-release/conduit-bench}
BEFORE=${BEFORE:?} AFTER=${AFTER:?}
PORT=18557

sql() { psql -X -h "$PGH" -p 54329 -U postgres -d postgres -qAt "$@"; }

# cluster SHARED_BUFFERS: restart with that, nothing preloaded, and read
# every table and index of both databases into the buffers.
cluster() {
    sql -c "alter system set shared_buffers = '$1'" -c "alter system reset shared_preload_libraries"
    runuser -u postgres -- /usr/lib/postgresql/15/bin/pg_ctl -D "$PWD/var/pg/data" -w -m fast \
        -l "$PWD/var/pg/postgresql.log" restart >/dev/null
    for d in "$BEFORE_DB" "$AFTER_DB"; do
        psql -X -h "$PGH" -p 54329 -U postgres -d "$d" -qAt -c "create extension if not exists pg_prewarm" \
            -c "select sum(pg_prewarm(c.oid)) from pg_class c where c.relnamespace = 'public'::regnamespace and c.relkind in ('r', 'i', 't') or c.oid = (select reltoastrelid from pg_class where relname = 'articles')" >/dev/null
    done
    echo "$(date -u +%H:%M:%S) cluster: shared_buffers $(sql -c 'show shared_buffers'), preload '$(sql -c 'show shared_preload_libraries')', prewarmed $BEFORE_DB and $AFTER_DB" >>"$OUT/sitting.txt"
}

start() { # NAME BINARY WORKERS CACHE DBNAME
    "$2" -b 127.0.0.1:$PORT --dev --allow-root -w "$3" --pool 4 --cache "$4" \
        --max-connections 20000 --log "$OUT/$1.log" \
        --db "host=$PGH port=54329 user=postgres dbname=$5" </dev/null >"$OUT/$1.out" 2>&1 &
    PID=$!
    i=0
    until curl -sf -o /dev/null http://127.0.0.1:$PORT/healthz; do
        i=$((i + 1)); [ $i -gt 100 ] && { echo "$1: conduitd did not start" >&2; exit 1; }
        sleep 0.1
    done
    echo "$(date -u +%H:%M:%S) $1: conduitd $PID ($2, -w $3, cache $4, database $5), load $(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/sitting.txt"
}

stop() {
    kill -TERM $PID
    wait $PID
}

one() { # NAME BINARY WORKERS CACHE USERS DBNAME
    start "$1" "$2" "$3" "$4" "$6"
    "$BENCH" run --users "$5" --ramp 20s --hold 60s --port $PORT --server-pid $PID \
        --pg-data "$PWD/var/pg/data" --json "$OUT/$1.json" --out "$OUT" >"$OUT/$1.txt" 2>&1
    stop
}

search() { # NAME START GROWTH LEVELS [BINARY DBNAME]
    start "$1" "${5:-$AFTER}" 2 on "${6:-$AFTER_DB}"
    "$BENCH" search --start "$2" --growth "$3" --max-users 40000 --max-levels "$4" \
        --settle-max 60s --ramp 20s --hold 60s --port $PORT --server-pid $PID \
        --pg-data "$PWD/var/pg/data" --json "$OUT/$1.json" --out "$OUT" >"$OUT/$1.txt" 2>&1
    stop
}

for s in $STEPS; do
    case $s in
    1)
        cluster 6026MB
        for u in $USERS; do
            for c in $CONFIGS; do
                w=${c%:*} ca=${c#*:}
                one "before-w$w-$ca-$u" "$BEFORE" "$w" "$ca" "$u" "$BEFORE_DB"
                one "after-w$w-$ca-$u" "$AFTER" "$w" "$ca" "$u" "$AFTER_DB"
            done
        done
        ;;
    2) search search-after-w2-on 18000 1.25 5 ;;
    4) search search2-after-w2-on 25000 1.12 3 ;;
    5) search search-before-w2-on 22500 1.11 3 "$BEFORE" "$BEFORE_DB" ;;
    6)
        for ca in off on; do
            one "after-w2-$ca-8000-r2" "$AFTER" 2 "$ca" 8000 "$AFTER_DB"
            one "before-w2-$ca-8000-r2" "$BEFORE" 2 "$ca" 8000 "$BEFORE_DB"
        done
        ;;
    3)
        cluster 256MB
        for ca in off on; do
            one "after-w2-$ca-8000-sb256" "$AFTER" 2 "$ca" 8000 "$AFTER_DB"
        done
        cluster 6026MB
        ;;
    esac
done
echo "$(date -u +%H:%M:%S) done" >>"$OUT/sitting.txt"
