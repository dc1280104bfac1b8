#!/bin/sh
# One statement in flight per missed key (worker/cache_fill.h): with the
# tag list's statement held back by a lock on the tags table, 20
# concurrent GET /api/tags on one worker (--cache on, pool 4, a
# queue_timeout longer than the lock, no standing-queue sheds: the
# queue stands while the lock holds) send one
# statement, not four (the pool) or twenty; the other 19 wait for it and
# are answered, all 200 with the same body, once it returns; /healthz
# counts their waits.  When the tag list changes while that statement
# waits (a notification), its answer is refused and the waiters miss
# again: one of them fills, the other 18 wait for it again (waiting once,
# as c7891b0 did, they would send 19 statements).  A cache turned off by
# a lost listener makes nobody wait.  The
# control, --cache off, shows the same burst occupying the whole pool:
# what the count of one is measured against.
. "$top_srcdir/t/lib.sh"
command -v jq >/dev/null || skip "jq not installed"
N=20
pg_start

# blocked_tags: conduitd's statements for the tag list waiting on a lock.
blocked_tags() {
    psql -X -At -c "SELECT count(*) FROM pg_stat_activity
                     WHERE wait_event_type = 'Lock'
                       AND regexp_replace(query, '\s+', ' ', 'g') LIKE '%FROM tags WHERE article_count%'" postgres
}

# burst NAME [MIDWAY]: N concurrent GET /api/tags while a session holds an
# exclusive lock on tags for LOCK_S seconds; BLOCKED is how many of
# conduitd's statements waited on it, the answers go to $T/NAME.*.
# MIDWAY (a command) runs once they are all waiting.
LOCK_S=3
burst() {
    lock_tags
    fire "$@"
}

# lock_tags: the exclusive lock on tags, for LOCK_S seconds from now.
lock_tags() {
    psql -X -q -d conduit -c "BEGIN; LOCK TABLE tags IN ACCESS EXCLUSIVE MODE;
                              SELECT pg_sleep($LOCK_S); COMMIT;" >/dev/null &
    _lock=$!
    wait_for 5 sh -c "[ \$(psql -X -At -c \"SELECT count(*) FROM pg_locks l JOIN pg_class c
        ON c.oid = l.relation WHERE c.relname = 'tags' AND l.mode = 'AccessExclusiveLock'
        AND l.granted\" conduit) = 1 ]"
}

# fire NAME [MIDWAY]: burst's requests, under a lock already taken.
fire() {
    _pids=
    for _i in $(seq 1 $N); do
        curl -s -o "$T/$1.$_i.body" -w '%{http_code}\n' --max-time 20 "$BASE/api/tags" \
            >"$T/$1.$_i.code" &
        _pids="$_pids $!"
    done
    sleep 1
    BLOCKED=$(blocked_tags)
    [ -n "${2:-}" ] && $2
    wait $_lock
    wait $_pids
}

# ------------------------------------------------------------ cache on
conduitd_start -w 1 --pool 4 --queue-timeout 10s --queue-standing-timeout 0 --bcrypt-cost 4 --cache on
wait_for 10 sh -c "curl -s '$BASE/healthz' | jq -e .cache.enabled >/dev/null"
burst on
is "cache on: one statement for the tag list waited on the lock, for $N requests" "$BLOCKED" 1
is "all $N answered 200" "$(cat "$T"/on.*.code | sort | uniq -c | awk '{ print $1 " " $2 }')" "$N 200"
is "with one body" "$(cat "$T"/on.*.body | sort -u | wc -l | tr -d ' ')" 1
check "the tag list" sh -c "jq -e '.tags | type == \"array\"' '$T/on.1.body' >/dev/null"
http GET /healthz
is "/healthz: $((N - 1)) waits" "$(printf '%s' "$BODY" | jq .cache.waits)" $((N - 1))
is "the tag list missed $N times; the $((N - 1)) that waited looked again and hit" \
    "$(printf '%s' "$BODY" | jq -c '.cache.lookups.tags')" "[$((N - 1)),0,$N]"
http GET /api/tags
http GET /healthz
is "the next read is a hit too" "$(printf '%s' "$BODY" | jq -c '.cache.lookups.tags[0]')" $N

# The tag list changes while its fill waits on the lock (a notification,
# as another instance's write sends): that fill's answer is refused, and
# its waiters, looking again, miss again; one of them fills, the others
# wait for it (not 19 statements at once), and all get the new answer.
change_tags() {
    psql -X -q -At -d conduit -c "SELECT pg_notify('conduit_cache',
        (extract(epoch FROM clock_timestamp()) * 1000000)::int8 || ' tags')" >/dev/null
}
change_tags # drops the tag list this worker holds: the burst misses it
sleep 0.5
http GET /healthz
w0=$(printf '%s' "$BODY" | jq .cache.waits)
l0=$(printf '%s' "$BODY" | jq -c .cache.lookups.tags)
burst changed change_tags
is "changed midway: one statement waited on the lock" "$BLOCKED" 1
is "all $N answered 200" "$(cat "$T"/changed.*.code | sort | uniq -c | awk '{ print $1 " " $2 }')" "$N 200"
http GET /healthz
is "the $((N - 1)) waited, missed again, and $((N - 2)) waited for the one that filled" \
    "$(($(printf '%s' "$BODY" | jq .cache.waits) - w0))" $((2 * N - 3))
note "tag lookups [hit,stale,absent] before $l0, after $(printf '%s' "$BODY" | jq -c .cache.lookups.tags)"

# A cache that is off (its listener lost, and PostgreSQL refusing it a
# new one) stores nothing: waiting for another request's fill would only
# hold a request back (three fills in a row), so the burst runs as with
# the cache off, the whole pool at once, and nobody waits.
LOCK_S=6
lock_tags
psql -X -q -c "ALTER DATABASE conduit ALLOW_CONNECTIONS false" postgres
psql -X -q -At -c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                    WHERE application_name = 'conduitd cache'" postgres >/dev/null
wait_for 5 sh -c "curl -s '$BASE/healthz' | jq -e '.cache.enabled == false' >/dev/null"
http GET /healthz
w0=$(printf '%s' "$BODY" | jq .cache.waits)
fire deaf
is "cache deaf: the burst takes the whole pool (4 statements on the lock)" "$BLOCKED" 4
is "all $N answered 200" "$(cat "$T"/deaf.*.code | sort | uniq -c | awk '{ print $1 " " $2 }')" "$N 200"
http GET /healthz
is "and none of them waited" "$(($(printf '%s' "$BODY" | jq .cache.waits) - w0))" 0
psql -X -q -c "ALTER DATABASE conduit ALLOW_CONNECTIONS true" postgres
LOCK_S=3
stop_pid "$CONDUITD_PID"
CONDUITD_PID=

# ------------------------------------------------------------ control: cache off
conduitd_start -w 1 --pool 4 --queue-timeout 10s --queue-standing-timeout 0 --bcrypt-cost 4 --cache off
burst off
is "cache off: the burst takes the whole pool (4 statements on the lock)" "$BLOCKED" 4
is "all $N answered 200" "$(cat "$T"/off.*.code | sort | uniq -c | awk '{ print $1 " " $2 }')" "$N 200"

done_testing
