#!/bin/sh
# -d detaches, writes the pidfile; -s reopen/reload/stop signal it through
# the pidfile; stop removes the pidfile.  A second start refuses the live
# pidfile, and a start on a taken port fails; both say why on stderr, not
# only in the --log file (before, they exited 1 with nothing on stderr).
. "$top_srcdir/t/lib.sh"

root=; [ "$(id -u)" = 0 ] && root=--allow-root
pidf="$T/conduitd.pid"
set -- -b 127.0.0.1:0 --dev $root -w 2 --pid "$pidf" --log "$T/conduitd.log"
t0=$(date +%s)
"$CONDUITD" -d "$@" </dev/null >"$T/out" 2>&1
rc=$?
is "the starting process exits 0" "$rc" 0
check "the pidfile exists once -d returns" [ -s "$pidf" ]
pid=$(cat "$pidf")
check "the pid in it is alive" alive "$pid"
stat=$(sed 's/.*) //' /proc/$pid/stat)
is "the daemon is not our child (it detached)" "$(echo "$stat" | awk '{print $2}')" 1
is "it leads its own session" "$(echo "$stat" | awk '{print $4}')" "$pid"
check "its cwd is /" [ "$(readlink /proc/$pid/cwd)" = / ]
CONDUITD_PID=$pid
PORT=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$T/conduitd.log" | head -n 1)
BASE="http://127.0.0.1:$PORT"
is "it serves" "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/healthz")" 200
check "workers were ready before -d returned" grep -q 'worker(s) ready' "$T/conduitd.log"

"$CONDUITD" -d "$@" </dev/null >"$T/out2" 2>&1
check "a second daemon with the same pidfile refuses" [ $? -ne 0 ]
is "and leaves the pidfile alone" "$(cat "$pidf")" "$pid"
check "and says why on stderr, though it logs to a file" \
    grep -q "already running with pid $pid" "$T/out2"
note "    stderr: $(short "$(cat "$T/out2")")"

# The same port, another pidfile: the bind fails before the detach.
"$CONDUITD" -d -b "127.0.0.1:$PORT" --dev $root -w 1 --pid "$T/other.pid" \
    --log "$T/other.log" </dev/null >"$T/out3" 2>&1
check "a daemon on a taken port fails" [ $? -ne 0 ]
check "and says why on stderr" grep -q "in use" "$T/out3"
note "    stderr: $(short "$(cat "$T/out3")")"
"$CONDUITD" -b "127.0.0.1:$PORT" --dev $root -w 1 --log "$T/other.log" </dev/null >"$T/out4" 2>&1
check "so does one in the foreground" grep -q "in use" "$T/out4"
check "which logged the lines of a good start only in the file" \
    sh -c "! grep -q 'listening\|notice\|info' '$T/out4'"

mv "$T/conduitd.log" "$T/conduitd.log.1"
"$CONDUITD" -s reopen --pid "$pidf"
wait_for 5 test -s "$T/conduitd.log"
check "-s reopen makes a new log file" grep -q 'log reopened' "$T/conduitd.log"

"$CONDUITD" -s reload --pid "$pidf" --dev
wait_for 10 grep -q 'reload complete' "$T/conduitd.log"
check "-s reload reloads" grep -q 'reload complete' "$T/conduitd.log"

"$CONDUITD" -s stop --pid "$pidf"
is "-s stop exits 0" "$?" 0
wait_for 10 sh -c "! kill -0 $pid 2>/dev/null"
check "the daemon stopped" sh -c "! kill -0 $pid 2>/dev/null"
check "the pidfile is removed" [ ! -e "$pidf" ]
CONDUITD_PID=
"$CONDUITD" -s stop --pid "$pidf" 2>"$T/err"
check "-s stop without a running master fails" [ $? -ne 0 ]
check "and says why" grep -q . "$T/err"

# A start that cannot work fails in the starting process, not silently.
"$CONDUITD" -d -b 256.0.0.1:1 --dev $root --pid "$pidf" --log "$T/bad.log" </dev/null >/dev/null 2>&1
check "-d with an unusable address exits non-zero" [ $? -ne 0 ]
check "and leaves no pidfile" [ ! -e "$pidf" ]
done_testing
