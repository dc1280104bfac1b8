#!/bin/sh
# -t prints the resolved settings and exits 0, or exits 1 naming the line.
# A config file holding the JWT secret is refused when other users can read
# it; workers do not run as root unless told (--user or --allow-root).
. "$top_srcdir/t/lib.sh"

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
"$CONDUITD" -t -c "$T/nosecret.conf" --dev >/dev/null 2>&1
is "a world-readable file without a secret is fine" "$?" 0
chmod 640 "$T/good.conf"
"$CONDUITD" -t -c "$T/good.conf" -w 5 >"$T/out" 2>"$T/err"
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
CONDUITD_JWT_SECRET=abcdefghijklmnopqrstuvwxyz0123456789 "$CONDUITD" -t >/dev/null 2>&1
is "the secret from the environment is enough" "$?" 0

"$CONDUITD" --no-such-flag >/dev/null 2>"$T/err"
is "an unknown flag exits 1" "$?" 1
"$CONDUITD" -V | grep -q '^conduitd [0-9]'
is "-V prints the version" "$?" 0
"$CONDUITD" -h | grep -q -- '--reuseport'
is "-h lists the flags" "$?" 0

if [ "$(id -u)" = 0 ]; then
    "$CONDUITD" -b 127.0.0.1:0 --dev >/dev/null 2>"$T/err"
    is "as root without --user it refuses (exit 2)" "$?" 2
    check "and says why" grep -q 'root' "$T/err"
fi
done_testing
