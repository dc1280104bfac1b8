#!/bin/sh
# With the cache on, a read the cache cannot answer is sent without the
# flags' viewer when the cache holds the caller's sets (sql/queries.sql,
# "The flags' viewer"), and its answer takes favorited and following from
# those sets; what each statement was sent with is read from PostgreSQL's
# own log (every statement with its parameters).
#   - a signed-in reader with her sets held: article_get and comments_list
#     go with the flags' viewer NULL, and the answers carry the truth
#     before and after she follows the author and favorites the article;
#   - without the cache the same reads send her id there;
#   - the sets going stale while the statement runs (a comment list held
#     by a table lock while she unfollows the author, whose answer came
#     first): the statement is sent again with her id, the answer says
#     she no longer follows him, and /metrics and /healthz count the resend.
. "$top_srcdir/t/lib.sh"
command -v jq >/dev/null || skip "jq not installed"

pg_start
psql -X -q -v ON_ERROR_STOP=1 -c 'ALTER DATABASE conduit SET log_min_duration_statement = 0' ||
    bail "cannot change the database's settings"

# params_of TEXT: the parameters of every statement logged so far whose
# text (over several lines) contains TEXT, one line each, oldest first.
params_of() {
    awk -v q="$1" '
        / LOG:  duration: .* execute / { text = $0; on = 1; next }
        on && /DETAIL:  parameters: / {
            if (index(text, q)) { sub(/.*parameters: /, ""); print }
            on = 0; next
        }
        on && / LOG: / { on = 0 }
        on { text = text " " $0 }' "$T/pg/log"
}
ARTICLE_GET='AS article_id, a.author_id'
COMMENTS='FROM comments x'

conduitd_start -w 1 --bcrypt-cost 4 --cache on --status-listen 127.0.0.1:0
status_base
ALICE=$(register alice)
BOB=$(register bob)
AID=$(psql -X -At -c "SELECT id FROM users WHERE username = 'alice'")
http POST /api/articles '{"article":{"title":"Flags","description":"d","body":"b"}}' "$BOB"
is "bob writes an article" "$STATUS" 201
SLUG=$(printf '%s' "$BODY" | jq -r .article.slug)
http POST "/api/articles/$SLUG/comments" '{"comment":{"body":"first"}}' "$BOB"
is "and comments on it" "$STATUS" 200

# flags: favorited and the author's following, of the article and of the comment.
flags() {
    http GET "/api/articles/$SLUG" "" "$ALICE"
    _flags_art=$(printf '%s' "$BODY" | jq -r '"\(.article.favorited) \(.article.author.following)"')
    http GET "/api/articles/$SLUG/comments" "" "$ALICE"
    printf '%s %s\n' "$_flags_art" "$(printf '%s' "$BODY" | jq -r '.comments[0].author.following')"
}

is "alice's view: nothing favorited, nobody followed" "$(flags)" "false false false"
is "article_get was sent without the flags' viewer (her sets were held)" \
    "$(params_of "$ARTICLE_GET" | tail -n 1)" "\$1 = '$SLUG', \$2 = '$AID', \$3 = NULL"
is "and so was comments_list" \
    "$(params_of "$COMMENTS" | tail -n 1)" "\$1 = '$SLUG', \$2 = '$AID', \$3 = NULL"

http POST /api/profiles/bob/follow "" "$ALICE"
is "alice follows bob" "$STATUS" 200
http POST "/api/articles/$SLUG/favorite" "" "$ALICE"
is "and favorites his article" "$STATUS" 200
n=$(params_of "$ARTICLE_GET" | wc -l)
is "her view now: favorited, following, following" "$(flags)" "true true true"
is "the article was read again, without the flags' viewer" \
    "$(params_of "$ARTICLE_GET" | sed -n "$((n + 1)),\$p" | sort -u)" "\$1 = '$SLUG', \$2 = '$AID', \$3 = NULL"

# The sets go stale under a statement sent without the viewer: the
# comments table is locked, the list waits for it, alice unfollows bob
# meanwhile (her answer comes first), then the lock goes.
n=$(params_of "$COMMENTS" | wc -l)
psql -X -q -c 'BEGIN' -c 'LOCK TABLE comments IN ACCESS EXCLUSIVE MODE' -c 'SELECT pg_sleep(3)' \
    -c 'COMMIT' >/dev/null 2>&1 &
LOCKER=$!
EXTRA_PIDS="${EXTRA_PIDS:-} $LOCKER"
locked() { [ "$(psql -X -At -c "SELECT count(*) FROM pg_locks WHERE relation = 'comments'::regclass AND mode = 'AccessExclusiveLock' AND granted")" = 1 ]; }
check "the comments table is locked" wait_for 10 locked
curl -s -H "Authorization: Token $ALICE" "$BASE/api/articles/$SLUG/comments" >"$T/held.json" &
READER=$!
waiting() { [ "$(psql -X -At -c "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%FROM comments x%'")" = 1 ]; }
check "the comment list waits for the lock" wait_for 10 waiting
http DELETE /api/profiles/bob/follow "" "$ALICE"
is "alice unfollows bob meanwhile" "$(printf '%s' "$BODY" | jq -r .profile.following)" false
wait "$READER"
wait "$LOCKER"
is "the held list answers that she no longer follows him" \
    "$(jq -r '.comments[0].author.following' "$T/held.json")" false
is "its statement was sent without the viewer, then again with her id" \
    "$(params_of "$COMMENTS" | sed -n "$((n + 1)),\$p" | tr '\n' ' ')" \
    "\$1 = '$SLUG', \$2 = '$AID', \$3 = NULL \$1 = '$SLUG', \$2 = '$AID', \$3 = '$AID' "
is "/metrics counts the one resend" \
    "$(curl -s "$SBASE/metrics" | awk '$1 == "conduitd_cache_flag_resends_total" { print $2 }')" 1
http GET /healthz
is "and so does /healthz" "$(printf '%s' "$BODY" | jq .cache.flag_resends)" 1
stop_pid "$CONDUITD_PID"

# Without the cache, the rows carry the flags: her id is sent.
conduitd_start -w 1 --bcrypt-cost 4 --cache off
is "cache off: the same view" "$(flags)" "true false false"
is "article_get carries her id as the flags' viewer" \
    "$(params_of "$ARTICLE_GET" | tail -n 1)" "\$1 = '$SLUG', \$2 = '$AID', \$3 = '$AID'"
is "and comments_list" "$(params_of "$COMMENTS" | tail -n 1)" "\$1 = '$SLUG', \$2 = '$AID', \$3 = '$AID'"
stop_pid "$CONDUITD_PID"

done_testing
