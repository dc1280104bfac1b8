#!/bin/sh
# bench/measure/metrics-ir.sh BASELINE_CONDUITD: the counting's cost in
# instructions, which a busy machine does not blur as it blurs time.
# One worker of each conduitd (this build's and BASELINE_CONDUITD, built
# without the metrics) runs under valgrind's callgrind; t/loadgen sends
# requests on one kept-alive connection for D1, then in another run D2
# seconds, and (Ir2 - Ir1) / (n2 - n1) is the worker's instructions per
# request, its start and exit cancelled out.  Routes: /healthz and
# /api/articles?limit=10 on a database seeded at scale 0.002.
# Run from build/:  top_srcdir=.. sh ../bench/measure/metrics-ir.sh baseline/conduitd
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
[ $# -eq 1 ] || { echo "usage: $0 BASELINE_CONDUITD" >&2; exit 2; }
BASELINE=$1
D1=${D1:-3} D2=${D2:-9}
SEED_BIN=${CONDUIT_SEED:-$(pwd)/conduit-seed}
. "$top_srcdir/t/lib.sh"
command -v valgrind >/dev/null || skip "valgrind is not installed"
OWN=$CONDUITD

PG_NO_SCHEMA=1 pg_start
"$SEED_BIN" --scale 0.002 --bcrypt-cost 4 --db "$DB" -q >"$T/seed.out" 2>&1 ||
    bail "conduit-seed failed: $(cat "$T/seed.out")"

# ir BINARY URL SECONDS: the worker's instructions (callgrind's total) and
# the requests answered.
ir() {
    mkdir -p "$T/cg" && rm -f "$T/cg"/*
    : >"$T/conduitd.log"
    valgrind --tool=callgrind --callgrind-out-file="$T/cg/out.%p" "$1" -w 1 -b 127.0.0.1:0 \
        --dev --allow-root --log "$T/conduitd.log" --db "$DB" </dev/null >"$T/vg.out" 2>&1 &
    CONDUITD_PID=$!
    wait_for 60 grep -q 'listening on ' "$T/conduitd.log" || bail "no start: $(cat "$T/vg.out")"
    PORT=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$T/conduitd.log" | head -n 1)
    wait_for 60 grep -q 'worker(s) ready' "$T/conduitd.log" || bail "no worker ready"
    "$LOADGEN" -p "$PORT" -c 1 -k -d "$3" -u "$2" >"$T/load.out" 2>&1
    kill -TERM "$CONDUITD_PID"
    wait "$CONDUITD_PID"
    CONDUITD_PID=
    # The worker's file is the one that is not the master's.
    master=$(sed -n 's/.*\[\([0-9]*\)\] master.*/\1/p' "$T/conduitd.log" | head -n 1)
    ir=$(grep -h '^totals:' $(ls "$T"/cg/out.* | grep -v "out\.$master\$") | awk '{ print $2 }')
    echo "$ir $(sed -n 's/.* ok=\([0-9]*\) .*/\1/p' "$T/load.out")"
}

printf '%-24s %-10s %14s\n' route binary "Ir/request"
for url in /healthz '/api/articles?limit=10'; do
    for side in base branch; do
        bin=$OWN
        [ "$side" = base ] && bin=$BASELINE
        a=$(ir "$bin" "$url" "$D1")
        b=$(ir "$bin" "$url" "$D2")
        echo "# $url $side: $a, $b (Ir, requests)" >&2
        printf '%-24s %-10s %14.0f\n' "$url" "$side" "$(echo "$a $b" | awk '{ print ($3 - $1) / ($4 - $2) }')"
    done
done
