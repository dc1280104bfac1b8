#!/bin/sh
# A worker whose loop is stuck stops its heartbeat: the master kills it
# after --timeout and replaces it, while the other worker keeps serving.
. "$top_srcdir/t/lib.sh"
has_test_hooks || skip "built without --enable-test-hooks"

conduitd_start -w 2 --timeout 2
wait_for 5 sh -c "[ \$(cat /proc/$CONDUITD_PID/task/*/children | wc -w) -eq 2 ]"
before=$(worker_pids | sort | tr '\n' ' ')
curl -s --max-time 30 -o /dev/null "$BASE/debug/spin?ms=20000" &
spin=$!
sleep 0.5
t0=$(date +%s%N)
served=0
for i in $(seq 1 10); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 1 "$BASE/healthz")" = 200 ] && served=$((served + 1))
done
check "the other worker serves while one is stuck ($served/10)" [ "$served" -ge 5 ]
wait_for 6 grep -q 'sent no heartbeat' "$T/conduitd.log"
t1=$(date +%s%N)
check "the master notices the stuck worker" grep -q 'sent no heartbeat .*killing it with SIGKILL' "$T/conduitd.log"
ms=$(( (t1 - t0) / 1000000 + 500 ))
note "stuck worker killed about $ms ms after it stopped"
check "killed after the 2 s timeout, not long after" [ "$ms" -ge 1500 -a "$ms" -le 5000 ]
wait "$spin"
wait_for 3 sh -c "[ \$(cat /proc/$CONDUITD_PID/task/*/children | wc -w) -eq 2 ]"
is "it is replaced" "$(worker_count)" 2
check "by a new process" [ "$(worker_pids | sort | tr '\n' ' ')" != "$before" ]
done_testing
