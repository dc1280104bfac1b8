#!/bin/sh
# abcd.sh: PostgreSQL's shared_buffers at 256 MB (what script/pg-cluster
# sets) against 4 GB, each with conduitd's cache off and on,
# interleaved, twice, at USERS users (default 8000).  Each change of
# shared_buffers restarts the cluster and loads every table and index of
# the dataset with pg_prewarm, so neither side starts colder.
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../../.." || exit 1
USERS=${USERS:-8000}
one=docs/results/20261206-cache-pages/one.sh
PGH=$PWD/var/pg/run
sql() { psql -X -h "$PGH" -p 54329 -U postgres -d conduit -qAtc "$1"; }
buffers() {
    sql "alter system set shared_buffers = '$1'" &&
        script/pg-cluster stop var/pg 54329 && script/pg-cluster start var/pg 54329 &&
        sql "create extension if not exists pg_prewarm" &&
        sql "select sum(pg_prewarm(c.oid::regclass)) from pg_class c
             join pg_namespace n on n.oid = c.relnamespace
             where n.nspname = 'public' and c.relkind in ('r', 'i')" >/dev/null
}
for r in 1 2; do
    for sb in 256MB 4GB; do
        buffers $sb || exit 1
        OUT=docs/results/20261206-pg-buffers $one "sb$sb-off-$r" off "$USERS"
        OUT=docs/results/20261206-pg-buffers $one "sb$sb-on-$r" on "$USERS"
    done
done
sql "alter system reset shared_buffers"
script/pg-cluster stop var/pg 54329 && script/pg-cluster start var/pg 54329
