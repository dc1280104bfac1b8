#!/bin/sh
# autovacuum settings off (defaults) against on, each from a freshly vacuumed state, 240 s holds
# Run from anywhere: the commands below use paths from the top of the tree.
cd "$(dirname "$0")/../../../.." || exit 1
P="host=$PWD/var/pg/run port=54329 user=postgres dbname=conduit"
for mode in default tuned; do
    if [ $mode = tuned ]; then
        psql "$P" -qc "ALTER TABLE articles SET (autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_insert_scale_factor = 0.01)" \
                  -qc "ALTER TABLE favorites SET (autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_insert_scale_factor = 0.01)" \
                  -qc "ALTER TABLE follows SET (autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_insert_scale_factor = 0.01)" \
                  -qc "ALTER TABLE article_tags SET (autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_insert_scale_factor = 0.01)"
    else
        for t in articles favorites follows article_tags; do
            psql "$P" -qc "ALTER TABLE $t RESET (autovacuum_vacuum_scale_factor, autovacuum_vacuum_insert_scale_factor)"
        done
    fi
    psql "$P" -qc "VACUUM (ANALYZE) articles, favorites, follows, article_tags"
    build/conduitd --dev --allow-root -b 127.0.0.1:18080 -w 2 --db "$P" --log /tmp/av-conduitd-$mode.log &
    pid=$!
    sleep 3
    psql "$P" -qAtc "select pg_stat_statements_reset()" >/dev/null
    av0=$(psql "$P" -Atc "select sum(autovacuum_count) from pg_stat_user_tables")
    build/conduit-bench run --port 18080 --users 12000 --ramp 20s --hold 240s --server-pid $pid --pg-data var/pg/data --json /tmp/av-$mode.json > /tmp/av-$mode.txt 2>&1
    kill -TERM $pid; wait $pid
    echo "== $mode"
    grep -E '^users|req/s [0-9]|latency|CPU over|CPU per' /tmp/av-$mode.txt
    echo "autovacuums during the run: $(( $(psql "$P" -Atc "select sum(autovacuum_count) from pg_stat_user_tables") - av0 ))"
    psql "$P" -Atc "select relname, autovacuum_count, n_dead_tup from pg_stat_user_tables where relname in ('articles','favorites','follows','article_tags')"
    psql "$P" -Atc "select round(mean_exec_time::numeric,3) as ms, shared_blks_hit/greatest(calls,1) hit, shared_blks_read/greatest(calls,1) rd, left(regexp_replace(query,'\s+',' ','g'),40) from pg_stat_statements order by total_exec_time desc limit 6"
done
