#!/bin/sh
# The signals an operator sends a pre-fork master by habit (nginx's,
# unicorn's, gunicorn's) are the master's: sent to the whole process
# group, the workers ignore their copies of USR2 (a binary upgrade:
# upgrade.sh), WINCH (retire the workers once a new master serves) and
# TTIN and TTOU (their default action would stop a worker, state T,
# serving nothing, whenever the group has a parent in the same session, as
# a master started from a shell does; this test's group, led by setsid,
# has none, so the kernel drops those stops and only the count of workers
# is checked for them).  WINCH with no upgrade under way is logged and
# ignored: it would leave nothing serving (and a terminal sends it when
# resized).  USR2 to the group starts one new master beside the old one
# (no pidfile here), and TERM to the new one leaves the old one serving
# with the same workers.
# Before: USR2 killed the master and left its two workers serving
# unsupervised; then, until the binary upgrade, it was ignored.
. "$top_srcdir/t/lib.sh"

# state PID: the process's state letter (R, S, T for stopped, Z), or "gone".
state() { sed 's/.*) //' /proc/"$1"/stat 2>/dev/null | cut -d ' ' -f 1 || true; }
# serving: every worker of the master alive and not stopped, and the port answers.
serving() {
    for _p in $(worker_pids); do
        case $(state "$_p") in T | t | Z | '') return 1 ;; esac
    done
    http GET /healthz
    [ "$STATUS" = 200 ]
}
lost() { grep -c -E 'killed by signal|died unexpectedly|did not ask' "$T/conduitd.log"; }

CONDUITD_SETSID=1 conduitd_start -w 2
before=$(worker_pids | sort | tr '\n' ' ')

kill -WINCH "$CONDUITD_PID"
wait_for 5 grep -q 'SIGWINCH ignored' "$T/conduitd.log"
check "WINCH with no upgrade: the master says it ignores it" \
    grep -q 'SIGWINCH ignored: no new master runs' "$T/conduitd.log"
is "WINCH: the same workers" "$(worker_pids | sort | tr '\n' ' ')" "$before"

kill -WINCH -- -"$CONDUITD_PID"
sleep 0.3
check "WINCH to the process group: the master lives" alive "$CONDUITD_PID"
is "WINCH to the process group: the same workers, none stopped or lost" \
    "$(worker_pids | sort | tr '\n' ' ')" "$before"
check "WINCH to the process group: still serving" serving

kill -USR2 -- -"$CONDUITD_PID"
check "USR2 to the process group: a new master starts" \
    wait_for 5 grep -q 'upgrade: new master started, pid' "$T/conduitd.log"
new=$(sed -n 's/.*upgrade: new master started, pid \([0-9]*\).*/\1/p' "$T/conduitd.log" | head -n 1)
EXTRA_PIDS=$new
check "  and serves beside the old one" \
    wait_for 15 grep -q "upgrade: this master (pid $new, conduitd .*) serves" "$T/conduitd.log"
check "USR2 to the process group: the old master lives" alive "$CONDUITD_PID"
is "USR2 to the process group: the old master's workers, none stopped or lost" \
    "$(worker_pids | sort | tr '\n' ' ')" "$before"
check "USR2 to the process group: still serving" serving
kill -TERM "$new"
check "TERM to the new master: the old one keeps the service" \
    wait_for 15 grep -q "the new master (pid $new) exited (exit status 0): this master (pid $CONDUITD_PID) keeps" "$T/conduitd.log"
EXTRA_PIDS=
is "  with the same workers" "$(worker_pids | sort | tr '\n' ' ')" "$before"
check "  serving" serving

# TTIN and TTOU to the group: the master adds, then removes, a worker; the
# workers' copies do nothing.
kill -TTIN -- -"$CONDUITD_PID"
check "TTIN to the process group: 3 workers" wait_for 5 workers_are 3
check "TTIN to the process group: none stopped, still serving" wait_for 5 serving
for p in $before; do
    check "worker $p not stopped by TTIN (state $(state "$p"))" [ "$(state "$p")" != T ]
done
kill -TTOU -- -"$CONDUITD_PID"
check "TTOU to the process group: 2 workers" wait_for 5 workers_are 2
check "TTOU to the process group: none stopped, still serving" wait_for 5 serving
is "no worker lost or killed by a signal" "$(lost)" 0

# HUP to the group: a reload, as to the master alone; the workers leave it to the master.
kill -HUP -- -"$CONDUITD_PID"
check "HUP to the process group: a reload" wait_for 15 grep -q 'reload complete' "$T/conduitd.log"
check "HUP to the process group: serving" wait_for 5 serving
is "no worker lost or killed by a signal after HUP" "$(lost)" 0

kill -TERM "$CONDUITD_PID"
wait "$CONDUITD_PID"
is "TERM still stops it, status 0" "$?" 0
CONDUITD_PID=
done_testing
