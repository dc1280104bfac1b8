#!/bin/sh
# conduit-bench tells the truth about what it measured, against a real
# conduitd on a real PostgreSQL seeded at a tiny scale (0.002):
#  - the open loop (`rate`) measures each request from its intended send
#    time and sends it then: the p50 of a trivial endpoint is the one
#    `run` mode sees, whatever the rate;
#  - the load average "at start" is the one before the level, and the one
#    at the end is reported too;
#  - a --scale (or --seed) that is not the server's dataset is refused
#    before any level, naming the problem and the likely scale.
. "$top_srcdir/t/lib.sh"
. "$top_srcdir/t/bench_server.sh"
bench_server_start

# ---------------------------------------------------------------- rate's p50
# A trivial endpoint: GET /api/tags, after a session start that only asks
# /healthz.  `run` mode's p50 is the reference: a closed loop measures
# from the first byte sent.
cat >"$T/tags.json" <<'JSON'
{"name": "tags", "think_mean": "50ms", "think_cap": "200ms", "session": "1h", "timeout": "10s",
 "session_start": [{"method": "GET", "path": "/healthz", "endpoint": "healthz"}],
 "pages": [{"name": "tags", "weight": 1,
            "requests": [{"method": "GET", "path": "/api/tags", "endpoint": "tags"}]}]}
JSON
P="--profile $T/tags.json --port $PORT --scale $S --quiet"
# The latencies are measured alone (t/lib.sh), not beside the rest of the suite.
exclusive
# (Little's law's tolerance as bench.sh's: timers of a loaded machine run
# late by milliseconds, a lot next to a 50 ms think time.)
"$BENCH" run $P --users 4 --ramp 0 --hold 4s --little-tol 25 --json "$T/run.json" \
    >"$T/run.out" 2>&1
is "run exits 0" "$?" 0
ref=$(jq '.level.endpoints.tags.p50_ms' "$T/run.json")
note "run mode: p50 of GET /api/tags $ref ms"
for rps in 20 200; do
    "$BENCH" rate $P --rps $rps --duration 4s --warmup 1s --connections 8 \
        --json "$T/rate-$rps.json" >"$T/rate-$rps.out" 2>&1
    is "rate $rps exits 0" "$?" 0
    p50=$(jq '.level.endpoints.tags.p50_ms' "$T/rate-$rps.json")
    check "rate $rps: p50 $p50 ms within 2 ms of run mode's $ref ms" \
        fcmp "$(awk -v a="$p50" -v b="$ref" 'BEGIN { d = a - b; print d < 0 ? -d : d }')" "<=" 2
    check "rate $rps: the rate was offered" \
        [ "$(jq ".level.rps > $rps * 0.9 and .level.rps < $rps * 1.1" "$T/rate-$rps.json")" = true ]
done

# ---------------------------------------------------------------- load average
# Read from the file CONDUIT_BENCH_LOADAVG names (as /proc/loadavg): it
# changes once the hold has begun, so the figure "at start" must be the
# one from before the level and the one at the end the later one.
echo "17.25 1.00 1.00 1/100 1" >"$T/loadavg"
CONDUIT_BENCH_LOADAVG="$T/loadavg" "$BENCH" run --profile "$T/tags.json" --port "$PORT" \
    --scale $S --users 2 --ramp 0 --hold 3s --json "$T/load.json" >"$T/load.out" 2>"$T/load.err" &
bpid=$!
wait_for 10 grep -q ' hold ' "$T/load.err" || fail "the hold began"
echo "3.50 1.00 1.00 1/100 1" >"$T/loadavg"
wait "$bpid"
is "run exits 0" "$?" 0
is "the JSON's load at start is before the level" "$(jq .machine.loadavg_1m_at_start "$T/load.json")" 17.25
is "the JSON's load at the end" "$(jq .machine.loadavg_1m_at_end "$T/load.json")" 3.5
check "the text says both" grep -q 'load average 17.25 at start, 3.50 at end' "$T/load.out"

# ---------------------------------------------------------------- scale probe
D="--port $PORT --profile $top_srcdir/bench/profiles/default.json --users 5 --ramp 0 --hold 2s --quiet"
"$BENCH" run $D >"$T/probe1.out" 2>&1
is "the default --scale 1 against a 0.002 database exits 2" "$?" 2
check "naming the missing user" grep -q 'user 100000 .* cannot log in' "$T/probe1.out"
check "and the likely scale" grep -q 'looks seeded at --scale 0.002' "$T/probe1.out"
check "before any level" sh -c "! grep -q 'users 5: ' '$T/probe1.out'"
"$BENCH" run $D --scale 0.001 >"$T/probe2.out" 2>&1
is "a --scale below the server's exits 2" "$?" 2
check "saying it holds more users" grep -q 'user 101 .* exists' "$T/probe2.out"
check "and the likely scale" grep -q 'looks seeded at --scale 0.002' "$T/probe2.out"
"$BENCH" rate --port "$PORT" --profile "$top_srcdir/bench/profiles/default.json" --rps 10 \
    --duration 1s --warmup 0 --connections 2 --scale 0.01 --quiet >"$T/probe3.out" 2>&1
is "rate probes too" "$?" 2
check "with the likely scale" grep -q 'looks seeded at --scale 0.002' "$T/probe3.out"
"$BENCH" run $D --scale $S --seed 2 >"$T/probe4.out" 2>&1
is "another --seed exits 2" "$?" 2
check "saying user 1 cannot log in" grep -q 'user 1 .* cannot log in' "$T/probe4.out"
# (Short think times, so that 2 s hold requests: 7 s ones may hold none.)
"$BENCH" run $D --scale $S --think-mean 100ms --think-cap 1s --little-tol 25 \
    --json "$T/ok.json" >"$T/probe5.out" 2>&1
is "the right scale runs" "$?" 0
is "with no error" "$(jq '.level.errors | add' "$T/ok.json")" 0
done_testing
