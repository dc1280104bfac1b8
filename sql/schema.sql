-- conduitd database schema, version 3.
--
-- A database of an older version is brought to version 3 by conduitd
-- --init-db, which then sends only the parts that versions after its own
-- added: for each version N, every part between a line "-- @@ version N"
-- and the next "-- @@ end of version N", in the order of the file (version
-- 3 has two: its tables and functions above the post-load marker, its
-- fill and triggers below it), all in one transaction (master/initdb.c).
--
-- Apply once, to an empty database, with
--     psql -v ON_ERROR_STOP=1 -f sql/schema.sql
-- The whole file is one transaction.  A second application fails at the
-- guard below with "schema already applied (version N)" and changes nothing.
--
-- Bulk loading (the seeder).  The file has two parts, split at the line that
-- starts with "-- @@ post-load".  Send, in ONE psql session (it is one
-- transaction: BEGIN is at the top, COMMIT at the bottom):
--     1. every line above the marker (tables, primary keys, functions),
--     2. the data (COPY or INSERT ... SELECT), with explicit ids if wanted,
--     3. every line from the marker to the end.
-- The post-load part creates the unique constraints, the secondary indexes
-- and the foreign keys (each validated in one pass, far faster than row by
-- row), moves the identity sequences past the loaded ids, recomputes every
-- counter (conduit_recount()) and only then creates the counting triggers,
-- so the load itself fires no trigger.  Run VACUUM (ANALYZE) afterwards,
-- outside the transaction, so index-only scans work from the start.
-- Rules for loaded data: article_tags.created_at and favorites.created_at
-- are copies of the article's created_at; they may be left NULL or wrong
-- (conduit_recount() sets them, then the post-load part makes them NOT
-- NULL), but giving them right saves rewriting the tables and their
-- indexes.  Counter columns may be left at 0 (they are recomputed).
-- Tags: names without control characters (the lists are joined by
-- E'\x1f'); articles: slugs as article_insert makes them (unique).  At
-- scale 1, t/sql/synth.sh loads this way in about a minute.
-- The file also sets three settings on the database (plan_cache_mode, jit
-- and random_page_cost, see below): that needs the database's owner or a
-- superuser.
--
-- Case of names.  Usernames and slugs compare exactly (they appear in URLs).
-- Emails keep the case the user typed but are unique case-insensitively:
-- the unique index users_email_key is on lower(email), and login looks the
-- user up with lower(email) = lower($1) so it uses that index.
--
-- Counting (see docs/design.md, "Counting"): articlesCount must be exact, and
-- count(*) over 500k articles costs ~77 ms.  Every count a list endpoint
-- needs with at most one filter is kept by triggers, in the same
-- transaction as the write, so it is exact and costs O(1) to read:
--   no filter          sum(n) over article_count_stripes (16 rows)
--   ?tag=T             tags.article_count
--   ?author=U          users.article_count
--   ?favorited=U       users.favorite_count (favorites the user gave)
--   feed               feed_readers.article_count (the viewer's followees'
--                      articles, kept with the feed inbox: version 3)
--   favoritesCount     articles.favorites_count
-- The global count is striped over 16 rows keyed by article id % 16, so
-- concurrent article inserts (consecutive ids) lock different rows instead
-- of queueing on one.  The other counters are per row (one tag, one user,
-- one article) and contend only on the same tag/user/article; every
-- statement locks them in one global order (see "Lock order" below), so
-- concurrent writes do not deadlock on them.  Filter combinations (tag AND
-- author, ...) are not in the workload and use a real count over the
-- smallest of the filter sets (articles_list_filtered).
-- Tables holding counters have fillfactor 90 so the counter updates stay
-- HOT (no index entry is written for them).
--
-- Vacuum.  The lists and the feed read articles, article_tags, favorites
-- and follows by index-only scans, which skip the heap only on pages the
-- visibility map marks all-visible, and only VACUUM sets those marks.  Every
-- favorite rewrites its article's row (favorites_count), clearing the mark
-- of that page; with the default thresholds (20 % of the table: 100,000
-- changed articles at scale 1) autovacuum came so rarely that after an
-- hour of load the feed read 80 heap pages a call instead of 6, took
-- 1.54 ms instead of 0.81, and PostgreSQL's CPU per request was 10 %
-- higher (measured at scale 1, before and after a VACUUM).  These four
-- tables are therefore vacuumed after 1 % of their rows changed or were
-- inserted (5,000 articles at scale 1); such a vacuum reads only the
-- pages changed since the last one.  A database created before this
-- setting gets it with the ALTER TABLE ... SET of the same options.  The
-- feed inbox's two tables (version 3) have the same settings: feed_inbox
-- is read by index-only scans, and both change at every new article.

BEGIN;

DO $guard$
DECLARE
    v text;
BEGIN
    IF to_regclass('schema_version') IS NOT NULL THEN
        SELECT coalesce(max(version)::text, 'unknown') INTO v FROM schema_version;
        RAISE EXCEPTION 'schema already applied (version %)', v;
    END IF;
END
$guard$;

CREATE TABLE schema_version (
    version integer NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO schema_version (version) VALUES (1);

-- Three settings for every new session of this database (conduitd's pools
-- also send them in each session's options, since a database copied with
-- CREATE DATABASE ... TEMPLATE or restored by pg_dump without --create
-- loses them):
-- * plan_cache_mode = force_generic_plan.  conduitd prepares each statement
--   once per connection; with the default (auto) PostgreSQL keeps
--   replanning every list query (its generic plan cannot know LIMIT $n, so
--   it looks costlier than the custom ones) and the planning, 0.3 to 0.4 ms,
--   costs more than running the query.  The queries are written so that
--   their generic plans are the good ones (see sql/queries.sql).
-- * jit = off.  The statements are short; the JIT compiler starts when a
--   cost estimate passes jit_above_cost, which here only means a
--   misestimate, and then costs 100 to 250 ms (measured at scale 1).
-- * random_page_cost = 1.1.  The working set is meant to sit in memory,
--   where a random page costs what a sequential one does.  At the default
--   (4) the planner reads the tags table (a few pages) by a sequential scan
--   for every tag name a statement looks up, 200 rows compared each time,
--   twice a tag for a single article; with 1.1 it probes tags_pkey or
--   tags_name_key.  Those lookups are the only plans it changes (every
--   statement's generic plan compared at scale 1).
DO $settings$
BEGIN
    EXECUTE format('ALTER DATABASE %I SET plan_cache_mode = force_generic_plan',
                   current_database());
    EXECUTE format('ALTER DATABASE %I SET jit = off', current_database());
    EXECUTE format('ALTER DATABASE %I SET random_page_cost = 1.1', current_database());
END
$settings$;

-- Identity columns are BY DEFAULT so a loader may give explicit ids; the
-- post-load part moves each sequence past the largest id.
CREATE TABLE users (
    id bigint GENERATED BY DEFAULT AS IDENTITY,
    username text NOT NULL,
    email text NOT NULL,
    password_hash text NOT NULL,
    bio text,
    image text,
    -- articles written by this user (for ?author=)
    article_count bigint NOT NULL DEFAULT 0,
    -- favorites given by this user (for ?favorited=)
    favorite_count bigint NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT users_pkey PRIMARY KEY (id),
    CONSTRAINT users_username_check CHECK (username <> ''),
    CONSTRAINT users_email_check CHECK (email <> '')
) WITH (fillfactor = 90);

CREATE TABLE articles (
    id bigint GENERATED BY DEFAULT AS IDENTITY,
    slug text NOT NULL,
    title text NOT NULL,
    description text NOT NULL,
    body text NOT NULL,
    author_id bigint NOT NULL,
    favorites_count bigint NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT articles_pkey PRIMARY KEY (id),
    CONSTRAINT articles_slug_check CHECK (slug <> '')
) WITH (fillfactor = 90,
        autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_insert_scale_factor = 0.01);

-- A tag name never holds a control character: the queries join tag lists
-- with E'\x1f' (unit separator).
CREATE TABLE tags (
    id bigint GENERATED BY DEFAULT AS IDENTITY,
    name text NOT NULL,
    -- articles carrying this tag (for ?tag= and the popularity order)
    article_count bigint NOT NULL DEFAULT 0,
    CONSTRAINT tags_pkey PRIMARY KEY (id),
    CONSTRAINT tags_name_check CHECK (name <> '' AND name !~ '[[:cntrl:]]')
) WITH (fillfactor = 90);

-- created_at is a copy of articles.created_at (kept equal by the articles
-- trigger), so the tag list is one ordered index range: (tag_id, created_at
-- DESC, article_id DESC) gives the page of any tag, popular or rare, in
-- O(limit + offset).  NOT NULL is set by the post-load part.
CREATE TABLE article_tags (
    article_id bigint NOT NULL,
    tag_id bigint NOT NULL,
    created_at timestamptz,
    CONSTRAINT article_tags_pkey PRIMARY KEY (article_id, tag_id)

) WITH (autovacuum_vacuum_scale_factor = 0.01,
        autovacuum_vacuum_insert_scale_factor = 0.01);

-- created_at is the favorited ARTICLE's created_at, a copy as in
-- article_tags (not the time of favoriting, which no endpoint shows): the
-- ?favorited= page is then one ordered range of (user_id, created_at DESC,
-- article_id DESC), O(limit + offset) even for a user with 16,000
-- favorites, where sorting them by the articles' dates cost 36 ms.
CREATE TABLE favorites (
    user_id bigint NOT NULL,
    article_id bigint NOT NULL,
    created_at timestamptz,
    CONSTRAINT favorites_pkey PRIMARY KEY (user_id, article_id)

) WITH (autovacuum_vacuum_scale_factor = 0.01,
        autovacuum_vacuum_insert_scale_factor = 0.01);

CREATE TABLE follows (
    follower_id bigint NOT NULL,
    followee_id bigint NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT follows_pkey PRIMARY KEY (follower_id, followee_id),
    CONSTRAINT follows_not_self CHECK (follower_id <> followee_id)

) WITH (autovacuum_vacuum_scale_factor = 0.01,
        autovacuum_vacuum_insert_scale_factor = 0.01);

CREATE TABLE comments (
    id bigint GENERATED BY DEFAULT AS IDENTITY,
    article_id bigint NOT NULL,
    author_id bigint NOT NULL,
    body text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT comments_pkey PRIMARY KEY (id)
);

-- The global article count, striped: row (id % 16) counts the articles whose
-- id falls in that stripe; the total is the sum of the 16 rows.
CREATE TABLE article_count_stripes (
    stripe integer NOT NULL,
    n bigint NOT NULL DEFAULT 0,
    CONSTRAINT article_count_stripes_pkey PRIMARY KEY (stripe),
    CONSTRAINT article_count_stripes_range CHECK (stripe >= 0 AND stripe < 16)
) WITH (fillfactor = 50);
INSERT INTO article_count_stripes (stripe) SELECT s FROM generate_series(0, 15) AS s;

-- The suffix that makes a taken slug unique: the article id in base 36,
-- as common/slug.h's slug_with_suffix() writes it ("base-<n in base 36>",
-- so a slug stays within SLUG_MAX_LEN).  article_insert and
-- article_update use it.
CREATE FUNCTION conduit_base36(n bigint) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $fn$
DECLARE
    s text := '';
BEGIN
    IF n < 0 THEN
        RAISE EXCEPTION 'conduit_base36: negative argument %', n;
    END IF;
    LOOP
        s := substr('0123456789abcdefghijklmnopqrstuvwxyz', (n % 36)::integer + 1, 1) || s;
        n := n / 36;
        EXIT WHEN n = 0;
    END LOOP;
    RETURN s;
END
$fn$;

-- Counter maintenance, by AFTER triggers, in the writing transaction.
-- Their names start with "zz_" so that, among the triggers of one event,
-- they fire after the foreign-key checks ("RI_ConstraintTrigger_*"): a row
-- refused by its foreign key never touches a counter.  An UPDATE of a
-- counter row that no longer exists (its owner is being deleted by the same
-- cascade) updates nothing, which is what we want.
--
-- Lock order.  Counter rows are locked by many statements at once, so
-- every statement takes them in one global order, and concurrent writes
-- never deadlock on them:
--   1. the statement's own article row (the article written, favorited or
--      deleted: always first, by the statement itself);
--   2. one stripe row, then one author row (users), by the articles
--      trigger, at most one of each per statement (a follow or unfollow
--      takes the followee's row FOR SHARE here);
--   2b. feed_readers rows, in reader_id order, by the feed inbox's
--      triggers (version 3, below);
--   3. tag rows, in id order, by the article_tags triggers (or, in
--      article_update, by the query itself, before any trigger);
--   4. article rows then user rows of favorites, each in id order, by the
--      favorites triggers (a favorite: one of each).
-- That is why the article_tags and favorites triggers are statement-level
-- (one call per statement, over the transition table: they lock the rows
-- they will update in id order, then update each once, set-based; an
-- article delete cascading to 6,000 favorites makes one UPDATE, not 12,000),
-- and why new tags are created by conduit_tag_ids(), which locks no
-- existing tag, instead of an INSERT ... ON CONFLICT DO UPDATE (which
-- locked tag rows before the author row and deadlocked with deletes).
-- The one order this cannot keep: a delete cascading to the favorites of
-- users who are at the same moment authors in step 2 of another statement
-- (two deletes of articles that each other's authors favorited, or a
-- delete against an insert by one of its favoriters sharing a tag); then
-- PostgreSQL detects the deadlock and aborts one with 40P01, which is safe
-- to retry.

CREATE FUNCTION conduit_articles_count() RETURNS trigger
LANGUAGE plpgsql AS $fn$
BEGIN
    IF TG_OP = 'INSERT' THEN
        UPDATE article_count_stripes SET n = n + 1 WHERE stripe = NEW.id % 16;
        UPDATE users SET article_count = article_count + 1 WHERE id = NEW.author_id;
        RETURN NULL;
    ELSIF TG_OP = 'DELETE' THEN
        UPDATE article_count_stripes SET n = n - 1 WHERE stripe = OLD.id % 16;
        UPDATE users SET article_count = article_count - 1 WHERE id = OLD.author_id;
        RETURN NULL;
    END IF;
    -- UPDATE: no endpoint changes these columns, but stay correct if one does.
    IF NEW.id <> OLD.id THEN
        UPDATE article_count_stripes SET n = n - 1 WHERE stripe = OLD.id % 16;
        UPDATE article_count_stripes SET n = n + 1 WHERE stripe = NEW.id % 16;
    END IF;
    IF NEW.author_id <> OLD.author_id THEN
        UPDATE users SET article_count = article_count - 1 WHERE id = OLD.author_id;
        UPDATE users SET article_count = article_count + 1 WHERE id = NEW.author_id;
    END IF;
    IF NEW.created_at <> OLD.created_at THEN
        UPDATE article_tags SET created_at = NEW.created_at WHERE article_id = NEW.id;
        UPDATE favorites SET created_at = NEW.created_at WHERE article_id = NEW.id;
    END IF;
    RETURN NULL;
END
$fn$;

-- Statement-level, AFTER INSERT (transition table new_rows) or AFTER
-- DELETE (old_rows): step 3 of the lock order.
CREATE FUNCTION conduit_article_tags_ins() RETURNS trigger
LANGUAGE plpgsql AS $fn$
BEGIN
    PERFORM 1 FROM tags WHERE id IN (SELECT tag_id FROM new_rows) ORDER BY id FOR NO KEY UPDATE;
    UPDATE tags t SET article_count = t.article_count + d.n
      FROM (SELECT tag_id, count(*) AS n FROM new_rows GROUP BY tag_id) d
     WHERE t.id = d.tag_id;
    RETURN NULL;
END
$fn$;

CREATE FUNCTION conduit_article_tags_del() RETURNS trigger
LANGUAGE plpgsql AS $fn$
BEGIN
    PERFORM 1 FROM tags WHERE id IN (SELECT tag_id FROM old_rows) ORDER BY id FOR NO KEY UPDATE;
    UPDATE tags t SET article_count = t.article_count - d.n
      FROM (SELECT tag_id, count(*) AS n FROM old_rows GROUP BY tag_id) d
     WHERE t.id = d.tag_id;
    RETURN NULL;
END
$fn$;

-- Statement-level, as above: step 4 of the lock order.
CREATE FUNCTION conduit_favorites_ins() RETURNS trigger
LANGUAGE plpgsql AS $fn$
BEGIN
    PERFORM 1 FROM articles WHERE id IN (SELECT article_id FROM new_rows)
      ORDER BY id FOR NO KEY UPDATE;
    UPDATE articles a SET favorites_count = a.favorites_count + d.n
      FROM (SELECT article_id, count(*) AS n FROM new_rows GROUP BY article_id) d
     WHERE a.id = d.article_id;
    PERFORM 1 FROM users WHERE id IN (SELECT user_id FROM new_rows) ORDER BY id FOR NO KEY UPDATE;
    UPDATE users u SET favorite_count = u.favorite_count + d.n
      FROM (SELECT user_id, count(*) AS n FROM new_rows GROUP BY user_id) d
     WHERE u.id = d.user_id;
    RETURN NULL;
END
$fn$;

CREATE FUNCTION conduit_favorites_del() RETURNS trigger
LANGUAGE plpgsql AS $fn$
BEGIN
    PERFORM 1 FROM articles WHERE id IN (SELECT article_id FROM old_rows)
      ORDER BY id FOR NO KEY UPDATE;
    UPDATE articles a SET favorites_count = a.favorites_count - d.n
      FROM (SELECT article_id, count(*) AS n FROM old_rows GROUP BY article_id) d
     WHERE a.id = d.article_id;
    PERFORM 1 FROM users WHERE id IN (SELECT user_id FROM old_rows) ORDER BY id FOR NO KEY UPDATE;
    UPDATE users u SET favorite_count = u.favorite_count - d.n
      FROM (SELECT user_id, count(*) AS n FROM old_rows GROUP BY user_id) d
     WHERE u.id = d.user_id;
    RETURN NULL;
END
$fn$;

-- Row-level, AFTER UPDATE OF the counted key columns (no endpoint does
-- that; transition tables are not allowed with a column list).
CREATE FUNCTION conduit_article_tags_upd() RETURNS trigger
LANGUAGE plpgsql AS $fn$
BEGIN
    IF NEW.tag_id <> OLD.tag_id THEN
        UPDATE tags SET article_count = article_count - 1 WHERE id = OLD.tag_id;
        UPDATE tags SET article_count = article_count + 1 WHERE id = NEW.tag_id;
    END IF;
    RETURN NULL;
END
$fn$;

CREATE FUNCTION conduit_favorites_upd() RETURNS trigger
LANGUAGE plpgsql AS $fn$
BEGIN
    IF NEW.article_id <> OLD.article_id THEN
        UPDATE articles SET favorites_count = favorites_count - 1 WHERE id = OLD.article_id;
        UPDATE articles SET favorites_count = favorites_count + 1 WHERE id = NEW.article_id;
    END IF;
    IF NEW.user_id <> OLD.user_id THEN
        UPDATE users SET favorite_count = favorite_count - 1 WHERE id = OLD.user_id;
        UPDATE users SET favorite_count = favorite_count + 1 WHERE id = NEW.user_id;
    END IF;
    RETURN NULL;
END
$fn$;

-- The ids of the tags named in an E'\x1f'-joined list (empty names
-- ignored), creating the missing ones.  VOLATILE, so its SELECT takes a
-- fresh snapshot after its INSERT: a tag another transaction committed
-- while this one was waiting on it (ON CONFLICT waits for a concurrent
-- insert of the same name) is found too.  Locks no existing tag row (see
-- the lock order above).  article_insert and article_update use it.
CREATE FUNCTION conduit_tag_ids(names text) RETURNS TABLE (tag_id bigint, tag_name text)
LANGUAGE plpgsql VOLATILE AS $fn$
BEGIN
    INSERT INTO tags (name)
    SELECT DISTINCT n FROM unnest(string_to_array(names, E'\x1f')) AS n
     WHERE n <> ''
     ORDER BY 1
    ON CONFLICT (name) DO NOTHING;
    RETURN QUERY
        SELECT t.id, t.name FROM tags t
         WHERE t.name IN (SELECT n FROM unnest(string_to_array(names, E'\x1f')) AS n);
END
$fn$;

-- Deletes the favorite (viewer, article) and returns how many rows it
-- deleted (0 or 1).  unfavorite calls it once it holds the article's row
-- lock.  It is a VOLATILE function so its DELETE takes a fresh snapshot:
-- when unfavorite waited on that lock for a favorite of the same user and
-- article, the row that favorite committed is seen and deleted, not
-- missed as by a DELETE working from the statement's starting snapshot
-- (which then answered "not favorited" while the favorite stayed, and
-- counted it).
CREATE FUNCTION conduit_favorite_delete(viewer bigint, article bigint) RETURNS bigint
LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
    n bigint;
BEGIN
    DELETE FROM favorites f WHERE f.user_id = viewer AND f.article_id = article;
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END
$fn$;

-- Replaces the tags of one article by the E'\x1f'-joined list names (NULL:
-- leaves them) and returns its tag list, sorted by byte order and joined by
-- E'\x1f' ('' for none).  article_update calls it after locking the
-- article row.  It is a VOLATILE function so each of its statements takes
-- a fresh snapshot: when article_update waited on that row lock for a
-- concurrent update of the same article, the links that update committed
-- are seen (and replaced), not left behind beside the new ones as a
-- statement working from its own starting snapshot would.  The old and new
-- tags are locked in id order first (step 3 of the lock order).
CREATE FUNCTION conduit_set_tags(article bigint, created timestamptz, names text)
RETURNS text
LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
    new_ids bigint[];
    result text;
BEGIN
    IF names IS NOT NULL THEN
        SELECT coalesce(array_agg(tag_id ORDER BY tag_id), '{}') INTO new_ids
          FROM conduit_tag_ids(names);
        PERFORM 1 FROM tags
         WHERE id IN (SELECT x.tag_id FROM article_tags x WHERE x.article_id = article
                      UNION ALL SELECT unnest(new_ids))
         ORDER BY id FOR NO KEY UPDATE;
        DELETE FROM article_tags x
         WHERE x.article_id = article AND x.tag_id <> ALL (new_ids);
        INSERT INTO article_tags (article_id, tag_id, created_at)
        SELECT article, n.id, created FROM unnest(new_ids) AS n(id) ORDER BY n.id
        ON CONFLICT DO NOTHING;
    END IF;
    SELECT coalesce(string_agg(t.name, E'\x1f' ORDER BY t.name COLLATE "C"), '') INTO result
      FROM article_tags x JOIN tags t ON t.id = x.tag_id
     WHERE x.article_id = article;
    RETURN result;
END
$fn$;

-- Recompute every counter from the base tables, set-based.  The post-load
-- part calls it; an operator may call it at any time, under load: it first
-- locks articles, article_tags and favorites in SHARE mode, so the counts
-- it computes cannot go stale while it writes them (writes to those tables
-- wait until it commits, about 6 s at scale 1; reads go on).  It asks for the three locks with
-- NOWAIT and retries every 10 ms, for up to 30 s, instead of waiting while
-- holding some of them: a writer holding one and waiting for another would
-- otherwise deadlock with it, and the writer might be the one aborted.
-- Once the three are held no statement writing them is running (each takes
-- its table locks when it starts), and the other writes (comments, follows,
-- user updates) never wait for a lock this function holds, so it cannot
-- deadlock.  Returns the number of rows whose counter was wrong.
CREATE FUNCTION conduit_recount() RETURNS bigint
LANGUAGE plpgsql AS $fn$
DECLARE
    fixed bigint := 0;
    k bigint;
    tries integer := 0;
BEGIN
    LOOP
        BEGIN
            LOCK TABLE articles, article_tags, favorites IN SHARE MODE NOWAIT;
            EXIT;
        EXCEPTION WHEN lock_not_available THEN
            tries := tries + 1;
            IF tries >= 3000 THEN
                RAISE EXCEPTION 'conduit_recount: writes kept articles, article_tags or favorites locked for 30 s; try again when quieter';
            END IF;
            PERFORM pg_sleep(0.01);
        END;
    END LOOP;

    UPDATE article_tags t SET created_at = a.created_at
      FROM articles a
     WHERE a.id = t.article_id AND t.created_at IS DISTINCT FROM a.created_at;
    GET DIAGNOSTICS k = ROW_COUNT; fixed := fixed + k;

    UPDATE favorites f SET created_at = a.created_at
      FROM articles a
     WHERE a.id = f.article_id AND f.created_at IS DISTINCT FROM a.created_at;
    GET DIAGNOSTICS k = ROW_COUNT; fixed := fixed + k;

    UPDATE article_count_stripes s SET n = c.n
      FROM (SELECT g.s AS stripe, count(a.id) AS n
              FROM generate_series(0, 15) AS g(s)
              LEFT JOIN articles a ON a.id % 16 = g.s
             GROUP BY g.s) c
     WHERE s.stripe = c.stripe AND s.n <> c.n;
    GET DIAGNOSTICS k = ROW_COUNT; fixed := fixed + k;

    UPDATE users u SET article_count = coalesce(c.n, 0)
      FROM users u2
      LEFT JOIN (SELECT author_id, count(*) AS n FROM articles GROUP BY author_id) c
        ON c.author_id = u2.id
     WHERE u.id = u2.id AND u.article_count <> coalesce(c.n, 0);
    GET DIAGNOSTICS k = ROW_COUNT; fixed := fixed + k;

    UPDATE users u SET favorite_count = coalesce(c.n, 0)
      FROM users u2
      LEFT JOIN (SELECT user_id, count(*) AS n FROM favorites GROUP BY user_id) c
        ON c.user_id = u2.id
     WHERE u.id = u2.id AND u.favorite_count <> coalesce(c.n, 0);
    GET DIAGNOSTICS k = ROW_COUNT; fixed := fixed + k;

    UPDATE articles a SET favorites_count = coalesce(c.n, 0)
      FROM articles a2
      LEFT JOIN (SELECT article_id, count(*) AS n FROM favorites GROUP BY article_id) c
        ON c.article_id = a2.id
     WHERE a.id = a2.id AND a.favorites_count <> coalesce(c.n, 0);
    GET DIAGNOSTICS k = ROW_COUNT; fixed := fixed + k;

    UPDATE tags t SET article_count = coalesce(c.n, 0)
      FROM tags t2
      LEFT JOIN (SELECT tag_id, count(*) AS n FROM article_tags GROUP BY tag_id) c
        ON c.tag_id = t2.id
     WHERE t.id = t2.id AND t.article_count <> coalesce(c.n, 0);
    GET DIAGNOSTICS k = ROW_COUNT; fixed := fixed + k;

    -- Counters changed behind the triggers' back (the tag list's order, for
    -- one): every worker cache drops everything.
    IF fixed > 0 THEN
        PERFORM pg_notify('conduit_cache',
                          (extract(epoch FROM clock_timestamp()) * 1000000)::int8 || ' *');
    END IF;
    RETURN fixed;
END
$fn$;

-- ===================================================================
-- Cache notifications
-- ===================================================================
-- conduitd workers started with --cache on keep users, profiles, the
-- followees and favorites of a viewer, articles, list pages and the tag
-- list in memory (worker/cache.h, worker/cache_articles.h).  Every
-- write that changes one of those sends its key on channel conduit_cache,
-- from the triggers below, inside the writing transaction: PostgreSQL
-- delivers it on commit, and never for a write that rolled back.  Each
-- worker LISTENs and drops the key (worker/cache_sync.c).
-- Payload: "<microseconds since 1970 at the write> <key>" (the worker
-- measures the delivery delay from it).  Keys: u:<user id>, p:<username>,
-- f:<follower id>, tags; a:<slug> (an article), v:<user id> (the articles
-- a user favorited), lf:<username> (their favorited list), lg (the global
-- list), aa:<author id> (the feeds that show the author), la:<username>
-- (the author's list), lt:<tag> (the tag's list), ld (an article was
-- deleted: every list); "*" means everything.
-- Only sessions with conduit.cache_notify = on send them (conduitd sets it
-- on its pool connections when --cache and --cache-sync are on), so a
-- deployment without caches pays nothing.  Every instance writing to one
-- database must then run with the same cache settings.  The one exception
-- is the delete of a user, which no endpoint makes: an operator's session
-- does, and the token of that user must stop working at once (the cache
-- holds the user behind a token), so it is sent from any session.
CREATE FUNCTION conduit_cache_send(key text) RETURNS void
LANGUAGE plpgsql AS $fn$
BEGIN
    -- A payload must stay under 8000 bytes: a key too long for it
    -- (usernames are at most 64 bytes through the API) drops everything.
    IF octet_length(key) > 4000 THEN
        key := '*';
    END IF;
    PERFORM pg_notify('conduit_cache',
                      (extract(epoch FROM clock_timestamp()) * 1000000)::int8 || ' ' || key);
END
$fn$;

CREATE FUNCTION conduit_cache_notify(key text) RETURNS void
LANGUAGE plpgsql AS $fn$
BEGIN
    IF current_setting('conduit.cache_notify', true) = 'on' THEN
        PERFORM conduit_cache_send(key);
    END IF;
END
$fn$;

CREATE FUNCTION conduit_cache_users() RETURNS trigger
LANGUAGE plpgsql AS $fn$
BEGIN
    PERFORM conduit_cache_notify('u:' || OLD.id);
    PERFORM conduit_cache_notify('p:' || OLD.username);
    IF NEW.username IS DISTINCT FROM OLD.username THEN
        PERFORM conduit_cache_notify('p:' || NEW.username);
    END IF;
    RETURN NULL;
END
$fn$;

-- Statement-level, AFTER DELETE: everything, from any session.  A
-- deleted user takes with them the user behind their token, their
-- profile, their articles (which vanish from every list), their comments
-- and their favorites (which change the counts of articles anywhere), in
-- cascades whose own triggers send nothing from an operator's session;
-- such deletes are rare, and an empty cache is right.
CREATE FUNCTION conduit_cache_users_delete() RETURNS trigger
LANGUAGE plpgsql AS $fn$
BEGIN
    PERFORM conduit_cache_send('*');
    RETURN NULL;
END
$fn$;

CREATE FUNCTION conduit_cache_follows() RETURNS trigger
LANGUAGE plpgsql AS $fn$
BEGIN
    IF TG_OP = 'DELETE' THEN
        PERFORM conduit_cache_notify('f:' || OLD.follower_id);
    ELSE
        PERFORM conduit_cache_notify('f:' || NEW.follower_id);
    END IF;
    RETURN NULL;
END
$fn$;

CREATE FUNCTION conduit_cache_tags() RETURNS trigger
LANGUAGE plpgsql AS $fn$
BEGIN
    PERFORM conduit_cache_notify('tags');
    RETURN NULL;
END
$fn$;

-- Articles: an insert changes the global list (lg), the author's list
-- (la:<username>) and the feeds that show the author (aa:<author id>); an
-- edit changes the article (a:<slug>, under both slugs when it moved); a
-- delete the article and every list (ld).
CREATE FUNCTION conduit_cache_articles() RETURNS trigger
LANGUAGE plpgsql AS $fn$
BEGIN
    IF current_setting('conduit.cache_notify', true) IS DISTINCT FROM 'on' THEN
        RETURN NULL;
    END IF;
    IF TG_OP = 'INSERT' THEN
        PERFORM conduit_cache_send('lg');
        PERFORM conduit_cache_send('aa:' || NEW.author_id);
        PERFORM conduit_cache_send('la:' || u.username) FROM users u WHERE u.id = NEW.author_id;
    ELSIF TG_OP = 'UPDATE' THEN
        PERFORM conduit_cache_send('a:' || OLD.slug);
        IF NEW.slug IS DISTINCT FROM OLD.slug THEN
            PERFORM conduit_cache_send('a:' || NEW.slug);
        END IF;
    ELSE
        PERFORM conduit_cache_send('a:' || OLD.slug);
        PERFORM conduit_cache_send('ld');
    END IF;
    RETURN NULL;
END
$fn$;

-- A tag given to or taken from an article: that tag's list (lt:<name>).
CREATE FUNCTION conduit_cache_article_tags() RETURNS trigger
LANGUAGE plpgsql AS $fn$
BEGIN
    IF current_setting('conduit.cache_notify', true) IS DISTINCT FROM 'on' THEN
        RETURN NULL;
    END IF;
    -- A tag gone with the article is covered by the article's ld.
    PERFORM conduit_cache_send('lt:' || t.name)
       FROM tags t
      WHERE t.id = CASE WHEN TG_OP = 'DELETE' THEN OLD.tag_id ELSE NEW.tag_id END;
    RETURN NULL;
END
$fn$;

-- Favorites: for each, the article (its count, a:<slug>), the user's
-- favorites (v:<id>) and their favorited list (lf:<username>).
-- Statement-level, new_rows on insert and old_rows on delete; over 100 at
-- once (an article deleted with its favorites) drops everything instead.
CREATE FUNCTION conduit_cache_favorite(uid int8, aid int8) RETURNS void
LANGUAGE plpgsql AS $fn$
BEGIN
    PERFORM conduit_cache_send('a:' || a.slug) FROM articles a WHERE a.id = aid;
    PERFORM conduit_cache_send('v:' || uid);
    PERFORM conduit_cache_send('lf:' || u.username) FROM users u WHERE u.id = uid;
END
$fn$;

CREATE FUNCTION conduit_cache_favorites_ins() RETURNS trigger
LANGUAGE plpgsql AS $fn$
BEGIN
    IF current_setting('conduit.cache_notify', true) IS DISTINCT FROM 'on' THEN
        RETURN NULL;
    END IF;
    IF (SELECT count(*) FROM (SELECT 1 FROM new_rows LIMIT 101) x) > 100 THEN
        PERFORM conduit_cache_send('*');
    ELSE
        PERFORM conduit_cache_favorite(x.user_id, x.article_id) FROM new_rows x;
    END IF;
    RETURN NULL;
END
$fn$;

CREATE FUNCTION conduit_cache_favorites_del() RETURNS trigger
LANGUAGE plpgsql AS $fn$
BEGIN
    IF current_setting('conduit.cache_notify', true) IS DISTINCT FROM 'on' THEN
        RETURN NULL;
    END IF;
    IF (SELECT count(*) FROM (SELECT 1 FROM old_rows LIMIT 101) x) > 100 THEN
        PERFORM conduit_cache_send('*');
    ELSE
        PERFORM conduit_cache_favorite(x.user_id, x.article_id) FROM old_rows x;
    END IF;
    RETURN NULL;
END
$fn$;

-- @@ version 2
-- ===================================================================
-- Idempotency keys (docs/api.md, "Idempotency-Key")
-- ===================================================================
-- One row per Idempotency-Key a client sent with a POST that wrote.  The
-- row is inserted by the write's own statement (comment_insert,
-- article_insert, user_insert in sql/queries.sql), so the key exists
-- exactly when the write committed: a retry after an answer that said the
-- outcome is unknown finds it and is given the stored answer, and a write
-- that did not commit left no key, so its retry writes.  scope is the
-- caller's user id, or 0 for a registration (no caller yet); fingerprint
-- the request's digest (method, route, path, body) made by the C side;
-- answer the result row of the write's statement (to_jsonb), from which
-- the *_replay statements rebuild the same row.  Keys live 24 hours,
-- deleted lazily by conduit_idempotency_answer().
CREATE TABLE idempotency_keys (
    scope bigint NOT NULL,
    key text NOT NULL,
    fingerprint text NOT NULL,
    answer jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT idempotency_keys_pkey PRIMARY KEY (scope, key)
);
CREATE INDEX idempotency_keys_created_at ON idempotency_keys (created_at);

-- The stored answer under (k_scope, k_key) if it is within the window, and
-- whether the request that stored it had the fingerprint given.  On the
-- way it deletes that key if it is older than the window, so the write
-- that follows may store it again, and up to 16 other expired keys: the
-- table purges itself a little at every lookup, with no job to schedule
-- (SKIP LOCKED: two lookups never wait for each other's purge).
CREATE FUNCTION conduit_idempotency_answer(k_scope bigint, k_key text, k_fingerprint text)
    RETURNS TABLE (same_request boolean, stored_answer jsonb)
LANGUAGE plpgsql AS $fn$
DECLARE
    expired timestamptz := now() - interval '24 hours';
BEGIN
    DELETE FROM idempotency_keys k
     WHERE k.scope = k_scope AND k.key = k_key AND k.created_at < expired;
    DELETE FROM idempotency_keys k
     WHERE (k.scope, k.key) IN (SELECT o.scope, o.key FROM idempotency_keys o
                                 WHERE o.created_at < expired
                                 ORDER BY o.created_at LIMIT 16
                                   FOR UPDATE SKIP LOCKED);
    RETURN QUERY SELECT k.fingerprint = k_fingerprint, k.answer
                   FROM idempotency_keys k
                  WHERE k.scope = k_scope AND k.key = k_key AND k.created_at >= expired;
END
$fn$;

INSERT INTO schema_version (version) VALUES (2);
-- @@ end of version 2

-- @@ version 3
-- ===================================================================
-- The feed inbox (issue 37; docs/results/20261207-feed-inbox)
-- ===================================================================
-- The feed was merged at every read: two index probes per followee (their
-- user rows, then the newest limit + offset of each from the author index),
-- about 310 buffers and 1.2 to 1.6 ms a call under load, 4 to 6 ms for a
-- reader of 1,100 to 1,600 followees.  Now each reader has an inbox,
-- written when the feed changes (fan-out on write), so that a page is one
-- range of feed_inbox_pkey and the count one row of feed_readers.
--
-- Bounded per reader.  Unbounded, the inbox would hold every article of
-- every followee: at scale 1, 38.1 million rows (the most followed users
-- also write the most: 6,026 followers times 1,544 articles, 9.3 million,
-- for the first alone), about 3.3 GB, more than the rest of the database.
-- A reader keeps the newest conduit_inbox_keep() (30) articles of the
-- feed, the inbox growing by publications up to keep +
-- conduit_inbox_slack() (40) before it is cut back to 30 (one cut per 10
-- publications instead of a delete at each), and every article older than
-- its horizon (the oldest it keeps) is left to the merge.  Every reader of
-- the seeded data follows enough to fill it: 3,000,000 rows, 261 MB, and
-- feed_readers 19 MB, after seeding scale 1 (4,000,000 at most).  The
-- pages read are those near the top: the benchmark reads limit 10 offset
-- 0 only, the API's default page is limit 20 offset 0, and both are
-- inside 30; a deeper page (offset + limit over what the inbox holds)
-- runs the merge, exactly as before.
--
-- Invariant, for each reader r with a row in feed_readers (a reader
-- without one follows nobody):
--   * feed_inbox holds (r, article) exactly for the articles of r's
--     followees whose (created_at, id) >= (horizon_at, horizon_id);
--     horizon '-infinity' means the whole feed;
--   * held is the number of those rows, article_count the number of
--     articles of r's followees (the feed's articlesCount), and held <=
--     keep + slack.
-- So a page (limit, offset) is the inbox's when held >= limit + offset
-- (the newest held are the feed's newest) or held = article_count (the
-- inbox is the whole feed); articles_feed decides that inside the
-- statement and otherwise merges, as articles_feed_merge does.
--
-- Kept exact in the writing transaction by the zz_feed_* triggers (the
-- post-load part creates them): a new article is added to each follower's
-- inbox (above the horizon), a deleted one removed from it, a follow adds
-- the followee's articles above the horizon, an unfollow removes them; the
-- counts follow, and a reader over keep + slack is cut back to keep.  A
-- user being deleted (no endpoint does) is taken out before the cascades
-- (conduit_inbox_user_delete() says why).  An article's or a follow's key
-- columns changed by hand (no endpoint does) count as a removal and an
-- addition.
--
-- Concurrency.  Two locks make every change of a reader's feed see the
-- one before it (each statement of the trigger functions below takes its
-- own snapshot, after the locks):
--   * the author's users row: articles_count takes it (FOR NO KEY UPDATE)
--     for every new or deleted article, and the follow triggers take it
--     FOR SHARE, so a follow or unfollow of x and a publication or delete
--     by x never overlap: whichever comes second sees the first committed
--     (the new article among x's, or the new follower among x's);
--   * the reader's feed_readers row, FOR NO KEY UPDATE, in reader_id order
--     (step 2b of the lock order: after the author's row, before the tag
--     rows), by every trigger that changes that reader's inbox: so two
--     authors publishing to one reader, or a cut and a publication, never
--     read the horizon and held before the other's commit.
-- An article delete takes its author and then the readers last (after
-- its cascades took tag and favorite rows), like its author row (see "The
-- one order this cannot keep" above): a delete and a publication sharing
-- a tag and a follower may deadlock, 40P01, and both are retried once.
--
-- The cost moved to the writes (measured at scale 1, docs/results/
-- 20261207-feed-inbox, mean ms before -> after): a new article writes one
-- inbox row and updates one feed_readers row per follower, and cuts them
-- one time in ten: 0.55 -> 1.28 by an author drawn uniformly (20 followers
-- on average), 0.45 -> 165 (p99 373) by the most followed (6,026, about 27
-- us a follower); a delete does the same in reverse, 0.57 -> 1.77 and
-- 0.62 -> 134; a follow inserts up to 41 of the followee's articles and
-- cuts, 0.34 -> 0.77; an unfollow deletes the followee's rows, and
-- refills the inbox from the merge when fewer than 15 are left, 0.43 ->
-- 0.78.  No author is merged at read time: 10 users have over 1,000
-- followers and write 1 % of the articles, and the benchmark's writers
-- are drawn uniformly.  The feed's page from the inbox: 0.25 ms and 181
-- buffers against 0.37 ms and 304 merged, for a typical viewer; 0.25
-- against 1.7 ms (1,733 buffers) for one of hundreds of followees.
CREATE TABLE feed_readers (
    reader_id bigint NOT NULL,
    -- articles of the reader's followees: the feed's articlesCount
    article_count bigint NOT NULL DEFAULT 0,
    -- rows in feed_inbox for this reader
    held bigint NOT NULL DEFAULT 0,
    -- the inbox holds every feed article at or above this (created_at, id)
    horizon_at timestamptz NOT NULL DEFAULT '-infinity',
    horizon_id bigint NOT NULL DEFAULT 0,
    CONSTRAINT feed_readers_pkey PRIMARY KEY (reader_id)
) WITH (fillfactor = 70,
        autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_insert_scale_factor = 0.01);

-- The page is a backward range of the primary key (reader_id = r, newest
-- first), index only once vacuumed.  Nothing else is stored: the page's
-- rows come from articles as in every list.
CREATE TABLE feed_inbox (
    reader_id bigint NOT NULL,
    created_at timestamptz NOT NULL,
    article_id bigint NOT NULL,
    CONSTRAINT feed_inbox_pkey PRIMARY KEY (reader_id, created_at, article_id)
) WITH (autovacuum_vacuum_scale_factor = 0.01,
        autovacuum_vacuum_insert_scale_factor = 0.01);

-- The bound (see above), in one place.
CREATE FUNCTION conduit_inbox_keep() RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$ SELECT 30::bigint $fn$;
CREATE FUNCTION conduit_inbox_slack() RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$ SELECT 10::bigint $fn$;

-- Cuts the inboxes of readers (whose feed_readers rows the caller has
-- locked) back to their newest keep rows: the keep-th becomes the horizon.
-- Readers holding keep or fewer are left alone.
CREATE FUNCTION conduit_inbox_trim(readers bigint[]) RETURNS void
LANGUAGE plpgsql AS $fn$
DECLARE
    keep constant bigint := conduit_inbox_keep();
BEGIN
    WITH cut AS MATERIALIZED (
        SELECT s.reader_id, c.created_at, c.article_id
          FROM feed_readers s
         CROSS JOIN LATERAL (
               SELECT i.created_at, i.article_id
                 FROM feed_inbox i
                WHERE i.reader_id = s.reader_id
                ORDER BY i.created_at DESC, i.article_id DESC
               OFFSET keep - 1 LIMIT 1) c
         WHERE s.reader_id = ANY (readers)
    ), del AS (
        DELETE FROM feed_inbox i USING cut
         WHERE i.reader_id = cut.reader_id
           AND (i.created_at, i.article_id) < (cut.created_at, cut.article_id)
        RETURNING i.reader_id
    )
    UPDATE feed_readers s
       SET held = s.held - coalesce(d.k, 0), horizon_at = cut.created_at, horizon_id = cut.article_id
      FROM cut
      LEFT JOIN (SELECT reader_id, count(*) AS k FROM del GROUP BY reader_id) d USING (reader_id)
     WHERE s.reader_id = cut.reader_id;
END
$fn$;

-- New articles (ids, their authors, their created_at): each goes to the
-- inbox of every follower of its author whose horizon it is not below,
-- and counts in every follower's article_count.  The caller holds the
-- authors' users rows (articles_count took them).
CREATE FUNCTION conduit_inbox_publish(ids bigint[], authors bigint[], ats timestamptz[])
RETURNS void
LANGUAGE plpgsql AS $fn$
DECLARE
    most constant bigint := conduit_inbox_keep() + conduit_inbox_slack();
    full_ones bigint[];
BEGIN
    PERFORM 1 FROM feed_readers
     WHERE reader_id IN (SELECT f.follower_id FROM follows f WHERE f.followee_id = ANY (authors))
     ORDER BY reader_id FOR NO KEY UPDATE;
    WITH fan AS MATERIALIZED (
        SELECT s.reader_id, a.created_at, a.id,
               (a.created_at, a.id) >= (s.horizon_at, s.horizon_id) AS kept
          FROM unnest(ids, authors, ats) AS a(id, author_id, created_at)
          JOIN follows f ON f.followee_id = a.author_id
          JOIN feed_readers s ON s.reader_id = f.follower_id
    ), ins AS (
        INSERT INTO feed_inbox (reader_id, created_at, article_id)
        SELECT reader_id, created_at, id FROM fan WHERE kept
        ON CONFLICT DO NOTHING
        RETURNING reader_id
    ), upd AS (
        UPDATE feed_readers s
           SET article_count = s.article_count + d.n, held = s.held + coalesce(i.k, 0)
          FROM (SELECT reader_id, count(*) AS n FROM fan GROUP BY reader_id) d
          LEFT JOIN (SELECT reader_id, count(*) AS k FROM ins GROUP BY reader_id) i USING (reader_id)
         WHERE s.reader_id = d.reader_id
        RETURNING s.reader_id, s.held
    )
    SELECT array_agg(reader_id) INTO full_ones FROM upd WHERE held > most;
    IF full_ones IS NOT NULL THEN
        PERFORM conduit_inbox_trim(full_ones);
    END IF;
END
$fn$;

-- Deleted articles (as conduit_inbox_publish's arguments): out of every
-- follower's inbox and count.  Only rows at or above a reader's horizon
-- can be there, so only those are looked up.
CREATE FUNCTION conduit_inbox_unpublish(ids bigint[], authors bigint[], ats timestamptz[])
RETURNS void
LANGUAGE plpgsql AS $fn$
BEGIN
    PERFORM 1 FROM feed_readers
     WHERE reader_id IN (SELECT f.follower_id FROM follows f WHERE f.followee_id = ANY (authors))
     ORDER BY reader_id FOR NO KEY UPDATE;
    WITH gone AS MATERIALIZED (
        SELECT * FROM unnest(ids, authors, ats) AS a(id, author_id, created_at)
    ), rd AS (
        SELECT f.follower_id AS reader_id, sum(p.n) AS n
          FROM (SELECT author_id, count(*) AS n FROM gone GROUP BY author_id) p
          JOIN follows f ON f.followee_id = p.author_id
         GROUP BY f.follower_id
    ), del AS (
        DELETE FROM feed_inbox i
         USING gone a, follows f, feed_readers s
         WHERE f.followee_id = a.author_id AND s.reader_id = f.follower_id
           AND (a.created_at, a.id) >= (s.horizon_at, s.horizon_id)
           AND i.reader_id = f.follower_id AND i.created_at = a.created_at AND i.article_id = a.id
        RETURNING i.reader_id
    )
    UPDATE feed_readers s
       SET article_count = s.article_count - rd.n, held = s.held - coalesce(d.k, 0)
      FROM rd
      LEFT JOIN (SELECT reader_id, count(*) AS k FROM del GROUP BY reader_id) d USING (reader_id)
     WHERE s.reader_id = rd.reader_id;
END
$fn$;

-- Recomputes one reader's inbox from the merge (the caller holds its
-- feed_readers row): its count, its newest keep articles (all of them
-- when there are at most keep + slack), the horizon.  unfollow calls it
-- when the inbox is left too short to serve the first pages.
CREATE FUNCTION conduit_inbox_refill(reader bigint) RETURNS void
LANGUAGE plpgsql AS $fn$
DECLARE
    keep constant bigint := conduit_inbox_keep();
    most constant bigint := keep + conduit_inbox_slack();
    n bigint;
    lim bigint;
    k bigint;
    h_at timestamptz := '-infinity';
    h_id bigint := 0;
BEGIN
    SELECT coalesce(sum(u.article_count), 0) INTO n
      FROM follows f JOIN users u ON u.id = f.followee_id
     WHERE f.follower_id = reader;
    lim := CASE WHEN n <= most THEN most ELSE keep END;
    DELETE FROM feed_inbox WHERE reader_id = reader;
    INSERT INTO feed_inbox (reader_id, created_at, article_id)
    SELECT reader, x.created_at, x.id
      FROM follows f
     CROSS JOIN LATERAL (
           SELECT a.created_at, a.id
             FROM articles a
            WHERE a.author_id = f.followee_id
            ORDER BY a.created_at DESC, a.id DESC
            LIMIT lim) x
     WHERE f.follower_id = reader
     ORDER BY x.created_at DESC, x.id DESC
     LIMIT lim;
    GET DIAGNOSTICS k = ROW_COUNT;
    IF k < n THEN
        SELECT i.created_at, i.article_id INTO h_at, h_id
          FROM feed_inbox i
         WHERE i.reader_id = reader
         ORDER BY i.created_at, i.article_id
         LIMIT 1;
    END IF;
    UPDATE feed_readers
       SET article_count = n, held = k, horizon_at = h_at, horizon_id = h_id
     WHERE reader_id = reader;
END
$fn$;

-- New follows (readers[i] follows followees[i]).  The followees' users
-- rows are taken FOR SHARE first: no article of theirs comes or goes until
-- this commits, and one that came before is seen.  Each followee's
-- articles at or above the reader's horizon go in, at most keep + slack +
-- 1 of them: with more, the cut that follows (the inbox is then over
-- keep + slack) raises the horizon above the ones left out.
CREATE FUNCTION conduit_inbox_follow(readers bigint[], followees bigint[]) RETURNS void
LANGUAGE plpgsql AS $fn$
DECLARE
    most constant bigint := conduit_inbox_keep() + conduit_inbox_slack();
    p record;
    k bigint;
    h_at timestamptz;
    h_id bigint;
    full_ones bigint[];
BEGIN
    PERFORM 1 FROM users WHERE id = ANY (followees) ORDER BY id FOR SHARE;
    INSERT INTO feed_readers (reader_id)
    SELECT DISTINCT r FROM unnest(readers) AS r ORDER BY 1
    ON CONFLICT DO NOTHING;
    PERFORM 1 FROM feed_readers WHERE reader_id = ANY (readers) ORDER BY reader_id FOR NO KEY UPDATE;
    FOR p IN SELECT x.reader_id, x.followee_id
               FROM unnest(readers, followees) AS x(reader_id, followee_id)
              ORDER BY 1, 2 LOOP
        -- The horizon as values, so the range below is one index range.
        SELECT s.horizon_at, s.horizon_id INTO h_at, h_id
          FROM feed_readers s WHERE s.reader_id = p.reader_id;
        WITH ins AS (
            INSERT INTO feed_inbox (reader_id, created_at, article_id)
            SELECT p.reader_id, a.created_at, a.id
              FROM articles a
             WHERE a.author_id = p.followee_id AND (a.created_at, a.id) >= (h_at, h_id)
             ORDER BY a.created_at DESC, a.id DESC
             LIMIT most + 1
            ON CONFLICT DO NOTHING
            RETURNING 1
        )
        SELECT count(*) INTO k FROM ins;
        UPDATE feed_readers s
           SET article_count = s.article_count
                   + coalesce((SELECT u.article_count FROM users u WHERE u.id = p.followee_id), 0),
               held = s.held + k
         WHERE s.reader_id = p.reader_id;
    END LOOP;
    SELECT array_agg(reader_id) INTO full_ones
      FROM feed_readers WHERE reader_id = ANY (readers) AND held > most;
    IF full_ones IS NOT NULL THEN
        PERFORM conduit_inbox_trim(full_ones);
    END IF;
END
$fn$;

-- Ended follows.  The followee's rows in the reader's inbox are its
-- articles at or above the horizon (at most keep + slack).  Its article
-- count comes from its users row, or, when the user was deleted (the
-- row is gone), from its articles still there: none, after the cascades,
-- since conduit_inbox_user_delete() counted them all first.  With refill
-- (one unfollow, not a cascade), an inbox left short of keep / 2 rows,
-- less than the feed, is refilled: otherwise every read of the first pages
-- would merge until enough new articles came.  Not when the follow is
-- being changed into another (an UPDATE): the refill reads the follows as
-- they are, the new one in them, which the follow after it adds again.
CREATE FUNCTION conduit_inbox_unfollow(readers bigint[], followees bigint[], refill boolean)
RETURNS void
LANGUAGE plpgsql AS $fn$
DECLARE
    keep constant bigint := conduit_inbox_keep();
    p record;
    k bigint;
    h_at timestamptz;
    h_id bigint;
BEGIN
    PERFORM 1 FROM users WHERE id = ANY (followees) ORDER BY id FOR SHARE;
    PERFORM 1 FROM feed_readers WHERE reader_id = ANY (readers) ORDER BY reader_id FOR NO KEY UPDATE;
    FOR p IN SELECT x.reader_id, x.followee_id
               FROM unnest(readers, followees) AS x(reader_id, followee_id)
              ORDER BY 1, 2 LOOP
        SELECT s.horizon_at, s.horizon_id INTO h_at, h_id
          FROM feed_readers s WHERE s.reader_id = p.reader_id;
        IF NOT FOUND THEN
            -- A deleted reader whose row went first: every row goes.
            h_at := '-infinity';
            h_id := 0;
        END IF;
        WITH del AS (
            DELETE FROM feed_inbox i
             USING articles a
             WHERE a.author_id = p.followee_id AND (a.created_at, a.id) >= (h_at, h_id)
               AND i.reader_id = p.reader_id AND i.created_at = a.created_at AND i.article_id = a.id
            RETURNING 1
        )
        SELECT count(*) INTO k FROM del;
        UPDATE feed_readers s
           SET article_count = s.article_count
                   - coalesce((SELECT u.article_count FROM users u WHERE u.id = p.followee_id),
                              (SELECT count(*) FROM articles a WHERE a.author_id = p.followee_id)),
               held = s.held - k
         WHERE s.reader_id = p.reader_id;
    END LOOP;
    IF refill THEN
        PERFORM conduit_inbox_refill(s.reader_id)
           FROM feed_readers s
          WHERE s.reader_id = readers[1] AND s.held < keep / 2 AND s.held < s.article_count;
    END IF;
END
$fn$;

-- The function of the six zz_feed_* triggers (the post-load part creates
-- them): statement level for inserts and deletes, so that a delete
-- cascading to many articles or follows makes one call over its
-- transition table; row level for updates of the key columns (a column
-- list allows no transition table), which count as a removal and an
-- addition.
CREATE FUNCTION conduit_inbox_changes() RETURNS trigger
LANGUAGE plpgsql AS $fn$
BEGIN
    IF TG_TABLE_NAME = 'articles' THEN
        IF TG_OP = 'INSERT' THEN
            PERFORM conduit_inbox_publish(array_agg(id), array_agg(author_id), array_agg(created_at))
               FROM new_rows HAVING count(*) > 0;
        ELSIF TG_OP = 'DELETE' THEN
            PERFORM conduit_inbox_unpublish(array_agg(id), array_agg(author_id), array_agg(created_at))
               FROM old_rows HAVING count(*) > 0;
        ELSIF (NEW.id, NEW.author_id, NEW.created_at)
              IS DISTINCT FROM (OLD.id, OLD.author_id, OLD.created_at) THEN
            PERFORM conduit_inbox_unpublish(ARRAY[OLD.id], ARRAY[OLD.author_id], ARRAY[OLD.created_at]);
            PERFORM conduit_inbox_publish(ARRAY[NEW.id], ARRAY[NEW.author_id], ARRAY[NEW.created_at]);
        END IF;
    ELSIF TG_OP = 'INSERT' THEN
        PERFORM conduit_inbox_follow(array_agg(follower_id), array_agg(followee_id))
           FROM new_rows HAVING count(*) > 0;
    ELSIF TG_OP = 'DELETE' THEN
        PERFORM conduit_inbox_unfollow(array_agg(follower_id), array_agg(followee_id), count(*) = 1)
           FROM old_rows HAVING count(*) > 0;
    ELSIF (NEW.follower_id, NEW.followee_id) IS DISTINCT FROM (OLD.follower_id, OLD.followee_id) THEN
        PERFORM conduit_inbox_unfollow(ARRAY[OLD.follower_id], ARRAY[OLD.followee_id], false);
        PERFORM conduit_inbox_follow(ARRAY[NEW.follower_id], ARRAY[NEW.followee_id]);
    END IF;
    RETURN NULL;
END
$fn$;

-- A user being deleted, before the cascades (BEFORE DELETE on users, row
-- level): their articles leave their followers' inboxes and counts, and
-- their own inbox goes.  The cascades' own triggers cannot do it:
-- PostgreSQL fires them only once every cascade of the statement has run,
-- when the user's follows and articles are both gone, and neither could
-- find what the other took (the followers of the deleted articles, the
-- articles of the deleted follows).  Fired then, they find nothing left
-- to do.  The readers are locked in one ordered set, the user's own row
-- with their followers'.
CREATE FUNCTION conduit_inbox_user_delete() RETURNS trigger
LANGUAGE plpgsql AS $fn$
BEGIN
    PERFORM 1 FROM feed_readers
     WHERE reader_id = OLD.id
        OR reader_id IN (SELECT f.follower_id FROM follows f WHERE f.followee_id = OLD.id)
     ORDER BY reader_id FOR NO KEY UPDATE;
    PERFORM conduit_inbox_unfollow(array_agg(f.follower_id), array_agg(f.followee_id), false)
       FROM follows f WHERE f.followee_id = OLD.id HAVING count(*) > 0;
    DELETE FROM feed_readers WHERE reader_id = OLD.id;
    DELETE FROM feed_inbox WHERE reader_id = OLD.id;
    RETURN OLD;
END
$fn$;

-- Every inbox recomputed from follows, articles and the article counters
-- (run conduit_recount() first if those may be wrong), set-based: the
-- post-load part fills the inbox with it, and an upgrade to version 3.
-- An operator may call it after writes made behind the triggers' back; it
-- locks follows and articles in SHARE mode (writes to them wait) and
-- empties the inbox with TRUNCATE (feed reads wait too) until it commits.
-- Returns the rows written.  Each reader's newest come from a merge like
-- the read's (the newest keep, or keep + slack, of each followee), so the
-- cost is about the followees' number times keep, never their articles'.
CREATE FUNCTION conduit_inbox_rebuild() RETURNS bigint
LANGUAGE plpgsql AS $fn$
DECLARE
    keep constant bigint := conduit_inbox_keep();
    most constant bigint := keep + conduit_inbox_slack();
    k bigint;
BEGIN
    LOCK TABLE follows, articles IN SHARE MODE;
    TRUNCATE feed_inbox, feed_readers;
    INSERT INTO feed_readers (reader_id, article_count)
    SELECT f.follower_id, sum(u.article_count)
      FROM follows f JOIN users u ON u.id = f.followee_id
     GROUP BY f.follower_id
     ORDER BY f.follower_id;
    -- In reader order, so the primary key is built nearly in order.
    INSERT INTO feed_inbox (reader_id, created_at, article_id)
    SELECT s.reader_id, t.created_at, t.id
      FROM (SELECT reader_id, article_count,
                   CASE WHEN article_count <= most THEN most ELSE keep END AS lim
              FROM feed_readers ORDER BY reader_id) s
     CROSS JOIN LATERAL (
           SELECT x.created_at, x.id
             FROM follows f
            CROSS JOIN LATERAL (
                  SELECT a.created_at, a.id
                    FROM articles a
                   WHERE a.author_id = f.followee_id
                   ORDER BY a.created_at DESC, a.id DESC
                   LIMIT s.lim) x
            WHERE f.follower_id = s.reader_id
            ORDER BY x.created_at DESC, x.id DESC
            LIMIT s.lim) t;
    GET DIAGNOSTICS k = ROW_COUNT;
    -- held: the whole feed, or keep; the horizon: the oldest kept of a
    -- feed longer than that.
    UPDATE feed_readers s
       SET held = keep, horizon_at = o.created_at, horizon_id = o.article_id
      FROM (SELECT r.reader_id, h.created_at, h.article_id
              FROM feed_readers r
             CROSS JOIN LATERAL (
                   SELECT i.created_at, i.article_id
                     FROM feed_inbox i
                    WHERE i.reader_id = r.reader_id
                    ORDER BY i.created_at, i.article_id
                    LIMIT 1) h
             WHERE r.article_count > most) o
     WHERE s.reader_id = o.reader_id;
    UPDATE feed_readers SET held = article_count WHERE article_count <= most;
    RETURN k;
END
$fn$;

INSERT INTO schema_version (version) VALUES (3);
-- @@ end of version 3

-- @@ post-load: a bulk loader sends everything above this line, then its
-- data, then everything below, in one session (see the top of the file).

-- ===================================================================
-- Unique constraints and secondary indexes
-- ===================================================================
-- The C side maps SQLSTATE 23505 by constraint name: users_username_key,
-- users_email_key (a unique index on lower(email): its name is reported as
-- the constraint name), articles_slug_key.
ALTER TABLE users ADD CONSTRAINT users_username_key UNIQUE (username);
CREATE UNIQUE INDEX users_email_key ON users (lower(email));
ALTER TABLE articles ADD CONSTRAINT articles_slug_key UNIQUE (slug);
ALTER TABLE tags ADD CONSTRAINT tags_name_key UNIQUE (name);

-- The global list: newest first, ties by id.
CREATE INDEX articles_created_idx ON articles (created_at DESC, id DESC);
-- ?author=, the feed (one range per followee) and the cascade from users.
CREATE INDEX articles_author_created_idx ON articles (author_id, created_at DESC, id DESC);
-- ?tag=: one ordered range per tag; also the cascade from tags.
CREATE INDEX article_tags_tag_created_idx ON article_tags (tag_id, created_at DESC, article_id DESC);
-- ?favorited=: one ordered range per user (created_at is the article's).
CREATE INDEX favorites_user_created_idx ON favorites (user_id, created_at DESC, article_id DESC);
-- The cascade from articles (the counts themselves are kept by triggers).
CREATE INDEX favorites_article_idx ON favorites (article_id);
-- Followers of a user; the cascade from users.
CREATE INDEX follows_followee_idx ON follows (followee_id);
-- The 100 newest comments of an article; the cascade from articles.
CREATE INDEX comments_article_created_idx ON comments (article_id, created_at DESC, id DESC);
-- No index on comments (author_id): no endpoint deletes a user, so the
-- cascade from users would be the only reader.

-- ===================================================================
-- Foreign keys (each validated in one pass over the loaded data)
-- ===================================================================
-- Keep this order: the cascades of an article delete run in the order of
-- their trigger names, which follows the order the foreign keys are made
-- here, so tag counters (step 3 of the lock order) are updated before
-- favorite counters (step 4).  (Were it otherwise, the only cost would be
-- more of the 40P01 deadlocks described there.)
ALTER TABLE articles ADD CONSTRAINT articles_author_id_fkey
    FOREIGN KEY (author_id) REFERENCES users (id) ON DELETE CASCADE;
ALTER TABLE article_tags ADD CONSTRAINT article_tags_article_id_fkey
    FOREIGN KEY (article_id) REFERENCES articles (id) ON DELETE CASCADE;
ALTER TABLE article_tags ADD CONSTRAINT article_tags_tag_id_fkey
    FOREIGN KEY (tag_id) REFERENCES tags (id) ON DELETE CASCADE;
ALTER TABLE favorites ADD CONSTRAINT favorites_user_id_fkey
    FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE;
ALTER TABLE favorites ADD CONSTRAINT favorites_article_id_fkey
    FOREIGN KEY (article_id) REFERENCES articles (id) ON DELETE CASCADE;
ALTER TABLE follows ADD CONSTRAINT follows_follower_id_fkey
    FOREIGN KEY (follower_id) REFERENCES users (id) ON DELETE CASCADE;
ALTER TABLE follows ADD CONSTRAINT follows_followee_id_fkey
    FOREIGN KEY (followee_id) REFERENCES users (id) ON DELETE CASCADE;
ALTER TABLE comments ADD CONSTRAINT comments_article_id_fkey
    FOREIGN KEY (article_id) REFERENCES articles (id) ON DELETE CASCADE;
ALTER TABLE comments ADD CONSTRAINT comments_author_id_fkey
    FOREIGN KEY (author_id) REFERENCES users (id) ON DELETE CASCADE;

-- ===================================================================
-- Sequences past loaded ids, counters, then the triggers
-- ===================================================================
DO $postload$
DECLARE
    fixed bigint;
BEGIN
    PERFORM setval(pg_get_serial_sequence('users', 'id'), coalesce(max(id), 0) + 1, false) FROM users;
    PERFORM setval(pg_get_serial_sequence('articles', 'id'), coalesce(max(id), 0) + 1, false) FROM articles;
    PERFORM setval(pg_get_serial_sequence('tags', 'id'), coalesce(max(id), 0) + 1, false) FROM tags;
    PERFORM setval(pg_get_serial_sequence('comments', 'id'), coalesce(max(id), 0) + 1, false) FROM comments;
    fixed := conduit_recount();
    IF fixed > 0 THEN
        RAISE NOTICE 'conduit_recount: % counter rows recomputed', fixed;
    END IF;
END
$postload$;

-- conduit_recount() above has set them (every row has its article: the
-- foreign keys are checked), so these checks cannot fail.
ALTER TABLE article_tags ALTER COLUMN created_at SET NOT NULL;
ALTER TABLE favorites ALTER COLUMN created_at SET NOT NULL;

CREATE TRIGGER zz_articles_count
    AFTER INSERT OR DELETE OR UPDATE OF id, author_id, created_at ON articles
    FOR EACH ROW EXECUTE FUNCTION conduit_articles_count();
CREATE TRIGGER zz_article_tags_ins
    AFTER INSERT ON article_tags REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION conduit_article_tags_ins();
CREATE TRIGGER zz_article_tags_del
    AFTER DELETE ON article_tags REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION conduit_article_tags_del();
CREATE TRIGGER zz_article_tags_upd
    AFTER UPDATE OF tag_id ON article_tags
    FOR EACH ROW EXECUTE FUNCTION conduit_article_tags_upd();
CREATE TRIGGER zz_favorites_ins
    AFTER INSERT ON favorites REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION conduit_favorites_ins();
CREATE TRIGGER zz_favorites_del
    AFTER DELETE ON favorites REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION conduit_favorites_del();
CREATE TRIGGER zz_favorites_upd
    AFTER UPDATE OF user_id, article_id ON favorites
    FOR EACH ROW EXECUTE FUNCTION conduit_favorites_upd();
-- Cache notifications (see "Cache notifications" above).  A user's counters
-- change with every article and favorite: only the columns a cache holds
-- make a notification.  The tag list is ordered by use, so every change of
-- a tag's count is one.
CREATE TRIGGER conduit_cache_users
    AFTER UPDATE OF username, email, bio, image ON users
    FOR EACH ROW
    WHEN (OLD.username IS DISTINCT FROM NEW.username OR OLD.email IS DISTINCT FROM NEW.email
          OR OLD.bio IS DISTINCT FROM NEW.bio OR OLD.image IS DISTINCT FROM NEW.image)
    EXECUTE FUNCTION conduit_cache_users();
CREATE TRIGGER conduit_cache_users_delete
    AFTER DELETE ON users REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION conduit_cache_users_delete();
CREATE TRIGGER conduit_cache_follows
    AFTER INSERT OR DELETE ON follows
    FOR EACH ROW EXECUTE FUNCTION conduit_cache_follows();
CREATE TRIGGER conduit_cache_tags
    AFTER INSERT OR DELETE OR UPDATE OF name, article_count ON tags
    FOR EACH STATEMENT EXECUTE FUNCTION conduit_cache_tags();
CREATE TRIGGER conduit_cache_articles
    AFTER INSERT OR DELETE OR UPDATE OF slug, title, description, body, updated_at ON articles
    FOR EACH ROW EXECUTE FUNCTION conduit_cache_articles();
CREATE TRIGGER conduit_cache_article_tags
    AFTER INSERT OR DELETE ON article_tags
    FOR EACH ROW EXECUTE FUNCTION conduit_cache_article_tags();
CREATE TRIGGER conduit_cache_favorites_ins
    AFTER INSERT ON favorites REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION conduit_cache_favorites_ins();
CREATE TRIGGER conduit_cache_favorites_del
    AFTER DELETE ON favorites REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION conduit_cache_favorites_del();

-- ===================================================================
-- Feed inbox: the fill, then its triggers
-- ===================================================================
-- @@ version 3
-- Loaded here, after the counters (conduit_inbox_rebuild() reads
-- users.article_count), and its triggers only after it, so the load fires
-- none.  An upgrade from version 2 runs this part too, under load
-- perhaps: the locks keep every write of follows and articles out until
-- the triggers are there (reads go on).
LOCK TABLE follows, articles IN SHARE ROW EXCLUSIVE MODE;
DO $fill$
BEGIN
    PERFORM conduit_inbox_rebuild();
END
$fill$;
-- After the fill, so it is validated in one pass instead of row by row.
ALTER TABLE feed_readers ADD CONSTRAINT feed_readers_reader_id_fkey
    FOREIGN KEY (reader_id) REFERENCES users (id) ON DELETE CASCADE;
CREATE TRIGGER zz_feed_articles_ins
    AFTER INSERT ON articles REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION conduit_inbox_changes();
CREATE TRIGGER zz_feed_articles_del
    AFTER DELETE ON articles REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION conduit_inbox_changes();
CREATE TRIGGER zz_feed_articles_upd
    AFTER UPDATE OF id, author_id, created_at ON articles
    FOR EACH ROW EXECUTE FUNCTION conduit_inbox_changes();
CREATE TRIGGER zz_feed_follows_ins
    AFTER INSERT ON follows REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION conduit_inbox_changes();
CREATE TRIGGER zz_feed_follows_del
    AFTER DELETE ON follows REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION conduit_inbox_changes();
CREATE TRIGGER zz_feed_follows_upd
    AFTER UPDATE OF follower_id, followee_id ON follows
    FOR EACH ROW EXECUTE FUNCTION conduit_inbox_changes();
CREATE TRIGGER zz_feed_users_del
    BEFORE DELETE ON users
    FOR EACH ROW EXECUTE FUNCTION conduit_inbox_user_delete();
ANALYZE feed_readers, feed_inbox;
-- @@ end of version 3

-- ===================================================================
-- Statistics
-- ===================================================================
ANALYZE users, articles, tags, article_tags, favorites, follows, comments, article_count_stripes;

COMMIT;
