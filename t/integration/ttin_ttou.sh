#!/bin/sh
# TTIN adds a worker, TTOU removes one, never below one.
. "$top_srcdir/t/lib.sh"

count_is() { [ "$(worker_count)" -eq "$1" ]; }
conduitd_start -w 2
wait_for 5 count_is 2
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
kill -TTOU "$CONDUITD_PID"
sleep 1
is "TTOU never goes below 1" "$(worker_count)" 1
is "the last worker is index 0" "$(healthz_worker)" 0
done_testing
