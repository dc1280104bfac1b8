#!/bin/sh
# A primary failover under load, with PostgreSQL's own replication: a
# primary and a streaming standby made with pg_basebackup -R (synchronous,
# so a commit that was answered is on the standby too), conduitd -w 2
# --cache on with both hosts in one libpq connection string and
# target_session_attrs=read-write.  Under a steady load of reads and of
# writes (comments), the primary is stopped in immediate mode and the
# standby promoted a second later.  Asserted: reads and writes are served
# again within 5 s of the promotion; no worker exits; never a 500 (only 200,
# and 503 + Retry-After while there is no primary, and 502 without it for a
# write in flight when the primary went); every write answered 2xx is
# stored on the new primary (and at most the writes answered 502 or not at
# all beside them: a 503 stored nothing); the cache listener follows to the new primary, and the
# cache (emptied when its listener broke) serves a change made there.
# The gap is printed.
#
# With FAILOVER_TCP set (failover_tcp.sh), the same over TCP on 127.0.0.1,
# two ports, as hosts on different machines are wired: there libpq moves
# to the next host on a new socket that may reuse the old descriptor
# number, which the unix-socket run does not cross.  Then, with the
# promoted standby as the only server: a first host that refuses (the old
# primary's port) and a first host that accepts and never answers (a
# listener that only accepts) against the live one alone, measured from
# the start of a conduitd to its first 200: within 1 s of the baseline for
# the refusing host, within connect_timeout (2 s) + 1 s for the silent one,
# and every worker's cache listening on the live server.
. "$top_srcdir/t/lib.sh"

has_loadgen || skip "t/loadgen is not built"
command -v jq >/dev/null || skip "jq not installed"
[ -x "$PG_BINDIR/pg_basebackup" ] || skip "pg_basebackup not found in $PG_BINDIR"

TCP=${FAILOVER_TCP:-}
[ -n "$TCP" ] && PG_LISTEN=127.0.0.1
pg_start
PRIMARY_PORT=$PGPORT
if [ -n "$TCP" ]; then
    pg_standby_start "listen_addresses = '127.0.0.1'"
else
    pg_standby_start
fi
S=$STANDBY_HOST
# Synchronous from here: an answered commit is on both.
psql -X -q -c "ALTER SYSTEM SET synchronous_standby_names = '*'" \
    -c "ALTER SYSTEM SET synchronous_commit = on" -c "SELECT pg_reload_conf()" >/dev/null
wait_for 10 sh -c "[ \"\$(psql -X -At -c \"select sync_state from pg_stat_replication\")\" = sync ]"
is "the standby is synchronous" "$(psql -X -At -c 'select sync_state from pg_stat_replication')" sync

DB="host=$PGHOST,$S port=$PRIMARY_PORT,$STANDBY_PORT user=postgres dbname=conduit target_session_attrs=read-write"
[ -n "$TCP" ] &&
    DB="host=127.0.0.1,127.0.0.1 port=$PRIMARY_PORT,$STANDBY_PORT user=postgres dbname=conduit target_session_attrs=read-write connect_timeout=2"
note "connection string: $DB"
conduitd_start -w 2 --pool 2 --cache on
pids_before=$(worker_pids | sort | tr '\n' ' ')

http POST /api/users '{"user":{"username":"fo","email":"fo@example.io","password":"pw-failover"}}'
is "register" "$STATUS" 201
TOK=$(printf '%s' "$BODY" | jq -r .user.token)
http POST /api/articles '{"article":{"title":"Failover","description":"d","body":"b"}}' "$TOK"
is "an article" "$STATUS" 201
SLUG=$(printf '%s' "$BODY" | jq -r .article.slug)

# A server that reaches only the standby (no target_session_attrs, as a
# careless connection string would): reads are served, and a write is a
# 503 + Retry-After that changes nothing, not a 500.
MAIN_PORT=$PORT MAIN_BASE=$BASE MAIN_PID=$CONDUITD_PID
: >"$T/ro.log"
"$CONDUITD" -b 127.0.0.1:0 --dev $( [ "$(id -u)" = 0 ] && echo --allow-root ) -w 1 \
    --db "host=$S port=$STANDBY_PORT user=postgres dbname=conduit" --log "$T/ro.log" \
    </dev/null >/dev/null 2>&1 &
EXTRA_PIDS="${EXTRA_PIDS:-} $!"
wait_for 10 grep -q 'worker(s) ready' "$T/ro.log" || bail "the read-only server did not start"
BASE="http://127.0.0.1:$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$T/ro.log" | head -n 1)"
wait_for 10 sh -c "curl -s '$BASE/api/articles/$SLUG' | grep -q Failover"
http GET "/api/articles/$SLUG"
is "on the standby alone: a read is served" "$STATUS" 200
before=$(psql -X -At -c 'select count(*) from comments')
curl -s -D "$T/ro.hdr" -o "$T/ro.body" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
    -H "Authorization: Token $TOK" --data-binary '{"comment":{"body":"to a standby"}}' \
    "$BASE/api/articles/$SLUG/comments" >"$T/ro.status"
is "a write is 503, not 500" "$(cat "$T/ro.status")" 503
check "with Retry-After" grep -qi '^retry-after:' "$T/ro.hdr"
is "and nothing was stored" "$(psql -X -At -c 'select count(*) from comments')" "$before"
check "the log says why" grep -q 'read-only (a standby' "$T/ro.log"
PORT=$MAIN_PORT BASE=$MAIN_BASE CONDUITD_PID=$MAIN_PID
http GET /api/profiles/fo
is "the profile, now cached" "$STATUS" 200

# The gaps, to the end, are measured alone (t/lib.sh), not beside the rest
# of the suite.
exclusive
load_start reads -c 4 -r 150 -d 16 -k -u '/api/articles?limit=5' -o "$T/reads.csv"
READS_PID=$LOAD_PID
load_start writes -c 4 -r 60 -d 16 -k -m POST -u "/api/articles/$SLUG/comments" \
    -H "Authorization: Token $TOK" -H 'Content-Type: application/json' \
    -b '{"comment":{"body":"written during a failover"}}' -o "$T/writes.csv"
WRITES_PID=$LOAD_PID
wait_for 10 lines_at_least "$T/writes.csv" 100 || bail "the load did not start"
sleep 2

t_stop=$(ms_now)
pg_ctl_stop immediate
PG_STARTED=
sleep 1
t_promote=$(ms_now)
as_pg "$PG_BINDIR/pg_ctl" -D "$S/data" -w -t 30 promote >/dev/null || fail "promote failed"
t_promoted=$(ms_now)
note "primary stopped at +0 ms, promote asked at +$((t_promote - t_stop)) ms, done at +$((t_promoted - t_stop)) ms"

load_wait reads "$READS_PID"
load_wait writes "$WRITES_PID"

# status by phase, from the CSVs (end time ms, status, latency us, retry-after, pid)
for k in reads writes; do
    f=$T/$k.csv
    # A write in flight when the primary went may have committed: 502.
    ok502=$([ "$k" = writes ] && echo 502 || echo 503)
    other=$(awk -F, -v u="$ok502" '$2 != 200 && $2 != 201 && $2 != 503 && $2 != u' "$f" | wc -l)
    is "$k: only 200/201 and 503 (and 502 for a write), never a 500 or a cut request" "$other" 0
    [ "$other" -gt 0 ] && awk -F, -v u="$ok502" '$2 != 200 && $2 != 201 && $2 != 503 && $2 != u' "$f" | head -3 | sed 's/^/# /'
    noretry=$(awk -F, '$2 == 503 && $4 != 1' "$f" | wc -l)
    is "$k: every 503 says Retry-After" "$noretry" 0
    is "$k: no 502 says Retry-After" "$(awk -F, '$2 == 502 && $4 == 1' "$f" | wc -l)" 0
    back=$(awk -F, -v t="$t_promote" '$1 >= t && ($2 == 200 || $2 == 201) { print $1; exit }' "$f")
    check "$k: served again after the promotion" [ -n "$back" ]
    [ -n "$back" ] || back=$((t_promote + 99999))
    gap=$((back - t_promote))
    note "$k: first answer from the new primary $gap ms after the promotion was asked, $((back - t_stop)) ms after the primary stopped"
    check "$k: within 5 s of the promotion ($gap ms)" [ "$gap" -le 5000 ]
    late=$(awk -F, -v t="$((back + 1000))" '$1 >= t && $2 != 200 && $2 != 201' "$f" | wc -l)
    is "$k: full service a second after the first answer" "$late" 0
    n503=$(awk -F, '$2 == 503' "$f" | wc -l)
    note "$k: $(wc -l <"$f") requests, $n503 answered 503"
done
is "no worker exited" "$(worker_pids | sort | tr '\n' ' ')" "$pids_before"
check "no worker died" sh -c "! grep -q 'died unexpectedly\|exited with status' '$T/conduitd.log'"

# Every answered write is on the new primary (the standby, promoted).
PGHOST=$S PGPORT=$STANDBY_PORT
export PGHOST PGPORT
answered=$(awk -F, '$2 == 201 || $2 == 200' "$T/writes.csv" | wc -l)
unknown=$(awk -F, '$2 != 201 && $2 != 200 && $2 != 503' "$T/writes.csv" | wc -l)
stored=$(psql -X -At -c "select count(*) from comments c join articles a on a.id = c.article_id where a.slug = '$SLUG'")
note "writes: $answered answered 2xx, $stored stored on the new primary, $unknown answered 502 (outcome unknown) or not at all"
check "every answered write is stored ($answered answered, $stored stored)" [ "$stored" -ge "$answered" ]
check "and no more than the writes of unknown outcome beside them (a 503 stored nothing)" \
    [ "$stored" -le $((answered + unknown)) ]
is "the new primary is no standby" "$(psql -X -At -c 'select pg_is_in_recovery()')" f

# The cache listener moved too: a change made on the new primary is seen.
listeners() { psql -X -At -c "select count(*) from pg_stat_activity where application_name = 'conduitd cache'"; }
wait_for 10 sh -c "[ \"\$(psql -X -At -c \"select count(*) from pg_stat_activity where application_name = 'conduitd cache'\")\" = 2 ]"
is "both workers' cache listeners are on the new primary" "$(listeners)" 2
psql -X -q -c "update users set bio = 'after the failover' where username = 'fo'"
ok=0
for i in 1 2 3 4 5 6 7 8 9 10; do
    http GET /api/profiles/fo
    [ "$(printf '%s' "$BODY" | jq -r .profile.bio)" = "after the failover" ] && ok=$((ok + 1))
done
is "the cache serves the new primary's data on every worker (10 of 10)" "$ok" 10

[ -n "$TCP" ] || done_testing

# The servers above go: what follows counts the cache listeners of one.
for _x in ${EXTRA_PIDS:-}; do stop_pid "$_x"; done
EXTRA_PIDS=
stop_pid "$CONDUITD_PID"
CONDUITD_PID=

# ms_to_serve NAME CONNINFO: starts a conduitd -w 2 --cache on with that
# connection string; SERVE_MS is the ms from its start to its first 200 on
# GET /api/tags with both workers' cache listening (99999: not within 15 s).
# It is stopped after.
ms_to_serve() {
    _log=$T/serve-$1.log
    : >"$_log"
    _t0=$(ms_now)
    "$CONDUITD" -b 127.0.0.1:0 --dev $( [ "$(id -u)" = 0 ] && echo --allow-root ) -w 2 --cache on \
        --log-level info --db "$2" --log "$_log" </dev/null >/dev/null 2>&1 &
    _pid=$!
    EXTRA_PIDS=$_pid
    _ms=99999
    while [ $(($(ms_now) - _t0)) -lt 15000 ]; do
        _port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$_log" | head -n 1)
        if [ -n "$_port" ] &&
            [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$_port/api/tags")" = 200 ] &&
            [ "$(listeners)" -ge 2 ]; then
            _ms=$(($(ms_now) - _t0))
            break
        fi
        sleep 0.05
    done
    stop_pid "$_pid"
    EXTRA_PIDS=
    wait_for 10 sh -c "[ \"\$(psql -X -At -c \"select count(*) from pg_stat_activity where application_name like 'conduitd%'\")\" = 0 ]"
    SERVE_MS=$_ms
}

# Only the promoted standby serves now; the old primary's port refuses.
LIVE="user=postgres dbname=conduit target_session_attrs=read-write connect_timeout=2"
ms_to_serve alone "host=127.0.0.1 port=$STANDBY_PORT $LIVE"
base_ms=$SERVE_MS
note "the live server alone: serving $base_ms ms after the start"
check "the live server alone: serving ($base_ms ms)" [ "$base_ms" -lt 99999 ]

ms_to_serve dead "host=127.0.0.1,127.0.0.1 port=$PRIMARY_PORT,$STANDBY_PORT $LIVE"
dead_ms=$SERVE_MS
note "a refusing first host: serving $dead_ms ms after the start"
check "a refusing first host: serving within 1 s of the baseline ($dead_ms against $base_ms ms)" \
    [ "$dead_ms" -le $((base_ms + 1000)) ]

# A first host that accepts and never says a word (a machine whose
# PostgreSQL hangs, or a proxy in front of a dead one).
$PY -c '
import socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(64)
print(s.getsockname()[1], flush=True)
held = []
end = time.time() + 60
s.settimeout(1)
while time.time() < end:
    try:
        held.append(s.accept()[0])
    except socket.timeout:
        pass
' >"$T/silent.port" &
SILENT_PID=$!
wait_for 10 test -s "$T/silent.port" || bail "the silent listener did not start"
SILENT=$(cat "$T/silent.port")
ms_to_serve silent "host=127.0.0.1,127.0.0.1 port=$SILENT,$STANDBY_PORT $LIVE"
silent_ms=$SERVE_MS
note "a silent first host (connect_timeout=2): serving $silent_ms ms after the start"
check "a silent first host: serving within connect_timeout + 1 s of the baseline ($silent_ms against $base_ms ms)" \
    [ "$silent_ms" -le $((base_ms + 3000)) ]
check "the log says which host did not answer" grep -q "127.0.0.1:$SILENT: no answer within 2000 ms" "$T/serve-silent.log"
stop_pid "$SILENT_PID"
done_testing
