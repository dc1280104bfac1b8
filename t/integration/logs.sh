#!/bin/sh
# No password, token or secret in any log line, and no sanitizer report.
# Runs last in `make check`: every other test's server logs are in
# $LOG_ARCHIVE by then.  First it runs a server of its own at debug level
# through everything that handles a secret (a JWT secret from the config
# file, a database password in the connection string, registration, good
# and bad logins, a password change, good, forged and expired tokens, the
# database going away, a reload, a log reopen); then it greps the logs of
# the whole suite.  In a SANITIZE=1 build, ASan, UBSan and LSan write their
# reports into the same folder: any report fails the suite here.
. "$top_srcdir/t/lib.sh"

[ -n "${LOG_ARCHIVE:-}" ] && [ -d "$LOG_ARCHIVE" ] || skip "LOG_ARCHIVE is set by make check"
command -v jq >/dev/null || skip "jq not installed"

FILE_SECRET=logtest-file-secret-0123456789abcdef-0123
DB_PASSWORD=db-pass-zz9-logtest
PASSWORD1=pw-logtest-first-Secret1
PASSWORD2=pw-logtest-second-Secret2

pg_start
DB="$DB password=$DB_PASSWORD"
printf 'workers = 2\njwt_secret = %s\n' "$FILE_SECRET" >"$T/conduitd.conf"
chmod 600 "$T/conduitd.conf"
LOG_LEVEL=debug conduitd_start -c "$T/conduitd.conf" --bcrypt-cost 4

http POST /api/users "{\"user\":{\"username\":\"logger\",\"email\":\"logger@example.io\",\"password\":\"$PASSWORD1\"}}"
is "register" "$STATUS" 201
TOK=$(printf '%s' "$BODY" | jq -r .user.token)
http POST /api/users/login "{\"user\":{\"email\":\"logger@example.io\",\"password\":\"$PASSWORD1\"}}"
is "login" "$STATUS" 200
http POST /api/users/login "{\"user\":{\"email\":\"logger@example.io\",\"password\":\"$PASSWORD2\"}}"
is "login with a wrong password" "$STATUS" 401
http GET /api/user "" "$TOK"
is "the token works" "$STATUS" 200
http PUT /api/user "{\"user\":{\"password\":\"$PASSWORD2\"}}" "$TOK"
is "a password change" "$STATUS" 200
http GET /api/user "" "$TOK.forged"
is "a forged token" "$STATUS" 401
now=$(date +%s)
expired=$(jwt '{"alg":"HS256","typ":"JWT"}' "{\"sub\":1,\"iat\":$((now - 100)),\"exp\":$((now - 50))}" "$FILE_SECRET")
http GET /api/user "" "$expired"
is "an expired token" "$STATUS" 401
pg_ctl_stop fast
http POST /api/users/login "{\"user\":{\"email\":\"logger@example.io\",\"password\":\"$PASSWORD2\"}}"
is "login with PostgreSQL down" "$STATUS" 503
pg_ctl_start
kill -HUP "$CONDUITD_PID"
wait_for 10 grep -q 'reload complete' "$T/conduitd.log"
kill -USR1 "$CONDUITD_PID"
wait_for 5 grep -q 'log reopened' "$T/conduitd.log"
"$CONDUITD" -t -c "$T/conduitd.conf" >"$T/configtest.out" 2>&1
stop_pid "$CONDUITD_PID"; CONDUITD_PID=
check "the debug log has lines to look at" [ "$(wc -l <"$T/conduitd.log")" -gt 30 ]
archive_logs

n=$(ls "$LOG_ARCHIVE" | grep -vc '^sanitizer')
note "$n log files of the suite to read"
# What must never appear: the secrets, the passwords of this test and the
# suite's (theirs start "pw-"), a connection string's password, any JWT
# (a header or payload in base64url begins "eyJ").
for pat in "$FILE_SECRET" "$SECRET" "$DB_PASSWORD" "$PASSWORD1" "$PASSWORD2" \
    'password=' '"pw-[a-z]' 'pw-[a-z]*[0-9]*' 'eyJ[A-Za-z0-9_-]\{8,\}'; do
    hits=$(cat "$LOG_ARCHIVE"/* 2>/dev/null | grep -c -e "$pat")
    is "no log line holds '$pat'" "$hits" 0
    [ "$hits" -gt 0 ] && grep -l -e "$pat" "$LOG_ARCHIVE"/* | head -3 | sed 's/^/# in /'
done

# Under make check-valgrind every process leaves a memcheck report, empty when clean.
vg=$(find "$LOG_ARCHIVE" -name 'valgrind.*' | wc -l)
vgbad=$(find "$LOG_ARCHIVE" -name 'valgrind.*' -size +0 | wc -l)
[ "$vg" -gt 0 ] && note "$vg valgrind reports of conduitd processes"
is "no valgrind error or definite leak in any conduitd process" "$vgbad" 0
for f in $(find "$LOG_ARCHIVE" -name 'valgrind.*' -size +0 | head -3); do
    note "---- $f"
    head -n 40 "$f" | sed 's/^/# /'
done

reports=$(ls "$LOG_ARCHIVE" | grep -c '^sanitizer')
is "no sanitizer report (ASan, UBSan, LSan) from any test" "$reports" 0
if [ "$reports" -gt 0 ]; then
    for f in "$LOG_ARCHIVE"/sanitizer*; do
        note "---- $f"
        head -n 30 "$f" | sed 's/^/# /'
    done
fi
done_testing
