#!/bin/sh
# bench/measure/kill-instance.sh CONNINFO [USERS]: what users see when one of two
# conduitd instances dies under the virtual users of docs/workload.md.
#
# Starts two masters (WORKERS workers each, default 1; --dev, so both sign
# with one secret as a deployment's instances must) on one seeded
# database, nginx in front of them from etc/nginx-upstream.conf.in (the
# template `make install` ships; t/lib.sh's conduitd_start and nginx_start,
# as t/integration/instances.sh), and conduit-bench run with USERS virtual
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
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$top_srcdir/bench/measure/lib.sh"
[ $# -ge 1 ] || { echo "usage: $0 CONNINFO [USERS]" >&2; exit 2; }
DB=$1
USERS=${2:-6000}
RAMP=${RAMP:-20} HOLD=${HOLD:-60}
KILL_AT=${KILL_AT:-$((HOLD / 2))}
WORKERS=${WORKERS:-1} SCALE=${SCALE:-1} SEED=${SEED:-1}
for f in "$CONDUITD" "$BENCH" "$NGINX"; do
    [ -x "$f" ] || bail "$f is missing (script/build; apt-get install nginx-light)"
done

# shellcheck disable=SC2086 # CONDUITD_ARGS is a list of flags
conduitd_start -w "$WORKERS" ${CONDUITD_ARGS:-}
A_PID=$CONDUITD_PID A_PORT=$PORT
# Every pid of instance 1 now: after SIGKILL its master cannot be asked.
victims="$A_PID $(worker_pids)"
mv "$T/conduitd.log" "$T/a.log"
EXTRA_PIDS=$A_PID
CONDUITD_PID=
# shellcheck disable=SC2086
conduitd_start -w "$WORKERS" ${CONDUITD_ARGS:-}
nginx_start "$T/nginx" 127.0.0.1:$A_PORT 127.0.0.1:$PORT ||
    bail "nginx did not start: $(cat "$T/nginx/out" "$T/nginx/error.log" 2>/dev/null)"
EXTRA_PIDS="$NGINX_PID $EXTRA_PIDS"

(
    sleep $((RAMP + KILL_AT))
    # shellcheck disable=SC2086 # a list of pids
    kill -KILL $victims
    echo "[kill] instance 1 (pids $victims) killed with SIGKILL at $(date +%T), ${KILL_AT} s into the hold" >&2
) &
KILLER=$!

"$BENCH" run --port "$NPORT" --users "$USERS" --ramp "${RAMP}s" --hold "${HOLD}s" \
    --scale "$SCALE" --seed "$SEED" --server-pid "$CONDUITD_PID" --nginx-pid "$NGINX_PID" \
    ${PG_DATA:+--pg-data "$PG_DATA"} ${JSON:+--json "$JSON"}
rc=$?
wait "$KILLER"
# What nginx saw of the dead instance, by kind.
echo "nginx's error log, by kind:"
sed -E -e 's/^.*\[(error|warn)\] [0-9#]+: (\*[0-9]+ )?//' -e 's/, client:.*//' "$T/nginx/error.log" |
    sort | uniq -c | sort -rn
exit $rc
