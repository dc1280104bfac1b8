#!/bin/sh
# Concurrent writes answer what they stored.  Under READ COMMITTED a
# statement that waits for a concurrent writer keeps reading from its own
# starting snapshot unless it locks what it reports: the answer of a
# favorite could then say a count older than the one its own commit left.
# Each race below runs many requests at once on a real master (-w 2, so
# two pools of 4 connections), asserts every single answer, then the
# stored state:
#   - one user, 10 fresh articles, 50 parallel favorites of each: every
#     answer favorited true, favoritesCount 1; then 50 parallel
#     unfavorites of each: every answer false, 0;
#   - the same user favorites and unfavorites 10 articles at once: every
#     answer is "true 1" or "false 0", a state that existed;
#   - 20 users favorite one fresh article at once (5 articles): the counts
#     they are answered are exactly 1..20, each the count its own commit
#     left (commits on one article are serialized); then they all
#     unfavorite: 0..19;
#   - one user, 10 targets, 50 parallel follows of each: every answer
#     following true; then 50 parallel unfollows: every answer false;
#   - 20 users take one username, or one email, or register one name at
#     once: one succeeds, every other answer is a 409 naming the field;
#     20 create an article of one title at once: 20 articles, 20 slugs;
#   - after all of it, every counter matches the rows (conduit_recount()
#     fixes nothing).
. "$top_srcdir/t/lib.sh"

command -v jq >/dev/null || skip "jq not installed"

PAR=50
pg_start
conduitd_start -w 2 --bcrypt-cost 4


RACER=$(register racer)
WRITER=$(register writer)
# articles N PREFIX: N fresh articles by writer; prints their slugs, comma-separated.
articles() {
    _s=
    for _i in $(seq 1 "$1"); do
        http POST /api/articles "{\"article\":{\"title\":\"$2 $_i\",\"description\":\"d\",\"body\":\"b\"}}" "$WRITER"
        [ "$STATUS" = 201 ] || bail "create an article: $STATUS $BODY"
        _s="$_s${_s:+,}$(printf '%s' "$BODY" | jq -r .article.slug)"
    done
    echo "$_s"
}

# race NAME METHOD TOKEN URL-GLOB: every transfer of the curl glob at once
# (up to PAR in flight, each on its own connection), the answer of
# transfer K in $T/race/NAME.K, its status in $T/race/NAME.status.
mkdir -p "$T/race"
race() {
    curl -s -Z --parallel-immediate --parallel-max "$PAR" -X "$2" --max-time 30 \
        -H "Authorization: Token $3" -o "$T/race/$1.#1.#2" -w '%{http_code}\n' \
        "$BASE$4" >"$T/race/$1.status" 2>"$T/race/$1.err"
}

# answers NAME JQ: the distinct values of JQ over every answer of the
# race, with their counts ("5 true 1"), and every status.
answers() {
    for _f in "$T/race/$1".*.*; do
        jq -r "$2" "$_f" 2>/dev/null || echo "unparsable"
    done | sort | uniq -c | awk '{ $1 = $1; print }' | tr '\n' ';'
}
statuses() { sort "$T/race/$1.status" | uniq -c | awk '{ $1 = $1; print }' | tr '\n' ';'; }

# ------------------------------------------------------------ one user, favorites
SLUGS=$(articles 10 "Fav race")
N=$((10 * PAR))
race fav POST "$RACER" "/api/articles/{$SLUGS}/favorite?k=[1-$PAR]"
is "favorite x$PAR x10: every status" "$(statuses fav)" "$N 200;"
is "favorite x$PAR x10: every answer says favorited, 1" \
    "$(answers fav '"\(.article.favorited) \(.article.favoritesCount)"')" "$N true 1;"
is "favorite: stored, once per article" \
    "$(psql -X -A -t -c "select count(*), sum(favorites_count) from favorites f join articles a on a.id = f.article_id")" "10|10"

race unfav DELETE "$RACER" "/api/articles/{$SLUGS}/favorite?k=[1-$PAR]"
is "unfavorite x$PAR x10: every status" "$(statuses unfav)" "$N 200;"
is "unfavorite x$PAR x10: every answer says not favorited, 0" \
    "$(answers unfav '"\(.article.favorited) \(.article.favoritesCount)"')" "$N false 0;"
is "unfavorite: nothing stored" \
    "$(psql -X -A -t -c "select (select count(*) from favorites), (select sum(favorites_count) from articles)")" "0|0"

# ------------------------------------------------------------ one user, toggling
# The same user favorites and unfavorites 10 fresh articles at once (25
# of each per article, all in flight together).  Only this user favorites
# them, so after any commit an article's count is 1 exactly when the
# user's favorite exists: every answer must say "true 1" or "false 0".
SLUGS=$(articles 10 "Toggle race")
race tfav POST "$RACER" "/api/articles/{$SLUGS}/favorite?k=[1-25]" &
tfav=$!
race tunfav DELETE "$RACER" "/api/articles/{$SLUGS}/favorite?k=[1-25]" &
tunfav=$!
wait "$tfav"
wait "$tunfav"
is "favorite and unfavorite x25 x10 at once: every status" "$(statuses tfav)$(statuses tunfav)" "250 200;250 200;"
is "favorite and unfavorite x25 x10 at once: every answer a state that was stored" \
    "$(for n in tfav tunfav; do answers $n '"\(.article.favorited) \(.article.favoritesCount)"'; done |
       tr ';' '\n' | grep -v -e '^[0-9]* true 1$' -e '^[0-9]* false 0$' -e '^$' | tr '\n' ';')" ""
is "and every count stored matches its rows" \
    "$(psql -X -A -t -c "select count(*) from articles a where title like 'Toggle race%' and favorites_count <> (select count(*) from favorites f where f.article_id = a.id)")" 0

# ------------------------------------------------------------ many users, one article
NU=20
for i in $(seq 1 $NU); do
    register "fan$i" >"$T/fan$i.token"
done
SLUGS=$(articles 5 "Crowd race")
# crowd NAME METHOD: each fan runs the method on every article (in
# parallel), all fans at once; the answers go to $T/race/NAME-<fan>.*.
crowd() {
    _pids=
    for i in $(seq 1 $NU); do
        (while [ ! -e "$T/go.$1" ]; do sleep 0.01; done
         race "$1-$i" "$2" "$(cat "$T/fan$i.token")" "/api/articles/{$SLUGS}/favorite?k=[1-1]") &
        _pids="$_pids $!"
    done
    sleep 0.5
    touch "$T/go.$1"
    for _p in $_pids; do wait "$_p"; done
}
# counts NAME SLUG: the counts the fans were answered for SLUG, sorted, one line.
counts() {
    cat "$T/race/$1"-*".$2.1" | jq -r .article.favoritesCount | sort -n | tr '\n' ' '
}
crowd cfav POST
for s in $(echo "$SLUGS" | tr ',' ' '); do
    is "$NU users favorite $s at once: each answered the count its commit left" \
        "$(counts cfav "$s")" "$(seq 1 $NU | tr '\n' ' ')"
done
crowd cunfav DELETE
for s in $(echo "$SLUGS" | tr ',' ' '); do
    is "$NU users unfavorite $s at once: each answered the count its commit left" \
        "$(counts cunfav "$s")" "$(seq 0 $((NU - 1)) | tr '\n' ' ')"
done

# ------------------------------------------------------------ unique names
# all_at_once NAME METHOD PATH BODY: each fan sends one request at once,
# its token and BODY with @i@ replaced by its number; prints the statuses
# (counted) and every distinct error message.
all_at_once() {
    _pids=
    for i in $(seq 1 $NU); do
        (while [ ! -e "$T/go.$1" ]; do sleep 0.01; done
         curl -s -X "$2" --max-time 30 -H "Authorization: Token $(cat "$T/fan$i.token")" \
             -H 'Content-Type: application/json' --data-binary "$(echo "$4" | sed "s/@i@/$i/g")" \
             -o "$T/race/$1-$i.body" -w '%{http_code}\n' "$BASE$3" >"$T/race/$1-$i.status") &
        _pids="$_pids $!"
    done
    sleep 0.5
    touch "$T/go.$1"
    for _p in $_pids; do wait "$_p"; done
    cat "$T/race/$1"-*.status | sort | uniq -c | awk '{ $1 = $1; print }' | tr '\n' ';'
    cat "$T/race/$1"-*.body | jq -r '.errors.body[]? // empty' | sort -u | tr '\n' ';'
}
is "$NU users take one username at once: one has it, the others 409" \
    "$(all_at_once rename PUT /api/user '{"user":{"username":"taken"}}')" \
    "1 200;$((NU - 1)) 409;username has already been taken;"
is "$NU users take one email at once (in any case): one has it, the others 409" \
    "$(all_at_once email PUT /api/user '{"user":{"email":"Same@Example.io"}}' | sed 's/@i@//')" \
    "1 200;$((NU - 1)) 409;email has already been taken;"
is "$NU users register one username at once: one 201, the others 409" \
    "$(all_at_once register POST /api/users '{"user":{"username":"newcomer","email":"n@i@@example.io","password":"pw"}}')" \
    "1 201;$((NU - 1)) 409;username has already been taken;"
is "$NU users create an article of one title at once: all 201" \
    "$(all_at_once title POST /api/articles '{"article":{"title":"Same title","description":"d","body":"b","tagList":["race","t@i@"]}}')" \
    "$NU 201;"
is "and each got its own slug, stored" \
    "$(cat "$T/race/title"-*.body | jq -r .article.slug | sort -u | wc -l):$(psql -X -A -t -c "select count(*) from articles where title = 'Same title'")" \
    "$NU:$NU"
is "every tag of theirs counted once" \
    "$(psql -X -A -t -c "select article_count from tags where name = 'race'")" "$NU"

# ------------------------------------------------------------ one user, follows
USERS=
for i in $(seq 1 10); do
    register "target$i" >/dev/null
    USERS="$USERS${USERS:+,}target$i"
done
race fol POST "$RACER" "/api/profiles/{$USERS}/follow?k=[1-$PAR]"
is "follow x$PAR x10: every status" "$(statuses fol)" "$N 200;"
is "follow x$PAR x10: every answer says following" \
    "$(answers fol '.profile.following')" "$N true;"
is "follow: stored once per target" \
    "$(psql -X -A -t -c "select count(*) from follows f join users u on u.id = f.follower_id where u.username = 'racer'")" 10
race unfol DELETE "$RACER" "/api/profiles/{$USERS}/follow?k=[1-$PAR]"
is "unfollow x$PAR x10: every status" "$(statuses unfol)" "$N 200;"
is "unfollow x$PAR x10: every answer says not following" \
    "$(answers unfol '.profile.following')" "$N false;"
is "unfollow: nothing stored" "$(psql -X -A -t -c "select count(*) from follows")" 0

is "every counter matches the rows" "$(psql -X -A -t -c "select conduit_recount()")" 0
done_testing
