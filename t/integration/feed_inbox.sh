#!/bin/sh
# The feed inbox ("The feed inbox" in sql/schema.sql) gives the feed's
# answers exactly: articles_feed (the inbox, or the merge for a page
# beyond it) and articles_feed_merge (the merge alone, the feed as it was
# computed before) answer byte for byte alike, for every viewer and page
# of a data set loaded the bulk way (pre-load part, data, post-load part:
# the inbox filled by conduit_inbox_rebuild()), then after rounds of every
# kind of write interleaved (new articles, deletes, follows, unfollows, a
# user deleted with everything cascading, favorites that change counts,
# key columns changed by hand), after writes from 4 concurrent sessions,
# and after VACUUM.  Each time the invariant itself is checked against the
# base tables (t/sql/inbox-check.sql: 0 violations).
#
# Viewers: one with 1,200 followees, some with 130, 0 to 16, exactly one,
# none, one who follows only users without articles, an id that was never
# a user.  Pages at offsets across the inbox's bound (it keeps 30 to 40):
# 0, 1, 25, 29, 30, 31, 39, 40, 41 and deep ones.  Both ways of reading
# must be taken by some cases, and are.
#
# A test that cannot fail proves nothing: each of the seven triggers that
# keep the inbox is disabled once, the write it covers is made, and the
# comparison must then fail (and pass again after a rebuild).
. "$top_srcdir/t/lib.sh"
command -v pgbench >/dev/null 2>&1 || PATH=$PG_BINDIR:$PATH
command -v pgbench >/dev/null 2>&1 || skip "pgbench not found"

PG_NO_SCHEMA=1 pg_start
# plans_build, stmt, run, same, differs: t/sql/plans.sh.
. "$top_srcdir/t/sql/plans.sh"
plans_build
Q=$T/q/qtool

sql() { psql -X -q -At -v ON_ERROR_STOP=1 -P null=NULL -c "$1" 2>>"$T/psql.err"; }
q() { "$Q" exec "$@" 2>>"$T/qtool.err"; }
q_nokey() { q "$@" '\N' '\N'; }
f1() { awk -F'|' -v n="$1" 'NR == 1 { print $n }'; }

# ------------------------------------------------------------ the data set
# Loaded as a bulk loader does (sql/schema.sql's header): no trigger fires
# during the load, the post-load part fills the inbox.
sed -n '/^-- @@ post-load/q;p' "$top_srcdir/sql/schema.sql" >"$T/pre.sql"
sed -n '/^-- @@ post-load/,$p' "$top_srcdir/sql/schema.sql" >"$T/post.sql"
cat >"$T/data.sql" <<'SQL'
INSERT INTO users (id, username, email, password_hash, bio, image)
SELECT i, 'u' || i, 'u' || i || '@x.io', 'h',
       CASE WHEN i % 3 = 0 THEN 'bio ' || i END,
       CASE WHEN i % 4 = 0 THEN 'https://img/' || i END
  FROM generate_series(1, 1500) AS i;
INSERT INTO tags (id, name) SELECT i, 't' || i FROM generate_series(1, 8) AS i;
-- Authors 2 to 401: 2 writes 400, 3 writes 120, the others 0 to 12.
-- created_at in steps of 10 minutes shared by about 9 articles (ties
-- within and across authors), in an order unrelated to the id.
INSERT INTO articles (id, slug, title, description, body, author_id, created_at, updated_at)
SELECT row_number() OVER (ORDER BY (k * 31 + a * 17) % 101, a, k),
       's' || a || '-' || k, 'T' || k, 'D', 'B', a, ts, ts
  FROM (SELECT a, k,
               timestamptz '2026-01-01' + ((k * 7919 + a * 104729) % 997 / 3) * interval '10 minutes' AS ts
          FROM generate_series(2, 401) AS a,
               generate_series(1, CASE WHEN a = 2 THEN 400 WHEN a = 3 THEN 120 ELSE (a * 7) % 13 END) AS k) s;
INSERT INTO article_tags (article_id, tag_id, created_at)
SELECT DISTINCT a.id, 1 + (a.id * j * 7) % 8, a.created_at
  FROM articles a CROSS JOIN generate_series(1, (a.id % 4)::int) AS j;
-- Viewer 1 follows 1,200 users (2 to 1201); 4 to 10 follow 2, 3 and a
-- third of the other authors; 11 to 300 follow 0 to 16 authors; 301 to
-- 305 exactly one (author 2, 3, or one with a few articles); 311 to 320
-- only users without articles; the rest nobody.  Half of 11 to 1500
-- follow author 3 too (about 750 followers).
INSERT INTO follows (follower_id, followee_id)
SELECT 1, e FROM generate_series(2, 1201) AS e;
INSERT INTO follows (follower_id, followee_id)
SELECT v, e FROM generate_series(4, 10) AS v, generate_series(2, 401) AS e
 WHERE v <> e AND (e <= 3 OR (e + v) % 3 = 0);
INSERT INTO follows (follower_id, followee_id)
SELECT DISTINCT v, 4 + (v * j * 37) % 398
  FROM generate_series(11, 300) AS v, generate_series(1, v % 17) AS j
 WHERE 4 + (v * j * 37) % 398 <> v;
INSERT INTO follows (follower_id, followee_id)
VALUES (301, 2), (302, 3), (303, 14), (304, 2), (305, 27);
INSERT INTO follows (follower_id, followee_id)
SELECT v, 1000 + v % 5 FROM generate_series(311, 320) AS v;
INSERT INTO follows (follower_id, followee_id)
SELECT v, 3 FROM generate_series(11, 1500) AS v WHERE v % 2 = 0
ON CONFLICT DO NOTHING;
INSERT INTO favorites (user_id, article_id, created_at)
SELECT DISTINCT u, a.id, a.created_at
  FROM generate_series(1, 60) AS u JOIN articles a ON a.id % 23 = u % 23;
SQL
psql -X -q -v ON_ERROR_STOP=1 -f "$T/pre.sql" -f "$T/data.sql" -f "$T/post.sql" >"$T/load.log" 2>&1 ||
    { sed 's/^/# /' "$T/load.log"; bail "cannot load the data set"; }
is "the bulk load filled the inbox (readers)" \
    "$(sql "SELECT count(*) = (SELECT count(DISTINCT follower_id) FROM follows) FROM feed_readers")" t
check "with both whole feeds and cut ones" \
    [ "$(sql "SELECT count(DISTINCT held = article_count) FROM feed_readers")" = 2 ]

# The cases: viewer, limit, offset, and the flags' viewer (the viewer).
GONE=999999
: >"$T/cases"
for v in 1 4 5 6 7 8 9 10 $(seq 11 40) 301 302 303 304 305 311 312 1000 "$GONE"; do
    for lo in "10 0" "20 0" "1 0" "30 0" "10 25" "5 29" "1 29" "1 30" "2 29" "10 30" "10 31" \
        "40 0" "41 0" "1 39" "1 40" "100 0" "20 35" "10 100" "5 500" "100 1100"; do
        # shellcheck disable=SC2086
        set -- $lo
        echo "$v, $1, $2, $v" >>"$T/cases"
    done
done
sql "CREATE TABLE t_cases (v bigint, l bigint, o bigint)"
tr -d ' ' <"$T/cases" | cut -d, -f1-3 | sql "COPY t_cases FROM STDIN WITH (FORMAT csv)"

{
    stmt articles_feed
    stmt articles_feed_merge
} >"$T/stmts.sql"

# invariant WHEN: the inbox matches the base tables.
invariant() {
    is "inbox invariant holds $1" "$(psql -X -q -At -f "$top_srcdir/t/sql/inbox-check.sql" 2>>"$T/psql.err")" 0
}
# compare WHEN: both statements, every case, and the invariant.
compare() {
    same "feed = merge $1" articles_feed articles_feed_merge "$T/cases"
    invariant "$1"
}

compare "after the bulk load"
# Which way each case is read (st in articles_feed): both must be taken.
ways() {
    sql "SELECT count(*) FILTER (WHERE w) || ' ' || count(*) FILTER (WHERE NOT w)
           FROM (SELECT s.reader_id IS NULL OR s.held = s.article_count OR s.held >= c.l + c.o AS w
                   FROM t_cases c LEFT JOIN feed_readers s ON s.reader_id = c.v) x"
}
w=$(ways)
note "cases read from the inbox, merged: $w"
check "some cases read from the inbox" [ "${w% *}" -gt 100 ]
check "some cases merged" [ "${w#* }" -gt 100 ]
is "viewer 1 follows over 1,000" "$(sql "SELECT count(*) > 1000 FROM follows WHERE follower_id = 1")" t

# ------------------------------------------------------------ writes
slug_of() { sql "SELECT slug FROM articles WHERE author_id = $1 ORDER BY created_at $2, id $2 LIMIT 1"; }
publish() { q_nokey article_insert "$1" "$2" "Title $2" desc body "t1$(printf '\037')t2" | f1 1; }

round() { # round N: one of each kind of write, through the server's statements
    _n=$1
    s3=$(publish 3 "r$_n-a") # about 750 followers
    s2=$(publish 2 "r$_n-b") # the 1,200-followee viewer and the heavy readers
    publish $((100 + _n)) "r$_n-c" >/dev/null
    q favorite "$s3" 11 >/dev/null
    q favorite "$s3" 12 >/dev/null
    q favorite "$(slug_of 2 DESC)" 1 >/dev/null
    q unfavorite "$(slug_of 2 DESC)" 1 >/dev/null
    q follow u2 $((11 + _n)) >/dev/null     # 400 articles: cut at once
    q follow "u$((120 + _n))" 311 >/dev/null # a reader of users without articles
    q follow "u$((1202 + _n))" 1 >/dev/null
    q unfollow u2 $((4 + _n)) >/dev/null     # most of an inbox gone: refilled
    q unfollow u3 $((20 + 2 * _n)) >/dev/null
    q article_delete "$(slug_of 3 DESC)" 3 >/dev/null # in many inboxes
    q article_delete "$(slug_of 2 ASC)" 2 >/dev/null  # below every horizon
    q article_delete "$s2" 2 >/dev/null
}
round 1
compare "after a round of writes"
round 2
round 3
compare "after three rounds"

# Key columns changed by hand (no endpoint does): a removal and an addition.
sql "UPDATE articles SET created_at = created_at + interval '3 years' WHERE id = (SELECT min(id) FROM articles WHERE author_id = 3)"
sql "UPDATE articles SET author_id = 2 WHERE id = (SELECT max(id) FROM articles WHERE author_id = 5)"
sql "UPDATE follows SET followee_id = 2 WHERE follower_id = 300 AND followee_id = (SELECT min(followee_id) FROM follows WHERE follower_id = 300 AND followee_id <> 2)"
compare "after key columns changed by hand"

# A user deleted: their articles, follows both ways and inbox go by cascade.
sql "DELETE FROM users WHERE id = 7"       # a heavy reader, and an author
sql "DELETE FROM users WHERE id = 3"       # 750 followers
compare "after two users deleted"

# ------------------------------------------------------------ concurrent writes
# Four sessions publishing, deleting, following and unfollowing at once,
# with shared authors and readers (deadlocks retried, as the server does).
cat >"$T/publish.sql" <<'SQL'
\set a random(2, 40)
INSERT INTO articles (slug, title, description, body, author_id)
SELECT md5(random()::text), 'T', 'D', 'B', :a WHERE EXISTS (SELECT 1 FROM users WHERE id = :a);
SQL
cat >"$T/delete.sql" <<'SQL'
\set a random(2, 40)
DELETE FROM articles WHERE id = (SELECT max(id) FROM articles WHERE author_id = :a);
SQL
cat >"$T/follow.sql" <<'SQL'
\set a random(2, 40)
\set r random(1, 40)
INSERT INTO follows (follower_id, followee_id)
SELECT :r, :a WHERE :r <> :a AND EXISTS (SELECT 1 FROM users WHERE id = :r)
   AND EXISTS (SELECT 1 FROM users WHERE id = :a)
ON CONFLICT DO NOTHING;
SQL
cat >"$T/unfollow.sql" <<'SQL'
\set a random(2, 40)
\set r random(1, 40)
DELETE FROM follows WHERE follower_id = :r AND followee_id = :a;
SQL
pgbench -n -c 4 -j 2 -T 4 --max-tries=20 -f "$T/publish.sql@4" -f "$T/delete.sql@2" \
    -f "$T/follow.sql@3" -f "$T/unfollow.sql@3" conduit >"$T/pgbench.log" 2>&1
is "pgbench ran the concurrent writes" "$?" 0
note "$(grep -E 'number of transactions actually processed|number of failed' "$T/pgbench.log" | tr '\n' ' ')"
compare "after concurrent writes"
sql "VACUUM ANALYZE" >/dev/null
compare "after VACUUM (index-only scans)"
w=$(ways)
note "cases read from the inbox, merged: $w"

# ------------------------------------------------------------ the test can fail
# Each trigger off once: the write it covers, the comparison must fail;
# then the trigger back and the inbox rebuilt, the comparison holds again.
# The concurrent writes changed follows at random: the cases' viewers 1, 4
# and 8 follow author 2 again, so each write below changes pages compared.
sql "INSERT INTO follows VALUES (1, 2), (4, 2), (8, 2) ON CONFLICT DO NOTHING"
caught() { # caught TRIGGER TABLE WRITE-SQL
    sql "ALTER TABLE $2 DISABLE TRIGGER $1"
    sql "$3" >/dev/null
    differs "without $1 the comparison fails" articles_feed articles_feed_merge "$T/cases"
    sql "ALTER TABLE $2 ENABLE TRIGGER $1"
    sql "SELECT conduit_inbox_rebuild()" >/dev/null
}
caught zz_feed_articles_ins articles \
    "INSERT INTO articles (slug, title, description, body, author_id) VALUES ('m1', 'T', 'D', 'B', 2)"
caught zz_feed_articles_del articles \
    "DELETE FROM articles WHERE id = (SELECT max(id) FROM articles WHERE author_id = 2)"
caught zz_feed_articles_upd articles \
    "UPDATE articles SET created_at = now() WHERE id = (SELECT min(id) FROM articles WHERE author_id = 2)"
# Viewers who do not follow 2 (whatever the concurrent writes left).
not2="SELECT v FROM generate_series(11, 40) AS v
       WHERE v NOT IN (SELECT follower_id FROM follows WHERE followee_id = 2)
         AND EXISTS (SELECT 1 FROM users WHERE id = v)"
caught zz_feed_follows_ins follows "INSERT INTO follows SELECT v, 2 FROM ($not2 LIMIT 3) s"
caught zz_feed_follows_del follows "DELETE FROM follows WHERE followee_id = 2 AND follower_id < 20"
caught zz_feed_follows_upd follows \
    "UPDATE follows SET followee_id = 2
      WHERE (follower_id, followee_id) IN (SELECT follower_id, min(followee_id) FROM follows
                                            WHERE follower_id IN ($not2) GROUP BY follower_id)"
caught zz_feed_users_del users "DELETE FROM users WHERE id = 2"
compare "after the triggers are back and the inbox rebuilt"

if [ -s "$T/psql.err" ]; then
    note "psql said:"
    head -n 20 "$T/psql.err" | sed 's/^/# /'
fi
done_testing
