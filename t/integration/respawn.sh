#!/bin/sh
# kill -9 of one worker: a new one within 1 s, while the others keep serving.
. "$top_srcdir/t/lib.sh"

conduitd_start -w 3
wait_for 5 sh -c "[ \$(cat /proc/$CONDUITD_PID/task/*/children | wc -w) -eq 3 ]"
victim=$(worker_pids | head -n 1)
before=$(worker_pids | sort | tr '\n' ' ')

# Requests all along: none may fail while a worker dies.
( fails=0; n=0
  while [ ! -f "$T/stop" ]; do
      code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$BASE/healthz")
      n=$((n + 1)); [ "$code" = 200 ] || fails=$((fails + 1))
  done; echo "$n $fails" >"$T/loop" ) &
loop=$!
sleep 0.3
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
sleep 0.5
touch "$T/stop"; wait "$loop"
read n fails <"$T/loop"
note "$n requests during the kill, $fails failed"
is "no request failed while a worker was killed" "$fails" 0
check "requests were made" [ "$n" -gt 10 ]
check "the master logged the death" grep -q "pid $victim) died unexpectedly" "$T/conduitd.log"

# Workers that keep dying are throttled, not fork-looped.
for round in 1 2 3 4 5 6; do
    for p in $(worker_pids); do kill -KILL "$p"; done
    sleep 0.3
done
wait_for 3 grep -q 'waiting .* ms before forking again' "$T/conduitd.log"
check "repeated deaths trigger a logged backoff" grep -q 'died within 10 s: waiting' "$T/conduitd.log"
wait_for 5 sh -c "[ \$(cat /proc/$CONDUITD_PID/task/*/children | wc -w) -eq 3 ]"
is "after the backoff the workers are back" "$(worker_count)" 3
done_testing
