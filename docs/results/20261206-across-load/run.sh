#!/bin/sh
# run.sh NAME USERS: the notification delay from one instance to another
# under load.  Two instances of conduitd on the seeded cluster of
# script/seed (./var/pg, port 54329), A on port 18555 and B on 18556, each
# -w 1 --pool 4 --cache on (two workers in all: one a core here); one
# conduit-bench run of USERS/2 users against each (20 s ramp, HOLD hold,
# default 3m); 40 s into the run, when both have ramped, t/coherence.py
# --across A B: PAIRS (default 1000) write-then-read pairs, each write
# through A, each read polled on B until it shows the write (the delay is
# from the write's answer to B's right answer, B's own response time
# under load included: an upper bound), then read again and never older.
# Into OUT (default: this folder): NAME-a.txt, NAME-b.txt (the two runs),
# NAME-coh.txt (the pairs), NAME-healthz.txt (every worker's /healthz:
# the notification delays each worker measured itself).
cd "$(dirname "$0")/../../.." || exit 1
OUT=${OUT:-docs/results/20261206-across-load}
NAME=$1 USERS=$2
HALF=$((USERS / 2))
PGH=$PWD/var/pg/run
DB="host=$PGH port=54329 user=postgres dbname=conduit"
start() { # PORT LOG
    build-release/conduitd -b 127.0.0.1:"$1" --dev --allow-root -w 1 --pool 4 --cache on \
        --log "$OUT/$NAME-$2.log" --db "$DB" </dev/null >/dev/null 2>&1 &
}
start 18555 a
A=$!
start 18556 b
B=$!
sleep 3
for p in 18555:a:$A 18556:b:$B; do
    port=${p%%:*} rest=${p#*:}
    build-release/conduit-bench run --users "$HALF" --ramp 20s --hold "${HOLD:-3m}" --port "$port" \
        --server-pid "${rest#*:}" --pg-data "$PWD/var/pg/data" --json "$OUT/$NAME-${rest%%:*}.json" \
        --out "$OUT" >"$OUT/$NAME-${rest%%:*}.txt" 2>&1 &
    eval "GEN_${rest%%:*}=\$!"
done
sleep 40
python3 t/coherence.py --across http://127.0.0.1:18555 http://127.0.0.1:18556 \
    --pairs "${PAIRS:-1000}" --threads 4 --seed "$NAME$$" --bound-ms 2000 >"$OUT/$NAME-coh.txt" 2>&1
echo "coherence.py exit $?" >>"$OUT/$NAME-coh.txt"
for port in 18555 18556; do
    curl -s http://127.0.0.1:$port/healthz
    echo
done >"$OUT/$NAME-healthz.txt"
wait "$GEN_a" "$GEN_b"
kill -TERM "$A" "$B"
wait "$A" "$B"
