#!/bin/sh
# A valid token whose user row is gone is refused everywhere.  The user is
# deleted directly in the database, as an operator would (no endpoint
# deletes a user), from a session that is not conduitd's.  Then every
# route that takes a token, required or optional, in each of its shapes
# (someone else's article or comment, the caller's own (gone with the
# cascade), one that does not exist; every list variant), answers 401
# with the JSON error envelope, several times over new connections (so on
# both workers), and a digest of every table is unchanged.  Twice: with
# the cache off, and with --cache on after the user and the profiles the
# user viewed were cached on the workers (the delete must invalidate
# them).  The same requests without the token, and other users' tokens,
# still work.
. "$top_srcdir/t/lib.sh"

command -v jq >/dev/null || skip "jq not installed"

REPEAT=3
ENVELOPE='.errors.body | type == "array" and length > 0 and all(.[]; type == "string")'

# gone METHOD PATH [BODY]: REPEAT times with the deleted user's token.
gone() {
    _ok=0
    for _i in $(seq 1 $REPEAT); do
        http "$1" "$2" "${3:-}" "$GHOST"
        [ "$STATUS" = 401 ] && printf '%s' "$BODY" | jq -e "$ENVELOPE" >/dev/null 2>&1 && _ok=$((_ok + 1))
    done
    is "$MODE: $1 $2 with the deleted user's token: 401 + envelope (x$REPEAT)" "$_ok" $REPEAT ||
        note "last answer: $STATUS $BODY"
}

# want STATUS METHOD PATH [BODY [TOKEN]]: one request, its status.
want() {
    _w=$1
    shift
    http "$@"
    is "$MODE: $1 $2 ${4:+(another user)}${4:-(anonymous)}: $_w" "$STATUS" "$_w"
}

pg_start
for MODE in "cache off" "cache on"; do
    case $MODE in
    "cache on") conduitd_start -w 2 --bcrypt-cost 4 --cache on ;;
    *) conduitd_start -w 2 --bcrypt-cost 4 ;;
    esac
    psql -X -q -c "truncate users, articles, tags, article_tags, favorites, follows, comments, feed_readers, feed_inbox" ||
        bail "cannot empty the tables"

    http POST /api/users '{"user":{"username":"alice","email":"alice@example.io","password":"pw-alice"}}'
    ALICE=$(printf '%s' "$BODY" | jq -r .user.token)
    http POST /api/users '{"user":{"username":"ghost","email":"ghost@example.io","password":"pw-ghost"}}'
    GHOST=$(printf '%s' "$BODY" | jq -r .user.token)
    http POST /api/articles '{"article":{"title":"By alice","description":"d","body":"b","tagList":["t"]}}' "$ALICE"
    A=$(printf '%s' "$BODY" | jq -r .article.slug)
    http POST "/api/articles/$A/comments" '{"comment":{"body":"alice says"}}' "$ALICE"
    AC=$(printf '%s' "$BODY" | jq -r .comment.id)
    http POST /api/articles '{"article":{"title":"By ghost","description":"d","body":"b","tagList":["t"]}}' "$GHOST"
    G=$(printf '%s' "$BODY" | jq -r .article.slug)
    http POST "/api/articles/$A/comments" '{"comment":{"body":"ghost says"}}' "$GHOST"
    GC=$(printf '%s' "$BODY" | jq -r .comment.id)
    http POST "/api/articles/$A/favorite" "" "$GHOST"
    http POST /api/profiles/alice/follow "" "$GHOST"
    is "$MODE: the ghost's last write before the delete" "$STATUS" 200
    # What the cache keeps (the user behind the token, the profiles the
    # ghost looked at and whom the ghost follows), on both workers.
    for i in $(seq 1 20); do
        http GET /api/user "" "$GHOST"
        http GET /api/profiles/alice "" "$GHOST"
        http GET /api/profiles/ghost
    done
    is "$MODE: the ghost could read itself" "$STATUS" 200

    psql -X -q -c "delete from users where username = 'ghost'" || bail "cannot delete ghost"
    # The cache hears of the delete through PostgreSQL (a few milliseconds).
    [ "$MODE" = "cache on" ] && sleep 0.5
    DIGEST0=$(db_digest)

    gone GET /api/user
    gone PUT /api/user '{"user":{"bio":"back"}}'
    gone GET /api/articles/feed
    gone POST /api/articles '{"article":{"title":"From beyond","description":"d","body":"b","tagList":["new"]}}'
    for s in "$A" "$G" no-such-article; do
        gone PUT "/api/articles/$s" '{"article":{"body":"rewritten"}}'
        gone DELETE "/api/articles/$s"
        gone POST "/api/articles/$s/favorite"
        gone DELETE "/api/articles/$s/favorite"
        gone POST "/api/articles/$s/comments" '{"comment":{"body":"boo"}}'
        gone GET "/api/articles/$s"
        gone GET "/api/articles/$s/comments"
    done
    for id in "$AC" "$GC" 999999; do
        gone DELETE "/api/articles/$A/comments/$id"
    done
    for u in alice ghost nobody; do
        gone POST "/api/profiles/$u/follow"
        gone DELETE "/api/profiles/$u/follow"
        gone GET "/api/profiles/$u"
    done
    for q in "" "?tag=t" "?author=alice" "?favorited=alice" "?tag=t&author=alice" "?limit=1&offset=5"; do
        gone GET "/api/articles$q"
    done
    is "$MODE: nothing changed in the database" "$(db_digest)" "$DIGEST0"

    want 200 GET /api/articles
    want 200 GET "/api/articles/$A"
    want 200 GET /api/profiles/alice
    want 404 GET /api/profiles/ghost
    want 200 GET /api/articles/feed "" "$ALICE"
    want 200 GET /api/profiles/alice "" "$ALICE"
    is "$MODE: the ghost's favorite, follow and comment went with it" \
        "$(psql -X -A -t -c "select (select count(*) from favorites), (select count(*) from follows), (select count(*) from comments), (select favorites_count from articles where slug = '$A')")" \
        "0|0|1|0"
    stop_pid "$CONDUITD_PID"
    CONDUITD_PID=
done
done_testing
