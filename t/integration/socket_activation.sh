#!/bin/sh
# systemd's socket activation without systemd: a launcher of this test's
# own plays the part of conduitd.socket.  It holds a listening socket on
# 127.0.0.1 (port chosen by the kernel) and starts conduitd twice in a row
# as systemd does, with the socket as descriptor 3 and LISTEN_PID,
# LISTEN_FDS and LISTEN_FDNAMES set, one second apart (a restart).
# Pass when:
#   - the first conduitd serves on the passed socket and logs it as
#     inherited (before: it bound the same address itself and failed,
#     "Address already in use", since the launcher holds it);
#   - a request made while no conduitd runs (the restart's gap) waits in
#     the socket's backlog and is answered 200 by the second one: the
#     restart loses no connection;
#   - a passed socket that no listen address names is closed, with a
#     warning;
#   - LISTEN_PID naming another process leaves the descriptors alone (the
#     address is then in use: the start fails and says so).
. "$top_srcdir/t/lib.sh"

pg_start
ROOT=
[ "$(id -u)" = 0 ] && ROOT=--allow-root

# launcher.py PORTFILE RUNS NSOCKETS PIDMODE -- PROGRAM ARGS...: binds
# NSOCKETS sockets on 127.0.0.1:0, writes their ports to PORTFILE, and runs
# PROGRAM RUNS times in a row (a second between two runs) with the sockets
# as descriptors 3, 4, ... and @PORT0@, @PORT1@ in ARGS replaced by the
# ports.  PIDMODE "self" sets LISTEN_PID to the program's pid (as systemd
# does), "other" to the launcher's.
cat >"$T/launcher.py" <<'PY'
import os, socket, sys, time
portfile, runs, nsock, pidmode = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
socks = []
for i in range(nsock):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(128)
    socks.append(s)
ports = [str(s.getsockname()[1]) for s in socks]
args = sys.argv[6:]
for i, p in enumerate(ports):
    args = [a.replace("@PORT%d@" % i, p) for a in args]
with open(portfile + ".tmp", "w") as f:
    f.write(" ".join(ports) + "\n")
os.rename(portfile + ".tmp", portfile)
launcher = os.getpid()
for run in range(runs):
    pid = os.fork()
    if pid == 0:
        for i, s in enumerate(socks):
            os.dup2(s.fileno(), 3 + i)
            os.set_inheritable(3 + i, True)
        env = dict(os.environ, LISTEN_FDS=str(nsock), LISTEN_FDNAMES=":".join(["http"] * nsock),
                   LISTEN_PID=str(os.getpid() if pidmode == "self" else launcher))
        os.execve(args[0], args, env)
    with open(portfile + ".pids", "a") as f:
        f.write("%d\n" % pid)
    os.waitpid(pid, 0)
    if run + 1 < runs:
        time.sleep(1)
PY

# launch NAME RUNS NSOCKETS PIDMODE CONDUITD-ARGS...: the launcher in the
# background, logging to $T/NAME.log; PORTS, LAUNCHER set.
launch() {
    _name=$1 _runs=$2 _n=$3 _mode=$4
    shift 4
    : >"$T/$_name.log"
    $PY "$T/launcher.py" "$T/$_name.port" "$_runs" "$_n" "$_mode" -- "$CONDUITD" --dev $ROOT \
        --db "$DB" --log "$T/$_name.log" "$@" </dev/null >"$T/$_name.out" 2>&1 &
    LAUNCHER=$!
    EXTRA_PIDS="${EXTRA_PIDS:-} $LAUNCHER"
    wait_for 10 test -s "$T/$_name.port" || bail "the launcher did not start"
    PORTS=$(cat "$T/$_name.port")
}
# run_pid NAME N: the pid of the N-th conduitd the launcher started.
run_pid() { sed -n "${2}p" "$T/$1.port.pids" 2>/dev/null; }

# ------------------------------------------------------------ a restart
launch restart 2 1 self -b 127.0.0.1:@PORT0@ -w 2
P=$PORTS
URL="http://127.0.0.1:$P"
wait_for 10 grep -q 'worker(s) ready' "$T/restart.log" ||
    bail "conduitd did not start on the passed socket: $(tail -3 "$T/restart.log")"
check "it says the socket is inherited" grep -q "listening on 127.0.0.1:$P (inherited, LISTEN_FDS)" "$T/restart.log"
is "served on the passed socket" "$(curl -s -o /dev/null -w '%{http_code}' "$URL/api/tags")" 200
FIRST=$(run_pid restart 1)
check "the first run's pid is known" [ -n "$FIRST" ]
kill -TERM "$FIRST"
wait_for 10 sh -c "! kill -0 $FIRST 2>/dev/null" || bail "the first conduitd did not stop"
# Nobody accepts now; the kernel still completes the connection.
t0=$(ms_now)
curl -s -o "$T/gap.body" -w '%{http_code}' --max-time 20 "$URL/api/tags" >"$T/gap.status" &
GAP=$!
wait "$GAP"
t1=$(ms_now)
is "a request made in the restart's gap is answered by the next run" "$(cat "$T/gap.status")" 200
note "it waited $((t1 - t0)) ms in the backlog"
SECOND=$(run_pid restart 2)
check "  and the second run served it (pid $SECOND, on the same socket)" \
    sh -c "[ -n '$SECOND' ] && kill -0 '$SECOND' && [ \$(grep -c 'listening on 127.0.0.1:$P (inherited' '$T/restart.log') -eq 2 ]"
stop_pid "$(run_pid restart 2)"
stop_pid "$LAUNCHER"

# ------------------------------------------------------------ a socket nobody names
launch extra 1 2 self -b 127.0.0.1:@PORT0@ -w 1
wait_for 10 grep -q 'worker(s) ready' "$T/extra.log" || bail "conduitd did not start: $(tail -3 "$T/extra.log")"
P1=$(echo "$PORTS" | cut -d' ' -f2)
check "the unnamed socket is reported and closed" \
    grep -q "no listen address names, closed: 127.0.0.1:$P1" "$T/extra.log"
is "the named one serves" \
    "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$(echo "$PORTS" | cut -d' ' -f1)/api/tags")" 200
stop_pid "$(run_pid extra 1)"
stop_pid "$LAUNCHER"

# ------------------------------------------------------------ meant for another process
launch other 1 1 other -b 127.0.0.1:@PORT0@ -w 1
wait_for 10 sh -c "! kill -0 $LAUNCHER 2>/dev/null"
check "LISTEN_PID of another process: the sockets are not taken (the start fails)" \
    grep -q 'Address already in use' "$T/other.log"
done_testing
