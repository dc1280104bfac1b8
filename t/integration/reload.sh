#!/bin/sh
# HUP under load: ten reloads, one a second, each starting a new generation
# of workers (the count alternating 3, 2, 3, ...; a HUP that comes while
# the last reload is under way waits for it) while a bounded load of
# requests that go to PostgreSQL runs, on new and on kept-alive connections.  Pass: 0 failed requests (every one
# a 200), and the last generation alone serves at the end.  Then a broken
# config on HUP is logged and the old one kept.
. "$top_srcdir/t/lib.sh"

pg_start
cat >"$T/conduitd.conf" <<CONF
workers = 2
CONF
conduitd_start -c "$T/conduitd.conf" --pool 2 --bcrypt-cost 4
wait_for 5 workers_are 2
is "starts with the file's 2 workers" "$(worker_count)" 2
old=$(worker_pids | sort | tr '\n' ' ')

# A new connection per request, 600 requests/s, for the 10 s of reloads
# and a little more: GET /api/tags reads the database.
load_start hup -c 8 -r 600 -d 12 -u /api/tags -t 5000
hup_pid=$LOAD_PID
# And kept-alive clients, whose idle connections a retiring worker must
# not drop while a request is on its way.
load_start hupkeep -k -c 4 -r 300 -d 12 -u /api/tags -t 5000
keep_pid=$LOAD_PID
sleep 0.5
for i in 1 2 3 4 5 6 7 8 9 10; do
    echo "workers = $((2 + i % 2))" >"$T/conduitd.conf"
    kill -HUP "$CONDUITD_PID"
    sleep 1
done
load_wait hupkeep "$keep_pid"
note "kept-alive clients across the 10 reloads: $L_requests requests, $L_failed failed"
is "0 failed requests on kept-alive connections" "$L_failed" 0
is "every kept-alive request answered 200" "$L_s2xx" "$L_requests"
load_wait hup "$hup_pid"
n_reloads=$(grep -c 'reload complete' "$T/conduitd.log")
note "10 HUPs in 10 s: $n_reloads reload(s) completed, $L_requests requests, $L_failed failed, p99 $L_p99_ms ms"
is "0 failed requests across 10 reloads" "$L_failed" 0
is "every request answered 200" "$L_s2xx" "$L_requests"
check "the load was real (over 4000 requests)" [ "$L_requests" -gt 4000 ]
check "the reloads completed" [ "$n_reloads" -ge 5 ]
wait_for 10 workers_are 2
is "now the last file's 2 workers" "$(worker_count)" 2
old_gone() { for p in $old; do alive "$p" && return 1; done; return 0; }
check "the first generation is retired" old_gone
# A HUP that comes while the last reload or its drain is under way waits
# for it, and the HUPs that wait together are one reload (hup_storm.sh):
# on a slow machine fewer than 10 begin.  Every one begun must complete,
# the last with the last file.
reloads_completed() {
    _begun=$(grep -c 'reloading the configuration' "$T/conduitd.log")
    note "$1 HUPs: $_begun reloads begun, $(grep -c 'reload deferred' "$T/conduitd.log") HUP(s) deferred"
    check "every reload begun completed, the last with the last file's $2 workers (generation $((_begun + 1)))" \
        grep -q "reload complete: generation $((_begun + 1)), $2 worker" "$T/conduitd.log"
}
reloads_completed 10 2

# Strict kept-alive clients (see strict_start in t/lib.sh) across 10 more
# HUPs, 1.2 s apart: a retiring worker may close a connection only where
# its client can tell before it sends (after a response that said
# "Connection: close", or one idle through the drain's grace), so none of
# these requests fails, and the comments stored are the comments answered.
strict_setup
strict_start strict 8 6 13
sleep 0.5
for i in 1 2 3 4 5 6 7 8 9 10; do
    echo "workers = $((2 + i % 2))" >"$T/conduitd.conf"
    kill -HUP "$CONDUITD_PID"
    sleep 1.2
done
strict_wait strict
reloads_completed 20 2

# A broken file: logged, the running config kept, workers untouched.
before=$(worker_pids | sort | tr '\n' ' ')
printf 'workers = 3\nno_such_key = 1\n' >"$T/conduitd.conf"
kill -HUP "$CONDUITD_PID"
wait_for 5 grep -q 'reload failed' "$T/conduitd.log"
check "a bad config is reported with its line" grep -q "reload failed: .*conduitd.conf:2:" "$T/conduitd.log"
sleep 0.5
is "the workers keep running" "$(worker_pids | sort | tr '\n' ' ')" "$before"
is "still serving" "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/healthz")" 200
done_testing
