#!/bin/sh
# A binary upgrade on the fly (nginx's USR2, WINCH and HUP rollback), with
# two builds that differ: A, the built conduitd, and B, a copy whose
# version string is patched to another of the same length, so that
# /healthz ("version") says which binary answered.  A daemon (-d, a
# pidfile) started from $T/bin/conduitd, where each "release" is installed
# as a new file (cp, then mv over it, as a package manager does), serves
# strict kept-alive clients that never retry (strict_start in t/lib.sh)
# through each step:
#   1. conduitd -s upgrade, A to B: exit 0; 0 failed requests, the
#      comments stored are the comments answered; the pidfile names the new
#      master, no .oldbin is left, the old master is gone; the new master
#      took the sockets (inherited) and did not detach again (the old
#      master's session); B alone answers; it told the service manager
#      MAINPID=<its pid>, and the old master sent no STOPPING=1;
#   2. by hand, B to A and back: USR2 (the pidfile moves to .oldbin, the
#      new master is the old one's child), WINCH (the old workers drain; A
#      alone answers), HUP to the old master (its workers are back), TERM
#      to the new one: the pidfile names the old master again, B alone
#      answers, 0 failed;
#   3. upgrades that cannot work: a "binary" that exits 1, a configuration
#      the new binary refuses, no file at the path: -s upgrade exits 1 and
#      says so, the master logs why, keeps its pidfile and its workers, and
#      B answers throughout, 0 failed;
#   4. TERM to the old master during an upgrade, before WINCH: the new one
#      serves on alone.
# Before: USR2 was logged and ignored ("conduitd has no binary upgrade")
# and -s upgrade was refused: a new release meant a restart.
. "$top_srcdir/t/lib.sh"
has_loadgen || skip "t/loadgen is not built"
command -v jq >/dev/null || skip "jq not installed"
[ -x "${NOTIFY_LISTEN:-}" ] || skip "NOTIFY_LISTEN is set by make check"

pg_start
root=
[ "$(id -u)" = 0 ] && root=--allow-root
SRC=${CONDUITD_REAL:-$CONDUITD}

# ------------------------------------------------------------ two builds
VA=$("$SRC" -V | sed -n '1s/^conduitd //p')
# Only the first byte differs: the linker merges a string that is the
# tail of another ("0", the default of max_requests, is the tail of
# "0.1.0"), so patching the version's tail would change those too.
case $VA in 9*) VB=8${VA#?} ;; *) VB=9${VA#?} ;; esac
mkdir -p "$T/bin"
cp "$SRC" "$T/bin/conduitd-a"
$PY - "$SRC" "$T/bin/conduitd-b" "$VA" "$VB" <<'EOF' || bail "cannot patch the version string"
import sys
src, dst, a, b = sys.argv[1:]
data = open(src, "rb").read()
old, new = b"\0" + a.encode() + b"\0", b"\0" + b.encode() + b"\0"
if old not in data:
    sys.exit("version %s not found in %s" % (a, src))
open(dst, "wb").write(data.replace(old, new))
EOF
chmod 755 "$T/bin/conduitd-b"
printf '#!/bin/sh\nexit 1\n' >"$T/bin/conduitd-fail"
chmod 755 "$T/bin/conduitd-fail"
is "build B says its own version" "$("$T/bin/conduitd-b" -V | head -n 1)" "conduitd $VB"
is "build A says the built one" "$("$T/bin/conduitd-a" -V | head -n 1)" "conduitd $VA"

BIN=$T/bin/conduitd
# install FILE: the next release, at the path the daemon was started from.
install_bin() { cp "$1" "$BIN.new" && mv -f "$BIN.new" "$BIN"; }

# ------------------------------------------------------------ helpers
# served [N]: the versions that N (20) /healthz answers on new connections came from.
served() {
    for _i in $(seq "${1:-20}"); do
        curl -s --max-time 5 "$BASE/healthz" | jq -r '.version // "none"' 2>/dev/null || echo none
    done | sort -u | tr '\n' ' ' | sed 's/ $//'
}
# workers_of PID: its children that are workers (by their title).
workers_of() {
    for _c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
        case "$(tr '\0' ' ' 2>/dev/null <"/proc/$_c/cmdline")" in "conduitd: worker"*) echo "$_c" ;; esac
    done
}
no_workers() { [ -z "$(workers_of "$1")" ]; }
# gone PID: not running (a zombie counts as gone).
gone() { case $(sed 's/.*) //' /proc/"$1"/stat 2>/dev/null | cut -d ' ' -f 1) in '' | Z) return 0 ;; esac; return 1; }
field() { sed 's/.*) //' /proc/"$1"/stat | cut -d ' ' -f "$2"; }
pidfile_is() { [ "$(cat "$pidf" 2>/dev/null)" = "$1" ]; }
pidfile_moved() { [ -s "$pidf" ] && ! pidfile_is "$1"; }
log_has() { grep -q -- "$1" "$T/conduitd.log"; }

# ------------------------------------------------------------ start A
"$NOTIFY_LISTEN" "$T/notify.sock" >"$T/notify.out" 2>&1 &
EXTRA_PIDS=$!
wait_for 5 grep -q '^listening' "$T/notify.out" || bail "notify_listen did not start"
install_bin "$T/bin/conduitd-a"
pidf=$T/conduitd.pid
cat >"$T/conduitd.conf" <<CONF
workers = 2
pool = 2
bcrypt_cost = 4
graceful_timeout = 10
CONF
chmod 600 "$T/conduitd.conf"
: >"$T/conduitd.log"
NOTIFY_SOCKET=$T/notify.sock "$BIN" -d -c "$T/conduitd.conf" -b 127.0.0.1:0 --dev $root \
    --db "$DB" --pid "$pidf" --log "$T/conduitd.log" </dev/null >"$T/start.out" 2>&1 ||
    bail "the daemon did not start: $(cat "$T/start.out")"
M1=$(cat "$pidf")
CONDUITD_PID=$M1
PORT=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$T/conduitd.log" | head -n 1)
BASE="http://127.0.0.1:$PORT"
is "A serves" "$(served)" "$VA"
strict_setup

# ------------------------------------------------------------ 1. -s upgrade
install_bin "$T/bin/conduitd-b"
strict_start up 4 4 12
sleep 2
t0=$(ms_now)
"$CONDUITD" -s upgrade --pid "$pidf" 2>"$T/up.err"
rc=$?
t1=$(ms_now)
sed 's/^/#   /' "$T/up.err"
is "-s upgrade exits 0" "$rc" 0
M2=$(cat "$pidf")
EXTRA_PIDS="$EXTRA_PIDS $M2"
note "upgrade A ($M1) -> B ($M2) under load: $((t1 - t0)) ms"
check "the pidfile names a new master" sh -c "[ '$M2' != '$M1' ] && kill -0 '$M2'"
check "no .oldbin is left" [ ! -e "$pidf.oldbin" ]
check "the old master has exited" gone "$M1"
CONDUITD_PID=$M2
check "the new master took the socket passed (inherited)" \
    log_has "listening on 127.0.0.1:$PORT (inherited, LISTEN_FDS)"
check "it knew it was an upgrade" log_has "this master (pid $M2) was started by the master pid $M1"
is "it did not detach again: the old master's session" "$(field "$M2" 4)" "$M1"
is "its folder is / (as a daemon's)" "$(readlink "/proc/$M2/cwd")" /
is "B alone serves" "$(served)" "$VB"
strict_wait up
check "it told the service manager MAINPID=$M2" grep -q "^$M2: READY=1 | MAINPID=$M2" "$T/notify.out"
check "the old master sent no STOPPING=1" sh -c "! grep -q '^$M1: .*STOPPING=1' '$T/notify.out'"

# ------------------------------------------------------------ 2. rollback
install_bin "$T/bin/conduitd-a"
strict_start rb 4 4 14
sleep 1
kill -USR2 "$M2"
check "USR2: a new master writes the pidfile once ready" wait_for 30 pidfile_moved "$M2"
M3=$(cat "$pidf")
EXTRA_PIDS="$EXTRA_PIDS $M3"
is "  the old master's pid is in .oldbin" "$(cat "$pidf.oldbin" 2>/dev/null)" "$M2"
is "  the new master is the old one's child" "$(field "$M3" 2)" "$M2"
check "  both serve: the old master's workers are still there" [ -n "$(workers_of "$M2")" ]
kill -WINCH "$M2"
check "WINCH: the old master's workers drain and exit" wait_for 20 no_workers "$M2"
check "  the old master stays" alive "$M2"
is "  A alone serves" "$(served)" "$VA"
kill -HUP "$M2"
check "HUP to the old master: its workers are back" \
    wait_for 20 log_has "workers back: generation .* this master (pid $M2) serves again"
kill -TERM "$M3"
check "TERM to the new master: it exits" wait_for 20 gone "$M3"
check "  the pidfile names the old master again" wait_for 5 pidfile_is "$M2"
check "  no .oldbin is left" [ ! -e "$pidf.oldbin" ]
check "  the old master says it keeps the service" \
    log_has "the new master (pid $M3) exited (exit status 0): this master (pid $M2) keeps"
is "  B alone serves again" "$(served)" "$VB"
strict_wait rb
check "the old master said MAINPID=$M2 again" grep -q "^$M2: MAINPID=$M2" "$T/notify.out"

# ------------------------------------------------------------ 3. failures
retired=$(grep -c 'upgrade: retiring' "$T/conduitd.log")
strict_start bad 4 4 14
sleep 1
install_bin "$T/bin/conduitd-fail"
"$CONDUITD" -s upgrade --pid "$pidf" 2>"$T/bad1.err"
rc=$?
sed 's/^/#   /' "$T/bad1.err"
check "a binary that exits 1: -s upgrade fails" [ "$rc" -ne 0 ]
check "  and says no new master took over" grep -q 'no new master took over' "$T/bad1.err"
check "  the master logged it" log_has "upgrade failed: the new master (pid [0-9]*) ended (exit status 1)"
check "  the pidfile names it still" pidfile_is "$M2"
check "  no .oldbin is left" [ ! -e "$pidf.oldbin" ]

install_bin "$T/bin/conduitd-b"
cp "$T/conduitd.conf" "$T/conduitd.conf.good"
echo "workers = lots" >>"$T/conduitd.conf"
"$CONDUITD" -s upgrade --pid "$pidf" 2>"$T/bad2.err"
rc=$?
sed 's/^/#   /' "$T/bad2.err"
check "a configuration the new binary refuses: -s upgrade fails" [ "$rc" -ne 0 ]
check "  the reason is in the log (the new binary's stderr)" log_has "conduitd.conf:5: .*workers"
check "  the pidfile names the old master still" pidfile_is "$M2"
cp "$T/conduitd.conf.good" "$T/conduitd.conf"

rm -f "$BIN"
kill -USR2 "$M2"
check "no binary at the path: USR2 is logged as failed" \
    wait_for 5 log_has "upgrade failed: cannot execute $BIN: No such file or directory"
check "  the pidfile is back at once" pidfile_is "$M2"
# (Not the same pids: the test-hooks build recycles workers after a few requests.)
is "the old master retired none of its workers for them" "$(grep -c 'upgrade: retiring' "$T/conduitd.log")" "$retired"
is "  and has its 2" "$(workers_of "$M2" | wc -l | tr -d ' ')" 2
is "B alone serves" "$(served)" "$VB"
strict_wait bad

# ------------------------------------------------------------ 4. TERM before WINCH
install_bin "$T/bin/conduitd-a"
kill -USR2 "$M2"
check "USR2 again: a new master" wait_for 30 pidfile_moved "$M2"
M4=$(cat "$pidf")
EXTRA_PIDS="$EXTRA_PIDS $M4"
kill -USR2 "$M2"
check "  a second USR2 meanwhile is refused" wait_for 5 log_has "SIGUSR2 ignored: the new master (pid $M4)"
kill -USR2 "$M4"
check "  and so is one to the new master" wait_for 5 log_has "SIGUSR2 ignored: the old master (pid $M2)"
kill -TERM "$M2"
check "TERM to the old master: it exits" wait_for 20 gone "$M2"
check "  the new master serves on alone" alive "$M4"
is "  A alone serves" "$(served)" "$VA"
check "  .oldbin went with the old master" [ ! -e "$pidf.oldbin" ]
CONDUITD_PID=$M4

"$CONDUITD" -s stop --pid "$pidf"
check "-s stop stops the last master" wait_for 20 gone "$M4"
check "  and removes the pidfile" [ ! -e "$pidf" ]
CONDUITD_PID=
done_testing
