#!/bin/sh
# The list statements of sql/queries.sql that were rewritten for speed give,
# row for row, the answers of straightforward reference queries kept here:
# the definition of each list written the plain way (every article of the
# followees sorted, count(*) instead of the counters, EXISTS for the
# flags).  Same rows, same order, same counts, same flags, same empty-page
# row, over every viewer of a small skewed data set and a grid of limits and
# offsets, before and after deletes, before and after VACUUM (index-only
# scans with and without heap fetches).
#
# The data set is made to break a merge: viewers following every author
# (thousands of articles) or a few or nobody, authors with 0 to 300
# articles, created_at ties inside one author and across authors (one
# author posts 40 articles at the same instant), ids that do not follow
# created_at, tag names whose byte order differs from their collation
# order, articles deleted after they were tagged and favorited (counters
# kept by the triggers), unfollows, a viewer whose user row is gone.
#
# Both feed statements: articles_feed (the inbox, or the merge for pages
# beyond it) and articles_feed_merge (the merge alone); the data set's
# writes go through the inbox's triggers (t/integration/feed_inbox.sh
# tests the inbox itself).
#
# comments_list, which reads an article's newest comments straight from
# one index range, gives the answers of its definition (every comment of
# the article ranked, the first 100 kept) for articles with none, a few, or
# 250 comments of which 60 share an instant, for an unknown slug, and for
# viewers who follow the commenters, do not, are anonymous or are gone.
#
# A test that cannot fail proves nothing: the same comparison is run on
# mutants of the statements (ties broken the other way, the count off by
# the counters, each followee's run cut to the limit without the offset,
# the inbox read for a page it holds only in part) and must catch each of
# them.
. "$top_srcdir/t/lib.sh"

pg_start
# plans_build, stmt, run, same, differs, mutant: t/sql/plans.sh.
. "$top_srcdir/t/sql/plans.sh"
plans_build

sql() { psql -X -q -At -v ON_ERROR_STOP=1 -P null=NULL -c "$1" 2>>"$T/psql.err"; }

# ------------------------------------------------------------ the data set
# Every write goes through the tables' triggers, as the server's would, so
# the counters are the ones the statements read.
psql -X -q -v ON_ERROR_STOP=1 >"$T/load.log" 2>&1 <<'SQL' || { sed 's/^/# /' "$T/load.log"; bail "cannot load the data set"; }
INSERT INTO users (id, username, email, password_hash, bio, image)
SELECT i, 'u' || i, 'u' || i || '@x.io', 'h',
       CASE WHEN i % 3 = 0 THEN 'bio ' || i END,
       CASE WHEN i % 4 = 0 THEN 'https://img/' || i END
  FROM generate_series(1, 120) AS i;
SELECT setval(pg_get_serial_sequence('users', 'id'), 1000);
-- Byte order ("C") differs from the collation's for these names.
INSERT INTO tags (name)
SELECT unnest(ARRAY['apple', 'Apple', 'zoo', 'Zoo', 'b', 'B', 'éclair', 'eclair',
                    'x-1', 'x_1', '10', '9']);
-- Authors 1 to 60: author 1 writes 300 articles, the others 0 to 88
-- (article_count 0 for a few), in an order that mixes authors.  created_at
-- comes in steps of 5 minutes for groups of 3 articles (ties across
-- authors), in an order unrelated to the id (ties broken by id must be).
INSERT INTO articles (slug, title, description, body, author_id, created_at, updated_at)
SELECT 's' || row_number() OVER (ORDER BY k, a), 'T', 'D', 'B', a, ts, ts
  FROM (SELECT a, k,
               timestamptz '2026-01-01' + ((k * 7919 + a * 104729) % 997 / 3) * interval '5 minutes' AS ts
          FROM generate_series(1, 60) AS a,
               generate_series(1, CASE WHEN a = 1 THEN 300 ELSE (a * 7) % 23 * 4 END) AS k) s
 ORDER BY (k * 31 + a * 17) % 101, a, k;
-- Author 2 posts 40 more at one instant, also the instant of others.
INSERT INTO articles (slug, title, description, body, author_id, created_at, updated_at)
SELECT 'burst' || k, 'T', 'D', 'B', 2, timestamptz '2026-01-01 10:00', now()
  FROM generate_series(1, 40) AS k;
INSERT INTO articles (slug, title, description, body, author_id, created_at, updated_at)
SELECT 'burst-other' || a, 'T', 'D', 'B', a, timestamptz '2026-01-01 10:00', now()
  FROM generate_series(3, 12) AS a;
-- 0 to 4 tags an article.
INSERT INTO article_tags (article_id, tag_id, created_at)
SELECT DISTINCT a.id, t.id, a.created_at
  FROM articles a
 CROSS JOIN generate_series(1, (a.id % 5)::int) AS j
  JOIN tags t ON t.id = (SELECT min(id) FROM tags) + (a.id * j * 7) % 12;
-- Viewers 1 to 5 follow every user that wrote (and 61 to 65, who wrote
-- nothing); 6 to 100 follow 0 to 16 users among 1 to 80; 101 to 120
-- nobody.
INSERT INTO follows (follower_id, followee_id)
SELECT v, e FROM generate_series(1, 5) AS v, generate_series(1, 65) AS e WHERE v <> e;
INSERT INTO follows (follower_id, followee_id)
SELECT DISTINCT v, 1 + (v * j * 37) % 80
  FROM generate_series(6, 100) AS v, generate_series(1, v % 17) AS j
 WHERE 1 + (v * j * 37) % 80 <> v;
-- Favorites: user 7 favorites nearly everything, the others a few.
INSERT INTO favorites (user_id, article_id, created_at)
SELECT 7, id, created_at FROM articles WHERE id % 10 <> 3;
INSERT INTO favorites (user_id, article_id, created_at)
SELECT DISTINCT u, a.id, a.created_at
  FROM generate_series(1, 120) AS u
  JOIN articles a ON a.id % 29 = u % 29
 WHERE u <> 7;
-- Comments: the article with the lowest id gets 250, 62 of them at one
-- instant that the 100th newest falls in (ids not in created_at order);
-- every fifth article 0 to 6; by authors 1 to 120.
INSERT INTO comments (article_id, author_id, body, created_at, updated_at)
SELECT (SELECT min(id) FROM articles), 1 + (k * 53) % 120, 'c' || k,
       CASE WHEN k % 4 = 0 THEN timestamptz '2026-02-01 02:40'
            ELSE timestamptz '2026-02-01' + ((k * 7919) % 250) * interval '1 minute' END,
       now()
  FROM generate_series(1, 250) AS k;
INSERT INTO comments (article_id, author_id, body, created_at, updated_at)
SELECT a.id, 1 + (a.id * j * 13) % 120, 'c' || a.id || '-' || j,
       a.created_at + (j % 3) * interval '1 hour', now()
  FROM articles a
 CROSS JOIN generate_series(1, (a.id % 7)::int) AS j
 WHERE a.id % 5 = 0;
SQL
check "a user cannot follow himself (the check the feed relies on)" \
    sh -c "! psql -X -q -c 'INSERT INTO follows (follower_id, followee_id) VALUES (3, 3)' 2>/dev/null"

# Cases: viewer, limit, offset, the flags' viewer.  Every viewer listed
# above, one id that was never a user, one whose row is deleted below (the
# caller gone); the flags' viewer is the viewer, or NULL (the worker sets
# the flags itself) for every third viewer.
GONE=$(sql "INSERT INTO users (username, email, password_hash) VALUES ('gone', 'gone@x.io', 'h') RETURNING id")
sql "INSERT INTO follows (follower_id, followee_id) VALUES ($GONE, 1), ($GONE, 2)" >/dev/null
: >"$T/feed.cases"
for v in $(seq 1 120) 999999 "$GONE"; do
    for lo in "10 0" "1 0" "3 1" "10 10" "7 5" "20 13" "100 0" "100 250" "2 299" "10 400" "5 2000"; do
        # shellcheck disable=SC2086
        set -- $lo
        f=$v
        [ $((${v#-} % 3)) = 0 ] && f=NULL
        echo "$v, $1, $2, $f" >>"$T/feed.cases"
    done
done

# The feed, by its definition: the articles of the users the viewer
# follows, newest first, ties by the newer id; the count is count(*); the
# page capped at 100; one row with slug NULL when the page is empty;
# favorited the flags' viewer's ($4).
cat >"$T/ref.sql" <<'SQL'
PREPARE ref_feed AS
SELECT p.slug, p.title, p.description,
       coalesce((SELECT string_agg(t.name, E'\x1f' ORDER BY t.name COLLATE "C")
                   FROM article_tags x JOIN tags t ON t.id = x.tag_id
                  WHERE x.article_id = p.id), '') AS tag_list,
       p.created_at, p.updated_at,
       EXISTS (SELECT 1 FROM favorites f WHERE f.user_id = $4::int8 AND f.article_id = p.id) AS favorited,
       p.favorites_count,
       u.username, u.bio, u.image,
       EXISTS (SELECT 1 FROM follows fo
                WHERE fo.follower_id = $1::int8 AND fo.followee_id = p.author_id) AS following,
       (SELECT count(*) FROM articles a
         WHERE a.author_id IN (SELECT followee_id FROM follows WHERE follower_id = $1::int8)) AS articles_count,
       NOT EXISTS (SELECT 1 FROM users v WHERE v.id = $1::int8) AS caller_gone,
       p.id AS article_id, p.author_id
  FROM (SELECT 1) one
  LEFT JOIN (SELECT a.*
               FROM articles a
              WHERE a.author_id IN (SELECT followee_id FROM follows WHERE follower_id = $1::int8)
              ORDER BY a.created_at DESC, a.id DESC
              LIMIT least($2::int8, 100) OFFSET $3::int8) p ON true
  LEFT JOIN users u ON u.id = p.author_id
 ORDER BY p.created_at DESC, p.id DESC;
SQL

# An article's comments, by their definition: all of them ranked newest
# first, ties by the newer id, the first 100; one row of NULLs when the
# article has none; no row for an unknown slug unless the caller is gone.
cat >>"$T/ref.sql" <<'SQL'
PREPARE ref_comments AS
SELECT c.id, c.created_at, c.updated_at, c.body, u.username, u.bio, u.image,
       EXISTS (SELECT 1 FROM follows fo
                WHERE fo.follower_id = $3::int8 AND fo.followee_id = c.author_id) AS following,
       g.gone AS caller_gone, c.author_id
  FROM (SELECT $2::int8 IS NOT NULL AND NOT EXISTS (SELECT 1 FROM users v WHERE v.id = $2::int8) AS gone) g
  LEFT JOIN articles a ON a.slug = $1::text
  LEFT JOIN (SELECT x.*, row_number() OVER (PARTITION BY x.article_id
                                            ORDER BY x.created_at DESC, x.id DESC) AS rank
               FROM comments x) c ON c.article_id = a.id AND c.rank <= 100
  LEFT JOIN users u ON u.id = c.author_id
 WHERE a.id IS NOT NULL OR g.gone
 ORDER BY c.created_at DESC, c.id DESC;
SQL
: >"$T/comments.cases"
for a in $(sql "SELECT slug FROM articles WHERE id % 5 = 0 AND id < 200 OR id = (SELECT min(id) FROM articles) ORDER BY id") nosuch; do
    for v in 1 6 50 101 NULL 999999 "$GONE"; do
        echo "'$a', $v, $v" >>"$T/comments.cases"
    done
    echo "'$a', 1, NULL" >>"$T/comments.cases"
done

{
    cat "$T/ref.sql"
    stmt articles_feed
    stmt articles_feed_merge
    stmt comments_list
} >"$T/stmts.sql"
mutant articles_feed_merge mut_ties 's/ORDER BY x.created_at DESC, x.id DESC/ORDER BY x.created_at DESC, x.id ASC/'
mutant articles_feed_merge mut_count 's/sum(fu.article_count)/count(*)/'
mutant articles_feed_merge mut_run 's/LIMIT $2::int8 + $3::int8) x/LIMIT $2::int8) x/'
mutant comments_list mut_comments_ties 's/ORDER BY x.created_at DESC, x.id DESC/ORDER BY x.created_at DESC, x.id ASC/'
mutant comments_list mut_comments_limit 's/LIMIT 100) c ON true/LIMIT 99) c ON true/'
# The inbox taken for pages it holds only in part.
mutant articles_feed mut_inbox 's/OR s.held >= $2::int8 + $3::int8/OR s.held >= $2::int8/'

check "the data set has ties inside a page of the heaviest feed" \
    [ "$(sql "SELECT count(*) FROM (SELECT created_at FROM articles GROUP BY 1 HAVING count(*) > 1) s")" -gt 100 ]
is "and the followees of viewer 1 wrote thousands" \
    "$(sql "SELECT count(*) > 2000 FROM articles WHERE author_id IN (SELECT followee_id FROM follows WHERE follower_id = 1)")" t
sql "DELETE FROM users WHERE id = $GONE" >/dev/null

same "feed: identical to the reference, freshly loaded (heap fetches)" articles_feed ref_feed "$T/feed.cases"
same "feed merged: identical to the reference, freshly loaded" articles_feed_merge ref_feed "$T/feed.cases"
same "comments: identical to the reference, freshly loaded" comments_list ref_comments "$T/comments.cases"

# Deletes (the counters follow through the triggers), unfollows, then the
# same cases before and after VACUUM.
sql "DELETE FROM articles WHERE id % 11 = 0 OR slug LIKE 'burst1%'" >/dev/null
sql "DELETE FROM follows WHERE (follower_id + followee_id) % 9 = 0" >/dev/null
sql "DELETE FROM favorites WHERE article_id % 7 = 0" >/dev/null
same "feed: identical after deletes and unfollows" articles_feed ref_feed "$T/feed.cases"
same "feed merged: identical after deletes and unfollows" articles_feed_merge ref_feed "$T/feed.cases"
sql "VACUUM ANALYZE" >/dev/null
same "feed: identical after VACUUM (index-only scans)" articles_feed ref_feed "$T/feed.cases"
same "feed merged: identical after VACUUM" articles_feed_merge ref_feed "$T/feed.cases"
same "comments: identical after deletes and VACUUM" comments_list ref_comments "$T/comments.cases"
# Read in the index's order and stopped by the LIMIT: the 250 comments'
# article reads about 100 rows, not all of them (a sort of every comment
# would show as a Sort under the Limit).
hot=$(sql "SELECT slug FROM articles ORDER BY id LIMIT 1")
plan=$(psql -X -q -At -c "SET plan_cache_mode = force_generic_plan" -c "$(stmt comments_list cl)" \
    -c "EXPLAIN (COSTS OFF) EXECUTE cl('$hot', 1, 1)" 2>>"$T/psql.err" | tr '\n' ' ')
check "comments: the generic plan reads the article's comments by index, under the limit" \
    sh -c "echo '$plan' | grep -q 'Limit *-> *Index Scan using comments_article_created_idx'"

differs "the comparison catches ties broken the other way" mut_ties ref_feed "$T/feed.cases"
differs "the comparison catches a count that is not the count" mut_count ref_feed "$T/feed.cases"
differs "the comparison catches a merge that drops rows past the first page" mut_run ref_feed "$T/feed.cases"
differs "the comparison catches an inbox read past what it holds" mut_inbox ref_feed "$T/feed.cases"
differs "the comparison catches comments' ties broken the other way" mut_comments_ties ref_comments "$T/comments.cases"
differs "the comparison catches comments cut at 99" mut_comments_limit ref_comments "$T/comments.cases"

if [ -s "$T/psql.err" ]; then
    note "psql said:"
    head -n 20 "$T/psql.err" | sed 's/^/# /'
fi
done_testing
