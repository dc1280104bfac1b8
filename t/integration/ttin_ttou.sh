#!/bin/sh
# TTIN adds a worker, TTOU removes one, never below one; under a bounded
# load (a new connection per request, and kept-alive ones), no request
# fails while workers come and go.  Strict kept-alive clients that read
# and write (see strict_start in t/lib.sh) lose no request either, and
# every comment stored was answered.
. "$top_srcdir/t/lib.sh"

count_is() { [ "$(worker_count)" -eq "$1" ]; }
pg_start
conduitd_start -w 2 --bcrypt-cost 4
strict_setup
wait_for 5 count_is 2
load_start close -c 6 -r 500 -d 5 -u /healthz -t 5000
close_pid=$LOAD_PID
load_start keep -k -c 4 -r 500 -d 5 -u /healthz -t 5000
keep_pid=$LOAD_PID
strict_start strict 4 4 5
sleep 0.3
kill -TTIN "$CONDUITD_PID"
wait_for 5 count_is 3
is "TTIN: 3 workers" "$(worker_count)" 3
kill -TTIN "$CONDUITD_PID"
wait_for 5 count_is 4
is "TTIN again: 4 workers" "$(worker_count)" 4
for i in 1 2 3; do
    kill -TTOU "$CONDUITD_PID"
    sleep 0.3
done
wait_for 5 count_is 1
is "TTOU three times: 1 worker" "$(worker_count)" 1
load_wait close "$close_pid"
note "TTIN x2, TTOU x3 under load, a connection per request: $L_requests requests, $L_failed failed"
is "0 failed requests (new connections)" "$L_failed" 0
is "every one answered 200" "$L_s2xx" "$L_requests"
# A floor that says requests flowed through every change, not a speed: the
# sanitizer build beside another suite made 1,456 in the 5 s (the idle
# release build about 4,000).
check "the load was real (over 500 requests)" [ "$L_requests" -gt 500 ]
load_wait keep "$keep_pid"
note "the same on kept-alive connections: $L_requests requests, $L_failed failed"
is "0 failed requests (kept-alive connections)" "$L_failed" 0
strict_wait strict
kill -TTOU "$CONDUITD_PID"
sleep 1
is "TTOU never goes below 1" "$(worker_count)" 1
is "the last worker is index 0" "$(healthz_worker)" 0
done_testing
