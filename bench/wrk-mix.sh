#!/bin/sh
# bench/wrk-mix.sh [SECONDS] [CONNECTIONS]: throughput of conduitd with
# -w 1, -w N (online cores) and -w 2N+1, side by side in one run, under a
# read-heavy mix (bench/wrk-mix.lua: the read pages of docs/workload.md's
# profile by their weights, the feed with a token).
#
# Starts its own PostgreSQL (like the tests; fsync off), registers 50 users
# who write 500 articles with tags, comments, follows and favorites through
# the API, then for each worker count: a fresh master, 3 s of warm-up, and
# SECONDS (default 20) of wrk with CONNECTIONS (default 64) keep-alive
# connections.  Prints req/s, p50, p99, non-2xx answers, and the CPU
# seconds that conduitd (master and workers) and PostgreSQL (every
# process of the cluster) used during the measured run, from /proc.
# wrk, PostgreSQL and conduitd share this machine's cores: compare only
# figures from one run.  Not part of `make check`.  WRK_MIX_ARGS: more
# flags for the measured servers (WRK_MIX_ARGS="--cache on").
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
CONDUITD=${CONDUITD:-$top_srcdir/build/conduitd}
. "$top_srcdir/t/lib.sh"
SECS=${1:-20}
CONNS=${2:-64}
command -v wrk >/dev/null || skip "wrk is not installed (apt-get install wrk)"
HZ=$(getconf CLK_TCK)

# cpu_ticks PID...: user + system ticks of these processes and their
# children (one level, enough for a master's workers and a postmaster's
# backends).  The command name in /proc/PID/stat may hold spaces: the
# fields are counted after its closing parenthesis.
cpu_ticks() {
    for _p in "$@"; do
        echo "$_p"
        cat /proc/"$_p"/task/*/children 2>/dev/null | tr ' ' '\n'
    done | sort -u | while read -r _q; do
        [ -n "$_q" ] && sed 's/.*) //' /proc/"$_q"/stat 2>/dev/null
    done | awk '{ t += $12 + $13 } END { print t + 0 }'
}

pg_start
conduitd_start -w 2 --bcrypt-cost 4
note "seeding through the API"
USERS= SLUGS=
for u in $(seq 1 50); do
    http POST /api/users "{\"user\":{\"username\":\"u$u\",\"email\":\"u$u@example.com\",\"password\":\"password\"}}"
    eval "TOK_$u=\$(echo \"\$BODY\" | jq -r .user.token)"
    USERS="$USERS u$u"
done
body=$(printf 'lorem ipsum dolor sit amet %.0s' $(seq 1 30))
for a in $(seq 1 500); do
    u=$((a % 50 + 1)); eval "tok=\$TOK_$u"
    http POST /api/articles "{\"article\":{\"title\":\"Article $a\",\"description\":\"d$a\",\"body\":\"$body\",\"tagList\":[\"t$((a % 7))\",\"t$((a % 11))\"]}}" "$tok"
    slug=$(echo "$BODY" | jq -r .article.slug)
    SLUGS="$SLUGS $slug"
    # Comments and favorites on every 5th article, from 3 other users.
    if [ $((a % 5)) = 0 ]; then
        for k in 1 2 3; do
            v=$(((u + k) % 50 + 1)); eval "tv=\$TOK_$v"
            http POST "/api/articles/$slug/comments" "{\"comment\":{\"body\":\"comment $k\"}}" "$tv"
            http POST "/api/articles/$slug/favorite" "" "$tv"
        done
    fi
done
for u in $(seq 1 50); do
    eval "tok=\$TOK_$u"
    for k in 1 2 3 4 5; do
        http POST "/api/profiles/u$(((u + k * 7) % 50 + 1))/follow" "" "$tok"
    done
done
TOKEN=$TOK_1
TAGS=$(seq 0 10 | sed 's/^/t/' | tr '\n' ' ')
export USERS SLUGS TAGS TOKEN
stop_pid "$CONDUITD_PID"; CONDUITD_PID=
PG_PID=$(head -n 1 "$T/pg/data/postmaster.pid")

cores=$(getconf _NPROCESSORS_ONLN)
printf '\n# %s cores (%s) shared by wrk, PostgreSQL and conduitd; wrk -t2 -c%s -d%ss; pool 4 a worker %s\n' \
    "$cores" "$(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1)" "$CONNS" "$SECS" "${WRK_MIX_ARGS:-}"
printf '%-8s %10s %9s %9s %8s %13s %13s %11s\n' workers req/s p50 p99 non-2xx \
    conduitd-cpu-s postgres-cpu-s cpu-ms/req
for w in 1 "$cores" $((2 * cores + 1)); do
    conduitd_start -w "$w" --pool 4 ${WRK_MIX_ARGS:-}
    wrk -t2 -c"$CONNS" -d3s -s "$top_srcdir/bench/wrk-mix.lua" "$BASE" >/dev/null 2>&1
    c0=$(cpu_ticks "$CONDUITD_PID")
    p0=$(cpu_ticks "$PG_PID")
    out=$(wrk -t2 -c"$CONNS" -d"${SECS}s" --latency -s "$top_srcdir/bench/wrk-mix.lua" "$BASE" 2>&1)
    c1=$(cpu_ticks "$CONDUITD_PID")
    p1=$(cpu_ticks "$PG_PID")
    rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
    p50=$(echo "$out" | awk '$1 == "50%" {print $2}')
    p99=$(echo "$out" | awk '$1 == "99%" {print $2}')
    reqs=$(echo "$out" | awk '/requests in/ {print $1}')
    non2xx=$(echo "$out" | awk '/Non-2xx/ {print $NF}')
    awk -v w="$w" -v rps="$rps" -v p50="$p50" -v p99="$p99" -v bad="${non2xx:-0}" \
        -v c=$((c1 - c0)) -v p=$((p1 - p0)) -v hz="$HZ" -v n="$reqs" 'BEGIN {
        printf "%-8s %10s %9s %9s %8s %13.2f %13.2f %11.3f\n", w, rps, p50, p99, bad,
            c / hz, p / hz, (n > 0 ? 1000 * (c + p) / hz / n : 0) }'
    stop_pid "$CONDUITD_PID"; CONDUITD_PID=
done
note "cpu-ms/req: conduitd and PostgreSQL CPU per answered request"
done_testing
