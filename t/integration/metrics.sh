#!/bin/sh
# --status-listen: /metrics in Prometheus' text format and /status as JSON,
# on a port of their own, for the whole instance whichever worker answers.
# Every scrape is parsed by a real Prometheus text parser (Debian's
# python3-prometheus-client).  Under load from two workers, the requests
# counted by route and status class equal the load generator's answers,
# the latency histogram's count equals the requests, and nothing stays in
# flight; a worker killed with -9 is counted by cause and its requests stay
# in the totals; a reload (HUP, under load) is counted and loses nothing;
# ?full lists the real worker pids; off by default (no port opened); a bad
# address is refused by -t and at start; the status port serves no API
# path and the API port no /metrics; no token or email is shown; a
# draining worker answers no scrape; a constraint error and the 503s of a
# full database queue are counted as such; without --db-read the standby
# series are there, at zero (replica.sh checks them with a standby), and
# so are the cache's, its bounds those of the memory mapped at the start.
. "$top_srcdir/t/lib.sh"

command -v jq >/dev/null || skip "jq not installed"
has_loadgen || skip "t/loadgen is not built"
has_prom_parser || skip "python3-prometheus-client is not installed (script/deps installs it)"
pg_start

tags2xx='conduitd_http_requests_total{method="GET",route="/api/tags",status="2xx"}'
unm4xx='conduitd_http_requests_total{method="any",route="unmatched",status="4xx"}'
exits() { sample "$1" "conduitd_worker_exits_total{cause=\"$2\"}"; }

# Off by default: the master opens the API's socket and no other.
conduitd_start -w 2 --bcrypt-cost 4
check "off by default: no status page in the log" sh -c "! grep -q 'status page' '$T/conduitd.log'"
n=$(ss -Hltnp 2>/dev/null | grep -c "pid=$CONDUITD_PID,")
is "off by default: the master listens on one port only" "$n" 1
http GET /metrics
is "/metrics on the API port is the API's 404" "$STATUS" 404
stop_pid "$CONDUITD_PID"
CONDUITD_PID=

# A bad value: refused by -t and at start, with the key named.
out=$("$CONDUITD" --dev -t --status-listen nonsense 2>&1)
is "-t refuses --status-listen nonsense" "$?" 1
check "and says why ($(printf '%s' "$out" | tail -n 2 | head -n 1))" \
    sh -c "printf '%s' '$out' | grep -q 'status_listen: \"nonsense\" is not HOST:PORT'"
out=$("$CONDUITD" --dev -t -b 127.0.0.1:18080 --status-listen 127.0.0.1:18080 2>&1)
is "-t refuses the API's own address" "$?" 1
check "and says why" sh -c "printf '%s' '$out' | grep -q 'needs a port of its own'"
out=$("$CONDUITD" --dev -b 127.0.0.1:0 --status-listen 127.0.0.1:99999 --log "$T/bad.log" 2>&1)
is "a start with port 99999 fails" "$?" 1
check "and says why" sh -c "printf '%s' '$out' | grep -q 'status_listen: \"127.0.0.1:99999\" is not HOST:PORT'"

conduitd_start -w 2 --bcrypt-cost 4 --status-listen 127.0.0.1:0
status_base
check "the status port ($SPORT) is its own, not the API's ($PORT)" [ -n "$SPORT" ] && [ "$SPORT" != "$PORT" ]

# An address in use: the start fails and names the key.
root=
[ "$(id -u)" = 0 ] && root=--allow-root
out=$("$CONDUITD" --dev $root -b 127.0.0.1:0 --status-listen "127.0.0.1:$SPORT" --log "$T/busy.log" 2>&1)
is "a start on a status address in use fails" "$?" 1
check "and the log says why" grep -q "status_listen 127.0.0.1:$SPORT: bind: Address already in use" "$T/busy.log"

# What the status port answers, and what it does not.
code() { curl -s -o "$T/c.body" -w '%{http_code}' --max-time 10 "$@"; }
is "GET /metrics" "$(code "$SBASE/metrics")" 200
is "GET /status" "$(code "$SBASE/status")" 200
is "the API's /api/tags is not served there" "$(code "$SBASE/api/tags")" 404
is "nor /healthz" "$(code "$SBASE/healthz")" 404
is "POST /metrics is 405" "$(code -X POST "$SBASE/metrics")" 405
check "with Allow: GET, HEAD" sh -c "curl -s -D - -o /dev/null -X DELETE '$SBASE/status' | tr -d '\r' | grep -qx 'Allow: GET, HEAD'"
is "HEAD /metrics: 200 and no body" \
    "$(curl -s -I -o /dev/null -w '%{http_code} %{size_download}' "$SBASE/metrics")" "200 0"
check "with the Content-Length a GET would have (about)" \
    sh -c "curl -s -I '$SBASE/metrics' | tr -d '\r' | grep -q '^Content-Length: [1-9][0-9]*\$'"
http GET /status
is "/status on the API port is the API's 404" "$STATUS" 404

# A user whose token and email must never show.
http POST /api/users '{"user":{"username":"metered","email":"metered-secret@example.io","password":"pw-metered-1"}}'
is "register" "$STATUS" 201
TOK=$(printf '%s' "$BODY" | jq -r .user.token)
http GET /api/user "" "$TOK"

scrape s0
check "Content-Type is the text format 0.0.4" \
    sh -c "tr -d '\r' <'$T/s0.headers' | grep -qx 'Content-Type: text/plain; version=0.0.4; charset=utf-8'"
check "requests_total is a counter" grep -qx 'TYPE conduitd_http_requests counter' "$T/s0.samples"
check "the latency is a histogram" grep -qx 'TYPE conduitd_http_request_duration_seconds histogram' "$T/s0.samples"
is "the register is counted" "$(sample s0 'conduitd_http_requests_total{method="POST",route="/api/users",status="2xx"}')" 1
is "one bcrypt job per register and login so far (1)" "$(sample s0 conduitd_bcrypt_jobs_total{})" 1
check "two workers ready" [ "$(sample s0 'conduitd_workers{state="ready"}')" = 2 ]

# Under load, from both workers: one client of /api/tags, one of a path
# that matches no route.  A scrape in the middle must parse too.
t0=$(sample s0 "$tags2xx")
u0=$(sample s0 "$unm4xx")
load_start tags -c 6 -k -d 3 -u /api/tags
TAGS_PID=$LOAD_PID
load_start miss -c 2 -d 3 -u /no/such/route # a connection a request: both workers take some
sleep 1.5
scrape mid
mid=$(sample mid "$tags2xx")
check "a scrape under load parses ($mid GET /api/tags so far, $(sample mid conduitd_http_requests_in_flight{}) in flight)" \
    [ "$mid" -ge "$t0" ]
load_wait miss
miss_4xx=$L_s4xx
is "loadgen of the unmatched path: no failed request" "$L_failed" 0
load_wait tags "$TAGS_PID"
is "loadgen of /api/tags: no failed request" "$L_failed" 0
scrape s1
is "GET /api/tags 2xx: the load generator's answers ($L_s2xx)" "$(($(sample s1 "$tags2xx") - t0))" "$L_s2xx"
is "unmatched 4xx: the other generator's answers ($miss_4xx)" "$(($(sample s1 "$unm4xx") - u0))" "$miss_4xx"
all=$(total s1 'conduitd_http_requests_total{')
is "the histogram's count equals every request counted ($all)" "$(sample s1 conduitd_http_request_duration_seconds_count{})" "$all"
is "and its +Inf bucket too" "$(sample s1 'conduitd_http_request_duration_seconds_bucket{le="+Inf"}')" "$all"
is "nothing in flight once the load is over" "$(sample s1 conduitd_http_requests_in_flight{})" 0
is "nothing waits for the database" "$(sample s1 conduitd_db_queue_depth{})" 0
check "every pool connection is up and idle" [ "$(sample s1 'conduitd_db_pool_connections{state="idle"}')" -gt 0 ]
# Without --db-read the standby series are there from the first scrape, at 0.
is "no standbys: no read counted as a standby's or the primary's instead" \
    "$(sample s1 conduitd_db_standby_reads_total{}) $(total s1 conduitd_db_primary_reads_total)" "0 0"
is "no standby connection, no worker skipping" \
    "$(total s1 conduitd_db_standby_connections) $(sample s1 conduitd_db_standbys_skipped{})" "0 0"
is "the lag is unknown (NaN)" "$(fsample s1 conduitd_db_standby_lag_seconds{})" nan
# The instance's one cache is mapped with the cache off too (a reload may
# turn it on): its bounds are there, its use at 0, counted once.
is "the cache's capacity is cache_memory's default (64 MB)" \
    "$(sample s1 conduitd_cache_capacity_bytes{}) $(sample s1 conduitd_cache_entries_max{})" \
    "67108864 200000"
is "it holds nothing, evicted and reset nothing" \
    "$(sample s1 conduitd_cache_entries{}) $(sample s1 conduitd_cache_bytes{}) $(sample s1 conduitd_cache_evictions_total{}) $(sample s1 conduitd_cache_resets_total{})" \
    "0 0 0 0"

# /status and ?full.
curl -s --max-time 10 "$SBASE/status" >"$T/status.json"
check "/status is JSON" jq -e . "$T/status.json" >/dev/null
is "/status requests match /metrics" "$(jq .requests "$T/status.json")" "$all"
check "/status lists no worker without ?full" sh -c "! jq -e 'has(\"processes\")' '$T/status.json' >/dev/null"
curl -s --max-time 10 "$SBASE/status?full" >"$T/full.json"
want=$(worker_pids | sort -n | tr '\n' ' ')
got=$(jq -r '.processes[].pid' "$T/full.json" | sort -n | tr '\n' ' ')
is "?full lists every worker, by its real pid" "$got" "$want"
check "both workers served part of the load ($(jq -c '[.processes[].requests]' "$T/full.json"))" \
    sh -c "[ \$(jq '[.processes[] | select(.requests > 0)] | length' '$T/full.json') = 2 ]"
check "each has its generation, state, age and heartbeat" jq -e '[.processes[] | select(.generation == 1 and .state == "ready" and .age_s > 0 and .last_heartbeat_ms >= 0)] | length == 2' "$T/full.json" >/dev/null
curl -s --max-time 10 "$SBASE/metrics" >"$T/m.txt"
for secret in "$TOK" metered-secret pw-metered; do
    check "no token, email or password on the status port ($(printf '%.12s' "$secret")...)" \
        sh -c "! grep -qF '$secret' '$T/m.txt' '$T/full.json'"
done

# kill -9: counted by cause, and its requests stay in the totals.
victim=$(worker_pids | head -n 1)
kill -KILL "$victim"
wait_for 10 sh -c "grep -q 'pid $victim) died\|pid $victim) stopped' '$T/conduitd.log'"
wait_for 10 sh -c "[ \"\$(curl -s '$SBASE/status' | jq '.workers.ready')\" = 2 ]"
scrape s2
is "exits by cause signal: one more" "$(($(exits s2 signal) - $(exits s1 signal)))" 1
is "worker starts: one more" "$(($(sample s2 conduitd_worker_starts_total{}) - $(sample s1 conduitd_worker_starts_total{})))" 1
is "the killed worker's requests stay in the totals" "$(sample s2 "$tags2xx")" "$(sample s1 "$tags2xx")"
is "the histogram's count did not go back" "$(sample s2 conduitd_http_request_duration_seconds_count{})" "$all"

# HUP under load: one reload, and every answer of both generations counted.
t2=$(sample s2 "$tags2xx")
load_start reload -c 4 -k -d 3 -u /api/tags
sleep 0.7
kill -HUP "$CONDUITD_PID"
wait_for 15 grep -q 'reload complete' "$T/conduitd.log"
load_wait reload
is "loadgen during the reload: no failed request" "$L_failed" 0
wait_for 15 sh -c "[ \"\$(curl -s '$SBASE/status' | jq '.workers.draining + .workers.starting')\" = 0 ]"
scrape s3
is "reloads: one more" "$(($(sample s3 conduitd_reloads_total{}) - $(sample s2 conduitd_reloads_total{})))" 1
is "generation 2" "$(sample s3 conduitd_generation{})" 2
is "the old generation's exits count as retired (2)" "$(($(exits s3 retired) - $(exits s2 retired)))" 2
is "GET /api/tags 2xx across the reload: the generator's answers ($L_s2xx)" "$(($(sample s3 "$tags2xx") - t2))" "$L_s2xx"
check "no total went down across the kill and the reload" \
    awk 'FNR == NR { if ($1 ~ /_total[{]/) a[$1] = $2; next } ($1 in a) && $2 < a[$1] { bad = 1; print "# went down: " $1 } END { exit bad }' \
    "$T/s1.samples" "$T/s3.samples"

# A draining worker stops taking scrapes: with a slow request holding
# one worker in its drain, every scrape is answered by another.
if has_test_hooks; then
    curl -s --max-time 40 "$BASE/debug/sleep?ms=12000" >/dev/null &
    SLEEPER=$!
    wait_for 5 sh -c "curl -s '$SBASE/status?full' | jq -e '[.processes[] | select(.in_flight > 0)] | length == 1' >/dev/null"
    busy=$(curl -s "$SBASE/status?full" | jq -r '.processes[] | select(.in_flight > 0) | .pid')
    kill -TERM "$busy"
    wait_for 5 sh -c "curl -s '$SBASE/status?full' | jq -e '[.processes[] | select(.state == \"draining\")] | length == 1' >/dev/null"
    by=
    for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
        by="$by $(curl -s "$SBASE/status" | jq -r .answered_by)"
    done
    check "the draining worker ($busy) is still alive" alive "$busy"
    check "and answers none of 20 scrapes (answered by:$(echo "$by" | tr ' ' '\n' | sort -u | tr '\n' ' '))" \
        sh -c "! echo '$by' | grep -qw '$busy'"
    wait "$SLEEPER"
    wait_for 10 sh -c "[ \"\$(curl -s '$SBASE/status' | jq '.workers.ready')\" = 2 ]"
fi

curl -s --max-time 10 "$SBASE/status?full" >"$T/full2.json"
got=$(jq -r '.processes[].pid' "$T/full2.json" | sort -n | tr '\n' ' ')
want=$(worker_pids | sort -n | tr '\n' ' ')
is "after the reload ?full lists the new workers only" "$got" "$want"

# The database's side: a duplicate username is a constraint error; with
# one connection and no queue, what cannot wait gets 503, each counted as
# a full queue.
stop_pid "$CONDUITD_PID"
CONDUITD_PID=
conduitd_start -w 1 --pool 1 --pool-queue 0 --bcrypt-cost 4 --status-listen 127.0.0.1:0
status_base
scrape d0
http POST /api/users '{"user":{"username":"metered","email":"other@example.io","password":"pw-metered-2"}}'
is "a taken username: 409" "$STATUS" 409
load_start full -c 8 -k -d 2 -u '/api/articles?limit=20'
load_wait full
check "one connection and no queue: some answers are 503 ($L_s503)" [ "$L_s503" -gt 0 ]
scrape d1
dq() { echo $(($(sample d1 "$1") - $(sample d0 "$1"))); }
is "constraint errors: one" "$(dq 'conduitd_db_errors_total{kind="constraint"}')" 1
is "full-queue refusals: the 503s the generator got ($L_s503)" "$(dq conduitd_db_queue_full_total{})" "$L_s503"
is "GET /api/articles 5xx: the same" "$(dq 'conduitd_http_requests_total{method="GET",route="/api/articles",status="5xx"}')" "$L_s503"
is "GET /api/articles 2xx: the generator's 2xx ($L_s2xx)" "$(dq 'conduitd_http_requests_total{method="GET",route="/api/articles",status="2xx"}')" "$L_s2xx"
is "the pool: one connection, idle" "$(sample d1 'conduitd_db_pool_connections{state="idle"}') $(sample d1 'conduitd_db_pool_connections{state="busy"}')" "1 0"

done_testing
