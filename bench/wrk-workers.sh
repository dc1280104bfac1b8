#!/bin/sh
# bench/wrk-workers.sh [SECONDS] [CONNECTIONS]: throughput of conduitd with
# -w 1 against -w 2 (and -w 2N+1), side by side in one run, with wrk.
#
# Starts its own PostgreSQL (like the tests), registers 20 users who write
# 200 articles with tags, follows and favorites through the API, then for
# each worker count runs wrk for SECONDS (default 15) with CONNECTIONS
# (default 64) keep-alive connections on three read endpoints: the global
# article list, one article, and the tag list.  Prints req/s and latency.
# This machine's cores are shared by wrk, PostgreSQL and conduitd: compare
# only figures from one run.  Not part of `make check`.
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
CONDUITD=${CONDUITD:-$top_srcdir/build/conduitd}
. "$top_srcdir/t/lib.sh"
SECS=${1:-15}
CONNS=${2:-64}
command -v wrk >/dev/null || skip "wrk is not installed (apt-get install wrk)"

pg_start
conduitd_start -w 2 --bcrypt-cost 4
note "seeding through the API"
for u in $(seq 1 20); do
    http POST /api/users "{\"user\":{\"username\":\"u$u\",\"email\":\"u$u@example.com\",\"password\":\"password\"}}"
    eval "TOK_$u=\$(echo \"\$BODY\" | jq -r .user.token)"
done
for a in $(seq 1 200); do
    u=$(( a % 20 + 1 )); eval "tok=\$TOK_$u"
    http POST /api/articles "{\"article\":{\"title\":\"Article $a\",\"description\":\"d$a\",\"body\":\"$(printf 'lorem ipsum %.0s' $(seq 1 40))\",\"tagList\":[\"t$((a % 7))\",\"t$((a % 11))\"]}}" "$tok"
    [ $a -eq 1 ] && SLUG=$(echo "$BODY" | jq -r .article.slug)
done
for u in $(seq 1 20); do
    eval "tok=\$TOK_$u"
    http POST "/api/profiles/u$(( u % 20 + 1 ))/follow" "" "$tok"
    http POST "/api/articles/$SLUG/favorite" "" "$tok"
done
stop_pid "$CONDUITD_PID"; CONDUITD_PID=

cores=$(getconf _NPROCESSORS_ONLN)
printf '\n# %s cores shared by wrk, PostgreSQL and conduitd; wrk -t2 -c%s -d%ss\n' "$cores" "$CONNS" "$SECS"
printf '%-8s %-28s %10s %10s %10s\n' workers endpoint req/s p50 p99
for w in 1 "$cores" $((2 * cores + 1)); do
    conduitd_start -w "$w" --pool 4
    for path in /api/articles "/api/articles/$SLUG" /api/tags; do
        out=$(wrk -t2 -c"$CONNS" -d"${SECS}s" --latency "$BASE$path" 2>&1)
        rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
        p50=$(echo "$out" | awk '$1 == "50%" {print $2}')
        p99=$(echo "$out" | awk '$1 == "99%" {print $2}')
        non2xx=$(echo "$out" | awk '/Non-2xx/ {print $NF}')
        printf '%-8s %-28s %10s %10s %10s %s\n' "$w" "$path" "$rps" "$p50" "$p99" \
            "${non2xx:+non-2xx: $non2xx}"
    done
    stop_pid "$CONDUITD_PID"; CONDUITD_PID=
done
done_testing
