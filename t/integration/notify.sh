#!/bin/sh
# systemd's Type=notify, with a stand-in for its socket (t/notify_listen):
# READY=1 (with MAINPID) only once every worker serves; RELOADING=1 with
# MONOTONIC_USEC, then READY=1, around a HUP, a failed one included;
# STOPPING=1 on TERM; a STATUS= line that follows the workers and the
# requests served; WATCHDOG=1 when WATCHDOG_USEC asks for it; the same over
# an abstract socket and after -d; and no datagram from a worker.
. "$top_srcdir/t/lib.sh"

[ -x "${NOTIFY_LISTEN:-}" ] || skip "NOTIFY_LISTEN is set by make check"

# listen NAME: a stand-in socket, its datagrams one a line in $T/NAME.out.
listen() {
    "$NOTIFY_LISTEN" "$1" >"$T/$2.out" 2>&1 &
    EXTRA_PIDS="${EXTRA_PIDS:-} $!"
    wait_for 5 grep -q '^listening' "$T/$2.out" || bail "notify_listen did not start"
}
# line N FILE: the Nth datagram (1-based, after the "listening" line).
msgs() { sed 1d "$T/$1.out"; }
# settle NAME: waits (up to about 12 s) until no datagram but WATCHDOG=1
# has come for 1.5 s.  The master
# sends a changed STATUS= at most once a second, so none is still on its
# way: what comes after a signal sent now is the signal's.  (Counted right
# after the requests, the last STATUS= of them could come after the count,
# and be taken for the HUP's first datagram: seen on a loaded machine.)
settle() {
    for _i in 1 2 3 4 5 6 7 8; do
        _n=$(msgs "$1" | grep -vc WATCHDOG)
        sleep 1.5
        [ "$(msgs "$1" | grep -vc WATCHDOG)" = "$_n" ] && return 0
    done
    note "datagrams still coming after 12 s"
}
has() { msgs "$1" | grep -q -- "$2"; }

listen "$T/notify.sock" path
printf 'workers = 2\n' >"$T/conduitd.conf"
chmod 600 "$T/conduitd.conf"
NOTIFY_SOCKET=$T/notify.sock WATCHDOG_USEC=400000 conduitd_start -c "$T/conduitd.conf"
wait_for 5 has path 'READY=1'
check "READY=1 is sent" has path 'READY=1'
check "with MAINPID, the master's pid" has path "MAINPID=$CONDUITD_PID |"
first=$(msgs path | grep -v WATCHDOG | sed -n 1p)
second=$(msgs path | grep -v WATCHDOG | sed -n 2p)
check "first a STATUS= line: every worker ready ($first)" \
    sh -c "printf '%s' '$first' | grep -q 'STATUS=2 of 2 worker(s) ready, generation 1'"
check "then READY=1" sh -c "printf '%s' '$second' | grep -q 'READY=1'"
senders=$(msgs path | cut -d: -f1 | sort -u | tr '\n' ' ')
is "every datagram came from the master (no worker notifies)" "$senders" "$CONDUITD_PID "
sleep 1
n=$(msgs path | grep -c 'WATCHDOG=1')
check "WATCHDOG=1 at half of WATCHDOG_USEC (400 ms): $n in a second or so" [ "$n" -ge 2 ]

for i in 1 2 3 4 5; do http GET /healthz; done
wait_for 3 sh -c "sed 1d '$T/path.out' | grep -q 'STATUS=.* [5-9] requests served\|STATUS=.* [1-9][0-9]* requests served'"
check "STATUS= follows the requests served" \
    sh -c "sed 1d '$T/path.out' | grep 'STATUS=' | tail -n 1 | grep -q ' [1-9][0-9]* requests served'"

: >"$T/mark"
settle path
before=$(msgs path | wc -l)
printf 'workers = 3\n' >"$T/conduitd.conf"
kill -HUP "$CONDUITD_PID"
wait_for 10 grep -q 'reload complete' "$T/conduitd.log"
wait_for 3 sh -c "sed 1,$((before + 1))d '$T/path.out' | grep -q 'READY=1'"
after=$(sed "1,$((before + 1))d" "$T/path.out")
first=$(printf '%s\n' "$after" | grep -v WATCHDOG | sed -n 1p)
check "a HUP sends RELOADING=1 first" sh -c "printf '%s' '$first' | grep -q 'RELOADING=1'"
check "with MONOTONIC_USEC, a number" sh -c "printf '%s' '$first' | grep -q 'MONOTONIC_USEC=[0-9]\{4,\} '"
check "then READY=1 once the new generation serves" \
    sh -c "printf '%s\n' \"\$1\" | grep -v WATCHDOG | sed -n '2,\$p' | grep -q 'READY=1 | STATUS=3 of 3 worker(s) ready, generation 2'" _ "$after"

settle path
before=$(msgs path | wc -l)
printf 'workers = lots\n' >"$T/conduitd.conf"
kill -HUP "$CONDUITD_PID"
wait_for 5 grep -q 'reload failed' "$T/conduitd.log"
wait_for 3 sh -c "sed 1,$((before + 1))d '$T/path.out' | grep -q 'READY=1'"
check "a failed reload still ends with READY=1, saying why" \
    sh -c "sed 1,$((before + 1))d '$T/path.out' | grep -q 'READY=1 | STATUS=reload failed, running configuration kept: .*workers'"

kill -TERM "$CONDUITD_PID"
wait_for 10 sh -c "! kill -0 $CONDUITD_PID 2>/dev/null"
check "TERM sends STOPPING=1" has path 'STOPPING=1 | STATUS=graceful shutdown'
CONDUITD_PID=

# The abstract namespace ("@name"), and a daemon started with -d: its
# MAINPID is the detached master, whose pid the pidfile holds.
name="@conduitd-notify-test-$$"
listen "$name" abstract
root=; [ "$(id -u)" = 0 ] && root=--allow-root
NOTIFY_SOCKET=$name "$CONDUITD" -d -b 127.0.0.1:0 --dev $root -w 1 --pid "$T/d.pid" \
    --log "$T/d.log" </dev/null >/dev/null 2>&1
is "-d starts" "$?" 0
dpid=$(cat "$T/d.pid")
EXTRA_PIDS="${EXTRA_PIDS:-} $dpid"
wait_for 5 has abstract 'READY=1'
check "over an abstract socket, READY=1 names the detached master" has abstract "READY=1 | MAINPID=$dpid |"
kill -TERM "$dpid"
wait_for 10 sh -c "! kill -0 $dpid 2>/dev/null"
check "and STOPPING=1 on TERM" has abstract 'STOPPING=1'

# Without NOTIFY_SOCKET nothing is sent anywhere (and nothing breaks).
before=$(msgs path | wc -l)
unset NOTIFY_SOCKET WATCHDOG_USEC
conduitd_start -w 1
stop_pid "$CONDUITD_PID"; CONDUITD_PID=
is "without NOTIFY_SOCKET, no datagram" "$(msgs path | wc -l)" "$before"

# The shipped unit uses it, and does not detach (systemd supervises the
# process it started, and follows the new master of an upgrade by MAINPID=).
unit=etc/conduitd.service
[ -f "$unit" ] || unit=$top_srcdir/etc/conduitd.service.in
check "the systemd unit is Type=notify" grep -qx 'Type=notify' "$unit"
# "all": the new master of a binary upgrade, the old one's child, says
# MAINPID= itself (upgrade.sh checks what each master sends).
check "the new master of an upgrade may notify" grep -qx 'NotifyAccess=all' "$unit"
check "its ExecStart does not detach (no -d)" sh -c "! grep -q '^ExecStart=.* -d ' '$unit'"
done_testing
