-- Statements sent as text, each once in a while, never prepared: the
-- master's --init-db, the cache's LISTEN connection, conduit-seed and
-- conduit-bench.  sql/gen-queries.awk turns this file into direct.h /
-- direct.c (enum sql_direct_id, SQL_DIRECT_<NAME>, table sql_direct[]);
-- the worker's prepared statements are in queries.sql.
--
-- The file format is queries.sql's: "-- name: snake_case_name", then the
-- text up to the first line that ends with ";".  A text of several
-- statements keeps them on one line but the last (only the last line may
-- end in ";"); PostgreSQL then answers with one result each.
--
-- Left in C, because their text is made from names: conduit-seed's COPY
-- statements (seed/tables.c: each column list sits beside the function
-- that writes those columns in that order) and its LOCK, DROP and count
-- statements over the tables and functions it reads out of schema.sql
-- (seed/load.c).

-- name: relation_exists
-- $1 relation name text.  -> 0 bool, whether it is in the search path.
-- to_regclass() answers NULL instead of failing for a missing table.
SELECT to_regclass($1) IS NOT NULL;

-- name: schema_version_applied
-- No parameters.  -> 0 version int (text).  Only once relation_exists
-- found schema_version: naming a missing table fails when it is planned.
SELECT coalesce(max(version), 0) FROM schema_version;

-- name: cache_listen
-- The cache's own connection: LISTEN, then count the triggers that send
-- the notifications (schema.sql) in the same round trip.  -> a command
-- result, then 0 count int8 (8 when the schema has them all).
LISTEN conduit_cache; SELECT count(*) FROM pg_trigger
WHERE NOT tgisinternal AND tgname IN
    ('conduit_cache_users', 'conduit_cache_users_delete', 'conduit_cache_follows',
     'conduit_cache_tags', 'conduit_cache_articles', 'conduit_cache_article_tags',
     'conduit_cache_favorites_ins', 'conduit_cache_favorites_del');

-- name: cache_keepalive
-- The LISTEN connection's keepalive: an answer proves it is alive.
SELECT 1;

-- name: ceiling_backend_pid
-- conduit-bench ceiling: the backend, whose parent is the postmaster.
SELECT pg_backend_pid();

-- name: ceiling_seeded_hash
-- conduit-bench ceiling: the first user's hash, whose cost the logins pay.
SELECT password_hash FROM users ORDER BY id LIMIT 1;

-- name: seed_session
-- conduit-seed's session: nothing waits for the WAL flush at the commit,
-- and the index builds and the recount's aggregates get memory enough to
-- sort and hash in one pass.
SET synchronous_commit = off; SET maintenance_work_mem = '1GB'; SET work_mem = '256MB';

-- name: seed_lz4
-- Bodies over ~2 kB are compressed as they are stored: lz4 does it several
-- times faster than the default pglz.  A server built without lz4 refuses.
SET default_toast_compression = lz4;

-- name: seed_begin
BEGIN;

-- name: seed_notices_off
-- The cascades' notices list every foreign key: not worth a screen.
SET LOCAL client_min_messages = warning;

-- name: seed_notices_on
SET LOCAL client_min_messages = notice;

-- name: seed_stripes
-- $1 articles int8.  The global article count's 16 stripes (row id % 16):
-- stripe s holds the ids 1..$1 with id % 16 = s.
UPDATE article_count_stripes
SET n = $1::int8 / 16 + CASE WHEN stripe BETWEEN 1 AND $1::int8 % 16 THEN 1 ELSE 0 END;

-- name: seed_vacuum
VACUUM (ANALYZE);

-- name: seed_database_size
-- -> 0 bytes int8.
SELECT pg_database_size(current_database());
