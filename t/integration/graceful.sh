#!/bin/sh
# TERM lets an in-flight slow request finish, refuses new connections and
# exits within the graceful timeout, alone and under load; INT stops at once,
# Ctrl-C (INT to the whole process group) too, without a worker "dying".
# A worker sent INT alone stops after a second and is replaced.  Strict
# kept-alive clients that read and write lose no request to a TERM, and
# connections waiting in the accept queue when TERM comes are served, not
# reset.
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

# Under load: 8 clients, each request 300 ms, a new connection each.  Every
# request begun before TERM completes with 200; once the master and the
# workers have closed their listening sockets, new connections are refused
# at once; the master exits when the last request is done.
conduitd_start -w 2 --graceful-timeout 10
load_start term -c 8 -r 200 -d 4 -u '/debug/sleep?ms=300' -t 5000 -o "$T/term.csv"
# Once 8 requests are done, each client has its next one in flight.
wait_for 5 lines_at_least "$T/term.csv" 8
sleep 0.15
t_term=$(ms_now)
kill -TERM "$CONDUITD_PID"
wait "$CONDUITD_PID"; rc=$?
t_exit=$(ms_now)
CONDUITD_PID=
load_wait term
is "under load, the master exits 0" "$rc" 0
# CSV: end ms, status, latency us; a request began at end - latency.
awk -F, -v t="$t_term" '{ s = $1 - $3 / 1000 }
    s < t - 50 { n++; if ($2 != 200) bad++; if ($1 > t) inflight++; if ($1 > last) last = $1 }
    s > t + 300 { m++; if ($2 == 0 && $3 < 100000) refused++ }
    END { printf "%d %d %d %d %d %.0f\n", n, bad, inflight, m, refused, last }' "$T/term.csv" >"$T/term.fig"
read n_before bad_before inflight n_after refused_after last_end <"$T/term.fig"
note "TERM under load: $n_before requests begun before it ($inflight of them in flight at TERM), $bad_before failed; $n_after tried after it, $refused_after refused at once; exit after $((t_exit - t_term)) ms"
is "every request begun before TERM completed with 200" "$bad_before" 0
check "there were requests in flight at TERM ($inflight)" [ "$inflight" -ge 4 ]
check "new connections were tried after TERM" [ "$n_after" -gt 10 ]
is "every new connection after TERM was refused at once" "$refused_after" "$n_after"
check "the master exits after the last in-flight request is answered ($((t_exit - last_end)) ms after)" \
    [ "$t_exit" -ge "$last_end" ]
check "and within the graceful timeout ($((t_exit - t_term)) ms)" [ $((t_exit - t_term)) -lt 10000 ]

# stop_during_request SIGNAL: sends SIGNAL to the master while an 8 s
# request runs; $ms is how long the master took to exit.
stop_during_request() {
    curl -s --max-time 10 -o /dev/null "$BASE/debug/sleep?ms=8000" &
    sleep 0.3
    t0=$(date +%s%N)
    kill -"$1" "$CONDUITD_PID"
    wait "$CONDUITD_PID"
    t1=$(date +%s%N)
    CONDUITD_PID=
    ms=$(( (t1 - t0) / 1000000 ))
}

# A request longer than the graceful timeout is cut there.
conduitd_start -w 1 --graceful-timeout 1
stop_during_request TERM
note "TERM with an 8 s request and a 1 s graceful timeout: exit after $ms ms"
check "the graceful timeout bounds the stop" [ "$ms" -lt 3000 ]

# INT is the fast stop.
conduitd_start -w 2
stop_during_request INT
check "INT stops at once ($ms ms)" [ "$ms" -lt 1500 ]

# Ctrl-C in a terminal sends SIGINT to the whole process group: each
# worker gets it as well as the master (which then sends it SIGQUIT), at
# any moment, while starting up too.  Every process must end by its own
# hand, never by a signal's default action: the master exits 0 and reports
# no worker killed.  setsid gives each master a group of its own to aim at.
_root=
[ "$(id -u)" = 0 ] && _root=--allow-root
rcs= killed=0
for when in 0 0.02 0.05 0.1 0.2 $(seq 15 | sed c\\ready); do
    : >"$T/ctrlc.log"
    setsid -w "$CONDUITD" -b 127.0.0.1:0 --dev $_root -w 2 --log "$T/ctrlc.log" \
        </dev/null >>"$T/ctrlc.out" 2>&1 &
    sid=$!
    EXTRA_PIDS=$sid
    wait_for 10 grep -q 'listening on' "$T/ctrlc.log" || bail "conduitd did not start"
    if [ "$when" = ready ]; then
        wait_for 10 grep -q 'worker(s) ready' "$T/ctrlc.log" || bail "workers did not start"
    else
        sleep "$when"
    fi
    master=$(sed -n 's/.*\[\([0-9]*\)\] master .*/\1/p' "$T/ctrlc.log" | head -n 1)
    kill -INT -- -"$master"
    wait "$sid"
    rcs="$rcs$?"
    EXTRA_PIDS=
    n=$(grep -c -E 'killed by signal|died unexpectedly|did not ask' "$T/ctrlc.log")
    [ "$n" -gt 0 ] && grep -E 'killed by signal|died unexpectedly|did not ask' "$T/ctrlc.log" | sed 's/^/# /'
    killed=$((killed + n))
    cat "$T/ctrlc.log" >>"$T/ctrlc-all.log"
done
is "Ctrl-C (INT to the process group), 20 times: the master exits 0 each time" "$rcs" 00000000000000000000
is "no worker killed by a signal or lost" "$killed" 0

# SIGINT to one worker alone: the master does not follow, so the worker
# stops on its own after waiting a second for it, and is replaced.
conduitd_start -w 2
victim=$(worker_pids | head -n 1)
kill -INT "$victim"
check "a worker sent SIGINT alone stops" wait_for 5 sh -c "! kill -0 $victim 2>/dev/null"
check "and is replaced" wait_for 5 workers_are 2
check "the master says it did not ask" grep -q "pid $victim) stopped, though the master did not ask" "$T/conduitd.log"
stop_pid "$CONDUITD_PID"
CONDUITD_PID=

# TERM under strict kept-alive clients (see strict_start in t/lib.sh): a
# request read is answered (with "Connection: close"), a comment stored is
# a comment answered; the only failures are the new connections refused
# after it, by clients that followed the close.
pg_start
conduitd_start -w 2 --bcrypt-cost 4 --graceful-timeout 10
strict_setup
strict_start term_strict 4 4 2
# TERM once the clients are really sending (20 comments stored): on a
# loaded machine, or under the sanitizers, the generators can take longer
# to start than a fixed sleep, and then every one of their connections is
# refused after the stop (0 answered, which the writes check below fails).
strict_running() { [ "$(comments_stored)" -ge $((STRICT_STORED0 + 20)) ]; }
wait_for 20 strict_running || note "term_strict: the clients had stored under 20 comments after 20 s"
sleep 0.5
kill -TERM "$CONDUITD_PID"
wait "$CONDUITD_PID"
is "TERM under strict clients: the master exits 0" "$?" 0
CONDUITD_PID=
strict_wait term_strict stop
# Connections the kernel completed but no worker accepted yet when TERM
# comes: the one worker is busy (/debug/spin), so they wait in the accept
# queue, their requests sent.  Closing the listener then would reset them;
# the drain accepts them first and answers them ("Connection: close").
conduitd_start -w 1 --graceful-timeout 10
curl -s --max-time 10 -o /dev/null -w '%{http_code}' "$BASE/debug/spin?ms=1500" >"$T/spin.code" &
spin=$!
sleep 0.3
# The worker's copy of TERM waits for the spin; so do these connections,
# made after the master has closed its own listener but while the worker's
# is still open.
kill -TERM "$CONDUITD_PID"
sleep 0.2
qpids=
for i in 1 2 3 4 5 6; do
    curl -s --max-time 10 -o /dev/null -w '%{http_code}' "$BASE/healthz" >"$T/queued.$i" 2>/dev/null &
    qpids="$qpids $!"
done
wait $spin $qpids
wait "$CONDUITD_PID"
CONDUITD_PID=
is "the busy request finished" "$(cat "$T/spin.code")" 200
is "the 6 connections queued at TERM were all answered 200" \
    "$(for i in 1 2 3 4 5 6; do printf '%s ' "$(cat "$T/queued.$i")"; done)" "200 200 200 200 200 200 "
done_testing
