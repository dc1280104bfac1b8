#!/bin/sh
# bench/kill-instance.sh CONNINFO [USERS]: what users see when one of two
# conduitd instances dies under the WORKLOAD.md virtual users.
#
# Starts two masters (WORKERS workers each, default 1) on one seeded
# database, nginx in front of them from etc/nginx-upstream.conf.in (the
# template `make install` ships), and conduit-bench run with USERS virtual
# users (default 6000) through nginx: RAMP seconds of ramp (default 20),
# HOLD of hold (default 60).  KILL_AT seconds into the hold (default half
# of it) the first instance, master and workers, gets SIGKILL: a crash, not
# a graceful stop.  conduit-bench's report then says how many requests
# failed and how (connect, timeout, status: nginx answers 502 for a request
# that was in flight on the dead instance and cannot be retried, such as a
# POST already sent).  The surviving instance is in the CPU and memory
# accounting; the dead one is not.
#
# The database must be seeded (script/seed, conduit-seed) at SCALE
# (default 1) and SEED (default 1): the virtual users log in as its users.
# CONDUITD_ARGS: more flags for both instances (CONDUITD_ARGS="--cache on").
# Load, nginx, conduitd and PostgreSQL share this machine's cores.  Not
# part of `make check` (t/integration/instances.sh is its pass/fail test).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
CONDUITD=${CONDUITD:-$top/build/conduitd}
BENCH=${BENCH:-$top/build/conduit-bench}
NGINX=${NGINX:-$(command -v nginx || echo /usr/sbin/nginx)}
[ $# -ge 1 ] || { echo "usage: $0 CONNINFO [USERS]" >&2; exit 2; }
DB=$1
USERS=${2:-6000}
RAMP=${RAMP:-20} HOLD=${HOLD:-60}
KILL_AT=${KILL_AT:-$((HOLD / 2))}
WORKERS=${WORKERS:-1} SCALE=${SCALE:-1} SEED=${SEED:-1}
PORT0=${PORT0:-18180}
for f in "$CONDUITD" "$BENCH" "$NGINX"; do
    [ -x "$f" ] || { echo "$0: $f is missing (script/build; apt-get install nginx-light)" >&2; exit 2; }
done

T=$(mktemp -d /tmp/kill-instance.XXXXXX)
chmod 755 "$T"
PIDS=
cleanup() {
    for p in $PIDS; do kill -TERM "$p" 2>/dev/null; done
    wait 2>/dev/null
    rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# Both instances sign and check tokens with one secret, as a deployment must.
CONDUITD_JWT_SECRET=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
export CONDUITD_JWT_SECRET
root=
[ "$(id -u)" = 0 ] && root=--allow-root
servers=
for i in 1 2; do
    port=$((PORT0 + i))
    # shellcheck disable=SC2086 # CONDUITD_ARGS is a list of flags
    "$CONDUITD" -b 127.0.0.1:$port -w "$WORKERS" $root --db "$DB" --log "$T/conduitd-$i.log" \
        ${CONDUITD_ARGS:-} </dev/null >"$T/conduitd-$i.out" 2>&1 &
    eval "PID_$i=\$!"
    PIDS="$PIDS $!"
    servers="${servers}server 127.0.0.1:$port max_fails=3 fail_timeout=10s; "
done

NPORT=$PORT0
mkdir -p "$T/tmp"
sed -e "s|@UPSTREAM_SERVERS@|$servers|" -e "s|listen 80;|listen 127.0.0.1:$NPORT;|" \
    -e '/listen \[::\]:80;/d' "$top/etc/nginx-upstream.conf.in" >"$T/upstream.conf"
cat >"$T/nginx.conf" <<CONF
daemon off;
worker_processes 1;
worker_rlimit_nofile $(ulimit -Hn);
pid $T/nginx.pid;
error_log $T/nginx-error.log warn;
events { worker_connections $(($(ulimit -Hn) / 2)); }
http {
    access_log off;
    client_body_temp_path $T/tmp;
    proxy_temp_path $T/tmp;
    include $T/upstream.conf;
}
CONF
"$NGINX" -p "$T" -c "$T/nginx.conf" </dev/null >"$T/nginx.out" 2>&1 &
NGINX_PID=$!
PIDS="$PIDS $NGINX_PID"

ready=
for _ in $(seq 1 100); do
    if curl -sf -o /dev/null "http://127.0.0.1:$((PORT0 + 1))/api/tags" &&
        curl -sf -o /dev/null "http://127.0.0.1:$((PORT0 + 2))/api/tags" &&
        curl -sf -o /dev/null "http://127.0.0.1:$NPORT/api/tags"; then
        ready=1
        break
    fi
    sleep 0.1
done
[ -n "$ready" ] || { cat "$T"/*.out "$T"/*.log >&2; echo "$0: the servers did not start" >&2; exit 1; }

# Every pid of instance 1 now: after SIGKILL its master cannot be asked.
victims="$PID_1 $(cat /proc/"$PID_1"/task/*/children 2>/dev/null)"
(
    sleep $((RAMP + KILL_AT))
    kill -KILL $victims
    echo "[kill] instance 1 (pids $victims) killed with SIGKILL at $(date +%T), ${KILL_AT} s into the hold" >&2
) &
KILLER=$!

"$BENCH" run --port "$NPORT" --users "$USERS" --ramp "${RAMP}s" --hold "${HOLD}s" \
    --scale "$SCALE" --seed "$SEED" --server-pid "$PID_2" --nginx-pid "$NGINX_PID" \
    ${PG_DATA:+--pg-data "$PG_DATA"} ${JSON:+--json "$JSON"}
rc=$?
wait "$KILLER"
# What nginx saw of the dead instance, by kind.
echo "nginx's error log, by kind:"
sed -E -e 's/^.*\[(error|warn)\] [0-9#]+: (\*[0-9]+ )?//' -e 's/, client:.*//' "$T/nginx-error.log" |
    sort | uniq -c | sort -rn
exit $rc
