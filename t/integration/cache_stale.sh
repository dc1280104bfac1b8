#!/bin/sh
# Stale answers, bounded (cache_stale_max; docs/caching.md "Stale
# answers"): one worker, --pool 1, its cache warm, then a writer adds an
# article with a new tag, which changes the tag list and the global list.
# A session holds a lock on the tags table, so the statement refreshing
# the tag list cannot finish, and the list's refresh waits behind it in
# the pool's queue (backed up: its oldest query waits more than 100 ms).
#   - a reader other than the writer (signed in, and anonymous) is
#     answered the tag list and the global list from before the change,
#     at once (under a second, while the lock holds for seconds more);
#   - the writer waits, and reads its own write (the new tag, its article),
#     on GET /api/tags too, which reads no token (it is looked at quietly:
#     before, the writer was taken for anonymous there and answered
#     stale); a token that names nobody valid is not given stale either;
#   - readers keep coming every 200 ms while the lock holds: no answer is
#     ever the old value once BOUND_MS has passed since the write was
#     answered (the bound runs from the moment the value was last known
#     current, which was before), and those sent after that wait for the
#     refresh (or get a 503), the new value then;
#   - /metrics counts exactly the stale answers the readers saw;
#   - with --cache-stale-max 0 the same reader waits for the refresh and
#     gets the new value, and nothing is counted.
# Without stale answers (api_cache_stale() always 0) the first checks fail:
# the readers wait for the lock like the writer.
. "$top_srcdir/t/lib.sh"
command -v jq >/dev/null || skip "jq not installed"
BOUND_MS=3000
pg_start

# lock_tags SECONDS: an exclusive lock on tags, held that long from now,
# in the background ($_lock); returns once it is granted.
lock_tags() {
    psql -X -q -d conduit -c "BEGIN; LOCK TABLE tags IN ACCESS EXCLUSIVE MODE;
                              SELECT pg_sleep($1); COMMIT;" >/dev/null &
    _lock=$!
    wait_for 5 sh -c "[ \$(psql -X -At -c \"SELECT count(*) FROM pg_locks l JOIN pg_class c
        ON c.oid = l.relation WHERE c.relname = 'tags' AND l.mode = 'AccessExclusiveLock'
        AND l.granted\" conduit) = 1 ]" || bail "the lock on tags was not granted"
}

# blocked_tags: conduitd's statements for the tag list waiting on the lock.
blocked_tags() {
    psql -X -At -c "SELECT count(*) FROM pg_stat_activity
                     WHERE wait_event_type = 'Lock'
                       AND regexp_replace(query, '\s+', ' ', 'g') LIKE '%FROM tags WHERE article_count%'" postgres
}

tags_blocked() { [ "$(blocked_tags)" -ge 1 ]; }

# get NAME PATH [TOKEN]: a GET in the background; its status and seconds
# into $T/NAME.code, its body into $T/NAME.body, the moment it was sent
# (ms) into $T/NAME.sent.
get() {
    ms_now >"$T/$1.sent"
    curl -s -o "$T/$1.body" -w '%{http_code} %{time_total}\n' --max-time 30 \
        ${3:+-H "Authorization: Token $3"} "$BASE$2" >"$T/$1.code" &
    _pids="$_pids $!"
}
code() { cut -d' ' -f1 "$T/$1.code"; }
secs() { cut -d' ' -f2 "$T/$1.code"; }
tags_of() { jq -c '.tags | sort' "$T/$1.body" 2>/dev/null; }
count_of() { jq -c '.articlesCount' "$T/$1.body" 2>/dev/null; }
stale_answers() {
    curl -s "$SBASE/metrics" | awk '$1 == "conduitd_cache_stale_answers_total" { print $2 }'
}

# scenario STALE_MAX LOCK_S: a fresh instance, its cache warm, the write,
# the lock, and the two refreshes in flight; the readers are the caller's.
scenario() {
    conduitd_start -w 1 --pool 1 --queue-timeout 30s --queue-standing-timeout 0 --bcrypt-cost 4 \
        --cache on --cache-stale-max "$1" --status-listen 127.0.0.1:0
    status_base
    wait_for 10 sh -c "curl -s '$BASE/healthz' | jq -e .cache.enabled >/dev/null"
    RTOK=$(register "reader$1")
    WTOK=$(register "writer$1")
    # The first article: a change after both registrations, so every value
    # read from here on was read after the reader's last write.
    http POST /api/articles '{"article":{"title":"Old '"$1"'","description":"d","body":"b","tagList":["old'"$1"'"]}}' "$WTOK"
    [ "$STATUS" = 201 ] || bail "the first article: $STATUS $BODY"
    OLD_TAGS=$(curl -s "$BASE/api/tags" | jq -c '.tags | sort')
    OLD_COUNT=$(curl -s "$BASE/api/articles" | jq -c .articlesCount)
    curl -s -H "Authorization: Token $RTOK" "$BASE/api/articles" >/dev/null # the reader's sets
    is "warm: the tag list is a hit" "$(curl -s "$BASE/api/tags" | jq -c '.tags | sort')" "$OLD_TAGS"
    curl -s "$BASE/api/articles" >/dev/null
    STALE0=$(stale_answers)
    # The change: a new article with a new tag, answered at WROTE.
    http POST /api/articles '{"article":{"title":"New '"$1"'","description":"d","body":"b","tagList":["new'"$1"'"]}}' "$WTOK"
    WROTE=$(ms_now)
    [ "$STATUS" = 201 ] || bail "the new article: $STATUS $BODY"
    NEW_TAGS=$(printf '%s' "$OLD_TAGS" | jq -c ". + [\"new$1\"] | sort")
    lock_tags "$2"
    LOCKED=$(ms_now)
    _pids=
    get filler /api/tags # sends the tag list's statement: it waits on the lock
    wait_for 5 tags_blocked || bail "the tag list's statement did not wait on the lock"
    get lfiller /api/articles # the list's statement: queued behind it (pool 1)
    sleep 0.3                 # the queue's oldest now waits more than 100 ms
}

# ------------------------------------------------------------ stale answers on
LOCK_S=9
scenario "${BOUND_MS}ms" $LOCK_S
is "one statement for the tag list waits on the lock" "$(blocked_tags)" 1
get reader_tags /api/tags "$RTOK"
get anon_tags /api/tags
get reader_list /api/articles "$RTOK"
get writer_tags /api/tags "$WTOK"
get writer_list /api/articles "$WTOK"
get badtok_tags /api/tags "not.a.token" # GET /api/tags ignores it, but it may be a writer's
# Readers every 200 ms while the lock holds, across the bound.
i=0
while [ $(($(ms_now) - LOCKED)) -lt $((LOCK_S * 1000 - 500)) ]; do
    i=$((i + 1))
    get "poll$i" /api/tags
    sleep 0.2
done
wait $_lock
wait $_pids
UNLOCKED=$(ms_now)
note "write answered at 0 ms; lock from $((LOCKED - WROTE)) to $((UNLOCKED - WROTE)) ms; $i readers polled"

for r in reader_tags anon_tags; do
    is "$r: 200" "$(code $r)" 200
    is "$r: the tag list from before the change" "$(tags_of $r)" "$OLD_TAGS"
    check "$r: at once ($(secs $r) s, the lock held ${LOCK_S} s)" fcmp "$(secs $r)" "<" 1
done
is "reader_list: the global list from before the change" "$(count_of reader_list)" "$OLD_COUNT"
check "reader_list: at once ($(secs reader_list) s)" fcmp "$(secs reader_list)" "<" 1
is "writer_tags: the writer reads its new tag" "$(tags_of writer_tags)" "$NEW_TAGS"
check "writer_tags: after waiting for the refresh ($(secs writer_tags) s)" \
    fcmp "$(secs writer_tags)" ">" 2
is "writer_list: the writer reads its new article" "$(count_of writer_list)" "$((OLD_COUNT + 1))"
is "a token that names nobody valid gets no stale tag list" "$(code badtok_tags) $(tags_of badtok_tags)" \
    "200 $NEW_TAGS"
is "the filler got the new tag list" "$(tags_of filler)" "$NEW_TAGS"

stale=0 late=0 late_bad=0 early_stale=0
for n in $(seq 1 $i); do
    sent=$(($(cat "$T/poll$n.sent") - WROTE))
    if [ "$(code poll$n)" = 200 ] && [ "$(tags_of poll$n)" = "$OLD_TAGS" ]; then
        stale=$((stale + 1))
        if [ $sent -gt $BOUND_MS ]; then
            late_bad=$((late_bad + 1))
            note "poll$n sent ${sent} ms after the write was answered: stale past the bound"
        elif fcmp "$(secs poll$n)" "<" 1; then
            early_stale=$((early_stale + 1))
        fi
    elif [ $sent -gt $BOUND_MS ]; then
        late=$((late + 1))
        case "$(code poll$n) $(tags_of poll$n)" in
        "200 $NEW_TAGS" | "503 "*) ;;
        *) late_bad=$((late_bad + 1)); note "poll$n: $(cat "$T/poll$n.code") $(tags_of poll$n)" ;;
        esac
    fi
done
note "polls: $stale stale, $late sent past the bound"
check "readers within the bound were answered stale at once ($early_stale)" [ $early_stale -ge 3 ]
is "no stale answer past ${BOUND_MS} ms after the write; after it, the new value or 503" $late_bad 0
check "readers came past the bound, and waited ($late)" [ $late -ge 5 ]
is "/metrics counts the stale answers the readers saw" \
    "$(($(stale_answers) - STALE0))" "$((stale + 3))"
http GET /healthz
is "/healthz counts them too" "$(printf '%s' "$BODY" | jq .cache.stale_answers)" "$((stale + 3))"
stop_pid "$CONDUITD_PID"
CONDUITD_PID=

# ------------------------------------------------------------ cache_stale_max 0
LOCK_S=4
scenario 0 $LOCK_S
get reader_tags /api/tags "$RTOK"
get anon_list /api/articles
wait $_lock
wait $_pids
is "stale 0: the reader waited for the refresh and got the new tag list" \
    "$(tags_of reader_tags)" "$NEW_TAGS"
check "stale 0: it waited ($(secs reader_tags) s)" fcmp "$(secs reader_tags)" ">" 2
is "stale 0: the anonymous list has the new article" "$(count_of anon_list)" "$((OLD_COUNT + 1))"
is "stale 0: no stale answer counted" "$(($(stale_answers) - STALE0))" 0

done_testing
