#!/bin/sh
# --access-log: one line per request in the combined format (with the
# request time and the database wait appended) or as JSON lines; buffered
# per worker and still exact under load from several workers (lines
# counted against the load generator's own count); never the token, the
# Authorization header or a body; USR1 after a rename (what logrotate
# does) writes to the new file; TERM writes what is buffered.
. "$top_srcdir/t/lib.sh"

command -v jq >/dev/null || skip "jq not installed"
has_loadgen || skip "t/loadgen is not built"
pg_start
A=$T/access.log
conduitd_start -w 2 --bcrypt-cost 4 --access-log "$A"

UA="access-log-test/1"
req() { # METHOD PATH [BODY [TOKEN]]: like http, with the test's user agent and a referer
    http_raw "$1" "$2" "${3:-}" "${4:+Token $4}" -A "$UA" -e "http://front.example/page"
}
lines() { grep -c "$UA" "$1" 2>/dev/null || echo 0; }

req POST /api/users '{"user":{"username":"logged","email":"logged@example.io","password":"pw-access-secret"}}'
is "register" "$STATUS" 201
TOK=$(printf '%s' "$BODY" | jq -r .user.token)
req GET /api/user "" "$TOK"
req GET '/api/articles?limit=3&offset=0'
req GET /no/such/route
len404=$(printf '%s' "$BODY" | wc -c | tr -d ' ')
req GET /healthz
wait_for 3 sh -c "[ \$(grep -c '$UA' '$A') -ge 5 ]"
is "one line per request (5)" "$(lines "$A")" 5
re='^127\.0\.0\.1 - - \[[0-9]{2}/[A-Z][a-z]{2}/[0-9]{4}:[0-9]{2}:[0-9]{2}:[0-9]{2} [+-][0-9]{4}\] "[A-Z]+ [^ ]+ HTTP/1\.1" [0-9]{3} [0-9]+ "[^"]*" "[^"]*" [0-9]+\.[0-9]{3} [0-9]+\.[0-9]{3}$'
is "every line is in the combined format, plus the two times" "$(grep "$UA" "$A" | grep -Evc "$re")" 0
check "the register line: method, path, status" grep -q '"POST /api/users HTTP/1.1" 201 ' "$A"
check "the query string is kept" grep -q '"GET /api/articles?limit=3&offset=0 HTTP/1.1" 200 ' "$A"
check "the 404 with the length of its body ($len404)" grep -q "\"GET /no/such/route HTTP/1.1\" 404 $len404 " "$A"
check "the referer and the user agent" grep -q "\"http://front.example/page\" \"$UA\"" "$A"
check "never the token" sh -c "! grep -q '$TOK' '$A'"
check "never a password or a body" sh -c "! grep -q 'pw-access\|password\|logged@example' '$A'"
check "never the Authorization header" sh -c "! grep -qi 'authorization\|Token ' '$A'"

# Exact under load from both workers: as many lines as answers.
load_start load -c 8 -k -d 2 -u '/api/tags?load=1'
load_wait load
wait_for 3 sh -c "[ \$(grep -c 'load=1' '$A') -ge $L_requests ]"
is "under load: as many lines as requests ($L_requests)" "$(grep -c 'GET /api/tags?load=1 HTTP' "$A")" "$L_requests"
check "from both workers" [ "$(grep -c 'load=1' "$A")" -gt 100 ]

# logrotate: rename, USR1, and the next lines go to a new file.
mv "$A" "$A.1"
kill -USR1 "$CONDUITD_PID"
wait_for 5 grep -q 'log reopened' "$T/conduitd.log"
sleep 0.3
req GET /api/tags?after=rotate
wait_for 3 sh -c "grep -q 'after=rotate' '$A' 2>/dev/null"
check "after USR1 a new file gets the next line" grep -q 'after=rotate' "$A"
check "and the old one does not" sh -c "! grep -q 'after=rotate' '$A.1'"

# TERM: what is buffered is written before the worker exits.
req GET /api/tags?before=stop
kill -TERM "$CONDUITD_PID"
wait "$CONDUITD_PID"
CONDUITD_PID=
check "a line buffered at TERM is written" grep -q 'before=stop' "$A"

# JSON lines.
J=$T/access.json
conduitd_start -w 2 --bcrypt-cost 4 --access-log "$J" --access-log-format json
req GET /api/user "" "$TOK"
req POST /api/articles '{"article":{"title":"Logged","description":"d","body":"secret body text"}}' "$TOK"
req GET /healthz
wait_for 3 sh -c "[ \$(grep -c '$UA' '$J') -ge 3 ]"
is "JSON: one object a line, every line parses" "$(grep "$UA" "$J" | jq -c . 2>/dev/null | wc -l)" 3
dbt=$(grep "$UA" "$J" | jq -r 'select(.uri == "/api/user") | .db_time')
check "a route that queries waited for the database ($dbt s)" awk -v t="$dbt" 'BEGIN { exit !(t > 0) }'
is "/healthz did not" "$(grep "$UA" "$J" | jq -r 'select(.uri == "/healthz") | .db_time')" 0
rt=$(grep "$UA" "$J" | jq -r 'select(.uri == "/api/user") | .request_time')
check "and its request time covers that wait ($rt s)" awk -v r="$rt" -v d="$dbt" 'BEGIN { exit !(r >= d) }'
check "with every field" sh -c "grep '$UA' '$J' | jq -e 'select(has(\"time\") and has(\"remote_addr\") and has(\"method\") and has(\"uri\") and has(\"protocol\") and .status >= 100 and .bytes >= 0 and (.request_time|type) == \"number\" and (.db_time|type) == \"number\" and has(\"user_agent\") and has(\"referer\") and has(\"worker\"))' >/dev/null"
is "the create: POST, 201" "$(grep "$UA" "$J" | jq -r 'select(.method == "POST") | .status')" 201
check "never the body" sh -c "! grep -q 'secret body text' '$J'"
stop_pid "$CONDUITD_PID"; CONDUITD_PID=

# Off by default: no new line anywhere.
before=$(cat "$T"/access* | wc -l)
conduitd_start -w 1
req GET /api/tags?off=1
sleep 1.5
is "off by default" "$(cat "$T"/access* | grep -c 'off=1')" 0
is "and no other file written" "$(cat "$T"/access* | wc -l)" "$before"
stop_pid "$CONDUITD_PID"; CONDUITD_PID=

# As root with --user: the workers open it as that user, after -t as root
# checked it without creating it (a root-owned file would be closed to them).
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
    install -d -o nobody "$T/priv"
    "$CONDUITD" -t --dev --user nobody --access-log "$T/priv/access.log" >/dev/null 2>&1
    is "-t as root with --user: valid" "$?" 0
    check "and it created no file" [ ! -e "$T/priv/access.log" ]
    chmod 755 "$T"
    "$CONDUITD" -b 127.0.0.1:0 --dev --user nobody --access-log "$T/priv/access.log" \
        --log "$T/priv.log" </dev/null >/dev/null 2>&1 &
    EXTRA_PIDS="${EXTRA_PIDS:-} $!"
    wait_for 10 grep -q 'worker(s) ready' "$T/priv.log"
    port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$T/priv.log" | head -n 1)
    curl -s -o /dev/null -A "$UA" "http://127.0.0.1:$port/healthz?as=nobody"
    wait_for 3 grep -q 'as=nobody' "$T/priv/access.log"
    check "workers that dropped to nobody write it" grep -q 'as=nobody' "$T/priv/access.log"
    is "and it is theirs" "$(stat -c %U "$T/priv/access.log")" nobody
fi

root=; [ "$(id -u)" = 0 ] && root=--allow-root
"$CONDUITD" -t --dev $root --access-log-format xml >/dev/null 2>"$T/err"
is "-t refuses an unknown format" "$?" 1
"$CONDUITD" -t --dev $root --access-log "$T/no/such/dir/a.log" >/dev/null 2>"$T/err"
is "-t refuses an access log it cannot open" "$?" 1
done_testing
