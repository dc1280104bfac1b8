#!/bin/sh
# synth.sh [SCALE] [DB]: a synthetic data set for measuring the queries, not
# the real seeder.  Creates database DB (default conduit_synth, dropped
# first) from sql/schema.sql following its bulk-load procedure (the part
# above "-- @@ post-load", the data, the rest, in one session), then runs
# VACUUM (ANALYZE).  SCALE (default 1) multiplies the reference sizes:
# 100k users, 500k articles, ~1.5M article tags over 200 tags, 5M favorites,
# 2.5M comments, 2M follows.  Skewed as docs/workload.md says: low user ids write
# and favorite most, low article ids collect most favorites and comments
# (article 1 gets thousands of each), tag 1 is the most used, low user ids
# have the most followers.  Deterministic (setseed).  At scale 1 it takes a
# few minutes.  Connection from the PG* environment variables.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
scale=${1:-1}
db=${2:-conduit_synth}

dropdb --if-exists "$db"
createdb "$db"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sed -n '/^-- @@ post-load/q;p' "$top/sql/schema.sql" >"$tmp/pre.sql"
sed -n '/^-- @@ post-load/,$p' "$top/sql/schema.sql" >"$tmp/post.sql"
# The pre-load part ends inside the open transaction, so the data and the
# post-load part must follow in the same session: one psql, three files.
cat >"$tmp/data.sql" <<SQL
\\set ON_ERROR_STOP 1
\\timing on
SELECT setseed(0.42);
SELECT greatest(1, (100000 * $scale)::int) AS nu,
       greatest(1, (500000 * $scale)::int) AS na,
       greatest(1, (5000000 * $scale)::int) AS nf,
       greatest(1, (2500000 * $scale)::int) AS nc,
       greatest(1, (2000000 * $scale)::int) AS nfo
\\gset
INSERT INTO users (id, username, email, password_hash, bio, image, created_at)
SELECT i, 'user' || i, 'user' || i || '@example.com',
       '\$2b\$10\$abcdefghijklmnopqrstuu5Mpm8hZsE5WkGkQ0lXG6d8VqzL3bJ8y',
       CASE WHEN i % 3 = 0 THEN 'bio of user ' || i END,
       CASE WHEN i % 5 = 0 THEN 'https://example.com/u/' || i || '.png' END,
       timestamptz '2023-01-01' + i * interval '1 minute'
  FROM generate_series(1, :nu) AS i;
INSERT INTO tags (id, name) SELECT i, 'tag' || i FROM generate_series(1, 200) AS i;
INSERT INTO articles (id, slug, title, description, body, author_id, created_at, updated_at)
SELECT i, 'article-' || i, 'Article ' || i, 'Description of article ' || i,
       repeat('Body of article ' || i || '. ', 20),
       1 + floor(:nu * random() ^ 3)::int8,
       ts, ts
  FROM (SELECT i, timestamptz '2023-06-01' + random() * interval '900 days' AS ts
          FROM generate_series(1, :na) AS i) s;
-- 0 to 5 tags an article (3 on average), tag ids skewed towards 1.
INSERT INTO article_tags (article_id, tag_id, created_at)
SELECT DISTINCT a.id, 1 + floor(200 * random() ^ 2)::int8, a.created_at
  FROM articles a, generate_series(1, (a.id % 6)::int) AS k
 WHERE a.id % 6 > 0;
-- favorites.created_at is the article's (see schema.sql).
INSERT INTO favorites (user_id, article_id, created_at)
SELECT d.u, d.a, ar.created_at
  FROM (SELECT DISTINCT ON (u, a) u, a
          FROM (SELECT 1 + floor(:nu * random() ^ 2)::int8 AS u,
                       1 + floor(:na * random() ^ 2)::int8 AS a
                  FROM generate_series(1, (:nf * 1.08)::int8)) s
         LIMIT :nf) d
  JOIN articles ar ON ar.id = d.a;
INSERT INTO follows (follower_id, followee_id, created_at)
SELECT DISTINCT ON (f, e) f, e, timestamptz '2025-01-01'
  FROM (SELECT 1 + floor(:nu * random() ^ 1.5)::int8 AS f,
               1 + floor(:nu * random() ^ 3)::int8 AS e
          FROM generate_series(1, (:nfo * 1.25)::int8)) s
 WHERE f <> e
 LIMIT :nfo;
INSERT INTO comments (id, article_id, author_id, body, created_at, updated_at)
SELECT i, a, 1 + floor(:nu * random())::int8, 'Comment ' || i, ts, ts
  FROM (SELECT i, 1 + floor(:na * random() ^ 2.5)::int8 AS a,
               timestamptz '2025-01-01' + random() * interval '300 days' AS ts
          FROM generate_series(1, :nc) AS i) s;
SQL
psql -X -q -v ON_ERROR_STOP=1 -d "$db" -f "$tmp/pre.sql" -f "$tmp/data.sql" -f "$tmp/post.sql"
psql -X -q -v ON_ERROR_STOP=1 -d "$db" -c 'VACUUM (ANALYZE)'
psql -X -d "$db" -c "SELECT (SELECT count(*) FROM users) AS users,
    (SELECT count(*) FROM articles) AS articles,
    (SELECT count(*) FROM article_tags) AS article_tags,
    (SELECT count(*) FROM favorites) AS favorites,
    (SELECT count(*) FROM follows) AS follows,
    (SELECT count(*) FROM comments) AS comments,
    pg_size_pretty(pg_database_size(current_database())) AS size"
