#!/bin/sh
# kill -9 of one worker under load: a new one within 1 s, and the requests
# that fail are only those the killed worker had in flight.  Each of the
# load's kept-alive connections learns from /healthz which worker holds it,
# so a failure is charged to a pid; every request takes 50 ms
# (/debug/sleep), so each connection of the victim has one in flight.
# Then workers that keep dying are throttled, not fork-looped.
# The respawn's time is measured alone (t/lib.sh), not beside the rest of
# the suite.
EXCLUSIVE=1
. "$top_srcdir/t/lib.sh"
has_test_hooks || skip "built without --enable-test-hooks"

conduitd_start -w 3
wait_for 5 workers_are 3
before=$(worker_pids | sort | tr '\n' ' ')

load_start kill -w -c 24 -d 4 -u '/debug/sleep?ms=50' -t 5000
sleep 1.5
# The victim: the worker holding the most sockets (the listening one too).
vconns=0
for p in $(worker_pids); do
    n=$(ls -l /proc/"$p"/fd 2>/dev/null | grep -c socket)
    [ "$n" -gt "$vconns" ] && { vconns=$n; victim=$p; }
done
vconns=$((vconns - 1))
t0=$(date +%s%N)
kill -KILL "$victim"
replaced() {
    [ "$(worker_count)" -eq 3 ] && ! worker_pids | grep -qx "$victim"
}
wait_for 3 replaced
t1=$(date +%s%N)
ms=$(( (t1 - t0) / 1000000 ))
note "replacement worker after $ms ms"
check "a new worker replaces the killed one" replaced
check "within 1 s ($ms ms)" [ "$ms" -le 1000 ]
load_wait kill
others=$(printf '%s' "$L_fail_pids" | tr ',' '\n' | grep -v "^$victim:" | grep -v '^none$' | tr '\n' ' ')
victim_fails=$(printf '%s' "$L_fail_pids" | tr ',' '\n' | sed -n "s/^$victim://p")
victim_fails=${victim_fails:-0}
note "kill -9 under load: $L_requests requests, $L_failed failed, all on the killed worker: $victim_fails (it held at most $vconns sockets)"
is "no failure on the other workers" "${others:-}" ""
is "no failure on a connection of unknown worker" "$L_fail_unknown" 0
is "every failure is the killed worker's" "$victim_fails" "$L_failed"
check "no more failures than the killed worker's connections ($L_failed <= 24)" [ "$L_failed" -le 24 ]
check "requests went on (over 800)" [ "$L_requests" -gt 800 ]
check "the killed worker had requests in flight ($vconns connections)" [ "$vconns" -gt 0 ]
check "the master logged the death" grep -q "pid $victim) died unexpectedly" "$T/conduitd.log"

# Workers that keep dying are throttled, not fork-looped.
for round in 1 2 3 4 5 6; do
    for p in $(worker_pids); do kill -KILL "$p"; done
    sleep 0.3
done
wait_for 3 grep -q 'waiting .* ms before forking again' "$T/conduitd.log"
check "repeated deaths trigger a logged backoff" grep -q 'died within 10 s: waiting' "$T/conduitd.log"
wait_for 5 workers_are 3
is "after the backoff the workers are back" "$(worker_count)" 3
done_testing
