-- conduitd database schema, version 2.
--
-- A database of version 1 is brought to version 2 by conduitd --init-db,
-- which then sends only the part between "-- @@ version 2" and
-- "-- @@ end of version 2" below (in one transaction of its own).
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
-- The file also sets two settings on the database (plan_cache_mode and
-- jit, see below): that needs the database's owner or a superuser.
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
--   feed               sum(users.article_count) over the viewer's followees
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
-- setting gets it with the ALTER TABLE ... SET of the same options.

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

-- Two settings for every new session of this database (the C side may send
-- them in its conninfo options too; a database restored by pg_dump without
-- --create loses them):
-- * plan_cache_mode = force_generic_plan.  conduitd prepares each statement
--   once per connection; with the default (auto) PostgreSQL keeps
--   replanning every list query (its generic plan cannot know LIMIT $n, so
--   it looks costlier than the custom ones) and the planning, 0.3 to 0.4 ms,
--   costs more than running the query.  The queries are written so that
--   their generic plans are the good ones (see sql/queries.sql).
-- * jit = off.  The statements are short; the JIT compiler starts when a
--   cost estimate passes jit_above_cost, which here only means a
--   misestimate, and then costs 100 to 250 ms (measured at scale 1).
DO $settings$
BEGIN
    EXECUTE format('ALTER DATABASE %I SET plan_cache_mode = force_generic_plan',
                   current_database());
    EXECUTE format('ALTER DATABASE %I SET jit = off', current_database());
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
--      trigger, at most one of each per statement;
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

ANALYZE users, articles, tags, article_tags, favorites, follows, comments, article_count_stripes;

COMMIT;
