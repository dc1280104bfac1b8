#!/bin/sh
# The pool exhausted: PostgreSQL stalls (a session holds an exclusive lock
# on the tags table for 4 s) while 50 clients keep asking GET /api/tags of
# one worker with --pool 2 --pool-queue 8.  Pass: at most 2 + 8 requests
# wait (the bounded queue), every other one gets 503 with Retry-After at
# once, none fails or times out, the waiting ones complete when the lock
# goes, and the worker's memory stays bounded under 2,000 such clients.
. "$top_srcdir/t/lib.sh"

rss_kb() { awk '/^VmRSS:/ { print $2 }' /proc/"$1"/status; }

# lock_tags SECONDS: holds the lock in the background; returns once held.
lock_tags() {
    psql -X -q -c "begin; lock table tags in access exclusive mode; select pg_sleep($1); commit;" \
        >/dev/null 2>&1 &
    LOCK_PID=$!
    wait_for 5 sh -c "psql -X -A -t -c \"select count(*) from pg_locks l join pg_class c on c.oid = l.relation where c.relname = 'tags' and l.mode = 'AccessExclusiveLock' and l.granted\" | grep -qx 1" ||
        bail "the lock was not taken"
}

pg_start
# Under ASan, freed memory waits in a quarantine (256 MB by default) that
# would read as growth: keep it small, so the RSS is the server's own.
is_sanitized && ASAN_OPTIONS="${ASAN_OPTIONS:-}:quarantine_size_mb=1:thread_local_quarantine_size_kb=64" &&
    export ASAN_OPTIONS
conduitd_start -w 1 --pool 2 --pool-queue 8
w=$(worker_pids)
is "tags answer before the stall" "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/api/tags")" 200
rss0=$(rss_kb "$w")

# The 503s' latency and the memory, to the end, are measured alone
# (t/lib.sh), not beside the rest of the suite.
exclusive
lock_tags 4
t_lock=$(ms_now)
load_start stall -k -c 50 -r 2000 -d 2.5 -u /api/tags -t 10000 -o "$T/stall.csv"
load_wait stall
wait "$LOCK_PID"
t_unlock=$(ms_now)
# CSV: end ms, status, latency us.  Waiting = answered 200 after > 1 s.
waited=$(awk -F, '$2 == 200 && $3 > 1000000' "$T/stall.csv" | wc -l)
p99_503=$(awk -F, '$2 == 503 { print $3 / 1000 }' "$T/stall.csv" | sort -n |
    awk '{ v[NR] = $1 } END { i = int(NR * 0.99); if (i < 1) i = 1; print NR ? v[i] : 0 }')
note "pool of 2, queue of 8, 50 clients, PostgreSQL stalled: $L_requests requests, $L_s503 answered 503 (p99 $p99_503 ms), $waited waited and then got 200, $L_failed failed"
is "no request failed or timed out" "$L_failed" 0
is "nothing but 200 and 503" "$((L_s2xx + L_s503))" "$L_requests"
check "beyond the queue: 503s" [ "$L_s503" -gt 100 ]
is "every 503 had Retry-After" "$L_retry_after_missing" 0
check "the queue is bounded: at most pool + queue = 10 requests waited ($waited)" [ "$waited" -le 10 ]
check "and those that waited were answered when the stall ended ($waited)" [ "$waited" -ge 1 ]
check "a 503 comes at once, p99 under 100 ms ($p99_503 ms)" fcmp "$p99_503" "<" 100

# Memory: 2,000 clients against the stalled pool.
lock_tags 4
load_start flood -k -c 2000 -r 20000 -d 3 -u /api/tags -t 10000
peak=0
for i in 1 2 3 4 5 6; do
    sleep 0.5
    r=$(rss_kb "$w"); [ "$r" -gt "$peak" ] && peak=$r
done
load_wait flood
wait "$LOCK_PID"
note "worker RSS: $rss0 kB before, peak $peak kB under 2000 clients ($L_requests requests, $L_s503 answered 503)"
is "the flood: no request failed" "$L_failed" 0
check "memory stays bounded: the peak within 64 MB of the start" [ $((peak - rss0)) -lt 65536 ]
is "serving again after the stall" "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/api/tags")" 200
is "the same worker throughout" "$(worker_pids)" "$w"
done_testing
