#!/bin/sh
# One door for authentication: every route of worker/routes.c, read from
# the table itself (so a route added later is walked too), asked with no
# token, with a forged one (signed with another secret) and with a
# malformed Authorization header, cache off and on.  Pass when each route
# answers as its auth column says: required: 401 without a token and with
# a bad one; optional: anything but 401 without one, 401 with a bad one
# (never silently anonymous); none: anything but 401 whatever the header.
# Before the column, each handler checked the token itself (19 calls).
. "$top_srcdir/t/lib.sh"
command -v jq >/dev/null || skip "jq not installed"

# The table: METHOD PATTERN AUTH, one route a line (debug hooks left out).
sed -n 's/^ *{ROUTER_\([A-Z]*\), "\([^"]*\)", H([a-z_]*), AUTH_\([A-Z]*\)},.*/\1 \2 \3/p' \
    "$top_srcdir/worker/routes.c" | grep -v ' /debug/' >"$T/routes"
n=$(wc -l <"$T/routes")
check "the route table read ($n routes)" [ "$n" -ge 20 ]

pg_start
FORGED=$(jwt '{"alg":"HS256","typ":"JWT"}' '{"sub":1,"iat":1700000000,"exp":4102444800}' not-our-secret)

for mode in off on; do
    conduitd_start -w 1 --cache "$mode"
    TOK=$(register "walker$mode")
    http POST /api/articles '{"article":{"title":"Walked '"$mode"'","description":"d","body":"b"}}' "$TOK"
    SLUG=$(printf '%s' "$BODY" | jq -r .article.slug)
    http POST "/api/articles/$SLUG/comments" '{"comment":{"body":"c"}}' "$TOK"
    CID=$(printf '%s' "$BODY" | jq -r .comment.id)
    while read -r method pattern auth; do
        path=$(printf '%s' "$pattern" | sed -e "s/:slug/$SLUG/" -e "s/:username/walker$mode/" \
            -e "s/:id/$CID/")
        for how in none forged malformed; do
            case $how in
            none) hdr= ;;
            forged) hdr="Token $FORGED" ;;
            malformed) hdr="Basic d2Fsa2VyOnB3" ;;
            esac
            body=
            # Only the methods that carry one get a body (the framing
            # check refuses a body elsewhere, before any route).
            case $method in POST | PUT) body='{}' ;; esac
            http_raw "$method" "$path" "$body" "$hdr"
            case $auth/$how in
            REQUIRED/*) want=401 ;;
            OPTIONAL/none | NONE/*) want=not401 ;;
            OPTIONAL/*) want=401 ;;
            esac
            if [ "$want" = 401 ]; then
                st "cache $mode: $method $pattern ($auth), $how token" 401
            else
                check "cache $mode: $method $pattern ($auth), $how token: not 401 ($STATUS)" \
                    [ "$STATUS" != 401 -a "$STATUS" != 000 ]
            fi
        done
    done <"$T/routes"
    stop_pid "$CONDUITD_PID"
    CONDUITD_PID=
done
done_testing
