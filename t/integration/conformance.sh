#!/bin/sh
# Black-box conformance of the 19 Conduit endpoints against
# docs/api.md (which wins) and the RealWorld project's OpenAPI spec: every field and its JSON
# type, exact status codes, the caller-relative flags, exact counts, list
# order, paging, filters, the feed, the comment cap, slugs, idempotent
# writes, ownership (403), 404s, every flavour of bad token (401), bad
# bodies (422), the size limit (413), duplicates (409) including a
# concurrent registration race.
#
# Readings chosen where the spec is silent or open (docs/api.md records
# them; see the notes printed):
#   - duplicates give 409 (the project's pick);
#   - emails are unique case-insensitively and login ignores their case
#     (schema.sql says so);
#   - list ties on createdAt go to the newer id first (exact order asserted);
#   - the first article with a title gets the bare slug, a suffix only when
#     taken; a plain title "How to Train Your Dragon" maps to
#     "how-to-train-your-dragon";
#   - "every tag in use" is exactly the union of the tagLists of the
#     articles that exist (a tag dropped by an update or a delete is gone);
#   - PUT /api/articles/:slug with no field at all, unfollowing yourself,
#     a non-numeric comment id, a badly percent-encoded query: only
#     "not 5xx" (404/422 for the comment id);
#   - the 413 for an oversized body is written by libevent 2.1 itself
#     (evhttp has no hook for it before 2.2), so its body is libevent's
#     HTML page, not the JSON envelope: asserted are the status, that the
#     connection is closed, and that nothing was stored (README says so);
#   - deleting someone else's comment is 403 even for the article's author.
. "$top_srcdir/t/lib.sh"

# ------------------------------------------------------------ helpers
LAST=
SLUG=
NART=0

# The jq vocabulary of the contract's objects.
JQDEFS='
def sn: type == "string" or type == "null";
def ts: type == "string" and test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z$");
def profile: type == "object" and has("username") and has("bio") and has("image") and has("following")
    and (.username | type == "string") and (.bio | sn) and (.image | sn) and (.following | type == "boolean");
def user: type == "object" and has("email") and has("token") and has("username") and has("bio") and has("image")
    and (.email | type == "string") and (.token | type == "string" and test("^[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+$"))
    and (.username | type == "string") and (.bio | sn) and (.image | sn);
def taglist: type == "array" and all(.[]; type == "string") and . == unique;
def artbase: type == "object"
    and (.slug | type == "string" and test("^[a-z0-9-]+$"))
    and (.title | type == "string") and (.description | type == "string")
    and (.tagList | taglist) and (.createdAt | ts) and (.updatedAt | ts)
    and (.favorited | type == "boolean") and (.favoritesCount | type == "number")
    and (.author | profile);
def article: artbase and has("body") and (.body | type == "string");
def listarticle: artbase and (has("body") | not);
def comment: type == "object" and (.id | type == "number") and (.createdAt | ts) and (.updatedAt | ts)
    and (.body | type == "string") and (.author | profile);
def envelope: type == "object" and (.errors.body | type == "array" and length > 0 and all(.[]; type == "string"));
def newest_first: [.[].createdAt] | . == (sort | reverse);
'

# call USER METHOD PATH [BODY]: USER is "-" for anonymous, else the token of
# register USER is sent as "Authorization: Token ...".
call() {
    _u=$1; shift
    if [ "$_u" = - ]; then _tk=; else eval "_tk=\${TOK_$_u:-}"; fi
    http "$1" "$2" "${3:-}" "$_tk"
    LAST="$1 $2${3:+ $3}${_tk:+ [as $_u]}"
}

# callh AUTHORIZATION METHOD PATH [BODY]: any Authorization header value.
callh() {
    LAST="$2 $3${4:+ $4} [Authorization: $(short "$1" 60)...]"
    http_raw "$2" "$3" "${4:-}" "$1"
}

# jqok DESCRIPTION [JQ OPTIONS...] FILTER: the filter holds on the last body.
jqok() {
    _d=$1; shift
    _n=$#
    eval "_f=\${$_n}"
    _i=0
    for _x in "$@"; do
        _i=$((_i + 1))
        [ "$_i" = 1 ] && set --
        [ "$_i" -lt "$_n" ] && set -- "$@" "$_x"
    done
    if printf '%s' "$BODY" | jq -e "$@" "$JQDEFS $_f" >/dev/null 2>&1; then
        pass "$_d"
    else
        fail "$_d: jq '$(short "$_f" 200)' does not hold"; detail
    fi
}

# err DESCRIPTION WANT: the status and the error envelope, one assertion.
err() {
    if [ "$STATUS" = "$2" ] && printf '%s' "$BODY" | jq -e "$JQDEFS envelope" >/dev/null 2>&1; then
        pass "$1"
    else
        fail "$1: want $2 with {\"errors\":{\"body\":[...]}}"; detail
    fi
}

# jget FILTER: prints the filter's raw value from the last body.
jget() { printf '%s' "$BODY" | jq -r "$@" 2>/dev/null; }

# register NAME: registers NAME (email NAME@example.io, password pw-NAME),
# stores the token in TOK_NAME and prints it.
register() {
    call - POST /api/users "{\"user\":{\"username\":\"$1\",\"email\":\"$1@example.io\",\"password\":\"pw-$1\"}}"
    eval "TOK_$1=\$(jget .user.token)"
    eval "printf '%s\n' \"\$TOK_$1\""
}

# mkart USER TITLE [TAGLIST_JSON]: creates an article, sets SLUG; status 0
# on 201.  Counts the articles created (NART, N_USER).
mkart() {
    call "$1" POST /api/articles "{\"article\":{\"title\":\"$2\",\"description\":\"about $2\",\"body\":\"the body of $2\",\"tagList\":${3:-[]}}}"
    [ "$STATUS" = 201 ] || return 1
    SLUG=$(jget .article.slug)
    NART=$((NART + 1))
    eval "N_$1=\$((\${N_$1:-0} + 1))"
}

# num VALUE: VALUE if it is a non-negative integer, else 0.
num() { case $1 in '' | *[!0-9]*) echo 0 ;; *) echo "$1" ;; esac; }

# ------------------------------------------------------------ start
command -v jq >/dev/null || skip "jq not installed"
command -v openssl >/dev/null || skip "openssl not installed"
pg_start
# CONFORMANCE_ARGS: more flags for the server (conformance_cache.sh runs
# this whole suite again with --cache on).
conduitd_start -w 2 --bcrypt-cost 4 ${CONFORMANCE_ARGS:-}
START_TIME=$(date +%s)
WORKERS0=$(worker_pids | sort | tr '\n' ' ')

# ============================================================ users
note "POST /api/users"
register alice >/dev/null
st "register alice: 201" 201
jqok "register: user object with every field typed" '.user | user'
jqok "register: email, username as sent; bio and image null" \
    '.user.email == "alice@example.io" and .user.username == "alice" and .user.bio == null and .user.image == null'
ctype=$(curl -s -o /dev/null -w '%{content_type}' --max-time 10 -H "Authorization: Token $TOK_alice" "$BASE/api/user")
is "responses are application/json; charset=utf-8" "$ctype" "application/json; charset=utf-8"
register bob >/dev/null
st "register bob: 201" 201
register carol >/dev/null
st "register carol: 201" 201
register dave >/dev/null
st "register dave: 201" 201

call - POST /api/users '{"user":{"username":"alice","email":"other@example.io","password":"pw"}}'
err "register a taken username: 409" 409
call - POST /api/users '{"user":{"username":"alice2","email":"alice@example.io","password":"pw"}}'
err "register a taken email: 409" 409
call - POST /api/users '{"user":{"username":"alice3","email":"ALICE@Example.IO","password":"pw"}}'
err "register a taken email in other case: 409 (emails unique case-insensitively)" 409

for b in 'not json' \
    '{"user":{"username":"u1","email":"u1@example.io","password":"pw"' \
    '{"user":{"username":"u1","email":5,"password":"pw"}}' \
    '{"user":{"username":7,"email":"u1@example.io","password":"pw"}}' \
    '{"user":{"username":"u1","email":"u1@example.io","password":true}}' \
    '{"user":{"username":["u1"],"email":"u1@example.io","password":"pw"}}' \
    '{"user":{"username":null,"email":"u1@example.io","password":"pw"}}' \
    '{"user":{"email":"u1@example.io","password":"pw"}}' \
    '{"user":{"username":"u1","password":"pw"}}' \
    '{"user":{"username":"u1","email":"u1@example.io"}}' \
    '{"user":{"username":"","email":"u1@example.io","password":"pw"}}' \
    '{"user":{"username":"u1","email":"","password":"pw"}}' \
    '{"user":{"username":"u1","email":"u1@example.io","password":""}}' \
    '{"username":"u1","email":"u1@example.io","password":"pw"}' \
    '{"user":"u1"}' '{"user":null}' '[]' '"user"' '{}'; do
    call - POST /api/users "$b"
    err "register with a malformed body: 422 ($(short "$b" 60))" 422
done
call - POST /api/users
err "register with no body: 422" 422
call - POST /api/users "$(printf '{"user":{"username":"u1\377","email":"u1@example.io","password":"pw"}}')"
err "register with invalid UTF-8: 422" 422
call - POST /api/users '{"user":{"username":"u1\u0000x","email":"u1@example.io","password":"pw"}}'
err "register with a NUL in a string: 422" 422
deep=$(printf '%0500d' 0 | sed 's/0/[/g')
call - POST /api/users "{\"user\":$deep"
err "register with JSON nested 500 deep: 422" 422
call - GET /api/profiles/u1
err "no malformed registration created a user" 404

note "POST /api/users/login"
call - POST /api/users/login '{"user":{"email":"alice@example.io","password":"pw-alice"}}'
st "login: 200" 200
jqok "login: the user object" '.user | user and .email == "alice@example.io" and .username == "alice" and .bio == null and .image == null'
login_tok=$(jget .user.token)
call - POST /api/users/login '{"user":{"email":"Alice@EXAMPLE.io","password":"pw-alice"}}'
jqok "login with the email in another case: 200 (emails are case-insensitive)" '.user.username == "alice"'
call - POST /api/users/login '{"user":{"email":"alice@example.io","password":"wrong"}}'
err "login with a wrong password: 401" 401
call - POST /api/users/login '{"user":{"email":"nobody@example.io","password":"pw-alice"}}'
err "login with an unknown email: 401" 401
for b in 'not json' '{"user":{"email":"alice@example.io"}}' '{"user":{"password":"pw-alice"}}' \
    '{"user":{"email":5,"password":"pw-alice"}}' '{"user":{"email":"alice@example.io","password":5}}' \
    '{"user":{"email":"","password":"pw-alice"}}' '{"user":{"email":"alice@example.io","password":""}}' \
    '{"email":"alice@example.io","password":"pw-alice"}' '{"user":[]}'; do
    call - POST /api/users/login "$b"
    err "login with a malformed body: 422 ($(short "$b" 60))" 422
done

note "GET /api/user and tokens"
call alice GET /api/user
st "GET /api/user: 200" 200
jqok "GET /api/user: the caller" '.user | user and .username == "alice" and .email == "alice@example.io"'
TOK_alicel=$login_tok
call alicel GET /api/user
jqok "the login token works" '.user.username == "alice"'
callh "Bearer $TOK_alice" GET /api/user
st "Authorization: Bearer is accepted" 200
jqok "Bearer: the caller" '.user.username == "alice"'
callh "Bearer $TOK_bob" POST /api/profiles/carol/follow
st "Bearer is accepted on a write" 200

# Forge tokens from a real one: its payload gives the user id.
payload=$(b64url_dec "$(printf '%s' "$TOK_alice" | cut -d. -f2)")
alice_id=$(num "$(printf '%s' "$payload" | jq -r .sub 2>/dev/null)")
check "a real token has sub (number), iat, exp" \
    sh -c "printf '%s' '$payload' | jq -e '(.sub|type==\"number\") and (.iat|type==\"number\") and .exp > .iat' >/dev/null 2>&1"
now=$(date +%s)
HS='{"alg":"HS256","typ":"JWT"}'
good=$(jwt "$HS" "{\"sub\":$alice_id,\"iat\":$now,\"exp\":$((now + 3600))}")
callh "Token $good" GET /api/user
st "a token signed here with the dev secret is accepted (the forging below is sound)" 200
expired=$(jwt "$HS" "{\"sub\":$alice_id,\"iat\":$((now - 7200)),\"exp\":$((now - 3600))}")
callh "Token $expired" GET /api/user
err "an expired token: 401" 401
h=$(printf '%s' "$TOK_alice" | cut -d. -f1)
s=$(printf '%s' "$TOK_alice" | cut -d. -f3)
other=$(printf '{"sub":%s,"iat":%s,"exp":%s}' "$((alice_id + 1))" "$now" "$((now + 3600))" | b64url)
callh "Token $h.$other.$s" GET /api/user
err "a token with a tampered payload (other sub, old signature): 401" 401
c11=$(printf '%s' "$s" | cut -c11)
[ "$c11" = A ] && c11=B || c11=A
sig=$(printf '%s' "$s" | cut -c1-10)$c11$(printf '%s' "$s" | cut -c12-)
is "the tampered signature differs from the real one in one character only" \
    "$(printf '%s' "$sig" | wc -c | tr -d ' ') $([ "$sig" != "$s" ] && echo differs)" "$(printf '%s' "$s" | wc -c | tr -d ' ') differs"
callh "Token $h.$(printf '%s' "$TOK_alice" | cut -d. -f2).$sig" GET /api/user
err "a token with a tampered signature: 401" 401
none_h=$(printf '%s' '{"alg":"none","typ":"JWT"}' | b64url)
none_p=$(printf '{"sub":%s,"iat":%s,"exp":%s}' "$alice_id" "$now" "$((now + 3600))" | b64url)
callh "Token $none_h.$none_p." GET /api/user
err "a token with alg none: 401" 401
callh "Token $none_h.$none_p.$s" GET /api/user
err "a token with alg none and a signature: 401" 401
wrong=$(jwt "$HS" "{\"sub\":$alice_id,\"iat\":$now,\"exp\":$((now + 3600))}" "some-other-secret")
callh "Token $wrong" GET /api/user
err "a token signed with another secret: 401" 401
ghost=$(jwt "$HS" "{\"sub\":999999,\"iat\":$now,\"exp\":$((now + 3600))}")
callh "Token $ghost" GET /api/user
err "a valid token of a user that does not exist: 401" 401
for a in "Token garbage" "Token " "Token a.b.c" "Basic YWxpY2U6cHc=" "$TOK_alice"; do
    callh "$a" GET /api/user
    err "Authorization '$(short "$a" 24)': 401" 401
done
call - GET /api/user
err "GET /api/user without a token: 401" 401

note "PUT /api/user"
call dave PUT /api/user '{"user":{"bio":"I test things"}}'
st "PUT /api/user bio only: 200" 200
jqok "PUT bio: bio set, the rest unchanged, a token" \
    '.user | user and .bio == "I test things" and .image == null and .username == "dave" and .email == "dave@example.io"'
fresh=$(jget .user.token)
check "PUT /api/user: the fresh token works" sh -c \
    "curl -s --max-time 10 -H 'Authorization: Token $fresh' '$BASE/api/user' | jq -e '.user.username == \"dave\"' >/dev/null 2>&1"
iat0=$(num "$(b64url_dec "$(printf '%s' "$TOK_dave" | cut -d. -f2)" | jq -r .iat 2>/dev/null)")
iat1=$(num "$(b64url_dec "$(printf '%s' "$fresh" | cut -d. -f2)" | jq -r .iat 2>/dev/null)")
check "PUT /api/user: the fresh token is issued now (iat not older than the registration's)" [ "$iat1" -ge "$iat0" -a "$iat1" -gt 0 ]
call dave PUT /api/user '{"user":{"image":"https://example.io/dave.png"}}'
jqok "PUT image only: image set, bio kept" '.user.image == "https://example.io/dave.png" and .user.bio == "I test things"'
call dave GET /api/user
jqok "GET /api/user after PUT: bio and image stored" '.user.image == "https://example.io/dave.png" and .user.bio == "I test things"'
call - GET /api/profiles/dave
jqok "the profile shows bio and image" '.profile | profile and .bio == "I test things" and .image == "https://example.io/dave.png" and .following == false'
call dave PUT /api/user '{"user":{"password":"new-pw-dave"}}'
st "PUT password: 200" 200
jqok "PUT password: user object, nothing else changed" '.user | user and .username == "dave" and .bio == "I test things"'
TOK_dave=$(jget .user.token)
call - POST /api/users/login '{"user":{"email":"dave@example.io","password":"new-pw-dave"}}'
st "login with the new password: 200" 200
call - POST /api/users/login '{"user":{"email":"dave@example.io","password":"pw-dave"}}'
err "login with the old password: 401" 401
call dave PUT /api/user '{"user":{"username":"dave2","email":"dave2@example.io"}}'
st "PUT username and email: 200" 200
jqok "PUT username and email: both changed" '.user.username == "dave2" and .user.email == "dave2@example.io"'
TOK_dave=$(jget .user.token)
call - GET /api/profiles/dave
err "the old username's profile: 404" 404
call - GET /api/profiles/dave2
st "the new username's profile: 200" 200
call - POST /api/users/login '{"user":{"email":"dave2@example.io","password":"new-pw-dave"}}'
jqok "login with the new email" '.user.username == "dave2"'
call dave PUT /api/user '{"user":{"username":"alice"}}'
err "PUT username taken by another: 409" 409
call dave PUT /api/user '{"user":{"email":"bob@example.io"}}'
err "PUT email taken by another: 409" 409
call dave PUT /api/user '{"user":{"bio":null}}'
jqok "PUT bio null unsets it" '.user.bio == null and .user.image == "https://example.io/dave.png"'
for b in '{"user":{}}' '{}' 'not json' '{"user":{"email":5}}' '{"user":{"email":""}}' \
    '{"user":{"username":""}}' '{"user":{"password":""}}' '{"user":{"bio":5}}' \
    '{"user":{"username":["x"]}}' '{"bio":"x"}' '{"user":"x"}'; do
    call dave PUT /api/user "$b"
    err "PUT /api/user malformed: 422 ($(short "$b" 40))" 422
done
call - PUT /api/user '{"user":{"bio":"x"}}'
err "PUT /api/user without a token: 401" 401
call dave GET /api/user
jqok "failed PUTs changed nothing" '.user.username == "dave2" and .user.email == "dave2@example.io" and .user.bio == null'

# ============================================================ profiles
note "profiles, follow, unfollow"
call - GET /api/profiles/alice
st "GET profile anonymous: 200" 200
jqok "profile: every field typed, bio/image null, following false" \
    '.profile | profile and .username == "alice" and .bio == null and .image == null and .following == false'
call bob POST /api/profiles/alice/follow
st "bob follows alice: 200" 200
jqok "follow: the profile with following true" '.profile | profile and .username == "alice" and .following == true'
call bob POST /api/profiles/alice/follow
st "follow twice: 200" 200
jqok "follow twice: still following" '.profile.following == true'
call bob GET /api/profiles/alice
jqok "bob sees alice: following true" '.profile.following == true'
call carol GET /api/profiles/alice
jqok "carol sees alice: following false" '.profile.following == false'
call - GET /api/profiles/alice
jqok "anonymous sees alice: following false" '.profile.following == false'
call alice GET /api/profiles/bob
jqok "alice sees bob: following false (follow is one-way)" '.profile.following == false'
call carol POST /api/profiles/bob/follow
jqok "carol follows bob" '.profile.following == true'
call dave POST /api/profiles/alice/follow
jqok "dave follows alice" '.profile.following == true'
call dave DELETE /api/profiles/alice/follow
st "unfollow: 200" 200
jqok "unfollow: following false" '.profile | profile and .username == "alice" and .following == false'
call dave DELETE /api/profiles/alice/follow
st "unfollow twice: 200" 200
jqok "unfollow twice: still not following" '.profile.following == false'
call dave GET /api/profiles/alice
jqok "dave sees alice after unfollow: false" '.profile.following == false'
call alice POST /api/profiles/alice/follow
err "following yourself: 422" 422
call alice DELETE /api/profiles/alice/follow
note "unfollowing yourself gave $STATUS (docs/api.md, \"Writes\": 422)"
check "unfollowing yourself: not 5xx" [ "$STATUS" -lt 500 ]
call - GET /api/profiles/nobody
err "unknown profile: 404" 404
call alice POST /api/profiles/nobody/follow
err "follow an unknown user: 404" 404
call alice DELETE /api/profiles/nobody/follow
err "unfollow an unknown user: 404" 404
callh "Token garbage" GET /api/profiles/alice
err "GET profile (optional auth) with a bad token: 401" 401

# ============================================================ articles
note "POST/GET/PUT /api/articles"
call alice POST /api/articles '{"article":{"title":"How to Train Your Dragon","description":"Ever wonder how?","body":"You have to believe","tagList":["training","dragons","dragons","angular"]}}'
st "create article: 201" 201
jqok "create: the article object with body" '.article | article'
jqok "create: fields as sent, tagList sorted without duplicates" \
    '.article | .title == "How to Train Your Dragon" and .description == "Ever wonder how?" and .body == "You have to believe" and .tagList == ["angular","dragons","training"]'
jqok "create: favorited false, favoritesCount 0, author alice not followed" \
    '.article | .favorited == false and .favoritesCount == 0 and .author.username == "alice" and .author.following == false and .author.bio == null and .author.image == null'
jqok "create: createdAt == updatedAt" '.article.createdAt == .article.updatedAt'
jqok "create: slug derived from the title" '.article.slug == "how-to-train-your-dragon"'
A=$(jget .article.slug)
A_created=$(jget .article.createdAt)
NART=$((NART + 1)); N_alice=1
call bob POST /api/articles '{"article":{"title":"How to Train Your Dragon","description":"d","body":"b"}}'
st "same title again (bob): 201" 201
jqok "same title: a different slug, from the same base" \
    --arg a "$A" '.article.slug != $a and (.article.slug | startswith("how-to-train-your-dragon-"))'
jqok "no tagList: tagList []" '.article.tagList == []'
B=$(jget .article.slug)
NART=$((NART + 1)); N_bob=1
call alice POST /api/articles '{"article":{"title":"How to Train Your Dragon","description":"d","body":"b","tagList":[]}}'
jqok "same title a third time (same author): a third slug" \
    --arg a "$A" --arg b "$B" '.article.slug != $a and .article.slug != $b and (.article.slug | test("^[a-z0-9-]+$"))'
A3=$(jget .article.slug)
NART=$((NART + 1)); N_alice=$((N_alice + 1))
call alice POST /api/articles '{"article":{"title":"Caf\u00e9 \u00dcn\u00efcode & Co: 2024!","description":"d","body":"b","tagList":["x","c++","two words"]}}'
st "non-ASCII title: 201" 201
jqok "non-ASCII title: slug is lowercase ASCII, digits and -" '.article.slug | test("^[a-z0-9-]+$") and test("2024")'
jqok "non-ASCII title: title stored exactly" '.article.title == "Café Ünïcode & Co: 2024!"'
NART=$((NART + 1)); N_alice=$((N_alice + 1))

# JSON escapes survive the round trip exactly.
call alice POST /api/articles '{"article":{"title":"He said \"hi\" \\ back/slash","description":"tab\there","body":"line1\nline2\t\u0001 \u00fcn\u00ef \ud83d\ude00 </script>","tagList":["esc"]}}'
st "article with escapes: 201" 201
jqok "escapes: title, description and body round-trip exactly" \
    '.article.title == "He said \"hi\" \\ back/slash" and .article.description == "tab\there" and .article.body == "line1\nline2\t\u0001 ün\u00ef 😀 </script>"'
ESC=$(jget .article.slug)
NART=$((NART + 1)); N_alice=$((N_alice + 1))
call - GET "/api/articles/$ESC"
jqok "escapes: GET returns them exactly" '.article | article and .body == "line1\nline2\t\u0001 ünï 😀 </script>"'

for b in 'not json' '{"article":{"title":"t","description":"d","body":"b"' \
    '{"title":"t","description":"d","body":"b"}' '{"article":null}' '{"article":"t"}' '[]' \
    '{"article":{"description":"d","body":"b"}}' '{"article":{"title":"t","body":"b"}}' \
    '{"article":{"title":"t","description":"d"}}' \
    '{"article":{"title":"","description":"d","body":"b"}}' \
    '{"article":{"title":"t","description":"","body":"b"}}' \
    '{"article":{"title":"t","description":"d","body":""}}' \
    '{"article":{"title":5,"description":"d","body":"b"}}' \
    '{"article":{"title":"t","description":["d"],"body":"b"}}' \
    '{"article":{"title":"t","description":"d","body":{}}}' \
    '{"article":{"title":"t","description":"d","body":"b","tagList":"x"}}' \
    '{"article":{"title":"t","description":"d","body":"b","tagList":[1]}}' \
    '{"article":{"title":"t","description":"d","body":"b","tagList":[null]}}'; do
    call alice POST /api/articles "$b"
    err "create article malformed: 422 ($(short "$b" 60))" 422
done
call - POST /api/articles '{"article":{"title":"t","description":"d","body":"b"}}'
err "create article without a token: 401" 401

call - GET "/api/articles/$A"
st "GET article anonymous: 200" 200
jqok "GET article: with body, every field typed" '.article | article and .body == "You have to believe"'
jqok "GET article: same createdAt as on create" --arg c "$A_created" '.article.createdAt == $c'
call - GET /api/articles/no-such-article
err "GET unknown article: 404" 404
callh "Token garbage" GET "/api/articles/$A"
err "GET article (optional auth) with a bad token: 401" 401

call bob GET "/api/articles/$A"
jqok "bob (follows alice) sees author.following true" '.article.author.following == true'
call carol GET "/api/articles/$A"
jqok "carol sees author.following false" '.article.author.following == false'
call alice GET "/api/articles/$A"
jqok "alice sees her own article: author.following false" '.article.author.following == false'

note "favorite, unfavorite"
call bob POST "/api/articles/$A/favorite"
st "favorite: 200" 200
jqok "favorite: the article, favorited true, count 1" '.article | article and .favorited == true and .favoritesCount == 1'
call bob POST "/api/articles/$A/favorite"
st "favorite twice: 200" 200
jqok "favorite twice: count stays 1" '.article.favorited == true and .article.favoritesCount == 1'
call carol POST "/api/articles/$A/favorite"
jqok "carol favorites too: count 2" '.article.favorited == true and .article.favoritesCount == 2'
call bob GET "/api/articles/$A"
jqok "bob sees favorited true, count 2" '.article.favorited == true and .article.favoritesCount == 2'
call alice GET "/api/articles/$A"
jqok "alice sees favorited false, count 2" '.article.favorited == false and .article.favoritesCount == 2'
call - GET "/api/articles/$A"
jqok "anonymous sees favorited false, count 2" '.article.favorited == false and .article.favoritesCount == 2'
call bob DELETE "/api/articles/$A/favorite"
st "unfavorite: 200" 200
jqok "unfavorite: favorited false, count 1" '.article | article and .favorited == false and .favoritesCount == 1'
call bob DELETE "/api/articles/$A/favorite"
st "unfavorite twice: 200" 200
jqok "unfavorite twice: count stays 1" '.article.favorited == false and .article.favoritesCount == 1'
call carol DELETE "/api/articles/$A/favorite"
jqok "carol unfavorites: count 0" '.article.favorited == false and .article.favoritesCount == 0'
call - POST "/api/articles/$A/favorite"
err "favorite without a token: 401" 401
call - DELETE "/api/articles/$A/favorite"
err "unfavorite without a token: 401" 401
call bob POST /api/articles/no-such-article/favorite
err "favorite an unknown article: 404" 404
call bob DELETE /api/articles/no-such-article/favorite
err "unfavorite an unknown article: 404" 404

note "PUT /api/articles/:slug"
call bob PUT "/api/articles/$A" '{"article":{"body":"mine now"}}'
err "update someone else's article: 403" 403
call alice PUT "/api/articles/$A" '{"article":{"description":"New description"}}'
st "update description only: 200" 200
jqok "update description: changed; title, slug, body, tags kept" \
    --arg a "$A" '.article | article and .description == "New description" and .slug == $a and .title == "How to Train Your Dragon" and .body == "You have to believe" and .tagList == ["angular","dragons","training"]'
jqok "update: updatedAt >= createdAt, createdAt unchanged" \
    --arg c "$A_created" '.article.updatedAt >= .article.createdAt and .article.createdAt == $c'
call alice PUT "/api/articles/$A" '{"article":{"tagList":["zeta","beta","zeta"]}}'
jqok "update tagList: replaced, sorted, deduplicated" '.article.tagList == ["beta","zeta"]'
call - GET "/api/articles/$A"
jqok "GET after the tag update: tagList replaced" '.article.tagList == ["beta","zeta"]'
call alice PUT "/api/articles/$A" '{"article":{"body":"Believe harder"}}'
jqok "update without tagList keeps the tags" '.article.body == "Believe harder" and .article.tagList == ["beta","zeta"]'
call alice PUT "/api/articles/$A" '{"article":{"title":"Dragon Training Revised"}}'
st "update title: 200" 200
jqok "update title: title and slug changed" \
    --arg a "$A" '.article.title == "Dragon Training Revised" and .article.slug != $a and .article.slug == "dragon-training-revised"'
OLD_A=$A
A=$(jget .article.slug)
call - GET "/api/articles/$OLD_A"
err "the old slug: 404" 404
call - GET "/api/articles/$A"
jqok "the new slug: the article, all else kept" \
    '.article | article and .title == "Dragon Training Revised" and .body == "Believe harder" and .description == "New description" and .tagList == ["beta","zeta"]'
call alice PUT "/api/articles/$A3" '{"article":{"title":"How to Train Your Dragon Twice"}}'
jqok "retitle to a fresh title: its bare slug" '.article.slug == "how-to-train-your-dragon-twice"'
A3=$(jget .article.slug)
call bob PUT "/api/articles/$B" '{"article":{"title":"How to Train Your Dragon Twice"}}'
jqok "retitle to a title whose slug is taken: a unique slug from that base" \
    --arg a "$A3" '.article.slug != $a and (.article.slug | startswith("how-to-train-your-dragon-twice-"))'
B=$(jget .article.slug)
call - GET "/api/articles/$A3"
jqok "the holder of the bare slug is untouched" '.article.author.username == "alice" and .article.slug == "how-to-train-your-dragon-twice"'
call - GET "/api/articles/$B"
jqok "the retitled one answers at its new slug" '.article.author.username == "bob"'
call alice PUT "/api/articles/$A3" '{"article":{"tagList":[]}}'
jqok "update tagList []: no tags" '.article.tagList == []'
for b in 'not json' '{"title":"x"}' '{"article":null}' '{"article":{"title":""}}' \
    '{"article":{"title":5}}' '{"article":{"body":""}}' '{"article":{"description":""}}' \
    '{"article":{"tagList":"x"}}' '{"article":{"tagList":[5]}}'; do
    call alice PUT "/api/articles/$A" "$b"
    err "update article malformed: 422 ($(short "$b" 40))" 422
done
call alice PUT "/api/articles/$A" '{"article":{}}'
note "PUT article with no field gave $STATUS (docs/api.md, \"Writes\": 422)"
check "PUT article with no field: not 5xx" [ "$STATUS" -lt 500 ]
call - PUT "/api/articles/$A" '{"article":{"body":"x"}}'
err "update article without a token: 401" 401
call alice PUT /api/articles/no-such-article '{"article":{"body":"x"}}'
err "update an unknown article: 404" 404
call - GET "/api/articles/$A"
jqok "failed updates changed nothing" '.article.body == "Believe harder" and .article.title == "Dragon Training Revised"'

# ============================================================ lists
note "lists: setup"
: >"$T/order"
ok_setup=0
for i in $(seq 1 22); do
    if [ $((i % 2)) = 1 ]; then tg='["common","odd"]'; else tg='["common","even"]'; fi
    mkart alice "Alice post $i" "$tg" && ok_setup=$((ok_setup + 1)) && echo "Alice post $i" >>"$T/order"
    case $i in
    10) mkart bob "Bob post 1" '["bobtag"]' && ok_setup=$((ok_setup + 1)) && echo "Bob post 1" >>"$T/order" ;;
    20) mkart bob "Bob post 2" '["common","bobtag"]' && ok_setup=$((ok_setup + 1)) && echo "Bob post 2" >>"$T/order" ;;
    esac
    eval "S_alice_$i=\$SLUG"
done
mkart bob "Bob post 3" '["bobtag"]' && ok_setup=$((ok_setup + 1)) && echo "Bob post 3" >>"$T/order"
is "setup: 25 list articles created" "$ok_setup" 25
# carol favorites Alice post 1, 2, 3 and Bob post 3; bob favorites Alice post 2.
for i in 1 2 3; do eval "call carol POST /api/articles/\$S_alice_$i/favorite"; done
call carol POST "/api/articles/$SLUG/favorite"
call bob POST "/api/articles/$S_alice_2/favorite"
jqok "setup: favoritesCount of Alice post 2 is 2" '.article.favoritesCount == 2'
expected_order=$(tac "$T/order" | jq -R . | jq -sc .)
TOTAL=$NART

note "GET /api/articles"
call - GET /api/articles
st "list: 200" 200
jqok "list: articlesCount is the total ($TOTAL)" --argjson n "$TOTAL" '.articlesCount == $n'
jqok "list: default limit 20" '.articles | length == 20'
jqok "list: every article typed, no body" '.articles | all(.[]; listarticle)'
jqok "list: newest first" '.articles | newest_first'
jqok "list: the newest is Bob post 3" '.articles[0].title == "Bob post 3"'
jqok "list anonymous: favorited and following false" '.articles | all(.[]; .favorited == false and .author.following == false)'
call - GET '/api/articles?limit=100'
jqok "limit=100: every article" --argjson n "$TOTAL" '(.articles | length) == $n and .articlesCount == $n'
jqok "limit=100: exact newest-first order across authors" --argjson o "$expected_order" \
    '[.articles[].title | select(test("^(Alice|Bob) post "))] == $o'
jqok "limit=100: newest first by createdAt" '.articles | newest_first'
page10=$(jget -c '[.articles[0:10][].slug]')
call - GET '/api/articles?limit=5'
jqok "limit=5: 5 articles, articlesCount still the total" --argjson n "$TOTAL" '(.articles | length) == 5 and .articlesCount == $n'
call - GET '/api/articles?limit=3&offset=4'
jqok "limit=3&offset=4: items 4..6 of the full order" --argjson p "$page10" '[.articles[].slug] == $p[4:7]'
call - GET '/api/articles?offset=25'
jqok "offset=25: the remaining articles" --argjson n "$TOTAL" '(.articles | length) == ([$n - 25, 20] | min) and .articlesCount == $n'
call - GET '/api/articles?offset=1000'
jqok "offset past the end: empty list, articlesCount the total" --argjson n "$TOTAL" '.articles == [] and .articlesCount == $n'
call - GET '/api/articles?limit=1&offset=0'
jqok "limit=1&offset=0: the newest" '(.articles | length) == 1 and .articles[0].title == "Bob post 3"'
for q in 'limit=-1' 'limit=abc' 'limit=101' 'offset=-1' 'offset=abc' 'limit=1000000' 'limit=5x' \
    'limit=99999999999999999999' 'offset=99999999999999999999'; do
    call - GET "/api/articles?$q"
    err "list ?$q: 422" 422
done

call - GET '/api/articles?author=alice&limit=100'
jqok "author=alice: articlesCount $N_alice, only alice" --argjson n "$N_alice" \
    '.articlesCount == $n and (.articles | length) == $n and all(.articles[]; .author.username == "alice")'
call - GET '/api/articles?author=bob'
jqok "author=bob: articlesCount $N_bob" --argjson n "$N_bob" \
    '.articlesCount == $n and (.articles | length) == $n and all(.articles[]; .author.username == "bob" and listarticle)'
call - GET '/api/articles?tag=odd&limit=100'
jqok "tag=odd: 11, each with the tag" '.articlesCount == 11 and (.articles | length) == 11 and all(.articles[]; .tagList | index("odd"))'
jqok "tag=odd: newest first" '[.articles[].title] == [range(21; 0; -2) | "Alice post \(.)"]'
call - GET '/api/articles?tag=common'
jqok "tag=common: articlesCount 23, a page of 20" '.articlesCount == 23 and (.articles | length) == 20'
call - GET '/api/articles?tag=common&author=bob'
jqok "tag=common&author=bob: only Bob post 2 (AND)" '.articlesCount == 1 and [.articles[].title] == ["Bob post 2"]'
call - GET '/api/articles?favorited=carol'
jqok "favorited=carol: her 4 favorites" \
    '.articlesCount == 4 and ([.articles[].title] | sort) == ["Alice post 1","Alice post 2","Alice post 3","Bob post 3"]'
call - GET '/api/articles?favorited=carol&author=alice'
jqok "favorited=carol&author=alice: 3 (AND)" '.articlesCount == 3 and [.articles[].title] == ["Alice post 3","Alice post 2","Alice post 1"]'
call - GET '/api/articles?favorited=carol&tag=even'
jqok "favorited=carol&tag=even: Alice post 2 only (AND)" '.articlesCount == 1 and [.articles[].title] == ["Alice post 2"]'
call - GET '/api/articles?favorited=carol&author=alice&tag=odd'
jqok "favorited=carol&author=alice&tag=odd: 2 (AND of three)" '.articlesCount == 2 and [.articles[].title] == ["Alice post 3","Alice post 1"]'
call - GET '/api/articles?favorited=bob'
jqok "favorited=bob: Alice post 2 only (his unfavorite is gone)" '.articlesCount == 1 and [.articles[].title] == ["Alice post 2"]'
call - GET '/api/articles?tag=c%2B%2B'
jqok "tag=c%2B%2B (URL-encoded c++): the one article" '.articlesCount == 1 and (.articles[0].tagList | index("c++"))'
call - GET '/api/articles?tag=two%20words'
jqok "tag=two%20words: the one article" '.articlesCount == 1 and (.articles[0].tagList | index("two words"))'
call - GET '/api/articles?tag=%ZZ'
note "?tag=%ZZ (bad percent-encoding) gave $STATUS"
check "?tag=%ZZ: not 5xx" [ "$STATUS" -lt 500 ]
call - GET '/api/articles?author=alice&tag=bobtag'
jqok "author=alice&tag=bobtag: empty" '.articlesCount == 0 and .articles == []'
for q in author=nobody tag=nosuchtag favorited=nobody 'author=nobody&tag=common'; do
    call - GET "/api/articles?$q"
    st "?$q: 200" 200
    jqok "?$q: empty list, articlesCount 0" '.articlesCount == 0 and .articles == []'
done
call carol GET '/api/articles?limit=100'
jqok "carol's view: favorited true exactly on her favorites" \
    '[.articles[] | select(.favorited) | .title] | sort == ["Alice post 1","Alice post 2","Alice post 3","Bob post 3"]'
jqok "carol's view: author.following true exactly for bob" 'all(.articles[]; .author.following == (.author.username == "bob"))'
jqok "carol's view: favoritesCount exact" \
    '(.articles[] | select(.title == "Alice post 2") | .favoritesCount) == 2 and (.articles[] | select(.title == "Alice post 1") | .favoritesCount) == 1 and (.articles[] | select(.title == "Alice post 4") | .favoritesCount) == 0'
call bob GET '/api/articles?author=alice'
jqok "bob's view: alice followed" 'all(.articles[]; .author.following == true)'
call bob GET '/api/articles?author=bob'
jqok "bob's view of his own: not following himself" 'all(.articles[]; .author.following == false)'
callh "Token garbage" GET /api/articles
err "list (optional auth) with a bad token: 401" 401
callh "Token $expired" GET /api/articles
err "list with an expired token: 401" 401

note "GET /api/articles/feed"
call bob GET /api/articles/feed
st "feed: 200" 200
jqok "bob's feed: only alice, articlesCount $N_alice" --argjson n "$N_alice" \
    '.articlesCount == $n and (.articles | length) == 20 and all(.articles[]; .author.username == "alice" and .author.following == true and listarticle)'
jqok "bob's feed: newest first" '.articles | newest_first'
jqok "bob's feed: starts with Alice post 22" '.articles[0].title == "Alice post 22"'
call bob GET '/api/articles/feed?limit=100'
jqok "bob's feed limit=100: every alice article, his favorite flagged" --argjson n "$N_alice" \
    '(.articles | length) == $n and [.articles[] | select(.favorited) | .title] == ["Alice post 2"]'
call bob GET '/api/articles/feed?limit=2&offset=1'
jqok "bob's feed limit=2&offset=1" --argjson n "$N_alice" \
    '.articlesCount == $n and [.articles[].title] == ["Alice post 21","Alice post 20"]'
call carol GET /api/articles/feed
jqok "carol's feed: only bob, articlesCount $N_bob" --argjson n "$N_bob" \
    '.articlesCount == $n and (.articles | length) == $n and all(.articles[]; .author.username == "bob")'
call dave GET /api/articles/feed
st "dave's feed (follows nobody): 200" 200
jqok "dave's feed: empty, articlesCount 0" '.articles == [] and .articlesCount == 0'
call - GET /api/articles/feed
err "feed without a token: 401" 401
call bob GET '/api/articles/feed?limit=101'
err "feed ?limit=101: 422" 422
call bob GET '/api/articles/feed?offset=-1'
err "feed ?offset=-1: 422" 422

# ============================================================ comments
note "comments"
call bob POST "/api/articles/$A/comments" '{"comment":{"body":"Thank you so much!"}}'
st "create comment: 200" 200
jqok "create comment: the comment object" '.comment | comment and .body == "Thank you so much!" and .author.username == "bob" and .createdAt == .updatedAt'
C1=$(jget .comment.id)
call carol POST "/api/articles/$A/comments" '{"comment":{"body":"Me too"}}'
C2=$(jget .comment.id)
jqok "second comment: another id" --argjson c "$C1" '.comment.id != $c'
call - GET "/api/articles/$A/comments"
st "list comments anonymous: 200" 200
jqok "list comments: both, typed, newest first" \
    '(.comments | length) == 2 and all(.comments[]; comment) and [.comments[].body] == ["Me too","Thank you so much!"] and (.comments | newest_first)'
jqok "list comments anonymous: following false" 'all(.comments[]; .author.following == false)'
call carol GET "/api/articles/$A/comments"
jqok "carol's view: bob followed, herself not" \
    '[.comments[] | {(.author.username): .author.following}] | add == {"bob": true, "carol": false}'
callh "Token garbage" GET "/api/articles/$A/comments"
err "list comments (optional auth) with a bad token: 401" 401
for b in 'not json' '{"body":"x"}' '{"comment":{}}' '{"comment":{"body":""}}' '{"comment":{"body":5}}' \
    '{"comment":null}' '{"comment":"x"}'; do
    call bob POST "/api/articles/$A/comments" "$b"
    err "create comment malformed: 422 ($(short "$b" 40))" 422
done
call - POST "/api/articles/$A/comments" '{"comment":{"body":"x"}}'
err "create comment without a token: 401" 401
call bob POST /api/articles/no-such-article/comments '{"comment":{"body":"x"}}'
err "comment on an unknown article: 404" 404
call - GET /api/articles/no-such-article/comments
err "comments of an unknown article: 404" 404
call carol DELETE "/api/articles/$A/comments/$C1"
err "delete someone else's comment: 403" 403
call alice DELETE "/api/articles/$A/comments/$C1"
err "delete someone else's comment on your own article: 403" 403
call - DELETE "/api/articles/$A/comments/$C1"
err "delete comment without a token: 401" 401
call bob DELETE "/api/articles/$S_alice_1/comments/$C1"
err "delete a comment through another article's slug: 404" 404
call bob DELETE "/api/articles/$A/comments/999999"
err "delete an unknown comment: 404" 404
call bob DELETE "/api/articles/no-such-article/comments/$C1"
err "delete a comment of an unknown article: 404" 404
call bob DELETE "/api/articles/$A/comments/abc"
note "DELETE comment id 'abc' gave $STATUS"
check "delete comment with a non-numeric id: 404 or 422" sh -c "[ $STATUS = 404 ] || [ $STATUS = 422 ]"
call bob DELETE "/api/articles/$A/comments/$C1"
st "delete own comment: 204" 204
is "delete comment: empty body" "$BODY" ""
call bob DELETE "/api/articles/$A/comments/$C1"
err "delete the same comment again: 404" 404
call - GET "/api/articles/$A/comments"
jqok "the deleted comment is gone" --argjson c "$C2" '[.comments[].id] == [$c]'

note "the 100-comment cap"
mkart alice "Many comments" '["common"]'
CAP=$SLUG
ok_c=0
for i in $(seq 1 105); do
    call bob POST "/api/articles/$CAP/comments" "{\"comment\":{\"body\":\"c$i\"}}"
    [ "$STATUS" = 200 ] && ok_c=$((ok_c + 1))
done
is "105 comments created" "$ok_c" 105
call - GET "/api/articles/$CAP/comments"
st "list 105 comments: 200" 200
jqok "the list holds 100" '.comments | length == 100'
jqok "the 100 newest, newest first (c105 .. c6)" '[.comments[].body] == [range(105; 5; -1) | "c\(.)"]'
jqok "newest first by createdAt, every comment typed" '(.comments | newest_first) and all(.comments[]; comment)'

note "every route that needs a token, without one and with an expired one"
for r in "GET /api/user" "PUT /api/user|{\"user\":{\"bio\":\"x\"}}" \
    "POST /api/profiles/bob/follow" "DELETE /api/profiles/bob/follow" "GET /api/articles/feed" \
    "POST /api/articles|{\"article\":{\"title\":\"t\",\"description\":\"d\",\"body\":\"b\"}}" \
    "PUT /api/articles/$S_alice_5|{\"article\":{\"body\":\"x\"}}" "DELETE /api/articles/$S_alice_5" \
    "POST /api/articles/$S_alice_5/favorite" "DELETE /api/articles/$S_alice_5/favorite" \
    "POST /api/articles/$A/comments|{\"comment\":{\"body\":\"x\"}}" "DELETE /api/articles/$A/comments/$C2"; do
    mp=${r%%|*}
    b=; case $r in *"|"*) b=${r#*|} ;; esac
    call - ${mp% *} "${mp#* }" "$b"
    err "$mp without a token: 401" 401
    callh "Token $expired" ${mp% *} "${mp#* }" "$b"
    err "$mp with an expired token: 401" 401
done
ctype=$(curl -s -o /dev/null -w '%{content_type}' --max-time 10 "$BASE/api/user")
is "error responses are application/json; charset=utf-8" "$ctype" "application/json; charset=utf-8"
call - GET "/api/articles/$S_alice_5"
jqok "the unauthenticated writes changed nothing" '.article.body == "the body of Alice post 5" and .article.favoritesCount == 0'

# ============================================================ delete article
note "DELETE /api/articles/:slug"
call bob DELETE "/api/articles/$A"
err "delete someone else's article: 403" 403
call - DELETE "/api/articles/$A"
err "delete article without a token: 401" 401
call alice DELETE /api/articles/no-such-article
err "delete an unknown article: 404" 404
call alice DELETE "/api/articles/$A"
st "delete own article: 204" 204
is "delete article: empty body" "$BODY" ""
NART=$((NART - 1)); N_alice=$((N_alice - 1))
call - GET "/api/articles/$A"
err "GET the deleted article: 404" 404
call - GET "/api/articles/$A/comments"
err "comments of the deleted article: 404" 404
call alice DELETE "/api/articles/$A"
err "delete it again: 404" 404
call - GET /api/articles
jqok "articlesCount after create and delete: $NART" --argjson n "$NART" '.articlesCount == $n'
call - GET '/api/articles?author=alice'
jqok "author=alice count after delete: $N_alice" --argjson n "$N_alice" '.articlesCount == $n'

# ============================================================ tags
note "GET /api/tags"
call - GET '/api/articles?limit=100'
in_use=$(jget -c '[.articles[].tagList[]] | unique')
call - GET /api/tags
st "tags: 200" 200
jqok "tags: an array of distinct strings" '.tags | type == "array" and all(.[]; type == "string") and length == (unique | length)'
jqok "tags: exactly the tags in use" --argjson u "$in_use" '(.tags | sort) == $u'
jqok "tags: dropped tags are gone (angular, beta, zeta)" '.tags | (index("angular") or index("beta") or index("zeta")) | not'
jqok "tags: most used first (common)" '.tags[0] == "common"'
callh "Token $TOK_alice" GET /api/tags
st "tags with a token: 200" 200

# ============================================================ limits
note "body size limit"
big=$(head -c 1100000 /dev/zero | tr '\0' a)
printf '{"article":{"title":"big","description":"d","body":"%s"}}' "$big" >"$T/big.json"
LAST="POST /api/articles with a 1.1 MB body [as alice]"
http_raw POST /api/articles "" "Token $TOK_alice" -H 'Expect:' \
    -H 'Content-Type: application/json' --data-binary @"$T/big.json"
st "a body over 1 MiB: 413" 413
call - GET "/api/articles?author=alice&limit=100"
jqok "the refused 1.1 MB article was not stored" '[.articles[] | select(.title == "big")] | length == 0'
LAST="POST /api/users with a 1.1 MB body"
http_raw POST /api/users "" "" -H 'Content-Type: application/json' --data-binary @"$T/big.json"
st "a body over 1 MiB with Expect: 100-continue: 413" 413
mid=$(head -c 200000 /dev/zero | tr '\0' b)
printf '{"article":{"title":"Long read","description":"d","body":"%s"}}' "$mid" >"$T/mid.json"
LAST="POST /api/articles with a 200 kB body [as alice]"
http_raw POST /api/articles "" "Token $TOK_alice" -H 'Content-Type: application/json' \
    --data-binary @"$T/mid.json"
st "a 200 kB body under the limit: 201" 201
jqok "the 200 kB body is stored whole" '.article.body | length == 200000'
http GET /healthz
is "the server is still up after the big bodies" "$STATUS" 200

# ============================================================ race
# register_at_once N OUT USERNAME EMAIL: N registrations sent together
# (USERNAME and EMAIL are printf formats given the attempt's number); their
# statuses, one a line, in $T/OUT.
register_at_once() {
    _pids=
    for _i in $(seq 1 "$1"); do
        _u=$(printf "$3" "$_i") _e=$(printf "$4" "$_i")
        curl -s -o /dev/null -w '%{http_code}\n' --max-time 20 -X POST -H 'Content-Type: application/json' \
            --data-binary "{\"user\":{\"username\":\"$_u\",\"email\":\"$_e\",\"password\":\"pw\"}}" \
            "$BASE/api/users" >"$T/$2.$_i" 2>/dev/null &
        _pids="$_pids $!"
    done
    wait $_pids
    cat "$T/$2".* >"$T/$2"
}

note "concurrent registration of one username"
register_at_once 20 race racer 'racer%d@example.io'
n201=$(grep -c '^201$' "$T/race")
n409=$(grep -c '^409$' "$T/race")
n5xx=$(grep -c '^5' "$T/race")
note "20 parallel registrations: $(sort "$T/race" | uniq -c | tr '\n' ' ')"
is "parallel registration: exactly one 201" "$n201" 1
is "parallel registration: the other 19 get 409" "$n409" 19
is "parallel registration: no 5xx" "$n5xx" 0
call - GET /api/profiles/racer
st "the racer exists once" 200
register_at_once 10 mrace 'mailer%d' same@example.io
note "10 parallel registrations of one email: $(sort "$T/mrace" | uniq -c | tr '\n' ' ')"
is "parallel registration of one email: one 201, nine 409" \
    "$(grep -c '^201$' "$T/mrace") $(grep -c '^409$' "$T/mrace")" "1 9"

note "concurrent favorites keep favoritesCount exact"
pids=
for i in $(seq 1 10); do
    curl -s -o "$T/fan.$i" -w '%{http_code}\n' --max-time 20 -X POST -H 'Content-Type: application/json' \
        --data-binary "{\"user\":{\"username\":\"fan$i\",\"email\":\"fan$i@example.io\",\"password\":\"pw\"}}" \
        "$BASE/api/users" >"$T/fanst.$i" 2>/dev/null &
    pids="$pids $!"
done
wait $pids
is "10 parallel registrations of different users: all 201" "$(cat "$T"/fanst.* | grep -c '^201$')" 10
# favall METHOD: every fan (un)favorites Alice post 7 at once; prints the statuses.
favall() {
    _pids=
    for _i in $(seq 1 10); do
        _ft=$(jq -r .user.token "$T/fan.$_i" 2>/dev/null)
        curl -s -o /dev/null -w '%{http_code}\n' --max-time 20 -X "$1" -H "Authorization: Token $_ft" \
            "$BASE/api/articles/$S_alice_7/favorite" >"$T/favst.$_i" 2>/dev/null &
        _pids="$_pids $!"
    done
    wait $_pids
    cat "$T"/favst.* | sort | uniq -c | tr '\n' ' ' | tr -s ' '
}
is "10 parallel favorites: all 200" "$(favall POST)" " 10 200 "
call - GET "/api/articles/$S_alice_7"
jqok "after 10 parallel favorites: favoritesCount 10" '.article.favoritesCount == 10'
is "the same 10 again, in parallel: all 200" "$(favall POST)" " 10 200 "
call - GET "/api/articles/$S_alice_7"
jqok "after the repeat: favoritesCount still 10" '.article.favoritesCount == 10'
call - GET "/api/articles?favorited=fan3"
jqok "favorited=fan3: that one article" '.articlesCount == 1 and .articles[0].title == "Alice post 7"'
is "10 parallel unfavorites: all 200" "$(favall DELETE)" " 10 200 "
call - GET "/api/articles/$S_alice_7"
jqok "after 10 parallel unfavorites: favoritesCount 0" '.article.favoritesCount == 0'

# HEAD: the headers of the GET, Content-Length included, and no body.
for p in "/api/articles/$S_alice_7" "/api/tags" "/api/articles?limit=3" "/api/profiles/alice" "/no/such"; do
    get_len=$(curl -s -o /dev/null -w '%{size_download}' "$BASE$p")
    head_len=$(curl -s -I "$BASE$p" | tr -d '\r' | sed -n 's/^[Cc]ontent-[Ll]ength: *//p')
    is "HEAD $p: the Content-Length of the GET ($get_len)" "$head_len" "$get_len"
    is "HEAD $p: no body" "$(curl -s -X HEAD --max-time 5 "$BASE$p" 2>/dev/null | wc -c)" 0
done

is "no worker died during the suite (same worker pids)" "$(worker_pids | sort | tr '\n' ' ')" "$WORKERS0"
note "runtime: $(($(date +%s) - START_TIME)) s"
done_testing
