-- Every query conduitd sends, by name.  sql/gen-queries.awk turns this file
-- into queries.h / queries.c (enum sql_query_id, table sql_queries[]).
--
-- File format: a query starts at a line "-- name: snake_case_name" and ends
-- at the first line that ends with ";" (or is exactly ";").  Other lines
-- that start with "--" are comments and are dropped.  Nothing may follow
-- the terminating ";" on its line, and no other line of a query may end in
-- ";".  A line "-- read-only" right after the name line marks a statement
-- that only reads and may be answered by a standby (db_read): the GET
-- routes' statements.  It is the one list of them (sql_queries[].read_only);
-- the worker sends the others, and the reads of a caller who wrote
-- recently, to the primary (docs/design.md, "Reads on standbys").
-- Text several statements share is a fragment: "-- fragment: name" up to
-- the next "-- fragment:" or "-- name:" line, with {key} placeholders;
-- "-- use: name key=value" in a statement (or a later fragment) stands
-- for its lines.  Each statement is still sent, prepared and planned
-- whole, as if written out (sql/gen-queries.awk expands them).
--
-- Conventions the C side relies on:
-- * Parameters are sent as TEXT and cast here ($1::int8, $2::text).  NULL
--   means "absent".  The viewer (the caller's user id) is NULL when
--   anonymous; favorited / following are then false.
-- * The flags' viewer.  The reads the cache answers (the lists, the feed,
--   article_get, comments_list) take the viewer twice: as the caller
--   (caller_gone) and, as their last parameter "flags", as the user whose
--   favorited / following the rows carry.  A worker whose cache holds the
--   caller's followees and favorites sends NULL there (the flags are then
--   false) and sets them itself from those sets: each flag is one index
--   probe a row, three buffers, which was half of a list page's buffers
--   and a third of a comment list's (worker/api_articles.c, "flags").
-- * Results are read in BINARY: ids and counts are int8, timestamps
--   timestamptz (int8 microseconds since 2000-01-01 UTC), flags bool, the
--   rest text.  bio and image may be NULL.  t/sql/contract.txt lists the
--   parameter and result types of every query, as the server infers them;
--   t/sql/prepare-all.sh and t/integration/sql.sh check it.
-- * tag_list is one text column: the tags sorted by byte order (COLLATE
--   "C"), without duplicates, joined by E'\x1f'; '' when there is none.
--   Tag parameters use the same encoding (NULL = not given, '' = none);
--   empty elements are ignored, duplicates removed.
-- * Article columns are the same in every query that returns articles:
--     0 slug text, 1 title text, 2 description text, 3 tag_list text,
--     4 created_at timestamptz, 5 updated_at timestamptz, 6 favorited bool,
--     7 favorites_count int8, 8 author_username text, 9 author_bio text,
--     10 author_image text, 11 author_following bool,
--   then 12 body text (single article) or 12 articles_count int8 (lists).
--   A list always returns at least one row: when the page is empty, one
--   row with slug NULL (test slug; the other article columns are NULL or
--   false/'', meaningless) and articles_count set.
-- * limit must be 1..100 and offset >= 0 (the C side validates: 422).
--   Every page is capped at 100 rows inside the statement ("the cap": a
--   constant LIMIT 100 around LIMIT $n OFFSET $m).  The cap is what keeps
--   the generic plans right: a generic plan cannot know $n and plans for
--   10 % of the table, which turned the joins after the page into hash
--   joins over whole tables (88 ms for the global list); with the cap it
--   plans for at most 100 rows.
-- * Comment columns: 0 id int8, 1 created_at timestamptz, 2 updated_at
--   timestamptz, 3 body text, 4 author_username text, 5 author_bio text,
--   6 author_image text, 7 author_following bool.
-- * Profile columns: 0 username text, 1 bio text, 2 image text,
--   3 following bool (follow/unfollow add 4 is_self bool).
-- * User columns: 0 id int8, 1 username text, 2 email text, 3 bio text,
--   4 image text (user_by_email adds 5 password_hash text).
-- * 404 / 403 are told apart by the rows, never by an error: zero rows is
--   "not found"; update/delete return is_author (false: 403, nothing
--   done); comment_delete returns article_found, comment_found, is_author.
-- * The caller gone.  A token stays valid after its user row is deleted
--   (by an operator: no endpoint deletes a user), so every query given a
--   viewer says whether that row still exists, inside the statement the
--   route runs anyway (one primary-key probe, no round trip): a last
--   column caller_gone bool, true when a viewer was given and no user has
--   that id, from the CTE "me".  True means 401 on every route, whatever
--   the other columns say; such a query then returns a row even where zero
--   rows would mean 404 ("WHERE <found> OR me.caller_gone") and writes
--   nothing: its inserts are gated on it, and its updates and deletes can
--   only reach the caller's own rows, which the delete's cascade took.
--   Exceptions: user_by_id and user_update (zero rows is the 401), and
--   article_insert, where the author's foreign key undoes the whole
--   statement (23503, after the tags it made) instead.  A user deleted
--   while a statement runs is caught by the foreign keys the same way
--   (23503 on a *_user_id / *_author_id / follower key: 401): no row can
--   name a deleted user.
-- * Errors: 23505 names the constraint (PG_DIAG_CONSTRAINT_NAME:
--   users_username_key, users_email_key -> 409/422 on the field;
--   articles_slug_key -> retry once, see article_insert).  40P01
--   (deadlock: possible only for article deletes, see "Lock order" in
--   schema.sql) is safe to retry once.  23503 should not happen (article
--   lookups before an insert lock the article FOR KEY SHARE); if it does,
--   the article went away: 404.
--
-- Plans.  The database sets plan_cache_mode = force_generic_plan and jit =
-- off (see schema.sql): each statement is planned once per connection.
-- So every query is written for its generic plan: one statement per list
-- shape (a single statement with "($1 IS NULL OR ...)" filters gets a
-- generic plan that scans everything), the cap above, flags and probes as
-- scalar subqueries "coalesce((SELECT true FROM ... WHERE <primary key>),
-- false)" (an EXISTS may be turned into a hashed subplan that reads every
-- favorite of the viewer), page ids taken from an index-only scan before
-- the article rows are read, and the page's tag lists in one join.
-- Every list variant takes the same parameters in the same order; a
-- variant given the wrong shape (a filter it does not handle) returns zero
-- rows, which the C side treats as a bug.  The count of each one-filter
-- variant is an O(1) counter read (see the counting notes in schema.sql).
--
-- Timings at scale 1 (t/sql/synth.sh: 100k users, 500k articles, 5M
-- favorites, 2.5M comments, 2M follows; t/sql/bench.sh, median execution,
-- warm cache, generic plans; 2 vCPU): global list 0.14 ms (offset 200:
-- 0.17, limit 100: 0.7); ?tag= 0.17 to 0.20 (popular or rare); ?author=
-- 0.11 (10,000 articles or 10); ?favorited= 0.14 (16,000 favorites or 40);
-- feed 0.25 (typical), 0.7 (p99 follower, 86 followees), 4 to 6 (1,100 to
-- 1,600 followees; about 4 us a followee), since the feed inbox (schema
-- version 3) the same for every viewer (see articles_feed); article 0.03;
-- comments 0.02
-- (0.3 for an article with 13,000); profile, login, tags < 0.04; writes
-- 0.03 to 0.4 ms.  Two filters together: 0.2 ms typical, 17 to 25 ms for
-- the largest sets (a count over 10,000 to 16,000 index probes).
-- On the seeded scale-1 dataset (conduit-seed), measured side by side with
-- the revision before: docs/results/20261206-sql.

-- fragment: caller_gone
-- The caller gone (see the top): the CTE "me", one probe, whatever reads
-- it.  It opens the statement's WITH list, and the statement closes it:
-- "-- use: caller_gone viewer=$2::int8" then ")" or "), next AS (".
WITH me AS MATERIALIZED (
    SELECT {viewer} IS NOT NULL
           AND NOT EXISTS (SELECT FROM users v WHERE v.id = {viewer}) AS caller_gone

-- name: schema_version
-- No parameters.  -> 0 version int4.  A worker may check it after connecting.
SELECT max(version)::int4 AS version FROM schema_version;

-- name: user_insert
-- $1 username text, $2 email text, $3 password_hash text, $4
-- Idempotency-Key text (NULL: none), $5 the request's fingerprint text.
-- -> one user row.  23505 users_username_key / users_email_key when taken.
-- With a key, the key lands with the user, in scope 0 (a registration has
-- no caller), its answer the new id (see comment_insert: 23505
-- idempotency_keys_pkey).
WITH ins AS (
    INSERT INTO users (username, email, password_hash)
    VALUES ($1::text, $2::text, $3::text)
    RETURNING id, username, email, bio, image
), idem AS (
    INSERT INTO idempotency_keys (scope, key, fingerprint, answer)
    SELECT 0, $4::text, $5::text, jsonb_build_object('id', ins.id)
      FROM ins WHERE $4::text IS NOT NULL
)
SELECT id, username, email, bio, image FROM ins;
-- name: user_replay
-- $1 scope int8 (0), $2 Idempotency-Key text, $3 the request's
-- fingerprint text.  -> zero rows (no such key within the window, or its
-- user is gone) or the user registered with it: user columns, 5
-- password_hash (the replay checks the password against it), 6
-- same_request bool.
SELECT u.id, u.username, u.email, u.bio, u.image, u.password_hash, k.same_request
  FROM conduit_idempotency_answer($1::int8, $2::text, $3::text) k
  JOIN users u ON u.id = (k.stored_answer->>'id')::int8;
-- name: user_by_email
-- $1 email text (any case).  -> zero or one row: user columns, 5 password_hash.
SELECT id, username, email, bio, image, password_hash
  FROM users
 WHERE lower(email) = lower($1::text);

-- name: user_by_id
-- read-only
-- $1 id int8.  -> zero or one user row.
SELECT id, username, email, bio, image
  FROM users
 WHERE id = $1::int8;

-- name: user_update
-- $1 id int8, $2 email text, $3 username text, $4 password_hash text,
-- $5 bio text, $6 image text.  NULL leaves a field unchanged; for bio and
-- image, '' sets it to NULL.  -> zero rows (no such user) or one user row,
-- then 5 old_username text (the caches hold pages under the old name too).
-- 23505 users_username_key / users_email_key when taken by someone else.
-- The row is locked by the read of the old name, so no rename can come
-- between it and the update.
UPDATE users u
   SET email = coalesce($2::text, u.email),
       username = coalesce($3::text, u.username),
       password_hash = coalesce($4::text, u.password_hash),
       bio = CASE WHEN $5::text IS NULL THEN u.bio ELSE nullif($5::text, '') END,
       image = CASE WHEN $6::text IS NULL THEN u.image ELSE nullif($6::text, '') END,
       updated_at = now()
  FROM (SELECT id, username FROM users WHERE id = $1::int8 FOR UPDATE) o
 WHERE u.id = o.id
RETURNING u.id, u.username, u.email, u.bio, u.image, o.username AS old_username;

-- name: profile_get
-- read-only
-- $1 username text, $2 viewer int8.  -> zero rows (404) or one profile row,
-- then 4 id int8 (the cache keeps it to answer "following" from the
-- viewer's followees), 5 caller_gone bool.
-- use: caller_gone viewer=$2::int8
)
SELECT u.username, u.bio, u.image,
       EXISTS (SELECT 1 FROM follows f
                WHERE f.follower_id = $2::int8 AND f.followee_id = u.id) AS following,
       u.id, me.caller_gone
  FROM me
  LEFT JOIN users u ON u.username = $1::text
 WHERE u.id IS NOT NULL OR me.caller_gone;

-- name: profile_followees
-- read-only
-- $1 username text, $2 viewer int8 (required), $3 most int8.  The cache's
-- profile_get: one round trip fills both the profile and the viewer's
-- followees.  -> zero rows (404) or one row: profile columns, 4 id int8,
-- 5 followees text: the ids the viewer follows joined by ',' ('' for
-- none), NULL when there are more than $3 (too many to keep), 6 caller_gone
-- bool (the cache keeps the followees only of a viewer who exists: the
-- delete of a user invalidates f:<id>, see schema.sql).
-- use: caller_gone viewer=$2::int8
)
SELECT u.username, u.bio, u.image,
       EXISTS (SELECT 1 FROM follows f
                WHERE f.follower_id = $2::int8 AND f.followee_id = u.id) AS following,
       u.id,
       (SELECT CASE WHEN count(*) > $3::int8 THEN NULL
                    ELSE coalesce(string_agg(x.followee_id::text, ','), '') END
          FROM (SELECT followee_id FROM follows
                 WHERE follower_id = $2::int8
                 LIMIT $3::int8 + 1) x) AS followees,
       me.caller_gone
  FROM me
  LEFT JOIN users u ON u.username = $1::text
 WHERE u.id IS NOT NULL OR me.caller_gone;

-- name: follow
-- $1 username text, $2 viewer int8 (required).  Idempotent.
-- -> zero rows (404) or one row: profile columns, 4 is_self bool, 5
-- caller_gone bool.  When is_self is true nothing was written (following
-- yourself is a 422).
-- use: caller_gone viewer=$2::int8
), target AS (
    SELECT id, username, bio, image FROM users WHERE username = $1::text
), ins AS (
    INSERT INTO follows (follower_id, followee_id)
    SELECT $2::int8, t.id FROM target t, me WHERE t.id <> $2::int8 AND NOT me.caller_gone
    ON CONFLICT DO NOTHING
)
SELECT t.username, t.bio, t.image,
       t.id <> $2::int8 AS following,
       t.id = $2::int8 AS is_self,
       me.caller_gone
  FROM me
  LEFT JOIN target t ON true
 WHERE t.id IS NOT NULL OR me.caller_gone;

-- name: unfollow
-- $1 username text, $2 viewer int8 (required).  Idempotent.
-- -> zero rows (404) or one row: profile columns (following false), 4 is_self,
-- 5 caller_gone.
-- use: caller_gone viewer=$2::int8
), target AS (
    SELECT id, username, bio, image FROM users WHERE username = $1::text
), del AS (
    DELETE FROM follows f USING target t
     WHERE f.follower_id = $2::int8 AND f.followee_id = t.id
)
SELECT t.username, t.bio, t.image,
       false AS following,
       t.id = $2::int8 AS is_self,
       me.caller_gone
  FROM me
  LEFT JOIN target t ON true
 WHERE t.id IS NOT NULL OR me.caller_gone;

-- The end of the article lists and the feed, written once (a change to
-- the article columns is made here).  Each statement still carries its own
-- text, so its own plan: sql/gen-queries.awk expands them.

-- fragment: page_from_top
-- The CTE "page": the article rows of the ids of the CTE "top", capped.
), page AS (
    SELECT a.id, a.slug, a.title, a.description, a.created_at, a.updated_at,
           a.favorites_count, a.author_id
      -- The cap (see the top).
      FROM (SELECT * FROM top LIMIT 100) t
      JOIN articles a ON a.id = t.id

-- fragment: tag_lists
-- The body of the CTE "tl": the tag list of each article of the page.
    SELECT atg.article_id, string_agg(t.name, E'\x1f' ORDER BY t.name COLLATE "C") AS names
      FROM page p
      JOIN article_tags atg ON atg.article_id = p.id
      JOIN tags t ON t.id = atg.tag_id
     GROUP BY atg.article_id

-- fragment: article_columns
-- The article columns 0..10 of a list's final select (see the top), from
-- page p, tl and the authors u.  viewer: the viewer's parameter.
SELECT p.slug, p.title, p.description,
       coalesce(tl.names, '') AS tag_list,
       p.created_at, p.updated_at,
       coalesce((SELECT true FROM favorites f
                  WHERE f.user_id = {viewer} AND f.article_id = p.id), false) AS favorited,
       p.favorites_count,
       u.username, u.bio, u.image,

-- fragment: article_rows
-- After column 11 (following, which each statement says its own way):
-- articles_count, caller_gone, the ids the cache keeps, and the rows: the
-- page, or one row for the empty page.  authors: where u comes from.
       c.n AS articles_count,
       me.caller_gone,
       p.id AS article_id, p.author_id
  FROM cnt c
 CROSS JOIN me
  LEFT JOIN (page p
             JOIN {authors} u ON u.id = p.author_id
             LEFT JOIN tl ON tl.article_id = p.id) ON true
 ORDER BY p.created_at DESC, p.id DESC;

-- fragment: list_tail
-- The five lists' end: they share their parameters ($7 the flags' viewer).
), tl AS (
-- use: tag_lists
)
-- use: article_columns viewer=$7::int8
       coalesce((SELECT true FROM follows fo
                  WHERE fo.follower_id = $7::int8 AND fo.followee_id = p.author_id), false) AS following,
-- use: article_rows authors=users

-- name: articles_list
-- read-only
-- No filter.  $1 tag text (NULL), $2 author text (NULL), $3 favorited text
-- (NULL), $4 limit int8, $5 offset int8, $6 viewer int8, $7 flags int8
-- (the flags' viewer, see the top).
-- -> article columns 0..11, 12 articles_count int8 (see the top), 13
-- caller_gone bool, 14 article_id int8, 15 author_id int8 (what the cache
-- keeps of a page, worker/cache_articles.h; NULL on the empty page's row).
-- The page is one backward range of articles_created_idx.
-- use: caller_gone viewer=$6::int8
), cnt AS (
    SELECT (SELECT sum(n) FROM article_count_stripes)::int8 AS n
     WHERE $1::text IS NULL AND $2::text IS NULL AND $3::text IS NULL
), page AS (
    -- The cap (see the top).
    SELECT * FROM (
        SELECT a.id, a.slug, a.title, a.description, a.created_at, a.updated_at,
               a.favorites_count, a.author_id
          FROM articles a
         ORDER BY a.created_at DESC, a.id DESC
         LIMIT $4::int8 OFFSET $5::int8) s
     LIMIT 100
-- use: list_tail

-- name: articles_list_tag
-- read-only
-- Filter tag only.  Same parameters as articles_list ($1 set, $2 $3 NULL).
-- -> as articles_list.  The page is one range of article_tags_tag_created_idx
-- (index only); only the page's own rows are read from articles.
-- use: caller_gone viewer=$6::int8
), tag AS MATERIALIZED (
    SELECT id, article_count FROM tags WHERE name = $1::text
), cnt AS (
    SELECT coalesce((SELECT article_count FROM tag), 0)::int8 AS n
     WHERE $1::text IS NOT NULL AND $2::text IS NULL AND $3::text IS NULL
), top AS (
    SELECT x.article_id AS id
      FROM article_tags x
     WHERE x.tag_id = (SELECT id FROM tag)
     ORDER BY x.created_at DESC, x.article_id DESC
     LIMIT $4::int8 OFFSET $5::int8
-- use: page_from_top
-- use: list_tail

-- name: articles_list_author
-- read-only
-- Filter author only.  Same parameters as articles_list ($2 set, $1 $3 NULL).
-- -> as articles_list.  The page is one range of articles_author_created_idx.
-- use: caller_gone viewer=$6::int8
), author AS MATERIALIZED (
    SELECT id, article_count FROM users WHERE username = $2::text
), cnt AS (
    SELECT coalesce((SELECT article_count FROM author), 0)::int8 AS n
     WHERE $1::text IS NULL AND $2::text IS NOT NULL AND $3::text IS NULL
), page AS (
    -- The cap (see the top).
    SELECT * FROM (
        SELECT a.id, a.slug, a.title, a.description, a.created_at, a.updated_at,
               a.favorites_count, a.author_id
          FROM articles a
         WHERE a.author_id = (SELECT id FROM author)
         ORDER BY a.created_at DESC, a.id DESC
         LIMIT $4::int8 OFFSET $5::int8) s
     LIMIT 100
-- use: list_tail

-- name: articles_list_favorited
-- read-only
-- Filter favorited only.  Same parameters as articles_list ($3 set, $1 $2
-- NULL).  -> as articles_list.  favorites.created_at is a copy of the
-- article's, so the page is one range of favorites_user_created_idx (index
-- only), whatever the number of favorites the user gave.
-- use: caller_gone viewer=$6::int8
), fan AS MATERIALIZED (
    SELECT id, favorite_count FROM users WHERE username = $3::text
), cnt AS (
    SELECT coalesce((SELECT favorite_count FROM fan), 0)::int8 AS n
     WHERE $1::text IS NULL AND $2::text IS NULL AND $3::text IS NOT NULL
), top AS (
    SELECT f.article_id AS id
      FROM favorites f
     WHERE f.user_id = (SELECT id FROM fan)
     ORDER BY f.created_at DESC, f.article_id DESC
     LIMIT $4::int8 OFFSET $5::int8
-- use: page_from_top
-- use: list_tail

-- name: articles_list_filtered
-- read-only
-- Two or three filters (correct for one too, but the one-filter variants
-- are O(1) to count; with no filter it returns zero rows, like any variant
-- given the wrong shape).  Same parameters as articles_list.  -> as
-- articles_list.  The count is a real count, so its cost is the size of
-- the smallest filter set: the counters tell which of the given filters
-- has the fewest articles, that set is read in date order from its index
-- (index only: (author_id, created_at, id), (tag_id, created_at,
-- article_id) or (user_id, created_at, article_id)), and each row is
-- probed against the other filter(s) by index (index only again).  The
-- probes are scalar subqueries, so the plan is a loop of probes whatever
-- the generic plan's estimates.
-- use: caller_gone viewer=$6::int8
), tag AS MATERIALIZED (
    SELECT id, article_count AS n FROM tags WHERE name = $1::text
), author AS MATERIALIZED (
    SELECT id, article_count AS n FROM users WHERE username = $2::text
), fan AS MATERIALIZED (
    SELECT id, favorite_count AS n FROM users WHERE username = $3::text
), sizes AS MATERIALIZED (
    SELECT CASE WHEN $1::text IS NULL THEN NULL
                ELSE coalesce((SELECT n FROM tag), 0) END AS tag_n,
           CASE WHEN $2::text IS NULL THEN NULL
                ELSE coalesce((SELECT n FROM author), 0) END AS author_n,
           CASE WHEN $3::text IS NULL THEN NULL
                ELSE coalesce((SELECT n FROM fan), 0) END AS fan_n
), drv AS MATERIALIZED (
    SELECT CASE WHEN author_n IS NOT NULL AND author_n <= coalesce(least(tag_n, fan_n), author_n)
                THEN 'author'
                WHEN fan_n IS NOT NULL AND fan_n <= coalesce(tag_n, fan_n) THEN 'fan'
                WHEN tag_n IS NOT NULL THEN 'tag'
           END AS d
      FROM sizes
), cand AS (
    SELECT a.id, a.created_at FROM articles a
     WHERE (SELECT d FROM drv) = 'author' AND a.author_id = (SELECT id FROM author)
    UNION ALL
    SELECT f.article_id, f.created_at FROM favorites f
     WHERE (SELECT d FROM drv) = 'fan' AND f.user_id = (SELECT id FROM fan)
    UNION ALL
    SELECT x.article_id, x.created_at FROM article_tags x
     WHERE (SELECT d FROM drv) = 'tag' AND x.tag_id = (SELECT id FROM tag)
), filtered AS MATERIALIZED (
    SELECT c.id, c.created_at
      FROM cand c
     WHERE ($1::text IS NULL OR (SELECT d FROM drv) = 'tag'
            OR (SELECT true FROM article_tags x
                 WHERE x.article_id = c.id AND x.tag_id = (SELECT id FROM tag)))
       AND ($2::text IS NULL OR (SELECT d FROM drv) = 'author'
            OR (SELECT true FROM articles a
                 WHERE a.author_id = (SELECT id FROM author)
                   AND a.created_at = c.created_at AND a.id = c.id))
       AND ($3::text IS NULL OR (SELECT d FROM drv) = 'fan'
            OR (SELECT true FROM favorites f
                 WHERE f.user_id = (SELECT id FROM fan) AND f.article_id = c.id))
), cnt AS (
    SELECT count(*)::int8 AS n FROM filtered
    HAVING $1::text IS NOT NULL OR $2::text IS NOT NULL OR $3::text IS NOT NULL
), top AS (
    SELECT id FROM filtered
     ORDER BY created_at DESC, id DESC
     LIMIT $4::int8 OFFSET $5::int8
-- use: page_from_top
-- use: list_tail

-- fragment: feed_followees
-- The body of the CTE "fu" of the merge: the viewer's ($1) followees' user
-- rows, read once.  They give the merge's count (the sum of their article
-- counters) and the page's authors, so it probes neither users nor
-- follows again.
    SELECT u.id, u.username, u.bio, u.image, u.article_count
      FROM follows f
      JOIN users u ON u.id = f.followee_id
     WHERE f.follower_id = $1::int8

-- fragment: feed_merge
-- The body of the merge's CTE "top": the newest (limit + offset) of each
-- followee from the author index (index only), merged; its cost grows
-- with the number of followees times (limit + offset), never with their
-- total number of articles.
    SELECT x.id, x.created_at
      FROM fu
     CROSS JOIN LATERAL (
           SELECT a.id, a.created_at
             FROM articles a
            WHERE a.author_id = fu.id
            ORDER BY a.created_at DESC, a.id DESC
            LIMIT $2::int8 + $3::int8) x
     ORDER BY x.created_at DESC, x.id DESC
     LIMIT $2::int8 OFFSET $3::int8

-- name: articles_feed
-- read-only
-- $1 viewer int8 (required), $2 limit int8, $3 offset int8, $4 flags int8
-- (see the top: NULL, favorited is false).
-- -> as articles_list; author_following is true on every article row (the
-- page's authors are the viewer's followees: the inbox holds nothing else,
-- the merge reads them in the same snapshot) and false on the empty-page
-- row.  The same rows as articles_feed_merge, byte for byte
-- (t/integration/feed_inbox.sh), from the viewer's inbox (feed_inbox and
-- feed_readers, "The feed inbox" in schema.sql) when the page lies in it:
-- * st: the viewer's feed_readers row (one probe): the count, and whether
--   the inbox holds the page: it holds the feed's newest "held" articles,
--   so the page is in it when held >= limit + offset, or when held is the
--   whole feed.  A viewer without a row follows nobody: an empty feed.
-- * top: then one backward range of feed_inbox_pkey (index only) gives
--   the page's ids; else the merge of articles_feed_merge does, as it
--   always did.  Each branch is gated by st (a one-time filter: the other
--   is not run; fu, which only the merge reads, is then not read either).
-- * the page's rows and authors by primary key, as in the other lists.
-- Measured at scale 1, seeded (docs/results/20261207-feed-inbox): limit
-- 10 offset 0 from the inbox 0.25 ms and 181 buffers a call (merged:
-- 0.37 ms, 304), whatever the viewer's followees (merged, for the users
-- of most followees: 1.7 ms, 1,733); limit 20: 0.41 (0.49); a page
-- beyond the inbox, merged: +0.13 ms and +31 buffers over the merge alone
-- (the reader's row, the page's authors by key).
-- use: caller_gone viewer=$1::int8
), st AS MATERIALIZED (
    SELECT coalesce(s.article_count, 0)::int8 AS n,
           s.reader_id IS NULL OR s.held = s.article_count
               OR s.held >= $2::int8 + $3::int8 AS inbox
      FROM (SELECT) one
      LEFT JOIN feed_readers s ON s.reader_id = $1::int8
), cnt AS (
    SELECT n FROM st
), fu AS MATERIALIZED (
-- use: feed_followees
       AND NOT (SELECT inbox FROM st)
), top AS (
    (SELECT i.article_id AS id, i.created_at
       FROM feed_inbox i
      WHERE i.reader_id = $1::int8 AND (SELECT inbox FROM st)
      ORDER BY i.created_at DESC, i.article_id DESC
      LIMIT $2::int8 OFFSET $3::int8)
    UNION ALL
    (
-- use: feed_merge
    )
-- use: page_from_top
), tl AS MATERIALIZED (
-- use: tag_lists
)
-- use: article_columns viewer=$4::int8
       p.id IS NOT NULL AS following,
-- use: article_rows authors=users

-- name: articles_feed_merge
-- read-only
-- $1 viewer int8 (required), $2 limit int8, $3 offset int8, $4 flags
-- int8.  -> as articles_feed.  The feed merged from the followees' articles at each
-- read, without the inbox: what articles_feed does for a page beyond its
-- inbox, and all it did before version 3 of the schema.  The server does
-- not send it; t/integration/feed_inbox.sh compares the two, and the
-- measurements of docs/results/20261207-feed-inbox run both.  Two probes
-- a followee, then only the page's own (docs/results/20261206-sql has the
-- plans and the figures):
-- * fu: the followees' user rows, read once (their counters are the count);
-- * top: the merge (index only);
-- * tl: MATERIALIZED, so its ten aggregates run once.  Inlined, the planner
--   put it under a nested loop (it estimates two page rows) and recomputed
--   every tag list for every row of the page: the tag lists were then half
--   of the statement's time.
-- use: caller_gone viewer=$1::int8
), fu AS MATERIALIZED (
-- use: feed_followees
), cnt AS (
    SELECT coalesce(sum(fu.article_count), 0)::int8 AS n FROM fu
), top AS (
-- use: feed_merge
-- use: page_from_top
), tl AS MATERIALIZED (
-- use: tag_lists
)
-- use: article_columns viewer=$4::int8
       p.id IS NOT NULL AS following,
-- use: article_rows authors=fu

-- name: article_get
-- read-only
-- $1 slug text, $2 viewer int8, $3 flags int8 (see the top).  -> zero
-- rows (404) or one row: article
-- columns 0..11, 12 body, 13 caller_gone, 14 article_id int8, 15
-- author_id int8 (for the cache, worker/cache_articles.h).
-- use: caller_gone viewer=$2::int8
)
SELECT a.slug, a.title, a.description,
       coalesce((SELECT string_agg(s.name, E'\x1f' ORDER BY s.name COLLATE "C")
                   FROM (SELECT (SELECT t.name FROM tags t WHERE t.id = atg.tag_id) AS name
                           FROM article_tags atg WHERE atg.article_id = a.id) s), '') AS tag_list,
       a.created_at, a.updated_at,
       coalesce((SELECT true FROM favorites f
                  WHERE f.user_id = $3::int8 AND f.article_id = a.id), false) AS favorited,
       a.favorites_count,
       u.username, u.bio, u.image,
       coalesce((SELECT true FROM follows fo
                  WHERE fo.follower_id = $3::int8 AND fo.followee_id = a.author_id), false) AS following,
       a.body,
       me.caller_gone,
       a.id AS article_id, a.author_id
  FROM me
  LEFT JOIN (articles a JOIN users u ON u.id = a.author_id) ON a.slug = $1::text
 WHERE a.id IS NOT NULL OR me.caller_gone;

-- name: article_insert
-- $1 author (viewer) int8, $2 base slug text (computed by C from the
-- title), $3 title text, $4 description text, $5 body text, $6 tags text
-- (E'\x1f'-joined; NULL or '' for none), $7 Idempotency-Key text (NULL:
-- none), $8 the request's fingerprint text.
-- -> one row: article columns 0..11, 12 body.  Article, tags and links land
-- in one statement, so together or not at all; with a key, the key and
-- this row too (see comment_insert: 23505 idempotency_keys_pkey).
-- Slug: the base if free, else base-<id36>, <id36> being the new article's
-- own id (taken from the sequence first) in base 36, conduit_base36(), the
-- form of common/slug.h's slug_with_suffix().  The C side sends only the
-- base (slug_from_title(), at most SLUG_MAX_BASE bytes) and never retries
-- with a suffix itself.  The base attempt is an INSERT ... ON CONFLICT
-- (slug) DO NOTHING, so two concurrent inserts of the same base cannot both
-- take it: the second waits for the first, then falls to the suffixed
-- form.  Suffixed slugs never collide with each other (the suffix holds no
-- '-' and ids are unique); one can collide only with a natural slug that
-- happens to end in the same "-<id36>" (a title like "foo 2s" while the
-- article gets id 100): then the statement fails with 23505
-- articles_slug_key, and one retry draws a new id and succeeds.
WITH nid AS (
    SELECT nextval(pg_get_serial_sequence('articles', 'id')) AS id
), ins1 AS (
    INSERT INTO articles (id, slug, title, description, body, author_id)
    SELECT nid.id, $2::text, $3::text, $4::text, $5::text, $1::int8 FROM nid
    ON CONFLICT (slug) DO NOTHING
    RETURNING id, slug, title, description, body, author_id, created_at, updated_at
), ins2 AS (
    INSERT INTO articles (id, slug, title, description, body, author_id)
    SELECT nid.id, $2::text || '-' || conduit_base36(nid.id), $3::text, $4::text, $5::text, $1::int8
      FROM nid
     WHERE NOT EXISTS (SELECT 1 FROM ins1)
    RETURNING id, slug, title, description, body, author_id, created_at, updated_at
), art AS (
    SELECT * FROM ins1 UNION ALL SELECT * FROM ins2
), names AS (
    SELECT DISTINCT n AS name
      FROM unnest(string_to_array($6::text, E'\x1f')) AS n
     WHERE n <> ''
), tg AS (
    -- Creates the missing tags, locks none (see "Lock order" in schema.sql).
    SELECT tag_id AS id FROM conduit_tag_ids($6::text)
), link AS (
    INSERT INTO article_tags (article_id, tag_id, created_at)
    SELECT art.id, tg.id, art.created_at FROM art CROSS JOIN tg ORDER BY tg.id
), res AS (
    SELECT art.slug, art.title, art.description,
           coalesce((SELECT string_agg(name, E'\x1f' ORDER BY name COLLATE "C")
                       FROM names), '') AS tag_list,
           art.created_at, art.updated_at,
           false AS favorited,
           0::int8 AS favorites_count,
           u.username, u.bio, u.image,
           false AS following,
           art.body
      FROM art
      JOIN users u ON u.id = art.author_id
), idem AS (
    INSERT INTO idempotency_keys (scope, key, fingerprint, answer)
    SELECT $1::int8, $7::text, $8::text, to_jsonb(res) FROM res WHERE $7::text IS NOT NULL
)
SELECT slug, title, description, tag_list, created_at, updated_at, favorited,
       favorites_count, username, bio, image, following, body
  FROM res;
-- name: article_replay
-- $1 viewer int8 (the key's scope), $2 Idempotency-Key text, $3 the
-- request's fingerprint text.  As comment_replay: zero rows, or
-- article_insert's row as stored with the key, then 13 same_request bool.
SELECT k.stored_answer->>'slug' AS slug,
       k.stored_answer->>'title' AS title,
       k.stored_answer->>'description' AS description,
       k.stored_answer->>'tag_list' AS tag_list,
       (k.stored_answer->>'created_at')::timestamptz AS created_at,
       (k.stored_answer->>'updated_at')::timestamptz AS updated_at,
       false AS favorited,
       0::int8 AS favorites_count,
       k.stored_answer->>'username' AS username,
       k.stored_answer->>'bio' AS bio,
       k.stored_answer->>'image' AS image,
       false AS following,
       k.stored_answer->>'body' AS body,
       k.same_request
  FROM conduit_idempotency_answer($1::int8, $2::text, $3::text) k;
-- name: article_update
-- $1 slug text, $2 viewer int8, $3 new base slug text (NULL when the title
-- is not changed), $4 title text, $5 description text, $6 body text,
-- $7 tags text (NULL = unchanged, '' = remove all, else replace).
-- NULL leaves a field unchanged.
-- -> zero rows: no such article (404).  One row: article columns 0..11,
-- 12 body, 13 is_author bool; is_author false means nothing was changed and
-- every other column is NULL (403); 14 caller_gone bool.
-- New slug ($3, the base from the new title): kept if equal to the current
-- one (or to its suffixed form base-<id36>); else the base if free, else
-- base-<id36> (see article_insert).  A concurrent writer taking the same
-- base between our check and our write makes this fail with 23505
-- articles_slug_key; one retry then picks base-<id36>.  Tags are replaced by
-- conduit_set_tags() after the row lock, so two concurrent updates of one
-- article serialize and the last one's tag set wins whole.
-- use: caller_gone viewer=$2::int8
), target AS (
    -- Locked, so that an article deleted (or renamed) meanwhile is a 404,
    -- not a 403 with nothing updated.
    SELECT a.id, a.author_id = $2::int8 AS is_author
      FROM articles a
     WHERE a.slug = $1::text
       FOR UPDATE
), upd AS (
    UPDATE articles a
       SET slug = CASE
                  WHEN $3::text IS NULL THEN a.slug
                  WHEN a.slug = $3::text THEN a.slug
                  WHEN a.slug = $3::text || '-' || conduit_base36(a.id) THEN a.slug
                  WHEN EXISTS (SELECT 1 FROM articles o WHERE o.slug = $3::text)
                       THEN $3::text || '-' || conduit_base36(a.id)
                  ELSE $3::text
                  END,
           title = coalesce($4::text, a.title),
           description = coalesce($5::text, a.description),
           body = coalesce($6::text, a.body),
           updated_at = now()
      FROM target t
     WHERE a.id = t.id AND t.is_author
    RETURNING a.id, a.slug, a.title, a.description, a.body, a.author_id,
              a.favorites_count, a.created_at, a.updated_at
), st AS (
    -- After upd has locked the row: see conduit_set_tags() in schema.sql.
    SELECT conduit_set_tags(upd.id, upd.created_at, $7::text) AS tag_list FROM upd
)
SELECT upd.slug, upd.title, upd.description,
       st.tag_list,
       upd.created_at, upd.updated_at,
       CASE WHEN upd.id IS NULL THEN NULL
            ELSE coalesce((SELECT true FROM favorites f
                            WHERE f.user_id = $2::int8 AND f.article_id = upd.id), false)
       END AS favorited,
       upd.favorites_count,
       u.username, u.bio, u.image,
       CASE WHEN upd.id IS NULL THEN NULL ELSE false END AS following,
       upd.body,
       t.is_author,
       me.caller_gone
  FROM me
  LEFT JOIN target t ON true
  LEFT JOIN upd ON upd.id = t.id
  LEFT JOIN st ON true
  LEFT JOIN users u ON u.id = upd.author_id
 WHERE t.id IS NOT NULL OR me.caller_gone;

-- name: article_delete
-- $1 slug text, $2 viewer int8.  -> zero rows (404) or one row: 0 is_author
-- bool; true means deleted (204), false means not yours, nothing done (403);
-- 1 caller_gone bool.
-- Favorites, tags links and comments go with it (ON DELETE CASCADE).
-- use: caller_gone viewer=$2::int8
), target AS (
    SELECT a.id, a.author_id = $2::int8 AS is_author
      FROM articles a
     WHERE a.slug = $1::text
), del AS (
    DELETE FROM articles a USING target t
     WHERE a.id = t.id AND t.is_author
)
SELECT t.is_author, me.caller_gone
  FROM me
  LEFT JOIN target t ON true
 WHERE t.id IS NOT NULL OR me.caller_gone;

-- name: favorite
-- $1 slug text, $2 viewer int8 (required).  Idempotent.
-- -> zero rows (404) or one row: article columns 0..11, 12 body, with
-- favorited true and favorites_count as this statement's commit leaves it,
-- 13 caller_gone bool, 14 article_id, 15 author_id, 16 viewer_name (what
-- the caches of worker/cache_articles.h need to know of the write).
-- The article row is locked FOR NO KEY UPDATE first, the lock the
-- favorites trigger takes anyway to count (step 1 of "Lock order" in
-- schema.sql): concurrent favorites and unfavorites of one article queue
-- here, each until the one before it has committed, and each then reads
-- the row's latest version, the count that commit left.  Its own insert
-- is added to that; an insert that finds the same favorite (the same user
-- racing) adds nothing, as the one it conflicts with has committed and is
-- already counted.  A weaker lock (FOR KEY SHARE) did not wait for an
-- uncommitted count: 50 parallel favorites by one user answered
-- favoritesCount 0 where 1 was stored, 2 to 4 % of the time, and users
-- favoriting one article together were answered the same count.  An
-- article deleted meanwhile is not found (404) instead of failing the
-- insert with 23503.
WITH me AS MATERIALIZED (
    -- The caller gone (see the top), and the caller's name for the
    -- caches (the favorited list it changes): one probe.
    SELECT $2::int8 IS NOT NULL AND v.id IS NULL AS caller_gone, v.username AS viewer_name
      FROM (SELECT) one
      LEFT JOIN users v ON v.id = $2::int8
), a AS (
    SELECT * FROM articles WHERE slug = $1::text FOR NO KEY UPDATE
), ins AS (
    INSERT INTO favorites (user_id, article_id, created_at)
    SELECT $2::int8, a.id, a.created_at FROM a, me WHERE NOT me.caller_gone
    ON CONFLICT DO NOTHING
    RETURNING 1
)
SELECT a.slug, a.title, a.description,
       coalesce((SELECT string_agg(s.name, E'\x1f' ORDER BY s.name COLLATE "C")
                   FROM (SELECT (SELECT t.name FROM tags t WHERE t.id = atg.tag_id) AS name
                           FROM article_tags atg WHERE atg.article_id = a.id) s), '') AS tag_list,
       a.created_at, a.updated_at,
       true AS favorited,
       (a.favorites_count + (SELECT count(*) FROM ins))::int8 AS favorites_count,
       u.username, u.bio, u.image,
       coalesce((SELECT true FROM follows fo
                  WHERE fo.follower_id = $2::int8 AND fo.followee_id = a.author_id), false) AS following,
       a.body,
       me.caller_gone,
       a.id AS article_id, a.author_id, me.viewer_name
  FROM me
  LEFT JOIN (a JOIN users u ON u.id = a.author_id) ON true
 WHERE a.id IS NOT NULL OR me.caller_gone;

-- name: unfavorite
-- $1 slug text, $2 viewer int8 (required).  Idempotent.
-- -> zero rows (404) or one row: article columns 0..11, 12 body, with
-- favorited false and favorites_count as this statement's commit leaves
-- it, 13 caller_gone bool, 14 article_id, 15 author_id, 16 viewer_name.  The article row is locked first, as in
-- favorite, and the count read is the one the last writer committed.  The
-- delete runs after the lock with its own snapshot, in
-- conduit_favorite_delete(): a favorite by the same user that committed
-- while this statement waited is deleted (a DELETE here would not see it,
-- and answered "false" with the favorite stored and counted); a row the
-- same user's other unfavorite already deleted is not counted twice.
WITH me AS MATERIALIZED (
    -- The caller gone (see the top), and the caller's name for the
    -- caches (the favorited list it changes): one probe.
    SELECT $2::int8 IS NOT NULL AND v.id IS NULL AS caller_gone, v.username AS viewer_name
      FROM (SELECT) one
      LEFT JOIN users v ON v.id = $2::int8
), a AS (
    SELECT * FROM articles WHERE slug = $1::text FOR NO KEY UPDATE
), del AS (
    SELECT conduit_favorite_delete($2::int8, a.id) AS n FROM a
)
SELECT a.slug, a.title, a.description,
       coalesce((SELECT string_agg(s.name, E'\x1f' ORDER BY s.name COLLATE "C")
                   FROM (SELECT (SELECT t.name FROM tags t WHERE t.id = atg.tag_id) AS name
                           FROM article_tags atg WHERE atg.article_id = a.id) s), '') AS tag_list,
       a.created_at, a.updated_at,
       false AS favorited,
       (a.favorites_count - coalesce((SELECT n FROM del), 0))::int8 AS favorites_count,
       u.username, u.bio, u.image,
       coalesce((SELECT true FROM follows fo
                  WHERE fo.follower_id = $2::int8 AND fo.followee_id = a.author_id), false) AS following,
       a.body,
       me.caller_gone,
       a.id AS article_id, a.author_id, me.viewer_name
  FROM me
  LEFT JOIN (a JOIN users u ON u.id = a.author_id) ON true
 WHERE a.id IS NOT NULL OR me.caller_gone;

-- name: comments_list
-- read-only
-- $1 slug text, $2 viewer int8, $3 flags int8 (see the top).  -> zero
-- rows: no such article (404).  Otherwise the 100 newest comments, newest
-- first (comment columns, then 8 caller_gone bool, 9 author_id int8); an
-- article without comments gives one row with id NULL (test id).
-- The 100 are one range of comments_article_created_idx read in its own
-- order, each row fetched from the table as it comes: the LIMIT stops the
-- scan, so an article with thousands of comments costs what one with 100
-- does.  (Reading only the index first and then each row again by id
-- took a primary-key probe a comment: a quarter more buffers a call.)
-- use: caller_gone viewer=$2::int8
)
SELECT c.id, c.created_at, c.updated_at, c.body,
       u.username, u.bio, u.image,
       coalesce((SELECT true FROM follows fo
                  WHERE fo.follower_id = $3::int8 AND fo.followee_id = c.author_id), false) AS following,
       me.caller_gone, c.author_id
  FROM me
  LEFT JOIN articles art ON art.slug = $1::text
  LEFT JOIN LATERAL (
       SELECT x.id, x.created_at, x.updated_at, x.body, x.author_id
         FROM comments x
        WHERE x.article_id = art.id
        ORDER BY x.created_at DESC, x.id DESC
        LIMIT 100) c ON true
  LEFT JOIN users u ON u.id = c.author_id
 WHERE art.id IS NOT NULL OR me.caller_gone
 ORDER BY c.created_at DESC, c.id DESC;

-- name: comment_insert
-- $1 slug text, $2 viewer int8 (the author, required), $3 body text, $4
-- Idempotency-Key text (NULL: none), $5 the request's fingerprint text.
-- -> zero rows (404) or one comment row (author_following false), then 8
-- caller_gone bool.  With a key, the key and this row land with the
-- comment (idempotency_keys in schema.sql); 23505 idempotency_keys_pkey
-- when another request stored that key meanwhile (it waited for that
-- request's commit).
-- use: caller_gone viewer=$2::int8
), art AS (
    -- FOR KEY SHARE: an article deleted meanwhile is a 404, not a 23503.
    SELECT id FROM articles WHERE slug = $1::text FOR KEY SHARE
), ins AS (
    INSERT INTO comments (article_id, author_id, body)
    SELECT art.id, $2::int8, $3::text FROM art, me WHERE NOT me.caller_gone
    RETURNING id, created_at, updated_at, body, author_id
), res AS (
    SELECT ins.id, ins.created_at, ins.updated_at, ins.body, u.username, u.bio, u.image
      FROM ins JOIN users u ON u.id = ins.author_id
), idem AS (
    INSERT INTO idempotency_keys (scope, key, fingerprint, answer)
    SELECT $2::int8, $4::text, $5::text, to_jsonb(res) FROM res WHERE $4::text IS NOT NULL
)
SELECT res.id, res.created_at, res.updated_at, res.body,
       res.username, res.bio, res.image,
       false AS following,
       me.caller_gone
  FROM me
  LEFT JOIN res ON true
 WHERE res.id IS NOT NULL OR me.caller_gone;
-- name: comment_replay
-- $1 viewer int8 (the key's scope), $2 Idempotency-Key text, $3 the
-- request's fingerprint text.  Not read-only: it purges expired keys.
-- -> zero rows (no such key within the window) or comment_insert's row as
-- that statement stored it with the key, then 9 same_request bool (false:
-- the key was stored by another request; the other columns are then
-- that request's, not to be shown).
SELECT (k.stored_answer->>'id')::int8 AS id,
       (k.stored_answer->>'created_at')::timestamptz AS created_at,
       (k.stored_answer->>'updated_at')::timestamptz AS updated_at,
       k.stored_answer->>'body' AS body,
       k.stored_answer->>'username' AS username,
       k.stored_answer->>'bio' AS bio,
       k.stored_answer->>'image' AS image,
       false AS following,
       false AS caller_gone,
       k.same_request
  FROM conduit_idempotency_answer($1::int8, $2::text, $3::text) k;
-- name: comment_delete
-- $1 slug text, $2 comment id int8, $3 viewer int8 (required).
-- -> always one row: 0 article_found bool, 1 comment_found bool (the comment
-- exists on that article), 2 is_author bool (true: deleted, 204), 3
-- caller_gone bool.
-- Not found article 404, not found comment 404, not the author 403.
-- use: caller_gone viewer=$3::int8
), art AS (
    SELECT id FROM articles WHERE slug = $1::text
), cm AS (
    SELECT c.id, c.author_id = $3::int8 AS is_author
      FROM comments c JOIN art ON c.article_id = art.id
     WHERE c.id = $2::int8
), del AS (
    DELETE FROM comments d USING cm
     WHERE d.id = cm.id AND cm.is_author
)
SELECT EXISTS (SELECT 1 FROM art) AS article_found,
       EXISTS (SELECT 1 FROM cm) AS comment_found,
       coalesce((SELECT is_author FROM cm), false) AS is_author,
       me.caller_gone
  FROM me;

-- name: tags_list
-- read-only
-- No parameters.  -> 0 name text: every tag in use, most used first, ties
-- by name (byte order).
SELECT name
  FROM tags
 WHERE article_count > 0
 ORDER BY article_count DESC, name COLLATE "C";

-- name: viewer_sets
-- read-only
-- $1 viewer int8, $2 max int8.  -> one row: 0 followees text, the ids the
-- viewer follows joined by commas ("" for none, NULL when more than $2),
-- 1 favorites text, the ids of the articles the viewer favorited (the
-- same), 2 caller_gone bool.  What the cache needs to answer the flags
-- "following" and "favorited" of any page for this viewer
-- (worker/cache_articles.h); both from primary-key ranges, index only.
SELECT (SELECT CASE WHEN count(*) > $2::int8 THEN NULL
                    ELSE coalesce(string_agg(x.followee_id::text, ','), '') END
          FROM (SELECT followee_id FROM follows
                 WHERE follower_id = $1::int8 LIMIT $2::int8 + 1) x) AS followees,
       (SELECT CASE WHEN count(*) > $2::int8 THEN NULL
                    ELSE coalesce(string_agg(x.article_id::text, ','), '') END
          FROM (SELECT article_id FROM favorites
                 WHERE user_id = $1::int8 LIMIT $2::int8 + 1) x) AS favorites,
       NOT EXISTS (SELECT FROM users v WHERE v.id = $1::int8) AS caller_gone;

-- name: wal_insert_lsn
-- No parameters.  -> 0 lsn pg_lsn: the primary's WAL insert position.  Sent
-- every few milliseconds when db_read is set: a write answered before it
-- was sent is at or below it (its commit record is inserted before the
-- answer), so a standby that has replayed this far shows that write.  An
-- error on a standby (recovery is in progress): no sample then.
SELECT pg_current_wal_insert_lsn() AS lsn;

-- name: replay_lsn
-- No parameters.  -> 0 lsn pg_lsn (NULL when nothing was replayed),
-- 1 in_recovery bool.  The probe of every read-pool connection: what its
-- server has replayed (a server not in recovery is a primary: current).
SELECT pg_last_wal_replay_lsn() AS lsn, pg_is_in_recovery() AS in_recovery;

-- name: cache_announce
-- $1 payload text: "<microseconds since 1970> !nonotify <instance>".
-- -> 0 sent int8, always 1 (pg_notify's void is no type the contract
-- names).  Sent every few seconds by a worker whose writes send no cache
-- notifications (cache or cache_sync off), on the channel the cached
-- instances listen to: one that hears it shares the database with a
-- writer it cannot see, and says so (worker/cache_peers.c).
SELECT count(*) AS sent FROM (SELECT pg_notify('conduit_cache', $1::text)) AS n;
