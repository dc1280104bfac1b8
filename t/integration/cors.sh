#!/bin/sh
# CORS in a real browser: headless Chromium loads a page from another
# origin (nginx on another port) that registers, logs in and creates an
# article through fetch() with the token (t/integration/cors/page.html).
# With --cors-origin naming the page's origin it works and the article is
# stored; with another origin, or without the flag, the browser refuses
# and nothing is stored.  Then the headers themselves: preflight 204 with
# the methods, headers and max age; 403 for an origin not listed; the
# origin echoed with Vary on answers, errors included; nothing without an
# Origin; "*"; and -t refusing lists that cannot work.
. "$top_srcdir/t/lib.sh"

CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || echo)}
[ -n "$CHROMIUM" ] || skip "chromium not installed (script/deps installs it)"
command -v jq >/dev/null || skip "jq not installed"

pg_start

# The front end: nginx serving the page on a port of its own.
W=$T/www
mkdir -p "$W/html"
cp "$top_srcdir/t/integration/cors/page.html" "$W/html/"
chmod -R a+rX "$W"
page_conf() { nginx_conf "$W" 1024 "types { text/html html; } server { listen 127.0.0.1:$1; root $W/html; }"; }
nginx_listen "$W" /page.html page_conf || bail "nginx did not start: $(cat "$W/out" "$W/error.log" 2>/dev/null | tail -n 5)"
EXTRA_PIDS="$NGINX_PID"
PAGE_PORT=$NPORT
PAGE_ORIGIN=http://127.0.0.1:$PAGE_PORT

# browse API_BASE: the page's outcome, as the browser left it in #out.
browse() {
    rm -rf "$T/chromium"
    timeout 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --user-data-dir="$T/chromium" --virtual-time-budget=15000 --dump-dom \
        "$PAGE_ORIGIN/page.html?api=$1" 2>"$T/chromium.err" |
        sed -n 's/.*<pre id="out">\([^<]*\).*/\1/p'
}
users() { psql -X -At -c "select count(*) from users where username like 'cors%'"; }
articles() { psql -X -At -c "select count(*) from articles where title = 'From a browser'"; }

conduitd_start -w 2 --bcrypt-cost 4 --cors-origin "http://127.0.0.1:1 $PAGE_ORIGIN"
out=$(browse "$BASE")
note "allowed origin: $out"
case $out in
"result: 201 200 201 from-a-browser"*" by cors"*) pass "the browser's register, login and create went through" ;;
*) fail "the browser's register, login and create went through: $out"; tail -5 "$T/chromium.err" | sed 's/^/# /' ;;
esac
is "the article is stored" "$(articles)" 1
stop_pid "$CONDUITD_PID"; CONDUITD_PID=

u0=$(users) a0=$(articles)
for flags in "--cors-origin http://127.0.0.1:1" ""; do
    conduitd_start -w 1 --bcrypt-cost 4 $flags
    out=$(browse "$BASE")
    note "${flags:-no --cors-origin}: $out"
    case $out in
    "failed: TypeError"*) pass "${flags:-no --cors-origin}: the browser refuses the call" ;;
    *) fail "${flags:-no --cors-origin}: the browser refuses the call: $out" ;;
    esac
    stop_pid "$CONDUITD_PID"; CONDUITD_PID=
done
is "and nothing was stored: users" "$(users)" "$u0"
is "and nothing was stored: articles" "$(articles)" "$a0"

# The headers, as a browser would read them.
conduitd_start -w 1 --cors-origin "$PAGE_ORIGIN"
hdr() { curl -s -o /dev/null -D - "$@" | tr -d '\r'; }
h=$(hdr -X OPTIONS -H "Origin: $PAGE_ORIGIN" -H 'Access-Control-Request-Method: PUT' \
    -H 'Access-Control-Request-Headers: authorization,content-type' "$BASE/api/user")
check "preflight: 204" sh -c "printf '%s' '$h' | grep -q '^HTTP/1.1 204'"
check "preflight: the origin echoed" sh -c "printf '%s' '$h' | grep -qx 'Access-Control-Allow-Origin: $PAGE_ORIGIN'"
check "preflight: the methods" sh -c "printf '%s' '$h' | grep -qx 'Access-Control-Allow-Methods: GET, POST, PUT, DELETE'"
check "preflight: Authorization and Content-Type" \
    sh -c "printf '%s' '$h' | grep -qx 'Access-Control-Allow-Headers: Authorization, Content-Type, Idempotency-Key'"
check "preflight: a max age" sh -c "printf '%s' '$h' | grep -qx 'Access-Control-Max-Age: 7200'"
check "preflight: Vary: Origin" sh -c "printf '%s' '$h' | grep -qx 'Vary: Origin'"
h=$(hdr -X OPTIONS -H 'Origin: http://evil.example' -H 'Access-Control-Request-Method: POST' "$BASE/api/articles")
check "preflight from another origin: 403" sh -c "printf '%s' '$h' | grep -q '^HTTP/1.1 403'"
check "and no Access-Control-Allow-Origin" sh -c "! printf '%s' '$h' | grep -qi '^Access-Control-Allow-Origin'"
h=$(hdr -H "Origin: $PAGE_ORIGIN" "$BASE/api/tags")
check "an answer names the allowed origin" sh -c "printf '%s' '$h' | grep -qx 'Access-Control-Allow-Origin: $PAGE_ORIGIN'"
h=$(hdr -H "Origin: $PAGE_ORIGIN" "$BASE/api/user")
check "an error (401) too, so the page can read it" \
    sh -c "printf '%s' '$h' | grep -q '^HTTP/1.1 401' && printf '%s' '$h' | grep -qx 'Access-Control-Allow-Origin: $PAGE_ORIGIN'"
h=$(hdr -H 'Origin: http://evil.example' "$BASE/api/tags")
check "another origin's request is served without the header" \
    sh -c "printf '%s' '$h' | grep -q '^HTTP/1.1 200' && ! printf '%s' '$h' | grep -qi '^Access-Control'"
h=$(hdr "$BASE/api/tags")
check "no Origin, no CORS header" sh -c "! printf '%s' '$h' | grep -qi '^Access-Control'"
h=$(hdr -X OPTIONS "$BASE/api/tags")
check "OPTIONS that is no preflight: 405 as before" sh -c "printf '%s' '$h' | grep -q '^HTTP/1.1 405'"
stop_pid "$CONDUITD_PID"; CONDUITD_PID=

conduitd_start -w 1 --cors-origin '*'
h=$(hdr -H 'Origin: http://anywhere.example:8000' "$BASE/api/tags")
check "cors_origin *: Access-Control-Allow-Origin: *" sh -c "printf '%s' '$h' | grep -qx 'Access-Control-Allow-Origin: \*'"
stop_pid "$CONDUITD_PID"; CONDUITD_PID=

root=; [ "$(id -u)" = 0 ] && root=--allow-root
for bad in "http://a.example/" "a.example" "* http://a.example" "ftp://a.example" " , "; do
    "$CONDUITD" -t --dev $root --cors-origin "$bad" >/dev/null 2>"$T/err"
    rc=$?
    is "-t refuses cors_origin '$bad'" "$rc" 1
done
check "saying why" grep -q 'cors_origin' "$T/err"
done_testing
