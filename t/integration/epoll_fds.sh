#!/bin/sh
# A worker batches its epoll changes (libevent's changelist, worker.c's
# loop_new): taking a socket out of epoll reaches the kernel at the loop's
# next pass.  If the worker closes its descriptor before that while the
# socket itself stays open (another descriptor, another process), the
# kernel keeps the registration and goes on waking the worker for a socket
# it no longer has: at full CPU when that socket is writable.  Two such
# sockets, each checked here by the worker's CPU time and wakeups while it
# should be idle, and by its answers afterwards:
# - a lingering close (conn.c: the client still sends after an early 413);
# - the listeners a draining worker shares with the master and its sibling
#   (the API's and the status page's).
. "$top_srcdir/t/lib.sh"
has_test_hooks || skip "built without --enable-test-hooks"

HZ=$(getconf CLK_TCK)
# wakeups PID: voluntary context switches, one each time it slept and woke.
wakeups() { awk '/^voluntary_ctxt_switches/ { print $2 }' /proc/"$1"/status; }
# holds_listener PID PORT: PID has a descriptor of the socket listening on
# 127.0.0.1:PORT (its inode, from /proc/net/tcp, among PID's descriptors).
holds_listener() {
    _ino=$(awk -v p="$(printf ':%04X' "$2")" '$2 ~ p "$" && $4 == "0A" { print $10 }' /proc/net/tcp)
    [ -n "$_ino" ] || return 1
    for _i in $_ino; do
        ls -l /proc/"$1"/fd 2>/dev/null | grep -q "socket:\[$_i\]" && return 0
    done
    return 1
}

# ------------------------------------------------------------ lingering close
conduitd_start -w 1
W=$(worker_pids)
head -c 2000000 /dev/zero | tr '\0' a >"$T/big"
# The header of a 2 MB POST and 64 kB of it: 413 before the body is read.
# The client reads the status line, sends 512 kB more (taken in and thrown
# away if the worker lingers, a reset if it closed), then keeps the socket
# open and silent for 4 s; the worker lingers on it meanwhile (up to 5 s of
# silence).
bash -c '
    trap "" PIPE
    exec 3<>/dev/tcp/127.0.0.1/$1 || exit 1
    printf "POST /api/articles HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2000000\r\n\r\n" >&3
    head -c 65536 "$2" >&3
    status=$(timeout 5 head -n 1 <&3 | tr -d "\r")
    sleep 0.3
    if head -c 524288 "$2" >&3; then w=sent; else w=reset; fi
    echo "$status, then $w" >"$3.part"
    mv "$3.part" "$3"
    sleep 4
' linger "$PORT" "$T/big" "$T/linger.status" 2>/dev/null &
client=$!
wait_for 5 test -f "$T/linger.status" || fail "the 413 never came"
is "the early 413 is read, and what follows is taken in (the worker lingers)" \
    "$(cat "$T/linger.status")" "HTTP/1.1 413 Request Entity Too Large, then sent"
sleep 0.2
c0=$(cpu_ticks "$W") w0=$(wakeups "$W")
sleep 2
c1=$(cpu_ticks "$W") w1=$(wakeups "$W")
note "lingering for 2 s: $((c1 - c0)) tick(s) of CPU at $HZ Hz, $((w1 - w0)) wakeup(s)"
# Idle, it is on the CPU for none of it (its heartbeat aside); spinning on
# a stale registration, for all of it, or its share of a busy machine's.
check "the worker is idle while it lingers (under 5 % of the 2 s on the CPU)" \
    [ $((c1 - c0)) -lt $((HZ / 10)) ]
kill "$client" 2>/dev/null
wait "$client" 2>/dev/null
# The descriptor number the lingering socket had is free again: a new
# connection may take it and must get its own events only.
ok=0
for i in 1 2 3 4 5 6 7 8 9 10; do
    [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$BASE/healthz")" = 200 ] && ok=$((ok + 1))
done
is "after the lingering close, 10 new connections are answered" "$ok" 10
c2=$(cpu_ticks "$W")
sleep 1
check "and the worker is idle again" [ $(($(cpu_ticks "$W") - c2)) -lt $((HZ / 5)) ]
stop_pid "$CONDUITD_PID"
CONDUITD_PID=

# ------------------------------------------------------------ draining worker
# Two workers; one gets a slow request on a kept-alive connection, which
# says whose it is (/healthz first), then a TERM of its own: it drains,
# closing its copies of the listeners, while the master and the other
# worker keep theirs open and the other goes on accepting.  The slow
# request (20 s) outlasts the 100 connections below by far, even on a busy
# machine (under a second alone); the drain waits for it.
conduitd_start -w 2 --status-listen 127.0.0.1:0 --graceful-timeout 60
status_base
$PY - "$PORT" >"$T/slow.out" 2>&1 <<'EOF' &
import http.client, json, sys
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=60)
c.request("GET", "/healthz")
print(json.loads(c.getresponse().read())["pid"], flush=True)
c.request("GET", "/debug/sleep?ms=20000")
r = c.getresponse()
print(r.status, r.read().decode(), flush=True)
EOF
slow=$!
wait_for 5 test -s "$T/slow.out" || bail "no answer on the slow connection"
A=$(head -n 1 "$T/slow.out")
held_before=0
holds_listener "$A" "$PORT" && holds_listener "$A" "$SPORT" && held_before=1
is "the worker holds the API's and the status page's listeners before its TERM" "$held_before" 1
sleep 0.3
kill -TERM "$A"
wait_for 5 grep -q "draining" "$T/conduitd.log" || fail "the worker did not say it drains"
# Its listeners closed (once their queues were empty): seen in /proc, not
# assumed after a fixed pause, which a busy machine can outlast.
released() { ! holds_listener "$A" "$PORT" && ! holds_listener "$A" "$SPORT"; }
wait_for 10 released || fail "the draining worker still holds its listeners after 10 s"
check "while the master still holds them (the other worker accepts)" holds_listener "$CONDUITD_PID" "$PORT"
c0=$(cpu_ticks "$A") w0=$(wakeups "$A") t0=$(ms_now)
# The 100 connections from one process: a curl each took 25 s on a busy
# machine (two CPU hogs beside the suite), longer than the slow request.
n=$("$PY" - "$PORT" "$SPORT" "$A" <<'EOF'
import http.client, json, sys
port, sport, a = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
n = 0
for i in range(50):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        c.request("GET", "/healthz")
        pid = str(json.loads(c.getresponse().read()).get("pid", ""))
        n += pid not in ("", a)
    except (OSError, ValueError):
        pass
    c.close()
    c = http.client.HTTPConnection("127.0.0.1", sport, timeout=5)
    try:
        c.request("GET", "/metrics")
        c.getresponse().read()
    except OSError:
        pass
    c.close()
print(n)
EOF
)
alive "$A" || bail "the draining worker left before the connections were made"
c1=$(cpu_ticks "$A") w1=$(wakeups "$A") t1=$(ms_now)
# Its own wakeups meanwhile: the heartbeat's, 4 a second, and a few more.
allow=$(((t1 - t0) / 250 + 20))
note "draining worker, 100 connections to the others in $((t1 - t0)) ms: $((c1 - c0)) tick(s), $((w1 - w0)) wakeup(s)"
is "the API connections were answered, by the other worker" "$n" 50
check "the draining worker is not woken by them (under $allow wakeups for 100 connections)" \
    [ $((w1 - w0)) -lt "$allow" ]
check "nor on the CPU (under a tenth of a second)" [ $((c1 - c0)) -lt $((HZ / 10 + 1)) ]
wait "$slow"
is "the slow request finished on the draining worker" "$(sed -n 2p "$T/slow.out")" \
    '200 {"slept":20000}'
wait_for 5 sh -c "! kill -0 $A 2>/dev/null" || fail "the draining worker did not exit"

done_testing
