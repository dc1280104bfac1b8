#!/bin/sh
# Two instances (masters with their own workers, --cache on) on one
# PostgreSQL behind nginx least_conn, configured from etc/nginx-upstream.conf.in.
# Under load, one instance dies (kill -9 of its master and workers): the
# other keeps serving.  nginx retries an idempotent request that failed on
# the dead instance, so no GET may fail; the figure is reported.  A write
# made through nginx afterwards is served fresh by the survivor.
. "$top_srcdir/t/lib.sh"
[ -x "$NGINX" ] || skip "nginx is not installed (apt-get install nginx-light)"
has_loadgen || skip "t/loadgen is not built"

pg_start
conduitd_start -w 1 --bcrypt-cost 4 --cache on
A_PID=$CONDUITD_PID A_PORT=$PORT
A_WORKERS=$(worker_pids)
mv "$T/conduitd.log" "$T/a.log"
EXTRA_PIDS=$A_PID
CONDUITD_PID=
conduitd_start -w 1 --bcrypt-cost 4 --cache on
B_PORT=$PORT

# nginx on a free loopback port, from the template the project installs.
nginx_start "$T/nginx" 127.0.0.1:$A_PORT 127.0.0.1:$B_PORT ||
    bail "nginx did not start: $(cat "$T/nginx/out" "$T/nginx/error.log" 2>/dev/null)"
EXTRA_PIDS="$NGINX_PID $EXTRA_PIDS"
BASE="http://127.0.0.1:$NPORT"

http POST /api/users '{"user":{"username":"alice","email":"alice@example.com","password":"password1"}}'
is "register through nginx" "$STATUS" 201
TOK=$(printf '%s' "$BODY" | jq -r .user.token)
http POST /api/articles '{"article":{"title":"Hello","description":"d","body":"b","tagList":["one"]}}' "$TOK"
is "write through nginx" "$STATUS" 201

# Both instances take a share of the load before one dies.
PORT=$NPORT
load_start spread -k -c 8 -d 2 -r 400 -u /api/tags -t 5000
load_wait spread
# Every /api/tags looks in the cache: its counters show who answered.
for port in $A_PORT $B_PORT; do
    BASE="http://127.0.0.1:$port" http GET /healthz
    n=$(printf '%s' "$BODY" | jq '.cache.hits + .cache.misses')
    check "the instance on port $port took a share ($n requests)" [ "${n:-0}" -gt 50 ]
done
check "no failure before the kill" [ "$L_failed" -eq 0 ]

load_start kill -k -c 8 -d 6 -r 400 -u /api/tags -t 5000
sleep 2
kill -KILL "$A_PID" $A_WORKERS
EXTRA_PIDS=$NGINX_PID
load_wait kill
note "instance A killed under load: $L_requests GET requests through nginx, $L_failed failed, p99 $L_p99_ms ms"
is "no GET failed when one instance died (nginx retries on the other)" "$L_failed" 0
check "the load was really offered" [ "$L_requests" -ge 2000 ]

http PUT /api/user '{"user":{"bio":"after the crash"}}' "$TOK"
is "a write after the crash succeeds" "$STATUS" 200
http GET /api/profiles/alice
is "and the survivor serves it fresh" "$(printf '%s' "$BODY" | jq -r .profile.bio)" "after the crash"
done_testing
