#!/bin/sh
# conduit-bench against a real conduitd on a real PostgreSQL seeded by
# conduit-seed at a tiny scale (0.002: 200 users, 1,000 articles).  A
# short capacity search (a few seconds a level) must produce a complete
# report: levels judged, latency per endpoint, CPU and memory by group,
# the machine.  The seeded names the generator computes must be the ones
# the seeder loaded (logins, articles and profiles answer without errors),
# and the requests it counted must be exactly the ones the server counted.
# Then the open-loop rate, the SQL ceiling, and bad input.
. "$top_srcdir/t/lib.sh"
. "$top_srcdir/t/bench_server.sh"
# The source tree's profile and template, wherever the build is.
P="--profile $top_srcdir/bench/profiles/default.json"
bench_server_start
# One /healthz from conduitd_start reaches the server besides the bench.
PROBES=1

# ---------------------------------------------------------------- bad input
"$BENCH" run $P --port "$PORT" >"$T/out" 2>&1
is "run without --users exits 2" "$?" 2
check "saying so" grep -q 'run needs --users' "$T/out"
"$BENCH" run $P --users 5 --host 10.0.0.1 >"$T/out" 2>&1
is "a target outside loopback is refused" "$?" 2
check "saying why" grep -q 'want a numeric loopback address' "$T/out"
"$BENCH" run --users 5 --hold 3 --profile "$T/none.json" >"$T/out" 2>&1
is "a missing profile exits 2" "$?" 2
check "naming the file" grep -q "profile $T/none.json: No such file" "$T/out"
printf '{"session_start": [{"method": "GET", "path": "/healthz"}],
 "pages": [{"name": "x", "weight": 1, "requests": [{"method": "GET", "path": "/{who}"}]}]}' \
    >"$T/bad.json"
"$BENCH" run --users 5 --profile "$T/bad.json" >"$T/out" 2>&1
is "a bad profile exits 2" "$?" 2
check "naming the place" grep -q 'pages\[0\].requests\[0\].path: unknown variable {who}' "$T/out"
"$BENCH" search $P --hold 2x >"$T/out" 2>&1
is "a bad duration exits 2" "$?" 2
check "naming the flag" grep -q -- '--hold 2x: want a duration' "$T/out"
"$BENCH" rate $P --rps 10 --procs 2 >"$T/out" 2>&1
is "rate in several processes is refused" "$?" 2
check "saying which modes can" grep -q 'only run, search, compare and experiment use several processes' "$T/out"
"$BENCH" run $P --users 5 --procs 0 >"$T/out" 2>&1
is "--procs 0 is refused" "$?" 2
check "naming the range" grep -q -- '--procs 0: want a whole number from 1 to 24' "$T/out"
"$BENCH" run $P --users 5 --port 1 >"$T/out" 2>&1
is "a target that does not answer the probe exits 2" "$?" 2
check "saying so" grep -q 'cannot ask 127.0.0.1:1 whether it holds the dataset' "$T/out"
"$BENCH" compare $P --workers 1,zz --db "$DB" >"$T/out" 2>&1
is "a bad worker list exits 2" "$?" 2
check "naming the flag" grep -q -- '--workers 1,zz' "$T/out"
many=$(($(getconf _NPROCESSORS_ONLN) + 1))
"$BENCH" compare $P --workers 1 --db "$DB" --cores "$many" >"$T/out" 2>&1
is "more cores than the machine has exits 2" "$?" 2
check "naming the value and the machine's count" \
    grep -q -- "--cores $many: this machine has $(getconf _NPROCESSORS_ONLN)\$" "$T/out"
"$BENCH" compare $P --workers 1 >"$T/out" 2>&1
check "a flag missing is named without a dangling space" grep -q -- '--db: needs' "$T/out"

# ---------------------------------------------------------------- search
# Short think times so a few seconds hold thousands of requests; the
# criteria are docs/workload.md's, except Little's law's tolerance: timers of a
# loaded 2-core machine run late by milliseconds, which is a lot next to a
# 100 ms think time (and nothing next to 7 s).
"$BENCH" search $P --port "$PORT" --scale $S --think-mean 100ms --think-cap 1s --session 4s \
    --start 8 --max-users 32 --max-levels 5 --ramp 1s --hold 3s --settle-max 5s \
    --little-tol 25 --server-pid "$CONDUITD_PID" --pg-data "$T/pg/data" \
    --json "$T/search.json" --quiet >"$T/search.out" 2>"$T/search.err"
is "search exits 0" "$?" 0
check "prints the level table" grep -Eq '^ +1 +8 +(pass|FAIL)' "$T/search.out"
check "and the capacity" grep -q '^capacity: ' "$T/search.out"
check "the report is JSON" jq -e . "$T/search.json" >/dev/null
j() { jq -r "$@" "$T/search.json"; }
is "the machine's cores" "$(j .machine.nproc)" "$(getconf _NPROCESSORS_ONLN)"
is "the criteria are docs/workload.md's" "$(j '[.criteria.p95_ms, .criteria.p99_ms, .criteria.max_errors_pct] | join(",")')" "500,1000,1"
levels=$(j '.search.levels | length')
check "at least three levels were played ($levels)" [ "$levels" -ge 3 ]
is "the users grew by the factor" "$(j '[.search.levels[].users] | unique | join(",")')" "8,16,32"
is "the capacity is a level that passed" \
    "$(j '[.search.levels[] | select(.pass) | .users] | max // 0')" "$(j .search.users_passed)"
is "every failed level says why" "$(j '[.search.levels[] | select(.pass | not) | select(.why == "")] | length')" 0
is "percentiles are ordered in every level" \
    "$(j '[.search.levels[].latency | select(.p50_ms <= .p95_ms and .p95_ms <= .p99_ms and .p99_ms <= .max_ms)] | length')" "$levels"
is "every level finished requests" "$(j '[.search.levels[] | select(.requests > 100)] | length')" "$levels"
is "Little's law figures are there" "$(j '[.search.levels[].little | select(.expected_rps > 0 and .pages > 0)] | length')" "$levels"
# The generator's names are the seeder's: no login, article or profile fails.
for ep in login user article comments profile "list author" "list tag" feed; do
    is "$ep: requests, no errors" \
        "$(j "[.search.levels[].endpoints[\"$ep\"] | (.count > 0) and (.errors | add == 0)] | all")" true
done
is "no error of any kind" "$(j '[.search.levels[].errors | add] | add')" 0
L=.search.levels[0].accounting
for g in conduitd postgres conduit-bench; do
    check "CPU seconds of $g" [ "$(j "$L.cpu_s[\"$g\"] > 0")" = true ]
    check "PSS of $g" [ "$(j "$L.pss_mean_mb[\"$g\"] > 0 and $L.pss_max_mb[\"$g\"] >= $L.pss_mean_mb[\"$g\"]")" = true ]
    check "RSS of $g is at least its PSS" [ "$(j "$L.rss_mean_mb[\"$g\"] >= $L.pss_mean_mb[\"$g\"]")" = true ]
done
check "CPU shares add up to 1" [ "$(j "([$L.cpu_share[]] | add) - 1 | fabs < 0.01")" = true ]
check "a memory sample a second" [ "$(j "$L.memory_samples >= 3")" = true ]
check "PostgreSQL connections: 1 to workers x pool" \
    [ "$(j "$L.pg_client_connections >= 1 and $L.pg_client_connections <= 4")" = true ]
check "the generator's CPU per request is reported" \
    [ "$(j '.search.levels[0] | .generator_us_per_request > 0 and .server_us_per_request > 0')" = true ]

# Requests counted by the bench against those counted by the server: the
# workers log their count as they exit.
stop_pid "$CONDUITD_PID"
CONDUITD_PID=
served=$(sed -n 's/.*exiting after \([0-9]*\) response(s).*/\1/p' "$T/conduitd.log" |
    awk '{ n += $1 } END { print n + 0 }')
answered=$(j .totals.responses)
check "the bench counted responses ($answered)" [ "$answered" -gt 1000 ]
probed=$(j .totals.probe_requests)
check "the dataset was probed before the levels ($probed requests)" [ "$probed" -ge 5 ]
is "the server answered exactly those (and the probes)" "$served" "$((answered + probed + PROBES))"
is "no request was left unanswered" "$(j .totals.requests)" "$answered"

# ---------------------------------------------------------------- rate, ceiling
conduitd_start -w 2 --pool 2
"$BENCH" rate $P --port "$PORT" --scale $S --rps 200 --duration 3s --warmup 1s --connections 16 \
    --server-pid "$CONDUITD_PID" --json "$T/rate.json" --quiet >"$T/rate.out" 2>&1
is "rate exits 0" "$?" 0
check "an open-loop report" grep -q 'open loop, latency from the intended send time' "$T/rate.out"
check "it offered 200 req/s (within 5 %)" \
    [ "$(jq '.level.rps > 190 and .level.rps < 210' "$T/rate.json")" = true ]
"$BENCH" ceiling $P --db "$DB" --scale $S --duration 2s --warmup 1s --ceiling-connections 2 \
    --json "$T/ceiling.json" --quiet >"$T/ceiling.out" 2>&1
is "ceiling exits 0" "$?" 0
check "gives a statement rate" [ "$(jq '.ceiling_rps > 100' "$T/ceiling.json")" = true ]
check "with PostgreSQL's CPU" [ "$(jq '.level.accounting.cpu_s.postgres > 0' "$T/ceiling.json")" = true ]
is "every statement of the mix ran without error" "$(jq '.level.errors | add' "$T/ceiling.json")" 0
stop_pid "$CONDUITD_PID"
CONDUITD_PID=

# ---------------------------------------------------------------- compare
# Two configurations, one level each: 1 worker alone, and 2 instances of
# 1 worker behind nginx.  compare starts and stops them itself.
command -v nginx >/dev/null || PATH=$PATH:/usr/sbin
if command -v nginx >/dev/null && command -v gnuplot >/dev/null; then
    mkdir "$T/cmp"
    "$BENCH" compare $P --db "$DB" --scale $S --workers 1,2 --instances 1 --pool 2 --no-ceiling \
        --think-mean 100ms --think-cap 1s --session 4s --start 8 --max-levels 1 --ramp 1s \
        --hold 2s --warmup 0 --little-tol 25 --repeat 2 \
        --out "$T/cmp" --quiet >"$T/cmp.out" 2>"$T/cmp.err"
    is "compare exits 0" "$?" 0
    # A relative --out, as a person types it (nginx resolves against its prefix).
    (cd "$T" && "$BENCH" compare $P --db "$DB" --scale $S --workers 2 --instances 2 --pool 2 \
        --no-ceiling --nginx-template "$top_srcdir/etc/nginx-upstream.conf.in" \
        --think-mean 100ms --think-cap 1s --session 4s --start 8 --max-levels 1 --ramp 1s \
        --hold 2s --warmup 0 --little-tol 25 --repeat 1 \
        --out cmp --quiet >>"$T/cmp.out" 2>>"$T/cmp.err")
    is "compare with 2 instances behind nginx exits 0" "$?" 0
    if grep -q '^conduit-bench: .*\(exited\|not found\|not ready\|does not answer\)' "$T/cmp.err"; then
        fail "every configuration started"
        sed -n 's/^conduit-bench: /# /p' "$T/cmp.err"
    else
        pass "every configuration started"
    fi
    check "prints the table" grep -Eq '^1x1 +1 +[0-9]+ ' "$T/cmp.out"
    check "with the nginx configuration" grep -Eq '^2x1 +2 +[0-9]+ ' "$T/cmp.out"
    check "and the chart" grep -q '^chart: .*compare.png' "$T/cmp.out"
    # Two repeats, interleaved: the median's table, the range and the verdict.
    check "the repeats' ranges" grep -Eq '^repeats \(2 each, interleaved\): users passed, median \(lowest to highest\): 1x1 [0-9]+ \([0-9]+ to [0-9]+\), 1x2 ' "$T/cmp.out"
    check "and a verdict" grep -Eq '^1x[12] against 1x[12]: (more users, a difference the repeats show|no difference measured)' "$T/cmp.out"
    check "the repeats interleave" sh -c "grep -E '^(==== repeat|==== 1x)' '$T/cmp.err' | head -n 6 | tr '\n' ';' | grep -q '^==== repeat 1 of 2;==== 1x1: .*;==== repeat 1 of 2;==== 1x2: .*;==== repeat 2 of 2;==== 1x1: '"
    for f in "$T"/cmp/compare-*/compare.png; do
        check "the chart is a PNG" sh -c "head -c 8 '$f' | od -c | grep -q 'P   N   G'"
    done
    first=$(ls -d "$T"/cmp/compare-* | head -n 1)
    last=$(ls -d "$T"/cmp/compare-* | tail -n 1)
    is "one configuration per worker count" "$(jq '.configurations | length' "$first/compare.json")" 2
    is "each searched" "$(jq '[.configurations[].search.levels | length] | add' "$first/compare.json")" 2
    is "twice" "$(jq -c '[.configurations[].repeats | length]' "$first/compare.json")" '[2,2]'
    is "the users per worker" "$(jq '.configurations[1] | .users_per_worker * 2 == .users_passed' "$first/compare.json")" true
    # nginx's processes are found and measured: its PSS, or its CPU (a 2 s
    # level of a few hundred requests may cost nginx less than one 10 ms
    # tick of /proc's CPU times on an idle machine, and read 0).
    check "nginx is accounted (its PSS or its CPU)" \
        [ "$(jq '.configurations[0].search.levels[0].accounting | .cpu_s.nginx > 0 or .pss_mean_mb.nginx > 0' "$last/compare.json")" = true ]
    is "nginx's errors: none" "$(jq '.configurations[0].search.levels[0].errors | add' "$last/compare.json")" 0
    # Every response it counted is one its servers counted (nginx answers
    # nothing itself when all goes well), with its probes and theirs.
    for d in "$first" "$last"; do
        served=$(cat "$d"/conduitd-*.log $(ls "$d"/r*/conduitd-*.log 2>/dev/null) | sed -n 's/.*exiting after \([0-9]*\) response(s).*/\1/p' |
            awk '{ n += $1 } END { print n + 0 }')
        counted=$(jq '.totals.responses + .totals.probe_requests + ([.configurations[].repeats[].server_probe_requests] | add)' "$d/compare.json")
        is "compare: the servers answered exactly what it counted ($(basename "$d"))" "$served" "$counted"
    done
    # Nothing it started is left running.
    for log in "$T"/cmp/compare-*/conduitd-*.log; do
        pid=$(sed -n 's/.*\[\([0-9]*\)\] master notice: listening.*/\1/p' "$log" | head -n 1)
        check "conduitd $pid stopped" sh -c "! kill -0 $pid 2>/dev/null"
    done
    check "nginx stopped" sh -c "! kill -0 \$(cat '$last/nginx.pid' 2>/dev/null || echo 1) 2>/dev/null || [ ! -s '$last/nginx.pid' ]"
else
    note "nginx or gnuplot missing: compare not tested (script/deps installs them)"
fi
done_testing
