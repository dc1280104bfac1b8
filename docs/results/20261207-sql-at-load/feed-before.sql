-- name: articles_feed
-- read-only
-- $1 viewer int8 (required), $2 limit int8, $3 offset int8.
-- -> as articles_list (author_following is true on every row, unless an
-- unfollow commits meanwhile).  The count is the sum of the followees'
-- article counters.  The page takes the newest (limit + offset) of each
-- followee from the author index (index only), merges them, then reads
-- only the page's articles: its cost grows with the number of followees
-- times (limit + offset), never with their total number of articles.
WITH me AS MATERIALIZED (
    -- The caller gone (see the top): one probe, whatever reads it.
    SELECT $1::int8 IS NOT NULL
           AND NOT EXISTS (SELECT FROM users v WHERE v.id = $1::int8) AS caller_gone
), fl AS MATERIALIZED (
    SELECT f.followee_id FROM follows f WHERE f.follower_id = $1::int8
), cnt AS (
    SELECT coalesce(sum(u.article_count), 0)::int8 AS n
      FROM fl JOIN users u ON u.id = fl.followee_id
), top AS (
    SELECT x.id, x.created_at
      FROM fl
     CROSS JOIN LATERAL (
           SELECT a.id, a.created_at
             FROM articles a
            WHERE a.author_id = fl.followee_id
            ORDER BY a.created_at DESC, a.id DESC
            LIMIT $2::int8 + $3::int8) x
     ORDER BY x.created_at DESC, x.id DESC
     LIMIT $2::int8 OFFSET $3::int8
), page AS (
    SELECT a.id, a.slug, a.title, a.description, a.created_at, a.updated_at,
           a.favorites_count, a.author_id
      -- The cap (see the top).
      FROM (SELECT * FROM top LIMIT 100) t
      JOIN articles a ON a.id = t.id
), tl AS (
    SELECT atg.article_id, string_agg(t.name, E'\x1f' ORDER BY t.name COLLATE "C") AS names
      FROM page p
      JOIN article_tags atg ON atg.article_id = p.id
      JOIN tags t ON t.id = atg.tag_id
     GROUP BY atg.article_id
)
SELECT p.slug, p.title, p.description,
       coalesce(tl.names, '') AS tag_list,
       p.created_at, p.updated_at,
       coalesce((SELECT true FROM favorites f
                  WHERE f.user_id = $1::int8 AND f.article_id = p.id), false) AS favorited,
       p.favorites_count,
       u.username, u.bio, u.image,
       coalesce((SELECT true FROM follows fo
                  WHERE fo.follower_id = $1::int8 AND fo.followee_id = p.author_id), false) AS following,
       c.n AS articles_count,
       me.caller_gone,
       p.id AS article_id, p.author_id
  FROM cnt c
 CROSS JOIN me
  LEFT JOIN (page p
             JOIN users u ON u.id = p.author_id
             LEFT JOIN tl ON tl.article_id = p.id) ON true
 ORDER BY p.created_at DESC, p.id DESC;

