#!/bin/sh
# sql/schema.sql and sql/queries.sql against a real PostgreSQL: every query
# prepares (as the server prepares it) with the declared parameter count and
# the result contract of t/sql/contract.txt; schema.sql refuses a second
# application without damage; then a small fixture, written through the
# queries themselves, checks their semantics (flags from two points of
# view, ordering, limit/offset, the empty-page row, 403/404/409 signals,
# slugs, tags) and that every counter stays exact after inserts, deletes,
# favorites and concurrent writes, and that conduit_recount() repairs them.
. "$top_srcdir/t/lib.sh"

command -v pgbench >/dev/null 2>&1 || PATH=$PG_BINDIR:$PATH
pg_start

# ------------------------------------------------------------ build, prepare
if sh "$top_srcdir/t/sql/prepare-all.sh" -b "$T/q" >"$T/build.log" 2>&1; then
    pass "gen-queries.awk output compiles with -Wall -Wextra -Wpedantic -Werror"
else
    sed 's/^/# /' "$T/build.log"
    bail "cannot build the query table"
fi
Q=$T/q/qtool
# gen-queries.awk refuses a malformed file, writes nothing, says where.
awk_bad() { # awk_bad DESCRIPTION TEXT EXPECTED-MESSAGE
    printf '%s' "$2" >"$T/bad.sql"
    rm -f "$T/bad.h" "$T/bad.c"
    awk -v out_h="$T/bad.h" -v out_c="$T/bad.c" -f "$top_srcdir/sql/c-string.awk" \
        -f "$top_srcdir/sql/gen-queries.awk" "$T/bad.sql" 2>"$T/bad.err"
    _rc=$?
    if [ "$_rc" = 1 ] && [ ! -e "$T/bad.h" ] && [ ! -e "$T/bad.c" ] && grep -q "$3" "$T/bad.err"; then
        pass "gen-queries.awk refuses $1"
    else
        fail "gen-queries.awk refuses $1: rc $_rc, $(cat "$T/bad.err")"
    fi
}
awk_bad "a duplicate name" '-- name: a
SELECT 1;
-- name: a
SELECT 2;
' "bad.sql:3: duplicate query name 'a'"
awk_bad "an unterminated query" '-- name: a
SELECT 1
' "not terminated"
awk_bad "text outside a query" '-- name: a
SELECT 1;
SELECT 2;
' "bad.sql:3: SQL text after the end of query a"
awk_bad "a name not in snake_case" '-- name: Bad
SELECT 1;
' "bad query name 'Bad'"
awk_bad "an unknown fragment" '-- name: a
-- use: nothing
SELECT 1;
' "bad.sql:2: no fragment 'nothing' defined before this line"
awk_bad "a placeholder left without a value" '-- fragment: f
SELECT {x}
-- name: a
-- use: f
;
' "bad.sql:4: fragment f wants a value for {x}"
awk_bad "a value no placeholder takes" '-- fragment: f
SELECT {x}
-- name: a
-- use: f x=1 y=2
;
' "bad.sql:4: fragment f has no {y}"
awk_bad "a fragment no statement uses" '-- fragment: f
SELECT 1
-- name: a
SELECT 2;
' "bad.sql:1: fragment f is used by no statement"
"$Q" describe >"$T/describe.txt" 2>&1
is "every query prepares with the nparams of the table" "$?" 0
grep -v '^#' "$top_srcdir/t/sql/contract.txt" >"$T/contract.txt"
if diff -u "$T/contract.txt" "$T/describe.txt" >"$T/contract.diff"; then
    pass "parameter and result types match t/sql/contract.txt"
else
    sed 's/^/# /' "$T/contract.diff"
    fail "parameter and result types match t/sql/contract.txt"
fi
is "one description per query of queries.sql" "$(wc -l <"$T/describe.txt" | tr -d ' ')" \
    "$(grep -c '^-- name:' "$top_srcdir/sql/queries.sql")"

# sql STATEMENT: one psql statement, unaligned, NULL shown as NULL.
sql() { psql -X -q -At -v ON_ERROR_STOP=1 -P null=NULL -c "$1" 2>>"$T/psql.err"; }
# q NAME PARAM...: one prepared query as the server runs it; tag lists
# come back with ',' for the E'\x1f' separator.
q() { "$Q" exec "$@" 2>>"$T/qtool.err" | tr '\037' ','; }
# A write without an Idempotency-Key: its last two parameters (key, fingerprint) NULL.
q_nokey() { q "$@" '\N' '\N'; }
# A read the cache answers: its last parameter, the flags' viewer, is the
# viewer (the last argument given), as the server sends it without a cache.
qr() { eval "_v=\${$#}"; q "$@" "$_v"; }
# Field N of the first row, and field N of every row joined by spaces.
f1() { awk -F'|' -v n="$1" 'NR == 1 { print $n }'; }
fall() { awk -F'|' -v n="$1" '{ printf "%s%s", (NR > 1 ? " " : ""), $n } END { print "" }'; }
US=$(printf '\037')

is "new sessions plan prepared statements generically" "$(sql 'SHOW plan_cache_mode')" \
    force_generic_plan
is "and without JIT" "$(sql 'SHOW jit')" off
is "and with random pages costed as in memory" "$(sql 'SHOW random_page_cost')" 1.1
# Index-only scans need the visibility map kept current (schema.sql, "Vacuum").
is "the tables read by index-only scans are vacuumed after 1 % of changes" \
    "$(sql "SELECT string_agg(relname, ' ' ORDER BY relname) FROM pg_class
             WHERE 'autovacuum_vacuum_scale_factor=0.01' = ANY (reloptions)
               AND 'autovacuum_vacuum_insert_scale_factor=0.01' = ANY (reloptions)")" \
    "article_tags articles favorites feed_inbox feed_readers follows"

# ------------------------------------------------------------ schema twice
sql "INSERT INTO users (username, email, password_hash) VALUES ('canary', 'canary@x', 'h')"
before=$(sql "SELECT count(*) FROM pg_class WHERE relnamespace = 'public'::regnamespace")
psql -X -q -v ON_ERROR_STOP=1 -f "$top_srcdir/sql/schema.sql" >"$T/twice.log" 2>&1
check "applying schema.sql a second time fails" [ $? -ne 0 ]
check "saying it is already applied" grep -q 'schema already applied (version 3)' "$T/twice.log"
is "no relation was added or dropped" \
    "$(sql "SELECT count(*) FROM pg_class WHERE relnamespace = 'public'::regnamespace")" "$before"
is "the data is intact" "$(sql "SELECT count(*) FROM users WHERE username = 'canary'")" 1
is "schema_version still says 1, 2 and 3, once each" "$(sql 'SELECT count(*)::text || version FROM schema_version GROUP BY version ORDER BY version' | tr '\n' ' ')" "11 12 13 "
is "the schema_version query" "$(q schema_version)" 3
sql "DELETE FROM users WHERE username = 'canary'"

# ------------------------------------------------------------ users
A=$(q_nokey user_insert alice Alice@Example.COM hash-a | f1 1)
B=$(q_nokey user_insert bob bob@example.com hash-b | f1 1)
C=$(q_nokey user_insert carol carol@example.com hash-c | f1 1)
D=$(q_nokey user_insert dave dave@example.com hash-d | f1 1)
is "user_insert returns four ids" "$(echo "$A $B $C $D" | awk '{ print NF }')" 4
is "user_insert returns the user columns" "$(q user_by_id "$A")" "$A|alice|Alice@Example.COM|NULL|NULL"
is "a taken username names users_username_key" "$(q_nokey user_insert alice other@x h)" \
    "ERROR 23505 users_username_key"
is "a taken email, in another case, names users_email_key" \
    "$(q_nokey user_insert alice2 ALICE@example.com h)" "ERROR 23505 users_email_key"
is "login finds the email in any case, keeps its case" "$(q user_by_email alice@EXAMPLE.com)" \
    "$A|alice|Alice@Example.COM|NULL|NULL|hash-a"
is "login with an unknown email: zero rows" "$(q user_by_email nobody@example.com)" ""
is "user_update sets bio and image, leaves the rest" \
    "$(q user_update "$B" '\N' '\N' '\N' 'I am bob' 'http://img/b' )" \
    "$B|bob|bob@example.com|I am bob|http://img/b|bob"
is "user_update with '' clears image" "$(q user_update "$B" '\N' '\N' new-hash '\N' '')" \
    "$B|bob|bob@example.com|I am bob|NULL|bob"
is "and the new password hash is stored" "$(q user_by_email bob@example.com | f1 6)" new-hash
is "user_update to a taken username names users_username_key" \
    "$(q user_update "$B" '\N' carol '\N' '\N' '\N')" "ERROR 23505 users_username_key"
is "user_update to a taken email names users_email_key" \
    "$(q user_update "$B" CAROL@example.com '\N' '\N' '\N' '\N')" "ERROR 23505 users_email_key"
is "user_update of an unknown id: zero rows" "$(q user_update 999999 '\N' '\N' '\N' x '\N')" ""
is "user_update keeping one's own email (new case) works" \
    "$(q user_update "$C" Carol@Example.com '\N' '\N' '\N' '\N' | f1 3)" Carol@Example.com

# ------------------------------------------------------------ profiles
is "follow: alice follows bob" "$(q follow bob "$A")" "bob|I am bob|NULL|t|f|f"
is "follow again is idempotent" "$(q follow bob "$A")" "bob|I am bob|NULL|t|f|f"
is "only one follow row" "$(sql "SELECT count(*) FROM follows WHERE follower_id = $A")" 1
q follow carol "$A" >/dev/null
q follow alice "$B" >/dev/null
is "following oneself: is_self, nothing written" "$(q follow alice "$A")" "alice|NULL|NULL|f|t|f"
is "no self follow row" "$(sql "SELECT count(*) FROM follows WHERE follower_id = followee_id")" 0
is "follow an unknown user: zero rows (404)" "$(q follow nobody "$A")" ""
B_ID=$(sql "SELECT id FROM users WHERE username = 'bob'")
is "profile of bob seen by alice" "$(q profile_get bob "$A")" "bob|I am bob|NULL|t|$B_ID|f"
is "profile of bob seen by carol" "$(q profile_get bob "$C")" "bob|I am bob|NULL|f|$B_ID|f"
is "profile of bob seen anonymously" "$(q profile_get bob '\N')" "bob|I am bob|NULL|f|$B_ID|f"
row=$(q profile_followees bob "$A" 10)
is "profile_followees: bob seen by alice" "$(echo "$row" | cut -d'|' -f1-5)" "bob|I am bob|NULL|t|$B_ID"
is "profile_followees: with alice's followees (bob, carol)" \
    "$(echo "$row" | f1 6 | tr ',' '\n' | sort | paste -sd, -)" \
    "$(sql "SELECT id FROM users WHERE username IN ('bob', 'carol')" | sort | paste -sd, -)"
is "profile_followees: NULL followees past the limit" "$(q profile_followees bob "$A" 1 | f1 6)" NULL
is "profile_followees: '' for a viewer who follows nobody" "$(q profile_followees bob "$D" 10 | f1 6)" ""
is "profile_followees of an unknown user: zero rows" "$(q profile_followees nobody "$A" 10)" ""
is "profile of an unknown user: zero rows" "$(q profile_get nobody "$A")" ""
q follow dave "$C" >/dev/null
is "unfollow" "$(q unfollow dave "$C")" "dave|NULL|NULL|f|f|f"
is "unfollow again is idempotent" "$(q unfollow dave "$C")" "dave|NULL|NULL|f|f|f"
is "carol follows nobody now" "$(sql "SELECT count(*) FROM follows WHERE follower_id = $C")" 0
is "unfollow an unknown user: zero rows" "$(q unfollow nobody "$C")" ""

# ------------------------------------------------------------ articles
r=$(q_nokey article_insert "$B" dragons 'Dragons' 'About dragons' 'Body 1' "training${US}dragons${US}dragons${US}")
is "article_insert: the base slug when free, tags sorted, deduplicated, empty dropped" \
    "$r" "dragons|Dragons|About dragons|dragons,training|$(echo "$r" | f1 5)|$(echo "$r" | f1 6)|f|0|bob|I am bob|NULL|f|Body 1"
s2=$(q_nokey article_insert "$C" dragons 'Dragons!' 'Again' 'Body 2' dragons | f1 1)
is "the same base again gets base-<id in base 36>" "$s2" \
    "$(sql "SELECT 'dragons-' || conduit_base36(id) FROM articles WHERE title = 'Dragons!'")"
is "conduit_base36" "$(sql "SELECT conduit_base36(0) || ' ' || conduit_base36(35) || ' ' || conduit_base36(36) || ' ' || conduit_base36(9223372036854775807)")" \
    "0 z 10 1y2p0ij32e8e7"
is "tags sort by byte order" \
    "$(q_nokey article_insert "$A" zoo 'Zoo' 'Z' 'Body 3' "zoo${US}Apple${US}dragons" | f1 4)" "Apple,dragons,zoo"
is "no tags (NULL)" "$(q_nokey article_insert "$B" no-tags 'No tags' 'N' 'Body 4' '\N' | f1 4)" ""
is "no tags ('')" "$(q_nokey article_insert "$D" five 'Five' 'F' 'Body 5' '' | f1 4)" ""
# Dates: dragons oldest, then dragons-x, then zoo and no-tags at the same
# instant (ties go by id, newest id first), five newest.
sql "UPDATE articles SET created_at = timestamptz '2026-01-01' + CASE slug
        WHEN 'dragons' THEN interval '1 day' WHEN 'zoo' THEN interval '3 days'
        WHEN 'no-tags' THEN interval '3 days' WHEN 'five' THEN interval '4 days'
        ELSE interval '2 days' END"
is "the article trigger keeps the created_at copies" \
    "$(sql "SELECT count(*) FROM article_tags x JOIN articles a ON a.id = x.article_id WHERE x.created_at <> a.created_at")" 0

# ------------------------------------------------------------ favorites
is "favorite: favorited true, count 1" "$(q favorite dragons "$A" | awk -F'|' '{ print $7 $8 }')" t1
is "favorite again is idempotent" "$(q favorite dragons "$A" | awk -F'|' '{ print $7 $8 }')" t1
is "a second user: count 2" "$(q favorite dragons "$B" | awk -F'|' '{ print $7 $8 }')" t2
q favorite "$s2" "$A" >/dev/null
q favorite zoo "$C" >/dev/null
q favorite five "$C" >/dev/null
is "unfavorite: count down" "$(q unfavorite five "$C" | awk -F'|' '{ print $7 $8 }')" f0
is "unfavorite again is idempotent" "$(q unfavorite five "$C" | awk -F'|' '{ print $7 $8 }')" f0
is "favorite of an unknown article: zero rows (404)" "$(q favorite nope "$A")" ""
is "unfavorite of an unknown article: zero rows (404)" "$(q unfavorite nope "$A")" ""
is "favorites.created_at is the article's" \
    "$(sql "SELECT count(*) FROM favorites f JOIN articles a ON a.id = f.article_id WHERE f.created_at <> a.created_at")" 0

# ------------------------------------------------------------ lists
L() { qr articles_list '\N' '\N' '\N' "$@"; }
is "global list, newest first, ties by id" "$(L 10 0 "$A" | fall 1)" "five no-tags zoo $s2 dragons"
is "articlesCount on every row" "$(L 10 0 "$A" | fall 13)" "5 5 5 5 5"
is "favorited, alice's view" "$(L 10 0 "$A" | fall 7)" "f f f t t"
is "favorited, bob's view" "$(L 10 0 "$B" | fall 7)" "f f f f t"
is "author following, alice's view (she follows bob and carol)" "$(L 10 0 "$A" | fall 12)" "f t f t t"
is "author following, bob's view (he follows alice)" "$(L 10 0 "$B" | fall 12)" "f f t f f"
is "anonymous: all false" "$(L 10 0 '\N' | fall 7)$(L 10 0 '\N' | fall 12)" "f f f f ff f f f f"
is "viewer 0 counts as anonymous" "$(L 10 0 0 | fall 7)" "f f f f f"
is "favoritesCount" "$(L 10 0 "$A" | fall 8)" "0 0 1 1 2"
is "author columns" "$(L 10 0 "$A" | awk -F'|' '$1 == "dragons" { print $9 "|" $10 "|" $11 }')" "bob|I am bob|NULL"
is "tag lists in the list" "$(L 10 0 "$A" | fall 4)" "  Apple,dragons,zoo dragons dragons,training"
is "limit 2 offset 1" "$(L 2 1 "$A" | fall 1)" "no-tags zoo"
is "limit 2 offset 1 keeps the total count" "$(L 2 1 "$A" | fall 13)" "5 5"
is "a page past the end: one row, slug NULL, the count" "$(L 10 10 "$A" | awk -F'|' '{ print NR, $1, $13 }')" "1 NULL 5"
is "the wrong variant for the shape gives zero rows" "$(qr articles_list dragons '\N' '\N' 10 0 "$A")" ""

T1() { qr articles_list_tag "$1" '\N' '\N' "$2" "$3" "$A"; }
is "?tag=dragons" "$(T1 dragons 10 0 | fall 1)" "zoo $s2 dragons"
is "?tag=dragons count" "$(T1 dragons 10 0 | f1 13)" 3
is "?tag=dragons limit 1 offset 1" "$(T1 dragons 1 1 | fall 1)" "$s2"
is "?tag= unknown: empty page, count 0" "$(T1 nosuch 10 0 | awk -F'|' '{ print NR, $1, $13 }')" "1 NULL 0"
is "?tag=dragons, flags from alice's view" "$(T1 dragons 10 0 | fall 7)" "f t t"
A1() { qr articles_list_author '\N' "$1" '\N' 10 0 "$2"; }
is "?author=bob" "$(A1 bob "$A" | fall 1)" "no-tags dragons"
is "?author=bob count" "$(A1 bob "$A" | f1 13)" 2
is "?author=bob, following from alice's and carol's view" "$(A1 bob "$A" | fall 12) $(A1 bob "$C" | fall 12)" "t t f f"
is "?author= unknown: count 0" "$(A1 nobody "$A" | awk -F'|' '{ print NR, $1, $13 }')" "1 NULL 0"
F1() { qr articles_list_favorited '\N' '\N' "$1" 10 0 "$2"; }
is "?favorited=alice" "$(F1 alice "$B" | fall 1)" "$s2 dragons"
is "?favorited=alice count" "$(F1 alice "$B" | f1 13)" 2
is "?favorited=alice, favorited from bob's view" "$(F1 alice "$B" | fall 7)" "f t"
is "?favorited=dave (none)" "$(F1 dave "$B" | awk -F'|' '{ print NR, $1, $13 }')" "1 NULL 0"
M() { qr articles_list_filtered "$1" "$2" "$3" 10 0 "$A"; }
is "?tag=dragons&author=bob" "$(M dragons bob '\N' | awk -F'|' '{ print $1, $13 }')" "dragons 1"
is "?tag=dragons&favorited=alice" "$(M dragons '\N' alice | fall 1) $(M dragons '\N' alice | f1 13)" "$s2 dragons 2"
is "?author=carol&favorited=alice" "$(M '\N' carol alice | awk -F'|' '{ print $1, $13 }')" "$s2 1"
is "all three filters" "$(M dragons bob alice | awk -F'|' '{ print $1, $13 }')" "dragons 1"
is "filters that exclude each other: empty page, count 0" "$(M zoo bob '\N' | awk -F'|' '{ print NR, $1, $13 }')" "1 NULL 0"
is "an unknown filter value: count 0" "$(M dragons nobody '\N' | f1 13)" 0
is "one filter through the filtered variant agrees" "$(M dragons '\N' '\N' | fall 1)" "zoo $s2 dragons"
is "the filtered variant without a filter gives zero rows" "$(M '\N' '\N' '\N')" ""
is "filtered limit 1 offset 1" "$(qr articles_list_filtered dragons '\N' alice 1 1 "$A" | awk -F'|' '{ print $1, $13 }')" "dragons 2"

is "feed of alice (follows bob, carol)" "$(q articles_feed "$A" 10 0 "$A" | fall 1)" "no-tags $s2 dragons"
is "feed count" "$(q articles_feed "$A" 10 0 "$A" | f1 13)" 3
is "feed: following true, favorited hers" "$(q articles_feed "$A" 10 0 "$A" | fall 12) $(q articles_feed "$A" 10 0 "$A" | fall 7)" "t t t f t t"
is "feed limit 1 offset 2" "$(q articles_feed "$A" 1 2 "$A" | fall 1)" "dragons"
is "feed of dave (follows nobody): empty page, count 0" \
    "$(q articles_feed "$D" 10 0 "$D" | awk -F'|' '{ print NR, $1, $13 }')" "1 NULL 0"

is "article_get, alice's view" "$(qr article_get dragons "$A" | awk -F'|' '{ print $1, $4, $7, $8, $9, $12, $13 }')" \
    "dragons dragons,training t 2 bob t Body 1"
is "article_get, anonymous" "$(qr article_get dragons '\N' | awk -F'|' '{ print $7, $12 }')" "f f"
is "article_get of an unknown slug: zero rows" "$(qr article_get nope "$A")" ""
# The flags' viewer NULL (a worker that sets the flags from its cache):
# the flags false, the rest as alice's view, the ids the worker looks up.
is "article_get, alice's view without the flags' viewer" \
    "$(q article_get dragons "$A" '\N' | awk -F'|' '{ print $1, $7, $8, $12, $13, $15, $16 }')" \
    "dragons f 2 f Body 1 $(sql "SELECT id FROM articles WHERE slug = 'dragons'") $B"
is "the lists without the flags' viewer: flags false" \
    "$(q articles_list '\N' '\N' '\N' 10 0 "$A" '\N' | fall 7) $(q articles_feed "$A" 10 0 '\N' | fall 7)" "f f f f f f f f"

# ------------------------------------------------------------ comments
c1=$(q_nokey comment_insert dragons "$C" 'first' | f1 1)
sql "UPDATE comments SET created_at = created_at - interval '1 hour' WHERE id = $c1"
c2=$(q_nokey comment_insert dragons "$B" 'second' | f1 1)
q_nokey comment_insert dragons "$A" 'third' >/dev/null
is "comment_insert returns the comment" "$(q_nokey comment_insert zoo "$B" 'x' | awk -F'|' '{ print $4, $5, $6, $8 }')" "x bob I am bob f"
is "comment_insert on an unknown article: zero rows" "$(q_nokey comment_insert nope "$B" x)" ""

# Idempotency keys (schema.sql, idempotency_keys): the key lands with the
# comment; its replay is the row the insert returned; another request's
# fingerprint and another user's key space are told apart; the key again
# fails on it and stores nothing; past the window it is purged.
r1=$(q comment_insert zoo "$B" keyed k1 fp1)
is "comment_replay: the row comment_insert returned, same request" "$(q comment_replay "$B" k1 fp1)" "$r1|t"
is "comment_replay, another fingerprint: same_request false" "$(q comment_replay "$B" k1 fp2 | awk -F'|' '{ print $NF }')" f
is "comment_replay, another user: no key" "$(q comment_replay "$C" k1 fp1)" ""
n=$(sql "SELECT count(*) FROM comments")
is "comment_insert with a stored key: 23505 on it" "$(q comment_insert zoo "$B" keyed k1 fp1)" \
    "ERROR 23505 idempotency_keys_pkey"
is "and its comment is not stored" "$(sql "SELECT count(*) FROM comments")" "$n"
is "comment_insert on an unknown article stores no key" \
    "$(q comment_insert nope "$B" x k2 fp1; sql "SELECT count(*) FROM idempotency_keys WHERE key = 'k2'")" 0
r2=$(q article_insert "$A" keyed Keyed d b '\N' k3 fp3)
is "article_replay: the row article_insert returned" "$(q article_replay "$A" k3 fp3)" "$r2|t"
u4=$(q user_insert keyuser keyuser@x hash-k k4 fp4 | f1 1)
is "user_replay: the user registered with the key, with its hash" \
    "$(q user_replay 0 k4 fp4 | awk -F'|' '{ print $1, $2, $6, $7 }')" "$u4 keyuser hash-k t"
sql "UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE key IN ('k1', 'k3', 'k4')"
is "a key past the window (24 h): nothing to replay" "$(q comment_replay "$B" k1 fp1)" ""
is "and it is purged, with the other expired ones" "$(sql "SELECT count(*) FROM idempotency_keys")" 0
sql "DELETE FROM comments WHERE body = 'keyed'"
sql "DELETE FROM articles WHERE slug = 'keyed'"
sql "DELETE FROM users WHERE username = 'keyuser'"
is "comments newest first" "$(qr comments_list dragons "$A" | fall 4)" "third second first"
is "comment author following, alice's view" "$(qr comments_list dragons "$A" | fall 8)" "f t t"
is "without the flags' viewer: following false, the authors' ids given" \
    "$(q comments_list dragons "$A" '\N' | fall 8) $(q comments_list dragons "$A" '\N' | fall 10)" "f f f $A $B $C"
is "comments of an article without any: one row, id NULL" "$(qr comments_list five "$A")" "NULL|NULL|NULL|NULL|NULL|NULL|NULL|f|f|NULL"
is "comments of an unknown article: zero rows" "$(qr comments_list nope "$A")" ""
sql "INSERT INTO comments (article_id, author_id, body, created_at)
     SELECT (SELECT id FROM articles WHERE slug = 'five'), $D, 'c' || i,
            timestamptz '2026-02-01' + i * interval '1 minute'
       FROM generate_series(1, 130) AS i"
is "at most the 100 newest comments" "$(qr comments_list five "$A" | wc -l | tr -d ' ')" 100
is "newest first, the oldest 30 left out" "$(qr comments_list five "$A" | awk -F'|' 'NR == 1 || NR == 100 { print $4 }' | tr '\n' ' ')" "c130 c31 "
is "comment_delete by another user: 403 (found, found, not author)" "$(q comment_delete dragons "$c2" "$A")" "t|t|f|f"
is "and the comment stays" "$(sql "SELECT count(*) FROM comments WHERE id = $c2")" 1
is "comment_delete under the wrong article: 404 (comment not found)" "$(q comment_delete zoo "$c2" "$B")" "t|f|f|f"
is "comment_delete of an unknown article: 404" "$(q comment_delete nope "$c2" "$B")" "f|f|f|f"
is "comment_delete of an unknown id: 404" "$(q comment_delete dragons 999999 "$B")" "t|f|f|f"
is "comment_delete by its author: deleted" "$(q comment_delete dragons "$c2" "$B")" "t|t|t|f"
is "gone" "$(sql "SELECT count(*) FROM comments WHERE id = $c2")" 0
is "deleting it again: 404" "$(q comment_delete dragons "$c2" "$B")" "t|f|f|f"

# ------------------------------------------------------------ update, delete
is "article_update by another user: one row, is_author false, nothing else (403)" \
    "$(q article_update dragons "$A" hacked Hacked '\N' '\N' '\N')" \
    "NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|f|f"
is "and nothing changed" "$(sql "SELECT title FROM articles WHERE slug = 'dragons'")" Dragons
is "article_update of an unknown slug: zero rows (404)" "$(q article_update nope "$B" '\N' '\N' x '\N' '\N')" ""
r=$(q article_update dragons "$B" '\N' '\N' 'New description' '\N' '\N')
is "article_update of the description only: slug and tags kept" \
    "$(echo "$r" | awk -F'|' '{ print $1, $3, $4, $7, $8, $13, $14 }')" "dragons New description dragons,training t 2 Body 1 t"
is "a title with the same base keeps the slug" "$(q article_update dragons "$B" dragons 'DRAGONS' '\N' '\N' '\N' | f1 1)" dragons
is "a suffixed slug whose base is unchanged is kept" "$(q article_update "$s2" "$C" dragons 'Dragons?' '\N' '\N' '\N' | f1 1)" "$s2"
sz=$(q article_update no-tags "$B" zoo 'Zoo!' '\N' '\N' "new${US}training" )
is "a new title whose base is taken: base-<id36>; tags replaced" "$(echo "$sz" | awk -F'|' '{ print $1, $2, $4 }')" \
    "$(sql "SELECT 'zoo-' || conduit_base36(id) FROM articles WHERE title = 'Zoo!'") Zoo! new,training"
sn=$(echo "$sz" | f1 1)
is "a free base is taken as is" "$(q article_update "$sn" "$B" fresh-title 'Fresh title' '\N' '\N' '\N' | awk -F'|' '{ print $1, $4 }')" \
    "fresh-title new,training"
is "tags '' removes them all" "$(q article_update fresh-title "$B" '\N' '\N' '\N' '\N' '' | f1 4)" ""
is "tags set again" "$(q article_update fresh-title "$B" '\N' '\N' '\N' '\N' "zoo${US}new" | f1 4)" "new,zoo"
is "the stored tags agree" "$(qr article_get fresh-title "$B" | f1 4)" "new,zoo"
is "article_update's created_at copy of new tags" \
    "$(sql "SELECT count(*) FROM article_tags x JOIN articles a ON a.id = x.article_id WHERE x.created_at <> a.created_at")" 0
is "article_delete by another user: is_author false (403)" "$(q article_delete dragons "$A")" "f|f"
is "and it stays" "$(sql "SELECT count(*) FROM articles WHERE slug = 'dragons'")" 1
is "article_delete of an unknown slug: zero rows (404)" "$(q article_delete nope "$B")" ""
is "article_delete by its author" "$(q article_delete dragons "$B")" "t|f"
is "gone, with its favorites, tags and comments" \
    "$(sql "SELECT count(*) FROM articles WHERE slug = 'dragons'") $(sql "SELECT count(*) FROM favorites f LEFT JOIN articles a ON a.id = f.article_id WHERE a.id IS NULL") $(sql "SELECT count(*) FROM comments WHERE body IN ('first', 'third')")" "0 0 0"

# ------------------------------------------------------------ tags, counters
is "tags: every tag in use, most used first, ties by byte order (dragons 2, zoo 2, Apple 1, new 1)" "$(q tags_list | tr '\n' ' ')" "dragons zoo Apple new "
is "a tag no article uses any more is not listed" "$(sql "SELECT article_count FROM tags WHERE name = 'training'")" 0
counters_ok() {
    sql "SELECT (SELECT sum(n) FROM article_count_stripes) = (SELECT count(*) FROM articles)
        AND NOT EXISTS (SELECT 1 FROM users u WHERE article_count <> (SELECT count(*) FROM articles a WHERE a.author_id = u.id)
                          OR favorite_count <> (SELECT count(*) FROM favorites f WHERE f.user_id = u.id))
        AND NOT EXISTS (SELECT 1 FROM articles a WHERE favorites_count <> (SELECT count(*) FROM favorites f WHERE f.article_id = a.id))
        AND NOT EXISTS (SELECT 1 FROM tags t WHERE article_count <> (SELECT count(*) FROM article_tags x WHERE x.tag_id = t.id))"
}
is "every counter equals its count(*) after the writes above" "$(counters_ok)" t
is "conduit_recount() finds nothing to fix" "$(sql 'SELECT conduit_recount()')" 0
is "global count in the list" "$(L 1 0 "$A" | f1 13)" "$(sql 'SELECT count(*) FROM articles')"

sql "UPDATE article_count_stripes SET n = n + 7 WHERE stripe = 3;
     UPDATE users SET article_count = 42, favorite_count = 0;
     UPDATE articles SET favorites_count = 9;
     UPDATE tags SET article_count = 1;
     UPDATE favorites SET created_at = now();
     UPDATE article_tags SET created_at = now()" 2>/dev/null
check "counters broken on purpose" [ "$(counters_ok)" = f ]
check "conduit_recount() reports the rows it fixed" [ "$(sql 'SELECT conduit_recount()')" -gt 0 ]
is "and every counter is right again" "$(counters_ok)" t
is "the date copies too" "$(sql "SELECT count(*) FROM favorites f JOIN articles a ON a.id = f.article_id WHERE f.created_at <> a.created_at") $(sql "SELECT count(*) FROM article_tags x JOIN articles a ON a.id = x.article_id WHERE x.created_at <> a.created_at")" "0 0"
is "a second conduit_recount() finds nothing" "$(sql 'SELECT conduit_recount()')" 0

# ------------------------------------------------------------ concurrency
# pgbench runs the queries' own text (parameters as pgbench variables, -M
# prepared) from 6 clients at once: favorites and unfavorites of a few hot
# articles by a few users, inserts of articles with overlapping tag sets
# (same base slugs, so the suffix path races too), deletes, comments.
# Afterwards every counter must be exact: no lost update, no deadlock.
for i in $(seq 1 12); do q_nokey article_insert "$A" "$i" "$i" d b "t1${US}t2" >/dev/null; done
sql "INSERT INTO users (username, email, password_hash)
     SELECT 'b' || i, 'b' || i || '@x', 'h' FROM generate_series(1, 8) AS i"
ub=$(sql "SELECT min(id) FROM users WHERE username LIKE 'b_'")
# pgs NAME: a pgbench script running the text of query NAME, its
# parameters replaced by pgbench variables (or literals) as $T/NAME.sed says.
pgs() {
    printf '\\set s random(1, 12)\n\\set u random(%s, %s)\n\\set a %s\n' "$ub" "$((ub + 7))" "$A"
    "$Q" text "$1" | sed -f "$T/$2.sed"
}
cat >"$T/fav.sed" <<'SED'
s/\$1::/:s::/g
s/\$2::/:u::/g
SED
cat >"$T/ins1.sed" <<'SED'
s/\$1::/:a::/g
s/\$2::/:s::/g
s/\$3::/:s::/g
s/\$4::/:s::/g
s/\$5::/:s::/g
s/\$6::text/E't3\\x1ft1\\x1ft2'/g
s/\$7::text/NULL::text/g
s/\$8::text/NULL::text/g
SED
sed 's/t3\\\\x1ft1\\\\x1ft2/t2\\\\x1ft4/' "$T/ins1.sed" >"$T/ins2.sed"
cat >"$T/del.sed" <<'SED'
s/\$1::/:s::/g
s/\$2::/:a::/g
SED
cat >"$T/com.sed" <<'SED'
s/\$1::/:s::/g
s/\$2::/:u::/g
s/\$3::/:s::/g
s/\$4::text/NULL::text/g
s/\$5::text/NULL::text/g
SED
pgs favorite fav >"$T/fav.pgb"
pgs unfavorite fav >"$T/unfav.pgb"
pgs article_insert ins1 >"$T/ins1.pgb"
pgs article_insert ins2 >"$T/ins2.pgb"
pgs article_delete del >"$T/del.pgb"
pgs comment_insert com >"$T/com.pgb"
check "the pgbench scripts use every parameter" sh -c "! grep -q '[$][0-9]' $T/*.pgb"
check "with two different tag sets" sh -c "grep -q 't3.x1ft1.x1ft2' $T/ins1.pgb && grep -q 't2.x1ft4' $T/ins2.pgb"
pgbench -n -M prepared -c 6 -j 2 -t 300 \
    -f "$T/fav.pgb@5" -f "$T/unfav.pgb@4" -f "$T/ins1.pgb@2" -f "$T/ins2.pgb@2" \
    -f "$T/del.pgb@1" -f "$T/com.pgb@2" conduit >"$T/pgbench.log" 2>&1
rc=$?
check "concurrent writes: pgbench ran (rc $rc)" [ "$rc" = 0 ]
failed=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' "$T/pgbench.log")
is "no transaction failed (deadlock, slug race)" "${failed:-?}" 0
is "all 1800 transactions done" \
    "$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$T/pgbench.log")" 1800
[ "$rc" = 0 ] && [ "${failed:-?}" = 0 ] || sed 's/^/# /' "$T/pgbench.log" | tail -n 20
is "every counter exact after the concurrent writes" "$(counters_ok)" t
is "and conduit_recount() agrees" "$(sql 'SELECT conduit_recount()')" 0
is "slugs stayed unique" "$(sql 'SELECT count(*) = count(DISTINCT slug) FROM articles')" t

# Concurrent updates of one article with different tag sets: they
# serialize on the row, and the tags are always exactly one of the sets.
q_nokey article_insert "$A" hot Hot d b "t1${US}t2" >/dev/null
cat >"$T/upd1.sed" <<'SED'
s/\$1::text/'hot'::text/g
s/\$2::/:a::/g
s/\$3::text/NULL::text/g
s/\$4::text/NULL::text/g
s/\$5::text/'x'::text/g
s/\$6::text/NULL::text/g
s/\$7::text/E't1\\x1ft3'/g
SED
{ grep -v '\$7' "$T/upd1.sed"; cat <<'SED'; } >"$T/upd2.sed"
s/\$7::text/E't4\\x1ft2\\x1ft5'/g
SED
pgs article_update upd1 >"$T/upd1.pgb"
pgs article_update upd2 >"$T/upd2.pgb"
check "the two update scripts differ in their tag sets" sh -c "! cmp -s $T/upd1.pgb $T/upd2.pgb"
pgbench -n -M prepared -c 4 -j 2 -t 100 -f "$T/upd1.pgb" -f "$T/upd2.pgb" conduit \
    >"$T/pgbench-upd.log" 2>&1
is "concurrent updates of one article all succeed" \
    "$? $(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' "$T/pgbench-upd.log")" "0 0"
case $(qr article_get hot "$A" | f1 4) in
t1,t3 | t2,t4,t5) pass "its tags are exactly one of the two sets" ;;
*) fail "its tags are exactly one of the two sets: got '$(qr article_get hot "$A" | f1 4)'" ;;
esac
is "counters exact after them" "$(counters_ok)" t

# conduit_recount() while the writes go on: it must neither deadlock nor
# write stale counts.
pgbench -n -M prepared -c 4 -j 2 -T 4 \
    -f "$T/fav.pgb@5" -f "$T/unfav.pgb@4" -f "$T/ins1.pgb@1" -f "$T/del.pgb@1" conduit \
    >"$T/pgbench2.log" 2>&1 &
bench=$!
sleep 1
rec_ok=0
for i in 1 2 3; do
    sql 'SELECT conduit_recount()' >/dev/null && rec_ok=$((rec_ok + 1))
done
wait "$bench"
rc=$?
is "conduit_recount() under concurrent writes succeeds" "$rec_ok" 3
check "and the writes did too (rc $rc)" [ "$rc" = 0 ]
is "no write failed meanwhile" "$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' "$T/pgbench2.log")" 0
is "every counter exact afterwards" "$(counters_ok)" t

# ------------------------------------------------------------ the caller gone
# A viewer id whose row was deleted: every query given it says so in its
# caller_gone column (a row even where zero rows would be a 404) and
# writes nothing.
GID=$(sql "INSERT INTO users (username, email, password_hash) VALUES ('ghost', 'ghost@x.io', 'x') RETURNING id")
sql "DELETE FROM users WHERE id = $GID" >/dev/null
before=$(sql "SELECT (SELECT count(*) FROM favorites), (SELECT count(*) FROM follows), (SELECT count(*) FROM comments)")
is "caller gone: profile_get" "$(q profile_get bob "$GID" | f1 6)" t
is "caller gone: profile_get of nobody, still a row" "$(q profile_get nobody "$GID" | f1 6)" t
is "caller gone: profile_get anonymously, no" "$(q profile_get bob '\N' | f1 6)" f
is "caller gone: article_get of nothing, still a row" "$(qr article_get nope "$GID" | f1 14)" t
is "caller gone, without the flags' viewer: still seen" \
    "$(q article_get nope "$GID" '\N' | f1 14) $(q comments_list nope "$GID" '\N' | f1 9) $(q articles_list '\N' '\N' '\N' 10 0 "$GID" '\N' | f1 14)" "t t t"
is "caller gone: articles_list" "$(qr articles_list '\N' '\N' '\N' 10 0 "$GID" | f1 14)" t
is "caller gone: articles_feed" "$(q articles_feed "$GID" 10 0 "$GID" | f1 14)" t
is "caller gone: favorite" "$(q favorite five "$GID" | f1 14)" t
is "caller gone: comment_insert" "$(q_nokey comment_insert five "$GID" boo | f1 9)" t
is "caller gone: follow" "$(q follow bob "$GID" | f1 6)" t
is "caller gone: comment_delete" "$(q comment_delete five 1 "$GID" | f1 4)" t
is "caller gone: nothing was written" \
    "$(sql "SELECT (SELECT count(*) FROM favorites), (SELECT count(*) FROM follows), (SELECT count(*) FROM comments)")" "$before"

# ------------------------------------------------------------ cache notifications
# What the schema's triggers send on channel conduit_cache (worker/cache.h):
# psql LISTENs in the writing session itself and prints each notification.
# notified SQL: the keys the statements notified, sorted, one line.
notified() {
    printf 'LISTEN conduit_cache;\n%s\n' "$1" |
        psql -X -q -At -v ON_ERROR_STOP=1 2>>"$T/psql.err" |
        sed -n 's/^Asynchronous notification "conduit_cache" with payload "[0-9]* \(.*\)" received.*/\1/p' |
        sort | tr '\n' ' '
}
BOB=$(sql "SELECT id FROM users WHERE username = 'bob'")
is "without conduit.cache_notify nothing is sent" \
    "$(notified "UPDATE users SET bio = 'quiet' WHERE id = $BOB;")" ""
on="SET conduit.cache_notify = on;"
is "a bio change names the user and the profile" \
    "$(notified "$on UPDATE users SET bio = 'loud' WHERE id = $BOB;")" "p:bob u:$BOB "
is "a rename names the old and the new profile" \
    "$(notified "$on UPDATE users SET username = 'bobby' WHERE id = $BOB; UPDATE users SET username = 'bob' WHERE id = $BOB;" | tr ' ' '\n' | sort -u | tr '\n' ' ')" \
    "p:bob p:bobby u:$BOB "
is "a counter change alone sends nothing" \
    "$(notified "$on UPDATE users SET article_count = article_count WHERE id = $BOB;")" ""
is "a follow names the follower's followees" \
    "$(notified "$on INSERT INTO follows (follower_id, followee_id) VALUES ($D, $BOB);")" "f:$D "
is "an unfollow too" \
    "$(notified "$on DELETE FROM follows WHERE follower_id = $D AND followee_id = $BOB;")" "f:$D "
is "a tag count change names the tag list" \
    "$(notified "$on UPDATE tags SET article_count = article_count WHERE id = (SELECT min(id) FROM tags);")" "tags "
# The article caches' keys (worker/cache_articles.h).
CA=$(sql "INSERT INTO articles (slug, title, description, body, author_id)
          VALUES ('cache-keys', 'Cache keys', 'd', 'b', $BOB) RETURNING id")
is "an article edit from a session without cache_notify sends nothing" \
    "$(notified "UPDATE articles SET body = 'quiet' WHERE id = $CA;")" ""
is "a new article names the global list, the author's list and the feeds that show the author" \
    "$(notified "$on INSERT INTO articles (slug, title, description, body, author_id) VALUES ('cache-keys-2', 'Cache keys 2', 'd', 'b', $BOB);")" \
    "aa:$BOB la:bob lg "
is "a tag given to an article names the tag's list" \
    "$(notified "$on INSERT INTO article_tags (article_id, tag_id, created_at) SELECT $CA, id, now() FROM tags WHERE name = (SELECT min(name) FROM tags);" | tr ' ' '\n' | grep -v '^tags$' | tr '\n' ' ')" \
    "lt:$(sql "SELECT min(name) FROM tags") "
is "an edit names the article" \
    "$(notified "$on UPDATE articles SET body = 'new' WHERE id = $CA;")" "a:cache-keys "
is "a new slug names both" \
    "$(notified "$on UPDATE articles SET slug = 'cache-keys-moved' WHERE id = $CA;")" "a:cache-keys a:cache-keys-moved "
is "a favorite names the article, the user's favorites and their favorited list" \
    "$(notified "$on INSERT INTO favorites (user_id, article_id, created_at) SELECT $D, $CA, created_at FROM articles WHERE id = $CA;")" \
    "a:cache-keys-moved lf:$(sql "SELECT username FROM users WHERE id = $D") v:$D "
is "an unfavorite too" \
    "$(notified "$on DELETE FROM favorites WHERE user_id = $D AND article_id = $CA;")" \
    "a:cache-keys-moved lf:$(sql "SELECT username FROM users WHERE id = $D") v:$D "
is "a delete names the article and every list" \
    "$(notified "$on DELETE FROM articles WHERE id = $CA;" | tr ' ' '\n' | grep -v '^tags$\|^lt:' | tr '\n' ' ')" \
    "a:cache-keys-moved ld "
sql "DELETE FROM articles WHERE slug = 'cache-keys-2'" >/dev/null
is "a write that rolls back sends nothing" \
    "$(notified "BEGIN; $on UPDATE users SET bio = 'never' WHERE id = $BOB; ROLLBACK;")" ""
GONE=$(sql "INSERT INTO users (username, email, password_hash) VALUES ('gone', 'gone@x.io', 'x') RETURNING id")
is "a user deleted from any session drops every cache (their articles, favorites and name go too)" \
    "$(notified "DELETE FROM users WHERE id = $GONE;")" "* "
is "conduit_recount() that fixes a counter drops every cache" \
    "$(notified "UPDATE tags SET article_count = article_count + 1 WHERE id = (SELECT min(id) FROM tags); SELECT conduit_recount();")" "* "

if [ -s "$T/psql.err" ]; then
    note "psql said:"
    sed 's/^/# /' "$T/psql.err"
fi
done_testing
