#!/bin/sh
# kill -9 of the master under strict kept-alive clients (see strict_start
# in t/lib.sh): its workers notice (the kernel's parent-death signal, or
# the heartbeat's look at the parent) and drain as on TERM, answering
# every request they had read, then exit; none serves on unsupervised.
# Before: both workers were alive 74 s later, still answering on the port.
# The bound, 3 s from the kill to the last worker gone, is the drain's own
# (a second for idle kept-alive connections) with room for a loaded machine.
. "$top_srcdir/t/lib.sh"
has_loadgen || skip "t/loadgen is not built"

# gone PID...: none of them is alive (a zombie, waiting for its new parent to reap it, counts as gone).
gone() {
    for _p in "$@"; do
        case $(sed 's/.*) //' /proc/"$_p"/stat 2>/dev/null | cut -d ' ' -f 1) in '' | Z) ;; *) return 1 ;; esac
    done
}

pg_start
conduitd_start -w 2 --bcrypt-cost 4 --graceful-timeout 10
strict_setup
# The stop's time is measured alone (t/lib.sh), not beside the rest of the suite.
exclusive
workers=$(worker_pids | tr '\n' ' ')
is "two workers" "$(echo $workers | wc -w)" 2
strict_start orphan 4 4 4
strict_running() { [ "$(comments_stored)" -ge $((STRICT_STORED0 + 20)) ]; }
wait_for 20 strict_running || note "the clients had stored under 20 comments after 20 s"
sleep 0.3
master=$CONDUITD_PID
t0=$(ms_now)
kill -KILL "$master"
wait "$master"
CONDUITD_PID=
wait_for 15 gone $workers
t1=$(ms_now)
ms=$((t1 - t0))
note "master killed: its workers gone $ms ms later"
check "the workers exit once their master is gone" gone $workers
check "within 3 s ($ms ms)" [ "$ms" -le 3000 ]
for p in $workers; do
    check "worker $p said why it left" grep -q "\[$p\] worker .*the master (pid $master) is gone: draining" "$T/conduitd.log"
done
strict_wait orphan stop
check "nothing answers on the port after" sh -c "! curl -s -o /dev/null --max-time 2 $BASE/healthz"
# Clean up the workers if the check above failed, so the test ends.
for p in $workers; do gone "$p" || kill -KILL "$p" 2>/dev/null; done
done_testing
