#!/bin/sh
# bench/measure/cache-ab.sh CONNINFO OUTDIR: conduitd with --cache off against
# --cache on, side by side, under the virtual users of docs/workload.md.
#
# Each measurement starts a fresh master (WORKERS workers, default 2; pool
# POOL, default 4; t/lib.sh's conduitd_start: 127.0.0.1, a free port,
# --dev) against the seeded database CONNINFO, measures it with
# conduit-bench, keeps every worker's /healthz (cache hits, misses,
# notification delay) and stops it.
#   MODE=search (default): a capacity search for off, then for on
#     (START users, default 12000; GROWTH 1.2; LEVELS 6 levels at most).
#   MODE=run: ROUNDS rounds (default 2) of off then on at USERS users
#     (default 15000): interleaved, so that a drift of the machine's speed
#     falls on both sides.
# RAMP and HOLD (seconds; default 20 and 60); PG_DATA: the cluster's data
# folder, for PostgreSQL's CPU and memory; CONDUITD_ARGS: more flags for
# both sides (the cache size: "--cache-size 60000").  The database must be
# seeded at SCALE (default 1) and SEED (default 1).  Reports go to OUTDIR:
# <mode>.txt and <mode>.json (search) or <mode>-<round>.* (run).
# conduit-bench, conduitd and PostgreSQL share this machine's cores: compare
# only the figures of one run.
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$top_srcdir/bench/measure/lib.sh"
[ $# -eq 2 ] || { echo "usage: $0 CONNINFO OUTDIR" >&2; exit 2; }
DB=$1 OUT=$2
MODE=${MODE:-search} WORKERS=${WORKERS:-2} POOL=${POOL:-4}
RAMP=${RAMP:-20} HOLD=${HOLD:-60} SCALE=${SCALE:-1} SEED=${SEED:-1}
mkdir -p "$OUT" || exit 2

# measure NAME CACHE conduit-bench-args...
measure() {
    name=$1 cache=$2
    shift 2
    # shellcheck disable=SC2086 # CONDUITD_ARGS is a list of flags
    conduitd_start -w "$WORKERS" --pool "$POOL" --cache "$cache" ${CONDUITD_ARGS:-}
    echo "== $name: conduitd -w $WORKERS --cache $cache ${CONDUITD_ARGS:-} (pid $CONDUITD_PID)" >&2
    "$BENCH" "$@" --port "$PORT" --scale "$SCALE" --seed "$SEED" --ramp "${RAMP}s" \
        --hold "${HOLD}s" --server-pid "$CONDUITD_PID" ${PG_DATA:+--pg-data "$PG_DATA"} \
        --json "$OUT/$name.json" --out "$OUT" >"$OUT/$name.txt" 2>&1
    # New connections land on any worker: ask until each has answered.
    for _ in $(seq 1 $((WORKERS * 8))); do
        curl -s "$BASE/healthz"
        echo
    done | sort -u >"$OUT/$name-healthz.txt"
    stop_pid "$CONDUITD_PID"
    CONDUITD_PID=
    mv "$T/conduitd.log" "$OUT/conduitd-$name.log"
    grep -E '^(users [0-9]+:|capacity:)' "$OUT/$name.txt" | sed "s/^/$name: /" >&2
}

case $MODE in
search)
    for cache in off on; do
        measure "cache-$cache" "$cache" search --start "${START:-12000}" \
            --growth "${GROWTH:-1.2}" --max-levels "${LEVELS:-6}"
    done
    ;;
run)
    for round in $(seq 1 "${ROUNDS:-2}"); do
        for cache in off on; do
            measure "$cache-$round" "$cache" run --users "${USERS:-15000}"
            sleep 5
        done
    done
    ;;
*)
    echo "$0: MODE is search or run" >&2
    exit 2
    ;;
esac
