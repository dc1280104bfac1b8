#!/bin/sh
# one.sh NAME CACHE USERS [more conduitd flags]: one measured level against
# the seeded cluster of script/seed (./var/pg, port 54329, with
# pg_stat_statements preloaded): conduitd -w 2 --pool 4 --cache CACHE on
# port 18555, conduit-bench run (20 s ramp, 60 s hold), every worker's
# /healthz and the top statements of pg_stat_statements (reset first)
# into OUT (default: this folder).  CONDUITD: another conduitd binary;
# HOLD: another hold (default 60s).
cd "$(dirname "$0")/../../.." || exit 1
OUT=${OUT:-docs/results/20261206-cache-pages}
NAME=$1 CACHE=$2 USERS=$3
shift 3
PGH=$PWD/var/pg/run
psql -X -h "$PGH" -p 54329 -U postgres -d conduit -qAtc "select pg_stat_statements_reset()" >/dev/null
"${CONDUITD:-build-release/conduitd}" -b 127.0.0.1:18555 --dev --allow-root -w 2 --pool 4 --cache "$CACHE" \
    --log "$OUT/$NAME.log" --db "host=$PGH port=54329 user=postgres dbname=conduit" "$@" \
    </dev/null >"$OUT/$NAME.out" 2>&1 &
PID=$!
sleep 3
build-release/conduit-bench run --users "$USERS" --ramp 20s --hold "${HOLD:-60s}" --port 18555 \
    --server-pid $PID --pg-data "$PWD/var/pg/data" --json "$OUT/$NAME.json" --out "$OUT" \
    >"$OUT/$NAME.txt" 2>&1
for i in 1 2 3 4 5 6 7 8; do curl -s http://127.0.0.1:18555/healthz; echo; done |
    sort -u >"$OUT/$NAME-healthz.txt"
psql -X -h "$PGH" -p 54329 -U postgres -d conduit -P pager=off -c "select calls,
    round(total_exec_time::numeric, 0) ms, round(mean_exec_time::numeric, 3) mean,
    left(regexp_replace(query, '\s+', ' ', 'g'), 90) q
    from pg_stat_statements order by total_exec_time desc limit 22" >"$OUT/$NAME-pgss.txt"
kill -TERM $PID
wait $PID
