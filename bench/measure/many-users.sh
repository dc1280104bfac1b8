#!/bin/sh
# bench/measure/many-users.sh CONNINFO [USERS]: one conduit-bench command offering
# USERS virtual users (default 60000, docs/workload.md's), each on its own
# keep-alive connection, past what one process may hold (its open file
# limit: conduit-bench spreads them over as many generator processes as it
# needs), and whether the server held them.
#
# LAYOUT=direct (default): one conduitd master of WORKERS workers (default
# 4: each worker is a process with the same file limit) with --reuseport
# (the kernel spreads connections evenly) and --max-connections a tenth
# above its share, started here (t/lib.sh's conduitd_start), and
# `conduit-bench run` against it.
# LAYOUT=nginx: `conduit-bench compare --instances INSTANCES` (default 2)
# starts INSTANCES masters of WORKERS / INSTANCES workers (WORKERS default
# 2 here) behind nginx least_conn, with as many nginx workers as the
# users need, and plays the one level.
#
# Then the responses conduit-bench counted (in all its processes) against
# those the conduitd workers logged as they exited: equal but for the
# readiness probes, which are counted and named.
#
# RAMP (default 90) and HOLD (60) seconds, SETTLE_MAX (60), SCALE (1), SEED
# (1), PROFILE (the default), POOL (4), PG_DATA (for PostgreSQL's CPU and
# memory), OUT (where reports go, default .).  The database must be seeded
# at SCALE (script/seed, conduit-seed --bcrypt-cost 4 keeps logins cheap).
# 60,000 users are far past this project's 2-core capacity: what this
# shows is that they were offered and how the server fared.  Not part of
# `make check` (t/integration/bench_procs.sh is its pass/fail test).
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$top_srcdir/bench/measure/lib.sh"
[ $# -ge 1 ] || { echo "usage: $0 CONNINFO [USERS]" >&2; exit 2; }
DB=$1
USERS=${2:-60000}
LAYOUT=${LAYOUT:-direct}
RAMP=${RAMP:-90} HOLD=${HOLD:-60} SETTLE_MAX=${SETTLE_MAX:-60}
SCALE=${SCALE:-1} SEED=${SEED:-1} POOL=${POOL:-4} OUT=${OUT:-.}
PROFILE=${PROFILE:-$top_srcdir/bench/profiles/default.json}
for f in "$CONDUITD" "$BENCH"; do
    [ -x "$f" ] || bail "$f is missing (script/build)"
done
mkdir -p "$OUT"
L="--users $USERS --ramp ${RAMP}s --hold ${HOLD}s --settle-max ${SETTLE_MAX}s"
D="--scale $SCALE --seed $SEED --profile $PROFILE"
served() {
    cat "$@" | sed -n 's/.*exiting after \([0-9]*\) response(s).*/\1/p' | awk '{ n += $1 } END { print n + 0 }'
}

case "$LAYOUT" in
direct)
    WORKERS=${WORKERS:-4}
    MAXC=$(((USERS + WORKERS - 1) / WORKERS * 11 / 10))
    conduitd_start -w "$WORKERS" --pool "$POOL" --reuseport --max-connections "$MAXC"
    JSON="$OUT/many-users-direct.json"
    # shellcheck disable=SC2086 # lists of flags
    "$BENCH" run --port "$PORT" $L $D --server-pid "$CONDUITD_PID" \
        ${PG_DATA:+--pg-data "$PG_DATA"} --json "$JSON"
    rc=$?
    stop_pid "$CONDUITD_PID"
    CONDUITD_PID=
    cp "$T/conduitd.log" "$OUT/many-users-direct-conduitd.log"
    s=$(served "$T/conduitd.log")
    counted=$(jq '.totals.responses + .totals.probe_requests' "$JSON")
    ;;
nginx)
    WORKERS=${WORKERS:-2} INSTANCES=${INSTANCES:-2}
    # shellcheck disable=SC2086
    "$BENCH" compare --db "$DB" --workers "$WORKERS" --instances "$INSTANCES" --pool "$POOL" \
        --start "$USERS" --max-users "$USERS" --max-levels 1 --no-rerun --warmup 0 --no-ceiling \
        $L $D ${PG_DATA:+--pg-data "$PG_DATA"} --out "$OUT" --conduitd "$CONDUITD"
    rc=$?
    dir=$(ls -d "$OUT"/compare-* | tail -n 1)
    s=$(served "$dir"/conduitd-*.log)
    counted=$(jq '.totals.responses + .totals.probe_requests + ([.configurations[].server_probe_requests] | add)' "$dir/compare.json")
    ;;
*)
    bail "LAYOUT=$LAYOUT: direct or nginx"
    ;;
esac
echo "responses: conduit-bench counted $counted (with its dataset probe and the readiness probes of compare), conduitd's workers logged $s"
[ "$LAYOUT" = direct ] && echo "  (besides conduitd_start's readiness GET /healthz, one when the workers answer at once)"
exit $rc
