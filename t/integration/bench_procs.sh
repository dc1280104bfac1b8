#!/bin/sh
# conduit-bench's users spread over several generator processes, against
# a real conduitd on a real PostgreSQL seeded at a tiny scale (0.002):
# one command, N processes, each with its own source addresses and file
# limit; the level's figures are the exact merge of theirs, and the
# responses counted are exactly the ones the server counted.  Beyond one
# process's open file limit the processes are added by themselves.
. "$top_srcdir/t/lib.sh"
. "$top_srcdir/t/bench_server.sh"
command -v ss >/dev/null || skip "ss (iproute2) is not installed"
bench_server_start
# conduitd_start's /healthz reaches the server besides the bench.
PROBES=1
P="--profile $top_srcdir/bench/profiles/default.json --port $PORT --scale $S"
# Short think times so a few seconds hold thousands of requests (and
# Little's law's tolerance as bench.sh's, for timers late by milliseconds).
Q="--think-mean 100ms --think-cap 1s --session 3s --little-tol 25"

# ---------------------------------------------------------------- three processes
"$BENCH" run $P $Q --procs 3 --users 60 --ramp 1s --hold 4s --server-pid "$CONDUITD_PID" \
    --json "$T/run.json" >"$T/run.out" 2>"$T/run.err" &
bpid=$!
wait_for 20 grep -q ' hold ' "$T/run.err" || fail "the hold began"
# Who holds the users' connections: three processes, one source address each.
ss -tnp state established "( dport = :$PORT )" >"$T/ss.txt" 2>&1
wait "$bpid"
is "run exits 0" "$?" 0
j() { jq -r "$@" "$T/run.json"; }
is "three generator processes" "$(j .level.generator_processes)" 3
srcs=$(awk 'NR > 1 { split($3, a, ":"); print a[1] }' "$T/ss.txt" | sort -u | tr '\n' ' ')
is "each from its own source address" "$srcs" "127.0.0.2 127.0.0.3 127.0.0.4 "
pids=$(sed -n 's/.*users:(("conduit-bench",pid=\([0-9]*\).*/\1/p' "$T/ss.txt" | sort -u | wc -l)
is "held by three processes" "$pids" 3
is "the 60 users were there" "$(j '.level.users_mean | round')" 60
is "each on its open connection at the end" "$(j .level.connections_open_at_end)" 60
is "the merged latency counts every response" "$(j '.level.latency.count')" "$(j .level.responses)"
is "the endpoints add up to the whole" "$(j '[.level.endpoints[].count] | add')" "$(j .level.latency.count)"
is "no error of any kind" "$(j '.level.errors | add')" 0
check "the generators' CPU is accounted" [ "$(j '.level.accounting.cpu_s["conduit-bench"] > 0')" = true ]
check "and their memory (four processes)" [ "$(j '.level.accounting.pss_mean_mb["conduit-bench"] > 0')" = true ]
check "the report says so" grep -q 'generator CPU .* in all, 3 processes, the busiest' "$T/run.out"
left=0
for p in $(sed -n 's/.*users:(("conduit-bench",pid=\([0-9]*\).*/\1/p' "$T/ss.txt" | sort -u); do
    alive "$p" && left=$((left + 1))
done
is "no generator process is left" "$left" 0

# ---------------------------------------------------------------- beyond the file limit
# A file limit of 1,600 a process (soft and hard), of which the generator
# keeps 1,024 for itself: 1,200 users need three processes.
# (Sessions of a minute: 1,200 users in 3 s sessions are never all past
# their log in at once, and the settle would wait its maximum.)
(ulimit -n 1600 && "$BENCH" search $P $Q --session 1m --start 600 --max-users 1200 --max-levels 2 \
    --no-rerun --ramp 3s --hold 4s --settle-max 30s --p95 10s --p99 10s --max-errors 50 \
    --json "$T/search.json") >"$T/search.out" 2>"$T/search.err"
is "search exits 0" "$?" 0
check "it says how many processes" grep -q '3 generator processes, up to 400 users each' "$T/search.err"
k() { jq -r "$@" "$T/search.json"; }
is "two levels, both played by 3 processes" "$(k '[.search.levels[] | .generator_processes] | join(",")')" "3,3"
is "the users were offered" "$(k '[.search.levels[] | .users_mean | round] | join(",")')" "600,1200"
is "every user connected" "$(k '[.search.levels[].errors.connect] | add')" 0
is "and held its connection" "$(k '[.search.levels[].connections_open_at_end] | join(",")')" "600,1200"

# ---------------------------------------------------------------- the server's count
stop_pid "$CONDUITD_PID"
CONDUITD_PID=
served=$(sed -n 's/.*exiting after \([0-9]*\) response(s).*/\1/p' "$T/conduitd.log" |
    awk '{ n += $1 } END { print n + 0 }')
answered=$(( $(j .totals.responses) + $(k .totals.responses) ))
probed=$(( $(j .totals.probe_requests) + $(k .totals.probe_requests) ))
check "the processes counted responses ($answered)" [ "$answered" -gt 1000 ]
is "the server answered exactly those (and the probes)" "$served" "$((answered + probed + PROBES))"
is "no request was left unanswered" "$(( $(j .totals.requests) + $(k .totals.requests) ))" "$answered"
done_testing
