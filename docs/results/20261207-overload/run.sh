#!/bin/sh
# run.sh: overload and cold starts, in one sitting, against the seeded
# cluster of script/seed (./var/pg, port 54329, pg_stat_statements
# preloaded).  Every run starts conduitd afresh (-w 2 --pool 4, cold
# caches; --max-connections 20000, which each worker lowers under its
# open file limit itself: at the default 10,000 a worker, two workers hold
# 20,000 users, and a search past that measures the cap, not the CPU) on
# port 18555 with /metrics on 19145, and ends with every
# worker's /healthz, the instance's /metrics and the top statements of
# pg_stat_statements (reset at the start).
#   1. the capacity search, 60 s holds (at most 5 levels, 60 s to settle);
#   2. one level at each capacity and at 1.5 times it, cache on and off;
#   3. 16,000 users: a 20 s ramp and a 120 s ramp, 5-minute holds;
#   4. a 2 s stall of PostgreSQL (a lock on users and articles) 25 s into
#      a 60 s hold at 80 % of each capacity, cache on and off.
# STEPS: which of 1 2 3 4 to run (all by default); CACHES: "off on" by
# default; RAMPS: step 3's ramps ("20s 120s"); CAP_ON, CAP_OFF: the
# capacities, when step 1 is not run.
cd "$(dirname "$0")/../../.." || exit 1
OUT=${OUT:-docs/results/20261207-overload}
STEPS=${STEPS:-1 2 3 4}
CACHES=${CACHES:-off on}
RAMPS=${RAMPS:-20s 120s}
PGH=$PWD/var/pg/run
DB="host=$PGH port=54329 user=postgres dbname=conduit"
BENCH=${BENCH:-build-release/conduit-bench}
CONDUITD=${CONDUITD:-build-release/conduitd}
PORT=18555 SPORT=19145

sql() { psql -X -h "$PGH" -p 54329 -U postgres -d conduit -qAt "$@"; }

start() { # NAME CACHE
    sql -c "select pg_stat_statements_reset()" >/dev/null
    "$CONDUITD" -b 127.0.0.1:$PORT --status-listen 127.0.0.1:$SPORT --dev --allow-root \
        -w 2 --pool 4 --max-connections 20000 --cache "$2" --log "$OUT/$1.log" --db "$DB" \
        </dev/null >"$OUT/$1.out" 2>&1 &
    PID=$!
    i=0
    until curl -sf -o /dev/null http://127.0.0.1:$PORT/healthz; do
        i=$((i + 1)); [ $i -gt 100 ] && { echo "$1: conduitd did not start" >&2; exit 1; }
        sleep 0.1
    done
    echo "$(date -u +%H:%M:%S) $1: conduitd $PID, cache $2, load $(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/sitting.txt"
}

finish() { # NAME
    for i in 1 2 3 4 5 6 7 8; do curl -s http://127.0.0.1:$PORT/healthz; echo; done |
        sort -u >"$OUT/$1-healthz.txt"
    curl -s http://127.0.0.1:$SPORT/metrics | grep -v '^#' >"$OUT/$1-metrics.txt"
    psql -X -h "$PGH" -p 54329 -U postgres -d conduit -P pager=off -c "select calls,
        round(total_exec_time::numeric, 0) ms, round(mean_exec_time::numeric, 3) mean,
        left(regexp_replace(query, '\s+', ' ', 'g'), 90) q
        from pg_stat_statements order by total_exec_time desc limit 22" >"$OUT/$1-pgss.txt"
    kill -TERM $PID
    wait $PID
    echo "$(date -u +%H:%M:%S) $1: done" >>"$OUT/sitting.txt"
}

# sample NAME: every 5 s until stopped, the instance's queue, sheds and
# cache from /metrics (summed over workers and kinds, sheds by reason) and
# what PostgreSQL's client backends wait on, checkpoints and autovacuum.
sample() {
    while :; do
        echo "== $(date -u +%H:%M:%S)"
        curl -s http://127.0.0.1:$SPORT/metrics | awk '
            /^conduitd_shed_total/ { split($1, a, "reason=\""); split(a[2], b, "\""); s["shed_" b[1]] += $2; next }
            /^conduitd_(db_queue_depth|cache_bytes|cache_evictions_total|cache_hits_total|cache_misses_total|cache_waits_total|cache_stale_answers_total|bcrypt_jobs_queued|http_requests_in_flight|db_queue_full_total)[{ ]/ {
                n = $1; sub(/[{].*/, "", n); sub(/^conduitd_/, "", n); s[n] += $2 }
            END { for (k in s) printf "%s=%d ", k, s[k]; print "" }'
        sql -F' ' -c "select 'pg', string_agg(w || '=' || n, ' ' order by w) from (select coalesce(wait_event_type || ':' || wait_event, 'cpu') w, count(*) n from pg_stat_activity where backend_type = 'client backend' and state = 'active' and pid <> pg_backend_pid() group by 1) x" \
            -c "select 'checkpoints', checkpoints_timed + checkpoints_req, 'buffers', buffers_checkpoint, 'autovacuum', (select count(*) from pg_stat_activity where backend_type = 'autovacuum worker') from pg_stat_bgwriter"
        sleep 5
    done
}

# stall FILE AFTER: AFTER seconds into the hold that FILE reports, hold
# an exclusive lock on the tables nearly every statement reads for 2 s.
stall() {
    until grep -q '] hold ' "$1" 2>/dev/null; do sleep 0.2; done
    sleep "$2"
    at=$(grep -o '^\[ *[0-9]*s\]' "$1" | tail -1)
    sql -c "begin; lock table users, articles in access exclusive mode; select pg_sleep(2); commit;" >/dev/null
    echo "stall of 2 s began after the line $at" >"${1%.txt}-stall.txt"
}

level() { # NAME CACHE USERS RAMP HOLD [STALL_AFTER]
    start "$1" "$2"
    sample "$1" >"$OUT/$1-samples.txt" 2>&1 &
    MPID=$!
    SPID=
    if [ -n "$6" ]; then
        stall "$OUT/$1.txt" "$6" &
        SPID=$!
    fi
    "$BENCH" run --users "$3" --ramp "$4" --hold "$5" --port $PORT --server-pid $PID \
        --pg-data "$PWD/var/pg/data" --json "$OUT/$1.json" --out "$OUT" >"$OUT/$1.txt" 2>&1
    [ -n "$SPID" ] && wait $SPID
    kill $MPID
    finish "$1"
}

search() { # NAME CACHE
    start "$1" "$2"
    sample "$1" >"$OUT/$1-samples.txt" 2>&1 &
    MPID=$!
    "$BENCH" search --start 12000 --growth 1.5 --max-users 40000 --max-levels 5 --settle-max 60s \
        --ramp 20s --hold 60s --port $PORT --server-pid $PID \
        --pg-data "$PWD/var/pg/data" --json "$OUT/$1.json" --out "$OUT" >"$OUT/$1.txt" 2>&1
    kill $MPID
    finish "$1"
}

passed() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['search']['users_passed'])" "$1"; }
scaled() { python3 -c "import sys; print(int(round(float(sys.argv[1]) * float(sys.argv[2]) / 100)) * 100)" "$1" "$2"; }

cap() { # CACHE: the capacity step 1 found, or CAP_ON / CAP_OFF
    if [ "$1" = on ]; then echo "${CAP_ON:-$(passed "$OUT/search-on.json")}"; else echo "${CAP_OFF:-$(passed "$OUT/search-off.json")}"; fi
}

for s in $STEPS; do
    for c in $CACHES; do
        case $s in
        1) search search-$c $c ;;
        2)
            level cap-$c $c "$(cap $c)" 20s 60s
            level x1.5-$c $c "$(scaled "$(cap $c)" 1.5)" 20s 60s
            ;;
        3)
            for r in $RAMPS; do
                level cold16k-ramp${r%s}-$c $c 16000 $r 5m
            done
            ;;
        4) level stall-$c $c "$(scaled "$(cap $c)" 0.8)" 20s 60s 25 ;;
        esac
    done
done
