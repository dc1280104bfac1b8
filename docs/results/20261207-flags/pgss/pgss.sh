#!/bin/sh
# pgss.sh NAME BINARY CACHE: one 8,000-user level (-w 2, pool 4, 20 s ramp,
# 60 s hold) against the seeded cluster with pg_stat_statements preloaded
# (shared_preload_libraries, a restart, the database prewarmed), the
# statistics reset first and their table (calls, total and mean ms,
# buffers a call) written after.  Run here as: b-off, a-off (BEFORE,
# AFTER, cache off), then a-on, b-on (cache on).
cd "$(dirname "$0")/../../../.." || exit 1
PGH=$PWD/var/pg/run OUT=docs/results/20261207-flags/pgss
psql -X -h "$PGH" -p 54329 -U postgres -d conduit_v3 -qAtc "select pg_stat_statements_reset()" >/dev/null
"$2" -b 127.0.0.1:18555 --dev --allow-root -w 2 --pool 4 --cache "$3" --log "$OUT/$1.log" \
    --db "host=$PGH port=54329 user=postgres dbname=conduit_v3" </dev/null >"$OUT/$1.out" 2>&1 &
PID=$!
sleep 3
build-release/conduit-bench run --users 8000 --ramp 20s --hold 60s --port 18555 --server-pid $PID \
    --pg-data "$PWD/var/pg/data" --json "$OUT/$1.json" --out "$OUT" >"$OUT/$1.txt" 2>&1
psql -X -h "$PGH" -p 54329 -U postgres -d conduit_v3 -P pager=off -At -F' | ' -c "select calls,
    round(total_exec_time::numeric, 0) ms, round(mean_exec_time::numeric, 3) mean,
    round(shared_blks_hit::numeric / greatest(calls, 1), 1) bufs,
    left(regexp_replace(query, '\s+', ' ', 'g'), 110) q
    from pg_stat_statements order by total_exec_time desc limit 20" >"$OUT/$1-pgss.txt"
kill -TERM $PID; wait $PID
