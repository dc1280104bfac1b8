#!/bin/sh
# The cache never changes an answer (t/cache_answers.py): on a seeded
# database, two instances, one with no cache and one with its cache on
# (2 workers); every list shape, the feed, articles, comments, profiles,
# the user and the tags, as nobody and as two signed-in users, asked of
# both; the cached instance three times on new connections (the later
# answers come from its caches) must answer byte for byte what the other
# does, cold, warm, and after each write made through it (favorites, a
# follow, a new article, its edit, its author's new bio and name, its
# delete).  Then the cache must have answered most of those reads itself.
# Twice: with the caches kept in sync by PostgreSQL's notifications, and
# with them off (--cache-sync off), where only the stamps the writing
# worker bumps before it answers can tell the other worker: exact, with no
# notification to hide a missed invalidation behind.
. "$top_srcdir/t/lib.sh"
seeded_reference
# What to read: popular and rare tags, prolific authors, heavy favoriters,
# articles with comments, users who follow somebody.
DATA=$(printf '{"tags":%s,"authors":%s,"fans":%s,"slugs":%s,"emails":%s}' \
    "$(json_list "(SELECT name FROM tags ORDER BY article_count DESC, name LIMIT 3) UNION ALL (SELECT name FROM tags WHERE article_count > 0 ORDER BY article_count, name LIMIT 2)")" \
    "$(json_list "SELECT username FROM users ORDER BY article_count DESC, id LIMIT 4")" \
    "$(json_list "SELECT username FROM users ORDER BY favorite_count DESC, id LIMIT 3")" \
    "$(json_list "SELECT a.slug FROM articles a ORDER BY (SELECT count(*) FROM comments c WHERE c.article_id = a.id) DESC, a.id LIMIT 6")" \
    "$(json_list "SELECT u.email FROM users u WHERE EXISTS (SELECT FROM follows f WHERE f.follower_id = u.id) ORDER BY id LIMIT 2")")
note "$DATA"

for sync in on off; do
    # Each round renames its writer: the names of the first must be found again.
    conduitd_start -w 2 --bcrypt-cost 4 --cache on --cache-sync $sync
    $PY "$top_srcdir/t/cache_answers.py" "$OFF" "$BASE" "$DATA" "$sync" >"$T/answers.out" 2>&1
    rc=$?
    sed -n '1,60p' "$T/answers.out"
    is "cache_sync $sync: every answer of the cached instance is the uncached one's" "$rc" 0

    # Each worker's own counts, from /healthz (new connections reach both).
    seen=
    hits=0
    for _i in $(seq 1 40); do
        http GET /healthz
        w=$(printf '%s' "$BODY" | jq -r .worker)
        case " $seen " in *" $w "*) continue ;; esac
        seen="$seen $w"
        h=$(printf '%s' "$BODY" | jq -r .cache.hits)
        note "worker $w: $h hits, $(printf '%s' "$BODY" | jq -r .cache.misses) misses, $(printf '%s' "$BODY" | jq -r .cache.bytes) bytes"
        hits=$((hits + h))
        [ "$(echo $seen | wc -w)" = 2 ] && break
    done
    check "cache_sync $sync: both workers answered /healthz" [ "$(echo $seen | wc -w)" = 2 ]
    check "cache_sync $sync: the cache answered reads itself ($hits hits)" [ "$hits" -gt 500 ]
    stop_pid "$CONDUITD_PID"
    CONDUITD_PID=
    mv "$T/conduitd.log" "$T/on-$sync.log"
done
done_testing
