#!/bin/sh
# PostgreSQL going away and coming back, under a bounded load of requests
# that read the database.  With the server up (-w 2 --pool 2): PostgreSQL
# stopped for 5 s gives 503 + Retry-After + the JSON error envelope, no
# worker exits, /healthz stays 200; after PostgreSQL starts again full
# service is back within 2 s.  Then the same with every backend killed by
# pg_terminate_backend(): a few 503s at most, never a 500, back within 2 s.
# The load's figures: the 503s (the error count), and the recovery time
# (the last answer other than 200 after PostgreSQL was back).
. "$top_srcdir/t/lib.sh"

# unavailable DESCRIPTION: the last reply is 503, Retry-After, envelope.
unavailable() {
    _ra=$(tr -d '\r' <"$T/hdr" 2>/dev/null | sed -n 's/^[Rr]etry-[Aa]fter: *//p' | head -n 1)
    if [ "$STATUS" = 503 ] && [ -n "$_ra" ] &&
        printf '%s' "$BODY" | jq -e '.errors.body | type == "array" and length > 0 and all(.[]; type == "string")' >/dev/null 2>&1; then
        pass "$1"
    else
        fail "$1: want 503 with Retry-After and the error envelope (Retry-After: '$_ra')"; detail
    fi
}

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# outage_figures CSV T_BACK: from loadgen's CSV, prints the 503 count, the
# count of anything but 200 and 503 (failed connections included), and the
# ms from T_BACK to the end of the last answer that was not 200 (0: none).
outage_figures() {
    awk -F, -v t="$2" '$2 == 503 { e++ } $2 != 200 && $2 != 503 { bad++ }
        $2 != 200 && $1 > t && $1 - t > r { r = $1 - t }
        END { print e + 0, bad + 0, r + 0 }' "$1"
}

# burst N: N parallel GET /api/tags on fresh connections; prints the codes.
burst() {
    _pids=
    for _i in $(seq 1 "$1"); do
        curl -s -o /dev/null -w '%{http_code}\n' --max-time 5 "$BASE/api/tags" >"$T/burst.$_i" 2>/dev/null &
        _pids="$_pids $!"
    done
    wait $_pids
    cat "$T"/burst.*
    rm -f "$T"/burst.*
}

# recover LABEL: polls GET /api/tags every 100 ms for up to 2 s until it
# and a burst of 8 parallel requests (both workers, both pool connections)
# all give 200.  Every status seen goes to $T/seen.  Sets RECOVERY_MS.
recover() {
    _t0=$(now_ms)
    RECOVERY_MS=
    while :; do
        _c=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$BASE/api/tags" 2>/dev/null) || _c=000
        echo "$_c" >>"$T/seen"
        if [ "$_c" = 200 ]; then
            burst 8 >"$T/b"
            cat "$T/b" >>"$T/seen"
            if [ "$(grep -c '^200$' "$T/b")" = 8 ]; then
                RECOVERY_MS=$(($(now_ms) - _t0))
                return 0
            fi
        fi
        [ $(($(now_ms) - _t0)) -ge 2000 ] && return 1
        sleep 0.1
    done
}

command -v jq >/dev/null || skip "jq not installed"
pg_start
conduitd_start -w 2 --pool 2 --bcrypt-cost 4
# The recoveries' times are measured alone (t/lib.sh), not beside the rest
# of the suite.
exclusive
wait_for 5 workers_are 2
WORKERS0=$(worker_pids | sort | tr '\n' ' ')
is "two workers" "$(worker_count)" 2

# ------------------------------------------------------------ healthy
http POST /api/users '{"user":{"username":"pg","email":"pg@example.io","password":"pw-pg"}}'
st "register: 201" 201
TOK=$(printf '%s' "$BODY" | jq -r .user.token)
http POST /api/articles '{"article":{"title":"Before the outage","description":"d","body":"b","tagList":["pg"]}}' "$TOK"
st "create article: 201" 201
http GET /api/tags
st "tags: 200" 200
http GET /api/articles
st "list: 200" 200
http GET /api/user "" "$TOK"
st "current user: 200" 200

# ------------------------------------------------------------ stopped
# The load: 6 clients, a new connection per request, 300 requests/s.
load_start outage -c 6 -r 300 -d 40 -u /api/tags -t 5000 -s "$T/outage.stop" -o "$T/outage.csv"
sleep 1
note "stopping PostgreSQL (fast) for 5 s"
pg_ctl_stop fast || bail "pg_ctl stop failed"
t0=$(now_ms)
t_stopped=$t0
http GET /api/tags
unavailable "PostgreSQL down: GET /api/tags 503"
note "first 503 took $(($(now_ms) - t0)) ms"
http GET /api/articles
unavailable "PostgreSQL down: GET /api/articles 503"
http GET /api/articles/before-the-outage
unavailable "PostgreSQL down: GET an article 503"
http GET /api/user "" "$TOK"
unavailable "PostgreSQL down: GET /api/user 503"
http POST /api/users/login '{"user":{"email":"pg@example.io","password":"pw-pg"}}'
unavailable "PostgreSQL down: login 503"
http POST /api/users '{"user":{"username":"pg2","email":"pg2@example.io","password":"pw"}}'
unavailable "PostgreSQL down: register 503"
http POST /api/articles '{"article":{"title":"During","description":"d","body":"b"}}' "$TOK"
unavailable "PostgreSQL down: create article 503"
# Many at once, on both workers: all 503, none hangs, none 500.
burst 10 >"$T/b"
is "PostgreSQL down: 10 parallel requests all 503" "$(grep -c '^503$' "$T/b")" 10
http GET /api/tags
unavailable "PostgreSQL down, a while later: still 503 (not 500)"
http GET /healthz
st "PostgreSQL down: /healthz 200" 200
is "PostgreSQL down: no worker exited" "$(worker_pids | sort | tr '\n' ' ')" "$WORKERS0"
sleep $(awk -v s="$(($(now_ms) - t_stopped))" 'BEGIN { r = (5000 - s) / 1000; print (r > 0 ? r : 0) }')

# ------------------------------------------------------------ back
note "starting PostgreSQL again after $(($(now_ms) - t_stopped)) ms"
pg_ctl_start || bail "pg_ctl start failed"
t_back=$(now_ms)
: >"$T/seen"
if recover; then
    pass "full service back within 2 s of PostgreSQL's start"
    note "recovery after restart: $RECOVERY_MS ms"
else
    fail "full service back within 2 s of PostgreSQL's start: statuses seen $(sort "$T/seen" | uniq -c | tr '\n' ' ')"
fi
is "during recovery after restart: nothing but 200 or 503" "$(grep -cv '^200$\|^503$' "$T/seen")" 0
http GET /api/articles/before-the-outage
st "after restart: the article is there" 200
http POST /api/articles '{"article":{"title":"After the outage","description":"d","body":"b"}}' "$TOK"
st "after restart: a write works" 201
http POST /api/users/login '{"user":{"email":"pg@example.io","password":"pw-pg"}}'
st "after restart: login works" 200
is "after restart: no worker exited" "$(worker_pids | sort | tr '\n' ' ')" "$WORKERS0"
sleep 2
touch "$T/outage.stop"
load_wait outage
read errors bad recovery <<FIG
$(outage_figures "$T/outage.csv" "$t_back")
FIG
note "PostgreSQL stopped 5 s under load: $L_requests requests, $errors answered 503 (the error count), $bad other failures; full service $recovery ms after PostgreSQL was back (2 cores shared)"
is "under load: nothing but 200 and 503" "$bad" 0
is "under load: every 503 had Retry-After" "$L_retry_after_missing" 0
check "under load: the outage gave 503s" [ "$errors" -gt 100 ]
check "under load: full service within 2 s of PostgreSQL being back ($recovery ms)" [ "$recovery" -le 2000 ]
check "under load: requests before the outage succeeded" \
    [ "$(awk -F, -v t="$t_stopped" '$1 < t && $2 == 200' "$T/outage.csv" | wc -l)" -gt 50 ]
check "under load: and after it" \
    [ "$(awk -F, -v t="$t_back" '$1 > t && $2 == 200' "$T/outage.csv" | wc -l)" -gt 50 ]

# ------------------------------------------------------------ terminated
note "pg_terminate_backend() on every conduit connection, under load"
burst 8 >/dev/null # make sure every pool connection is open
load_start kill -c 6 -r 300 -d 40 -u /api/tags -t 5000 -s "$T/kill.stop" -o "$T/kill.csv"
sleep 1
n=$(psql -X -A -t -c "select count(*) from pg_stat_activity where datname='conduit' and pid <> pg_backend_pid()")
note "conduitd holds $n connection(s) to conduit"
check "conduitd holds at least one connection per worker" [ "${n:-0}" -ge 2 ]
psql -X -q -A -t -c "select pg_terminate_backend(pid) from pg_stat_activity where datname='conduit' and pid <> pg_backend_pid()" >/dev/null ||
    fail "pg_terminate_backend failed"
t_kill=$(now_ms)
: >"$T/seen"
if recover; then
    pass "full service back within 2 s of pg_terminate_backend()"
    note "recovery after pg_terminate_backend(): $RECOVERY_MS ms"
else
    fail "full service back within 2 s of pg_terminate_backend(): statuses seen $(sort "$T/seen" | uniq -c | tr '\n' ' ')"
fi
note "statuses seen after pg_terminate_backend(): $(sort "$T/seen" | uniq -c | tr '\n' ' ')"
is "after pg_terminate_backend(): nothing but 200 or 503" "$(grep -cv '^200$\|^503$' "$T/seen")" 0
# Each pool connection was killed: sequential requests on both workers and
# both connections must all succeed now.
fails=0
for i in $(seq 1 20); do
    c=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$BASE/api/articles?limit=1") || c=000
    [ "$c" = 200 ] || fails=$((fails + 1))
done
is "after pg_terminate_backend(): 20 more reads all 200" "$fails" 0
http POST /api/articles '{"article":{"title":"After the kill","description":"d","body":"b"}}' "$TOK"
st "after pg_terminate_backend(): a write works" 201
http GET /healthz
st "/healthz 200" 200
is "after pg_terminate_backend(): no worker exited" "$(worker_pids | sort | tr '\n' ' ')" "$WORKERS0"
sleep 1
touch "$T/kill.stop"
load_wait kill
read errors bad recovery <<FIG
$(outage_figures "$T/kill.csv" "$t_kill")
FIG
note "pg_terminate_backend() under load: $L_requests requests, $errors answered 503, $bad other failures; full service $recovery ms after the kill"
is "under load: nothing but 200 and 503" "$bad" 0
is "under load: every 503 had Retry-After" "$L_retry_after_missing" 0
check "under load: full service within 2 s of the kill ($recovery ms)" [ "$recovery" -le 2000 ]
done_testing
