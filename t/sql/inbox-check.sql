-- inbox-check.sql: the feed inbox's invariant ("The feed inbox" in
-- sql/schema.sql) checked against the base tables, whatever the reads:
-- one number, the violations found (0 when the inbox is exact).  Each
-- term counts one kind:
--   1. a reader who follows somebody without a feed_readers row;
--   2. a feed_readers.article_count that is not the number of articles
--      of the reader's followees;
--   3. a held that is not the reader's rows in feed_inbox, or over the
--      bound (keep + slack);
--   4. an inbox row that is not in the reader's feed;
--   5. a feed article at or above the reader's horizon missing from it;
--   6. an inbox row below the horizon;
--   7. inbox rows of a reader without a feed_readers row.
-- t/integration/feed_inbox.sh and t/integration/initdb.sh run it.
WITH feed AS MATERIALIZED (
    SELECT f.follower_id AS reader_id, a.created_at, a.id
      FROM follows f JOIN articles a ON a.author_id = f.followee_id
), n AS (
    SELECT reader_id, count(*) AS n FROM feed GROUP BY reader_id
), held AS (
    SELECT reader_id, count(*) AS k FROM feed_inbox GROUP BY reader_id
)
SELECT (SELECT count(*)
          FROM (SELECT DISTINCT follower_id AS reader_id FROM follows) r
          LEFT JOIN feed_readers s USING (reader_id)
         WHERE s.reader_id IS NULL)
     + (SELECT count(*)
          FROM feed_readers s LEFT JOIN n USING (reader_id)
         WHERE s.article_count <> coalesce(n.n, 0))
     + (SELECT count(*)
          FROM feed_readers s LEFT JOIN held h USING (reader_id)
         WHERE s.held <> coalesce(h.k, 0)
            OR s.held > conduit_inbox_keep() + conduit_inbox_slack())
     + (SELECT count(*)
          FROM feed_inbox i
         WHERE NOT EXISTS (SELECT 1 FROM feed x
                            WHERE x.reader_id = i.reader_id AND x.id = i.article_id
                              AND x.created_at = i.created_at))
     + (SELECT count(*)
          FROM feed x JOIN feed_readers s USING (reader_id)
         WHERE (x.created_at, x.id) >= (s.horizon_at, s.horizon_id)
           AND NOT EXISTS (SELECT 1 FROM feed_inbox i
                            WHERE i.reader_id = x.reader_id AND i.created_at = x.created_at
                              AND i.article_id = x.id))
     + (SELECT count(*)
          FROM feed_inbox i JOIN feed_readers s USING (reader_id)
         WHERE (i.created_at, i.article_id) < (s.horizon_at, s.horizon_id))
     + (SELECT count(*)
          FROM feed_inbox i
         WHERE NOT EXISTS (SELECT 1 FROM feed_readers s WHERE s.reader_id = i.reader_id))
       AS violations;
