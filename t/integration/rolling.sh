#!/bin/sh
# The several-hosts recipe of docs/scaling.md, as etc/ ships it: a primary
# and a pg_basebackup -R standby; two conduitd "hosts" (masters on their
# own loopback ports) configured from etc/conduitd-host.conf.in, their db
# naming both servers in libpq's multi-host form with
# target_session_attrs=read-write and db_read the standby; nginx in front
# from etc/nginx-upstream.conf.in.  Under a strict load through nginx
# (kept-alive clients that never retry: readers of an article list,
# writers of comments):
# - etc/conduitd-rolling-reload HUPs one host, waits for its new workers
#   and its /healthz, then the other: 0 failed requests, every comment
#   answered is stored and only those, both hosts at generation 2;
# - one host taken out with TERM and started again on its port (a new
#   binary's deploy): 0 failed, nginx sends its share to the other;
# - the reads reached the standby through the recipe's db_read (its
#   /metrics count standby reads on both hosts);
# - a reload the master refuses (a broken file) stops the roll, named.
# The time each host took and the load's figures are printed.
. "$top_srcdir/t/lib.sh"
[ -x "$NGINX" ] || skip "nginx is not installed (apt-get install nginx-light)"
command -v jq >/dev/null || skip "jq not installed"
has_loadgen || skip "t/loadgen is not built"
has_prom_parser || skip "python3-prometheus-client is not installed (script/deps installs it)"

ROLL=$top_srcdir/etc/conduitd-rolling-reload
pg_start
pg_standby_start

for h in a b; do
    host_conf "$T/$h.conf" "$PGHOST,$STANDBY_HOST" "$PGPORT,$STANDBY_PORT" \
        "$STANDBY_HOST" "$STANDBY_PORT" 2 2
done
check "the template has no placeholder left" sh -c "! grep -q '@[A-Z_]*@' '$T/a.conf'"
root=
[ "$(id -u)" = 0 ] && root=--allow-root
out=$("$CONDUITD" -t -c "$T/a.conf" $root 2>&1)
is "conduitd -t accepts the host's file ($(printf '%s' "$out" | tail -n 1))" "$?" 0

# host NAME: a master from its file (no --db: the file's is the one used);
# sets NAME_PID, NAME_PORT, NAME_SBASE; its log is $T/NAME.log.
host() {
    DB= conduitd_start -c "$T/$1.conf" --bcrypt-cost 4
    status_base
    mv "$T/conduitd.log" "$T/$1.log"
    eval "$1_PID=$CONDUITD_PID $1_PORT=$PORT $1_SBASE=$SBASE"
    EXTRA_PIDS="${EXTRA_PIDS:-} $CONDUITD_PID"
    CONDUITD_PID=
}
host a
host b
for h in a b; do
    wait_for 10 grep -q 'standbys in use' "$T/$h.log"
    check "host $h reads on the standby" grep -q 'standbys in use' "$T/$h.log"
done

nginx_start "$T/nginx" "127.0.0.1:$a_PORT" "127.0.0.1:$b_PORT" ||
    bail "nginx did not start: $(cat "$T/nginx/out" "$T/nginx/error.log" 2>/dev/null)"
EXTRA_PIDS="$NGINX_PID $EXTRA_PIDS"
PORT=$NPORT BASE="http://127.0.0.1:$NPORT"
strict_setup

# ---------------------------------------------------------------- HUP
cat >"$T/hosts" <<HOSTS
# API                      status listener          how to reload
http://127.0.0.1:$a_PORT $a_SBASE kill -HUP $a_PID
http://127.0.0.1:$b_PORT $b_SBASE kill -HUP $b_PID
HOSTS
strict_start roll 2 2 14
sleep 3
t0=$(ms_now)
"$ROLL" -t 40 <"$T/hosts" 2>"$T/roll.err"
is "the rolling reload went through both hosts" "$?" 0
t1=$(ms_now)
sed 's/^/# /' "$T/roll.err"
note "rolling reload of 2 hosts under load: $((t1 - t0)) ms"
strict_wait roll
for h in a b; do
    eval "SBASE=\$${h}_SBASE"
    scrape "$h"
    is "host $h: generation 2" "$(sample "$h" conduitd_generation{})" 2
    sr=$(sample "$h" conduitd_db_standby_reads_total{})
    check "host $h: reads answered by the standby ($sr)" [ "$sr" -gt 0 ]
done
check "nginx logged no upstream failure" sh -c "! grep -q 'upstream' '$T/nginx/error.log'"

# ---------------------------------------------------------------- TERM
# Host a out with TERM, then back on its port (a new binary), under load.
strict_start term 2 2 12
sleep 3
kill -TERM "$a_PID"
wait_for 20 sh -c "! kill -0 $a_PID 2>/dev/null"
check "host a stopped on TERM" sh -c "! kill -0 $a_PID 2>/dev/null"
"$CONDUITD" -c "$T/a.conf" -b "127.0.0.1:$a_PORT" --bcrypt-cost 4 --dev $root --log "$T/a2.log" \
    </dev/null >>"$T/a2.out" 2>&1 &
a_PID=$!
EXTRA_PIDS="$EXTRA_PIDS $a_PID"
wait_for 10 sh -c "[ \"\$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:$a_PORT/healthz)\" = 200 ]"
is "host a serves again on its port" \
    "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$a_PORT/healthz")" 200
strict_wait term
check "nginx saw host a go (a refused connection, in its error log)" \
    grep -q "127.0.0.1:$a_PORT" "$T/nginx/error.log"

# ---------------------------------------------------------------- refused
# A broken file: host a's master keeps its configuration, the roll stops there.
echo "pool = none" >>"$T/a.conf"
status_base "$T/a2.log"
printf 'http://127.0.0.1:%s %s kill -HUP %s\n' "$a_PORT" "$SBASE" "$a_PID" >"$T/hosts.a"
printf 'http://127.0.0.1:%s %s kill -HUP %s\n' "$b_PORT" "$b_SBASE" "$b_PID" >>"$T/hosts.a"
"$ROLL" -t 20 <"$T/hosts.a" 2>"$T/roll2.err"
is "a refused reload stops the roll (exit 1)" "$?" 1
sed 's/^/# /' "$T/roll2.err"
check "and names the host" grep -q "127.0.0.1:$a_PORT: the reload was refused" "$T/roll2.err"
check "host b was not touched" sh -c "! grep -q '127.0.0.1:$b_PORT' '$T/roll2.err'"
SBASE=$b_SBASE scrape b2
is "host b still at generation 2" "$(sample b2 conduitd_generation{})" 2
http GET /api/tags
is "the deployment still serves" "$STATUS" 200
done_testing
