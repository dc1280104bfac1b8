#!/bin/sh
# A write whose outcome is unknown is not answered "retry", and a client
# that retries with an Idempotency-Key stores its write once (issue 33,
# item 3).  On a real master (-w 2 --pool 2):
#   - the header: a keyed comment and article are answered, then the same
#     request again is the same answer byte for byte with
#     Idempotent-Replayed: true and nothing more stored; a keyed
#     registration again is the same user with a working token, but only
#     with the same password; the same key with
#     another body or another path is a 422, another user's same key is
#     their own; a key too long, empty, or with a space is a 400 that
#     stores nothing; a key another request is storing (a transaction
#     holding its row) makes the write wait and answer 409, storing nothing;
#   - a comment's statement waiting on a lock whose backend is killed by
#     SIGKILL (the connection breaks with the statement sent, no result):
#     502, no Retry-After, an error that says the outcome is unknown; its
#     retry with the key writes it (nothing had committed) once; the same
#     wait ended by pg_terminate_backend (an error as the statement's
#     result: it did not commit) is still 503 with Retry-After, and so is a
#     read (GET comments) whose backend is SIGKILLed;
#   - under a POST load with keys (t/retry_writes.py: 8 threads, each
#     retrying every failed request with the same key) while every
#     conduitd backend is killed with pg_terminate_backend every 30 ms for
#     the whole run: the comments stored are exactly the keys answered 2xx,
#     each once; no 502 carries Retry-After; every write that was replayed
#     had been answered 502 or nothing before (never only 503).
# Before the fix (main at 5aaf173): the SIGKILL case answered 503 with
# Retry-After, the header was ignored (no replay, no 422, no 400), and the
# load stored more comments than the keys answered 2xx.
. "$top_srcdir/t/lib.sh"

command -v jq >/dev/null || skip "jq not installed"
[ -x "$PY" ] || skip "python3 not installed"

pg_start
# The suite's clusters trade durability for speed (fsync and
# synchronous_commit off): a crash then loses commits already answered.
# This test crashes PostgreSQL on purpose and counts what is stored, so
# its commits are durable, as in production: a commit waits for its WAL's
# fsync, and a backend ended meanwhile has committed without answering.
psql -X -q -c "ALTER SYSTEM SET synchronous_commit = on" -c "ALTER SYSTEM SET fsync = on" \
    -c "SELECT pg_reload_conf()" >/dev/null || bail "cannot make commits durable"
conduitd_start -w 2 --pool 2 --bcrypt-cost 4

ALICE=$(register alice)
BOB=$(register bob)
http POST /api/articles '{"article":{"title":"Keys","description":"d","body":"b"}}' "$ALICE"
[ "$STATUS" = 201 ] || bail "create an article: $STATUS $BODY"
http POST /api/articles '{"article":{"title":"Other","description":"d","body":"b"}}' "$ALICE"
[ "$STATUS" = 201 ] || bail "create an article: $STATUS $BODY"

comments() { psql -X -A -t -c "SELECT count(*) FROM comments"; }
header() { tr -d '\r' <"$T/hdr" | sed -n "s/^$1: *//Ip" | head -n 1; }

# keyed KEY PATH BODY TOKEN: a POST with Idempotency-Key: KEY.
keyed() { http_raw POST "$2" "$3" "Token $4" -H "Idempotency-Key: $1"; LAST="POST $2 $3 [key $1]"; }

# ------------------------------------------------------------ replay
C='{"comment":{"body":"once"}}'
n0=$(comments)
keyed k-1 /api/articles/keys/comments "$C" "$ALICE"
st "a keyed comment" 200
first=$BODY
is "not a replay" "$(header Idempotent-Replayed)" ""
keyed k-1 /api/articles/keys/comments "$C" "$ALICE"
st "the same request again" 200
is "answered the same, byte for byte" "$BODY" "$first"
is "saying it is a replay" "$(header Idempotent-Replayed)" true
is "one comment stored" "$(comments)" $((n0 + 1))
keyed '"k-1"' /api/articles/keys/comments "$C" "$ALICE"
is "the key as a structured-field string is the same key" "$(header Idempotent-Replayed) $STATUS" "true 200"
keyed k-1 /api/articles/keys/comments '{"comment":{"body":"twice"}}' "$ALICE"
st "the key with another body" 422
keyed k-1 /api/articles/other/comments "$C" "$ALICE"
st "the key on another path" 422
keyed k-1 /api/articles/keys/comments "$C" "$BOB"
st "another user's same key: their own" 200
is "not a replay" "$(header Idempotent-Replayed)" ""
is "two comments stored" "$(comments)" $((n0 + 2))
keyed k-2 /api/articles/nope/comments "$C" "$ALICE"
st "a keyed comment on no article" 404
keyed k-2 /api/articles/keys/comments "$C" "$ALICE"
st "its key stored nothing: the same key on an article writes" 200
is "not a replay" "$(header Idempotent-Replayed)" ""

A='{"article":{"title":"Keyed","description":"d","body":"b","tagList":["k"]}}'
keyed a-1 /api/articles "$A" "$ALICE"
st "a keyed article" 201
first=$BODY
keyed a-1 /api/articles "$A" "$ALICE"
st "the same article again" 201
is "answered the same, byte for byte" "$BODY" "$first"
is "saying it is a replay" "$(header Idempotent-Replayed)" true
is "one article stored" "$(psql -X -A -t -c "SELECT count(*) FROM articles WHERE title = 'Keyed'")" 1

users() { psql -X -A -t -c "SELECT count(*) FROM users"; }
U='{"user":{"username":"carol","email":"carol@example.io","password":"pw-carol"}}'
n0=$(users)
http_raw POST /api/users "$U" "" -H "Idempotency-Key: r-1"
st "a keyed registration" 201
is "not a replay" "$(header Idempotent-Replayed)" ""
http_raw POST /api/users "$U" "" -H "Idempotency-Key: r-1"
st "the same registration again" 201
is "saying it is a replay" "$(header Idempotent-Replayed)" true
is "of the same user" "$(printf '%s' "$BODY" | jq -r '.user.username + " " + .user.email')" "carol carol@example.io"
http GET /api/user "" "$(printf '%s' "$BODY" | jq -r .user.token)"
st "with a token that works" 200
is "one user stored" "$(users)" $((n0 + 1))
http_raw POST /api/users '{"user":{"username":"carol","email":"carol@example.io","password":"not-hers"}}' "" \
    -H "Idempotency-Key: r-1"
st "the key with another password: 422, no token" 422
is "not a replay" "$(header Idempotent-Replayed)" ""
http_raw POST /api/users '{"user":{"username":"dave","email":"dave@example.io","password":"pw-dave"}}' "" \
    -H "Idempotency-Key: r-1"
st "the key with another user" 422

# ------------------------------------------------------------ bad keys
n0=$(comments)
for k in "$(printf 'x%.0s' $(seq 1 256))" '""' 'a b' 'caf\303\251'; do
    keyed "$(printf "$k")" /api/articles/keys/comments '{"comment":{"body":"bad key"}}' "$ALICE"
    st "Idempotency-Key '$(printf '%s' "$k" | head -c 20)': 400" 400
    check "  saying what a key is" sh -c "printf '%s' '$BODY' | grep -q 'Idempotency-Key must be'"
done
keyed "$(printf 'x%.0s' $(seq 1 255))" /api/articles/keys/comments '{"comment":{"body":"long key"}}' "$ALICE"
st "a key of 255 characters" 200
is "the bad keys stored nothing" "$(comments)" $((n0 + 1))

# ------------------------------------------------------------ in progress
# A transaction holds the row of key k-busy (as a request storing it
# would): the write under that key waits for it, then finds it taken.
uid=$(psql -X -A -t -c "SELECT id FROM users WHERE username = 'alice'")
psql -X -q -c "BEGIN; INSERT INTO idempotency_keys (scope, key, fingerprint, answer)
               VALUES ($uid, 'k-busy', 'other', '{}'); SELECT pg_sleep(3); COMMIT;" >/dev/null &
holder=$!
wait_for 10 sh -c "psql -X -A -t -c \"SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%k-busy%' AND wait_event = 'PgSleep'\" | grep -qx 1" ||
    fail "the holding transaction did not start"
n0=$(comments)
keyed k-busy /api/articles/keys/comments '{"comment":{"body":"busy"}}' "$ALICE"
st "a key being stored by another request: 409" 409
wait "$holder"
is "and nothing stored" "$(comments)" "$n0"

# ------------------------------------------------------------ unknown outcome
# blocked LOCK CMD...: runs CMD (a request; its status, headers and body
# go to $T/blocked.*) in the background while a transaction holds LOCK,
# so that its statement waits in PostgreSQL; sets BACKEND to the pid of
# the conduitd backend that waits, LOCKER and REQ to the two jobs.
blocked() {
    PGAPPNAME=locker psql -X -q -c "BEGIN; $1; SELECT pg_sleep(20); COMMIT;" >/dev/null 2>&1 &
    LOCKER=$!
    shift
    wait_for 10 sh -c "psql -X -A -t -c \"SELECT count(*) FROM pg_stat_activity WHERE application_name = 'locker' AND wait_event = 'PgSleep'\" | grep -qx 1" ||
        bail "the locking transaction did not start"
    ("$@"
     printf '%s\n' "$STATUS" >"$T/blocked.status"
     cp "$T/hdr" "$T/blocked.hdr"
     printf '%s' "$BODY" >"$T/blocked.body") &
    REQ=$!
    wait_for 10 sh -c "psql -X -A -t -c \"SELECT pid FROM pg_stat_activity WHERE application_name = 'conduitd' AND wait_event_type = 'Lock'\" | grep -q ." ||
        bail "the request did not wait for the lock"
    BACKEND=$(psql -X -A -t -c "SELECT pid FROM pg_stat_activity WHERE application_name = 'conduitd' AND wait_event_type = 'Lock'" | head -n 1)
}
# blocked_end: waits for the request, ends the locking transaction (its
# backend too: pg_sleep would outlive its client).
blocked_end() {
    wait "$REQ"
    psql -X -q -A -t -c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'locker'" \
        >/dev/null 2>&1
    wait "$LOCKER" 2>/dev/null
    wait_for 10 sh -c "psql -X -A -t -c \"SELECT count(*) FROM pg_stat_activity WHERE application_name = 'locker'\" 2>/dev/null | grep -qx 0" ||
        bail "the locking transaction did not end"
}
LOCK_ARTICLE="SELECT 1 FROM articles WHERE slug = 'keys' FOR UPDATE"
# service: waits until every pool connection (2 workers x 2) is back.
service() {
    wait_for 30 sh -c "psql -X -A -t -c \"SELECT count(*) FROM pg_stat_activity WHERE application_name = 'conduitd'\" 2>/dev/null | grep -qx 4" ||
        bail "the pools did not reconnect"
}

n0=$(comments)
blocked "$LOCK_ARTICLE" keyed k-kill /api/articles/keys/comments '{"comment":{"body":"killed"}}' "$ALICE"
as_pg kill -KILL "$BACKEND"
blocked_end
is "its backend killed (SIGKILL) while the write ran: 502" "$(cat "$T/blocked.status")" 502
is "  without Retry-After" "$(tr -d '\r' <"$T/blocked.hdr" | grep -ci '^retry-after:')" 0
check "  saying the outcome is unknown" grep -q 'outcome unknown' "$T/blocked.body"
# PostgreSQL restarts every backend after one is killed; conduitd reconnects.
service
is "nothing stored (it had not committed)" "$(comments)" "$n0"
for i in $(seq 1 20); do
    keyed k-kill /api/articles/keys/comments '{"comment":{"body":"killed"}}' "$ALICE"
    [ "$STATUS" = 200 ] && break
    sleep 0.2
done
st "its retry with the key" 200
is "  writes it (not a replay)" "$(header Idempotent-Replayed)" ""
is "  once" "$(comments)" $((n0 + 1))

n0=$(comments)
blocked "$LOCK_ARTICLE" keyed k-term /api/articles/keys/comments '{"comment":{"body":"terminated"}}' "$ALICE"
psql -X -q -A -t -c "SELECT pg_terminate_backend($BACKEND)" >/dev/null
blocked_end
is "its backend terminated while it waited (an error as its result): 503" "$(cat "$T/blocked.status")" 503
is "  with Retry-After" "$(tr -d '\r' <"$T/blocked.hdr" | grep -ci '^retry-after:')" 1
is "  nothing stored" "$(comments)" "$n0"

# A read changed nothing, whatever broke under it: 503, to be asked again.
service
blocked "LOCK TABLE comments IN ACCESS EXCLUSIVE MODE" http GET /api/articles/keys/comments
as_pg kill -KILL "$BACKEND"
blocked_end
is "a read's backend killed (SIGKILL) while it ran: 503" "$(cat "$T/blocked.status")" 503
is "  with Retry-After" "$(tr -d '\r' <"$T/blocked.hdr" | grep -ci '^retry-after:')" 1

# ------------------------------------------------------------ under kills
note "8 threads post keyed comments, retrying, while a conduitd backend is killed (SIGKILL) 0.3 s after PostgreSQL is back from the last"
pg_up() { psql -X -q -A -t -c "SELECT 1" >/dev/null 2>&1; }
service
before=$(comments)
# Each SIGKILL makes PostgreSQL end every other backend at once (SIGQUIT,
# wherever it is, even between a commit and its answer) and restart.
(while [ ! -e "$T/kill.stop" ]; do
    wait_for 30 pg_up || break
    sleep 0.3
    _p=$(psql -X -A -t -c "SELECT pid FROM pg_stat_activity WHERE application_name = 'conduitd' ORDER BY state = 'active' DESC, random() LIMIT 1" 2>/dev/null)
    [ -n "$_p" ] && as_pg kill -KILL "$_p" 2>/dev/null && echo "$_p" >>"$T/kills"
done) &
killer=$!
t0=$(ms_now)
"$PY" "$top_srcdir/t/retry_writes.py" "$BASE" "$ALICE" keys "$T/load.json" --threads 8 --writes 100000 --seconds 20
touch "$T/kill.stop"
wait "$killer"
wait_for 30 pg_up || bail "PostgreSQL did not come back"
note "backends killed: $(wc -l <"$T/kills") in $(($(ms_now) - t0)) ms"
J="$T/load.json"
note "writes: $(jq length "$J"), final statuses: $(jq -r '[.[].final] | group_by(.) | map("\(.[0])x\(length)") | join(" ")' "$J")"
note "attempts: $(jq -r '[.[].attempts[].status] | group_by(.) | map("\(.[0])x\(length)") | join(" ")' "$J")"
ok=$(jq '[.[] | select(.final >= 200 and .final < 300)] | length' "$J")
check "the faults were real: some attempts failed" \
    [ "$(jq '[.[].attempts[] | select(.status == 0 or .status >= 500)] | length' "$J")" -gt 0 ]
is "every write was answered 2xx in the end" "$ok" "$(jq length "$J")"
is "comments stored: exactly the keys answered 2xx" "$(($(comments) - before))" "$ok"
jq -r '.[] | select(.final >= 200 and .final < 300) | .body' "$J" | sort >"$T/answered"
psql -X -A -t -c "SELECT body FROM comments WHERE body LIKE 'retry %'" | sort >"$T/stored"
is "each of them once" "$(comm -3 "$T/answered" "$T/stored" | wc -l)" 0
is "no 502 carried Retry-After" \
    "$(jq '[.[].attempts[] | select(.status == 502 and .retry_after)] | length' "$J")" 0
is "every replayed write had been answered 502 or nothing before, not only 503" \
    "$(jq '[.[] | select(any(.attempts[]; .replayed)) | select(all(.attempts[]; .status != 502 and .status != 0))] | length' "$J")" 0
note "writes replayed: $(jq '[.[] | select(any(.attempts[]; .replayed))] | length' "$J")," \
    "answered 502 at least once: $(jq '[.[] | select(any(.attempts[]; .status == 502))] | length' "$J")"

done_testing
