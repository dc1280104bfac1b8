#!/bin/sh
# Reads on a standby (--db-read) without losing read-your-writes, against a
# real primary and a streaming standby made by pg_basebackup -R.  The
# standby applies commits a second late (recovery_min_apply_delay), so any
# read it answers right after a write is stale: the test can only pass if
# the routing is right.  conduitd -w 2, --db-read-max-lag 3s.  Asserted:
# - 1,000 write-then-read pairs by one user (PUT /api/user with a new bio,
#   then GET its profile with its token), each request on a new connection,
#   taken by both workers: 0 stale reads;
# - an anonymous reader right after a write is served by the standby (it
#   sees the old bio at first) and sees the write within db_read_max_lag;
# - reads by nobody who wrote are served by the standby: its index scan
#   counters rise by the reads, the primary's do not;
# - with --cache on, a profile read right after a write is fresh and stays
#   fresh (cache fills read the primary);
# - replay paused on the standby: the writer's reads are fresh at once,
#   every reader's within db_read_max_lag, the log says "standbys skipped"
#   once per worker, and "standbys back" once when replay resumes;
# - the standby stopped under a read load: every read answered 200 (by the
#   primary), none failed.
# And /metrics says so, scraped through the status listener: the standby
# connections up (workers x pool); the writer's reads in the pairs counted
# as the primary's for own_write; the 200 anonymous reads counted as the
# standby's, no more than the standby's own scan counters rose; with replay
# paused both workers skipping, two skips counted, reads counted for lag
# and a lag past db_read_max_lag, none skipping once it resumes; the
# standby stopped: no standby connection, reads counted for no_standby or
# failed, the lag unknown.
# The stale-read count and the staleness seen are printed.
. "$top_srcdir/t/lib.sh"

command -v jq >/dev/null || skip "jq not installed"
has_loadgen || skip "t/loadgen is not built"
has_prom_parser || skip "python3-prometheus-client is not installed (script/deps installs it)"

PAIRS=${REPLICA_PAIRS:-1000}
MAX_LAG_MS=3000

pg_start
pg_standby_start "recovery_min_apply_delay = 1s" "hot_standby_feedback = on"
is "the standby is in recovery" "$(standby_psql -c 'select pg_is_in_recovery()')" t

conduitd_start -w 2 --pool 2 --db-read "$STANDBY_DB" --db-read-max-lag 3s \
    --access-log "$T/access.log" --access-log-format json --status-listen 127.0.0.1:0
status_base
wait_for 10 grep -q 'standbys in use' "$T/conduitd.log"
check "the log says the standby is in use" grep -q 'standbys in use' "$T/conduitd.log"
reads_on_standby() {
    standby_psql -c "select count(*) from pg_stat_activity where application_name = 'conduitd read'"
}
is "2 workers x pool 2 connections on the standby" "$(reads_on_standby)" 4
# m NAME SERIES: one counter's rise from scrape m0 to scrape NAME.
m() { echo $(($(sample "$1" "$2") - $(sample m0 "$2"))); }
standbys_up() { scrape up && [ "$(total up conduitd_db_standby_connections)" -eq 4 ]; }
wait_for 5 standbys_up
scrape m0
is "/metrics: 4 standby connections up" "$(total m0 conduitd_db_standby_connections)" 4
is "/metrics: no worker skips the standbys" "$(sample m0 conduitd_db_standbys_skipped{})" 0
lag0=$(fsample m0 conduitd_db_standby_lag_seconds{})
check "/metrics: the replay lag is measured, under db_read_max_lag ($lag0 s)" fcmp "$lag0" "<" 3

http POST /api/users '{"user":{"username":"ryw","email":"ryw@example.io","password":"pw-replica"}}'
is "register" "$STATUS" 201
TOK=$(printf '%s' "$BODY" | jq -r .user.token)
# Right after registering, the new user's reads find it (the primary answers).
http GET /api/user "" "$TOK"
is "the new user reads itself at once" "$STATUS" 200
http POST /api/articles '{"article":{"title":"Replicated","description":"d","body":"b"}}' "$TOK"
is "an article" "$STATUS" 201
SLUG=$(printf '%s' "$BODY" | jq -r .article.slug)
http GET "/api/articles/$SLUG" "" "$TOK"
is "the writer reads its article at once" "$STATUS" 200

# ---------------------------------------------------------------- pairs
# Each pair: a PUT and then a GET, each on its own connection (Connection:
# close), so the kernel hands them to either worker; one curl runs them in
# order from a config file (a process per request would take minutes here).
awk -v n="$PAIRS" -v base="$BASE" -v tok="$TOK" 'BEGIN {
    for (i = 1; i <= n; i++) {
        printf "url = \"%s/api/user\"\nrequest = \"PUT\"\nsilent\noutput = \"/dev/null\"\n", base
        printf "header = \"Connection: close\"\nheader = \"Authorization: Token %s\"\n", tok
        printf "header = \"Content-Type: application/json\"\n"
        printf "data-binary = \"{\\\"user\\\":{\\\"bio\\\":\\\"v%d\\\"}}\"\n", i
        printf "write-out = \"%%{http_code} \"\nnext\n"
        printf "url = \"%s/api/profiles/ryw\"\nsilent\nheader = \"Connection: close\"\n", base
        printf "header = \"Authorization: Token %s\"\nwrite-out = \" %%{http_code}\\n\"\n", tok
        if (i < n) printf "next\n"
    }
}' >"$T/pairs.curl"
t0=$(ms_now)
curl -K "$T/pairs.curl" >"$T/pairs.out"
t1=$(ms_now)
# Each line: "200 {profile} 200".  Stale: a bio other than v<line number>.
awk '{ n++; if ($1 != 200 || $NF != 200) bad++;
       b = $0; sub(/.*"bio":"/, "", b); sub(/".*/, "", b);
       if (b != "v" n) stale++ }
     END { printf "%d %d %d\n", n, bad + 0, stale + 0 }' "$T/pairs.out" >"$T/pairs.sum"
read -r n bad stale <"$T/pairs.sum"
note "$n write-then-read pairs in $((t1 - t0)) ms: $bad not 200, $stale stale"
is "$PAIRS pairs ran" "$n" "$PAIRS"
is "every write and read answered 200" "$bad" 0
is "read-your-writes: 0 stale reads of $n" "$stale" 0
# The access log is written once a second: wait for the last lines.
wait_for 5 sh -c "[ \$(grep -c '/api/profiles/ryw' '$T/access.log') -ge $PAIRS ]"
workers_put=$(jq -r 'select(.method == "PUT") | .worker' "$T/access.log" | sort -u | wc -l)
workers_get=$(jq -r 'select(.method == "GET" and (.uri | startswith("/api/profiles"))) | .worker' \
    "$T/access.log" | sort -u | wc -l)
is "the writes landed on both workers" "$workers_put" 2
is "the reads landed on both workers" "$workers_get" 2
scrape m1
own=$(m m1 'conduitd_db_primary_reads_total{reason="own_write"}')
note "/metrics after the pairs: $own reads on the primary for own_write, $(m m1 conduitd_db_standby_reads_total{}) on the standby"
check "/metrics: the writer's $PAIRS reads went to the primary for its own writes ($own)" \
    [ "$own" -ge "$PAIRS" ]

# ---------------------------------------------------------------- others
# The lags and the counters' flushes, to the paused replay's end, are
# measured alone (t/lib.sh), not beside the rest of the suite.
exclusive
# Someone who did not write reads from the standby: stale for a moment (the
# apply delay), never past db_read_max_lag.
stale_seen=0 worst=0
for k in 1 2 3 4; do
    http PUT /api/user "{\"user\":{\"bio\":\"a$k\"}}" "$TOK"
    tw=$(ms_now)
    first=1
    while :; do
        ts=$(ms_now)
        bio=$(curl -s "$BASE/api/profiles/ryw" | jq -r .profile.bio)
        [ "$bio" = "a$k" ] && break
        [ "$first" = 1 ] && stale_seen=$((stale_seen + 1))
        first=0
        [ $((ts - tw)) -gt $((MAX_LAG_MS * 3)) ] && break
        sleep 0.02
    done
    [ $((ts - tw)) -gt "$worst" ] && worst=$((ts - tw))
done
note "an anonymous reader: stale right after the write in $stale_seen of 4 rounds, fresh at most $worst ms after it"
check "an anonymous reader is served by the standby (stale right after a write, $stale_seen of 4)" \
    [ "$stale_seen" -ge 3 ]
check "and never stale past db_read_max_lag ($worst ms <= $MAX_LAG_MS ms + 250 ms of measuring)" \
    [ "$worst" -le $((MAX_LAG_MS + 250)) ]

# ---------------------------------------------------------------- who served
# Scans of the articles table (what GET /api/articles/:slug reads and the
# writes before did not touch: a server's counters are flushed within a
# second or so of its activity, and this one has no earlier activity to flush).
SCANS_SQL="select coalesce(idx_scan, 0) + coalesce(seq_scan, 0) from pg_stat_user_tables where relname = 'articles'"
scans() { psql -X -At "$@" -c "$SCANS_SQL"; }
sleep 1.5
p0=$(scans) s0=$(scans -h "$STANDBY_HOST" -p "$STANDBY_PORT")
scrape m2
urls=
for k in $(seq 1 200); do urls="$urls -o /dev/null $BASE/api/articles/$SLUG"; done
# shellcheck disable=SC2086
curl -s $urls
wait_for 10 sh -c "[ \$(psql -X -At -h '$STANDBY_HOST' -p '$STANDBY_PORT' -c \"$SCANS_SQL\") -ge $((s0 + 200)) ]"
sleep 1.2 # the primary's counters are flushed within a second too
p1=$(scans) s1=$(scans -h "$STANDBY_HOST" -p "$STANDBY_PORT")
note "200 anonymous article reads: articles scanned +$((s1 - s0)) times on the standby, +$((p1 - p0)) on the primary"
check "200 reads by nobody who wrote ran on the standby" [ $((s1 - s0)) -ge 200 ]
check "not on the primary" [ $((p1 - p0)) -lt 20 ]
scrape m3
sr=$(($(sample m3 conduitd_db_standby_reads_total{}) - $(sample m2 conduitd_db_standby_reads_total{})))
pr=$(($(total m3 conduitd_db_primary_reads_total) - $(total m2 conduitd_db_primary_reads_total)))
note "/metrics over the 200 reads: $sr standby reads, $pr on the primary instead; the standby's scans +$((s1 - s0))"
check "/metrics: the 200 reads counted as the standby's ($sr)" [ "$sr" -ge 200 ]
check "/metrics: no more than the standby's scans rose ($sr <= $((s1 - s0)))" [ "$sr" -le $((s1 - s0)) ]
check "/metrics: the primary took fewer than 20 of them ($pr)" [ "$pr" -lt 20 ]
# The writer, a while after its last write, reads from the standby too.
http GET "/api/profiles/ryw" "" "$TOK"
is "the writer, later: served" "$STATUS" 200

# ---------------------------------------------------------------- paused
standby_psql -c 'select pg_wal_replay_pause()' >/dev/null
http PUT /api/user '{"user":{"bio":"paused"}}' "$TOK"
tw=$(ms_now)
is "a write while replay is paused" "$STATUS" 200
http GET /api/profiles/ryw "" "$TOK"
is "the writer reads it at once (the primary)" "$(printf '%s' "$BODY" | jq -r .profile.bio)" paused
while :; do
    ts=$(ms_now)
    bio=$(curl -s "$BASE/api/profiles/ryw" | jq -r .profile.bio)
    [ "$bio" = paused ] && break
    [ $((ts - tw)) -gt $((MAX_LAG_MS * 5)) ] && break
    sleep 0.02
done
note "replay paused: an anonymous reader sees the write $((ts - tw)) ms after it"
is "past db_read_max_lag every read goes to the primary" "$bio" paused
check "within db_read_max_lag ($((ts - tw)) ms <= $MAX_LAG_MS ms + 250 ms of measuring)" \
    [ $((ts - tw)) -le $((MAX_LAG_MS + 250)) ]
wait_for 5 sh -c "[ \$(grep -c 'standbys skipped' '$T/conduitd.log') -ge 2 ]"
is "the log says the standby is skipped, once per worker" \
    "$(grep -c 'standbys skipped: replayed up to' "$T/conduitd.log")" 2
sleep 1
is "and only once" "$(grep -c 'standbys skipped' "$T/conduitd.log")" 2
scrape m4
lag4=$(fsample m4 conduitd_db_standby_lag_seconds{})
note "/metrics, replay paused: lag $lag4 s, $(m m4 'conduitd_db_primary_reads_total{reason="lag"}') reads on the primary for lag"
is "/metrics: both workers skip the standbys" "$(sample m4 conduitd_db_standbys_skipped{})" 2
is "/metrics: two skips counted" "$(m m4 conduitd_db_standby_skips_total{})" 2
check "/metrics: reads counted on the primary for lag" \
    [ "$(m m4 'conduitd_db_primary_reads_total{reason="lag"}')" -gt 0 ]
check "/metrics: the lag is past db_read_max_lag ($lag4 s > 3 s)" fcmp "$lag4" ">" 3
standby_psql -c 'select pg_wal_replay_resume()' >/dev/null
wait_for 10 sh -c "[ \$(grep -c 'standbys back' '$T/conduitd.log') -ge 2 ]"
is "when replay resumes the log says the standby is back, once per worker" \
    "$(grep -c 'standbys back' "$T/conduitd.log")" 2
scrape m5
is "/metrics: no worker skips them any more" "$(sample m5 conduitd_db_standbys_skipped{})" 0

shared

# ---------------------------------------------------------------- cache
# A cache fill that read the late standby would keep the old bio after the
# invalidation: fills read the primary.
stop_pid "$CONDUITD_PID"
CONDUITD_PID=
conduitd_start -w 2 --pool 2 --db-read "$STANDBY_DB" --db-read-max-lag 3s --cache on \
    --status-listen 127.0.0.1:0
status_base
wait_for 10 grep -q 'standbys in use' "$T/conduitd.log"
cache_stale=0
for k in 1 2 3 4 5 6 7 8 9 10; do
    http PUT /api/user "{\"user\":{\"bio\":\"c$k\"}}" "$TOK"
    http GET /api/profiles/ryw
    [ "$(printf '%s' "$BODY" | jq -r .profile.bio)" = "c$k" ] || cache_stale=$((cache_stale + 1))
done
sleep 0.5
for k in 1 2 3 4; do
    http GET /api/profiles/ryw
    [ "$(printf '%s' "$BODY" | jq -r .profile.bio)" = c10 ] || cache_stale=$((cache_stale + 1))
done
is "with the cache on, profiles read after a write are fresh and stay fresh" "$cache_stale" 0

# ---------------------------------------------------------------- stopped
# Comments: not cached, so every read is a statement that must go somewhere.
load_start reads -c 4 -r 100 -d 6 -k -u "/api/articles/$SLUG/comments" -o "$T/reads.csv"
READS_PID=$LOAD_PID
wait_for 10 lines_at_least "$T/reads.csv" 50 || bail "the load did not start"
sleep 1
pg_standby_stop
t_stop=$(ms_now)
load_wait reads "$READS_PID"
after=$(awk -F, -v t="$t_stop" '$1 >= t' "$T/reads.csv" | wc -l)
note "standby stopped under load: $L_requests reads, $after after the stop, $L_failed failed, $L_s503 503"
is "every read answered 200 across the standby's stop" "$L_s2xx" "$L_requests"
check "reads were answered after the stop ($after)" [ "$after" -gt 100 ]
http GET /api/profiles/ryw "" "$TOK"
is "without the standby a read is served" "$STATUS" 200
wait_for 5 grep -q 'standbys skipped: no standby connection is up\|no standby connection left' \
    "$T/conduitd.log"
check "the log says the standby is gone" \
    grep -q 'standbys skipped: no standby connection is up\|no standby connection left' "$T/conduitd.log"
scrape m6
gone=$(($(sample m6 'conduitd_db_primary_reads_total{reason="no_standby"}') + $(sample m6 'conduitd_db_primary_reads_total{reason="failed"}')))
note "/metrics, standby stopped: $gone reads on the primary for no_standby or failed, lag $(fsample m6 conduitd_db_standby_lag_seconds{})"
is "/metrics: no standby connection up" "$(total m6 conduitd_db_standby_connections)" 0
check "/metrics: the reads after the stop counted for no_standby or failed ($gone >= $after)" \
    [ "$gone" -ge "$after" ]
is "/metrics: both workers skip the standbys" "$(sample m6 conduitd_db_standbys_skipped{})" 2
is "/metrics: the lag is unknown" "$(fsample m6 conduitd_db_standby_lag_seconds{})" nan
check "no worker died" sh -c "! grep -q 'died unexpectedly\|exited with status' '$T/conduitd.log'"
done_testing
