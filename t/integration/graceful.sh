#!/bin/sh
# TERM lets an in-flight slow request finish, refuses new connections and
# exits within the graceful timeout; INT stops at once.
. "$top_srcdir/t/lib.sh"
has_test_hooks || skip "built without --enable-test-hooks"

conduitd_start -w 2 --graceful-timeout 10
curl -s --max-time 10 -o "$T/slow" -w '%{http_code}' "$BASE/debug/sleep?ms=1500" >"$T/slow.code" &
slow=$!
sleep 0.4
t0=$(date +%s%N)
kill -TERM "$CONDUITD_PID"
sleep 0.3
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$BASE/healthz")
is "new connections are refused while draining" "$code" 000
wait "$slow"
is "the in-flight request finished with 200" "$(cat "$T/slow.code")" 200
is "with its body" "$(cat "$T/slow")" '{"slept":1500}'
wait "$CONDUITD_PID"; rc=$?
t1=$(date +%s%N)
CONDUITD_PID=
is "the master exits 0" "$rc" 0
ms=$(( (t1 - t0) / 1000000 ))
note "TERM to exit: $ms ms"
check "exit after the request, within the graceful timeout" [ "$ms" -ge 1000 -a "$ms" -lt 10000 ]

# A request longer than the graceful timeout is cut there.
conduitd_start -w 1 --graceful-timeout 1
curl -s --max-time 10 -o /dev/null "$BASE/debug/sleep?ms=8000" &
sleep 0.3
t0=$(date +%s%N)
kill -TERM "$CONDUITD_PID"
wait "$CONDUITD_PID"
t1=$(date +%s%N)
CONDUITD_PID=
ms=$(( (t1 - t0) / 1000000 ))
note "TERM with an 8 s request and a 1 s graceful timeout: exit after $ms ms"
check "the graceful timeout bounds the stop" [ "$ms" -lt 3000 ]

# INT is the fast stop.
conduitd_start -w 2
curl -s --max-time 10 -o /dev/null "$BASE/debug/sleep?ms=8000" &
sleep 0.3
t0=$(date +%s%N)
kill -INT "$CONDUITD_PID"
wait "$CONDUITD_PID"
t1=$(date +%s%N)
CONDUITD_PID=
ms=$(( (t1 - t0) / 1000000 ))
check "INT stops at once ($ms ms)" [ "$ms" -lt 1500 ]
done_testing
