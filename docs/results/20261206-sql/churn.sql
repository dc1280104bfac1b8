-- churn.sql: what a few minutes of the benchmark's favorites do to the
-- tables the lists read, on a copy of the dataset (never on the one the
-- benchmarks use).  Autovacuum is turned off on the four tables first, so
-- the state stays put while it is measured; VACUUM them afterwards for the
-- clean state.  Run with psql -v batches=30.  30 batches of 1,000 favorites given by random users to
-- articles drawn with a skew (low ids most), and of up to 1,000 taken back:
-- every favorite rewrites its article's row (favorites_count), so the
-- visibility map of those article pages, and of the favorites pages
-- written, is cleared, and the index-only scans fetch from the heap again.
ALTER TABLE favorites SET (autovacuum_enabled = false);
ALTER TABLE articles SET (autovacuum_enabled = false);
ALTER TABLE article_tags SET (autovacuum_enabled = false);
ALTER TABLE follows SET (autovacuum_enabled = false);
SELECT setseed(0.17);
-- The 30 pairs, one statement each (autocommit), as they were run.
SELECT v.s
  FROM generate_series(1, :'batches'::int) AS i,
       LATERAL (VALUES
         (1, 'INSERT INTO favorites (user_id, article_id, created_at)
              SELECT DISTINCT ON (u, a.id) u, a.id, a.created_at
                FROM (SELECT 1 + floor(random() * 100000)::int8 AS u,
                             1 + floor(500000 * random() ^ 2)::int8 AS aid
                        FROM generate_series(1, 1000)) s
                JOIN articles a ON a.id = s.aid
              ON CONFLICT DO NOTHING'),
         (2, 'DELETE FROM favorites f
               USING (SELECT 1 + floor(random() * 100000)::int8 AS u
                        FROM generate_series(1, 1000)) s
              WHERE f.user_id = s.u
                AND f.article_id = (SELECT article_id FROM favorites g
                                     WHERE g.user_id = s.u LIMIT 1)')) AS v(k, s)
 ORDER BY i, v.k \gexec
