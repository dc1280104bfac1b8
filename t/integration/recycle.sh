#!/bin/sh
# max_requests: under strict kept-alive readers and writers (t/lib.sh
# strict_start: no retry, a new connection only after Connection: close),
# workers that reach their limit (plus jitter) are replaced one by one,
# each only once its replacement is ready, and no request is lost: 0
# failures, every comment answered is stored, the worker count never
# drops, and the pids turn over.  Off by default.
. "$top_srcdir/t/lib.sh"

has_loadgen || skip "t/loadgen is not built"
command -v jq >/dev/null || skip "jq not installed"
pg_start
conduitd_start -w 2 --bcrypt-cost 4 --max-requests 400 --max-requests-jitter 200
strict_setup
pids0=$(worker_pids | sort | tr '\n' ' ')
strict_start strict 4 4 8
min=2
for i in $(seq 1 80); do
    n=$(worker_count)
    # /proc/PID/task/*/children may skip a child while another is being
    # forked or reaped (here every half second): a dip is believed only if
    # two more reads at once see it too.  A real one lasts a worker's
    # start, tens of milliseconds.
    for _r in 1 2; do
        [ "$n" -lt 2 ] && n=$(worker_count)
    done
    [ "$n" -lt "$min" ] && min=$n
    sleep 0.1
done
strict_wait strict
replaced=$(grep -c 'served [0-9]* responses (max_requests): replacing it' "$T/conduitd.log")
note "$replaced worker(s) replaced; workers at the start: $pids0, at the end: $(worker_pids | sort | tr '\n' ' ')"
check "workers were replaced ($replaced times)" [ "$replaced" -ge 4 ]
is "the number of workers never fell below 2" "$min" 2
check "each served at least max_requests before" \
    sh -c "! grep -o 'served [0-9]* responses (max_requests)' '$T/conduitd.log' | awk '\$2 < 400' | grep -q ."
check "none of the first workers is left" sh -c "for p in $pids0; do kill -0 \$p 2>/dev/null && exit 1; done; exit 0"
check "no worker died" sh -c "! grep -q 'died unexpectedly\|killed by signal' '$T/conduitd.log'"
wait_for 5 sh -c "[ \$(grep -c 'worker [0-9] (pid [0-9]*) ready' '$T/conduitd.log') -ge $((replaced + 2)) ]"
stop_pid "$CONDUITD_PID"; CONDUITD_PID=

# Off by default: the same load, nobody replaced.
conduitd_start -w 2 --bcrypt-cost 4
load_start plain -k -c 4 -d 2 -u /healthz
load_wait plain
check "without --max-requests, no worker is replaced ($L_requests requests)" \
    sh -c "! grep -q 'max_requests' '$T/conduitd.log'"
done_testing
