#!/bin/sh
# cluster.sh start|stop|env: a throwaway PostgreSQL 15 cluster for the SQL
# scratch tests.  DIR (default /tmp/sqlwork) holds the data directory and
# the unix socket; PORT defaults to 5499.  PostgreSQL refuses to run as
# root, so as root the server runs as the postgres user.
# Use:   eval "$(t/sql/cluster.sh env)"; t/sql/cluster.sh start
set -eu
DIR=${DIR:-/tmp/sqlwork}
PORT=${PORT:-5499}
BIN=${PG_BINDIR:-/usr/lib/postgresql/15/bin}

as_pg() {
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case "${1:-}" in
start)
    mkdir -p "$DIR"
    [ "$(id -u)" = 0 ] && chown postgres:postgres "$DIR"
    if [ ! -f "$DIR/data/PG_VERSION" ]; then
        as_pg "$BIN/initdb" -D "$DIR/data" -E UTF8 --locale=C.UTF-8 -A trust >/dev/null
        cat >>"$DIR/data/postgresql.conf" <<CONF
shared_buffers = 1GB
work_mem = 16MB
maintenance_work_mem = 1GB
max_wal_size = 8GB
fsync = off
synchronous_commit = off
full_page_writes = off
CONF
    fi
    as_pg "$BIN/pg_ctl" -D "$DIR/data" -l "$DIR/log" -w \
        -o "-k $DIR -p $PORT -h ''" start
    ;;
stop)
    as_pg "$BIN/pg_ctl" -D "$DIR/data" -w stop
    ;;
env)
    echo "export PGHOST=$DIR PGPORT=$PORT PGUSER=postgres"
    ;;
*)
    echo "usage: $0 start|stop|env" >&2
    exit 2
    ;;
esac
