#!/bin/sh
# A worker stuck in a busy loop (/debug/spin, a test-only hook) stops its
# heartbeat: the master kills it after --timeout and replaces it, while the
# other worker keeps serving a load of kept-alive clients.  Only the stuck
# worker's connections may fail.  The status port answers meanwhile, and
# /metrics counts the kill by its cause.
# The kill's time is measured alone (t/lib.sh), not beside the rest of the
# suite.
EXCLUSIVE=1
. "$top_srcdir/t/lib.sh"
has_test_hooks || skip "built without --enable-test-hooks"

conduitd_start -w 2 --timeout 2 --status-listen 127.0.0.1:0
status_base
wait_for 5 workers_are 2
before=$(worker_pids | sort | tr '\n' ' ')
load_start stuck -w -c 8 -d 6 -r 400 -u /healthz -t 8000 -o "$T/stuck.csv"
stuck_load=$LOAD_PID
# Kept-alive connections stay with the worker that accepted them (all of
# them may sit on the one that gets stuck); new connections show whether
# the instance as a whole keeps serving.
load_start fresh -c 4 -d 6 -r 200 -u /healthz -t 8000 -o "$T/fresh.csv"
wait_for 5 lines_at_least "$T/stuck.csv" 50 # the load runs
curl -s --max-time 30 -o /dev/null "$BASE/debug/spin?ms=20000" &
spin=$!
t_stuck=$(ms_now)
sleep 0.3
is "a scrape while a worker is stuck is answered" \
    "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$SBASE/metrics")" 200
wait_for 6 grep -q 'sent no heartbeat' "$T/conduitd.log"
t_killed=$(ms_now)
check "the master notices the stuck worker" grep -q 'sent no heartbeat .*killing it with SIGKILL' "$T/conduitd.log"
stuck=$(sed -n 's/.*(pid \([0-9]*\)) sent no heartbeat.*/\1/p' "$T/conduitd.log" | head -n 1)
ms=$((t_killed - t_stuck))
note "stuck worker (pid $stuck) killed $ms ms after it stopped"
check "killed after the 2 s timeout, not long after" [ "$ms" -ge 1500 -a "$ms" -le 5000 ]
wait "$spin"
wait_for 3 workers_are 2
is "it is replaced" "$(worker_count)" 2
curl -s --max-time 5 "$SBASE/metrics" >"$T/metrics.txt"
check "/metrics counts one heartbeat kill" grep -qx 'conduitd_heartbeat_kills_total 1' "$T/metrics.txt"
check "and one exit by the cause heartbeat" grep -qx 'conduitd_worker_exits_total{cause="heartbeat"} 1' "$T/metrics.txt"
check "by a new process" [ "$(worker_pids | sort | tr '\n' ' ')" != "$before" ]
load_wait fresh
load_wait stuck "$stuck_load"
others=$(printf '%s' "$L_fail_pids" | tr ',' '\n' | grep -v "^$stuck:" | grep -v '^none$' | tr '\n' ' ')
# CSV: end ms, status, latency, Retry-After, the pid that answered.
served=$(awk -F, -v a="$t_stuck" -v b="$t_killed" -v p="$stuck" \
    '$1 > a + 200 && $1 < b && $2 == 200 && $5 != p' "$T/stuck.csv" | wc -l)
fresh=$(awk -F, -v a="$t_stuck" -v b="$t_killed" '$1 > a + 200 && $1 < b && $2 == 200' "$T/fresh.csv" | wc -l)
note "while one worker was stuck: $served kept-alive requests served by the other, $fresh on new connections; failures by pid: $L_fail_pids"
check "the other worker kept serving while one was stuck ($fresh on new connections)" [ "$fresh" -gt 100 ]
is "no failure on the healthy worker" "${others:-}" ""
is "no failure on a connection of unknown worker" "$L_fail_unknown" 0
check "no request answered other than 200" [ "$L_s2xx" -eq "$L_ok" ]
done_testing
