#!/bin/sh
# conduit-seed against a real PostgreSQL and a real conduitd, at a tiny
# scale (0.002: 200 users, 1,000 articles, 10,000 favorites, 5,000
# comments, 4,000 follows): exact row counts, counters that match the rows,
# every name of the documented scheme present, the same tables for the same
# seed and other ones for another seed, the skew, refusals that change
# nothing, clear errors for bad arguments, and the API serving the data to
# a seeded user logging in with "password".
. "$top_srcdir/t/lib.sh"
PG_NO_SCHEMA=1 pg_start
SEED=${CONDUIT_SEED:-$(pwd)/conduit-seed}
S=0.002
q() { psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }
conn() { echo "host=$PGHOST port=$PGPORT user=postgres dbname=$1"; }

# Every table, in key order, as one checksum (schema_version holds the
# time of the load, so it is left out).
digest() {
    for t in "users ORDER BY id" "articles ORDER BY id" "tags ORDER BY id" \
        "article_tags ORDER BY article_id, tag_id" "favorites ORDER BY user_id, article_id" \
        "follows ORDER BY follower_id, followee_id" "comments ORDER BY id" \
        "article_count_stripes ORDER BY stripe" "feed_readers ORDER BY reader_id" \
        "feed_inbox ORDER BY reader_id, created_at, article_id"; do
        q -d "$1" -c "COPY (SELECT * FROM $t) TO STDOUT"
    done | md5sum | cut -d' ' -f1
}
tables_in() { q -d "$1" -c "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'"; }

# ---------------------------------------------------------------- bad input
"$SEED" --scale 0 --db "$DB" >"$T/out" 2>&1
is "--scale 0 exits 2" "$?" 2
check "saying what is wrong" grep -q -- '--scale must be a number in (0, 100]' "$T/out"
"$SEED" --db "$DB" >"$T/out" 2>&1
is "no --scale exits 2" "$?" 2
check "saying it is required" grep -q -- '--scale is required' "$T/out"
"$SEED" --scale 1 --seed -3 --db "$DB" >"$T/out" 2>&1
is "a negative seed exits 2" "$?" 2
"$SEED" --scale 1 --bogus >"$T/out" 2>&1
is "an unknown argument exits 2" "$?" 2
check "naming it" grep -q 'unknown argument "--bogus"' "$T/out"
"$SEED" --scale 0.0001 --db "$DB" >"$T/out" 2>&1
is "a scale too small for distinct follows exits 2" "$?" 2
check "saying so" grep -q 'too small' "$T/out"
"$SEED" --scale $S --db "host=$T/nowhere port=1 user=postgres dbname=conduit" >"$T/out" 2>&1
is "an unreachable database exits 1" "$?" 1
check "saying it cannot connect" grep -q 'cannot connect' "$T/out"
is "bad arguments created nothing" "$(tables_in conduit)" 0

# ---------------------------------------------------------------- a load
"$SEED" --scale $S --seed 1 --db "$DB" >"$T/load.out" 2>"$T/load.err"
is "a load into an empty database exits 0" "$?" 0
check "progress names each stage with its rows and rate" \
    grep -Eq 'favorites +10000 rows +[0-9.]+ s +[0-9]+ rows/s' "$T/load.err"
check "the summary gives the rows per table" grep -Eq '^  comments +5000$' "$T/load.out"
check "and the database size" grep -q 'database size' "$T/load.out"
check "the counters needed no fixing (no recount notice)" sh -c "! grep -q recount '$T/load.err'"
is "users" "$(q -c 'SELECT count(*) FROM users')" 200
is "articles" "$(q -c 'SELECT count(*) FROM articles')" 1000
is "favorites" "$(q -c 'SELECT count(*) FROM favorites')" 10000
is "comments" "$(q -c 'SELECT count(*) FROM comments')" 5000
is "follows" "$(q -c 'SELECT count(*) FROM follows')" 4000
is "tags" "$(q -c 'SELECT count(*) FROM tags')" 200
is "1 to 3 tags an article" \
    "$(q -c 'SELECT min(n)::text || max(n)::text FROM (SELECT count(*) n FROM article_tags GROUP BY article_id) s')" 13
is "every article has tags" "$(q -c 'SELECT count(DISTINCT article_id) FROM article_tags')" 1000
is "nobody follows themselves" "$(q -c 'SELECT count(*) FROM follows WHERE follower_id = followee_id')" 0
# conduit_recount() returns how many counters were wrong: every count the
# API reports (favoritesCount, articlesCount by tag, author, favoriter,
# feed) comes from these counters.
is "every counter matches the rows" "$(q -c 'SELECT conduit_recount()')" 0
is "the triggers are in place (counters, feed inbox)" \
    "$(q -c "SELECT count(*) FROM pg_trigger WHERE tgname LIKE 'zz\\_%'")" 14
is "the feed inbox is filled, every reader's, exactly" \
    "$(q -c "SELECT count(*) FROM feed_readers") $(q -f "$top_srcdir/t/sql/inbox-check.sql")" \
    "$(q -c "SELECT count(DISTINCT follower_id) FROM follows") 0"
is "and the cache notification triggers (worker/cache_sync.c looks for them)" \
    "$(q -c "SELECT count(*) FROM pg_trigger WHERE tgname LIKE 'conduit\\_cache\\_%'")" 8
is "sequences continue after the loaded ids" \
    "$(q -c "SELECT nextval(pg_get_serial_sequence('articles', 'id'))")" 1001
check "the tables are vacuumed (visibility map set)" \
    [ "$(q -c "SELECT relallvisible > 0 FROM pg_class WHERE relname = 'favorites'")" = t ]
is "timestamps within the two years" \
    "$(q -c "SELECT min(created_at) >= '2023-01-01' AND max(created_at) < '2025-01-02' FROM articles")" t
is "comments after their article" \
    "$(q -c 'SELECT count(*) FROM comments c JOIN articles a ON a.id = c.article_id WHERE c.created_at <= a.created_at')" 0
is "bodies of a few hundred to a few thousand characters" \
    "$(q -c 'SELECT min(length(body)) >= 250 AND max(length(body)) > 2000 AND avg(length(body)) BETWEEN 800 AND 1600 FROM articles')" t

# The skew: the top is far above the median.
top=$(q -c 'SELECT max(n) FROM (SELECT count(*) n FROM follows GROUP BY followee_id) s')
med=$(q -c 'SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY n) FROM (SELECT count(*) n FROM follows GROUP BY followee_id) s')
note "followers: top $top, median $med"
check "the most followed user has over 5 times the median followers" [ "$top" -gt $((5 * med)) ]
top=$(q -c 'SELECT max(favorites_count) FROM articles')
med=$(q -c 'SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY favorites_count) FROM articles')
note "favorites: top $top, median $med"
check "the most favorited article has over 10 times the median" [ "$top" -gt $((10 * med)) ]
top=$(q -c 'SELECT max(n) FROM (SELECT count(*) n FROM comments GROUP BY article_id) s')
note "comments on the most commented article: $top"
check "one article has over 10 times the mean comments" [ "$top" -gt 50 ]

# Every name the documented scheme computes is there, and no other.
"$SEED" --list articles --scale $S --seed 1 | cut -f2 | LC_ALL=C sort >"$T/want"
q -c 'SELECT slug FROM articles' | LC_ALL=C sort >"$T/got"
is "the scheme lists 1000 slugs" "$(wc -l <"$T/want" | tr -d ' ')" 1000
check "every slug of the scheme exists" cmp -s "$T/want" "$T/got"
"$SEED" --list users --scale $S --seed 1 | cut -f1-3 | LC_ALL=C sort >"$T/want"
q -F "$(printf '\t')" -c 'SELECT id, username, email FROM users' | LC_ALL=C sort >"$T/got"
check "every user id, username and email of the scheme exists" cmp -s "$T/want" "$T/got"
"$SEED" --list tags --scale $S --seed 1 | LC_ALL=C sort >"$T/want"
q -F "$(printf '\t')" -c 'SELECT id, name FROM tags' | LC_ALL=C sort >"$T/got"
check "every tag of the scheme exists" cmp -s "$T/want" "$T/got"

# ---------------------------------------------------------------- determinism
first=$(digest conduit)
q -d postgres -c 'CREATE DATABASE same' -c 'CREATE DATABASE other' >/dev/null
"$SEED" --scale $S --seed 1 --db "$(conn same)" -q >/dev/null 2>&1
is "a second database with the same seed loads" "$?" 0
is "and has identical tables" "$(digest same)" "$first"
"$SEED" --scale $S --seed 2 --db "$(conn other)" -q >/dev/null 2>&1
is "another seed loads" "$?" 0
check "and has other tables" [ "$(digest other)" != "$first" ]
check "other usernames" [ "$(q -d other -c 'SELECT username FROM users WHERE id = 1')" != \
    "$(q -c 'SELECT username FROM users WHERE id = 1')" ]

# ---------------------------------------------------------------- refusals
"$SEED" --scale $S --seed 2 --db "$DB" >"$T/out" 2>&1
is "a database with data is refused (exit 3)" "$?" 3
check "saying it holds data and how to replace it" grep -q 'already holds data.*--reset' "$T/out"
is "and nothing changed" "$(digest conduit)" "$first"
"$SEED" --scale $S --seed 2 --db "$DB" --reset -q >/dev/null 2>&1
is "--reset replaces it" "$?" 0
is "with the other seed's tables" "$(digest conduit)" "$(digest other)"
"$SEED" --scale $S --seed 1 --db "$DB" --reset -q >/dev/null 2>&1
is "--reset back to seed 1 gives the first tables again" "$(digest conduit)" "$first"

# An empty schema (conduitd --init-db) is loaded into without --reset.
q -d postgres -c 'CREATE DATABASE fresh' >/dev/null
"$CONDUITD" --init-db --db "$(conn fresh)" --dev >/dev/null 2>&1
"$SEED" --scale $S --db "$(conn fresh)" -q >/dev/null 2>&1
is "an empty conduitd schema is seeded without --reset" "$?" 0
is "identically" "$(digest fresh)" "$first"

# Someone else's table of the same name: never dropped.
q -d postgres -c 'CREATE DATABASE foreign_db' >/dev/null
q -d foreign_db -c 'CREATE TABLE users (name text)' -c "INSERT INTO users VALUES ('keep me')"
"$SEED" --scale $S --db "$(conn foreign_db)" --reset >"$T/out" 2>&1
is "a foreign users table is refused, even with --reset (exit 3)" "$?" 3
check "saying why" grep -q 'no conduitd schema' "$T/out"
is "and it is untouched" "$(q -d foreign_db -c 'SELECT name FROM users')" "keep me"

# A load that fails midway changes nothing: a read-only session.
"$SEED" --scale $S --db "$(conn conduit) options='-c default_transaction_read_only=on'" \
    --reset >"$T/out" 2>&1
is "a failing load exits 1" "$?" 1
check "saying nothing was changed" grep -q 'nothing was changed' "$T/out"
is "and nothing was" "$(digest conduit)" "$first"

# ---------------------------------------------------------------- the API
conduitd_start -w 1
user=$(q -c 'SELECT id FROM users ORDER BY favorite_count DESC, id LIMIT 1')
email=$(q -c "SELECT email FROM users WHERE id = $user")
name=$(q -c "SELECT username FROM users WHERE id = $user")
http POST /api/users/login "{\"user\":{\"email\":\"$email\",\"password\":\"password\"}}"
is "a seeded user logs in with \"password\"" "$STATUS" 200
token=$(printf '%s' "$BODY" | jq -r .user.token)
http POST /api/users/login "{\"user\":{\"email\":\"$email\",\"password\":\"passw0rd\"}}"
check "and not with another password" [ "$STATUS" = 401 ] || [ "$STATUS" = 403 ] || [ "$STATUS" = 422 ]
http GET /api/user "" "$token"
is "GET /api/user is that user" "$(printf '%s' "$BODY" | jq -r .user.username)" "$name"

feed_count=$(q -c "SELECT count(*) FROM articles a JOIN follows f ON f.followee_id = a.author_id WHERE f.follower_id = $user")
http GET '/api/articles/feed?limit=10&offset=0' "" "$token"
is "the feed answers" "$STATUS" 200
is "its articlesCount is the followees' articles" "$(printf '%s' "$BODY" | jq .articlesCount)" "$feed_count"
is "with a page of 10" "$(printf '%s' "$BODY" | jq '.articles | length')" 10
check "all by followed authors" [ "$(printf '%s' "$BODY" | jq '[.articles[].author.following] | all')" = true ]

fav_count=$(q -c "SELECT count(*) FROM favorites WHERE user_id = $user")
http GET "/api/articles?favorited=$name&limit=5" "" "$token"
is "the favorites tab counts the user's favorites" "$(printf '%s' "$BODY" | jq .articlesCount)" "$fav_count"
check "all favorited" [ "$(printf '%s' "$BODY" | jq '[.articles[].favorited] | all')" = true ]

slug=$("$SEED" --list articles --scale $S --seed 1 | sed -n 500p | cut -f2)
http GET "/api/articles/$slug" "" "$token"
is "an article of the scheme is served" "$STATUS" 200
is "with its favoritesCount" "$(printf '%s' "$BODY" | jq .article.favoritesCount)" \
    "$(q -c "SELECT count(*) FROM favorites f JOIN articles a ON a.id = f.article_id WHERE a.slug = '$slug'")"
hot=$(q -c 'SELECT a.slug FROM articles a JOIN comments c ON c.article_id = a.id GROUP BY a.slug ORDER BY count(*) DESC LIMIT 1')
http GET "/api/articles/$hot/comments"
is "the most commented article's comments are served (the newest 100 at most)" \
    "$(printf '%s' "$BODY" | jq '.comments | length')" \
    "$(q -c "SELECT least(100, count(*)) FROM comments c JOIN articles a ON a.id = c.article_id WHERE a.slug = '$hot'")"
http GET '/api/articles?limit=1'
is "the global list counts every article" "$(printf '%s' "$BODY" | jq .articlesCount)" 1000
http GET /api/tags
is "the tag list has every used tag" "$(printf '%s' "$BODY" | jq '.tags | length')" \
    "$(q -c 'SELECT count(DISTINCT tag_id) FROM article_tags')"
done_testing
