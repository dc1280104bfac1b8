#!/bin/sh
# measure.sh feed DB | writes DB | size DB: the figures of README.md, on the
# database DB of the cluster the PG* variables name (a copy of the scale-1
# dataset; "feed" and "size" only read it, "writes" writes to it).
#
#   feed    articles_feed (the inbox) and articles_feed_merge (the merge,
#           the feed as it was before) for the same viewers and pages, in
#           one session (prepared, planned generically as the server's
#           connections plan them): one unmeasured pass, then two measured
#           passes under EXPLAIN (ANALYZE, BUFFERS, TIMING OFF), the two
#           statements interleaved case by case.  Per statement and case
#           class: executions, mean, median and p99 ms, mean buffers (the
#           top node's shared hit + read) a call.
#   writes  the writes the feed inbox makes costlier, with pgbench (one
#           client, -M prepared, the very statements of sql/queries.sql):
#           a new article by a user drawn uniformly (as conduit-bench's
#           virtual users write), a new article by the most followed user,
#           a follow and an unfollow (a user drawn uniformly, the followee
#           drawn uniformly / among the user's followees), and the delete
#           of the newest article (those the first runs created: the most
#           followed user's 200, then the 2,000 others).  Per
#           write: transactions, mean and p99 ms.  The same --random-seed
#           in every database, so each makes the same writes.
#   size    the inbox's rows and size, and what an unbounded one would hold.
set -eu
what=$1 db=$2
top=$(cd "$(dirname "$0")/../../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export PGDATABASE=$db
sh "$top/t/sql/prepare-all.sh" -b "$tmp/q" >/dev/null

case "$what" in
feed)
    # Viewers: 1,000 users spread over the ids (id % 100 = 7), and the ten
    # with the most followees.  Pages: the benchmark's (10, 0), the API's
    # default (20, 0), and (10, 100), deeper than any inbox.
    psql -X -At -c "SELECT id FROM users WHERE id % 100 = 7 ORDER BY id" >"$tmp/uniform"
    psql -X -At -c "SELECT follower_id FROM follows GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 10" >"$tmp/heavy"
    for class in uniform heavy; do
        for page in "10, 0" "20, 0" "10, 100"; do
            while read -r v; do
                for s in articles_feed articles_feed_merge; do
                    printf '\\echo @ %s %s-%s\nEXPLAIN (ANALYZE, BUFFERS, TIMING OFF, COSTS OFF, SUMMARY ON) EXECUTE %s(%s, %s);\n' \
                        "$s" "$class" "$(echo "$page" | tr -d ' ' | tr , /)" "$s" "$v" "$page"
                done
            done <"$tmp/$class"
        done
    done >"$tmp/explain.sql"
    grep -A1 '^PREPARE articles_feed' "$tmp/q/prepare.sql" >/dev/null
    awk '/^PREPARE articles_feed(_merge)? AS$/ { on = 1 } on { print } on && /;$/ { on = 0 }' \
        "$tmp/q/prepare.sql" >"$tmp/prep.sql"
    uptime
    { cat "$tmp/prep.sql"; echo '\o /dev/null'; cat "$tmp/explain.sql"; echo '\o'
      cat "$tmp/explain.sql" "$tmp/explain.sql"; } |
        psql -X -q -At -v ON_ERROR_STOP=1 |
        awk '/^@ / { k = $2 " " $3; b = -1 }
             /Buffers: shared/ && b < 0 { b = 0
                 for (i = 1; i <= NF; i++) if ($i ~ /^(hit|read)=/) { split($i, x, "="); b += x[2] } }
             /^Execution Time:/ { print k, $3, (b < 0 ? 0 : b) }' >"$tmp/times"
    uptime
    echo "statement case executions mean_ms median_ms p99_ms buffers_per_call"
    sort -k1,1 -k2,2 -k3,3n "$tmp/times" | awk '
        function flush() {
            if (n) printf "%-20s %-16s %5d %8.4f %8.4f %8.4f %8.1f\n", s, c, n, t / n,
                v[int((n + 1) / 2)], v[int(n * 0.99 + 0.5)], bt / n
        }
        $1 != s || $2 != c { flush(); s = $1; c = $2; n = 0; t = 0; bt = 0 }
        { v[++n] = $3; t += $3; bt += $4 }
        END { flush() }'
    ;;
writes)
    # The statements' text, $N turned into pgbench's :pN (sent as
    # parameters with -M prepared); the key and fingerprint NULL, the tags
    # none, the slug's base a constant (article_insert suffixes it).
    text() { "$tmp/q/qtool" text "$1" | sed 's/\$\([0-9]\)/:p\1/g'; echo ';'; }
    text article_insert | sed "s/:p2::text/'bench-article'::text/g; s/:p3::text/'Bench article'::text/g;
        s/:p4::text/'d'::text/g; s/:p5::text/'b'::text/g; s/:p6::text/''::text/g;
        s/:p7::text/NULL::text/g; s/:p8::text/NULL::text/g" >"$tmp/ins.sql"
    nu=$(psql -X -At -c "SELECT max(id) FROM users")
    topu=$(psql -X -At -c "SELECT followee_id FROM follows GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1")
    { echo "\\set p1 random(1, $nu)"; cat "$tmp/ins.sql"; } >"$tmp/new.sql"
    { echo "\\set p1 $topu"; cat "$tmp/ins.sql"; } >"$tmp/new_top.sql"
    { echo "\\set p2 random(1, $nu)"; echo "\\set e random(1, $nu)"
      echo "SELECT username AS p1 FROM users WHERE id = :e \\gset"; text follow; } >"$tmp/follow.sql"
    { echo "\\set p2 random(1, $nu)"
      echo "SELECT u.username AS p1 FROM follows f JOIN users u ON u.id = f.followee_id"
      echo " WHERE f.follower_id = :p2 ORDER BY f.followee_id LIMIT 1 \\gset"; text unfollow; } >"$tmp/unfollow.sql"
    { echo "SELECT slug AS p1, author_id AS p2 FROM articles ORDER BY id DESC LIMIT 1 \\gset"
      text article_delete; } >"$tmp/delete.sql"
    echo "most followed user: $topu, $(psql -X -At -c "SELECT count(*) FROM follows WHERE followee_id = $topu") followers"
    uptime
    echo "write transactions mean_ms p99_ms (the follow, unfollow and delete include their lookup)"
    # delete_top first: the newest 200 are the most followed user's.
    cp "$tmp/delete.sql" "$tmp/delete_top.sql"
    for w in new:2000 new_top:200 follow:2000 unfollow:2000 delete_top:200 delete:2000; do
        name=${w%:*} n=${w#*:}
        rm -f "$tmp"/pgbench_log.*
        (cd "$tmp" && pgbench -n -M prepared -c 1 -t "$n" --random-seed=37 -l -f "$tmp/$name.sql" >"$tmp/$name.out" 2>&1) ||
            { cat "$tmp/$name.out"; exit 1; }
        cat "$tmp"/pgbench_log.* | awk '{ print $3 / 1000 }' | sort -n |
            awk -v w="$name" '{ v[++n] = $1; t += $1 }
                END { printf "%-10s %6d %8.3f %8.3f\n", w, n, t / n, v[int(n * 0.99 + 0.5)] }'
    done
    uptime
    ;;
size)
    psql -X -c "SELECT (SELECT count(*) FROM feed_inbox) AS inbox_rows,
        (SELECT count(*) FROM feed_readers) AS readers,
        pg_size_pretty(pg_total_relation_size('feed_inbox')) AS inbox_size,
        pg_size_pretty(pg_relation_size('feed_inbox')) AS inbox_heap,
        pg_size_pretty(pg_total_relation_size('feed_readers')) AS readers_size,
        pg_size_pretty(pg_database_size(current_database())) AS database"
    psql -X -c "SELECT held, count(*) AS readers FROM feed_readers GROUP BY held ORDER BY count(*) DESC LIMIT 8"
    psql -X -c "SELECT sum(u.article_count) AS unbounded_rows,
        (SELECT count(*) FROM feed_readers WHERE held = article_count) AS whole_feeds
        FROM follows f JOIN users u ON u.id = f.followee_id"
    psql -X -c "SELECT f.followee_id AS author, count(*) AS followers, u.article_count AS articles,
        count(*) * u.article_count AS unbounded_rows
        FROM follows f JOIN users u ON u.id = f.followee_id
        GROUP BY 1, u.article_count ORDER BY 2 DESC LIMIT 5"
    ;;
*)
    echo "usage: $0 feed|writes|size DB" >&2
    exit 2
    ;;
esac
