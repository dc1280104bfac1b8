#!/bin/sh
# -t prints the resolved settings and exits 0, or exits 1 naming the line
# (and then prints no setting: before, it listed them all above the reason).
# A config file holding the JWT secret is refused when other users can read
# it; workers do not run as root unless told (--user or --allow-root).
. "$top_srcdir/t/lib.sh"

# As root, a start refuses workers without --user or --allow-root, and so
# does -t (tested below); the other checks are made with it.
ROOT=
[ "$(id -u)" = 0 ] && ROOT=--allow-root

cat >"$T/good.conf" <<CONF
# a comment
workers = 3
listen = 127.0.0.1:9001
listen = 127.0.0.1:9002
jwt_secret = "0123456789abcdef0123456789abcdef-secret"
CONF
# A file with the JWT secret must be closed to other users.
chmod 644 "$T/good.conf"
"$CONDUITD" -t -c "$T/good.conf" >"$T/out" 2>"$T/err"
is "-t on a world-readable file with jwt_secret exits 1" "$?" 1
check "and says which file and what to do" grep -q "good.conf holds jwt_secret and is readable by every user: chmod o-rwx" "$T/err"
chmod 602 "$T/good.conf"
"$CONDUITD" -t -c "$T/good.conf" >/dev/null 2>"$T/err"
is "world-writable: refused too" "$?" 1
printf 'workers = 2\n' >"$T/nosecret.conf"
chmod 644 "$T/nosecret.conf"
"$CONDUITD" -t $ROOT -c "$T/nosecret.conf" --dev >/dev/null 2>&1
is "a world-readable file without a secret is fine" "$?" 0
chmod 640 "$T/good.conf"
"$CONDUITD" -t $ROOT -c "$T/good.conf" -w 5 >"$T/out" 2>"$T/err"
is "-t on a good file exits 0" "$?" 0
check "prints the flag's value (flags win)" grep -q '^workers = 5' "$T/out"
check "prints both listen addresses" sh -c "grep -c '^listen = 127.0.0.1:900[12]' '$T/out' | grep -qx 2"
check "never prints the secret" sh -c "! grep -q 0123456789abcdef '$T/out'"

printf 'workers = 2\n\npool = lots\n' >"$T/bad.conf"
"$CONDUITD" -t -c "$T/bad.conf" >"$T/out" 2>"$T/err"
is "-t on a bad file exits 1" "$?" 1
check "names the file and line 3" grep -q 'bad.conf:3:' "$T/err"
check "says what is wrong" grep -q 'pool' "$T/err"

printf 'wokers = 2\n' >"$T/bad2.conf"
"$CONDUITD" -t -c "$T/bad2.conf" --dev >/dev/null 2>"$T/err"
is "unknown key exits 1" "$?" 1
check "names the line and the key" grep -q 'bad2.conf:1:.*wokers' "$T/err"

"$CONDUITD" -t -c "$T/no-such-file.conf" >/dev/null 2>"$T/err"
is "a missing file exits 1" "$?" 1

env -u CONDUITD_JWT_SECRET "$CONDUITD" -t >/dev/null 2>"$T/err"
is "no JWT secret outside --dev exits 1" "$?" 1
check "and says so" grep -qi 'jwt' "$T/err"
CONDUITD_JWT_SECRET=abcdefghijklmnopqrstuvwxyz0123456789 "$CONDUITD" -t $ROOT >/dev/null 2>&1
is "the secret from the environment is enough" "$?" 0

"$CONDUITD" --no-such-flag >/dev/null 2>"$T/err"
is "an unknown flag exits 1" "$?" 1
"$CONDUITD" -V | grep -q '^conduitd [0-9]'
is "-V prints the version" "$?" 0
"$CONDUITD" -h | grep -q -- '--reuseport'
is "-h lists the flags" "$?" 0

# -t reaches the verdict a start reaches, for every check a start makes
# before it forks: each case is run both ways (a start that passes the
# checks would serve, so it is only run where it must fail).
verdicts() { # what, then the flags; -t exits 1 where the start exits non-zero
    _what=$1; shift
    "$CONDUITD" -t "$@" >"$T/t.out" 2>"$T/t.err"; _t=$?
    "$CONDUITD" -b 127.0.0.1:0 "$@" >/dev/null 2>"$T/start.err" & _p=$!
    wait_for 10 sh -c "! kill -0 $_p 2>/dev/null" || kill "$_p"
    wait "$_p"; _s=$?
    is "$_what: -t says invalid" "$_t" 1
    check "$_what: a start refuses it too (exit $_s)" [ "$_s" -ne 0 ]
    check "$_what: both give the same reason" \
        [ "$(sed -n 1p "$T/t.err")" = "$(sed -n 1p "$T/start.err")" ]
    check "$_what: and no worker was started" sh -c "! grep -q 'worker.*started' '$T/start.err'"
    check "$_what: -t printed the reason, not every setting" [ ! -s "$T/t.out" ]
}
verdicts "an unparsable connection string" --dev $ROOT --db "host=x =broken"
verdicts "an unparsable --db-read" --dev $ROOT --db-read "host=x =broken"
check "and names db_read" grep -q 'db_read connection string is invalid' "$T/t.err"
verdicts "a --db-read that asks for the primary" --dev $ROOT \
    --db-read "host=a,b target_session_attrs=read-write"
check "and says why" grep -q 'db_read names standbys' "$T/t.err"
"$CONDUITD" -t --dev $ROOT --db-read "host=a,b port=5433" --db-read-max-lag 250ms >"$T/out" 2>&1
is "-t takes standbys and a duration" "$?" 0
check "and prints them" sh -c "grep -q '^db_read = host=a,b port=5433' '$T/out' &&
    grep -q '^db_read_max_lag = 250ms' '$T/out'"
for lag in 5 5sec 10ms 2h -1s; do
    "$CONDUITD" -t --dev $ROOT --db-read "host=a" --db-read-max-lag "$lag" >/dev/null 2>"$T/err"
    is "--db-read-max-lag $lag is refused" "$?" 1
done
check "and the reason names the key" grep -q 'db_read_max_lag' "$T/err"
verdicts "a log in a folder that does not exist" --dev $ROOT --log "$T/no/such/dir/conduitd.log"
if [ "$(id -u)" = 0 ]; then
    verdicts "as root without --user" --dev
    check "and says why" grep -q 'refusing to run workers as root' "$T/t.err"
    "$CONDUITD" -b 127.0.0.1:0 --dev >/dev/null 2>"$T/err"
    is "as root without --user a start exits 2" "$?" 2
    verdicts "an unknown --user" --dev --user no-such-user-xyz
fi
done_testing
